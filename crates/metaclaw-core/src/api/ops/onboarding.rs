//! First run: the provider presets, and checking an endpoint before it is saved. Saving is
//! `PATCH /api/config` with the keys `metaclaw_config::preset::endpoint_changes` lists, the
//! same keys `metaclaw setup` writes.

use metaclaw_config::preset::{PRESETS, Preset, endpoint_changes, matching, sign_in_change};
use metaclaw_config::{AuthMethod, LlmProvider};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::config::{ConfigChange, masked};
use crate::api::{Api, ApiError, Method, NoInput, Operation};
use crate::onboarding::{self, EndpointCandidate, EndpointModels, EndpointTest};
use crate::settings;

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ProviderPreset {
    /// Stable id (`ollama`), the same `metaclaw setup --provider` takes.
    pub name: String,
    pub label: String,
    /// The `llm.provider` saved for it.
    pub provider: LlmProvider,
    /// Empty for `custom`.
    pub api_base: String,
    /// A suggested model; empty when the server's own list should decide.
    pub model: String,
    pub needs_key: bool,
    /// A server on this machine.
    pub local: bool,
}

impl From<&Preset> for ProviderPreset {
    fn from(p: &Preset) -> Self {
        ProviderPreset {
            name: p.name.to_owned(),
            label: p.label.to_owned(),
            provider: p.provider,
            api_base: p.api_base.to_owned(),
            model: p.model.to_owned(),
            needs_key: p.needs_key,
            local: p.local,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Presets {
    pub presets: Vec<ProviderPreset>,
    /// The preset the stored endpoint came from; `None` when no endpoint is set.
    pub current: Option<String>,
    /// A key is stored (it is kept when the endpoint stays the same).
    pub has_key: bool,
    /// The stored `llm.auth_method` (onboarding's "use my agent's own sign-in").
    #[serde(default)]
    pub auth_method: AuthMethod,
}

pub struct ListPresets;

impl Operation for ListPresets {
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/api/onboarding/presets";
    const SUMMARY: &'static str = "The provider presets `metaclaw setup` and onboarding offer";
    type Path = ();
    type Input = NoInput;
    type Output = Presets;

    async fn run(api: &Api, _: (), _: NoInput) -> Result<Presets, ApiError> {
        let config = api.config();
        let stored = !onboarding::needs_onboarding(&config);
        Ok(Presets {
            presets: PRESETS.iter().map(ProviderPreset::from).collect(),
            current: stored.then(|| {
                matching(config.llm.provider, &config.llm.api_base)
                    .name
                    .to_owned()
            }),
            has_key: !config.llm.api_key.is_empty(),
            auth_method: config.llm.auth_method,
        })
    }
}

fn checked(candidate: &EndpointCandidate) -> Result<(), ApiError> {
    if candidate.api_base.trim().is_empty() {
        return Err(ApiError::bad_request("`api_base` must not be empty"));
    }
    Ok(())
}

pub struct CandidateModelList;

impl Operation for CandidateModelList {
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/api/onboarding/models";
    const SUMMARY: &'static str = "The models an endpoint lists, before it is saved";
    type Path = ();
    type Input = EndpointCandidate;
    type Output = EndpointModels;

    async fn run(
        api: &Api,
        _: (),
        candidate: EndpointCandidate,
    ) -> Result<EndpointModels, ApiError> {
        checked(&candidate)?;
        Ok(onboarding::list_models(&candidate, &api.config()).await)
    }
}

pub struct TestCandidate;

impl Operation for TestCandidate {
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/api/onboarding/test";
    const SUMMARY: &'static str =
        "Send a one-token request to an endpoint before it is saved; the exact error if it fails";
    type Path = ();
    type Input = EndpointCandidate;
    type Output = EndpointTest;

    async fn run(api: &Api, _: (), candidate: EndpointCandidate) -> Result<EndpointTest, ApiError> {
        checked(&candidate)?;
        if candidate.auth_method == Some(AuthMethod::Passthrough)
            && candidate.key(&api.config()).is_empty()
        {
            return Err(ApiError::bad_request(
                "nothing to test with: under your agent's own sign-in MetaClaw has no key of its \
                 own for this endpoint; give one (`api_key`) to test it",
            ));
        }
        if candidate.model.trim().is_empty() {
            return Err(ApiError::bad_request(
                "`model` must not be empty: choose or type the model to test",
            ));
        }
        Ok(onboarding::test(&candidate, &api.config()).await)
    }
}

pub struct SaveEndpoint;

impl Operation for SaveEndpoint {
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/api/onboarding/endpoint";
    const SUMMARY: &'static str = "Make an endpoint the upstream: the keys `metaclaw setup` writes, through the settings path";
    type Path = ();
    type Input = EndpointCandidate;
    type Output = ConfigChange;

    async fn run(api: &Api, _: (), candidate: EndpointCandidate) -> Result<ConfigChange, ApiError> {
        checked(&candidate)?;
        // A key left out is kept only for the same endpoint (`EndpointCandidate::key`); a new host
        // without a key gets none rather than the old provider's.
        let key = candidate.key(&api.config());
        let mut changes = endpoint_changes(
            candidate.provider,
            &candidate.api_base,
            &candidate.model,
            Some(&key),
        );
        changes.extend(candidate.auth_method.map(sign_in_change));
        let applied = settings::apply(&api.parts().live, changes)?;
        // Said at once, not only on the Overview: what the saved choice leaves without a key.
        let mut warnings = applied.warnings;
        warnings.extend(onboarding::own_endpoint_warning(&applied.config));
        Ok(ConfigChange {
            config: masked(&applied.config),
            restart_required: !applied.restart_keys.is_empty(),
            restart_keys: applied.restart_keys,
            warnings,
            config_warnings: applied.config_warnings,
        })
    }
}
