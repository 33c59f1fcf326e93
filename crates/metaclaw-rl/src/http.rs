//! The one way RL's helper models (judge, teacher) are called: a client with their timeout,
//! JSON POST to an OpenAI-compatible endpoint, the endpoint and status in every error.

use serde_json::Value;

use crate::error::RlError;

/// A client for one helper model; `what` names it in the error.
pub(crate) fn client(timeout: std::time::Duration, what: &str) -> Result<reqwest::Client, RlError> {
    reqwest::Client::builder()
        .timeout(timeout)
        .build()
        .map_err(|e| RlError::Config(format!("{what} HTTP client: {e}")))
}

pub(crate) async fn post_json(
    http: &reqwest::Client,
    url: &str,
    api_key: &str,
    body: &Value,
) -> Result<Value, RlError> {
    let mut req = http.post(url).json(body);
    if !api_key.is_empty() {
        req = req.bearer_auth(api_key);
    }
    let resp = req
        .send()
        .await
        .map_err(|e| RlError::Http(format!("{url}: {e}")))?;
    let status = resp.status();
    let value: Value = resp
        .json()
        .await
        .map_err(|e| RlError::Http(format!("{url}: invalid JSON: {e}")))?;
    if !status.is_success() {
        return Err(RlError::Http(format!("{url}: HTTP {status}: {value}")));
    }
    Ok(value)
}
