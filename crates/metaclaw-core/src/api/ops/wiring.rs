//! Pointing the user's agent at the proxy, and putting its configuration back.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::api::{Api, ApiError, Method, NoInput, Operation};
use crate::wiring::{self, WiringReport};

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct WiringStatus {
    /// The configured agent (`claw_type`).
    pub claw_type: String,
    /// Agents whose configuration MetaClaw changed and can restore.
    pub wired: Vec<String>,
    /// Where agents should send their requests.
    pub base_url: String,
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
            claw_type: config.claw_type.as_str().to_owned(),
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
        let (config, home, port) = (api.config(), api.parts().home.clone(), port(api));
        blocking(move || wiring::wire(&config, &home, port)).await
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
