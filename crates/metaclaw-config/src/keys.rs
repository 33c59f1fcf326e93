//! Static knowledge about config keys: what this version reads (and what each
//! key accepts), and what the Python MetaClaw reads but this version ignores.

use serde_json::Value;

use crate::choices::{
    AuthMethod, ClawType, LlmProvider, LossFn, Mode, Placement, ResponsesApi, RetrievalMode,
    RewardCombine, WireFormat,
};

/// What a key holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    Section,
    Bool,
    Str,
    Int,
    Float,
    /// A list of strings (a single string is taken as a one-item list).
    StrList,
    Choice(&'static [&'static str]),
}

/// One key this version reads.
#[derive(Debug)]
pub struct KeySpec {
    pub key: &'static str,
    pub kind: Kind,
    /// Human description for error messages; unused for `Choice`.
    expected: &'static str,
}

impl KeySpec {
    /// What the key accepts, in words (the text of an "invalid value" error).
    pub fn expected(&self) -> &'static str {
        self.expected
    }

    /// Parenthetical part of an "invalid value" error.
    pub fn allowed(&self) -> String {
        match self.kind {
            Kind::Choice(names) => format!("allowed: {}", names.join(", ")),
            _ => format!("expected {}", self.expected),
        }
    }
}

const fn key(key: &'static str, kind: Kind, expected: &'static str) -> KeySpec {
    KeySpec {
        key,
        kind,
        expected,
    }
}

const SECTION: &str = "a mapping";
const BOOL: &str = "true or false";
const STR: &str = "a string";
const URL: &str = "an http:// or https:// URL, or empty";
const UINT: &str = "a non-negative integer";
const POSITIVE: &str = "an integer >= 1";
const CHOICE: &str = "";

/// Every key this version reads. Kept in step with `Config` by a unit test.
pub(crate) const KEYS: &[KeySpec] = &[
    key("mode", Kind::Choice(Mode::NAMES), CHOICE),
    key("openclaw_env_data_dir", Kind::Str, STR),
    key("openclaw_env_split", Kind::Str, STR),
    key("openclaw_env_concurrency", Kind::Int, POSITIVE),
    key("openclaw_env_max_steps", Kind::Int, POSITIVE),
    key("openclaw_env_allow_commands", Kind::Bool, BOOL),
    key("llm", Kind::Section, SECTION),
    key("llm.provider", Kind::Choice(LlmProvider::NAMES), CHOICE),
    key("llm.model_id", Kind::Str, STR),
    key("llm.api_base", Kind::Str, URL),
    key("llm.api_key", Kind::Str, STR),
    key("llm.timeout_seconds", Kind::Int, POSITIVE),
    key(
        "llm.responses_api",
        Kind::Choice(ResponsesApi::NAMES),
        CHOICE,
    ),
    key("llm.auth_method", Kind::Choice(AuthMethod::NAMES), CHOICE),
    key("llm.oauth_token", Kind::Str, STR),
    key("proxy", Kind::Section, SECTION),
    key("proxy.host", Kind::Str, "an IP address or hostname"),
    key("proxy.port", Kind::Int, "an integer 1-65535"),
    key("proxy.api_key", Kind::Str, STR),
    key("proxy.max_body_bytes", Kind::Int, "an integer >= 1024"),
    key("skills", Kind::Section, SECTION),
    key("skills.enabled", Kind::Bool, BOOL),
    key("skills.dir", Kind::Str, STR),
    key(
        "skills.retrieval_mode",
        Kind::Choice(RetrievalMode::NAMES),
        CHOICE,
    ),
    key("skills.top_k", Kind::Int, POSITIVE),
    key("skills.task_specific_top_k", Kind::Int, UINT),
    key("skills.auto_evolve", Kind::Bool, BOOL),
    key("skills.evolution_every_n_turns", Kind::Int, UINT),
    key("skills.auto_approve", Kind::Bool, BOOL),
    key("skills.include_bundled", Kind::Bool, BOOL),
    key("skills.min_score", Kind::Float, "a finite number >= 0"),
    key(
        "skills.relative_threshold",
        Kind::Float,
        "a number between 0 and 1",
    ),
    key(
        "skills.min_similarity",
        Kind::Float,
        "a number between -1 and 1",
    ),
    key("skills.token_budget", Kind::Int, UINT),
    key(
        "skills.holdout_share",
        Kind::Float,
        "a number between 0 and 0.5",
    ),
    key("skills.evidence_min_turns", Kind::Int, POSITIVE),
    key("skills.placement", Kind::Choice(Placement::NAMES), CHOICE),
    key("skills.embedding", Kind::Section, SECTION),
    key("skills.embedding.api_base", Kind::Str, URL),
    key("skills.embedding.api_key", Kind::Str, STR),
    key("skills.embedding.model", Kind::Str, STR),
    key("skills.embedding.timeout_ms", Kind::Int, POSITIVE),
    key("rl", Kind::Section, SECTION),
    key("rl.enabled", Kind::Bool, BOOL),
    key("rl.model", Kind::Str, STR),
    key("rl.base_url", Kind::Str, URL),
    key("rl.api_key", Kind::Str, STR),
    key("rl.tinker_api_key", Kind::Str, STR),
    key("rl.tinker_base_url", Kind::Str, URL),
    key("rl.prm_url", Kind::Str, URL),
    key("rl.prm_model", Kind::Str, STR),
    key("rl.prm_api_key", Kind::Str, STR),
    key("rl.lora_rank", Kind::Int, POSITIVE),
    key("rl.gate_split", Kind::Str, STR),
    key("rl.gate_tolerance", Kind::Float, "a number between 0 and 1"),
    key(
        "rl.reward_combine",
        Kind::Choice(RewardCombine::NAMES),
        CHOICE,
    ),
    key("rl.thumbs_weight", Kind::Float, "a number between 0 and 1"),
    key(
        "rl.correction_weight",
        Kind::Float,
        "a number between 0 and 1",
    ),
    key("rl.retry_weight", Kind::Float, "a number between 0 and 1"),
    key(
        "rl.tool_error_weight",
        Kind::Float,
        "a number between 0 and 1",
    ),
    key("rl.batch_size", Kind::Int, POSITIVE),
    key("rl.resume_from_ckpt", Kind::Str, STR),
    key("rl.evolver_api_base", Kind::Str, URL),
    key("rl.evolver_api_key", Kind::Str, STR),
    key("rl.evolver_model", Kind::Str, STR),
    key("rl.manual_train_trigger", Kind::Bool, BOOL),
    key("rl.loss_fn", Kind::Choice(LossFn::NAMES), CHOICE),
    key("rl.learning_rate", Kind::Float, "a number > 0"),
    key("rl.group_size", Kind::Int, POSITIVE),
    key("rl.prm_m", Kind::Int, POSITIVE),
    key("rl.prm_temperature", Kind::Float, "a number >= 0"),
    key("rl.prm_max_new_tokens", Kind::Int, POSITIVE),
    key("rl.renderer_name", Kind::Str, STR),
    key("rl.tokenizer_path", Kind::Str, STR),
    key("rl.tokenizer_hub_url", Kind::Str, URL),
    key("rl.wire_format", Kind::Choice(WireFormat::NAMES), CHOICE),
    key("rl.checkpoint_every", Kind::Int, POSITIVE),
    key("rl.save_weights_timeout_s", Kind::Int, POSITIVE),
    key("rl.temperature", Kind::Float, "a number >= 0"),
    key("rl.max_new_tokens", Kind::Int, POSITIVE),
    key("opd", Kind::Section, SECTION),
    key("opd.enabled", Kind::Bool, BOOL),
    key("opd.teacher_url", Kind::Str, URL),
    key("opd.teacher_model", Kind::Str, STR),
    key("opd.teacher_api_key", Kind::Str, STR),
    key("opd.kl_penalty_coef", Kind::Float, "a finite number >= 0"),
    key("scheduler", Kind::Section, SECTION),
    key("scheduler.enabled", Kind::Bool, BOOL),
    key("scheduler.idle_threshold_minutes", Kind::Int, UINT),
    key(
        "scheduler.sleep_start",
        Kind::Str,
        "a time HH:MM (00:00-23:59)",
    ),
    key(
        "scheduler.sleep_end",
        Kind::Str,
        "a time HH:MM (00:00-23:59)",
    ),
    key("scheduler.min_window_minutes", Kind::Int, UINT),
    key("scheduler.sleep_enabled", Kind::Bool, BOOL),
    key("scheduler.idle_enabled", Kind::Bool, BOOL),
    key("scheduler.poll_seconds", Kind::Int, POSITIVE),
    key("scheduler.calendar", Kind::Section, SECTION),
    key("scheduler.calendar.enabled", Kind::Bool, BOOL),
    key(
        "scheduler.calendar.paths",
        Kind::StrList,
        "a list of .ics files or folders",
    ),
    key(
        "scheduler.calendar.urls",
        Kind::StrList,
        "a list of http(s) .ics addresses",
    ),
    key("scheduler.calendar.user_email", Kind::Str, STR),
    key("scheduler.calendar.include_all_day", Kind::Bool, BOOL),
    key("scheduler.calendar.refresh_minutes", Kind::Int, POSITIVE),
    key("session", Kind::Section, SECTION),
    key(
        "session.idle_timeout",
        Kind::Int,
        "a number of seconds (integer)",
    ),
    key("records", Kind::Section, SECTION),
    key(
        "records.retention_days",
        Kind::Int,
        "a number of days (0 = keep forever)",
    ),
    key("max_context_tokens", Kind::Int, UINT),
    key("context_window", Kind::Int, UINT),
    key("claw_type", Kind::Choice(ClawType::NAMES), CHOICE),
    key("configure_openclaw", Kind::Bool, BOOL),
    key("learning_paused", Kind::Bool, BOOL),
    key("agents", Kind::Section, SECTION),
];

/// The keys of one agent, `agents.<name>.<field>`, with `*` for the name (the names are the
/// user's, so they cannot be listed in [`KEYS`]).
const AGENT_KEYS: &[KeySpec] = &[
    key("agents.*", Kind::Section, SECTION),
    key("agents.*.api_key", Kind::Str, STR),
    key("agents.*.skills_dir", Kind::Str, STR),
    key("agents.*.skills", Kind::Bool, BOOL),
    key("agents.*.learning", Kind::Bool, BOOL),
    key("agents.*.train_shared_policy", Kind::Bool, BOOL),
];

/// The per-agent keys, with `*` in place of the agent's name.
pub fn agent_keys() -> &'static [KeySpec] {
    AGENT_KEYS
}

/// Every key this version reads, sections included (the settings catalogue checks itself
/// against this list).
pub fn known_keys() -> &'static [KeySpec] {
    KEYS
}

pub(crate) fn spec(dotted: &str) -> Option<&'static KeySpec> {
    if let Some(rest) = dotted.strip_prefix("agents.") {
        let pattern = match rest.split_once('.') {
            Some((_, field)) => format!("agents.*.{field}"),
            None => "agents.*".to_owned(),
        };
        return AGENT_KEYS.iter().find(|k| k.key == pattern);
    }
    KEYS.iter().find(|k| k.key == dotted)
}

const MEMORY: &str = "the memory layer is not implemented";
const TRAINING: &str = "training settings live under `rl:` (rl.learning_rate, rl.loss_fn, ...)";
const PRM_SAMPLING: &str = "PRM settings live under `rl:` (rl.prm_m, rl.prm_temperature, ...)";
const PROVIDER: &str = "only OpenAI-compatible endpoints are supported";
const SYNERGY: &str = "memory/skill synergy is not implemented";

/// Upstream keys this version deliberately ignores. An entry matches the key
/// itself and everything below it.
const IGNORED_SUBTREES: &[(&str, &str)] = &[
    ("memory", MEMORY),
    ("wechat", "WeChat integration is not supported"),
    (
        "openrouter",
        "OpenRouter routing options are not supported; set llm.api_base",
    ),
    ("llm.bedrock_region", "AWS Bedrock is not supported"),
    (
        "scheduler.calendar.credentials_path",
        "Google Calendar OAuth is not supported; use scheduler.calendar.urls (the calendar's iCal address) or paths",
    ),
    (
        "scheduler.calendar.token_path",
        "Google Calendar OAuth is not supported; use scheduler.calendar.urls (the calendar's iCal address) or paths",
    ),
    ("rl.backend", "only the Tinker backend is supported"),
];

/// Upstream dataclass fields that have no YAML key at HEAD but may appear in
/// hand-written or older files, either at the top level or in a section.
const DATACLASS_ONLY: &[(&str, &str)] = &[
    ("renderer_name", "the renderer is chosen by the trainer"),
    ("learning_rate", TRAINING),
    ("max_steps", TRAINING),
    ("loss_fn", TRAINING),
    ("save_weights_timeout_s", TRAINING),
    ("prm_provider", PROVIDER),
    ("evolver_provider", PROVIDER),
    ("bedrock_region", "AWS Bedrock is not supported"),
    ("prm_m", PRM_SAMPLING),
    ("prm_temperature", PRM_SAMPLING),
    ("prm_max_new_tokens", PRM_SAMPLING),
    ("use_opd", "use opd.enabled"),
    (
        "embedding_model_path",
        "local embedding models are not configurable in this version",
    ),
    (
        "skill_update_threshold",
        "skill evolution limits are fixed in this version",
    ),
    (
        "max_new_skills",
        "skill evolution limits are fixed in this version",
    ),
    ("memory_flush_every", MEMORY),
    ("synergy_enabled", SYNERGY),
    ("synergy_token_budget", SYNERGY),
    ("synergy_skill_ratio", SYNERGY),
    ("synergy_dedup_threshold", SYNERGY),
    ("tinker_sampling_url", "unused upstream as well"),
    (
        "record_enabled",
        "conversations are always recorded in the MetaClaw database",
    ),
    (
        "record_dir",
        "conversations are recorded in the MetaClaw database",
    ),
];

/// Sections under which dataclass-only names are tolerated.
const SECTIONS_FOR_DATACLASS_KEYS: &[&str] = &["llm", "proxy", "skills", "rl", "opd"];

/// Why this version ignores an upstream key, or `None` if the key is not known upstream.
pub(crate) fn ignored_reason(dotted: &str) -> Option<&'static str> {
    // Upstream dataclass fields that this version reads under `rl:` are real keys there.
    if spec(dotted).is_some() {
        return None;
    }
    let subtree = IGNORED_SUBTREES.iter().find(|(prefix, _)| {
        dotted == *prefix
            || dotted
                .strip_prefix(prefix)
                .is_some_and(|rest| rest.starts_with('.'))
    });
    if let Some((_, reason)) = subtree {
        return Some(reason);
    }
    let (parent, name) = match dotted.rsplit_once('.') {
        Some((parent, name)) => (Some(parent), name),
        None => (None, dotted),
    };
    if parent.is_some_and(|p| !SECTIONS_FOR_DATACLASS_KEYS.contains(&p)) {
        return None;
    }
    DATACLASS_ONLY
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, reason)| *reason)
}

/// Prepare a copy of the document for typed deserialization: a null at a key
/// we read means "use the default" (hand-written `api_key:`), and scalars of an
/// obviously convertible type are converted (`port: "31000"`, `model_id: 4`).
pub(crate) fn normalize(root: &mut Value) {
    normalize_at(root, "");
}

fn normalize_at(value: &mut Value, prefix: &str) {
    let Value::Object(map) = value else { return };
    map.retain(|k, v| !(v.is_null() && spec(&join(prefix, k)).is_some()));
    for (k, v) in map.iter_mut() {
        let dotted = join(prefix, k);
        let Some(spec) = spec(&dotted) else { continue };
        match spec.kind {
            Kind::Section => normalize_at(v, &dotted),
            kind => coerce_scalar(v, kind),
        }
    }
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_owned()
    } else {
        format!("{prefix}.{key}")
    }
}

fn coerce_scalar(value: &mut Value, kind: Kind) {
    let replacement = match (kind, &*value) {
        (Kind::Str, Value::Number(n)) => Value::String(n.to_string()),
        (Kind::Str, Value::Bool(b)) => Value::String(b.to_string()),
        (Kind::StrList, Value::String(s)) => Value::Array(vec![Value::String(s.clone())]),
        (Kind::Bool, Value::String(s)) if s.eq_ignore_ascii_case("true") => Value::Bool(true),
        (Kind::Bool, Value::String(s)) if s.eq_ignore_ascii_case("false") => Value::Bool(false),
        (Kind::Int, Value::String(s)) => match s.trim().parse::<i64>() {
            Ok(n) => Value::from(n),
            Err(_) => return,
        },
        (Kind::Float, Value::String(s)) => match s.trim().parse::<f64>() {
            Ok(f) if f.is_finite() => Value::from(f),
            _ => return,
        },
        _ => return,
    };
    *value = replacement;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn leaf_keys(value: &Value, prefix: &str, out: &mut Vec<String>) {
        if let Value::Object(map) = value {
            for (k, v) in map {
                let dotted = join(prefix, k);
                out.push(dotted.clone());
                leaf_keys(v, &dotted, out);
            }
        }
    }

    #[test]
    fn key_table_matches_config_struct() {
        let mut from_struct = Vec::new();
        leaf_keys(
            &serde_json::to_value(Config::default()).unwrap(),
            "",
            &mut from_struct,
        );
        let mut from_table: Vec<String> = KEYS.iter().map(|k| k.key.to_owned()).collect();
        from_struct.sort();
        from_table.sort();
        assert_eq!(from_struct, from_table);
    }

    #[test]
    fn no_key_is_both_read_and_ignored() {
        for k in KEYS {
            assert_eq!(ignored_reason(k.key), None, "{}", k.key);
        }
    }

    #[test]
    fn ignored_reason_matching() {
        assert_eq!(ignored_reason("memory"), Some(MEMORY));
        assert_eq!(ignored_reason("memory.enabled"), Some(MEMORY));
        assert_eq!(ignored_reason("memoryx"), None);
        assert!(ignored_reason("scheduler.calendar.token_path").is_some());
        assert_eq!(ignored_reason("rl.renderer_name"), None);
        assert!(ignored_reason("opd.renderer_name").is_some());
        assert!(ignored_reason("renderer_name").is_some());
        assert!(ignored_reason("rl.prm_provider").is_some());
        assert_eq!(ignored_reason("scheduler.renderer_name"), None);
        assert_eq!(ignored_reason("foo.bar"), None);
    }

    #[test]
    fn normalize_drops_known_nulls_and_coerces_scalars() {
        let mut v = serde_json::json!({
            "llm": {"api_key": null, "model_id": 4},
            "proxy": {"port": "31000"},
            "opd": null,
            "skills": {"enabled": "TRUE"},
            "unknown": null,
        });
        normalize(&mut v);
        assert_eq!(
            v,
            serde_json::json!({
                "llm": {"model_id": "4"},
                "proxy": {"port": 31000},
                "skills": {"enabled": true},
                "unknown": null,
            })
        );
    }
}
