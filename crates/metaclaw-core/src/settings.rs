//! The one settings path. The dashboard, the tray and the CLI change the configuration only
//! here: the change is normalised (the mode and `rl.enabled` move together), checked (RL is
//! not switched on while settings it needs are missing), validated, written to config.yaml
//! atomically and applied to the running core (`LiveConfig`, then `Event::ConfigChanged`).

use std::sync::Arc;

use metaclaw_config::{Config, Mode};
use serde::Serialize;
use serde_json::{Value, json};

use crate::api::{ApiError, ErrorCode, FieldError};
use crate::live::LiveConfig;

pub use metaclaw_rl::readiness::Missing;

/// Whether RL can run with a configuration, and if not, why.
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

    /// The key to set for each missing setting (the first of its names; the others are the
    /// Python MetaClaw's legacy names).
    pub fn keys(&self) -> Vec<String> {
        self.missing
            .iter()
            .filter_map(|m| m.keys.first().map(|k| (*k).to_owned()))
            .collect()
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

/// What RL still needs (the same list the status shows). A missing judge is not on it:
/// rated turns reward too, so it is a warning.
pub fn rl_readiness(config: &Config) -> RlReadiness {
    RlReadiness {
        missing: metaclaw_rl::readiness::missing(config),
        warnings: metaclaw_rl::readiness::warnings(config),
    }
}

/// A change that was applied.
#[derive(Debug, Clone)]
pub struct Applied {
    pub config: Arc<Config>,
    /// Changed keys the running core only picks up after a restart.
    pub restart_keys: Vec<String>,
    /// Advice about RL with the new settings (e.g. no judge: only rated turns train).
    pub warnings: Vec<String>,
    /// What validation says about the file (unknown keys, keys this version ignores).
    pub config_warnings: Vec<String>,
}

/// Keys the running core only picks up after a restart. Every other key is applied live:
/// read where it is used, or applied on `Event::ConfigChanged` (the proxy swaps its upstream,
/// the evolver its endpoint, the skill library its switch, folder and retrieval settings, the
/// scheduler its sources, and the RL service restarts in the background when its settings
/// changed). Only where the daemon listens waits: moving the listener would cut off the
/// dashboard and every wired agent in the middle of a change.
const RESTART_KEYS: &[&str] = &["proxy.host", "proxy.port"];

/// Whether a change to `key` applies to the running core without a restart.
pub fn is_live(key: &str) -> bool {
    !RESTART_KEYS.contains(&key)
}

/// Why each missing setting is needed, per key (legacy key names left out: the dashboard
/// shows the current names).
pub fn missing_fields(readiness: &RlReadiness) -> Vec<FieldError> {
    readiness
        .missing
        .iter()
        .flat_map(|m| {
            m.keys
                .iter()
                .filter(|k| !crate::setting_fields::HIDDEN.iter().any(|(h, _)| h == *k))
                .map(move |k| FieldError {
                    key: (*k).to_owned(),
                    message: format!("needed for RL: {}. {}", m.what, m.hint),
                })
        })
        .collect()
}

/// Apply `changes` (dotted key, value) to the running core and config.yaml. Nothing changes
/// when any value is invalid or RL would be switched on without what it needs.
pub fn apply(live: &LiveConfig, changes: Vec<(String, Value)>) -> Result<Applied, ApiError> {
    if changes.is_empty() {
        return Err(ApiError::bad_request("nothing to change"));
    }
    let current = live.get();
    let changes = normalise(&current, changes);
    let pairs: Vec<(&str, Value)> = changes
        .iter()
        .map(|(k, v)| (k.as_str(), v.clone()))
        .collect();
    let candidate = live.preview(&pairs)?;
    if candidate.mode.is_rl() && !current.mode.is_rl() {
        let readiness = rl_readiness(&candidate);
        if !readiness.is_ready() {
            return Err(ApiError::new(ErrorCode::NotReady, readiness.to_string())
                .with_keys(readiness.keys())
                .with_fields(missing_fields(&readiness)));
        }
    }
    let (config, config_warnings) = live.update(&pairs)?;
    let warnings = if config.mode.is_rl() {
        rl_readiness(&config).warnings
    } else {
        Vec::new()
    };
    let mut restart_keys: Vec<String> = changes
        .into_iter()
        .map(|(k, _)| k)
        .filter(|k| !is_live(k))
        .collect();
    restart_keys.dedup();
    Ok(Applied {
        config,
        restart_keys,
        warnings,
        config_warnings: config_warnings.iter().map(ToString::to_string).collect(),
    })
}

/// The mode and `rl.enabled` say the same thing ("RL is on"), so a change to one moves the
/// other: a training mode turns RL on; turning RL on leaves skills_only for rl, and turning it
/// off returns to skills_only.
fn normalise(current: &Config, mut changes: Vec<(String, Value)>) -> Vec<(String, Value)> {
    let has = |changes: &[(String, Value)], key: &str| changes.iter().any(|(k, _)| k == key);
    let value = |changes: &[(String, Value)], key: &str| {
        changes
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    };
    match (has(&changes, "mode"), has(&changes, "rl.enabled")) {
        (true, false) => {
            if let Some(mode) =
                value(&changes, "mode").and_then(|v| serde_json::from_value::<Mode>(v).ok())
            {
                changes.push(("rl.enabled".into(), json!(mode.is_rl())));
            }
        }
        (false, true) => {
            if let Some(on) = value(&changes, "rl.enabled").and_then(|v| v.as_bool()) {
                let mode = match (on, current.mode) {
                    (true, Mode::SkillsOnly) => Mode::Rl,
                    (true, other) => other,
                    (false, _) => Mode::SkillsOnly,
                };
                changes.push(("mode".into(), json!(mode)));
            }
        }
        _ => {}
    }
    changes
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

    fn keys(changes: &[(String, Value)]) -> Vec<(&str, Value)> {
        changes
            .iter()
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect()
    }

    #[test]
    fn mode_and_rl_enabled_move_together() {
        let c = Config::default();
        let out = normalise(&c, vec![("mode".into(), json!("auto"))]);
        assert_eq!(
            keys(&out),
            [("mode", json!("auto")), ("rl.enabled", json!(true))]
        );
        let out = normalise(&c, vec![("rl.enabled".into(), json!(true))]);
        assert_eq!(
            keys(&out),
            [("rl.enabled", json!(true)), ("mode", json!("rl"))]
        );
        let auto = Config {
            mode: Mode::Auto,
            ..Config::default()
        };
        let out = normalise(&auto, vec![("rl.enabled".into(), json!(true))]);
        assert_eq!(out[1].1, json!("auto"));
        let out = normalise(&auto, vec![("rl.enabled".into(), json!(false))]);
        assert_eq!(out[1].1, json!("skills_only"));
        // Both given: taken as they are.
        let both = vec![
            ("mode".into(), json!("rl")),
            ("rl.enabled".into(), json!(true)),
        ];
        assert_eq!(normalise(&c, both.clone()), both);
    }

    fn live_with(config: Config) -> (tempfile::TempDir, Arc<LiveConfig>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yaml");
        std::fs::write(&path, "mode: skills_only\n").unwrap();
        let (events, _) = tokio::sync::broadcast::channel(4);
        (dir, LiveConfig::new(config, path, events))
    }

    #[test]
    fn rl_is_not_switched_on_while_settings_are_missing() {
        let (dir, live) = live_with(Config::default());
        let err = apply(&live, vec![("mode".into(), json!("rl"))]).unwrap_err();
        assert_eq!(err.code, ErrorCode::NotReady);
        assert!(err.keys.contains(&"rl.model".to_owned()), "{:?}", err.keys);
        let model = err.fields.iter().find(|f| f.key == "rl.model").unwrap();
        assert!(model.message.contains("base model"), "{}", model.message);
        assert!(err.fields.iter().any(|f| f.key == "rl.api_key"));
        assert!(err.fields.iter().all(|f| f.key != "rl.tinker_api_key"));
        assert_eq!(live.get().mode, Mode::SkillsOnly);
        let file = std::fs::read_to_string(dir.path().join("config.yaml")).unwrap();
        assert_eq!(file, "mode: skills_only\n", "nothing written");

        let (dir, live) = live_with(ready_config());
        let applied = apply(&live, vec![("rl.enabled".into(), json!(true))]).unwrap();
        assert_eq!(applied.config.mode, Mode::Rl);
        assert!(applied.restart_keys.is_empty());
        let file = std::fs::read_to_string(dir.path().join("config.yaml")).unwrap();
        assert!(file.contains("mode: rl"), "{file}");
    }

    #[test]
    fn invalid_values_change_nothing_and_name_the_key() {
        let (_dir, live) = live_with(Config::default());
        let err = apply(
            &live,
            vec![
                ("learning_paused".into(), json!(true)),
                ("proxy.port".into(), json!("many")),
            ],
        )
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidSetting);
        assert_eq!(err.keys, ["proxy.port"]);
        assert!(!live.get().learning_paused);
    }
}
