//! Turning a `Document` into a `Config`: type errors with the key, value and
//! what is allowed; warnings for unknown, ignored and deprecated keys; and the
//! semantic checks serde cannot express.

use std::net::IpAddr;

use serde_json::Value;

use crate::choices::{AuthMethod, Mode};
use crate::claw_list::ClawTypes;
use crate::config::Config;
use crate::document::Document;
use crate::error::ConfigError;
use crate::keys;
use crate::mask::{is_secret_key, mask_tree};
use crate::warning::ConfigWarning;

/// Validate a document; warnings are in document order, deprecations last.
pub fn validate(doc: &Document) -> Result<(Config, Vec<ConfigWarning>), ConfigError> {
    let mut working = doc.as_value().clone();
    keys::normalize(&mut working);

    let mut ignored: Vec<Vec<String>> = Vec::new();
    let mut on_ignored = |path: serde_ignored::Path<'_>| ignored.push(ignored_segments(&path));
    let deserializer = serde_ignored::Deserializer::new(&working, &mut on_ignored);
    let parsed: Result<Config, _> = serde_path_to_error::deserialize(deserializer);
    let mut config = parsed.map_err(|e| type_error(doc, &working, e))?;

    let mut warnings = Vec::new();
    for path in &ignored {
        if let Some(value) = lookup(&working, path) {
            collect_leaf_warnings(value, &path.join("."), &mut warnings);
        }
    }
    apply_legacy(doc, &mut config, &mut warnings);
    check_semantics(&config)?;
    Ok((config, warnings))
}

fn ignored_segments(path: &serde_ignored::Path<'_>) -> Vec<String> {
    use serde_ignored::Path;
    let mut out = match path {
        Path::Root => return Vec::new(),
        Path::Seq { parent, .. }
        | Path::Map { parent, .. }
        | Path::Some { parent }
        | Path::NewtypeStruct { parent }
        | Path::NewtypeVariant { parent } => ignored_segments(parent),
    };
    match path {
        Path::Seq { index, .. } => out.push(index.to_string()),
        Path::Map { key, .. } => out.push(key.clone()),
        _ => {}
    }
    out
}

fn lookup<'a>(root: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(root, |node, segment| match node {
        Value::Object(map) => map.get(segment),
        Value::Array(items) => items.get(segment.parse::<usize>().ok()?),
        _ => None,
    })
}

/// One warning per leaf (a scalar, a sequence or an empty mapping), never twice.
fn collect_leaf_warnings(value: &Value, dotted: &str, out: &mut Vec<ConfigWarning>) {
    if let Value::Object(map) = value
        && !map.is_empty()
    {
        for (k, v) in map {
            collect_leaf_warnings(v, &format!("{dotted}.{k}"), out);
        }
        return;
    }
    if out.iter().any(|w| w.key() == dotted) {
        return;
    }
    let key = dotted.to_owned();
    out.push(match keys::ignored_reason(dotted) {
        Some(reason) => ConfigWarning::IgnoredKey { key, reason },
        None => ConfigWarning::UnknownKey { key },
    });
}

fn type_error(
    doc: &Document,
    working: &Value,
    err: serde_path_to_error::Error<serde_json::Error>,
) -> ConfigError {
    let segments: Vec<String> = err
        .path()
        .iter()
        .filter_map(|s| match s {
            serde_path_to_error::Segment::Map { key } => Some(key.clone()),
            serde_path_to_error::Segment::Seq { index } => Some(index.to_string()),
            _ => None,
        })
        .collect();
    let key = if segments.is_empty() {
        "(root)".to_owned()
    } else {
        segments.join(".")
    };
    // Show what the user wrote, not the normalised copy.
    let value = doc
        .get(&key)
        .or_else(|| lookup(working, &segments))
        .map(|v| render_value(&key, v))
        .unwrap_or_else(|| "(missing)".to_owned());
    let allowed = keys::spec(&key)
        .map(|s| s.allowed())
        .unwrap_or_else(|| err.inner().to_string());
    ConfigError::InvalidValue {
        key,
        value,
        allowed,
    }
}

fn render_value(key: &str, value: &Value) -> String {
    let secret = key.split('.').any(is_secret_key);
    mask_tree(value, secret).to_string()
}

fn apply_legacy(doc: &Document, config: &mut Config, warnings: &mut Vec<ConfigWarning>) {
    if config.mode == Mode::Auto && doc.get("mode").and_then(Value::as_str) == Some("madmax") {
        warnings.push(ConfigWarning::Deprecated {
            key: "mode".to_owned(),
            message: "`madmax` is the old name of `auto`; write `mode: auto`".to_owned(),
        });
    }
    if doc.get("llm.auth_method").and_then(Value::as_str) == Some("oauth_token") {
        warnings.push(ConfigWarning::Deprecated {
            key: "llm.auth_method".to_owned(),
            message: "`oauth_token` (the Python MetaClaw's CLI providers) is not supported and \
                      counts as `api_key`; write `passthrough` to forward your agent's own sign-in"
                .to_owned(),
        });
    }
    if !config.configure_openclaw {
        config.claw_type = ClawTypes::none();
        warnings.push(ConfigWarning::Deprecated {
            key: "configure_openclaw".to_owned(),
            message:
                "`configure_openclaw: false` is treated as `claw_type: none`; write that instead"
                    .to_owned(),
        });
    }
}

fn check_semantics(c: &Config) -> Result<(), ConfigError> {
    let invalid = |key: &str, value: Value| {
        let allowed = keys::spec(key).map(|s| s.allowed()).unwrap_or_default();
        Err(ConfigError::InvalidValue {
            key: key.to_owned(),
            value: render_value(key, &value),
            allowed,
        })
    };

    if c.proxy.port == 0 {
        return invalid("proxy.port", c.proxy.port.into());
    }
    if !is_valid_host(&c.proxy.host) {
        return invalid("proxy.host", c.proxy.host.as_str().into());
    }
    // Under pass-through the standard auth headers carry the caller's own sign-in, so the
    // proxy cannot demand its key there: only this machine may reach it.
    if c.llm.auth_method == AuthMethod::Passthrough && !is_loopback_host(&c.proxy.host) {
        return Err(ConfigError::InvalidValue {
            key: "llm.auth_method".to_owned(),
            value: "\"passthrough\"".to_owned(),
            allowed: format!(
                "passthrough needs proxy.host on loopback (127.0.0.1, ::1 or localhost), not {:?}",
                c.proxy.host
            ),
        });
    }
    if c.proxy.max_body_bytes < 1024 {
        return invalid("proxy.max_body_bytes", c.proxy.max_body_bytes.into());
    }
    if c.llm.timeout_seconds == 0 {
        return invalid("llm.timeout_seconds", c.llm.timeout_seconds.into());
    }
    if c.skills.top_k == 0 {
        return invalid("skills.top_k", c.skills.top_k.into());
    }
    if c.skills.evidence_min_turns == 0 {
        return invalid(
            "skills.evidence_min_turns",
            c.skills.evidence_min_turns.into(),
        );
    }
    if c.rl.lora_rank == 0 {
        return invalid("rl.lora_rank", c.rl.lora_rank.into());
    }
    for (key, value) in [
        ("rl.batch_size", c.rl.batch_size),
        ("rl.group_size", c.rl.group_size),
        ("rl.prm_m", c.rl.prm_m),
        ("rl.prm_max_new_tokens", c.rl.prm_max_new_tokens),
        ("rl.checkpoint_every", c.rl.checkpoint_every),
        ("rl.max_new_tokens", c.rl.max_new_tokens),
    ] {
        if value == 0 {
            return invalid(key, value.into());
        }
    }
    if c.rl.save_weights_timeout_s == 0 {
        return invalid(
            "rl.save_weights_timeout_s",
            c.rl.save_weights_timeout_s.into(),
        );
    }
    if !(c.rl.learning_rate.is_finite() && c.rl.learning_rate > 0.0) {
        return invalid("rl.learning_rate", c.rl.learning_rate.into());
    }
    for (key, value, ok) in [
        (
            "rl.prm_temperature",
            c.rl.prm_temperature,
            c.rl.prm_temperature >= 0.0,
        ),
        ("rl.temperature", c.rl.temperature, c.rl.temperature >= 0.0),
        (
            "opd.kl_penalty_coef",
            c.opd.kl_penalty_coef,
            c.opd.kl_penalty_coef >= 0.0,
        ),
        (
            "skills.min_score",
            c.skills.min_score,
            c.skills.min_score >= 0.0,
        ),
        (
            "skills.relative_threshold",
            c.skills.relative_threshold,
            (0.0..=1.0).contains(&c.skills.relative_threshold),
        ),
        (
            "skills.min_similarity",
            c.skills.min_similarity,
            (-1.0..=1.0).contains(&c.skills.min_similarity),
        ),
        (
            "skills.holdout_share",
            c.skills.holdout_share,
            (0.0..=0.5).contains(&c.skills.holdout_share),
        ),
        (
            "rl.gate_tolerance",
            c.rl.gate_tolerance,
            (0.0..=1.0).contains(&c.rl.gate_tolerance),
        ),
        (
            "rl.thumbs_weight",
            c.rl.thumbs_weight,
            (0.0..=1.0).contains(&c.rl.thumbs_weight),
        ),
        (
            "rl.correction_weight",
            c.rl.correction_weight,
            (0.0..=1.0).contains(&c.rl.correction_weight),
        ),
        (
            "rl.retry_weight",
            c.rl.retry_weight,
            (0.0..=1.0).contains(&c.rl.retry_weight),
        ),
        (
            "rl.tool_error_weight",
            c.rl.tool_error_weight,
            (0.0..=1.0).contains(&c.rl.tool_error_weight),
        ),
    ] {
        if !value.is_finite() || !ok {
            // NaN/inf cannot be JSON numbers; show their spelling.
            let shown = serde_json::Number::from_f64(value)
                .map(Value::Number)
                .unwrap_or_else(|| Value::String(value.to_string()));
            return invalid(key, shown);
        }
    }
    for (key, time) in [
        ("scheduler.sleep_start", &c.scheduler.sleep_start),
        ("scheduler.sleep_end", &c.scheduler.sleep_end),
    ] {
        if !is_valid_hhmm(time) {
            return invalid(key, time.as_str().into());
        }
    }
    for (key, url) in [
        ("llm.api_base", &c.llm.api_base),
        ("rl.base_url", &c.rl.base_url),
        ("rl.tinker_base_url", &c.rl.tinker_base_url),
        ("rl.prm_url", &c.rl.prm_url),
        ("rl.evolver_api_base", &c.rl.evolver_api_base),
        ("opd.teacher_url", &c.opd.teacher_url),
        ("skills.embedding.api_base", &c.skills.embedding.api_base),
    ] {
        if !url.is_empty() && !is_http_url(url) {
            return invalid(key, url.as_str().into());
        }
    }
    check_agents(c)
}

/// Agent names become folder names and keys identify one agent each, so a name must be a
/// plain slug and a key must belong to one agent only (and not be the shared proxy key).
fn check_agents(c: &Config) -> Result<(), ConfigError> {
    let mut seen: Vec<&str> = Vec::new();
    for (name, agent) in &c.agents {
        if !crate::agents::valid_agent_name(name) {
            return Err(ConfigError::InvalidValue {
                key: format!("agents.{name}"),
                value: format!("{name:?}"),
                allowed: "an agent name: lowercase letters, digits, - and _ (at most 32)".into(),
            });
        }
        let key = agent.api_key.trim();
        if key.is_empty() {
            continue;
        }
        let clash = if key == c.proxy.api_key.trim() {
            Some("it is proxy.api_key, the key shared by agents without their own".to_owned())
        } else {
            seen.iter()
                .position(|k| *k == key)
                .map(|_| "another agent has the same key".to_owned())
        };
        if let Some(why) = clash {
            let dotted = format!("agents.{name}.api_key");
            return Err(ConfigError::InvalidValue {
                value: render_value(&dotted, &Value::String(key.to_owned())),
                key: dotted,
                allowed: format!("a key of this agent alone: {why}"),
            });
        }
        seen.push(key);
    }
    Ok(())
}

/// `H:MM` or `HH:MM`, 00:00–23:59.
fn is_valid_hhmm(s: &str) -> bool {
    let Some((h, m)) = s.split_once(':') else {
        return false;
    };
    let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    if !(digits(h) && digits(m)) || h.len() > 2 || m.len() != 2 {
        return false;
    }
    matches!((h.parse::<u8>(), m.parse::<u8>()), (Ok(h), Ok(m)) if h < 24 && m < 60)
}

fn is_http_url(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    ["http://", "https://"].iter().any(|scheme| {
        lower
            .strip_prefix(scheme)
            .is_some_and(|rest| !rest.is_empty())
    })
}

/// An IPv4/IPv6 address or an RFC 1123 hostname.
fn is_loopback_host(s: &str) -> bool {
    s.eq_ignore_ascii_case("localhost") || s.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

fn is_valid_host(s: &str) -> bool {
    if s.parse::<IpAddr>().is_ok() {
        return true;
    }
    let name = s.strip_suffix('.').unwrap_or(s);
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
        // An all-numeric dotted name is a mistyped IPv4 address, not a host.
        && !name.split('.').all(|l| l.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::choices::{ClawType, LlmProvider, RetrievalMode};

    const UPSTREAM_README: &str = include_str!("../testdata/upstream_readme.yaml");
    const UPSTREAM_ALL_KEYS: &str = include_str!("../testdata/upstream_all_keys.yaml");

    fn check(yaml: &str) -> Result<(Config, Vec<ConfigWarning>), ConfigError> {
        validate(&Document::parse(yaml).unwrap())
    }

    fn error_text(yaml: &str) -> String {
        match check(yaml) {
            Ok(_) => panic!("expected {yaml:?} to be rejected"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn upstream_readme_config_loads_unchanged() {
        let (c, warnings) = check(UPSTREAM_README).unwrap();
        assert_eq!(warnings, []);
        assert_eq!(c.mode, Mode::SkillsOnly);
        assert_eq!(c.llm.provider, LlmProvider::Kimi);
        assert_eq!(c.llm.model_id, "moonshotai/Kimi-K2.5");
        assert_eq!(c.llm.api_base, "https://api.moonshot.cn/v1");
        assert_eq!(c.llm.api_key, "sk-...");
        assert_eq!(c.proxy.port, 30000);
        assert_eq!(c.proxy.host, "127.0.0.1");
        assert!(c.skills.enabled);
        assert_eq!(c.skills.dir, "~/.metaclaw/skills");
        assert_eq!(c.skills.retrieval_mode, RetrievalMode::Template);
        assert_eq!((c.skills.top_k, c.skills.task_specific_top_k), (6, 10));
        assert!(c.skills.auto_evolve);
        assert!(!c.rl.enabled);
        assert_eq!(c.rl.model, "moonshotai/Kimi-K2.5");
        assert_eq!(c.rl.prm_url, "https://api.openai.com/v1");
        assert_eq!(c.rl.prm_model, "gpt-5.2");
        assert_eq!((c.rl.lora_rank, c.rl.batch_size), (32, 4));
        assert_eq!(c.rl.evolver_api_base, "");
        assert_eq!(c.rl.evolver_model, "gpt-5.2");
        assert!(!c.opd.enabled);
        assert_eq!(c.opd.kl_penalty_coef, 1.0);
        assert_eq!(c.max_context_tokens, 20000);
        assert_eq!(c.claw_type.single(), Some(ClawType::Openclaw));
    }

    #[test]
    fn passthrough_needs_a_loopback_listener() {
        let (c, _) = check("llm:\n  auth_method: passthrough\n").unwrap();
        assert_eq!(c.llm.auth_method, AuthMethod::Passthrough);
        let (c, warnings) = check("llm:\n  auth_method: oauth_token\n").unwrap();
        assert_eq!(c.llm.auth_method, AuthMethod::ApiKey);
        assert!(
            warnings
                .iter()
                .any(|w| w.to_string().contains("write `passthrough`")),
            "{warnings:?}"
        );
        let e = check("llm:\n  auth_method: passthrough\nproxy:\n  host: 0.0.0.0\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("needs proxy.host on loopback"), "{e}");
        let e = check("llm:\n  auth_method: sso\n").unwrap_err().to_string();
        assert!(e.contains("allowed: api_key, passthrough"), "{e}");
    }

    #[test]
    fn claw_type_takes_a_list() {
        let (c, _) = check("claw_type: [claude-code, codex]\n").unwrap();
        assert_eq!(c.claw_type.to_string(), "claude-code, codex");
        let (c, _) = check("claw_type: qwen-code,hermes\n").unwrap();
        assert_eq!(c.claw_type.agents().count(), 2);
        let e = check("claw_type: [codex, clawdbot]\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("claw_type") && e.contains("allowed: openclaw"),
            "{e}"
        );
    }

    #[test]
    fn every_upstream_key_is_known() {
        let (c, warnings) = check(UPSTREAM_ALL_KEYS).unwrap();
        assert!(
            !warnings
                .iter()
                .any(|w| matches!(w, ConfigWarning::UnknownKey { .. })),
            "{warnings:#?}"
        );
        let ignored: Vec<&str> = warnings
            .iter()
            .map(|w| match w {
                ConfigWarning::IgnoredKey { key, .. } => key.as_str(),
                other => panic!("unexpected warning {other:?}"),
            })
            .collect();
        let memory_keys = [
            "enabled",
            "dir",
            "store_path",
            "scope",
            "retrieval_mode",
            "use_embeddings",
            "embedding_mode",
            "embedding_model",
            "embedding_model_path",
            "auto_upgrade_enabled",
            "auto_upgrade_interval_seconds",
            "auto_upgrade_require_review",
            "review_stale_after_hours",
            "max_injected_units",
            "max_injected_tokens",
            "auto_extract",
            "auto_consolidate",
            "ignore_turn_type",
            "manual_trigger",
            "sidecar_url",
            "top_k",
            "max_tokens",
            "consolidation_interval",
        ]
        .map(|k| format!("memory.{k}"));
        let mut expected: Vec<String> = [
            "bedrock_region",
            "llm.bedrock_region",
            "rl.backend",
            "rl.prm_provider",
            "rl.evolver_provider",
        ]
        .map(String::from)
        .to_vec();
        expected.extend(memory_keys);
        expected.extend(
            [
                "scheduler.calendar.credentials_path",
                "scheduler.calendar.token_path",
                "wechat.enabled",
                "openrouter.app_name",
                "openrouter.app_url",
                "openrouter.route",
                "openrouter.fallback_models",
                "openrouter.data_policy",
            ]
            .map(String::from),
        );
        assert_eq!(ignored, expected);

        assert_eq!(c.mode, Mode::Auto);
        assert_eq!(c.claw_type.single(), Some(ClawType::Copaw));
        assert_eq!(c.llm.provider, LlmProvider::Openrouter);
        assert_eq!(c.proxy.host, "0.0.0.0");
        assert_eq!(c.proxy.port, 30001);
        assert_eq!(c.proxy.api_key, "local-proxy-key");
        assert_eq!(c.skills.retrieval_mode, RetrievalMode::Embedding);
        assert_eq!(c.rl.tinker_api_key, "tk-0123456789");
        assert_eq!((c.rl.lora_rank, c.rl.batch_size), (16, 8));
        assert!(c.scheduler.enabled);
        assert_eq!(c.context_window, 200_000);
    }

    #[test]
    fn ignored_key_message() {
        let (_, warnings) = check("memory:\n  enabled: true\n").unwrap();
        assert_eq!(
            warnings.iter().map(ToString::to_string).collect::<Vec<_>>(),
            [
                "key `memory.enabled` is read by the Python MetaClaw but ignored by this version: \
              the memory layer is not implemented"
            ]
        );
    }

    #[test]
    fn unknown_keys_are_reported_by_full_dotted_name_once() {
        let (c, warnings) = check(
            "llm:\n  api_kye: x\n  provider: qwen\nfoo:\n  bar: 1\n  baz: {}\n  list: [{a: 1}, 2]\n\
             scheduler:\n  nested:\n    deep: null\ntypo_top: 3\n",
        )
        .unwrap();
        assert_eq!(c.llm.provider, LlmProvider::Qwen);
        let keys: Vec<&str> = warnings
            .iter()
            .map(|w| match w {
                ConfigWarning::UnknownKey { key } => key.as_str(),
                other => panic!("unexpected warning {other:?}"),
            })
            .collect();
        assert_eq!(
            keys,
            [
                "llm.api_kye",
                "foo.bar",
                "foo.baz",
                "foo.list",
                "scheduler.nested.deep",
                "typo_top"
            ]
        );
        assert_eq!(
            warnings[1].to_string(),
            "unknown key `foo.bar` in config.yaml (ignored)"
        );
    }

    #[test]
    fn invalid_values_name_key_value_and_allowed() {
        let cases = [
            (
                "mode: foo",
                r#"invalid value for `mode`: "foo" (allowed: skills_only, rl, auto)"#,
            ),
            (
                "proxy:\n  port: abc",
                r#"invalid value for `proxy.port`: "abc" (expected an integer 1-65535)"#,
            ),
            (
                "proxy:\n  port: 70000",
                "invalid value for `proxy.port`: 70000 (expected an integer 1-65535)",
            ),
            (
                "proxy:\n  port: 0",
                "invalid value for `proxy.port`: 0 (expected an integer 1-65535)",
            ),
            (
                "proxy:\n  port: -1",
                "invalid value for `proxy.port`: -1 (expected an integer 1-65535)",
            ),
            (
                "proxy:\n  host: not a host",
                r#"invalid value for `proxy.host`: "not a host" (expected an IP address or hostname)"#,
            ),
            (
                "proxy:\n  max_body_bytes: 100",
                "invalid value for `proxy.max_body_bytes`: 100 (expected an integer >= 1024)",
            ),
            (
                "llm:\n  provider: gemini",
                r#"invalid value for `llm.provider`: "gemini" (allowed: kimi, qwen, openai, openrouter, minimax, novita, volcengine, anthropic, custom)"#,
            ),
            (
                "llm:\n  api_base: api.moonshot.cn/v1",
                r#"invalid value for `llm.api_base`: "api.moonshot.cn/v1" (expected an http:// or https:// URL, or empty)"#,
            ),
            (
                "llm:\n  timeout_seconds: 0",
                "invalid value for `llm.timeout_seconds`: 0 (expected an integer >= 1)",
            ),
            (
                "llm: foo",
                r#"invalid value for `llm`: "foo" (expected a mapping)"#,
            ),
            (
                "llm:\n  api_key: [1, 2]",
                "invalid value for `llm.api_key`: [1,2] (expected a string)",
            ),
            (
                "skills:\n  retrieval_mode: vector",
                r#"invalid value for `skills.retrieval_mode`: "vector" (allowed: bm25, template, embedding)"#,
            ),
            (
                "skills:\n  top_k: 0",
                "invalid value for `skills.top_k`: 0 (expected an integer >= 1)",
            ),
            (
                "skills:\n  top_k: 2.5",
                "invalid value for `skills.top_k`: 2.5 (expected an integer >= 1)",
            ),
            (
                "skills:\n  holdout_share: 0.6",
                "invalid value for `skills.holdout_share`: 0.6 (expected a number between 0 and 0.5)",
            ),
            (
                "skills:\n  evidence_min_turns: 0",
                "invalid value for `skills.evidence_min_turns`: 0 (expected an integer >= 1)",
            ),
            (
                "skills:\n  enabled: maybe",
                r#"invalid value for `skills.enabled`: "maybe" (expected true or false)"#,
            ),
            (
                "rl:\n  batch_size: 0",
                "invalid value for `rl.batch_size`: 0 (expected an integer >= 1)",
            ),
            (
                "rl:\n  lora_rank: 0",
                "invalid value for `rl.lora_rank`: 0 (expected an integer >= 1)",
            ),
            (
                "rl:\n  prm_url: localhost:8000",
                r#"invalid value for `rl.prm_url`: "localhost:8000" (expected an http:// or https:// URL, or empty)"#,
            ),
            (
                "opd:\n  kl_penalty_coef: -0.5",
                "invalid value for `opd.kl_penalty_coef`: -0.5 (expected a finite number >= 0)",
            ),
            (
                "opd:\n  kl_penalty_coef: .inf",
                r#"invalid value for `opd.kl_penalty_coef`: ".inf" (expected a finite number >= 0)"#,
            ),
            (
                "opd:\n  teacher_url: vllm:8082",
                r#"invalid value for `opd.teacher_url`: "vllm:8082" (expected an http:// or https:// URL, or empty)"#,
            ),
            (
                "scheduler:\n  sleep_start: '25:00'",
                r#"invalid value for `scheduler.sleep_start`: "25:00" (expected a time HH:MM (00:00-23:59))"#,
            ),
            (
                "scheduler:\n  sleep_end: 7pm",
                r#"invalid value for `scheduler.sleep_end`: "7pm" (expected a time HH:MM (00:00-23:59))"#,
            ),
            (
                "claw_type: clawdbot",
                r#"invalid value for `claw_type`: "clawdbot" (allowed: openclaw, copaw, ironclaw, picoclaw, zeroclaw, nanoclaw, nemoclaw, hermes, claude-code, codex, qwen-code, none)"#,
            ),
            (
                "max_context_tokens: -5",
                "invalid value for `max_context_tokens`: -5 (expected a non-negative integer)",
            ),
            (
                "configure_openclaw: 3",
                "invalid value for `configure_openclaw`: 3 (expected true or false)",
            ),
        ];
        for (yaml, expected) in cases {
            assert_eq!(error_text(yaml), expected, "for {yaml:?}");
        }
    }

    #[test]
    fn invalid_secret_values_are_masked_in_errors() {
        let err = error_text("proxy:\n  api_key: {k: sk-0123456789abcdef}\n");
        assert_eq!(
            err,
            r#"invalid value for `proxy.api_key`: {"k":"sk-…cdef"} (expected a string)"#
        );
        assert_eq!(
            render_value("llm.api_key", &Value::from("sk-abcdefghijkl")),
            r#""sk-…ijkl""#
        );
    }

    #[test]
    fn lenient_scalars_and_nulls() {
        let (c, warnings) = check(
            "proxy:\n  port: '31000'\nllm:\n  api_key:\n  model_id: 4\nopd:\n\
             skills:\n  enabled: 'false'\n",
        )
        .unwrap();
        assert_eq!(warnings, []);
        assert_eq!(c.proxy.port, 31000);
        assert_eq!(c.llm.api_key, "");
        assert_eq!(c.llm.model_id, "4");
        assert_eq!(c.opd, crate::config::OpdConfig::default());
        assert!(!c.skills.enabled);
    }

    #[test]
    fn madmax_is_auto_with_deprecation() {
        let (c, warnings) = check("mode: madmax\n").unwrap();
        assert_eq!(c.mode, Mode::Auto);
        assert_eq!(
            warnings,
            [ConfigWarning::Deprecated {
                key: "mode".into(),
                message: "`madmax` is the old name of `auto`; write `mode: auto`".into(),
            }]
        );
        assert_eq!(
            warnings[0].to_string(),
            "key `mode` is deprecated: `madmax` is the old name of `auto`; write `mode: auto`"
        );
        let (_, warnings) = check("mode: auto\n").unwrap();
        assert_eq!(warnings, []);
    }

    #[test]
    fn configure_openclaw_false_means_no_claw() {
        let (c, warnings) = check("claw_type: openclaw\nconfigure_openclaw: false\n").unwrap();
        assert_eq!(c.claw_type.single(), Some(ClawType::None));
        assert!(!c.configure_openclaw);
        assert!(matches!(
            warnings.as_slice(),
            [ConfigWarning::Deprecated { key, .. }] if key == "configure_openclaw"
        ));
        let (c, warnings) = check("configure_openclaw: true\nclaw_type: hermes\n").unwrap();
        assert_eq!(c.claw_type.single(), Some(ClawType::Hermes));
        assert_eq!(warnings, []);
    }

    #[test]
    fn empty_document_gives_defaults() {
        let (c, warnings) = validate(&Document::empty()).unwrap();
        assert_eq!(c, Config::default());
        assert_eq!(warnings, []);
    }

    #[test]
    fn serialized_defaults_validate_back_to_defaults() {
        let value = serde_json::to_value(Config::default()).unwrap();
        let yaml = serde_saphyr::to_string(&value).unwrap();
        let (c, warnings) = check(&yaml).unwrap();
        assert_eq!(c, Config::default());
        assert_eq!(warnings, []);
    }

    #[test]
    fn hhmm() {
        for ok in ["00:00", "23:59", "7:00", "07:05"] {
            assert!(is_valid_hhmm(ok), "{ok}");
        }
        for bad in [
            "24:00", "23:60", "7", "7:0", "aa:bb", "123:00", "", ":00", "-1:00",
        ] {
            assert!(!is_valid_hhmm(bad), "{bad}");
        }
    }

    #[test]
    fn hosts() {
        for ok in [
            "127.0.0.1",
            "0.0.0.0",
            "::1",
            "localhost",
            "my-host.lan",
            "a.b.c.",
        ] {
            assert!(is_valid_host(ok), "{ok}");
        }
        for bad in [
            "",
            "exa mple",
            "-x",
            "x-",
            "a..b",
            "256.1.1.1",
            "http://x",
            "[::1]",
        ] {
            assert!(!is_valid_host(bad), "{bad}");
        }
    }

    #[test]
    fn urls() {
        assert!(is_http_url("https://api.moonshot.cn/v1"));
        assert!(is_http_url("HTTP://localhost:8000"));
        assert!(!is_http_url("api.openai.com/v1"));
        assert!(!is_http_url("https://"));
        assert!(!is_http_url("ftp://x"));
    }
}

#[cfg(test)]
mod agent_tests {
    use super::*;

    fn check(yaml: &str) -> Result<(Config, Vec<ConfigWarning>), ConfigError> {
        validate(&Document::parse(yaml).unwrap())
    }

    #[test]
    fn agents_are_read_with_defaults_and_checked() {
        let (c, warnings) = check(
            "agents:\n  claude-code:\n    api_key: mc-aaaaaaaaaaaaaaaa\n    learning: false\n  codex: {}\n",
        )
        .unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        let cc = &c.agents["claude-code"];
        assert!(!cc.learning && cc.skills && cc.train_shared_policy);
        assert!(!cc.trains_policy());
        assert!(c.agents["codex"].trains_policy());

        let (_, warnings) = check("agents:\n  codex:\n    colour: red\n").unwrap();
        assert_eq!(warnings[0].key(), "agents.codex.colour");

        let err = check("agents:\n  codex:\n    skills: maybe\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("agents.codex.skills") && err.contains("true or false"),
            "{err}"
        );

        let err = check("agents:\n  Bad Name: {}\n").unwrap_err().to_string();
        assert!(err.contains("agent name"), "{err}");
    }

    #[test]
    fn agent_keys_are_unique_and_never_shown_whole() {
        let same = "agents:\n  a:\n    api_key: mc-same-key-123456789\n  b:\n    api_key: mc-same-key-123456789\n";
        let err = check(same).unwrap_err().to_string();
        assert!(
            err.contains("agents.b.api_key") && err.contains("same key"),
            "{err}"
        );
        assert!(!err.contains("mc-same-key-123456789"), "{err}");
        let shared = "proxy:\n  api_key: mc-shared-key-12345\nagents:\n  a:\n    api_key: mc-shared-key-12345\n";
        let err = check(shared).unwrap_err().to_string();
        assert!(err.contains("proxy.api_key"), "{err}");
    }
}
