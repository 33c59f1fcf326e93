//! Settings: read the effective configuration (secrets masked), change it through the one
//! settings path (`crate::settings`), and test an endpoint.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use metaclaw_config::{Config, Mode};
use metaclaw_llm::{ErrorKind, LlmClient, Probe};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::api::{Api, ApiError, Method, NoInput, Operation};
use crate::settings;

/// The effective configuration with every secret masked (`sk-…abcd`). Secrets are write-only.
pub fn masked(config: &Config) -> Config {
    serde_json::from_value(metaclaw_config::masked(&config.to_document()))
        .unwrap_or_else(|_| config.clone())
}

pub struct GetConfig;

impl Operation for GetConfig {
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/api/config";
    const SUMMARY: &'static str = "The effective configuration, secrets masked";
    type Path = ();
    type Input = NoInput;
    type Output = Config;

    async fn run(api: &Api, _: (), _: NoInput) -> Result<Config, ApiError> {
        Ok(masked(&api.config()))
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LlmPatch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_base: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
}

/// A change to the configuration. The named fields are the switches the dashboard and the
/// tray flip; `set` takes any key by its dotted name, with the value `config KEY VALUE` takes.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConfigPatch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<Mode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opd_enabled: Option<bool>,
    /// "Enable RL": on leaves skills_only for rl, off goes back to skills_only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rl_enabled: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub learning_paused: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm: Option<LlmPatch>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set: Option<BTreeMap<String, Value>>,
}

impl ConfigPatch {
    /// The dotted keys and values this patch sets, in a stable order.
    pub fn changes(self) -> Vec<(String, Value)> {
        let mut changes: Vec<(String, Value)> = Vec::new();
        if let Some(m) = self.mode {
            changes.push(("mode".into(), json!(m)));
        }
        if let Some(v) = self.opd_enabled {
            changes.push(("opd.enabled".into(), json!(v)));
        }
        if let Some(v) = self.rl_enabled {
            changes.push(("rl.enabled".into(), json!(v)));
        }
        if let Some(v) = self.learning_paused {
            changes.push(("learning_paused".into(), json!(v)));
        }
        if let Some(llm) = self.llm {
            for (key, value) in [
                ("llm.api_base", llm.api_base),
                ("llm.model_id", llm.model_id),
                ("llm.api_key", llm.api_key),
            ] {
                if let Some(v) = value {
                    changes.push((key.into(), json!(v)));
                }
            }
        }
        changes.extend(self.set.unwrap_or_default());
        changes
    }
}

/// The configuration after a change.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ConfigChange {
    /// The new effective configuration, secrets masked.
    pub config: Config,
    /// Some changed key only takes effect after a restart.
    pub restart_required: bool,
    /// Which changed keys those are.
    pub restart_keys: Vec<String>,
    /// Advice about the new configuration (e.g. RL without a judge trains only rated turns).
    pub warnings: Vec<String>,
    /// What validation says about config.yaml (unknown keys, keys this version ignores).
    pub config_warnings: Vec<String>,
}

pub struct PatchConfig;

impl Operation for PatchConfig {
    const METHOD: Method = Method::Patch;
    const PATH: &'static str = "/api/config";
    const SUMMARY: &'static str =
        "Change settings: validated, saved to config.yaml and applied to the running core";
    type Path = ();
    type Input = ConfigPatch;
    type Output = ConfigChange;

    async fn run(api: &Api, _: (), patch: ConfigPatch) -> Result<ConfigChange, ApiError> {
        let applied = settings::apply(&api.parts().live, patch.changes())?;
        Ok(ConfigChange {
            config: masked(&applied.config),
            restart_required: !applied.restart_keys.is_empty(),
            restart_keys: applied.restart_keys,
            warnings: applied.warnings,
            config_warnings: applied.config_warnings,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Endpoint {
    Llm,
    Evolver,
    Embedding,
    /// The PRM judge (rl.prm_url, rl.prm_api_key).
    Judge,
    /// The OPD teacher (opd.teacher_url, opd.teacher_api_key).
    Teacher,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TestTarget {
    pub target: Endpoint,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ConnectionTest {
    pub ok: bool,
    pub detail: String,
    pub latency_ms: Option<f64>,
}

pub struct TestConnection;

impl Operation for TestConnection {
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/api/config/test-connection";
    const SUMMARY: &'static str =
        "Check that an endpoint (llm, evolver, embedding, judge, teacher) answers";
    type Path = ();
    type Input = TestTarget;
    type Output = ConnectionTest;

    async fn run(api: &Api, _: (), t: TestTarget) -> Result<ConnectionTest, ApiError> {
        let config = api.config();
        let (base, key) = endpoint(&config, t.target);
        if base.is_empty() {
            return Ok(ConnectionTest {
                ok: false,
                detail: "no endpoint configured".into(),
                latency_ms: None,
            });
        }
        let client = match LlmClient::new(&base, &key, Duration::from_secs(10)) {
            Ok(client) => client,
            Err(e) => {
                return Ok(ConnectionTest {
                    ok: false,
                    detail: e.to_string(),
                    latency_ms: None,
                });
            }
        };
        let started = Instant::now();
        let (ok, detail) = match client.probe().await {
            Probe::Reachable { status } => (true, format!("reachable (HTTP {status})")),
            Probe::KeyRefused { status } => (
                false,
                format!("reachable, but HTTP {status}: check the API key"),
            ),
            Probe::Unreachable(e) if e.kind() == ErrorKind::Timeout => {
                (false, "timed out".to_owned())
            }
            Probe::Unreachable(e) => (false, format!("unreachable: {e}")),
        };
        Ok(ConnectionTest {
            ok,
            detail,
            latency_ms: Some(started.elapsed().as_secs_f64() * 1000.0),
        })
    }
}

/// The base URL and key a target uses (evolver and embeddings fall back to the LLM's).
fn endpoint(config: &Config, target: Endpoint) -> (String, String) {
    let or = |a: &str, b: &str| {
        if a.is_empty() {
            b.to_owned()
        } else {
            a.to_owned()
        }
    };
    match target {
        Endpoint::Llm => (config.llm.api_base.clone(), config.llm.api_key.clone()),
        Endpoint::Evolver if !config.rl.evolver_api_base.is_empty() => (
            config.rl.evolver_api_base.clone(),
            config.rl.evolver_api_key.clone(),
        ),
        Endpoint::Evolver => (config.llm.api_base.clone(), config.llm.api_key.clone()),
        Endpoint::Judge => (config.rl.prm_url.clone(), config.rl.prm_api_key.clone()),
        Endpoint::Teacher => (
            config.opd.teacher_url.clone(),
            config.opd.teacher_api_key.clone(),
        ),
        Endpoint::Embedding => {
            let e = &config.skills.embedding;
            (
                or(&e.api_base, &config.llm.api_base),
                or(&e.api_key, &config.llm.api_key),
            )
        }
    }
}
