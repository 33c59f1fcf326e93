//! One-time login codes: `metaclaw dashboard` and the tray's window exchange one at `/login`
//! for the session cookie, so the per-install token never reaches a page.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::api::{Api, ApiError, Method, NoInput, Operation};

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LoginCode {
    pub code: String,
    pub expires_at: DateTime<Utc>,
}

pub struct NewLoginCode;

impl Operation for NewLoginCode {
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/api/login-codes";
    const SUMMARY: &'static str = "A one-time login code for the browser (valid 5 minutes)";
    type Path = ();
    type Input = NoInput;
    type Output = LoginCode;

    async fn run(api: &Api, _: (), _: NoInput) -> Result<LoginCode, ApiError> {
        let (code, expires_at) = api.new_login_code();
        Ok(LoginCode { code, expires_at })
    }
}
