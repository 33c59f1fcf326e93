//! Pointing the user's agent at the proxy, and putting its configuration back.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::api::{Api, ApiError, Method, NoInput, Operation};
use crate::wiring::{self, DetectedAgent, WiringReport};

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct WiringStatus {
    /// The configured agent (`claw_type`).
    pub claw_type: String,
    /// Agents whose configuration MetaClaw changed and can restore.
    pub wired: Vec<String>,
    /// Where agents should send their requests.
    pub base_url: String,
}

/// What connecting an agent takes: the agents found on this machine, and the settings to
/// give one by hand.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AgentSetup {
    pub detected: Vec<DetectedAgent>,
    /// The configured agent (`claw_type`).
    pub claw_type: String,
    /// OpenAI-style base URL (`http://127.0.0.1:<port>/v1`).
    pub base_url: String,
    /// Anthropic-style base URL (the same without `/v1`).
    pub anthropic_base_url: String,
    /// The proxy key agents send (`proxy.api_key`; any value when none is set). Shown so the
    /// user can paste it into an agent; the dashboard session is already authenticated.
    pub api_key: String,
    /// The model name agents should ask for.
    pub model: String,
}

pub struct GetAgentSetup;

impl Operation for GetAgentSetup {
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/api/wiring/agents";
    const SUMMARY: &'static str =
        "Agents installed on this machine, and the base URL and key to give one by hand";
    type Path = ();
    type Input = NoInput;
    type Output = AgentSetup;

    async fn run(api: &Api, _: (), _: NoInput) -> Result<AgentSetup, ApiError> {
        let config = api.config();
        let spec = wiring::wire_spec(&config, port(api));
        let home = api.parts().home.clone();
        let detected = blocking(move || wiring::detect_agents(&home)).await?;
        Ok(AgentSetup {
            detected,
            claw_type: config.claw_type.to_string(),
            anthropic_base_url: spec.base_url.trim_end_matches("/v1").to_owned(),
            base_url: spec.base_url,
            api_key: spec.api_key,
            model: spec.model,
        })
    }
}

fn port(api: &Api) -> u16 {
    api.addr().map_or(api.config().proxy.port, |a| a.port())
}

pub struct GetWiring;

impl Operation for GetWiring {
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/api/wiring";
    const SUMMARY: &'static str = "Which agent is configured and which agents are wired now";
    type Path = ();
    type Input = NoInput;
    type Output = WiringStatus;

    async fn run(api: &Api, _: (), _: NoInput) -> Result<WiringStatus, ApiError> {
        let config = api.config();
        Ok(WiringStatus {
            claw_type: config.claw_type.to_string(),
            wired: wiring::wired_agents(&api.parts().home),
            base_url: wiring::wire_spec(&config, port(api)).base_url,
        })
    }
}

/// Wiring edits files and may run the agent's own CLI: off the async workers.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::internal(format!("wiring task failed: {e}")))
}

pub struct Wire;

impl Operation for Wire {
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/api/wiring/wire";
    const SUMMARY: &'static str = "Point the configured agent at the proxy";
    type Path = ();
    type Input = NoInput;
    type Output = WiringReport;

    async fn run(api: &Api, _: (), _: NoInput) -> Result<WiringReport, ApiError> {
        // Keys first: the recipes write each agent's own key into its configuration. Wiring
        // never fails for want of one: an agent without its own key gets the shared key.
        let live = api.parts().live.clone();
        let keys = blocking(move || crate::agents::ensure_keys(&live)).await?;
        let (config, home, port) = (api.config(), api.parts().home.clone(), port(api));
        let mut report = blocking(move || wiring::wire(&config, &home, port)).await?;
        if let Err(e) = keys {
            report.lines.push(format!(
                "agents were wired with the shared proxy key: their own keys could not be saved ({e})"
            ));
        }
        Ok(report)
    }
}

pub struct Unwire;

impl Operation for Unwire {
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/api/wiring/unwire";
    const SUMMARY: &'static str = "Restore the agent's own configuration";
    type Path = ();
    type Input = NoInput;
    type Output = WiringReport;

    async fn run(api: &Api, _: (), _: NoInput) -> Result<WiringReport, ApiError> {
        let (config, home) = (api.config(), api.parts().home.clone());
        blocking(move || wiring::unwire(&config, &home)).await
    }
}
