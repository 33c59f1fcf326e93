//! The public `/v1` surface: OpenAI chat completions, OpenAI Responses and Anthropic messages
//! (with `count_tokens`) in front of the user's LLM, with true streaming passthrough, session
//! tracking and hooks.
//!
//! This crate knows the wire formats and nothing about storage or skills; those plug in
//! through [`TurnHook`].

mod anthropic;
mod auth;
mod body;
mod capture;
mod count_tokens;
mod credential;
mod error;
mod forward;
mod hooks;
mod local;
mod reencode;
mod responses;
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
use serde_json::json;

pub use anthropic::stream::AnthropicEncoder;
pub use anthropic::translate::{request_to_openai, response_to_anthropic};
pub use auth::{AGENT_HEADER, PROXY_KEY_HEADER, constant_time_eq};
pub use body::{parse_object, validate_chat, validate_messages, validate_responses};
pub use capture::{Assembled, assemble, assemble_responses};
pub use error::ProxyError;
pub use hooks::{ClientApi, HookFuture, Hooks, PreparedRequest, TurnContext, TurnHook};
pub use local::{LocalError, LocalFuture, LocalModel};
pub use reencode::Relayed;
pub use responses::response_from_chat;
pub use responses::stream::ResponsesEncoder;
pub use responses::translate::{check_translatable, request_to_chat, response_to_chat};
pub use session::{Assigned, SessionHints, SessionTracker};
pub use settings::{AgentIdentity, ProxySettings, UpstreamSettings};
pub use state::{ProxyState, ProxyStateBuilder};
pub use truncate::{EstimateCounter, TokenCounter, prompt_tokens, truncate, truncate_input};
#[doc(hidden)]
pub use upstream_exercise::{UpstreamExercise, exercise_upstream};

/// Routes under `/v1`. Mount at the root of the daemon's router.
pub fn router(state: ProxyState) -> Router {
    Router::new()
        .route("/v1/chat/completions", post(chat_completions))
        .route("/v1/messages", post(messages))
        .route("/v1/messages/count_tokens", post(count_tokens))
        .route("/v1/responses", post(responses))
        .route("/v1/models", get(models))
        .route("/v1/{*rest}", axum::routing::any(not_found))
        .with_state(state)
}

async fn chat_completions(
    State(state): State<ProxyState>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    forward::serve(state, headers, body, ClientApi::ChatCompletions).await
}

async fn messages(State(state): State<ProxyState>, headers: HeaderMap, body: Body) -> Response {
    forward::serve(state, headers, body, ClientApi::Messages).await
}

async fn responses(State(state): State<ProxyState>, headers: HeaderMap, body: Body) -> Response {
    forward::serve(state, headers, body, ClientApi::Responses).await
}

async fn count_tokens(State(state): State<ProxyState>, headers: HeaderMap, body: Body) -> Response {
    count_tokens::serve(state, headers, body).await
}

async fn models(State(state): State<ProxyState>, headers: HeaderMap) -> Response {
    if let Err(e) = auth::check_caller(&headers, &state.inner().settings) {
        return e.into_response_for(metaclaw_domain::Dialect::OpenAi);
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
    let Ok(body) = parse_object(data) else { return };
    let headers = HeaderMap::new();
    for api in [
        ClientApi::ChatCompletions,
        ClientApi::Messages,
        ClientApi::Responses,
    ] {
        let dialect = api.dialect();
        let mut b = body.clone();
        let valid = match api {
            ClientApi::ChatCompletions => validate_chat(&b).is_ok(),
            ClientApi::Messages => validate_messages(&b).is_ok(),
            ClientApi::Responses => validate_responses(&b).is_ok(),
        };
        let _ = SessionHints::extract(&headers, &mut b, dialect);
        if valid {
            match api {
                ClientApi::Messages => {
                    let openai = request_to_openai(&b);
                    let _ = serde_json::to_vec(&openai);
                    let _ = prompt_tokens(&b, dialect, &EstimateCounter);
                }
                ClientApi::Responses => {
                    let _ = check_translatable(&b);
                    let _ = serde_json::to_vec(&request_to_chat(&b));
                }
                ClientApi::ChatCompletions => {}
            }
            let mut p = PreparedRequest {
                api,
                body: b.clone(),
                injected: vec![],
                skill_generation: None,
            };
            p.append_system("skills");
            let _ = p.messages();
            if api == ClientApi::Responses {
                truncate_input(&mut b, 64, &EstimateCounter);
                truncate_input(&mut p.body, 4096, &EstimateCounter);
            } else {
                truncate(&mut b, 64, dialect, &EstimateCounter);
                truncate(&mut p.body, 4096, dialect, &EstimateCounter);
            }
        }
    }
}
