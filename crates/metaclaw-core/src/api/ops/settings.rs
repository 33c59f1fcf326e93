//! The Settings page: the catalogue of every user-facing setting with its current value
//! (secrets masked), and the checks behind "Test Tinker", "Test judge" and "Test teacher".

use metaclaw_rl::probe::TinkerProbe;

use crate::api::{Api, ApiError, Method, NoInput, Operation};
use crate::setting_fields::{SettingsCatalogue, catalogue};

pub struct GetSettings;

impl Operation for GetSettings {
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/api/settings";
    const SUMMARY: &'static str = "Every user-facing setting: group, label, help, kind, bounds and current value (secrets masked)";
    type Path = ();
    type Input = NoInput;
    type Output = SettingsCatalogue;

    async fn run(api: &Api, _: (), _: NoInput) -> Result<SettingsCatalogue, ApiError> {
        Ok(catalogue(&api.config()))
    }
}

pub struct TestTinker;

impl Operation for TestTinker {
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/api/config/test-tinker";
    const SUMMARY: &'static str =
        "Open a session on the configured Tinker server and list the models it can train";
    type Path = ();
    type Input = NoInput;
    type Output = TinkerProbe;

    async fn run(api: &Api, _: (), _: NoInput) -> Result<TinkerProbe, ApiError> {
        Ok(metaclaw_rl::probe::test_tinker(&api.config()).await)
    }
}
