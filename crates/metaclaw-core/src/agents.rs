//! Agents as identities: the proxy key each wired agent gets, and the list of agents the
//! dashboard, the tray and `metaclaw status` show (keys masked, never whole).

use metaclaw_config::{Config, Home, mask_secret};
use metaclaw_domain::DEFAULT_AGENT;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::api::ApiError;
use crate::live::LiveConfig;

/// A new proxy key for one agent: `mc-` and 122 random bits (a v4 UUID's), in hex.
pub fn generate_key() -> String {
    format!("mc-{}", uuid::Uuid::new_v4().simple())
}

/// The `agents.<name>.api_key` settings the configured agents (`claw_type`) still lack, each
/// with a fresh key.
pub fn missing_keys(config: &Config) -> Vec<(String, Value)> {
    config
        .claw_type
        .agents()
        .map(|claw| claw.as_str())
        .filter(|name| {
            config
                .agents
                .get(*name)
                .is_none_or(|a| a.api_key.trim().is_empty())
        })
        .map(|name| {
            (
                format!("agents.{name}.api_key"),
                Value::String(generate_key()),
            )
        })
        .collect()
}

/// Give every configured agent its own key before it is wired, through the one settings
/// path (config.yaml and the running proxy both learn it).
pub fn ensure_keys(live: &LiveConfig) -> Result<(), ApiError> {
    let missing = missing_keys(&live.get());
    if missing.is_empty() {
        return Ok(());
    }
    let names: Vec<String> = missing.iter().map(|(k, _)| k.clone()).collect();
    crate::settings::apply(live, missing)?;
    tracing::info!(keys = ?names, "agents: proxy keys created");
    Ok(())
}

/// The key an agent is wired with: its own, else the shared `proxy.api_key` (or the
/// placeholder an open proxy accepts).
pub fn key_for(config: &Config, agent: &str) -> String {
    match config.agents.get(agent).map(|a| a.api_key.trim()) {
        Some(own) if !own.is_empty() => own.to_owned(),
        _ if config.proxy.api_key.is_empty() => "metaclaw".to_owned(),
        _ => config.proxy.api_key.clone(),
    }
}

/// One agent as listed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AgentInfo {
    pub name: String,
    /// Its own proxy key, masked (`mc-…abcd`); `None` when it has none and uses the shared key.
    pub key: Option<String>,
    /// Listed in `claw_type` (wired on start).
    pub configured: bool,
    /// MetaClaw changed its configuration and can restore it.
    pub wired: bool,
    /// Its own skills folder, layered over the shared one.
    pub skills_dir: String,
    pub skills: bool,
    pub learning: bool,
    pub train_shared_policy: bool,
}

/// Every agent MetaClaw knows of: under `agents:`, in `claw_type`, wired, or (with `seen`,
/// the agents of recorded sessions) heard from; by name.
pub fn list(config: &Config, home: &Home, seen: &[String]) -> Vec<AgentInfo> {
    let wired = crate::wiring::wired_agents(home);
    let configured: Vec<&str> = config.claw_type.agents().map(|c| c.as_str()).collect();
    let mut names: Vec<String> = config
        .agents
        .keys()
        .cloned()
        .chain(configured.iter().map(|c| (*c).to_owned()))
        .chain(wired.iter().cloned())
        .chain(seen.iter().cloned())
        .filter(|n| n != DEFAULT_AGENT || seen.contains(n))
        .collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .map(|name| {
            let a = config.agent(&name);
            AgentInfo {
                key: Some(a.api_key.trim())
                    .filter(|k| !k.is_empty())
                    .map(mask_secret),
                configured: configured.contains(&name.as_str()),
                wired: wired.contains(&name),
                skills_dir: a.skills_dir(&name, home).display().to_string(),
                skills: a.skills,
                learning: a.learning,
                train_shared_policy: a.train_shared_policy,
                name,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(yaml: &str) -> Config {
        metaclaw_config::load_str(yaml).unwrap().config
    }

    #[test]
    fn keys_are_made_only_for_configured_agents_without_one() {
        let c = config(
            "claw_type: [claude-code, codex]\nagents:\n  codex:\n    api_key: mc-existing-codex-key\n",
        );
        let missing = missing_keys(&c);
        assert_eq!(missing.len(), 1);
        assert_eq!(missing[0].0, "agents.claude-code.api_key");
        let key = missing[0].1.as_str().unwrap();
        assert!(key.starts_with("mc-") && key.len() == 35, "{key}");
        assert_ne!(key, generate_key());
        assert_eq!(key_for(&c, "codex"), "mc-existing-codex-key");
        assert_eq!(key_for(&c, "hermes"), "metaclaw");
    }

    #[test]
    fn listing_masks_keys() {
        let c = config(
            "claw_type: codex\nagents:\n  codex:\n    api_key: mc-0123456789abcdef0123\n    learning: false\n",
        );
        let home = Home::at("/nonexistent-metaclaw-home");
        let list = list(&c, &home, &["default".to_owned()]);
        let names: Vec<&str> = list.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["codex", "default"]);
        let codex = &list[0];
        assert!(codex.configured && !codex.wired && !codex.learning);
        assert_eq!(codex.key.as_deref(), Some("mc-…0123"));
        assert!(
            !serde_json::to_string(&list)
                .unwrap()
                .contains("0123456789abcdef")
        );
        assert!(codex.skills_dir.ends_with("agents/codex/skills"));
    }
}
