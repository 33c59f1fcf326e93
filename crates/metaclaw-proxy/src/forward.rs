//! The request path shared by `/v1/chat/completions`, `/v1/messages` and `/v1/responses`:
//! check, assign a session, run hooks, truncate, forward, and relay the answer as it arrives
//! (byte for byte when the upstream speaks the client's API, re-encoded otherwise).

use std::time::Instant;

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use bytes::{Bytes, BytesMut};
use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use metaclaw_domain::Dialect;
use serde_json::{Map, Value, json};

use crate::anthropic::stream::AnthropicEncoder;
use crate::anthropic::translate;
use crate::body;
use crate::error::{ProxyError, anthropic_error_type, upstream_message};
use crate::hooks::{ClientApi, PreparedRequest, TurnContext};
use crate::local::{self, LocalModel};
use crate::reencode::{Reencode, Relayed, write_event};
use crate::responses::{self, stream::ResponsesEncoder};
use crate::session::SessionHints;
use crate::settings::UpstreamSettings;
use crate::state::{Inner, ProxyState};
use crate::truncate;
use crate::turn::TurnGuard;

pub(crate) async fn serve(
    state: ProxyState,
    headers: HeaderMap,
    body: Body,
    api: ClientApi,
) -> Response {
    match serve_turn(&state, &headers, body, api).await {
        Ok(resp) => resp,
        Err(err) => err.into_response_for(api.dialect()),
    }
}

/// How a request reaches the upstream.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Route {
    /// Same API on both sides: the body goes as it is and the answer comes back byte for byte.
    Same,
    /// Anthropic client, chat-completions upstream.
    MessagesToChat,
    /// Responses client, chat-completions upstream.
    ResponsesToChat,
}

impl Route {
    fn pick(api: ClientApi, upstream: &UpstreamSettings) -> Result<Self, ProxyError> {
        match (api, upstream.dialect) {
            (ClientApi::Messages, Dialect::Anthropic) => Ok(Self::Same),
            (ClientApi::Messages, Dialect::OpenAi) => Ok(Self::MessagesToChat),
            (ClientApi::ChatCompletions, Dialect::OpenAi) => Ok(Self::Same),
            (ClientApi::Responses, Dialect::OpenAi) if upstream.responses => Ok(Self::Same),
            (ClientApi::Responses, Dialect::OpenAi) => Ok(Self::ResponsesToChat),
            (ClientApi::ChatCompletions | ClientApi::Responses, Dialect::Anthropic) => {
                Err(ProxyError::Unsupported(
                    "llm.provider is `anthropic`: send Anthropic Messages requests to \
                     /v1/messages, or set llm.api_base to an OpenAI-compatible endpoint"
                        .into(),
                ))
            }
        }
    }

    fn url(self, api: ClientApi, up: &UpstreamSettings) -> String {
        match (self, api) {
            (Self::Same, ClientApi::Messages) => up.messages_url(),
            (Self::Same, ClientApi::Responses) => up.responses_url(),
            _ => up.chat_url(),
        }
    }
}

async fn serve_turn(
    state: &ProxyState,
    headers: &HeaderMap,
    raw: Body,
    api: ClientApi,
) -> Result<Response, ProxyError> {
    let inner = &state.inner();
    let started = Instant::now();
    let started_at = inner.clock.now();
    // The key first (see `ProxyError::leaves_body_unread`), then the whole body.
    let agent = crate::auth::check_caller(headers, &inner.settings)?;
    let mut body = body::read_json_object(raw, inner.settings.max_body_bytes).await?;
    let client = api.dialect();
    let upstream = inner.settings.upstream.dialect;
    let route = Route::pick(api, &inner.settings.upstream)?;
    match api {
        ClientApi::ChatCompletions => body::validate_chat(&body)?,
        ClientApi::Messages => body::validate_messages(&body)?,
        ClientApi::Responses => body::validate_responses(&body)?,
    }
    if route == Route::ResponsesToChat {
        responses::translate::check_translatable(&body)?;
    }
    let hints = SessionHints::extract(headers, &mut body, client);
    let assigned = inner.sessions.assign(&hints);
    if let Some(model) = &inner.settings.model_override {
        body.insert("model".into(), Value::String(model.clone()));
    }
    let ctx = TurnContext {
        turn_id: uuid::Uuid::new_v4().to_string(),
        session_id: assigned.session_id.clone(),
        turn_type: assigned.turn_type,
        dialect: client,
        agent,
    };
    let mut request = PreparedRequest {
        api,
        body,
        injected: Vec::new(),
        skill_generation: None,
    };
    inner.hooks.before_forward(&ctx, &mut request).await;
    let max_context = inner.settings.max_context_tokens;
    let counter = inner.counter.as_ref();
    let dropped = match api {
        ClientApi::Responses => truncate::truncate_input(&mut request.body, max_context, counter),
        _ => truncate::truncate(&mut request.body, max_context, client, counter),
    };
    if dropped > 0 {
        tracing::debug!(turn_id = %ctx.turn_id, dropped, "truncated to max_context_tokens");
    }
    if let Some(local) = inner.local.clone().filter(|l| l.serves(&ctx)) {
        let guard = TurnGuard::new(inner.clone(), ctx, assigned, request, started, started_at);
        return serve_local(local.as_ref(), guard, inner).await;
    }
    let payload = match route {
        Route::MessagesToChat => serde_json::to_vec(&translate::request_to_openai(&request.body)),
        Route::ResponsesToChat => {
            serde_json::to_vec(&responses::translate::request_to_chat(&request.body))
        }
        Route::Same => serde_json::to_vec(&request.body),
    }
    .map_err(|e| ProxyError::bad_request(format!("could not encode the request: {e}")))?;
    let model = request
        .body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let translation = match route {
        Route::Same => None,
        Route::MessagesToChat => Some(Translation::Messages { model }),
        Route::ResponsesToChat => Some(Translation::Responses {
            request: ResponsesEncoder::echo_of(&request.body),
            model,
            created_at: started_at.timestamp(),
        }),
    };

    let mut guard = TurnGuard::new(inner.clone(), ctx, assigned, request, started, started_at);
    let stream = guard.is_stream();
    let url = route.url(api, &inner.settings.upstream);
    let resp = match send(inner, headers, url, payload, upstream).await {
        Ok(r) => r,
        Err(e) => {
            guard.unreachable(e.status().as_u16(), e.to_string());
            return Err(e);
        }
    };
    let status = resp.status();
    if !status.is_success() {
        let bytes = resp.bytes().await.unwrap_or_default();
        let body: Value = serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
        let message = upstream_message(&body);
        guard.upstream_error(status.as_u16(), &bytes, message);
        let status = StatusCode::from_u16(status.as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
        return Err(ProxyError::Upstream { status, body });
    }
    let ids = turn_headers(guard.ctx());
    let mut response = match (stream, translation) {
        (true, None) => sse_response(Body::from_stream(passthrough(guard, resp, api))),
        (true, Some(t)) => sse_response(Body::from_stream(translated(guard, resp, t.encoder()))),
        (false, t) => relay_whole(guard, resp, t, inner).await?,
    };
    response.headers_mut().extend(ids);
    Ok(response)
}

/// What a translated answer is turned into, with what it needs for that.
enum Translation {
    Messages {
        model: String,
    },
    Responses {
        /// The settings of the request as forwarded, which a response object echoes.
        request: Map<String, Value>,
        model: String,
        created_at: i64,
    },
}

impl Translation {
    fn encoder(self) -> Box<dyn Reencode> {
        match self {
            Self::Messages { model } => Box::new(AnthropicEncoder::new(&model)),
            Self::Responses {
                request,
                model,
                created_at,
            } => Box::new(ResponsesEncoder::new(&request, &model, created_at)),
        }
    }

    /// A whole chat completion in the client's API.
    fn whole(&self, completion: &Value) -> Value {
        match self {
            Self::Messages { model } => translate::response_to_anthropic(completion, model),
            Self::Responses {
                request,
                model,
                created_at,
            } => responses::response_from_chat(completion, request, model, *created_at),
        }
    }
}

/// Answers from the in-process model and shapes the answer like an upstream's.
async fn serve_local(
    local: &dyn LocalModel,
    mut guard: TurnGuard,
    inner: &Inner,
) -> Result<Response, ProxyError> {
    let api = guard.request().api;
    let body = &guard.request().body;
    let request = local::openai_request(api, body);
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let include_usage = body
        .get("stream_options")
        .and_then(|o| o.get("include_usage"))
        .and_then(Value::as_bool)
        == Some(true);
    let shape = local::Shape {
        api,
        model,
        include_usage,
        responses_request: (api == ClientApi::Responses).then(|| ResponsesEncoder::echo_of(body)),
        created_at: inner.clock.now().timestamp(),
    };
    let completion = match local.complete(guard.ctx(), request).await {
        Ok(c) => c,
        Err(e) => {
            let err = ProxyError::from(e);
            guard.unreachable(err.status().as_u16(), err.to_string());
            return Err(err);
        }
    };
    let ids = turn_headers(guard.ctx());
    let mut response = if guard.is_stream() {
        let events = shape.events(&completion);
        for e in &events {
            guard.on_chunk(e);
        }
        guard.complete();
        let stream =
            futures_util::stream::iter(events.into_iter().map(Ok::<_, std::convert::Infallible>));
        sse_response(Body::from_stream(stream))
    } else {
        whole_response(guard, shape.whole(&completion))
    };
    response.headers_mut().extend(ids);
    Ok(response)
}

fn turn_headers(ctx: &TurnContext) -> HeaderMap {
    let mut h = HeaderMap::new();
    if let Ok(v) = HeaderValue::from_str(&ctx.session_id) {
        h.insert("x-metaclaw-session-id", v);
    }
    if let Ok(v) = HeaderValue::from_str(&ctx.turn_id) {
        h.insert("x-metaclaw-turn-id", v);
    }
    h
}

pub(crate) async fn send(
    inner: &Inner,
    client_headers: &HeaderMap,
    url: String,
    payload: Vec<u8>,
    upstream: Dialect,
) -> Result<reqwest::Response, ProxyError> {
    let up = &inner.settings.upstream;
    // A first run before onboarding: say what to do instead of an HTTP client error about a
    // relative URL.
    if up.api_base.is_empty() {
        return Err(ProxyError::UpstreamUnreachable(
            "no upstream LLM is configured (llm.api_base is empty); choose one in the MetaClaw \
             dashboard (`metaclaw dashboard` or the desktop app) or with `metaclaw setup`"
                .into(),
        ));
    }
    let mut rb = inner
        .client
        .post(url)
        .header(header::CONTENT_TYPE, "application/json")
        .body(payload);
    rb = crate::credential::apply(rb, client_headers, &inner.settings, upstream);
    if upstream == Dialect::OpenAi && up.is_openrouter() {
        rb = rb
            .header("HTTP-Referer", "https://metaclaw.local")
            .header("X-Title", "MetaClaw");
    }
    let timeout_secs = up.timeout.as_secs();
    match tokio::time::timeout(up.timeout, rb.send()).await {
        Err(_) => Err(ProxyError::UpstreamTimeout(timeout_secs)),
        Ok(Err(e)) if e.is_timeout() => Err(ProxyError::UpstreamTimeout(timeout_secs)),
        Ok(Err(e)) => Err(ProxyError::UpstreamUnreachable(describe(&e))),
        Ok(Ok(r)) => Ok(r),
    }
}

/// The innermost cause is the readable one ("Connection refused (os error 111)").
fn describe(e: &(dyn std::error::Error + 'static)) -> String {
    let mut last = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        last = s.to_string();
        source = s.source();
    }
    let top = e.to_string();
    if top.contains(&last) {
        top
    } else {
        format!("{top}: {last}")
    }
}

async fn relay_whole(
    mut guard: TurnGuard,
    resp: reqwest::Response,
    translation: Option<Translation>,
    inner: &Inner,
) -> Result<Response, ProxyError> {
    let timeout = inner.settings.upstream.timeout;
    let bytes = match tokio::time::timeout(timeout, resp.bytes()).await {
        Ok(Ok(b)) => b,
        Ok(Err(e)) if !e.is_timeout() => {
            let err = ProxyError::UpstreamUnreachable(format!(
                "the upstream response broke off: {}",
                describe(&e)
            ));
            guard.unreachable(502, err.to_string());
            return Err(err);
        }
        _ => {
            let err = ProxyError::UpstreamTimeout(timeout.as_secs());
            guard.unreachable(504, err.to_string());
            return Err(err);
        }
    };
    let Some(translation) = translation else {
        return Ok(whole_response(guard, bytes));
    };
    let parsed: Value = serde_json::from_slice(&bytes).map_err(|e| {
        let err = ProxyError::UpstreamUnreachable(format!(
            "the upstream answered with invalid JSON: {e}"
        ));
        guard.unreachable(502, err.to_string());
        err
    })?;
    let out = Bytes::from(translation.whole(&parsed).to_string());
    Ok(whole_response(guard, out))
}

/// A complete JSON answer: recorded as the turn's response, then sent.
fn whole_response(mut guard: TurnGuard, out: Bytes) -> Response {
    guard.on_chunk(&out);
    guard.complete();
    let mut response = Response::new(Body::from(out));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn sse_response(body: Body) -> Response {
    let mut response = Response::new(body);
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// The event a client sees when the upstream stream breaks off midway.
fn broken_event(api: ClientApi, message: &str) -> Bytes {
    let mut out = BytesMut::new();
    match api {
        ClientApi::ChatCompletions => {
            let data = json!({"error": {"message": message, "type": "api_error", "param": null,
                "code": "upstream_stream_broken"}});
            out.extend_from_slice(format!("data: {data}\n\n").as_bytes());
        }
        ClientApi::Responses => write_event(
            &mut out,
            "error",
            &json!({"type": "error", "code": "upstream_stream_broken", "message": message,
                "param": null}),
        ),
        ClientApi::Messages => write_event(
            &mut out,
            "error",
            &json!({"type": "error", "error": {"type": anthropic_error_type(StatusCode::BAD_GATEWAY), "message": message}}),
        ),
    }
    out.freeze()
}

/// Same dialect on both sides: forward each upstream chunk untouched, as it arrives.
fn passthrough(
    guard: TurnGuard,
    resp: reqwest::Response,
    api: ClientApi,
) -> impl futures_util::Stream<Item = Result<Bytes, std::convert::Infallible>> + Send {
    let upstream = resp.bytes_stream();
    futures_util::stream::unfold(
        (upstream, guard, false),
        move |(mut up, mut guard, done)| async move {
            if done {
                return None;
            }
            match up.next().await {
                Some(Ok(chunk)) => {
                    guard.on_chunk(&chunk);
                    Some((Ok(chunk), (up, guard, false)))
                }
                Some(Err(e)) => {
                    let message = format!("the upstream stream broke off: {}", describe(&e));
                    let event = broken_event(api, &message);
                    guard.on_chunk(&event);
                    guard.broken(message);
                    Some((Ok(event), (up, guard, true)))
                }
                None => {
                    guard.complete();
                    None
                }
            }
        },
    )
}

/// Chat-completions upstream, another API's client: re-encode each chunk as the client's
/// events.
fn translated(
    guard: TurnGuard,
    resp: reqwest::Response,
    encoder: Box<dyn Reencode>,
) -> impl futures_util::Stream<Item = Result<Bytes, std::convert::Infallible>> + Send {
    let events = resp.bytes_stream().eventsource();
    futures_util::stream::unfold(
        (events, guard, encoder, false),
        |(mut events, mut guard, mut enc, done)| async move {
            if done {
                return None;
            }
            loop {
                let mut out = BytesMut::new();
                let mut finished = false;
                match events.next().await {
                    Some(Ok(ev)) => match enc.on_event(&ev.data, &mut out) {
                        Relayed::More => {}
                        Relayed::Done => {
                            guard.complete();
                            finished = true;
                        }
                        Relayed::Broken(message) => {
                            guard.broken(message);
                            finished = true;
                        }
                    },
                    Some(Err(e)) => {
                        let message = format!("the upstream stream broke off: {e}");
                        enc.on_broken(&message, &mut out);
                        guard.broken(message);
                        finished = true;
                    }
                    None => {
                        // Some servers end without `[DONE]`; a stream cut before any finish is broken.
                        enc.on_end(&mut out);
                        guard.complete();
                        finished = true;
                    }
                }
                if out.is_empty() {
                    if finished {
                        return None;
                    }
                    continue;
                }
                guard.on_chunk(&out);
                return Some((Ok(out.freeze()), (events, guard, enc, finished)));
            }
        },
    )
}
