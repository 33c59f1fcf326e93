//! The one way RL's helper models (judge, teacher) are called: JSON POST to an
//! OpenAI-compatible endpoint, with the endpoint and status in every error.

use serde_json::Value;

use crate::error::RlError;

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
