//! The session: `ServiceClient`, heartbeats, and per-session counters.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;

use crate::config::{ClientConfig, WireDialect};
use crate::error::{Error, Result};
use crate::future::{Decoder, Pending, from_json};
use crate::sampling::{SamplerSource, SamplingClient};
use crate::training::{LoraConfig, TrainingClient};
use crate::transport::{Request, Transport, idempotency_key};
use crate::wire::json::{
    CreateModelRequest, CreateSamplingSessionRequest, CreateSessionRequest, CreateSessionResponse,
    FinishReasonJson, FinishRequest, ModelIdResult, SamplingSessionResult, SessionHeartbeatRequest,
    Tag, UntypedFuture,
};

/// Flags from `POST /api/v1/client/config` this client cares about.
#[derive(Debug, Clone, Default, Deserialize)]
struct ServerFlags {
    #[serde(default)]
    proto_write_fwdbwd: bool,
}

/// A model the server can train or sample.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct SupportedModel {
    pub model_name: String,
    #[serde(default)]
    pub max_context_length: Option<u64>,
    #[serde(default)]
    pub trainable: Option<bool>,
    #[serde(default)]
    pub sampleable: Option<bool>,
}

/// `GET /api/v1/get_server_capabilities`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Capabilities {
    #[serde(default)]
    pub supported_models: Vec<SupportedModel>,
}

/// One saved checkpoint of a training run.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Checkpoint {
    #[serde(default)]
    pub checkpoint_id: String,
    /// `training`, `sampler` or `external`.
    #[serde(default)]
    pub checkpoint_type: String,
    #[serde(default)]
    pub tinker_path: String,
    /// Server timestamp, passed through as sent.
    #[serde(default)]
    pub time: Option<Value>,
    #[serde(default)]
    pub size_bytes: Option<u64>,
    #[serde(default)]
    pub public: bool,
    #[serde(default)]
    pub expires_at: Option<Value>,
}

#[derive(Deserialize)]
struct CheckpointList {
    #[serde(default)]
    checkpoints: Vec<Checkpoint>,
}

/// Why the session ends (`sessions/{id}/finish`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinishReason {
    Success,
    Errored,
    Interrupted,
}

impl FinishReason {
    fn as_str(self) -> &'static str {
        match self {
            FinishReason::Success => "success",
            FinishReason::Errored => "errored",
            FinishReason::Interrupted => "interrupted",
        }
    }
}

/// Observable state of the heartbeat task.
#[derive(Debug, Clone, Default)]
pub struct HeartbeatStatus {
    /// Heartbeats answered 2xx.
    pub ok_count: u64,
    /// Status of the most recent heartbeat (None: transport error or none sent yet).
    pub last_status: Option<u16>,
    pub last_ok: Option<Instant>,
    pub last_error: Option<String>,
    /// True once the task has exited (410, close, or client dropped).
    pub stopped: bool,
}

/// State shared by every client created from one session.
pub(crate) struct Shared {
    pub transport: Transport,
    pub session_id: String,
    pub proto_fwdbwd: bool,
    model_counter: AtomicU64,
    sampler_counter: AtomicU64,
    closed: AtomicBool,
    heartbeat: Arc<Mutex<HeartbeatStatus>>,
    hb_task: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Drop for Shared {
    fn drop(&mut self) {
        if let Some(h) = self.hb_task.get_mut().ok().and_then(Option::take) {
            h.abort();
        }
    }
}

impl Shared {
    pub fn ensure_open(&self) -> Result<()> {
        if self.closed.load(Ordering::SeqCst) {
            Err(Error::SessionClosed)
        } else {
            Ok(())
        }
    }

    /// Next `sampling_session_seq_id` (shared by sampler creation and ephemeral saves).
    pub fn next_sampler_seq(&self) -> u64 {
        self.sampler_counter.fetch_add(1, Ordering::SeqCst)
    }

    /// Submit a future-returning request and wrap the answer in a [`Pending`].
    pub async fn submit_future<T>(
        self: &Arc<Self>,
        request: Request,
        request_type: &'static str,
        decode: Decoder<T>,
    ) -> Result<Pending<T>> {
        self.ensure_open()?;
        let key = idempotency_key();
        let r = self.transport.submit(&request, Some(&key)).await?;
        let fut: UntypedFuture = serde_json::from_slice(&r.body).map_err(Error::decode)?;
        Ok(Pending::new(
            self.clone(),
            request,
            key,
            fut,
            request_type,
            decode,
        ))
    }

    fn set_hb(&self, f: impl FnOnce(&mut HeartbeatStatus)) {
        let mut g = self.heartbeat.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut g);
    }
}

/// Entry point: one Tinker session. Cheap to clone; the heartbeat runs until
/// [`ServiceClient::close`], a 410 from the server, or the last clone (and every
/// training/sampling client made from it) is dropped.
#[derive(Clone)]
pub struct ServiceClient {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for ServiceClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceClient")
            .field("session_id", &self.shared.session_id)
            .field("base_url", &self.shared.transport.base)
            .finish()
    }
}

impl ServiceClient {
    /// Reads `client/config`, creates a session and starts heartbeating.
    pub async fn connect(cfg: ClientConfig) -> Result<Self> {
        let transport = Transport::new(cfg)?;
        let cfg = &transport.cfg;
        let flags = if cfg.dialect == WireDialect::Auto {
            fetch_flags(&transport).await
        } else {
            ServerFlags::default()
        };
        let proto_fwdbwd = match cfg.dialect {
            WireDialect::Json => false,
            WireDialect::Proto => true,
            WireDialect::Auto => flags.proto_write_fwdbwd || cfg.is_tinker_cloud(),
        };
        let body = CreateSessionRequest {
            tags: cfg.tags.clone(),
            user_metadata: Default::default(),
            sdk_version: cfg.sdk_tag.clone(),
            kind: Tag::new("create_session"),
        };
        let req = Request::post_json(
            "/api/v1/create_session",
            &body,
            "ServiceClient.create_session",
        )?;
        let v = transport.submit_json(&req).await?;
        let resp: CreateSessionResponse = serde_json::from_value(v).map_err(Error::decode)?;
        for (level, msg) in [
            ("info", &resp.info_message),
            ("warning", &resp.warning_message),
            ("error", &resp.error_message),
        ] {
            if let Some(m) = msg {
                tracing::warn!(%level, "Tinker session message: {m}");
            }
        }
        let shared = Arc::new(Shared {
            transport,
            session_id: resp.session_id,
            proto_fwdbwd,
            model_counter: AtomicU64::new(0),
            sampler_counter: AtomicU64::new(0),
            closed: AtomicBool::new(false),
            heartbeat: Arc::new(Mutex::new(HeartbeatStatus::default())),
            hb_task: Mutex::new(None),
        });
        let handle = tokio::spawn(heartbeat_loop(Arc::downgrade(&shared)));
        *shared.hb_task.lock().unwrap_or_else(|e| e.into_inner()) = Some(handle);
        Ok(Self { shared })
    }

    pub(crate) fn from_shared(shared: Arc<Shared>) -> Self {
        Self { shared }
    }

    pub fn session_id(&self) -> &str {
        &self.shared.session_id
    }

    /// Whether `forward_backward` bodies go out as protobuf.
    pub fn uses_proto_fwdbwd(&self) -> bool {
        self.shared.proto_fwdbwd
    }

    pub fn heartbeat_status(&self) -> HeartbeatStatus {
        self.shared
            .heartbeat
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub fn is_closed(&self) -> bool {
        self.shared.closed.load(Ordering::SeqCst)
    }

    pub async fn capabilities(&self) -> Result<Capabilities> {
        let req = Request::get(
            "/api/v1/get_server_capabilities",
            "ServiceClient.get_server_capabilities",
        );
        let v = self.shared.transport.submit_json(&req).await?;
        serde_json::from_value(v).map_err(Error::decode)
    }

    /// Creates a LoRA training model and waits until it exists.
    pub async fn create_lora_model(
        &self,
        base_model: &str,
        lora: LoraConfig,
    ) -> Result<TrainingClient> {
        let s = &self.shared;
        s.ensure_open()?;
        let body = CreateModelRequest {
            session_id: s.session_id.clone(),
            model_seq_id: s.model_counter.fetch_add(1, Ordering::SeqCst),
            base_model: base_model.to_string(),
            lora_config: lora,
            // Newer SDKs send the optimizer; SkyRL 0.3.0 (JSON dialect) never saw it.
            optimizer_config: s.proto_fwdbwd.then(|| serde_json::json!({"type": "adamw"})),
            kind: Tag::new("create_model"),
        };
        let req = Request::post_json(
            "/api/v1/create_model",
            &body,
            "ServiceClient.create_lora_training_client",
        )?;
        let pending = s
            .submit_future(
                req,
                "CreateModel",
                Box::new(|b, _| from_json::<ModelIdResult>(b).map(|r| r.model_id)),
            )
            .await?;
        let model_id = pending.result().await?;
        Ok(TrainingClient::new(
            s.clone(),
            model_id,
            base_model.to_string(),
        ))
    }

    /// A fresh model initialised from a `tinker://…/weights/…` checkpoint
    /// (create + `load_state`), e.g. to recover from a poisoned client.
    pub async fn create_model_from_state(
        &self,
        base_model: &str,
        lora: LoraConfig,
        path: &str,
        with_optimizer: bool,
    ) -> Result<TrainingClient> {
        let tc = self.create_lora_model(base_model, lora).await?;
        tc.load_state(path, with_optimizer).await?.result().await?;
        Ok(tc)
    }

    pub async fn create_sampling_session(&self, src: SamplerSource) -> Result<SamplingClient> {
        let s = &self.shared;
        s.ensure_open()?;
        let (base_model, model_path) = match src {
            SamplerSource::BaseModel(m) => (Some(m), None),
            SamplerSource::ModelPath(p) => (None, Some(p)),
        };
        let body = CreateSamplingSessionRequest {
            session_id: s.session_id.clone(),
            sampling_session_seq_id: s.next_sampler_seq(),
            base_model,
            model_path,
            kind: Tag::new("create_sampling_session"),
        };
        let req = Request::post_json(
            "/api/v1/create_sampling_session",
            &body,
            "ServiceClient.create_sampling_client",
        )?;
        let v = s.transport.submit_json(&req).await?;
        let r: SamplingSessionResult = serde_json::from_value(v).map_err(Error::decode)?;
        Ok(SamplingClient::new(s.clone(), r.sampling_session_id))
    }

    pub async fn list_checkpoints(&self, run_id: &str) -> Result<Vec<Checkpoint>> {
        let path = format!("/api/v1/training_runs/{run_id}/checkpoints");
        let req = Request::get(&path, "RestClient.list_checkpoints");
        let v = self.shared.transport.submit_json(&req).await?;
        let l: CheckpointList = serde_json::from_value(v).map_err(Error::decode)?;
        Ok(l.checkpoints)
    }

    /// Ends the session; idempotent. Stops the heartbeat first.
    pub async fn finish(&self, reason: FinishReason) -> Result<()> {
        let s = &self.shared;
        if s.closed.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        if let Some(h) = s.hb_task.lock().unwrap_or_else(|e| e.into_inner()).take() {
            h.abort();
        }
        s.set_hb(|h| h.stopped = true);
        let body = FinishRequest {
            reason: FinishReasonJson {
                kind: reason.as_str().to_string(),
            },
            detail: None,
        };
        let path = format!("/api/v1/sessions/{}/finish", s.session_id);
        let req = Request::post_json(&path, &body, "ServiceClient.finish")?;
        s.transport.submit_json(&req).await.map(|_| ())
    }

    /// `finish(Success)`, logging instead of returning errors.
    pub async fn close(&self) {
        if let Err(e) = self.finish(FinishReason::Success).await {
            tracing::warn!(error = %e, "finishing the Tinker session failed");
        }
    }
}

async fn fetch_flags(t: &Transport) -> ServerFlags {
    let body = serde_json::json!({ "sdk_version": t.cfg.sdk_tag });
    let Ok(req) = Request::post_json(
        "/api/v1/client/config",
        &body,
        "ServiceClient.client_config",
    ) else {
        return ServerFlags::default();
    };
    match t.send_once(&req, None, &[], t.cfg.request_timeout).await {
        Ok(r) if r.status == 200 => serde_json::from_slice(&r.body).unwrap_or_default(),
        Ok(r) => {
            tracing::debug!(
                status = r.status,
                "client/config unavailable; using defaults"
            );
            ServerFlags::default()
        }
        Err(e) => {
            tracing::debug!(error = %e, "client/config failed; using defaults");
            ServerFlags::default()
        }
    }
}

/// Sends a heartbeat every interval. Holds only a `Weak` between beats so a
/// dropped client lets the task end.
async fn heartbeat_loop(weak: Weak<Shared>) {
    let Some(interval) = weak.upgrade().map(|s| s.transport.cfg.heartbeat_interval) else {
        return;
    };
    let warn_after = Duration::from_secs(120);
    let mut last_ok = Instant::now();
    loop {
        tokio::time::sleep(interval).await;
        let Some(s) = weak.upgrade() else { return };
        if s.closed.load(Ordering::SeqCst) {
            s.set_hb(|h| h.stopped = true);
            return;
        }
        let body = SessionHeartbeatRequest {
            session_id: s.session_id.clone(),
            kind: Tag::new("session_heartbeat"),
        };
        let Ok(req) = Request::post_json(
            "/api/v1/session_heartbeat",
            &body,
            "ServiceClient.heartbeat",
        ) else {
            return;
        };
        // Heartbeats are never retried: the next tick is the retry.
        let timeout = interval.max(Duration::from_millis(100));
        match s.transport.send_once(&req, None, &[], timeout).await {
            Ok(r) if (200..300).contains(&r.status) => {
                last_ok = Instant::now();
                s.set_hb(|h| {
                    h.ok_count += 1;
                    h.last_status = Some(r.status);
                    h.last_ok = Some(last_ok);
                    h.last_error = None;
                });
            }
            Ok(r) if r.status == 410 => {
                tracing::warn!(session_id = %s.session_id, "session finished by server (410); heartbeat stops");
                s.closed.store(true, Ordering::SeqCst);
                s.set_hb(|h| {
                    h.last_status = Some(410);
                    h.stopped = true;
                });
                return;
            }
            Ok(r) => s.set_hb(|h| {
                h.last_status = Some(r.status);
                h.last_error = Some(r.text());
            }),
            Err(e) => s.set_hb(|h| {
                h.last_status = None;
                h.last_error = Some(e.to_string());
            }),
        }
        if last_ok.elapsed() > warn_after {
            tracing::warn!(session_id = %s.session_id, "no successful heartbeat for {:?}", last_ok.elapsed());
        }
    }
}
