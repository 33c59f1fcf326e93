//! The public `/v1` surface: OpenAI chat completions and Anthropic messages in front of the
//! user's LLM, with true streaming passthrough, session tracking and hooks.
//!
//! This crate knows the wire formats and nothing about storage or skills; those plug in
//! through [`TurnHook`].

mod anthropic;
mod auth;
mod body;
mod capture;
mod credential;
mod error;
mod forward;
mod hooks;
mod local;
mod session;
mod settings;
mod state;
mod truncate;
mod turn;
mod upstream_exercise;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use metaclaw_domain::Dialect;
use serde_json::json;

pub use anthropic::stream::AnthropicEncoder;
pub use anthropic::translate::{request_to_openai, response_to_anthropic};
pub use auth::constant_time_eq;
pub use body::{parse_object, validate_chat, validate_messages};
pub use capture::{Assembled, assemble};
pub use error::ProxyError;
pub use hooks::{HookFuture, Hooks, PreparedRequest, TurnContext, TurnHook};
pub use local::{LocalError, LocalFuture, LocalModel};
pub use session::{Assigned, SessionHints, SessionTracker};
pub use settings::{ProxySettings, UpstreamSettings};
pub use state::{ProxyState, ProxyStateBuilder};
pub use truncate::{EstimateCounter, TokenCounter, truncate};
#[doc(hidden)]
pub use upstream_exercise::{UpstreamExercise, exercise_upstream};

/// Routes under `/v1`. Mount at the root of the daemon's router.
pub fn router(state: ProxyState) -> Router {
    Router::new()
        .route("/v1/chat/completions", post(chat_completions))
        .route("/v1/messages", post(messages))
        .route("/v1/models", get(models))
        .route("/v1/{*rest}", axum::routing::any(not_found))
        .with_state(state)
}

async fn chat_completions(
    State(state): State<ProxyState>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    forward::serve(state, headers, body, Dialect::OpenAi).await
}

async fn messages(State(state): State<ProxyState>, headers: HeaderMap, body: Body) -> Response {
    forward::serve(state, headers, body, Dialect::Anthropic).await
}

async fn models(State(state): State<ProxyState>, headers: HeaderMap) -> Response {
    if let Err(e) = auth::check_caller(&headers, &state.inner().settings) {
        return e.into_response_for(Dialect::OpenAi);
    }
    let body = json!({"object": "list", "data": [{
        "id": state.inner().settings.served_model, "object": "model", "created": 0, "owned_by": "metaclaw"}]});
    error::json_response(StatusCode::OK, &body)
}

async fn not_found(uri: axum::http::Uri) -> Response {
    let body = json!({"error": {"message": format!("unknown endpoint {}", uri.path()),
        "type": "invalid_request_error", "param": null, "code": "unknown_url"}});
    error::json_response(StatusCode::NOT_FOUND, &body)
}

/// Everything the proxy does to an untrusted body before forwarding it, for the fuzz target
/// and the parser robustness tests. Never panics.
pub fn exercise_request_parser(data: &[u8]) {
    use metaclaw_domain::Dialect;
    let Ok(body) = parse_object(data) else { return };
    let headers = HeaderMap::new();
    for dialect in [Dialect::OpenAi, Dialect::Anthropic] {
        let mut b = body.clone();
        let valid = match dialect {
            Dialect::OpenAi => validate_chat(&b).is_ok(),
            Dialect::Anthropic => validate_messages(&b).is_ok(),
        };
        let _ = SessionHints::extract(&headers, &mut b, dialect);
        if valid {
            if dialect == Dialect::Anthropic {
                let openai = request_to_openai(&b);
                let _ = serde_json::to_vec(&openai);
            }
            let mut p = PreparedRequest {
                dialect,
                body: b.clone(),
                injected: vec![],
                skill_generation: None,
            };
            p.append_system("skills");
            truncate(&mut b, 64, dialect, &EstimateCounter);
            truncate(&mut p.body, 4096, dialect, &EstimateCounter);
        }
    }
}
