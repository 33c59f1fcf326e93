//! The closed sets of values some config keys accept.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::ConfigError;

/// One enum per closed-choice key; the YAML spelling is the single source for
/// serde, `as_str`, `NAMES` (used in error messages) and `FromStr`.
macro_rules! choice {
    (
        $(#[$meta:meta])*
        $name:ident for $key:literal {
            $( $(#[$vmeta:meta])* $variant:ident = $text:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema)]
        pub enum $name {
            $( $(#[$vmeta])* #[serde(rename = $text)] $variant, )+
        }

        impl $name {
            /// The dotted config key holding this choice.
            pub const KEY: &'static str = $key;
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// YAML spellings, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$($text),+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = ConfigError;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                $name::ALL
                    .iter()
                    .copied()
                    .find(|v| v.as_str() == s)
                    .or_else(|| $name::legacy(s))
                    .ok_or_else(|| ConfigError::InvalidValue {
                        key: $key.to_owned(),
                        value: serde_json::Value::from(s).to_string(),
                        allowed: format!("allowed: {}", $name::NAMES.join(", ")),
                    })
            }
        }
    };
}

choice! {
    /// How the daemon serves and learns.
    Mode for "mode" {
        /// Proxy to the configured LLM, inject and evolve skills; no training.
        #[default]
        SkillsOnly = "skills_only",
        /// Serve from the LoRA policy and train continuously.
        Rl = "rl",
        /// Like `rl`, but training only runs in scheduler windows. v0.3 called it `madmax`.
        #[serde(alias = "madmax")]
        Auto = "auto",
    }
}

choice! {
    /// Upstream LLM provider preset.
    LlmProvider for "llm.provider" {
        Kimi = "kimi",
        Qwen = "qwen",
        Openai = "openai",
        Openrouter = "openrouter",
        Minimax = "minimax",
        Novita = "novita",
        Volcengine = "volcengine",
        Anthropic = "anthropic",
        #[default]
        Custom = "custom",
    }
}

choice! {
    /// Whether the upstream serves the OpenAI Responses API (`/v1/responses`).
    ResponsesApi for "llm.responses_api" {
        /// By provider: OpenAI has it, the others speak chat completions only.
        #[default]
        Auto = "auto",
        /// Forward Responses requests to the upstream unchanged.
        Native = "native",
        /// Translate Responses requests to chat completions and back.
        Translate = "translate",
    }
}

choice! {
    /// How skills are picked for injection.
    RetrievalMode for "skills.retrieval_mode" {
        #[default]
        Bm25 = "bm25",
        Template = "template",
        Embedding = "embedding",
    }
}

choice! {
    /// Which agent ("claw") MetaClaw wires itself into on start.
    ClawType for "claw_type" {
        #[default]
        Openclaw = "openclaw",
        Copaw = "copaw",
        Ironclaw = "ironclaw",
        Picoclaw = "picoclaw",
        Zeroclaw = "zeroclaw",
        Nanoclaw = "nanoclaw",
        Nemoclaw = "nemoclaw",
        Hermes = "hermes",
        ClaudeCode = "claude-code",
        Codex = "codex",
        QwenCode = "qwen-code",
        None = "none",
    }
}

choice! {
    /// Where injected skills go in the request.
    Placement for "skills.placement" {
        /// Beside the newest user turn, so the cached prefix stays byte-identical.
        #[default]
        User = "user",
        /// At the end of the system prompt (changes the prefix when the selection changes).
        System = "system",
    }
}

choice! {
    /// Whose credential the proxy sends upstream.
    AuthMethod for "llm.auth_method" {
        /// `llm.api_key`, the endpoint MetaClaw was set up with. The Python MetaClaw's
        /// `oauth_token` (its CLI subprocess providers) loads as this, with a warning.
        #[default]
        #[serde(alias = "oauth_token")]
        ApiKey = "api_key",
        /// The agent's own sign-in (e.g. a Claude subscription): forwarded untouched.
        Passthrough = "passthrough",
    }
}

choice! {
    /// The Tinker loss used for policy updates.
    LossFn for "rl.loss_fn" {
        #[default]
        ImportanceSampling = "importance_sampling",
        Ppo = "ppo",
        Cispo = "cispo",
    }
}

choice! {
    /// How forward_backward requests are encoded for the Tinker server.
    WireFormat for "rl.wire_format" {
        /// Protobuf for the Tinker cloud, JSON for other servers unless they ask for protobuf.
        #[default]
        Auto = "auto",
        Json = "json",
        Proto = "proto",
    }
}

choice! {
    /// How a task's verifier and the PRM judge make one reward when both scored a sample.
    RewardCombine for "rl.reward_combine" {
        /// The verifier decides; the judge's votes are stored beside it.
        #[default]
        Verifier = "verifier",
        /// The mean of both (the judge's -1..1 mapped to 0..1).
        Mean = "mean",
        /// The lower of both: an answer must satisfy the verifier and the judge.
        Min = "min",
    }
}

impl RewardCombine {
    fn legacy(_: &str) -> Option<Self> {
        None
    }
}

impl LossFn {
    fn legacy(_: &str) -> Option<Self> {
        None
    }
}

impl WireFormat {
    fn legacy(_: &str) -> Option<Self> {
        None
    }
}

impl Mode {
    fn legacy(s: &str) -> Option<Self> {
        (s == "madmax").then_some(Mode::Auto)
    }

    /// Whether this mode trains a policy (and therefore needs the RL settings).
    pub fn is_rl(self) -> bool {
        matches!(self, Mode::Rl | Mode::Auto)
    }
}

impl LlmProvider {
    fn legacy(_: &str) -> Option<Self> {
        None
    }
}

impl ResponsesApi {
    fn legacy(_: &str) -> Option<Self> {
        None
    }
}

impl RetrievalMode {
    fn legacy(_: &str) -> Option<Self> {
        None
    }
}

impl ClawType {
    fn legacy(_: &str) -> Option<Self> {
        None
    }
}

impl Placement {
    fn legacy(_: &str) -> Option<Self> {
        None
    }
}

impl AuthMethod {
    fn legacy(s: &str) -> Option<Self> {
        (s == "oauth_token").then_some(AuthMethod::ApiKey)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn serde_names<T: Serialize>(all: &[T]) -> Vec<String> {
        all.iter()
            .map(|v| {
                serde_json::to_value(v)
                    .unwrap()
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect()
    }

    #[test]
    fn serde_spelling_matches_names() {
        assert_eq!(serde_names(Mode::ALL), Mode::NAMES);
        assert_eq!(serde_names(LlmProvider::ALL), LlmProvider::NAMES);
        assert_eq!(serde_names(RetrievalMode::ALL), RetrievalMode::NAMES);
        assert_eq!(serde_names(ClawType::ALL), ClawType::NAMES);
    }

    #[test]
    fn from_str_accepts_names_and_legacy_madmax() {
        assert_eq!("rl".parse::<Mode>().unwrap(), Mode::Rl);
        assert_eq!("madmax".parse::<Mode>().unwrap(), Mode::Auto);
        assert_eq!("none".parse::<ClawType>().unwrap(), ClawType::None);
        let err = "gemini".parse::<LlmProvider>().unwrap_err().to_string();
        assert_eq!(
            err,
            "invalid value for `llm.provider`: \"gemini\" (allowed: kimi, qwen, openai, openrouter, minimax, novita, volcengine, anthropic, custom)"
        );
    }

    #[test]
    fn madmax_deserializes_as_auto() {
        let mode: Mode = serde_json::from_value(serde_json::json!("madmax")).unwrap();
        assert_eq!(mode, Mode::Auto);
        assert_eq!(serde_json::to_value(mode).unwrap(), "auto");
    }
}
