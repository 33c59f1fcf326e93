//! An in-process fake Tinker server (feature `fake`) for tests of this crate and
//! of code built on it.
//!
//! It speaks the JSON dialect (plus proto `forward_backward` bodies, and proto
//! results when the client `Accept`s them), records every request, supports
//! scripted fault injection, and trains a tiny deterministic bigram "policy" so
//! RL loops can be tested end to end:
//!
//! ```no_run
//! # async fn demo() -> tinker_client::Result<()> {
//! use tinker_client::fake::{FakeServer, Fault};
//! use tinker_client::{ClientConfig, LoraConfig, ServiceClient};
//! let server = FakeServer::start().await;
//! server.inject("/api/v1/retrieve_future", Fault::try_again(), 2);
//! let client = ServiceClient::connect(ClientConfig::fast(server.url(), "tml-test")).await?;
//! let model = client.create_lora_model("fake/base", LoraConfig::rank(4)).await?;
//! # let _ = model;
//! client.close().await;
//! server.shutdown().await;
//! # Ok(()) }
//! ```

// Handlers return `Result<Response, Response>` so `?` can short-circuit with an
// error response; both arms are the same type, so boxing buys nothing.
#![allow(clippy::result_large_err)]

mod policy;

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::sampling::SampleOutput;
use crate::tensor::Datum;
use crate::training::{AdamParams, ForwardBackwardOutput};
use crate::wire::json as wj;
use crate::wire::proto;
use policy::Weights;

/// One request as the fake saw it.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    pub at: Instant,
    pub method: String,
    pub path: String,
    /// Lower-cased header names.
    pub headers: BTreeMap<String, String>,
    pub body: Bytes,
}

impl RecordedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }

    /// Body parsed as JSON (None for proto/empty bodies).
    pub fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }
}

/// A canned answer that replaces the real handling of a request.
#[derive(Debug, Clone, PartialEq)]
pub struct Fault {
    pub status: u16,
    pub body: String,
    pub content_type: &'static str,
    pub headers: Vec<(String, String)>,
}

impl Fault {
    pub fn new(status: u16, body: impl Into<String>) -> Self {
        Self {
            status,
            body: body.into(),
            content_type: "application/json",
            headers: vec![],
        }
    }
    pub fn with_header(mut self, k: &str, v: &str) -> Self {
        self.headers.push((k.to_string(), v.to_string()));
        self
    }
    /// 200 `{"type":"try_again"}` (still pending).
    pub fn try_again() -> Self {
        Self::new(
            200,
            r#"{"type":"try_again","request_id":"x","queue_state":"active"}"#,
        )
    }
    /// 408 long-poll timeout with a try-again body.
    pub fn long_poll_timeout() -> Self {
        Self::new(
            408,
            r#"{"type":"try_again","request_id":"x","queue_state":"paused_capacity"}"#,
        )
    }
    /// 200 `{"status":"complete_metadata"}`: client must re-poll without metadata-only.
    pub fn complete_metadata() -> Self {
        Self::new(
            200,
            r#"{"status":"complete_metadata","response_payload_size":123}"#,
        )
    }
    /// 410: promise expired.
    pub fn gone() -> Self {
        Self::new(410, r#"{"detail":"promise expired"}"#)
    }
    /// 402: billing pause.
    pub fn billing() -> Self {
        Self::new(402, r#"{"detail":"billing"}"#)
    }
    pub fn rate_limited() -> Self {
        Self::new(429, r#"{"detail":"slow down"}"#)
    }
    /// 5xx with a plain-text body (transient).
    pub fn server_error(status: u16) -> Self {
        Self {
            content_type: "text/plain",
            ..Self::new(status, "Internal Server Error")
        }
    }
    /// 400 with no JSON detail (as injected by proxies).
    pub fn bare_400() -> Self {
        Self {
            content_type: "text/plain",
            ..Self::new(400, "Bad Request")
        }
    }
    /// Cloud-style failed future: 200 `{"error","category"}`.
    pub fn failed_future(category: &str, message: &str) -> Self {
        Self::new(
            200,
            json!({"error": message, "category": category}).to_string(),
        )
    }
    /// SkyRL-style failed future: HTTP 400/500 `{"detail"}`.
    pub fn detail(status: u16, message: &str) -> Self {
        Self::new(status, json!({ "detail": message }).to_string())
    }
}

/// Behaviour switches; change them with [`FakeServer::knobs`].
#[derive(Debug, Clone)]
pub struct Knobs {
    /// Vocabulary of the bigram policy.
    pub vocab_size: usize,
    /// Scale of the random initial logits.
    pub init_scale: f32,
    /// `try_again` answers each new future gives before its result.
    pub try_again_polls: u32,
    /// Answer Sample/ForwardBackward results in proto when the client accepts it.
    pub proto_results: bool,
    /// `client/config` flag `proto_write_fwdbwd`.
    pub proto_write_fwdbwd: bool,
    /// Return `sample_sequence_ids` on `asample` submissions.
    pub sample_sequence_ids: bool,
    /// Like SkyRL: every sampler of a model samples with the weights last saved for a
    /// sampler, whichever path it was created from.
    pub samplers_follow_latest: bool,
}

impl Default for Knobs {
    fn default() -> Self {
        Self {
            vocab_size: 64,
            init_scale: 0.5,
            try_again_polls: 0,
            proto_results: true,
            proto_write_fwdbwd: false,
            sample_sequence_ids: true,
            samplers_follow_latest: false,
        }
    }
}

enum Outcome {
    Json(Value),
    Sample(SampleOutput),
    FwdBwd(ForwardBackwardOutput),
    Failed { category: String, message: String },
}

impl Clone for Outcome {
    fn clone(&self) -> Self {
        match self {
            Outcome::Json(v) => Outcome::Json(v.clone()),
            Outcome::Sample(s) => Outcome::Sample(s.clone()),
            Outcome::FwdBwd(f) => Outcome::FwdBwd(f.clone()),
            Outcome::Failed { category, message } => Outcome::Failed {
                category: category.clone(),
                message: message.clone(),
            },
        }
    }
}

struct FutureEntry {
    outcome: Outcome,
    try_again_left: u32,
}

struct Model {
    base_model: String,
    rank: u32,
    weights: Weights,
    grad: Vec<f32>,
    /// Results by seq_id, so a resubmitted request (410) is replayed, not re-run.
    done: BTreeMap<i64, Outcome>,
}

#[derive(Default)]
struct Inner {
    knobs: Knobs,
    log: Vec<RecordedRequest>,
    faults: HashMap<String, VecDeque<Fault>>,
    sessions: HashMap<String, bool>,
    models: BTreeMap<String, Model>,
    samplers: HashMap<String, Weights>,
    /// Sampling session → the model whose weights it samples (base-model samplers: none).
    sampler_model: HashMap<String, String>,
    /// `tinker://…` path → saved state (weights + optimizer).
    saved: BTreeMap<String, Weights>,
    futures: HashMap<String, FutureEntry>,
    next_id: u64,
}

impl Inner {
    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    fn new_future(&mut self, outcome: Outcome, extra: Value) -> Value {
        let rid = self.id().to_string();
        self.futures.insert(
            rid.clone(),
            FutureEntry {
                outcome,
                try_again_left: self.knobs.try_again_polls,
            },
        );
        let mut v = json!({ "request_id": rid });
        if let (Some(o), Value::Object(e)) = (v.as_object_mut(), extra) {
            o.extend(e);
        }
        v
    }
}

/// Handle to a running fake server. Dropping it stops the server too.
pub struct FakeServer {
    addr: SocketAddr,
    inner: Arc<Mutex<Inner>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl std::fmt::Debug for FakeServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeServer")
            .field("addr", &self.addr)
            .finish()
    }
}

fn lock(m: &Mutex<Inner>) -> MutexGuard<'_, Inner> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl FakeServer {
    /// Binds 127.0.0.1 on a free port with default knobs. Panics if it cannot bind.
    pub async fn start() -> Self {
        Self::start_with(Knobs::default()).await
    }

    pub async fn start_with(knobs: Knobs) -> Self {
        Self::try_start(knobs)
            .await
            .expect("bind fake Tinker server on 127.0.0.1")
    }

    pub async fn try_start(knobs: Knobs) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let inner = Arc::new(Mutex::new(Inner {
            knobs,
            ..Inner::default()
        }));
        let app = axum::Router::new()
            .fallback(handle)
            .with_state(inner.clone());
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = rx.await;
                })
                .await;
        });
        Ok(Self {
            addr,
            inner,
            stop: Some(tx),
            task: Some(task),
        })
    }

    /// Base URL, e.g. `http://127.0.0.1:41234`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops the server and waits for it.
    pub async fn shutdown(mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.task.take() {
            // Keep-alive connections can hold graceful shutdown open; don't wait on them.
            t.abort();
            let _ = t.await;
        }
    }

    /// Read or change the knobs.
    pub fn knobs<R>(&self, f: impl FnOnce(&mut Knobs) -> R) -> R {
        f(&mut lock(&self.inner).knobs)
    }

    /// The next `times` requests whose path ends with `path` get `fault`
    /// instead of normal handling (queued after earlier injections).
    pub fn inject(&self, path: &str, fault: Fault, times: usize) {
        let mut g = lock(&self.inner);
        let q = g.faults.entry(path.to_string()).or_default();
        q.extend(std::iter::repeat_n(fault, times));
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.inner).log.clone()
    }

    /// Requests whose path ends with `path`.
    pub fn requests_to(&self, path: &str) -> Vec<RecordedRequest> {
        lock(&self.inner)
            .log
            .iter()
            .filter(|r| r.path.ends_with(path))
            .cloned()
            .collect()
    }

    pub fn clear_requests(&self) {
        lock(&self.inner).log.clear();
    }

    /// Marks a session finished (heartbeats then get 410).
    pub fn finish_session(&self, session_id: &str) {
        lock(&self.inner)
            .sessions
            .insert(session_id.to_string(), true);
    }

    /// Current policy log-prob of `next` after `prev` for a training model.
    pub fn model_logprob(&self, model_id: &str, prev: u32, next: u32) -> Option<f32> {
        lock(&self.inner)
            .models
            .get(model_id)
            .map(|m| m.weights.logprob(prev, next))
    }

    /// Ids of every training model created so far.
    pub fn model_ids(&self) -> Vec<String> {
        lock(&self.inner).models.keys().cloned().collect()
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.task.take() {
            t.abort();
        }
    }
}

fn json_resp(status: u16, v: &Value) -> Response {
    let code = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (
        code,
        [(header::CONTENT_TYPE, "application/json")],
        v.to_string(),
    )
        .into_response()
}

fn detail(status: u16, msg: &str) -> Response {
    json_resp(status, &json!({ "detail": msg }))
}

fn parse<T: DeserializeOwned>(body: &[u8]) -> Result<T, Response> {
    serde_json::from_slice(body).map_err(|e| detail(422, &format!("invalid body: {e}")))
}

async fn handle(
    State(inner): State<Arc<Mutex<Inner>>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path().to_string();
    let mut g = lock(&inner);
    g.log.push(RecordedRequest {
        at: Instant::now(),
        method: method.to_string(),
        path: path.clone(),
        headers: headers
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body: body.clone(),
    });
    let fault = g
        .faults
        .iter_mut()
        .filter(|(p, q)| path.ends_with(p.as_str()) && !q.is_empty())
        .find_map(|(_, q)| q.pop_front());
    if let Some(f) = fault {
        let code = StatusCode::from_u16(f.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut resp = (code, [(header::CONTENT_TYPE, f.content_type)], f.body).into_response();
        for (k, v) in f.headers {
            if let (Ok(k), Ok(v)) = (
                axum::http::HeaderName::try_from(k),
                axum::http::HeaderValue::try_from(v),
            ) {
                resp.headers_mut().insert(k, v);
            }
        }
        return resp;
    }
    let accept_proto = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("application/x-protobuf"));
    let is_proto_body = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|c| c.starts_with("application/x-protobuf"));
    match route(&mut g, &method, &path, &body, accept_proto, is_proto_body) {
        Ok(r) | Err(r) => r,
    }
}

fn route(
    g: &mut Inner,
    method: &Method,
    path: &str,
    body: &[u8],
    accept_proto: bool,
    proto_body: bool,
) -> Result<Response, Response> {
    let Some(ep) = path.strip_prefix("/api/v1/") else {
        return Err(detail(404, "Not Found"));
    };
    if method == Method::GET {
        return match ep {
            "healthz" => Ok(json_resp(200, &json!({"status": "ok"}))),
            "get_server_capabilities" => Ok(json_resp(
                200,
                &json!({"supported_models": [{"model_name": "fake/base", "max_context_length": 4096}]}),
            )),
            _ => {
                if let Some(run) = ep
                    .strip_prefix("training_runs/")
                    .and_then(|r| r.strip_suffix("/checkpoints"))
                {
                    let prefix = format!("tinker://{run}/");
                    let list: Vec<Value> = g
                        .saved
                        .keys()
                        .filter(|p| p.starts_with(&prefix))
                        .map(|p| {
                            let id = p.trim_start_matches(&prefix);
                            let ty = if id.starts_with("sampler_weights/") { "sampler" } else { "training" };
                            json!({"checkpoint_id": id, "checkpoint_type": ty, "time": "2026-01-01T00:00:00Z",
                                   "tinker_path": p, "public": false})
                        })
                        .collect();
                    Ok(json_resp(200, &json!({ "checkpoints": list })))
                } else {
                    Err(detail(404, "Not Found"))
                }
            }
        };
    }
    match ep {
        "client/config" => Ok(json_resp(
            200,
            &json!({"pjwt_auth_enabled": false, "proto_write_fwdbwd": g.knobs.proto_write_fwdbwd}),
        )),
        "create_session" => {
            let _: wj::CreateSessionRequest = parse(body)?;
            let sid = format!("session_{}", g.id());
            g.sessions.insert(sid.clone(), false);
            Ok(json_resp(
                200,
                &json!({"type": "create_session", "session_id": sid, "info_message": null}),
            ))
        }
        "session_heartbeat" => {
            let r: wj::SessionHeartbeatRequest = parse(body)?;
            match g.sessions.get(&r.session_id) {
                Some(false) => Ok(json_resp(200, &json!({"type": "session_heartbeat"}))),
                _ => Err(detail(410, "session finished")),
            }
        }
        "create_model" => {
            let r: wj::CreateModelRequest = parse(body)?;
            let model_id = format!("model_{}", g.id());
            let weights = Weights::base(&r.base_model, g.knobs.vocab_size, g.knobs.init_scale);
            let v = g.knobs.vocab_size;
            g.models.insert(
                model_id.clone(),
                Model {
                    base_model: r.base_model.clone(),
                    rank: r.lora_config.rank,
                    weights,
                    grad: vec![0.0; v * v],
                    done: BTreeMap::new(),
                },
            );
            let out = Outcome::Json(json!({"model_id": model_id, "type": "create_model"}));
            Ok(json_resp(
                200,
                &g.new_future(out, json!({ "model_id": model_id })),
            ))
        }
        "get_info" => {
            let r: wj::GetInfoRequest = parse(body)?;
            let m = g
                .models
                .get(&r.model_id)
                .ok_or_else(|| detail(404, "unknown model"))?;
            Ok(json_resp(
                200,
                &json!({"model_id": r.model_id, "model_data": {"model_name": m.base_model},
                        "is_lora": true, "lora_rank": m.rank, "type": "get_info"}),
            ))
        }
        "forward_backward" | "forward" => {
            let (model_id, seq_id, data, loss_fn, cfg, fwd_only) = if proto_body {
                let p = proto::decode_forward_backward_request(body)
                    .map_err(|e| detail(400, &e.to_string()))?;
                (
                    p.model_id,
                    p.seq_id,
                    p.data,
                    p.loss_fn,
                    p.loss_fn_config,
                    p.forward_only,
                )
            } else {
                // Both JSON bodies carry the same input; only its field name differs.
                let (model_id, seq_id, i, fwd_only) = if ep == "forward" {
                    let r: wj::ForwardRequest = parse(body)?;
                    (r.model_id, r.seq_id, r.forward_input, true)
                } else {
                    let r: wj::ForwardBackwardRequest = parse(body)?;
                    (r.model_id, r.seq_id, r.forward_backward_input, false)
                };
                (
                    model_id,
                    seq_id,
                    i.data.into_iter().map(Datum::from).collect::<Vec<Datum>>(),
                    i.loss_fn,
                    i.loss_fn_config.unwrap_or_default(),
                    fwd_only,
                )
            };
            training_op(g, &model_id, seq_id, |m| {
                match m.weights.forward_backward(&data, &loss_fn, &cfg) {
                    Ok((out, grad)) => {
                        if !fwd_only {
                            m.grad.iter_mut().zip(grad).for_each(|(a, b)| *a += b);
                        }
                        Outcome::FwdBwd(out)
                    }
                    Err(message) => Outcome::Failed {
                        category: "user".into(),
                        message,
                    },
                }
            })
        }
        "optim_step" => {
            let r: wj::OptimStepRequest = parse(body)?;
            let p: AdamParams = r.adam_params;
            training_op(g, &r.model_id, r.seq_id, |m| {
                let grad = std::mem::replace(&mut m.grad, vec![0.0; m.weights.w.len()]);
                let norm = m.weights.adam(&grad, &p);
                Outcome::Json(
                    json!({"metrics": {"grad_norm": norm, "learning_rate": p.learning_rate}}),
                )
            })
        }
        "save_weights" => {
            let r: wj::SaveWeightsRequest = parse(body)?;
            let path = format!("tinker://{}/weights/{}", r.model_id, r.path);
            let mut snapshot = None;
            let resp = training_op(g, &r.model_id, r.seq_id, |m| {
                snapshot = Some(m.weights.clone());
                Outcome::Json(json!({"path": path, "type": "save_weights"}))
            })?;
            if let Some(w) = snapshot {
                g.saved.insert(path, w);
            }
            Ok(resp)
        }
        "save_weights_for_sampler" => {
            let r: wj::SaveWeightsForSamplerRequest = parse(body)?;
            let (path, sid) = match &r.path {
                Some(name) => (
                    Some(format!("tinker://{}/sampler_weights/{name}", r.model_id)),
                    None,
                ),
                None => (None, Some(format!("sampling_{}", g.id()))),
            };
            let mut snapshot = None;
            let resp = training_op(g, &r.model_id, r.seq_id, |m| {
                snapshot = Some(m.weights.clone());
                Outcome::Json(
                    json!({"path": path, "sampling_session_id": sid, "type": "save_weights_for_sampler"}),
                )
            })?;
            if let Some(w) = snapshot {
                if g.knobs.samplers_follow_latest {
                    let model = r.model_id.clone();
                    let following: Vec<String> = g
                        .sampler_model
                        .iter()
                        .filter(|(_, m)| **m == model)
                        .map(|(s, _)| s.clone())
                        .collect();
                    for s in following {
                        g.samplers.insert(s, w.clone());
                    }
                    let prefix = format!("tinker://{model}/sampler_weights/");
                    for (p, saved) in g.saved.iter_mut() {
                        if p.starts_with(&prefix) {
                            *saved = w.clone();
                        }
                    }
                }
                match (path, sid) {
                    (Some(p), _) => {
                        g.saved.insert(p, w);
                    }
                    (_, Some(s)) => {
                        g.sampler_model.insert(s.clone(), r.model_id.clone());
                        g.samplers.insert(s, w);
                    }
                    _ => {}
                }
            }
            Ok(resp)
        }
        "load_weights" => {
            let r: wj::LoadWeightsRequest = parse(body)?;
            let saved = g.saved.get(&r.path).cloned();
            training_op(g, &r.model_id, r.seq_id, |m| match saved {
                Some(s) => {
                    m.weights.w = s.w;
                    if r.optimizer {
                        (m.weights.m, m.weights.v, m.weights.step) = (s.m, s.v, s.step);
                    }
                    m.grad.iter_mut().for_each(|x| *x = 0.0);
                    Outcome::Json(json!({"path": r.path, "type": "load_weights"}))
                }
                None => Outcome::Failed {
                    category: "user".into(),
                    message: format!("checkpoint {} not found", r.path),
                },
            })
        }
        "create_sampling_session" => {
            let r: wj::CreateSamplingSessionRequest = parse(body)?;
            let w = match (&r.model_path, &r.base_model) {
                (Some(p), _) => g
                    .saved
                    .get(p)
                    .cloned()
                    .ok_or_else(|| detail(404, "unknown model_path"))?,
                (None, Some(b)) => Weights::base(b, g.knobs.vocab_size, g.knobs.init_scale),
                (None, None) => return Err(detail(422, "model_path or base_model required")),
            };
            let sid = format!("sampling_{}", g.id());
            if let Some(model) = r
                .model_path
                .as_deref()
                .and_then(|p| p.strip_prefix("tinker://"))
                .and_then(|p| p.split_once("/sampler_weights/"))
                .map(|(model, _)| model.to_owned())
            {
                g.sampler_model.insert(sid.clone(), model);
            }
            g.samplers.insert(sid.clone(), w);
            Ok(json_resp(
                200,
                &json!({"sampling_session_id": sid, "type": "create_sampling_session"}),
            ))
        }
        "asample" => {
            let r: wj::SampleRequest = parse(body)?;
            let w = g
                .samplers
                .get(&r.sampling_session_id)
                .ok_or_else(|| detail(404, "unknown sampler"))?;
            let prompt = r.prompt.tokens();
            let seed = r.sampling_params.seed.unwrap_or(r.seq_id);
            let out = w.sample(
                &prompt,
                r.num_samples,
                &r.sampling_params,
                seed,
                r.prompt_logprobs,
            );
            let extra = if g.knobs.sample_sequence_ids {
                let ids: Vec<String> = (0..r.num_samples)
                    .map(|i| format!("{}:{}:{i}", r.sampling_session_id, r.seq_id))
                    .collect();
                json!({ "sample_sequence_ids": ids })
            } else {
                json!({})
            };
            Ok(json_resp(200, &g.new_future(Outcome::Sample(out), extra)))
        }
        "retrieve_future" => {
            let r: wj::RetrieveFutureRequest = parse(body)?;
            let proto_ok = accept_proto && g.knobs.proto_results;
            let f = g
                .futures
                .get_mut(&r.request_id)
                .ok_or_else(|| detail(404, "unknown future"))?;
            if f.try_again_left > 0 {
                f.try_again_left -= 1;
                return Ok(json_resp(
                    200,
                    &json!({"type": "try_again", "request_id": r.request_id, "queue_state": "active"}),
                ));
            }
            Ok(match &f.outcome {
                Outcome::Json(v) => json_resp(200, v),
                Outcome::Failed { category, message } => {
                    json_resp(200, &json!({"error": message, "category": category}))
                }
                Outcome::Sample(s) if proto_ok => match proto::encode_sample_response(s) {
                    Ok(b) => proto_resp(b),
                    Err(e) => detail(500, &e.to_string()),
                },
                Outcome::Sample(s) => json_resp(200, &serde_json::to_value(s).unwrap_or_default()),
                Outcome::FwdBwd(o) if proto_ok => {
                    proto_resp(proto::encode_forward_backward_output(o))
                }
                Outcome::FwdBwd(o) => json_resp(200, &serde_json::to_value(o).unwrap_or_default()),
            })
        }
        _ => {
            if let Some(sid) = ep
                .strip_prefix("sessions/")
                .and_then(|r| r.strip_suffix("/finish"))
            {
                g.sessions.insert(sid.to_string(), true);
                Ok((StatusCode::OK, "").into_response())
            } else if ep == "telemetry" {
                Ok(json_resp(200, &json!({"status": "accepted"})))
            } else {
                Err(detail(404, "Not Found"))
            }
        }
    }
}

fn proto_resp(bytes: Vec<u8>) -> Response {
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, crate::transport::PROTO_CT)],
        bytes,
    )
        .into_response()
}

/// Runs (or replays, for an already-seen seq_id) one training operation and
/// answers with a new future.
fn training_op(
    g: &mut Inner,
    model_id: &str,
    seq_id: i64,
    run: impl FnOnce(&mut Model) -> Outcome,
) -> Result<Response, Response> {
    let m = g
        .models
        .get_mut(model_id)
        .ok_or_else(|| detail(404, "unknown model"))?;
    let outcome = match m.done.get(&seq_id) {
        Some(o) => o.clone(),
        None => {
            let o = run(m);
            m.done.insert(seq_id, o.clone());
            o
        }
    };
    Ok(json_resp(
        200,
        &g.new_future(outcome, json!({ "model_id": model_id })),
    ))
}
