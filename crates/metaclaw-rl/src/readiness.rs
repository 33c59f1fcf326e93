//! Whether the settings allow RL, and what to set when they do not. Used by the daemon's
//! status, the dashboard and the tray's "Enable RL" toggle, so all of them explain the
//! same way.

use metaclaw_config::Config;
use serde::Serialize;

/// The Tinker cloud, used when no other server is configured.
pub const TINKER_CLOUD: &str = "https://tinker.thinkingmachines.dev/services/tinker-prod";

/// Where training runs and with which key, after the legacy keys and environment.
#[derive(Debug, Clone, PartialEq)]
pub struct Endpoint {
    pub base_url: String,
    pub api_key: String,
}

pub fn endpoint(c: &Config) -> Endpoint {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let first = |a: &str, b: &str, var: &str| {
        [a, b]
            .into_iter()
            .find(|s| !s.is_empty())
            .map(str::to_owned)
            .or_else(|| env(var))
    };
    Endpoint {
        base_url: first(&c.rl.base_url, &c.rl.tinker_base_url, "TINKER_BASE_URL")
            .unwrap_or_else(|| TINKER_CLOUD.to_owned()),
        api_key: first(&c.rl.api_key, &c.rl.tinker_api_key, "TINKER_API_KEY").unwrap_or_default(),
    }
}

/// The model to train: `rl.model`, else `llm.model_id`.
pub fn model(c: &Config) -> Option<String> {
    [&c.rl.model, &c.llm.model_id]
        .into_iter()
        .find(|s| !s.is_empty())
        .cloned()
}

/// Whether the PRM judge is configured.
pub fn judge_configured(c: &Config) -> bool {
    // The default OpenAI judge URL without a key is "not configured", not a broken judge.
    let keyless_default = c.rl.prm_api_key.is_empty() && c.rl.prm_url.contains("api.openai.com");
    !(c.rl.prm_url.is_empty() || c.rl.prm_model.is_empty() || keyless_default)
}

/// What rewards samples, in words for the status line.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum RewardSources {
    /// The judge scores every turn; feedback overrides it.
    JudgeAndFeedback,
    /// Only turns the user rates train.
    FeedbackOnly,
    /// The OPD teacher's signal trains every turn; ratings add to it.
    TeacherAndFeedback,
}

pub fn reward_sources(c: &Config) -> RewardSources {
    if judge_configured(c) {
        RewardSources::JudgeAndFeedback
    } else if c.opd.enabled {
        RewardSources::TeacherAndFeedback
    } else {
        RewardSources::FeedbackOnly
    }
}

/// One setting RL needs, with the keys that provide it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Missing {
    pub what: &'static str,
    pub keys: &'static [&'static str],
    pub hint: &'static str,
}

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({}): {}",
            self.what,
            self.keys.join(" or "),
            self.hint
        )
    }
}

/// Settings RL needs that are missing. Empty = RL can start. The daemon's status, the CLI
/// and the tray's "Enable RL" all explain with this one list.
pub fn missing(c: &Config) -> Vec<Missing> {
    let mut out = Vec::new();
    if model(c).is_none() {
        out.push(Missing {
            what: "the base model to train",
            keys: &["rl.model"],
            hint: "e.g. Qwen/Qwen3-4B-Instruct-2507",
        });
    }
    let ep = endpoint(c);
    if ep.base_url == TINKER_CLOUD && ep.api_key.is_empty() {
        out.push(Missing {
            what: "a Tinker API key",
            keys: &["rl.api_key", "rl.tinker_api_key"],
            hint: "a tml-… key, or rl.base_url for a Tinker-compatible server such as SkyRL",
        });
    }
    if c.opd.enabled && (c.opd.teacher_url.is_empty() || c.opd.teacher_model.is_empty()) {
        out.push(Missing {
            what: "the OPD teacher (OPD is on)",
            keys: &["opd.teacher_url", "opd.teacher_model"],
            hint: "the teacher's OpenAI-compatible /v1 URL and model, or turn OPD off",
        });
    }
    out
}

/// Advice that does not block RL.
pub fn warnings(c: &Config) -> Vec<String> {
    let mut out = Vec::new();
    if reward_sources(c) == RewardSources::FeedbackOnly {
        out.push(
            "no judge configured (rl.prm_url, rl.prm_model, rl.prm_api_key): only turns you \
             rate in the dashboard will train"
                .into(),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explains_what_is_missing() {
        let mut c = Config::default();
        c.llm.model_id.clear();
        c.rl.model.clear();
        let m = missing(&c);
        assert_eq!(m[0].keys, ["rl.model"]);
        assert!(
            m[1].to_string().contains("rl.api_key or rl.tinker_api_key"),
            "{}",
            m[1]
        );
        c.rl.model = "Qwen/Qwen3-4B".into();
        c.rl.base_url = "http://127.0.0.1:1".into();
        assert!(missing(&c).is_empty());
        c.opd.enabled = true;
        assert_eq!(
            missing(&c)[0].keys,
            ["opd.teacher_url", "opd.teacher_model"]
        );
        assert_eq!(reward_sources(&c), RewardSources::TeacherAndFeedback);
    }

    #[test]
    fn legacy_keys_select_the_server() {
        let mut c = Config::default();
        c.rl.tinker_base_url = "http://127.0.0.1:9".into();
        c.rl.tinker_api_key = "tml-x".into();
        assert_eq!(
            endpoint(&c),
            Endpoint {
                base_url: "http://127.0.0.1:9".into(),
                api_key: "tml-x".into()
            }
        );
        c.rl.base_url = "http://127.0.0.1:8".into();
        assert_eq!(endpoint(&c).base_url, "http://127.0.0.1:8");
    }

    #[test]
    fn default_openai_judge_needs_a_key() {
        let mut c = Config::default();
        assert!(!judge_configured(&c));
        assert_eq!(reward_sources(&c), RewardSources::FeedbackOnly);
        assert_eq!(warnings(&c).len(), 1);
        c.rl.prm_api_key = "sk-x".into();
        assert!(judge_configured(&c));
    }
}
