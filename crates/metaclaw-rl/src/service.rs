//! RL mode as one service the daemon owns: it starts the policy when the mode asks for
//! it (and the settings allow), serves chat from it, records samples, scores them and runs
//! the trainer. Everything slow (Tinker model creation, tokenizer download, training) runs
//! in the background; until the policy is up, chat keeps going to the upstream LLM.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwapOption;
use metaclaw_config::{Config, Mode, WireFormat};
use metaclaw_domain::{Event, TurnRecord, TurnStatus, TurnType};
use metaclaw_proxy::{LocalError, LocalFuture, LocalModel, TurnContext, TurnHook};
use metaclaw_render::{HubConfig, Renderer, RendererKind};
use metaclaw_scheduler::Scheduler;
use metaclaw_store::{AdapterStatus, AdapterVersion, NewSample, SampleState, Store, TrainingStep};
use serde::Serialize;
use serde_json::{Map, Value};
use tokio::sync::{Notify, broadcast};
use tokio_util::sync::CancellationToken;

use crate::error::RlError;
use crate::judge::{Judge, JudgeSettings};
use crate::policy::{Pins, Policy, SamplingDefaults};
use crate::readiness::{self, RewardSources};
use crate::scoring::Scorer;
use crate::teacher::{Teacher, TeacherSettings};
use crate::trainer::{NeverPause, PauseGate, StepOutcome, Trainer, TrainerSettings};

/// The gate's finding on a candidate adapter.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct GateVerdict {
    pub accept: bool,
    /// The candidate's success on the gate split.
    pub success: Option<f64>,
    pub trials: Option<u64>,
    /// The serving adapter's success it was compared with.
    pub baseline: Option<f64>,
    pub reason: String,
}

pub type GateFuture<'a> =
    std::pin::Pin<Box<dyn std::future::Future<Output = GateVerdict> + Send + 'a>>;

/// Decides whether a freshly trained adapter may serve (the core evaluates it on the gate
/// split through the proxy, pinned to the candidate).
pub trait AdapterGate: Send + Sync {
    fn check(&self, step: u64) -> GateFuture<'_>;

    /// Called before a training step: measure what the serving adapter scores while it
    /// still serves. Some servers (SkyRL) sample every sampler of a LoRA model with its
    /// latest weights, so after the step the serving adapter can no longer be measured.
    fn prepare(&self) -> PrepareFuture<'_> {
        Box::pin(async {})
    }
}

pub type PrepareFuture<'a> = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + 'a>>;

/// What the service needs from the daemon.
pub struct RlParts {
    pub store: Arc<Store>,
    pub events: broadcast::Sender<Event>,
    pub scheduler: Arc<Scheduler>,
    /// The live configuration (read on every decision, so mode switches apply at once).
    pub config: Arc<dyn Fn() -> Arc<Config> + Send + Sync>,
    /// Where downloaded tokenizers are cached.
    pub tokenizer_cache: PathBuf,
    pub hub: HubConfig,
    /// How often scoring and the trainer look for work.
    pub poll: Duration,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// skills_only, or RL not started yet.
    Off,
    /// Connecting, creating the model, loading the tokenizer.
    Starting,
    /// The policy serves chat.
    Serving,
    /// Start-up failed; `message` says why (the settings are re-checked on config change).
    Failed,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Off => "off",
            Phase::Starting => "starting",
            Phase::Serving => "serving",
            Phase::Failed => "failed",
        }
    }
}

/// A start-up step that takes a while and can say how far it is (the tokenizer download).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct StartupProgress {
    /// What is being fetched (`tokenizer.json of Qwen/Qwen3-8B`).
    pub what: String,
    pub done_bytes: u64,
    /// Unknown when the server sends no length.
    pub total_bytes: Option<u64>,
}

impl StartupProgress {
    /// Share done, when the total is known.
    pub fn fraction(&self) -> Option<f64> {
        self.total_bytes
            .filter(|t| *t > 0)
            .map(|t| (self.done_bytes as f64 / t as f64).min(1.0))
    }
}

#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct RlStatus {
    pub mode: Mode,
    pub phase: Phase,
    pub message: Option<String>,
    /// The step under way while starting, when it can tell how far it is.
    pub progress: Option<StartupProgress>,
    /// Settings RL needs that are missing.
    pub missing: Vec<String>,
    pub warnings: Vec<String>,
    pub reward_sources: RewardSources,
    pub model: Option<String>,
    pub renderer: Option<String>,
    pub sampler: Option<String>,
    /// The training step the served weights come from.
    pub sampler_step: Option<u64>,
    pub samples: std::collections::BTreeMap<String, u64>,
    pub last_step: Option<TrainingStep>,
    /// How many times the policy started in this run (a settings change restarts it).
    pub starts: u64,
    /// The settings the running policy was built with differ from the current ones: a
    /// restart is under way.
    pub restarting: bool,
    /// The last OPD teacher failure (e.g. a tokenizer mismatch), until a teacher call works.
    pub teacher_error: Option<String>,
}

struct Running {
    policy: Arc<Policy>,
    trainer: Arc<Trainer>,
    scorer: Scorer,
    teacher: Option<Teacher>,
}

pub struct RlService {
    parts: RlParts,
    running: ArcSwapOption<Running>,
    phase: std::sync::Mutex<PhaseState>,
    /// Serialises start-ups and steps (one trainer at a time).
    gate: tokio::sync::Mutex<()>,
    wake: Notify,
    teacher_error: std::sync::Mutex<Option<String>>,
    /// The settings the running policy was built with ([`fingerprint`]).
    built_with: std::sync::Mutex<Option<Value>>,
    starts: std::sync::atomic::AtomicU64,
    pins: Arc<Pins>,
    gate_check: std::sync::RwLock<Option<Arc<dyn AdapterGate>>>,
    /// A rollout drives the steps itself: the background loop does not train meanwhile.
    held: std::sync::atomic::AtomicBool,
}

/// The settings a running policy depends on: a change to any of them restarts RL. Keys read
/// at each use (mode, the manual trigger, the evolver) are left out.
fn fingerprint(c: &Config) -> Value {
    let mut rl = serde_json::to_value(&c.rl).unwrap_or_default();
    if let Some(map) = rl.as_object_mut() {
        for live in [
            "enabled",
            "manual_train_trigger",
            "evolver_api_base",
            "evolver_api_key",
            "evolver_model",
            "gate_tolerance",
            "reward_combine",
            "thumbs_weight",
            "correction_weight",
            "retry_weight",
            "tool_error_weight",
        ] {
            map.remove(live);
        }
    }
    serde_json::json!({
        "rl": rl,
        "opd": c.opd,
        "model": readiness::model(c),
        "timeout": c.llm.timeout_seconds,
    })
}

struct PhaseState {
    phase: Phase,
    message: Option<String>,
    progress: Option<StartupProgress>,
    /// When the phase was entered (a failed start-up is retried after [`START_RETRY`]).
    since: std::time::Instant,
}

/// How long after a failed start-up (server down, model refused) to try again.
const START_RETRY: Duration = Duration::from_secs(60);

impl RlService {
    pub fn new(parts: RlParts) -> Arc<Self> {
        Arc::new(Self {
            parts,
            running: ArcSwapOption::empty(),
            phase: std::sync::Mutex::new(PhaseState {
                phase: Phase::Off,
                message: None,
                progress: None,
                since: std::time::Instant::now(),
            }),
            gate: tokio::sync::Mutex::new(()),
            wake: Notify::new(),
            teacher_error: std::sync::Mutex::new(None),
            built_with: std::sync::Mutex::new(None),
            starts: std::sync::atomic::AtomicU64::new(0),
            pins: Arc::default(),
            gate_check: std::sync::RwLock::new(None),
            held: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Sessions whose requests the policy answers from a chosen adapter.
    pub fn pins(&self) -> &Arc<Pins> {
        &self.pins
    }

    /// Registers who evaluates candidate adapters (the core, at start-up).
    pub fn set_gate(&self, gate: Arc<dyn AdapterGate>) {
        *self.gate_check.write().unwrap_or_else(|e| e.into_inner()) = Some(gate);
    }

    fn gate(&self) -> Option<Arc<dyn AdapterGate>> {
        self.gate_check
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// While held, the background loop scores but does not train (a rollout steps itself).
    pub fn hold_training(&self, held: bool) {
        self.held.store(held, std::sync::atomic::Ordering::Relaxed);
    }

    /// Lets the gate measure the serving adapter before a step changes the weights.
    async fn prepare_gate(&self, c: &Config) {
        if let Some(gate) = self.gate().filter(|_| self.gated(c)) {
            gate.prepare().await;
        }
    }

    /// Whether adapters wait for the gate: a gate split is set and someone can evaluate.
    fn gated(&self, c: &Config) -> bool {
        !c.rl.gate_split.trim().is_empty() && self.gate().is_some()
    }

    /// The gate decides on the candidate `step` produced: it serves (and its training state
    /// is saved, so a later refusal can return to it), or it is refused and the trainer's
    /// weights go back to the serving version's.
    async fn decide(&self, running: &Running, step: u64, sampler: &str) -> Result<(), RlError> {
        let now = self.parts.store.now();
        let Some(gate) = self.gate().filter(|_| running.trainer.settings().gated) else {
            self.parts.store.upsert_adapter_version(AdapterVersion {
                step,
                created_at: now,
                sampler_path: Some(sampler.to_owned()),
                state_path: None,
                status: AdapterStatus::Serving,
                eval_success: None,
                eval_trials: None,
                reason: Some("serves at once (no gate split set)".into()),
            })?;
            return Ok(());
        };
        let verdict = gate.check(step).await;
        tracing::info!(step, accept = verdict.accept, reason = %verdict.reason, "rl: adapter gate");
        if verdict.accept {
            running.policy.promote();
            let state = running.trainer.snapshot(step).await?;
            self.parts.store.upsert_adapter_version(AdapterVersion {
                step,
                created_at: now,
                sampler_path: Some(sampler.to_owned()),
                state_path: Some(state).filter(|p| !p.is_empty()),
                status: AdapterStatus::Serving,
                eval_success: verdict.success,
                eval_trials: verdict.trials,
                reason: Some(verdict.reason.clone()),
            })?;
        } else {
            running.policy.discard();
            self.parts.store.upsert_adapter_version(AdapterVersion {
                step,
                created_at: now,
                sampler_path: Some(sampler.to_owned()),
                state_path: None,
                status: AdapterStatus::Refused,
                eval_success: verdict.success,
                eval_trials: verdict.trials,
                reason: Some(verdict.reason.clone()),
            })?;
            let serving = self
                .parts
                .store
                .adapter_versions()?
                .into_iter()
                .find(|v| v.status == AdapterStatus::Serving);
            match serving.and_then(|v| Some((v.state_path?, v.step))) {
                Some((path, serving_step)) => running.trainer.restore(&path, serving_step).await?,
                None => tracing::warn!(
                    step,
                    "rl: no saved state of the serving adapter; training continues from the refused one"
                ),
            }
        }
        let _ = self.parts.events.send(Event::Training {
            step,
            status: if verdict.accept {
                "promoted"
            } else {
                "refused"
            }
            .to_owned(),
            progress: Some(1.0),
        });
        Ok(())
    }

    /// The weights the policy starts with are a version too (the one a refused adapter
    /// returns to); with a gate its training state is saved so it can be returned to.
    async fn record_start_version(&self, running: &Running) -> Result<(), RlError> {
        let Some(sampler) = running.policy.current() else {
            return Ok(());
        };
        let versions = self.parts.store.adapter_versions()?;
        let known = versions.iter().find(|v| v.step == sampler.step);
        let has_state = known.is_some_and(|v| v.state_path.is_some());
        let state = if running.trainer.settings().gated && !has_state {
            Some(running.trainer.snapshot(sampler.step).await?).filter(|p| !p.is_empty())
        } else {
            None
        };
        let serving_elsewhere = versions
            .iter()
            .any(|v| v.status == AdapterStatus::Serving && v.step != sampler.step);
        self.parts.store.upsert_adapter_version(AdapterVersion {
            step: sampler.step,
            created_at: self.parts.store.now(),
            sampler_path: Some(sampler.name.clone()),
            state_path: state,
            status: AdapterStatus::Serving,
            eval_success: None,
            eval_trials: None,
            reason: Some(if sampler.step == 0 {
                "the base weights, before any training".to_owned()
            } else if serving_elsewhere {
                "serves after a restart (the latest trained weights)".to_owned()
            } else {
                "serves since start-up".to_owned()
            }),
        })?;
        Ok(())
    }

    /// Serves an earlier adapter version again and returns training to its saved state.
    pub async fn rollback(&self, step: u64) -> Result<AdapterVersion, RlError> {
        let running = self.running_or_err()?;
        let _guard = self.gate.lock().await;
        let versions = self.parts.store.adapter_versions()?;
        let Some(version) = versions.iter().find(|v| v.step == step).cloned() else {
            return Err(RlError::Config(format!(
                "there is no adapter version {step}"
            )));
        };
        if version.status == AdapterStatus::Refused {
            return Err(RlError::Config(format!(
                "adapter version {step} was refused by the gate and never served"
            )));
        }
        if !running.policy.serve_version(step) {
            let path = version.sampler_path.clone().ok_or_else(|| {
                RlError::Config(format!(
                    "adapter version {step} has no saved sampler weights"
                ))
            })?;
            running
                .policy
                .swap(running.trainer.sampler_at(&path, step).await?);
        }
        if let Some(state) = &version.state_path {
            running.trainer.restore(state, step).await?;
        }
        let mut serving = version;
        serving.status = AdapterStatus::Serving;
        serving.reason = Some(if serving.state_path.is_some() {
            "rolled back: serves again, and training continues from it".to_owned()
        } else {
            "rolled back: serves again (no saved training state: training continues from the latest weights)".to_owned()
        });
        self.parts.store.upsert_adapter_version(serving.clone())?;
        let _ = self.parts.events.send(Event::Training {
            step,
            status: "rolled_back".to_owned(),
            progress: Some(1.0),
        });
        Ok(serving)
    }

    /// Makes sure the policy holds a base-model sampler (the `base` evaluation arm).
    pub async fn ensure_base(&self) -> Result<(), RlError> {
        let running = self.running_or_err()?;
        if !running.policy.has_base() {
            running
                .policy
                .set_base(running.trainer.base_sampler().await?);
        }
        Ok(())
    }

    /// The adapter versions the policy can serve by step (serving first is not implied).
    pub fn serving_step(&self) -> Option<u64> {
        self.policy().and_then(|p| p.current()).map(|s| s.step)
    }

    fn running_or_err(&self) -> Result<Arc<Running>, RlError> {
        self.running.load_full().ok_or_else(|| {
            let (phase, message) = self.phase();
            RlError::Config(match (phase, message) {
                (_, Some(m)) => format!("RL is not running: {m}"),
                (Phase::Starting, None) => "RL is still starting".into(),
                _ => "RL is not running: set mode to rl or auto".into(),
            })
        })
    }

    fn lock_built_with(&self) -> std::sync::MutexGuard<'_, Option<Value>> {
        self.built_with.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the running policy was built with other settings than the current ones.
    fn stale(&self, c: &Config) -> bool {
        self.running.load().is_some()
            && self
                .lock_built_with()
                .as_ref()
                .is_some_and(|built| *built != fingerprint(c))
    }

    /// After a settings change: a failed start-up is tried again, and a running policy whose
    /// settings changed is stopped so the next round builds it anew (chat goes upstream
    /// meanwhile). Turning RL off keeps the policy: turning it on again is then instant.
    async fn settings_changed(&self) {
        let config = self.config();
        if self.phase().0 == Phase::Failed {
            self.set_phase(Phase::Off, None);
        }
        if !self.stale(&config) {
            return;
        }
        let _guard = self.gate.lock().await;
        if self.stale(&config) {
            self.running.store(None);
            *self.lock_built_with() = None;
            self.set_phase(
                Phase::Off,
                Some("restarting: the RL settings changed".to_owned()),
            );
            tracing::info!("rl: settings changed, restarting the policy");
        }
    }

    fn config(&self) -> Arc<Config> {
        (self.parts.config)()
    }

    fn lock_phase(&self) -> std::sync::MutexGuard<'_, PhaseState> {
        self.phase.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Enter a phase (or a new step of it) and tell the event bus, so the tray and the
    /// Training page follow start-up as it happens without asking.
    fn set_phase(&self, phase: Phase, message: Option<String>) {
        {
            let mut state = self.lock_phase();
            let same = state.phase == phase && state.message == message;
            *state = PhaseState {
                phase,
                message: message.clone(),
                progress: None,
                since: std::time::Instant::now(),
            };
            if same {
                return;
            }
        }
        let _ = self.parts.events.send(Event::RlPhase {
            phase: phase.as_str().to_owned(),
            message,
            progress: None,
        });
    }

    /// A download advanced: kept for the status; the event bus hears of it every tenth.
    fn set_progress(&self, progress: StartupProgress) {
        let (message, tenth) = {
            let mut state = self.lock_phase();
            let before = state
                .progress
                .as_ref()
                .and_then(StartupProgress::fraction)
                .map(|f| (f * 10.0).floor() as i64);
            let now = progress.fraction().map(|f| (f * 10.0).floor() as i64);
            let first = state.progress.is_none();
            state.progress = Some(progress.clone());
            if !first && before == now {
                return;
            }
            (state.message.clone(), progress.fraction())
        };
        let _ = self.parts.events.send(Event::RlPhase {
            phase: Phase::Starting.as_str().to_owned(),
            message,
            progress: tenth,
        });
    }

    fn phase(&self) -> (Phase, Option<String>) {
        let state = self.lock_phase();
        (state.phase, state.message.clone())
    }

    fn progress(&self) -> Option<StartupProgress> {
        self.lock_phase().progress.clone()
    }

    /// The policy, when it is serving.
    pub fn policy(&self) -> Option<Arc<Policy>> {
        self.running.load().as_ref().map(|r| r.policy.clone())
    }

    /// Background work: start-up when the mode asks for RL, scoring and training loops.
    pub fn spawn(self: &Arc<Self>, cancel: CancellationToken) -> tokio::task::JoinHandle<()> {
        let me = self.clone();
        tokio::spawn(async move {
            let mut events = me.parts.events.subscribe();
            let mut tick = tokio::time::interval(me.parts.poll);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = cancel.cancelled() => break,
                    _ = tick.tick() => {}
                    _ = me.wake.notified() => {}
                    ev = events.recv() => match ev {
                        Ok(Event::ConfigChanged) | Err(broadcast::error::RecvError::Lagged(_)) => {
                            me.settings_changed().await;
                        }
                        Ok(_) => continue,
                        Err(broadcast::error::RecvError::Closed) => break,
                    },
                }
                if let Err(e) = me.work(&cancel).await {
                    tracing::warn!(error = %e, "rl: background work failed");
                }
            }
        })
    }

    async fn work(self: &Arc<Self>, cancel: &CancellationToken) -> Result<(), RlError> {
        let config = self.config();
        if !config.mode.is_rl() {
            return Ok(());
        }
        if self.running.load().is_none() {
            let (phase, since) = {
                let state = self.lock_phase();
                (state.phase, state.since)
            };
            let retry = match phase {
                Phase::Off => true,
                // A server that was down may be back; settings problems wait for a change.
                Phase::Failed => {
                    readiness::missing(&config).is_empty() && since.elapsed() >= START_RETRY
                }
                Phase::Starting | Phase::Serving => false,
            };
            if retry {
                self.start().await;
            }
            return Ok(());
        }
        let Some(running) = self.running.load_full() else {
            return Ok(());
        };
        let weights = crate::reward::Weights::of(&config.rl);
        running.scorer.score_due(&weights).await?;
        running.scorer.refresh(&weights)?;
        if config.rl.manual_train_trigger
            || config.learning_paused
            || self.held.load(std::sync::atomic::Ordering::Relaxed)
        {
            return Ok(());
        }
        loop {
            if !running.trainer.has_batch()? {
                return Ok(());
            }
            let outcome = if config.mode == Mode::Auto {
                let scheduler = self.parts.scheduler.clone();
                // Wait one poll at most, so scoring and mode switches keep going while the
                // user is around; the next tick asks again.
                tokio::select! {
                    _ = cancel.cancelled() => return Ok(()),
                    w = tokio::time::timeout(self.parts.poll, scheduler.wait_for_window()) => {
                        if w.is_err() {
                            return Ok(());
                        }
                    }
                }
                scheduler.started();
                let started = std::time::Instant::now();
                let _step = self.gate.lock().await;
                self.prepare_gate(&config).await;
                let outcome = running
                    .trainer
                    .step(&SchedulerGate(&scheduler), false)
                    .await;
                match &outcome {
                    Ok(StepOutcome::Paused { .. }) => scheduler.interrupted(),
                    _ => scheduler.finished(started.elapsed()),
                }
                outcome?
            } else {
                let _step = self.gate.lock().await;
                self.prepare_gate(&config).await;
                running.trainer.step(&NeverPause, false).await?
            };
            let StepOutcome::Trained { step, sampler, .. } = &outcome else {
                return Ok(());
            };
            self.decide(&running, *step, sampler).await?;
        }
    }

    /// Starts the policy and trainer; failures are reported in the status, not raised.
    pub async fn start(self: &Arc<Self>) {
        let _guard = self.gate.lock().await;
        if self.running.load().is_some() {
            return;
        }
        let config = self.config();
        let missing = readiness::missing(&config);
        if !missing.is_empty() {
            let list: Vec<String> = missing.iter().map(ToString::to_string).collect();
            self.set_phase(
                Phase::Failed,
                Some(format!("RL needs: {}", list.join("; "))),
            );
            return;
        }
        self.set_phase(Phase::Starting, Some("checking the settings".to_owned()));
        match self.build(&config).await {
            Ok(running) => {
                let running = Arc::new(running);
                if let Err(e) = self.record_start_version(&running).await {
                    tracing::warn!(error = %e, "rl: the starting adapter version was not recorded");
                }
                self.running.store(Some(running));
                *self.lock_built_with() = Some(fingerprint(&config));
                self.starts
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                self.set_phase(Phase::Serving, None);
                tracing::info!("rl: the policy is serving");
            }
            Err(e) => {
                tracing::warn!(error = %e, "rl: start-up failed");
                self.set_phase(Phase::Failed, Some(e.to_string()));
            }
        }
    }

    async fn build(&self, c: &Config) -> Result<Running, RlError> {
        let model = readiness::model(c).unwrap_or_default();
        let kind = if c.rl.renderer_name.is_empty() {
            RendererKind::for_model(&model).ok_or_else(|| {
                RlError::Config(format!(
                    "cannot tell the chat format of `{model}`: set rl.renderer_name (qwen3, \
                     qwen3_instruct, llama3, kimi_k2, kimi_k25)"
                ))
            })?
        } else {
            c.rl.renderer_name
                .parse::<RendererKind>()
                .map_err(|e| RlError::Config(format!("rl.renderer_name: {e}")))?
        };
        let local = (!c.rl.tokenizer_path.is_empty()).then(|| PathBuf::from(&c.rl.tokenizer_path));
        let mut hub = self.parts.hub.clone();
        if !c.rl.tokenizer_hub_url.is_empty() {
            hub.base_url = c.rl.tokenizer_hub_url.clone();
        }
        self.set_phase(
            Phase::Starting,
            Some(match &local {
                Some(path) => format!("loading the tokenizer from {}", path.display()),
                None => format!(
                    "loading the tokenizer of {model} (downloaded the first time from {})",
                    hub.base_url
                ),
            }),
        );
        let source = metaclaw_render::TokenizerSource::for_model(&model).repo;
        let on_progress = |p: metaclaw_render::DownloadProgress| {
            self.set_progress(StartupProgress {
                what: format!("{} of {source}", p.file),
                done_bytes: p.done_bytes,
                total_bytes: p.total_bytes,
            })
        };
        let tokenizer = metaclaw_render::load_tokenizer_reporting(
            &model,
            local.as_deref(),
            &self.parts.tokenizer_cache,
            &hub,
            &on_progress,
        )
        .await
        .map_err(|e| RlError::Render(e.to_string()))?;
        let renderer =
            Arc::new(Renderer::new(kind, tokenizer).map_err(|e| RlError::Render(e.to_string()))?);
        let ep = readiness::endpoint(c);
        let mut client = tinker_client::ClientConfig::new(
            ep.base_url,
            if ep.api_key.is_empty() {
                // Local servers do not check keys, but the protocol wants one.
                "tml-local".to_owned()
            } else {
                ep.api_key
            },
        );
        client.dialect = match c.rl.wire_format {
            WireFormat::Auto => tinker_client::WireDialect::Auto,
            WireFormat::Json => tinker_client::WireDialect::Json,
            WireFormat::Proto => tinker_client::WireDialect::Proto,
        };
        self.set_phase(
            Phase::Starting,
            Some(format!("opening a Tinker session at {}", client.base_url)),
        );
        let service = tinker_client::ServiceClient::connect(client)
            .await
            .map_err(|e| RlError::Tinker(format!("Tinker session: {e}")))?;
        let policy = Arc::new(Policy::new(
            renderer,
            model.clone(),
            SamplingDefaults {
                temperature: c.rl.temperature,
                max_new_tokens: c.rl.max_new_tokens,
                group_size: c.rl.group_size,
            },
            self.pins.clone(),
        ));
        let resume = if c.rl.resume_from_ckpt.is_empty() {
            self.parts
                .store
                .checkpoints()?
                .into_iter()
                .find(|k| k.kind == metaclaw_store::CheckpointKind::State)
                .map(|k| k.path)
        } else {
            Some(c.rl.resume_from_ckpt.clone())
        };
        self.set_phase(
            Phase::Starting,
            Some(format!(
                "creating the LoRA model (rank {}) of {model} and its first sampler",
                c.rl.lora_rank
            )),
        );
        let trainer = Trainer::start(
            self.parts.store.clone(),
            service,
            policy.clone(),
            self.parts.events.clone(),
            TrainerSettings {
                base_model: model,
                lora_rank: c.rl.lora_rank,
                batch_size: c.rl.batch_size,
                group_size: c.rl.group_size,
                loss_fn: c.rl.loss_fn,
                learning_rate: c.rl.learning_rate,
                checkpoint_every: c.rl.checkpoint_every,
                save_timeout: Duration::from_secs(c.rl.save_weights_timeout_s),
                kl_coef: c.opd.enabled.then_some(c.opd.kl_penalty_coef),
                gated: self.gated(c),
            },
            resume,
        )
        .await?;
        let judge = readiness::judge_configured(c)
            .then(|| {
                Judge::new(JudgeSettings {
                    url: c.rl.prm_url.clone(),
                    model: c.rl.prm_model.clone(),
                    api_key: c.rl.prm_api_key.clone(),
                    votes: c.rl.prm_m,
                    temperature: c.rl.prm_temperature,
                    max_tokens: c.rl.prm_max_new_tokens,
                    timeout: Duration::from_secs(c.llm.timeout_seconds),
                })
            })
            .transpose()?;
        let teacher = c
            .opd
            .enabled
            .then(|| {
                Teacher::new(TeacherSettings {
                    url: c.opd.teacher_url.clone(),
                    model: c.opd.teacher_model.clone(),
                    api_key: c.opd.teacher_api_key.clone(),
                    timeout: Duration::from_secs(c.llm.timeout_seconds),
                })
            })
            .transpose()?;
        Ok(Running {
            policy,
            trainer,
            scorer: Scorer::new(self.parts.store.clone(), judge),
            teacher,
        })
    }

    /// One training step now, on everything that is ready (`metaclaw train-step`).
    pub async fn train_step(&self) -> Result<StepOutcome, RlError> {
        let running = self.running_or_err()?;
        let weights = crate::reward::Weights::of(&self.config().rl);
        running.scorer.score_due(&weights).await?;
        running.scorer.refresh(&weights)?;
        let _step = self.gate.lock().await;
        if running.trainer.has_batch()? {
            self.prepare_gate(&self.config()).await;
        }
        let outcome = running.trainer.step(&NeverPause, true).await?;
        if let StepOutcome::Trained { step, sampler, .. } = &outcome {
            self.decide(&running, *step, sampler).await?;
        }
        Ok(outcome)
    }

    pub fn status(&self) -> RlStatus {
        let c = self.config();
        let (phase, message) = self.phase();
        let running = self.running.load_full();
        let sampler = running.as_ref().and_then(|r| r.policy.current());
        RlStatus {
            mode: c.mode,
            phase: if c.mode.is_rl() || phase != Phase::Serving {
                phase
            } else {
                Phase::Off
            },
            message,
            progress: self.progress(),
            missing: readiness::missing(&c)
                .iter()
                .map(ToString::to_string)
                .collect(),
            warnings: readiness::warnings(&c),
            reward_sources: readiness::reward_sources(&c),
            model: readiness::model(&c),
            renderer: running
                .as_ref()
                .map(|r| r.policy.renderer().kind().as_str().to_owned()),
            sampler: sampler.as_ref().map(|s| s.name.clone()),
            sampler_step: sampler.as_ref().map(|s| s.step),
            samples: self.parts.store.sample_counts().unwrap_or_default(),
            last_step: self
                .parts
                .store
                .training_steps(1)
                .ok()
                .and_then(|mut v| v.pop()),
            teacher_error: self.lock_teacher_error().clone(),
            starts: self.starts.load(std::sync::atomic::Ordering::Relaxed),
            restarting: self.stale(&c),
        }
    }

    fn lock_teacher_error(&self) -> std::sync::MutexGuard<'_, Option<String>> {
        self.teacher_error.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Stores the samples a served main turn produced (after the turn itself is stored:
    /// both go through the store's single writer, in order).
    fn record(self: &Arc<Self>, turn: &Arc<TurnRecord>) {
        let Some(running) = self.running.load_full() else {
            return;
        };
        let Some(trace) = running.policy.take_trace(&turn.turn_id) else {
            return;
        };
        if turn.turn_type != TurnType::Main || turn.status != TurnStatus::Ok {
            return;
        }
        // An agent that opted out (agents.<name>.learning or train_shared_policy) never
        // feeds the shared policy: its turns are answered but leave no sample.
        if !self.config().agent(&turn.agent).trains_policy() {
            tracing::debug!(turn = %turn.turn_id, agent = %turn.agent, "rl: agent does not train the policy");
            return;
        }
        let me = self.clone();
        let turn = turn.clone();
        tokio::spawn(async move {
            let generation = match turn.skill_generation {
                Some(g) => g,
                None => me.parts.store.skill_generation().unwrap_or(0),
            };
            let renderer = running.policy.renderer().clone();
            for r in &trace.responses {
                let sample = NewSample {
                    turn_id: turn.turn_id.clone(),
                    idx: r.idx,
                    session_id: turn.session_id.clone(),
                    created_at: turn.started_at,
                    skill_generation: generation,
                    sampler: trace.sampler.clone(),
                    renderer: renderer.kind().as_str().to_owned(),
                    prompt_tokens: trace.prompt.clone(),
                    response_tokens: r.tokens.clone(),
                    response_logprobs: r.logprobs.clone(),
                    response_text: r.text.clone(),
                };
                let store = me.parts.store.clone();
                let id = match tokio::task::spawn_blocking(move || store.insert_sample(sample))
                    .await
                {
                    Ok(Ok(id)) => id,
                    Ok(Err(e)) => {
                        tracing::warn!(error = %e, turn = %turn.turn_id, "rl: sample not stored");
                        continue;
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "rl: sample task failed");
                        continue;
                    }
                };
                if let Some(teacher) = &running.teacher {
                    let all: Vec<u32> = trace.prompt.iter().chain(&r.tokens).copied().collect();
                    let text = renderer.tokenizer().decode(&all);
                    match teacher.logprobs(&trace.prompt, &r.tokens, &text).await {
                        Ok(lp) => {
                            me.lock_teacher_error().take();
                            if let Err(e) = me.parts.store.set_teacher_logprobs(id, lp) {
                                tracing::warn!(error = %e, "rl: teacher logprobs not stored");
                            } else if !running.scorer.has_judge() {
                                // Teacher-only RL: the teacher's signal is what makes it trainable.
                                let _ = me.parts.store.set_sample_state(
                                    vec![id],
                                    SampleState::Ready,
                                    None,
                                );
                            }
                        }
                        Err(e) => {
                            tracing::warn!(error = %e, "rl: OPD teacher failed; no KL term");
                            *me.lock_teacher_error() = Some(e.to_string());
                        }
                    }
                }
            }
            me.wake.notify_one();
        });
    }
}

struct SchedulerGate<'a>(&'a Scheduler);

impl PauseGate for SchedulerGate<'_> {
    fn should_pause(&self) -> bool {
        self.0.should_pause()
    }
}

/// The proxy's handle: serves chat from the policy while RL is on and the policy is up.
pub struct RlModel(pub Arc<RlService>);

impl LocalModel for RlModel {
    fn serves(&self, _ctx: &TurnContext) -> bool {
        self.0.config().mode.is_rl() && self.0.policy().is_some_and(|p| p.current().is_some())
    }

    fn complete<'a>(
        &'a self,
        ctx: &'a TurnContext,
        request: Map<String, Value>,
    ) -> LocalFuture<'a> {
        Box::pin(async move {
            let policy = self
                .0
                .policy()
                .ok_or_else(|| LocalError::Unavailable("the RL policy is not running".into()))?;
            policy.answer(ctx, request).await
        })
    }
}

/// Records the samples of served turns.
pub struct SampleHook(pub Arc<RlService>);

impl TurnHook for SampleHook {
    fn after_response(&self, turn: &Arc<TurnRecord>) {
        self.0.record(turn);
    }
}
