//! Provider presets: the upstreams `metaclaw setup` and the dashboard's onboarding offer, and
//! the settings a chosen endpoint becomes. Both front ends use this one list and
//! [`endpoint_changes`], so they save an endpoint the same way.

use serde_json::{Value, json};

use crate::choices::{AuthMethod, LlmProvider};

/// One choice of upstream: where it is, the model to start with, whether it needs a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preset {
    /// Stable id (`ollama`), also accepted by `metaclaw setup --provider`.
    pub name: &'static str,
    pub label: &'static str,
    /// The `llm.provider` value saved for it (local servers are OpenAI-compatible: `custom`).
    pub provider: LlmProvider,
    /// Empty for `custom`: the user types it.
    pub api_base: &'static str,
    /// A suggestion; the endpoint's own model list wins when it answers.
    pub model: &'static str,
    /// Cloud providers refuse requests without an API key; local servers need none.
    pub needs_key: bool,
    /// A server on this machine (Ollama, vLLM, LM Studio).
    pub local: bool,
}

const fn cloud(
    name: &'static str,
    label: &'static str,
    provider: LlmProvider,
    api_base: &'static str,
    model: &'static str,
) -> Preset {
    Preset {
        name,
        label,
        provider,
        api_base,
        model,
        needs_key: true,
        local: false,
    }
}

const fn local(name: &'static str, label: &'static str, api_base: &'static str) -> Preset {
    Preset {
        name,
        label,
        provider: LlmProvider::Custom,
        api_base,
        model: "",
        needs_key: false,
        local: true,
    }
}

/// Every preset, in the order they are offered.
pub const PRESETS: &[Preset] = &[
    cloud(
        "kimi",
        "Kimi (Moonshot)",
        LlmProvider::Kimi,
        "https://api.moonshot.cn/v1",
        "moonshotai/Kimi-K2.5",
    ),
    cloud(
        "qwen",
        "Qwen (DashScope)",
        LlmProvider::Qwen,
        "https://dashscope.aliyuncs.com/compatible-mode/v1",
        "qwen-plus",
    ),
    cloud(
        "openai",
        "OpenAI",
        LlmProvider::Openai,
        "https://api.openai.com/v1",
        "gpt-4o",
    ),
    cloud(
        "openrouter",
        "OpenRouter",
        LlmProvider::Openrouter,
        "https://openrouter.ai/api/v1",
        "moonshotai/kimi-k2.5",
    ),
    cloud(
        "anthropic",
        "Anthropic (Messages API)",
        LlmProvider::Anthropic,
        "https://api.anthropic.com",
        "claude-sonnet-4-6",
    ),
    local("ollama", "Ollama (local)", "http://127.0.0.1:11434/v1"),
    local("vllm", "vLLM (local)", "http://127.0.0.1:8000/v1"),
    local("lmstudio", "LM Studio (local)", "http://127.0.0.1:1234/v1"),
    Preset {
        name: "custom",
        label: "Custom OpenAI-compatible endpoint",
        provider: LlmProvider::Custom,
        api_base: "",
        model: "",
        // Some self-hosted servers want one, most do not: the user decides.
        needs_key: false,
        local: false,
    },
];

/// The preset called `name` (case-insensitive).
pub fn find(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name.eq_ignore_ascii_case(name))
}

/// The preset a stored endpoint came from: the one with this provider and base URL, else the
/// one named like the provider, else `custom` (a local server saved as `custom` is found by
/// its URL).
pub fn matching(provider: LlmProvider, api_base: &str) -> &'static Preset {
    let base = api_base.trim().trim_end_matches('/');
    PRESETS
        .iter()
        .find(|p| p.provider == provider && !p.api_base.is_empty() && p.api_base == base)
        .or_else(|| find(provider.as_str()))
        .or_else(|| find("custom"))
        .unwrap_or(&PRESETS[PRESETS.len() - 1])
}

/// The preset names, for error messages.
pub fn names() -> Vec<&'static str> {
    PRESETS.iter().map(|p| p.name).collect()
}

/// The dotted keys and values that make `api_base` (with `model`) the upstream. `api_key`
/// `None` keeps the stored key; `Some("")` stores none.
pub fn endpoint_changes(
    provider: LlmProvider,
    api_base: &str,
    model: &str,
    api_key: Option<&str>,
) -> Vec<(String, Value)> {
    let mut changes = vec![
        ("llm.provider".to_owned(), json!(provider.as_str())),
        ("llm.api_base".to_owned(), json!(api_base.trim())),
        ("llm.model_id".to_owned(), json!(model.trim())),
    ];
    if let Some(key) = api_key {
        changes.push(("llm.api_key".to_owned(), json!(key.trim())));
    }
    changes
}

/// The key a "use my agent's own sign-in" answer writes (onboarding and `metaclaw setup`).
pub fn sign_in_change(method: AuthMethod) -> (String, Value) {
    ("llm.auth_method".to_owned(), json!(method.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found_in_any_case() {
        let mut names = names();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), PRESETS.len());
        assert_eq!(
            find("OLLAMA").map(|p| p.api_base),
            Some("http://127.0.0.1:11434/v1")
        );
        assert!(find("gemini").is_none());
    }

    #[test]
    fn every_preset_but_custom_has_an_http_base() {
        for p in PRESETS {
            if p.name == "custom" {
                assert!(p.api_base.is_empty());
            } else {
                assert!(p.api_base.starts_with("http"), "{}", p.name);
            }
            assert_eq!(
                p.local,
                p.api_base.starts_with("http://127.0.0.1"),
                "{}",
                p.name
            );
            assert!(!(p.local && p.needs_key), "{}", p.name);
        }
    }

    #[test]
    fn a_stored_endpoint_finds_its_preset() {
        let name = |p: LlmProvider, b: &str| matching(p, b).name;
        assert_eq!(
            name(LlmProvider::Custom, "http://127.0.0.1:1234/v1/"),
            "lmstudio"
        );
        assert_eq!(
            name(LlmProvider::Custom, "http://gpu-box:9000/v1"),
            "custom"
        );
        assert_eq!(
            name(LlmProvider::Openai, "https://proxy.example/v1"),
            "openai"
        );
        // A provider without a preset of its own.
        assert_eq!(name(LlmProvider::Minimax, ""), "custom");
    }

    #[test]
    fn endpoint_changes_keep_the_key_unless_given() {
        let keys = |c: Vec<(String, Value)>| c.into_iter().map(|(k, _)| k).collect::<Vec<_>>();
        assert_eq!(
            keys(endpoint_changes(
                LlmProvider::Custom,
                "http://h/v1",
                "m",
                None
            )),
            ["llm.provider", "llm.api_base", "llm.model_id"]
        );
        let with_key = endpoint_changes(LlmProvider::Anthropic, " http://h ", "m", Some("k"));
        assert_eq!(with_key[0].1, json!("anthropic"));
        assert_eq!(with_key[1].1, json!("http://h"));
        assert_eq!(with_key[3], ("llm.api_key".to_owned(), json!("k")));
    }
}
