//! The API over HTTP, for the CLI while a daemon or the tray app runs: the same operations and
//! types as in process, sent to the running core with the per-install dashboard token.

use std::time::Duration;

use super::operation::{Method, Operation, PathArgs, fill_path};
use super::{ApiError, ErrorBody, ErrorCode};

pub struct ApiClient {
    base: String,
    token: String,
    http: reqwest::Client,
}

impl ApiClient {
    /// `base` is `http://127.0.0.1:<port>`; `timeout` bounds each call.
    pub fn new(
        base: impl Into<String>,
        token: impl Into<String>,
        timeout: Duration,
    ) -> Result<ApiClient, ApiError> {
        let http = metaclaw_llm::http_client(&metaclaw_llm::HttpOptions::loopback(timeout))
            .map_err(|e| ApiError::internal(format!("could not build the HTTP client: {e}")))?;
        Ok(ApiClient {
            base: base.into().trim_end_matches('/').to_owned(),
            token: token.into(),
            http,
        })
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    pub async fn call<O: Operation>(
        &self,
        path: O::Path,
        input: O::Input,
    ) -> Result<O::Output, ApiError> {
        let url = format!("{}{}", self.base, fill_path(O::PATH, &path.render()));
        let request = match O::METHOD {
            Method::Get => self.http.get(&url).query(&input),
            Method::Delete => self.http.delete(&url).query(&input),
            Method::Post => self.http.post(&url).json(&input),
            Method::Put => self.http.put(&url).json(&input),
            Method::Patch => self.http.patch(&url).json(&input),
        };
        let response = request
            .bearer_auth(&self.token)
            .send()
            .await
            .map_err(|e| unreachable_error(&self.base, &e))?;
        let status = response.status();
        let bytes = response
            .bytes()
            .await
            .map_err(|e| unreachable_error(&self.base, &e))?;
        if status.is_success() {
            return serde_json::from_slice(&bytes).map_err(|e| {
                ApiError::internal(format!(
                    "MetaClaw at {} answered {} with an unexpected body: {e} (is it the same version as this CLI?)",
                    self.base, O::PATH
                ))
            });
        }
        Err(serde_json::from_slice::<ErrorBody>(&bytes)
            .map(|b| b.error)
            .unwrap_or_else(|_| {
                ApiError::new(
                    ErrorCode::from_status(status.as_u16()),
                    format!(
                        "{} {} failed: HTTP {}",
                        O::METHOD.as_str().to_uppercase(),
                        O::PATH,
                        status.as_u16()
                    ),
                )
            }))
    }
}

fn unreachable_error(base: &str, e: &reqwest::Error) -> ApiError {
    let what = if e.is_timeout() {
        "did not answer in time".to_owned()
    } else {
        format!("could not be reached: {e}")
    };
    ApiError::new(ErrorCode::NotRunning, format!("MetaClaw at {base} {what}"))
}
