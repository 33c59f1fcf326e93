//! The switches a desktop shell needs, on the running core: mode, OPD, pause, "enable RL" with
//! a readiness check that says what is missing, the pending-proposal count and a status
//! snapshot. Every change goes through [`LiveConfig`], exactly like `PATCH /api/config`, so the
//! dashboard, the tray and config.yaml always agree (and `Event::ConfigChanged` is sent).

use std::net::SocketAddr;
use std::sync::Arc;

use metaclaw_config::{Config, ConfigError, Home, Mode};
use metaclaw_scheduler::{Scheduler, SchedulerState};
use metaclaw_store::{ProposalStatus, Store, TrainingStatus};
use serde::Serialize;
use serde_json::{Value, json};

use crate::live::LiveConfig;

#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("database: {0}")]
    Store(#[from] metaclaw_store::StoreError),
    #[error("{0}")]
    NotReady(RlReadiness),
    #[error("dashboard login: {0}")]
    Login(String),
}

pub use metaclaw_rl::readiness::Missing;

/// Whether RL can run with the current settings, and if not, why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RlReadiness {
    pub missing: Vec<Missing>,
    /// Advice that does not block RL (no judge: only rated turns will train).
    pub warnings: Vec<String>,
}

impl RlReadiness {
    pub fn is_ready(&self) -> bool {
        self.missing.is_empty()
    }
}

impl std::fmt::Display for RlReadiness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_ready() {
            return f.write_str("RL settings are complete");
        }
        f.write_str("RL cannot start yet:")?;
        for m in &self.missing {
            write!(f, "\n- {m}")?;
        }
        Ok(())
    }
}

/// What RL still needs (the same list the daemon's status shows). A missing judge is not
/// on it: rated turns reward too, so it is a warning, as in the status.
pub fn rl_readiness(config: &Config) -> RlReadiness {
    RlReadiness {
        missing: metaclaw_rl::readiness::missing(config),
        warnings: metaclaw_rl::readiness::warnings(config),
    }
}

/// What the tray shows at a glance.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatusSnapshot {
    pub mode: Mode,
    pub rl_enabled: bool,
    pub opd_enabled: bool,
    pub learning_paused: bool,
    pub pending_proposals: usize,
    /// The step running now, if any.
    pub training_step: Option<u64>,
    pub training_progress: Option<f64>,
    /// The OMLS scheduler's state (`idle_wait`, `window_open`, `updating`, `pausing`).
    pub scheduler_state: &'static str,
    /// Whether windows gate training now (a training mode with the scheduler on). Otherwise
    /// the scheduler's "window" means nothing to the user.
    pub training_windows: bool,
    /// Where the open training window comes from (sleep, idle, calendar), if one is open.
    pub window_source: Option<String>,
}

/// The running core's switches. Cheap to clone; all clones act on the same core.
#[derive(Clone)]
pub struct Control {
    live: Arc<LiveConfig>,
    store: Arc<Store>,
    scheduler: Arc<Scheduler>,
    home: Home,
    addr: SocketAddr,
}

impl Control {
    pub(crate) fn new(
        live: Arc<LiveConfig>,
        store: Arc<Store>,
        scheduler: Arc<Scheduler>,
        home: Home,
        addr: SocketAddr,
    ) -> Control {
        Control {
            live,
            store,
            scheduler,
            home,
            addr,
        }
    }

    pub fn config(&self) -> Arc<Config> {
        self.live.get()
    }

    /// Where the proxy, the API and the dashboard listen.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    fn update(&self, changes: &[(&str, Value)]) -> Result<Arc<Config>, ControlError> {
        Ok(self.live.update(changes)?)
    }

    /// Switch the mode. `rl` and `auto` train, so they need complete RL settings first;
    /// `rl.enabled` follows, so "Enable RL" and the mode never disagree.
    pub fn set_mode(&self, mode: Mode) -> Result<Arc<Config>, ControlError> {
        let training = mode != Mode::SkillsOnly;
        if training {
            let readiness = self.rl_readiness()?;
            if !readiness.is_ready() {
                return Err(ControlError::NotReady(readiness));
            }
        }
        self.update(&[
            ("mode", json!(mode.as_str())),
            ("rl.enabled", json!(training)),
        ])
    }

    pub fn set_opd(&self, enabled: bool) -> Result<Arc<Config>, ControlError> {
        self.update(&[("opd.enabled", json!(enabled))])
    }

    pub fn set_learning_paused(&self, paused: bool) -> Result<Arc<Config>, ControlError> {
        self.update(&[("learning_paused", json!(paused))])
    }

    /// The "Enable RL" switch. On: refuse with what is missing, or set `rl.enabled` and leave
    /// `skills_only` for `rl` (a mode of `auto` is kept). Off: back to `skills_only`.
    pub fn set_rl_enabled(&self, enabled: bool) -> Result<Arc<Config>, ControlError> {
        if !enabled {
            return self.update(&[
                ("rl.enabled", json!(false)),
                ("mode", json!(Mode::SkillsOnly.as_str())),
            ]);
        }
        let readiness = self.rl_readiness()?;
        if !readiness.is_ready() {
            return Err(ControlError::NotReady(readiness));
        }
        let mode = match self.config().mode {
            Mode::SkillsOnly => Mode::Rl,
            other => other,
        };
        self.update(&[("rl.enabled", json!(true)), ("mode", json!(mode.as_str()))])
    }

    /// What RL still needs with the running configuration.
    pub fn rl_readiness(&self) -> Result<RlReadiness, ControlError> {
        Ok(rl_readiness(&self.config()))
    }

    pub fn pending_proposals(&self) -> Result<usize, ControlError> {
        Ok(self.store.proposals(Some(ProposalStatus::Pending))?.len())
    }

    pub fn snapshot(&self) -> Result<StatusSnapshot, ControlError> {
        let config = self.config();
        let current = self
            .store
            .current_training_step()?
            .filter(|s| s.status == TrainingStatus::Running);
        let status = self.scheduler.status();
        let training_windows = status.gating && config.mode != Mode::SkillsOnly;
        let window_source = match status.state {
            SchedulerState::WindowOpen | SchedulerState::Updating if training_windows => status
                .window
                .as_ref()
                .and_then(|w| serde_json::to_value(w.source).ok())
                .and_then(|v| v.as_str().map(str::to_owned)),
            _ => None,
        };
        Ok(StatusSnapshot {
            mode: config.mode,
            rl_enabled: config.rl.enabled,
            opd_enabled: config.opd.enabled,
            learning_paused: config.learning_paused,
            pending_proposals: self.pending_proposals()?,
            training_step: current.as_ref().map(|c| c.step),
            training_progress: current.as_ref().and_then(|c| c.progress),
            scheduler_state: status.state.as_str(),
            training_windows,
            window_source,
        })
    }

    /// A one-time login link for the dashboard. It asks the core's own API for the code (the
    /// same call `metaclaw dashboard` makes), so login stays one mechanism.
    pub async fn dashboard_login_url(&self) -> Result<String, ControlError> {
        let path = self.home.dashboard_token_path();
        let token = std::fs::read_to_string(&path)
            .map_err(|e| ControlError::Login(format!("{}: {e}", path.display())))?;
        let base = format!("http://127.0.0.1:{}", self.addr.port());
        let fail = |e: reqwest::Error| ControlError::Login(e.to_string());
        let code: Value = reqwest::Client::builder()
            .no_proxy()
            .build()
            .map_err(fail)?
            .post(format!("{base}/api/login-codes"))
            .bearer_auth(token.trim())
            .send()
            .await
            .map_err(fail)?
            .error_for_status()
            .map_err(fail)?
            .json()
            .await
            .map_err(fail)?;
        let code = code["code"]
            .as_str()
            .ok_or_else(|| ControlError::Login("no code in the answer".into()))?;
        Ok(format!("{base}/login?code={code}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ready_config() -> Config {
        let mut c = Config::default();
        c.rl.model = "Qwen/Qwen3-4B".into();
        c.rl.api_key = "tk-1".into();
        c.rl.prm_api_key = "sk-prm".into();
        c
    }

    #[test]
    fn defaults_miss_model_and_key() {
        let mut c = Config::default();
        c.llm.model_id.clear();
        let r = rl_readiness(&c);
        let keys: Vec<_> = r.missing.iter().map(|m| m.keys[0]).collect();
        assert_eq!(keys, ["rl.model", "rl.api_key"]);
        let text = r.to_string();
        assert!(text.contains("rl.api_key or rl.tinker_api_key"), "{text}");
    }

    #[test]
    fn complete_settings_are_ready_and_legacy_keys_count() {
        assert!(rl_readiness(&ready_config()).is_ready());
        let mut c = ready_config();
        c.rl.api_key.clear();
        c.rl.tinker_api_key = "tk-legacy".into();
        assert!(rl_readiness(&c).is_ready());
        // A local Tinker-compatible server needs no key.
        c.rl.tinker_api_key.clear();
        c.rl.base_url = "http://127.0.0.1:18777".into();
        assert!(rl_readiness(&c).is_ready());
    }

    #[test]
    fn no_judge_warns_but_does_not_block() {
        assert!(rl_readiness(&ready_config()).warnings.is_empty());
        let mut c = ready_config();
        c.rl.prm_api_key.clear();
        let r = rl_readiness(&c);
        assert!(r.is_ready());
        assert!(
            r.warnings[0].contains("only turns you rate"),
            "{:?}",
            r.warnings
        );
    }

    #[test]
    fn opd_on_needs_a_teacher() {
        let mut c = ready_config();
        c.opd.enabled = true;
        let r = rl_readiness(&c);
        assert_eq!(r.missing.len(), 1);
        assert_eq!(r.missing[0].keys, ["opd.teacher_url", "opd.teacher_model"]);
        c.opd.teacher_url = "http://127.0.0.1:9/v1".into();
        c.opd.teacher_model = "teacher".into();
        assert!(rl_readiness(&c).is_ready());
    }
}
