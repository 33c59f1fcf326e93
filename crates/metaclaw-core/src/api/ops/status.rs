//! `GET /api/status`: what the overview, the tray and `metaclaw status` show.

use chrono::{DateTime, TimeZone, Utc};
use metaclaw_config::Mode;
use metaclaw_rl::{Phase, RlStatus};
use metaclaw_scheduler::{SchedulerState, Window, WindowSource};
use metaclaw_store::{EvolutionRunRow, ProposalStatus, TrainingStatus};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::api::{Api, ApiError, Method, NoInput, Operation};

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Status {
    pub version: String,
    pub pid: u32,
    pub uptime_s: f64,
    pub mode: Mode,
    pub opd_enabled: bool,
    pub rl_enabled: bool,
    pub learning_paused: bool,
    /// No upstream is configured (`llm.api_base` is empty): the dashboard opens on onboarding.
    pub needs_onboarding: bool,
    pub upstream: Upstream,
    pub counts: Counts,
    pub training: TrainingSummary,
    pub rl: RlStatus,
    pub scheduler: SchedulerSummary,
    pub last_evolution_failure: Option<EvolutionRunRow>,
    pub log: LogFile,
    /// Settings that keep a feature from working, in words (e.g. pass-through without an
    /// endpoint of MetaClaw's own).
    #[serde(default)]
    pub warnings: Vec<String>,
}

/// The current log file; rotated ones lie beside it (`metaclaw.log.1` is the newest).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LogFile {
    pub path: String,
    /// `None` when the core logs to a terminal instead.
    pub bytes: Option<u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Upstream {
    pub url: String,
    /// Not probed by the status call (use the connection test).
    pub reachable: Option<bool>,
    pub detail: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Counts {
    pub sessions: u64,
    pub turns: u64,
    pub turns_today: u64,
    pub skills: u64,
    pub pending_proposals: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TrainingSummary {
    /// A training step is running now.
    pub running: bool,
    pub step: Option<u64>,
    pub progress: Option<f64>,
    /// One line: what RL is doing or what it needs.
    pub message: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SchedulerSummary {
    /// The scheduler is configured to gate training (scheduler.enabled, or mode auto).
    pub enabled: bool,
    /// Training windows apply now: a training mode with the scheduler gating.
    pub training_windows: bool,
    pub state: SchedulerState,
    /// Where the open window comes from, when one is open and windows apply.
    pub source: Option<WindowSource>,
    pub next_window: Option<Window>,
}

pub struct GetStatus;

/// Under pass-through the agent's sign-in serves its own turns only: MetaClaw's calls
/// (distillation, the judge, connection checks) need a credential of MetaClaw's.
pub fn config_warnings(config: &metaclaw_config::Config) -> Vec<String> {
    crate::onboarding::own_endpoint_warning(config)
        .into_iter()
        .collect()
}

impl Operation for GetStatus {
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/api/status";
    const SUMMARY: &'static str = "Mode, health, counts, training and scheduler state";
    type Path = ();
    type Input = NoInput;
    type Output = Status;

    async fn run(api: &Api, _: (), _: NoInput) -> Result<Status, ApiError> {
        let config = api.config();
        let store = api.store();
        let now = api.now();
        let turns_today = match local_midnight(now) {
            Some(m) => store.turns_since(m)?,
            None => 0,
        };
        let pending = store.proposal_count(ProposalStatus::Pending)?;
        let skills = api.skills().map_or(0, |svc| svc.library().len() as u64);
        let current = store
            .current_training_step()?
            .filter(|s| s.status == TrainingStatus::Running);
        let uptime = (now - api.parts().started_at).num_milliseconds().max(0) as f64 / 1000.0;
        let rl = api.parts().rl.status();
        let message = if current.is_some() {
            "training".to_owned()
        } else {
            rl_message(&rl)
        };
        Ok(Status {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            pid: std::process::id(),
            uptime_s: uptime,
            mode: config.mode,
            opd_enabled: config.opd.enabled,
            rl_enabled: config.rl.enabled,
            learning_paused: config.learning_paused,
            needs_onboarding: crate::onboarding::needs_onboarding(&config),
            warnings: config_warnings(&config),
            upstream: Upstream {
                url: config.llm.api_base.clone(),
                reachable: None,
                detail: Some("use Test connection in Settings".into()),
            },
            counts: Counts {
                sessions: store.session_count()?,
                turns: store.turn_count()?,
                turns_today,
                skills,
                pending_proposals: pending,
            },
            training: TrainingSummary {
                running: current.is_some(),
                step: current.as_ref().map(|c| c.step),
                progress: current.as_ref().and_then(|c| c.progress),
                message,
            },
            rl,
            scheduler: scheduler_summary(api, config.mode, now),
            last_evolution_failure: store.last_evolution_failure()?,
            log: log_file(&api.parts().home),
        })
    }
}

fn log_file(home: &metaclaw_config::Home) -> LogFile {
    let path = home.log_path();
    LogFile {
        bytes: std::fs::metadata(&path).ok().map(|m| m.len()),
        path: path.display().to_string(),
    }
}

fn local_midnight(now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let tz = metaclaw_domain::local_zone().tz;
    let midnight = now.with_timezone(&tz).date_naive().and_hms_opt(0, 0, 0)?;
    Some(
        tz.from_local_datetime(&midnight)
            .earliest()?
            .with_timezone(&Utc),
    )
}

fn scheduler_summary(api: &Api, mode: Mode, now: DateTime<Utc>) -> SchedulerSummary {
    let scheduler = &api.parts().scheduler;
    let status = scheduler.status();
    let training_windows = status.gating && mode != Mode::SkillsOnly;
    let source = match status.state {
        SchedulerState::WindowOpen | SchedulerState::Updating if training_windows => {
            status.window.map(|w| w.source)
        }
        _ => None,
    };
    SchedulerSummary {
        enabled: scheduler.settings().enabled || scheduler.settings().mode_auto,
        training_windows,
        state: status.state,
        source,
        next_window: scheduler.next_window(now),
    }
}

/// One line for the status card: what RL is doing, or what it needs.
fn rl_message(rl: &RlStatus) -> String {
    match (rl.phase, &rl.message) {
        (Phase::Off, _) if !rl.mode.is_rl() => "RL is off — switch the mode to rl or auto".into(),
        (Phase::Failed, Some(m)) => m.clone(),
        (Phase::Starting, Some(m)) => format!("RL is starting: {m}"),
        (Phase::Starting, None) => "RL is starting".into(),
        (Phase::Serving, _) => match rl.warnings.first() {
            Some(w) => format!("serving the policy; {w}"),
            None => "serving the policy".into(),
        },
        _ => "RL is waiting to start".into(),
    }
}
