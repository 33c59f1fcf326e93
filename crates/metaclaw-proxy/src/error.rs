use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use metaclaw_domain::Dialect;
use serde_json::{Value, json};

/// A failure on the `/v1` surface, rendered in the shape of the API the client speaks.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    #[error("{message}")]
    BadRequest {
        message: String,
        param: Option<String>,
    },
    #[error("missing or invalid API key: {0}")]
    Unauthorized(&'static str),
    #[error("request body is larger than the {limit}-byte limit (proxy.max_body_bytes)")]
    TooLarge { limit: u64 },
    #[error("upstream request timed out after {0} s (llm.timeout_seconds)")]
    UpstreamTimeout(u64),
    #[error("upstream unreachable: {0}")]
    UpstreamUnreachable(String),
    /// The upstream answered with an HTTP error; its body is kept as it was.
    #[error("upstream returned HTTP {status}")]
    Upstream { status: StatusCode, body: Value },
    #[error("{0}")]
    Unsupported(String),
    /// The in-process model (RL policy) is not ready to serve.
    #[error("model not ready: {0}")]
    ModelUnavailable(String),
    /// The in-process model failed while answering.
    #[error("model error: {0}")]
    ModelFailed(String),
}

impl ProxyError {
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::BadRequest {
            message: message.into(),
            param: None,
        }
    }

    pub fn bad_param(param: &str, message: impl Into<String>) -> Self {
        Self::BadRequest {
            message: message.into(),
            param: Some(param.to_owned()),
        }
    }

    pub fn status(&self) -> StatusCode {
        match self {
            Self::BadRequest { .. } | Self::Unsupported(_) => StatusCode::BAD_REQUEST,
            Self::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            Self::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UpstreamTimeout(_) => StatusCode::GATEWAY_TIMEOUT,
            Self::UpstreamUnreachable(_) | Self::ModelFailed(_) => StatusCode::BAD_GATEWAY,
            Self::ModelUnavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::Upstream { status, .. } => *status,
        }
    }

    /// Render as the error body of `dialect`.
    pub fn body(&self, dialect: Dialect) -> Value {
        if let Self::Upstream { status, body } = self {
            return upstream_error_body(*status, body, dialect);
        }
        let message = self.to_string();
        match dialect {
            Dialect::OpenAi => {
                let (kind, code) = match self {
                    Self::BadRequest { .. } | Self::Unsupported(_) | Self::TooLarge { .. } => {
                        ("invalid_request_error", Value::Null)
                    }
                    Self::Unauthorized(_) => ("invalid_request_error", json!("invalid_api_key")),
                    Self::UpstreamTimeout(_) => ("timeout_error", json!("upstream_timeout")),
                    Self::ModelUnavailable(_) => ("api_error", json!("model_not_ready")),
                    Self::ModelFailed(_) => ("api_error", json!("model_error")),
                    _ => ("api_error", json!("upstream_unreachable")),
                };
                let param = match self {
                    Self::BadRequest { param: Some(p), .. } => json!(p),
                    _ => Value::Null,
                };
                json!({"error": {"message": message, "type": kind, "param": param, "code": code}})
            }
            Dialect::Anthropic => anthropic_error(self.status(), &message),
        }
    }

    pub fn into_response_for(self, dialect: Dialect) -> Response {
        let status = self.status();
        let body = self.body(dialect);
        let mut resp = json_response(status, &body);
        if self.leaves_body_unread() {
            resp.headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        resp
    }

    /// The caller's key is checked before the body is read, and a body over the limit is not
    /// read to its end. hyper will not reuse such a connection, so the response must say it
    /// closes, or a keep-alive client's next request on it finds it dead.
    fn leaves_body_unread(&self) -> bool {
        matches!(self, Self::Unauthorized(_) | Self::TooLarge { .. })
    }
}

pub(crate) fn json_response(status: StatusCode, body: &Value) -> Response {
    let mut resp = (status, body.to_string()).into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}

pub(crate) fn anthropic_error_type(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 | 422 => "invalid_request_error",
        401 => "authentication_error",
        402 => "billing_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        504 => "timeout_error",
        529 | 503 => "overloaded_error",
        _ => "api_error",
    }
}

pub(crate) fn anthropic_error(status: StatusCode, message: &str) -> Value {
    json!({"type": "error", "error": {"type": anthropic_error_type(status), "message": message}})
}

/// Pull a human message out of whatever error body an upstream sent.
pub(crate) fn upstream_message(body: &Value) -> String {
    let candidates = [
        body.pointer("/error/message"),
        body.pointer("/message"),
        body.pointer("/error").filter(|v| v.is_string()),
        body.pointer("/detail").filter(|v| v.is_string()),
    ];
    candidates
        .into_iter()
        .flatten()
        .find_map(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| match body {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
}

/// Keep the upstream's own error when it already has the client's shape, otherwise rewrap it.
fn upstream_error_body(status: StatusCode, body: &Value, dialect: Dialect) -> Value {
    match dialect {
        Dialect::OpenAi if body.pointer("/error/message").is_some_and(Value::is_string) => {
            body.clone()
        }
        Dialect::Anthropic
            if body.get("type").and_then(Value::as_str) == Some("error")
                && body.pointer("/error/type").is_some() =>
        {
            body.clone()
        }
        Dialect::OpenAi => {
            let kind = match status.as_u16() {
                400..=499 => "invalid_request_error",
                _ => "api_error",
            };
            json!({"error": {
                "message": format!("upstream returned HTTP {}: {}", status.as_u16(), upstream_message(body)),
                "type": kind, "param": null, "code": null}})
        }
        Dialect::Anthropic => anthropic_error(status, &upstream_message(body)),
    }
}
