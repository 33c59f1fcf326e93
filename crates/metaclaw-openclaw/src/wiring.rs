//! Snapshot → one batch write → guarded revert.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use metaclaw_domain::{Clock, SystemClock};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::cli::OpenClawCli;
use crate::error::OpenClawError;

/// Our provider id in `models.providers`.
pub const PROVIDER_ID: &str = "metaclaw";

/// What to point OpenClaw at.
#[derive(Debug, Clone, PartialEq)]
pub struct WireSpec {
    /// `http://127.0.0.1:<port>/v1`
    pub base_url: String,
    pub api_key: String,
    pub model: String,
    pub context_window: u64,
    pub max_tokens: u64,
}

/// What `wire` changed, kept so `unwire` can put it back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WiringState {
    /// `models.providers.metaclaw` before the first wiring (normally absent).
    pub provider_before: Option<Value>,
    /// `agents.defaults.model` before the first wiring (a string or `{primary, fallbacks}`).
    pub model_before: Option<Value>,
    /// The primary model ref we set, `metaclaw/<model>`.
    pub primary_written: String,
    pub base_url: String,
    pub wired_at: DateTime<Utc>,
}

impl WireSpec {
    pub fn primary(&self) -> String {
        format!("{PROVIDER_ID}/{}", self.model)
    }

    /// The provider entry. `supportsPromptCacheKey` makes OpenClaw send its session id as
    /// `prompt_cache_key`, which is how the proxy groups turns into sessions.
    pub fn provider(&self) -> Value {
        json!({
            "api": "openai-completions",
            "baseUrl": self.base_url,
            "apiKey": self.api_key,
            "models": [{
                "id": self.model,
                "name": self.model,
                "reasoning": false,
                "input": ["text"],
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                "contextWindow": self.context_window,
                "maxTokens": self.max_tokens,
                "compat": {"supportsPromptCacheKey": true}
            }]
        })
    }
}

/// Instructions for when MetaClaw cannot write OpenClaw's config itself.
pub fn manual_steps(spec: &WireSpec) -> String {
    let snippet = json!({
        "models": {"providers": {PROVIDER_ID: spec.provider()}},
        "agents": {"defaults": {"model": {"primary": spec.primary()}}}
    });
    format!(
        "Add this to ~/.openclaw/openclaw.json (merge it with what is there), then restart the gateway:\n{}",
        serde_json::to_string_pretty(&snippet).unwrap_or_default()
    )
}

fn read_only_flag(env: &dyn Fn(&str) -> Option<String>) -> Option<&'static str> {
    ["OPENCLAW_CONFIG_READONLY", "OPENCLAW_NIX_MODE"]
        .into_iter()
        .find(|k| env(k).is_some_and(|v| !v.is_empty() && v != "0" && v.to_lowercase() != "false"))
}

/// `openclaw config get PATH --json`; `None` when the path is not set.
fn get(cli: &OpenClawCli, path: &str) -> Result<Option<Value>, OpenClawError> {
    let out = cli.run(&["config", "get", path, "--json"])?;
    if !out.success {
        return Ok(None);
    }
    let text = out.stdout.trim();
    // Logs may precede the value; the value is the last JSON document printed.
    let parsed = serde_json::from_str::<Value>(text).ok().or_else(|| {
        text.lines()
            .rev()
            .find_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
    });
    Ok(parsed.filter(|v| !v.is_null()))
}

fn primary_of(model: &Value) -> Option<&str> {
    match model {
        Value::String(s) => Some(s),
        Value::Object(o) => o.get("primary").and_then(Value::as_str),
        _ => None,
    }
}

fn load_state(path: &Path) -> Option<WiringState> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

fn save_state(path: &Path, state: &WiringState) -> Result<(), OpenClawError> {
    let fail = |e: std::io::Error| OpenClawError::State {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(fail)?;
    }
    std::fs::write(path, serde_json::to_vec_pretty(state).unwrap_or_default()).map_err(fail)
}

/// Per-agent `models.json` files that define our provider id with another base URL: OpenClaw
/// gives them precedence, so they would silently bypass the proxy.
pub fn bypassing_model_files(state_dir: &Path, base_url: &str) -> Vec<PathBuf> {
    let Ok(agents) = std::fs::read_dir(state_dir.join("agents")) else {
        return Vec::new();
    };
    agents
        .filter_map(|a| a.ok())
        .map(|a| a.path().join("agent").join("models.json"))
        .filter(|p| {
            let Ok(bytes) = std::fs::read(p) else {
                return false;
            };
            let Ok(v) = serde_json::from_slice::<Value>(&bytes) else {
                return false;
            };
            let provider = v
                .pointer(&format!("/providers/{PROVIDER_ID}"))
                .or_else(|| v.get(PROVIDER_ID));
            provider
                .and_then(|p| p.get("baseUrl"))
                .and_then(Value::as_str)
                .is_some_and(|b| !b.is_empty() && b != base_url)
        })
        .collect()
}

/// Point OpenClaw at the proxy. Returns human-readable lines of what happened.
pub fn wire(
    cli: &OpenClawCli,
    spec: &WireSpec,
    state_path: &Path,
    state_dir: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<String>, OpenClawError> {
    if let Some(flag) = read_only_flag(env) {
        return Err(OpenClawError::ReadOnly(flag));
    }
    let mut lines = Vec::new();
    let previous = load_state(state_path);
    let provider_now = get(cli, &format!("models.providers.{PROVIDER_ID}"))?;
    let model_now = get(cli, "agents.defaults.model")?;
    // Re-wiring keeps the snapshot from before the first wiring, not our own values.
    let state = match previous {
        Some(mut s) => {
            s.primary_written = spec.primary();
            s.base_url = spec.base_url.clone();
            s
        }
        None => WiringState {
            provider_before: provider_now.clone(),
            model_before: model_now.clone(),
            primary_written: spec.primary(),
            base_url: spec.base_url.clone(),
            wired_at: SystemClock.now(),
        },
    };
    let already = model_now.as_ref().and_then(primary_of) == Some(spec.primary().as_str())
        && provider_now
            .as_ref()
            .and_then(|p| p.get("baseUrl"))
            .and_then(Value::as_str)
            == Some(spec.base_url.as_str());
    let batch = json!([
        {"path": format!("models.providers.{PROVIDER_ID}"), "value": spec.provider()},
        {"path": "agents.defaults.model.primary", "value": spec.primary()}
    ])
    .to_string();
    // `--replace`: the provider path is protected against replacing writes once it exists.
    let mut args = vec!["config", "set", "--batch-json", batch.as_str()];
    if provider_now.is_some() {
        args.push("--replace");
    }
    let out = cli.run_ok(&args)?;
    save_state(state_path, &state)?;
    lines.push(if already {
        format!(
            "OpenClaw already used MetaClaw ({}); refreshed the provider entry",
            spec.primary()
        )
    } else {
        format!(
            "OpenClaw now uses {} at {} (previous model kept for `metaclaw stop --unwire`)",
            spec.primary(),
            spec.base_url
        )
    });
    for path in bypassing_model_files(state_dir, &spec.base_url) {
        lines.push(format!(
            "warning: {} defines a `{PROVIDER_ID}` provider with another baseUrl; OpenClaw prefers it over the config, so requests would bypass the proxy. Remove that entry.",
            path.display()
        ));
    }
    let said = format!("{}\n{}", out.stdout, out.stderr);
    if said.contains("Restart the gateway to apply") {
        match cli.run(&["gateway", "restart"]) {
            Ok(o) if o.success => lines.push("restarted the OpenClaw gateway".into()),
            _ => lines.push("could not restart the OpenClaw gateway (no service installed?): run `openclaw gateway restart` yourself, or restart `openclaw gateway run`".into()),
        }
    }
    Ok(lines)
}

/// Undo `wire`, but only where the values are still ours.
pub fn unwire(cli: &OpenClawCli, state_path: &Path) -> Result<Vec<String>, OpenClawError> {
    let Some(state) = load_state(state_path) else {
        return Ok(vec![
            "OpenClaw was not wired by MetaClaw; nothing to restore".into(),
        ]);
    };
    let mut lines = Vec::new();
    let model_now = get(cli, "agents.defaults.model")?;
    let ours = json!(state.primary_written).to_string();
    match model_now.as_ref().and_then(primary_of) {
        Some(p) if p == state.primary_written => {
            match state.model_before.as_ref().and_then(primary_of) {
                Some(before) => {
                    let value = json!(before).to_string();
                    cli.run_ok(&[
                        "config",
                        "set",
                        "agents.defaults.model.primary",
                        &value,
                        "--strict-json",
                        "--expect-current-json",
                        &ours,
                    ])?;
                    lines.push(format!("restored OpenClaw's model to {before}"));
                }
                None => {
                    cli.run_ok(&["config", "unset", "agents.defaults.model.primary"])?;
                    lines.push("removed MetaClaw as OpenClaw's model (none was set before)".into());
                }
            }
        }
        Some(other) => lines.push(format!(
            "left OpenClaw's model alone: it was changed to {other} since wiring"
        )),
        None => lines.push("OpenClaw has no primary model set; nothing to restore there".into()),
    }
    let provider_now = get(cli, &format!("models.providers.{PROVIDER_ID}"))?;
    let still_ours = provider_now
        .as_ref()
        .and_then(|p| p.get("baseUrl"))
        .and_then(Value::as_str)
        == Some(state.base_url.as_str());
    match (provider_now, still_ours, &state.provider_before) {
        (None, _, _) => lines.push(format!("the `{PROVIDER_ID}` provider was already gone")),
        (Some(_), true, None) => {
            cli.run_ok(&[
                "config",
                "unset",
                &format!("models.providers.{PROVIDER_ID}"),
            ])?;
            lines.push(format!(
                "removed the `{PROVIDER_ID}` provider from OpenClaw"
            ));
        }
        (Some(_), true, Some(before)) => {
            let value = before.to_string();
            cli.run_ok(&[
                "config",
                "set",
                &format!("models.providers.{PROVIDER_ID}"),
                &value,
                "--strict-json",
                "--replace",
            ])?;
            lines.push(format!(
                "restored the earlier `{PROVIDER_ID}` provider entry"
            ));
        }
        (Some(_), false, _) => lines.push(format!(
            "left the `{PROVIDER_ID}` provider alone: it was changed since wiring"
        )),
    }
    let _ = std::fs::remove_file(state_path);
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> WireSpec {
        WireSpec {
            base_url: "http://127.0.0.1:30000/v1".into(),
            api_key: "mc-k".into(),
            model: "kimi".into(),
            context_window: 200_000,
            max_tokens: 8192,
        }
    }

    #[test]
    fn provider_entry_opts_into_session_ids_and_real_limits() {
        let p = spec().provider();
        assert_eq!(p["models"][0]["compat"]["supportsPromptCacheKey"], true);
        assert_eq!(p["models"][0]["contextWindow"], 200_000);
        assert_eq!(p["baseUrl"], "http://127.0.0.1:30000/v1");
        assert!(manual_steps(&spec()).contains("\"primary\": \"metaclaw/kimi\""));
    }

    #[test]
    fn read_only_modes_are_detected() {
        let env = |k: &str| (k == "OPENCLAW_NIX_MODE").then(|| "1".to_owned());
        assert_eq!(read_only_flag(&env), Some("OPENCLAW_NIX_MODE"));
        let off = |k: &str| (k == "OPENCLAW_CONFIG_READONLY").then(|| "0".to_owned());
        assert_eq!(read_only_flag(&off), None);
    }

    #[test]
    fn finds_per_agent_model_files_that_bypass_the_proxy() {
        let dir = tempfile::tempdir().unwrap();
        let agent = dir.path().join("agents/main/agent");
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::write(
            agent.join("models.json"),
            r#"{"providers": {"metaclaw": {"baseUrl": "http://old:1/v1"}}}"#,
        )
        .unwrap();
        let other = dir.path().join("agents/other/agent");
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(
            other.join("models.json"),
            r#"{"providers": {"metaclaw": {"baseUrl": "http://127.0.0.1:30000/v1"}}}"#,
        )
        .unwrap();
        let found = bypassing_model_files(dir.path(), "http://127.0.0.1:30000/v1");
        assert_eq!(found, vec![agent.join("models.json")]);
    }
}
