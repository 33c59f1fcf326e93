//! `POST /v1/messages/count_tokens` (Anthropic): what the upstream counts when it is
//! Anthropic, otherwise the estimate `max_context_tokens` truncation works with, so an agent
//! planning its context sees the numbers the proxy will act on.

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use metaclaw_domain::Dialect;
use serde_json::{Value, json};

use crate::body;
use crate::error::{ProxyError, json_response, upstream_message};
use crate::forward;
use crate::state::ProxyState;
use crate::truncate;

pub(crate) async fn serve(state: ProxyState, headers: HeaderMap, raw: Body) -> Response {
    match count(&state, &headers, raw).await {
        Ok(resp) => resp,
        Err(err) => err.into_response_for(Dialect::Anthropic),
    }
}

async fn count(state: &ProxyState, headers: &HeaderMap, raw: Body) -> Result<Response, ProxyError> {
    let inner = state.inner();
    crate::auth::check_caller(headers, &inner.settings)?;
    let mut body = body::read_json_object(raw, inner.settings.max_body_bytes).await?;
    body::validate_messages(&body)?;
    let up = &inner.settings.upstream;
    if up.dialect != Dialect::Anthropic {
        let tokens = truncate::prompt_tokens(&body, Dialect::Anthropic, inner.counter.as_ref());
        return Ok(json_response(
            StatusCode::OK,
            &json!({"input_tokens": tokens}),
        ));
    }
    if let Some(model) = &inner.settings.model_override {
        body.insert("model".into(), Value::String(model.clone()));
    }
    let payload = serde_json::to_vec(&body)
        .map_err(|e| ProxyError::bad_request(format!("could not encode the request: {e}")))?;
    let resp = forward::send(
        &inner,
        headers,
        up.count_tokens_url(),
        payload,
        Dialect::Anthropic,
    )
    .await?;
    let status = resp.status();
    let bytes = resp.bytes().await.map_err(|e| {
        ProxyError::UpstreamUnreachable(format!("the upstream response broke off: {e}"))
    })?;
    if !status.is_success() {
        let body: Value = serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
        tracing::debug!(status = status.as_u16(), message = %upstream_message(&body), "count_tokens refused upstream");
        let status = StatusCode::from_u16(status.as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
        return Err(ProxyError::Upstream { status, body });
    }
    let mut response = Response::new(Body::from(bytes));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Ok(response)
}
