//! Task rollouts, evaluations and the adapter gate, run by the core through its own proxy.
//!
//! Episodes are real sessions on `/v1/chat/completions` (session ids, session done), so they
//! are recorded, rewarded and trained like live turns. A rollout rewards each sample of an
//! episode with its task's verifier (combined with the judge by `rl.reward_combine`), takes
//! a training step, and evaluates after it: the learning curve. Evaluations pin their
//! sessions to an adapter (or skills off) and mark them, so they are never sampled for RL
//! nor distilled. The gate evaluates a candidate adapter the same way before it serves.

use std::collections::{BTreeMap, HashSet};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use metaclaw_config::{Config, RewardCombine};
use metaclaw_domain::{Event, SessionEndReason};
use metaclaw_rl::policy::{AdapterChoice, SessionPin};
use metaclaw_rl::{GateFuture, GateVerdict, RlService, StepOutcome};
use metaclaw_store::{
    AdapterStatus, AdapterVersion, EvalOutcome, EvalPurpose, RewardSource, SampleState, Store,
};
use metaclaw_tasks::episode::{run_episode, verify_answer};
use metaclaw_tasks::{
    Agent, AgentFuture, ChatReply, ChatRequest, CommandLimits, EpisodeResult, EpisodeSettings,
    LineProblem, SuccessRate, Task, TaskError, TaskSet,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::broadcast;

use crate::live::LiveConfig;

pub mod bench;

/// Sessions whose turns get no skills (the skills-off arm).
#[derive(Default)]
pub struct SkillsOff(Mutex<HashSet<String>>);

impl SkillsOff {
    pub fn contains(&self, session_id: &str) -> bool {
        self.lock().contains(session_id)
    }
    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What a rollout is asked to do (`metaclaw rollout`, the Training page's Start button).
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct RolloutRequest {
    /// The task folder; default `openclaw_env_data_dir`.
    pub dir: Option<String>,
    /// Default `openclaw_env_split` (`train`).
    pub split: Option<String>,
    /// Answers sampled per task, compared with each other (default `rl.group_size`).
    pub group: Option<u32>,
    /// Parallel episodes (default `openclaw_env_concurrency`).
    pub concurrency: Option<u32>,
    /// Turns per episode (default `openclaw_env_max_steps`).
    pub max_steps: Option<u32>,
    /// Repeat the split until this many training steps were taken; without it the split
    /// runs once and the trainer takes it from there.
    pub steps: Option<u32>,
    /// Evaluate this split before the first and after every step (the learning curve).
    pub eval: Option<String>,
    /// Offer the `run_command` tool (default `openclaw_env_allow_commands`).
    pub allow_commands: Option<bool>,
}

/// What an evaluation is asked to do (`metaclaw eval`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct EvalRequest {
    pub dir: Option<String>,
    /// Default `test`.
    pub split: Option<String>,
    /// `current` (default), `skills-on`, `skills-off`, `base`, `previous`, `v<step>`.
    pub arms: Vec<String>,
    pub concurrency: Option<u32>,
    pub max_steps: Option<u32>,
}

/// One point of the learning curve.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CurvePoint {
    /// Training steps taken by this rollout so far.
    pub round: u32,
    /// The adapter version that served the evaluation.
    pub adapter_step: Option<u64>,
    pub success: SuccessRate,
    /// Mean verifier reward of the round's training samples.
    pub train_reward: Option<f64>,
    pub loss: Option<f64>,
    /// Seconds the training step took (episodes, reward, step and gate; not the evaluation).
    pub step_seconds: Option<f64>,
    /// What the gate said about the step's adapter.
    pub gate: Option<String>,
}

/// One arm's result.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ArmReport {
    pub arm: String,
    pub run_id: i64,
    pub adapter_step: Option<u64>,
    pub success: SuccessRate,
    pub mean_score: Option<f64>,
    pub outcomes: Vec<EvalOutcome>,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EvalReport {
    pub dir: String,
    pub split: String,
    pub arms: Vec<ArmReport>,
    pub problems: Vec<LineProblem>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum JobKind {
    Rollout,
    Eval,
    Bench,
}

/// The running (or last) rollout or evaluation, as the CLI and the Training page follow it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct JobStatus {
    pub kind: Option<JobKind>,
    pub running: bool,
    /// What it is doing, in words.
    pub phase: String,
    pub episodes_done: u64,
    pub episodes_total: u64,
    pub steps_done: u32,
    pub steps_target: Option<u32>,
    pub curve: Vec<CurvePoint>,
    pub report: Option<EvalReport>,
    /// A MetaClaw-Bench run: its table so far (arms are added as they finish).
    pub bench: Option<bench::BenchReport>,
    pub problems: Vec<LineProblem>,
    pub warnings: Vec<String>,
    pub error: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum RolloutError {
    #[error("{0}")]
    Tasks(#[from] TaskError),
    #[error("a {0} is already running; wait for it to finish")]
    Busy(&'static str),
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Rl(#[from] metaclaw_rl::RlError),
    #[error("{0}")]
    Store(#[from] metaclaw_store::StoreError),
}

/// Sends an episode's requests to this core's own proxy.
struct ProxyAgent {
    client: reqwest::Client,
    url: String,
    key: String,
    sessions: Arc<metaclaw_proxy::SessionTracker>,
}

impl Agent for ProxyAgent {
    fn chat(&self, request: ChatRequest) -> AgentFuture<'_, ChatReply> {
        Box::pin(async move {
            let mut req = self
                .client
                .post(&self.url)
                .header("x-session-id", &request.session_id)
                .header("x-turn-type", "main")
                .json(&request.body);
            if request.done {
                req = req.header("x-session-done", "true");
            }
            if !self.key.is_empty() {
                req = req.bearer_auth(&self.key);
            }
            let resp = req
                .send()
                .await
                .map_err(|e| TaskError::Chat(e.to_string()))?;
            let status = resp.status();
            let turn_id = resp
                .headers()
                .get("x-metaclaw-turn-id")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let body: Value = resp
                .json()
                .await
                .map_err(|e| TaskError::Chat(format!("unreadable answer: {e}")))?;
            if !status.is_success() {
                let message = body["error"]["message"].as_str().unwrap_or_default();
                return Err(TaskError::Chat(format!("HTTP {status}: {message}")));
            }
            Ok(ChatReply { body, turn_id })
        })
    }

    fn end_session(&self, session_id: &str) -> AgentFuture<'_, ()> {
        self.sessions.end(session_id, SessionEndReason::Explicit);
        Box::pin(async { Ok(()) })
    }
}

/// How one split is run: which weights, whether samples are kept, what it is for.
struct Arm {
    name: String,
    pin: Option<SessionPin>,
    skills_off: bool,
    /// An evaluation (marked, no samples) or a rollout (samples rewarded for training).
    purpose: Option<EvalPurpose>,
    adapter_step: Option<u64>,
}

pub struct TaskRunner {
    store: Arc<Store>,
    rl: Arc<RlService>,
    events: broadcast::Sender<Event>,
    live: Arc<LiveConfig>,
    sessions: Arc<metaclaw_proxy::SessionTracker>,
    addr: OnceLock<std::net::SocketAddr>,
    skills_off: Arc<SkillsOff>,
    status: Mutex<JobStatus>,
    /// The task folder of the running rollout (the gate evaluates its gate split there).
    rollout_dir: Mutex<Option<PathBuf>>,
    /// The gate figure of the serving weights when no stored version holds it (the base
    /// model): (serving step, success).
    base_figure: Mutex<Option<(Option<u64>, f64)>>,
}

impl TaskRunner {
    pub(crate) fn new(
        store: Arc<Store>,
        rl: Arc<RlService>,
        events: broadcast::Sender<Event>,
        live: Arc<LiveConfig>,
        sessions: Arc<metaclaw_proxy::SessionTracker>,
        skills_off: Arc<SkillsOff>,
    ) -> Arc<Self> {
        Arc::new(Self {
            store,
            rl,
            events,
            live,
            sessions,
            addr: OnceLock::new(),
            skills_off,
            status: Mutex::default(),
            rollout_dir: Mutex::default(),
            base_figure: Mutex::default(),
        })
    }

    /// Where the proxy listens (known once the listener is bound).
    pub(crate) fn set_addr(&self, addr: std::net::SocketAddr) {
        let _ = self.addr.set(addr);
    }

    pub fn status(&self) -> JobStatus {
        self.lock_status().clone()
    }

    fn lock_status(&self) -> std::sync::MutexGuard<'_, JobStatus> {
        self.status.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Ends the job: `done` with what it produced (`keep` stores it), or `failed` with why.
    fn finish<T>(&self, result: Result<T, RolloutError>, keep: impl FnOnce(&mut JobStatus, T)) {
        self.update(|s| {
            s.running = false;
            match result {
                Ok(made) => {
                    s.phase = "done".into();
                    keep(s, made);
                }
                Err(e) => {
                    s.phase = "failed".into();
                    s.error = Some(e.to_string());
                }
            }
        });
    }

    fn update(&self, f: impl FnOnce(&mut JobStatus)) {
        let snapshot = {
            let mut s = self.lock_status();
            f(&mut s);
            s.clone()
        };
        let _ = self.events.send(Event::Training {
            step: u64::from(snapshot.steps_done),
            status: format!(
                "{}: {}",
                match snapshot.kind {
                    Some(JobKind::Eval) => "eval",
                    Some(JobKind::Bench) => "bench",
                    _ => "rollout",
                },
                snapshot.phase
            ),
            progress: (snapshot.episodes_total > 0)
                .then(|| snapshot.episodes_done as f64 / snapshot.episodes_total as f64),
        });
    }

    fn agent(&self, config: &Config) -> Result<ProxyAgent, RolloutError> {
        let addr = self
            .addr
            .get()
            .ok_or_else(|| RolloutError::Invalid("the proxy is not listening yet".into()))?;
        let client = metaclaw_llm::http_client(&metaclaw_llm::HttpOptions::loopback(
            Duration::from_secs(config.llm.timeout_seconds.max(30) + 30),
        ))
        .map_err(|e| RolloutError::Invalid(e.to_string()))?;
        Ok(ProxyAgent {
            client,
            url: format!("http://{addr}/v1/chat/completions"),
            key: config.proxy.api_key.clone(),
            sessions: self.sessions.clone(),
        })
    }

    fn task_dir(config: &Config, dir: Option<&str>) -> Result<PathBuf, RolloutError> {
        let dir = dir
            .filter(|d| !d.trim().is_empty())
            .unwrap_or(&config.openclaw_env_data_dir);
        if dir.trim().is_empty() {
            return Err(RolloutError::Invalid(
                "no task folder: pass one or set openclaw_env_data_dir".into(),
            ));
        }
        Ok(PathBuf::from(dir))
    }

    /// Claims the job slot; fails when a rollout or evaluation runs.
    fn claim(&self, kind: JobKind) -> Result<(), RolloutError> {
        let mut s = self.lock_status();
        if s.running {
            return Err(RolloutError::Busy(match s.kind {
                Some(JobKind::Eval) => "evaluation",
                Some(JobKind::Bench) => "benchmark run",
                _ => "rollout",
            }));
        }
        *s = JobStatus {
            kind: Some(kind),
            running: true,
            phase: "starting".into(),
            ..JobStatus::default()
        };
        Ok(())
    }

    /// Starts a rollout in the background; progress is in [`TaskRunner::status`].
    pub fn start_rollout(self: &Arc<Self>, req: RolloutRequest) -> Result<JobStatus, RolloutError> {
        let config = self.live.get();
        let dir = Self::task_dir(&config, req.dir.as_deref())?;
        let split = req
            .split
            .clone()
            .unwrap_or_else(|| config.openclaw_env_split.clone());
        // Fail fast on a missing folder or split; the job re-reads nothing.
        let set = TaskSet::load(&dir, &split)?;
        let eval_set = req
            .eval
            .as_deref()
            .map(|e| TaskSet::load(&dir, e))
            .transpose()?;
        if !config.mode.is_rl() || self.rl.policy().is_none() {
            return Err(RolloutError::Invalid(
                "rollouts train the RL policy: turn RL on and wait until it serves".into(),
            ));
        }
        self.claim(JobKind::Rollout)?;
        let me = self.clone();
        tokio::spawn(async move {
            me.rl.hold_training(true);
            *me.rollout_dir.lock().unwrap_or_else(|e| e.into_inner()) = Some(dir.clone());
            let result = me.rollout(&req, set, eval_set).await;
            *me.rollout_dir.lock().unwrap_or_else(|e| e.into_inner()) = None;
            me.rl.hold_training(false);
            me.finish(result, |_, ()| {});
        });
        Ok(self.status())
    }

    async fn rollout(
        &self,
        req: &RolloutRequest,
        set: TaskSet,
        eval_set: Option<TaskSet>,
    ) -> Result<(), RolloutError> {
        let config = self.live.get();
        let group = req.group.unwrap_or(config.rl.group_size).max(1);
        let settings = self.episode_settings(&config, req.max_steps, req.allow_commands, Some(0.6));
        let concurrency = req
            .concurrency
            .unwrap_or(config.openclaw_env_concurrency)
            .max(1);
        let mut problems = set.problems.clone();
        if let Some(e) = &eval_set {
            problems.extend(e.problems.iter().cloned());
        }
        let warnings = self.command_warnings(&settings);
        self.update(|s| {
            s.problems = problems;
            s.warnings = warnings;
            s.steps_target = req.steps;
        });
        let agent = self.agent(&config)?;
        let dir = set.dir.display().to_string();
        if let Some(eval) = &eval_set {
            let point = self
                .curve_point(&agent, eval, &settings, concurrency, 0, None)
                .await?;
            self.update(|s| s.curve.push(point));
        }
        let target = req.steps.unwrap_or(0);
        let mut round = 0u32;
        let mut trained = 0u32;
        // A split whose rewards never differ teaches nothing: stop after a few such rounds.
        let max_rounds = target.max(1) * 5;
        loop {
            round += 1;
            let started = Instant::now();
            self.update(|s| s.phase = format!("round {round}: running {} tasks", set.tasks.len()));
            let arm = Arm {
                name: "rollout".into(),
                pin: Some(SessionPin {
                    adapter: AdapterChoice::Serving,
                    samples: Some(group),
                    record: true,
                }),
                skills_off: false,
                purpose: None,
                adapter_step: self.rl.serving_step(),
            };
            let results = self
                .run_split(&agent, &set, &arm, &settings, concurrency, round)
                .await?;
            self.update(|s| s.phase = format!("round {round}: rewarding"));
            let tasks: BTreeMap<&str, &Task> =
                set.tasks.iter().map(|t| (t.id.as_str(), t)).collect();
            let mut rewards = Vec::new();
            for r in &results {
                if let Some(task) = tasks.get(r.task_id.as_str()) {
                    rewards.extend(
                        self.reward(task, r, group, &settings.limits, &config)
                            .await?,
                    );
                }
            }
            if target == 0 {
                // One pass: the trainer takes it from here, as with live turns.
                tracing::info!(episodes = results.len(), %dir, "rollout: one pass done");
                return Ok(());
            }
            self.update(|s| s.phase = format!("round {round}: training"));
            let outcome = self.rl.train_step().await?;
            let (loss, gate) = match &outcome {
                StepOutcome::Trained { step, loss, .. } => {
                    trained += 1;
                    let gate = self
                        .store
                        .adapter_versions()?
                        .into_iter()
                        .find(|v| v.step == *step)
                        .map(|v| format!("{}: {}", v.status, v.reason.unwrap_or_default()));
                    (*loss, gate)
                }
                StepOutcome::Skipped { reason } => (None, Some(format!("no step: {reason}"))),
                StepOutcome::Paused { .. } => (None, Some("paused".into())),
            };
            let step_seconds = started.elapsed().as_secs_f64();
            let train_reward = mean(&rewards);
            self.update(|s| s.steps_done = trained);
            let stepped = matches!(outcome, StepOutcome::Trained { .. });
            let last = self.lock_status().curve.last().cloned();
            if let (Some(_), false, Some(last)) = (&eval_set, stepped, last) {
                // No step, same weights: the last evaluation still holds.
                self.update(|s| {
                    s.curve.push(CurvePoint {
                        train_reward,
                        loss,
                        step_seconds: Some(step_seconds),
                        gate,
                        ..last
                    })
                });
            } else if let Some(eval) = &eval_set {
                let mut point = self
                    .curve_point(&agent, eval, &settings, concurrency, trained, Some(round))
                    .await?;
                point.train_reward = train_reward;
                point.loss = loss;
                point.step_seconds = Some(step_seconds);
                point.gate = gate;
                self.update(|s| s.curve.push(point));
            } else {
                self.update(|s| {
                    s.curve.push(CurvePoint {
                        round: trained,
                        adapter_step: self.rl.serving_step(),
                        success: SuccessRate::new(
                            rewards.iter().filter(|r| **r >= 1.0).count() as u64,
                            rewards.len() as u64,
                        ),
                        train_reward,
                        loss,
                        step_seconds: Some(step_seconds),
                        gate,
                    })
                });
            }
            if trained >= target || round >= max_rounds {
                return Ok(());
            }
        }
    }

    fn command_warnings(&self, settings: &EpisodeSettings) -> Vec<String> {
        let mut out = Vec::new();
        if settings.allow_commands {
            if metaclaw_tasks::command::sandbox().is_some() {
                out.push(
                    "run_command is on: the agent runs shell commands, confined to each \
                     episode's scratch folder (bubblewrap), with a time limit and an output cap"
                        .into(),
                );
            } else {
                out.push(
                    "run_command is not offered: it needs bubblewrap (bwrap) to confine \
                     commands to the episode's folder"
                        .into(),
                );
            }
        }
        out
    }

    fn episode_settings(
        &self,
        config: &Config,
        max_steps: Option<u32>,
        allow_commands: Option<bool>,
        temperature: Option<f64>,
    ) -> EpisodeSettings {
        EpisodeSettings {
            max_steps: max_steps.unwrap_or(config.openclaw_env_max_steps).max(1),
            temperature,
            allow_commands: allow_commands.unwrap_or(config.openclaw_env_allow_commands),
            limits: CommandLimits::default(),
            model: "metaclaw-task".into(),
            seed: None,
        }
    }

    async fn curve_point(
        &self,
        agent: &ProxyAgent,
        eval: &TaskSet,
        settings: &EpisodeSettings,
        concurrency: u32,
        round: u32,
        _after: Option<u32>,
    ) -> Result<CurvePoint, RolloutError> {
        self.update(|s| s.phase = format!("evaluating on {} after {round} step(s)", eval.split));
        let step = self.rl.serving_step();
        let arm = Arm {
            name: "serving".into(),
            pin: Some(SessionPin {
                adapter: AdapterChoice::Serving,
                samples: None,
                record: false,
            }),
            skills_off: false,
            purpose: Some(EvalPurpose::Curve),
            adapter_step: step,
        };
        let report = self
            .evaluate(agent, eval, &arm, settings, concurrency)
            .await?;
        Ok(CurvePoint {
            round,
            adapter_step: step,
            success: report.success,
            train_reward: None,
            loss: None,
            step_seconds: None,
            gate: None,
        })
    }

    /// Runs every task of `set` once as its own session; returns the episodes. Evaluations
    /// use one seed per task for every arm and run, so arms differ by weights and skills,
    /// not by the dice; rollouts change the seed each round.
    async fn run_split(
        &self,
        agent: &dyn Agent,
        set: &TaskSet,
        arm: &Arm,
        settings: &EpisodeSettings,
        concurrency: u32,
        round: u32,
    ) -> Result<Vec<EpisodeResult>, RolloutError> {
        let run_tag = uuid::Uuid::new_v4().simple().to_string();
        let total = set.tasks.len() as u64;
        self.update(|s| {
            s.episodes_done = 0;
            s.episodes_total = total;
        });
        let eval = arm.purpose.is_some();
        let mut jobs: Vec<Pin<Box<dyn Future<Output = EpisodeResult> + Send + '_>>> = Vec::new();
        for task in &set.tasks {
            let session = format!(
                "{}-{}-{}",
                if eval { "eval" } else { "rollout" },
                &run_tag[..8],
                task.id
            );
            let mut settings = settings.clone();
            settings.seed = Some(if eval {
                seed(&task.id, 0, "eval")
            } else {
                seed(&task.id, round, &arm.name)
            });
            jobs.push(Box::pin(async move {
                // Before the first turn: the verifier, not live use's signals, rewards it.
                if !eval && let Err(e) = self.store.mark_rollout_session(&session) {
                    self.update(|s| s.episodes_done += 1);
                    return EpisodeResult::failed(
                        task,
                        &session,
                        format!("could not mark the session: {e}"),
                    );
                }
                if let Some(pin) = &arm.pin {
                    self.rl.pins().set(&session, pin.clone());
                }
                if arm.skills_off {
                    self.skills_off.lock().insert(session.clone());
                }
                let result = run_episode(agent, task, &session, &settings).await;
                self.rl.pins().remove(&session);
                self.skills_off.lock().remove(&session);
                self.update(|s| s.episodes_done += 1);
                result
            }));
        }
        Ok(futures_util::stream::iter(jobs)
            .buffer_unordered(concurrency as usize)
            .collect()
            .await)
    }

    /// Runs `set` as an evaluation arm: sessions marked, no samples, results stored.
    async fn evaluate(
        &self,
        agent: &ProxyAgent,
        set: &TaskSet,
        arm: &Arm,
        settings: &EpisodeSettings,
        concurrency: u32,
    ) -> Result<ArmReport, RolloutError> {
        let purpose = arm.purpose.unwrap_or(EvalPurpose::Eval);
        let run_id = self.store.start_eval_run(
            &set.dir.display().to_string(),
            &set.split,
            purpose,
            &arm.name,
            arm.adapter_step,
        )?;
        // The sessions are marked before their first turn (distillation checks the mark).
        let mut settings = settings.clone();
        settings.temperature = settings.temperature.or(Some(0.6));
        let results = {
            let marker = MarkSessions {
                store: &self.store,
                run_id,
            };
            let marking = MarkingAgent {
                inner: agent,
                marker: &marker,
                marked: Mutex::default(),
            };
            self.run_split(&marking, set, arm, &settings, concurrency, 0)
                .await?
        };
        let mut outcomes = Vec::new();
        for r in results {
            let outcome = EvalOutcome {
                task_id: r.task_id.clone(),
                session_id: r.session_id.clone(),
                passed: r.passed(),
                score: r.verdict.as_ref().map_or(0.0, |v| v.score),
                answer: r.answer.chars().take(2000).collect(),
                detail: match (&r.error, &r.verdict) {
                    (Some(e), _) => format!("error: {e}"),
                    (None, Some(v)) => v
                        .checks
                        .iter()
                        .map(|c| format!("{}: {}", c.kind, c.detail))
                        .collect::<Vec<_>>()
                        .join("; "),
                    (None, None) => "no verifier".into(),
                },
            };
            self.store.add_eval_outcome(run_id, outcome.clone())?;
            outcomes.push(outcome);
        }
        self.store.finish_eval_run(run_id)?;
        outcomes.sort_by(|a, b| a.task_id.cmp(&b.task_id));
        let passed = outcomes.iter().filter(|o| o.passed).count() as u64;
        Ok(ArmReport {
            arm: arm.name.clone(),
            run_id,
            adapter_step: arm.adapter_step,
            success: SuccessRate::new(passed, outcomes.len() as u64),
            mean_score: mean(&outcomes.iter().map(|o| o.score).collect::<Vec<_>>()),
            outcomes,
        })
    }

    /// Rewards an episode's samples with its verifier; returns the final turn's rewards.
    async fn reward(
        &self,
        task: &Task,
        r: &EpisodeResult,
        group: u32,
        limits: &CommandLimits,
        config: &Config,
    ) -> Result<Vec<f64>, RolloutError> {
        let (Some(verdict), Some(last)) = (&r.verdict, r.turn_ids.last()) else {
            return Ok(Vec::new());
        };
        // Samples are written after their turn, one by one, off the request path: a turn
        // is trainable only once every sample of it has a reward.
        let samples = self.wait_for_samples(last, group as usize).await?;
        let mut scores = Vec::with_capacity(samples.len());
        for s in &samples {
            scores.push(if s.idx == 0 {
                verdict.score
            } else {
                verify_answer(task, &s.response_text, limits)
                    .await?
                    .map_or(0.0, |v| v.score)
            });
        }
        self.apply_rewards(&r.turn_ids, &samples, &scores, verdict.score, config)
            .await?;
        Ok(scores)
    }

    /// Rewards an exchange's samples: the last turn's by `scores` (one per sample, in order;
    /// combined with the judge by `rl.reward_combine`), the earlier turns' (tool calls)
    /// first samples with the exchange's `score`.
    async fn apply_rewards(
        &self,
        turn_ids: &[String],
        samples: &[metaclaw_store::SampleRow],
        scores: &[f64],
        score: f64,
        config: &Config,
    ) -> Result<(), RolloutError> {
        let Some(last) = turn_ids.last() else {
            return Ok(());
        };
        let judge = metaclaw_rl::readiness::judge_configured(config);
        for (s, verifier) in samples.iter().zip(scores) {
            let judged = if judge && config.rl.reward_combine != RewardCombine::Verifier {
                self.wait_for_judge(last, s.idx).await?
            } else {
                None
            };
            let (reward, source) = combine(*verifier, judged, config.rl.reward_combine);
            self.store.set_sample_reward(last, s.idx, reward, source)?;
        }
        self.store
            .set_turn_reward(last, score, RewardSource::Verifier)?;
        // Earlier turns (tool calls) share the exchange's outcome; their extra samples were
        // never continued, so nothing says how they would have done.
        for turn in &turn_ids[..turn_ids.len() - 1] {
            for s in self.store.samples_for_turn(turn)? {
                if s.idx == 0 {
                    self.store
                        .set_sample_reward(turn, 0, score, RewardSource::Verifier)?;
                } else {
                    self.store
                        .set_sample_state(vec![s.id], SampleState::Skipped, None)?;
                }
            }
        }
        Ok(())
    }

    async fn wait_for_samples(
        &self,
        turn: &str,
        expected: usize,
    ) -> Result<Vec<metaclaw_store::SampleRow>, RolloutError> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let store = self.store.clone();
            let turn_owned = turn.to_owned();
            let samples = tokio::task::spawn_blocking(move || {
                store.flush()?;
                store.samples_for_turn(&turn_owned)
            })
            .await
            .map_err(|e| RolloutError::Invalid(e.to_string()))??;
            if samples.len() >= expected || Instant::now() > deadline {
                return Ok(samples);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The judge's score of a sample once it has one (bounded wait).
    async fn wait_for_judge(&self, turn: &str, idx: u32) -> Result<Option<f64>, RolloutError> {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let s = self
                .store
                .samples_for_turn(turn)?
                .into_iter()
                .find(|s| s.idx == idx);
            if let Some(s) = &s
                && s.reward_source == Some(RewardSource::Prm)
            {
                return Ok(s.reward);
            }
            if Instant::now() > deadline {
                return Ok(None);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Starts an evaluation in the background; the report lands in [`TaskRunner::status`].
    pub fn start_eval(self: &Arc<Self>, req: EvalRequest) -> Result<JobStatus, RolloutError> {
        let config = self.live.get();
        let dir = Self::task_dir(&config, req.dir.as_deref())?;
        let split = req.split.clone().unwrap_or_else(|| "test".to_owned());
        let set = TaskSet::load(&dir, &split)?;
        let arms = if req.arms.is_empty() {
            vec!["current".to_owned()]
        } else {
            req.arms.clone()
        };
        for a in &arms {
            parse_arm(a)?;
        }
        self.claim(JobKind::Eval)?;
        let me = self.clone();
        tokio::spawn(async move {
            let result = me.eval(&req, &arms, set).await;
            me.finish(result, |s, report| s.report = Some(report));
        });
        Ok(self.status())
    }

    async fn eval(
        &self,
        req: &EvalRequest,
        arms: &[String],
        set: TaskSet,
    ) -> Result<EvalReport, RolloutError> {
        let config = self.live.get();
        let settings = self.episode_settings(&config, req.max_steps, None, Some(0.6));
        let concurrency = req
            .concurrency
            .unwrap_or(config.openclaw_env_concurrency)
            .max(1);
        self.update(|s| s.problems = set.problems.clone());
        let agent = self.agent(&config)?;
        let mut reports = Vec::new();
        for name in arms {
            self.update(|s| s.phase = format!("arm {name}"));
            let arm = self.arm(name, &config).await?;
            reports.push(
                self.evaluate(&agent, &set, &arm, &settings, concurrency)
                    .await?,
            );
        }
        Ok(EvalReport {
            dir: set.dir.display().to_string(),
            split: set.split.clone(),
            arms: reports,
            problems: set.problems,
        })
    }

    async fn arm(&self, name: &str, config: &Config) -> Result<Arm, RolloutError> {
        let rl_serving = config.mode.is_rl() && self.rl.policy().is_some();
        let need_rl = |what: &str| {
            if rl_serving {
                Ok(())
            } else {
                Err(RolloutError::Invalid(format!(
                    "the {what} arm needs the RL policy serving (mode rl or auto)"
                )))
            }
        };
        let pin = |adapter| SessionPin {
            adapter,
            samples: None,
            record: false,
        };
        let mut arm = Arm {
            name: name.to_owned(),
            pin: Some(pin(AdapterChoice::Serving)),
            skills_off: false,
            purpose: Some(EvalPurpose::Eval),
            adapter_step: rl_serving.then(|| self.rl.serving_step()).flatten(),
        };
        match parse_arm(name)? {
            ArmKind::Current | ArmKind::SkillsOn => {}
            ArmKind::SkillsOff => arm.skills_off = true,
            ArmKind::Base => {
                need_rl("base")?;
                self.rl.ensure_base().await?;
                arm.pin = Some(pin(AdapterChoice::Base));
                arm.adapter_step = None;
            }
            ArmKind::Previous => {
                need_rl("previous")?;
                let serving = self.rl.serving_step().unwrap_or(0);
                let previous = self
                    .store
                    .adapter_versions()?
                    .into_iter()
                    .filter(|v| v.status != AdapterStatus::Refused && v.step < serving)
                    .map(|v| v.step)
                    .max()
                    .ok_or_else(|| {
                        RolloutError::Invalid("there is no earlier adapter version".into())
                    })?;
                arm.pin = Some(pin(AdapterChoice::Version(previous)));
                arm.adapter_step = Some(previous);
            }
            ArmKind::Version(step) => {
                need_rl("version")?;
                arm.pin = Some(pin(AdapterChoice::Version(step)));
                arm.adapter_step = Some(step);
            }
        }
        Ok(arm)
    }

    /// The task folder the gate evaluates in: the running rollout's, else the setting's.
    fn gate_dir(&self, config: &Config) -> Option<PathBuf> {
        self.rollout_dir
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .or_else(|| {
                (!config.openclaw_env_data_dir.is_empty())
                    .then(|| PathBuf::from(&config.openclaw_env_data_dir))
            })
    }

    /// Before a training step: the serving weights' figure on the gate split, unless it is
    /// known. Measured now because after the step some servers (SkyRL) sample every
    /// sampler of the model with the new weights.
    async fn prepare_gate(&self) {
        let config = self.live.get();
        let Some(dir) = self.gate_dir(&config) else {
            return;
        };
        let serving_step = self.rl.serving_step();
        if let Err(e) = self.baseline(&dir, &config, serving_step).await {
            tracing::warn!(error = %e, "gate: could not measure the serving adapter");
        }
    }

    /// The serving weights' success on the gate split: stored with its version, or measured
    /// (and kept) now.
    async fn baseline(
        &self,
        dir: &Path,
        config: &Config,
        serving_step: Option<u64>,
    ) -> Result<f64, RolloutError> {
        let serving = self
            .store
            .adapter_versions()?
            .into_iter()
            .find(|v| v.status == AdapterStatus::Serving);
        if let Some(b) = serving.as_ref().and_then(|v| v.eval_success) {
            return Ok(b);
        }
        let known = *self.base_figure.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((step, b)) = known
            && step == serving_step
            && serving.is_none()
        {
            return Ok(b);
        }
        let split = config.rl.gate_split.trim();
        let set = TaskSet::load(dir, split)?;
        let agent = self.agent(config)?;
        let settings = self.episode_settings(config, None, Some(false), Some(0.6));
        let arm = Arm {
            name: "serving".into(),
            pin: Some(SessionPin {
                adapter: AdapterChoice::Serving,
                samples: None,
                record: false,
            }),
            skills_off: false,
            purpose: Some(EvalPurpose::Gate),
            adapter_step: serving_step,
        };
        let report = self
            .evaluate(
                &agent,
                &set,
                &arm,
                &settings,
                config.openclaw_env_concurrency.max(1),
            )
            .await?;
        match serving {
            Some(v) => self.store.upsert_adapter_version(AdapterVersion {
                eval_success: Some(report.success.rate),
                eval_trials: Some(report.success.trials),
                ..v
            })?,
            None => {
                *self.base_figure.lock().unwrap_or_else(|e| e.into_inner()) =
                    Some((serving_step, report.success.rate));
            }
        }
        Ok(report.success.rate)
    }

    /// The gate: the candidate on the gate split against the serving adapter's figure.
    async fn check_candidate(&self, step: u64) -> GateVerdict {
        let config = self.live.get();
        let split = config.rl.gate_split.trim().to_owned();
        let dir = self.gate_dir(&config);
        let accept = |reason: String| GateVerdict {
            accept: true,
            success: None,
            trials: None,
            baseline: None,
            reason,
        };
        let Some(dir) = dir else {
            return accept(format!(
                "served without a gate check: no task folder for the gate split {split:?} \
                 (set openclaw_env_data_dir)"
            ));
        };
        match self.gate_eval(&dir, &split, step, &config).await {
            Ok(v) => v,
            Err(e) => GateVerdict {
                accept: false,
                success: None,
                trials: None,
                baseline: None,
                reason: format!("refused: the gate evaluation failed ({e})"),
            },
        }
    }

    async fn gate_eval(
        &self,
        dir: &Path,
        split: &str,
        step: u64,
        config: &Config,
    ) -> Result<GateVerdict, RolloutError> {
        let set = TaskSet::load(dir, split)?;
        let agent = self.agent(config)?;
        let settings = self.episode_settings(config, None, Some(false), Some(0.6));
        let concurrency = config.openclaw_env_concurrency.max(1);
        let baseline = self.baseline(dir, config, self.rl.serving_step()).await?;
        let arm = Arm {
            name: "candidate".into(),
            pin: Some(SessionPin {
                adapter: AdapterChoice::Candidate,
                samples: None,
                record: false,
            }),
            skills_off: false,
            purpose: Some(EvalPurpose::Gate),
            adapter_step: Some(step),
        };
        let report = self
            .evaluate(&agent, &set, &arm, &settings, concurrency)
            .await?;
        let got = report.success.rate;
        let tolerance = config.rl.gate_tolerance;
        let accept = got + 1e-9 >= baseline - tolerance;
        let figures = format!(
            "{:.0} % on the gate split {split:?} ({}/{}) against {:.0} % for the serving adapter",
            got * 100.0,
            report.success.successes,
            report.success.trials,
            baseline * 100.0
        );
        Ok(GateVerdict {
            accept,
            success: Some(got),
            trials: Some(report.success.trials),
            baseline: Some(baseline),
            reason: if accept {
                format!("promoted: {figures}")
            } else {
                format!(
                    "refused: {figures} (tolerance {:.0} points); the previous adapter keeps serving",
                    tolerance * 100.0
                )
            },
        })
    }
}

/// The gate the RL service calls after each training step.
pub(crate) struct RunnerGate(pub std::sync::Weak<TaskRunner>);

impl metaclaw_rl::AdapterGate for RunnerGate {
    fn prepare(&self) -> metaclaw_rl::PrepareFuture<'_> {
        Box::pin(async move {
            if let Some(runner) = self.0.upgrade() {
                runner.prepare_gate().await;
            }
        })
    }

    fn check(&self, step: u64) -> GateFuture<'_> {
        Box::pin(async move {
            match self.0.upgrade() {
                Some(runner) => runner.check_candidate(step).await,
                None => GateVerdict {
                    accept: true,
                    success: None,
                    trials: None,
                    baseline: None,
                    reason: "served without a gate check: shutting down".into(),
                },
            }
        })
    }
}

/// Marks each evaluation session before its first request.
struct MarkSessions<'a> {
    store: &'a Store,
    run_id: i64,
}

struct MarkingAgent<'a> {
    inner: &'a ProxyAgent,
    marker: &'a MarkSessions<'a>,
    marked: Mutex<HashSet<String>>,
}

impl Agent for MarkingAgent<'_> {
    fn chat(&self, request: ChatRequest) -> AgentFuture<'_, ChatReply> {
        Box::pin(async move {
            let first = self
                .marked
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(request.session_id.clone());
            if first {
                self.marker
                    .store
                    .mark_eval_session(&request.session_id, self.marker.run_id)
                    .map_err(|e| TaskError::Chat(format!("could not mark the session: {e}")))?;
            }
            self.inner.chat(request).await
        })
    }

    fn end_session(&self, session_id: &str) -> AgentFuture<'_, ()> {
        self.inner.end_session(session_id)
    }
}

#[derive(Debug)]
enum ArmKind {
    Current,
    SkillsOn,
    SkillsOff,
    Base,
    Previous,
    Version(u64),
}

fn parse_arm(name: &str) -> Result<ArmKind, RolloutError> {
    Ok(match name.trim() {
        "current" | "serving" => ArmKind::Current,
        "skills-on" => ArmKind::SkillsOn,
        "skills-off" => ArmKind::SkillsOff,
        "base" => ArmKind::Base,
        "previous" => ArmKind::Previous,
        other => match other.strip_prefix('v').and_then(|n| n.parse().ok()) {
            Some(step) => ArmKind::Version(step),
            None => {
                return Err(RolloutError::Invalid(format!(
                    "unknown arm {other:?}: use current, skills-on, skills-off, base, previous \
                     or v<step>"
                )));
            }
        },
    })
}

/// The reward of a sample from its verifier score (0..1) and, when the rule wants it, the
/// judge's (-1..1, mapped to 0..1).
fn combine(verifier: f64, judge: Option<f64>, rule: RewardCombine) -> (f64, RewardSource) {
    match (rule, judge) {
        (RewardCombine::Verifier, _) | (_, None) => (verifier, RewardSource::Verifier),
        (RewardCombine::Mean, Some(j)) => {
            ((verifier + (j + 1.0) / 2.0) / 2.0, RewardSource::Combined)
        }
        (RewardCombine::Min, Some(j)) => (verifier.min((j + 1.0) / 2.0), RewardSource::Combined),
    }
}

fn seed(task: &str, round: u32, arm: &str) -> u64 {
    // FNV-1a: stable across runs and platforms. 31 bits: SkyRL's sampler takes an int32
    // seed and refuses larger ones.
    format!("{task}\u{0}{round}\u{0}{arm}")
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
        % (1 << 31)
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewards_combine_by_the_rule() {
        assert_eq!(
            combine(1.0, Some(-1.0), RewardCombine::Verifier),
            (1.0, RewardSource::Verifier)
        );
        assert_eq!(
            combine(1.0, Some(-1.0), RewardCombine::Mean),
            (0.5, RewardSource::Combined)
        );
        assert_eq!(
            combine(1.0, Some(0.0), RewardCombine::Min),
            (0.5, RewardSource::Combined)
        );
        assert_eq!(
            combine(0.25, None, RewardCombine::Min),
            (0.25, RewardSource::Verifier)
        );
    }

    #[test]
    fn seeds_fit_an_int32() {
        for task in ["a", "task-17", "日本語"] {
            for round in [0, 1, 1000] {
                assert!(i32::try_from(seed(task, round, "rollout")).is_ok());
            }
        }
        assert_ne!(seed("a", 0, "rollout"), seed("a", 1, "rollout"));
    }

    #[test]
    fn arms_are_named_or_refused() {
        assert!(matches!(parse_arm("v12").unwrap(), ArmKind::Version(12)));
        assert!(matches!(
            parse_arm("skills-off").unwrap(),
            ArmKind::SkillsOff
        ));
        assert!(
            parse_arm("best")
                .unwrap_err()
                .to_string()
                .contains("unknown arm")
        );
    }
}
