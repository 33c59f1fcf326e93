//! A fast, deterministic mock LLM provider (OpenAI-compatible + Anthropic native) with
//! scripted faults, used to test and benchmark the MetaClaw proxy.
//!
//! Endpoints: `POST /v1/chat/completions`, `POST /v1/messages` (and `/count_tokens`),
//! `POST /v1/responses`, `GET /v1/models`, `POST /v1/embeddings`; control API under `/_mock/` (`POST script`, `POST reset`,
//! `GET requests`, `GET stats`). See [`Behaviour`] for the scriptable behaviours.

mod behaviour;
mod body;
mod embed;
pub mod recorded;
mod render;

use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::serve::ListenerExt;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub use behaviour::{Behaviour, ToolCallSpec};
pub use embed::fake_embedding;

use body::ScriptStream;
use render::{Answer, Ctx, End, Step};

/// Tuning knobs; [`MockOptions::default`] is what [`MockUpstream::start`] uses.
#[derive(Clone, Debug)]
pub struct MockOptions {
    /// Number of content deltas a streamed reply is split into (at most one char each).
    pub stream_chunks: usize,
    /// Record requests for [`MockUpstream::requests`] (turn off for benchmarks).
    pub record_requests: bool,
    /// Keep at most this many recorded requests (oldest dropped first).
    pub max_recorded: usize,
}

impl Default for MockOptions {
    fn default() -> Self {
        Self {
            stream_chunks: 4,
            record_requests: true,
            max_recorded: 10_000,
        }
    }
}

/// One request the mock received (control requests under `/_mock/` are not recorded).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct RecordedRequest {
    /// 1-based arrival number (matches [`MockStats::requests`] at arrival).
    pub seq: u64,
    pub method: String,
    pub path: String,
    #[serde(default)]
    pub query: Option<String>,
    /// Lowercased names; repeated headers joined with ", ".
    pub headers: BTreeMap<String, String>,
    /// The parsed JSON body; `null` when empty, `{"_raw": "..."}` when not JSON.
    pub body: Value,
    /// Seconds since the Unix epoch.
    pub received_at: f64,
}

impl RecordedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct MockStats {
    /// Requests received (all non-control endpoints).
    pub requests: u64,
    /// Streamed bodies dropped before their end (the client/proxy went away).
    pub cancelled_streams: u64,
    /// Streamed bodies that were sent to the end.
    pub completed_streams: u64,
    /// Bodies aborted on purpose (`reset_mid_stream`).
    pub reset_streams: u64,
    /// `delay_ms`/`hang` requests whose client went away before the answer.
    pub aborted_requests: u64,
    /// Behaviours still queued.
    pub queued: u64,
}

pub(crate) struct Shared {
    opts: MockOptions,
    queue: Mutex<VecDeque<Behaviour>>,
    recorded: Mutex<VecDeque<RecordedRequest>>,
    requests: AtomicU64,
    pub(crate) cancelled_streams: AtomicU64,
    pub(crate) completed_streams: AtomicU64,
    pub(crate) reset_streams: AtomicU64,
    aborted_requests: AtomicU64,
    pub(crate) shutdown: CancellationToken,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    fn new(opts: MockOptions) -> Self {
        Self {
            opts,
            queue: Mutex::new(VecDeque::new()),
            recorded: Mutex::new(VecDeque::new()),
            requests: AtomicU64::new(0),
            cancelled_streams: AtomicU64::new(0),
            completed_streams: AtomicU64::new(0),
            reset_streams: AtomicU64::new(0),
            aborted_requests: AtomicU64::new(0),
            shutdown: CancellationToken::new(),
        }
    }

    fn push(&self, b: Behaviour) {
        // Scripts from Rust name recordings that exist; a typo is the test's bug.
        let b = b
            .resolve()
            .unwrap_or_else(|e| panic!("mock upstream script: {e}"));
        lock(&self.queue).push_back(b);
    }

    fn pop(&self, path: &str, last_user_text: &str) -> Option<Behaviour> {
        let mut q = lock(&self.queue);
        if q.is_empty() {
            return None;
        }
        let idx = q.iter().position(|b| b.applies(path, last_user_text))?;
        q.remove(idx).map(Behaviour::unwrap_match)
    }

    fn stats(&self) -> MockStats {
        MockStats {
            requests: self.requests.load(Ordering::Relaxed),
            cancelled_streams: self.cancelled_streams.load(Ordering::Relaxed),
            completed_streams: self.completed_streams.load(Ordering::Relaxed),
            reset_streams: self.reset_streams.load(Ordering::Relaxed),
            aborted_requests: self.aborted_requests.load(Ordering::Relaxed),
            queued: lock(&self.queue).len() as u64,
        }
    }

    fn reset(&self) {
        lock(&self.queue).clear();
        lock(&self.recorded).clear();
        for c in [
            &self.requests,
            &self.cancelled_streams,
            &self.completed_streams,
            &self.reset_streams,
            &self.aborted_requests,
        ] {
            c.store(0, Ordering::Relaxed);
        }
    }

    fn record(&self, seq: u64, method: &Method, uri: &Uri, headers: &HeaderMap, body: Value) {
        if !self.opts.record_requests {
            return;
        }
        let mut hmap: BTreeMap<String, String> = BTreeMap::new();
        for (k, v) in headers {
            let v = String::from_utf8_lossy(v.as_bytes());
            hmap.entry(k.as_str().to_owned())
                .and_modify(|e| {
                    e.push_str(", ");
                    e.push_str(&v);
                })
                .or_insert_with(|| v.into_owned());
        }
        let rec = RecordedRequest {
            seq,
            method: method.as_str().to_owned(),
            path: uri.path().to_owned(),
            query: uri.query().map(str::to_owned),
            headers: hmap,
            body,
            received_at: now_secs(),
        };
        let mut r = lock(&self.recorded);
        if r.len() >= self.opts.max_recorded.max(1) {
            r.pop_front();
        }
        r.push_back(rec);
    }

    /// Counts a request, parses its body once and records it. Returns (seq, parsed body).
    fn arrive(
        &self,
        method: &Method,
        uri: &Uri,
        headers: &HeaderMap,
        body: &Bytes,
    ) -> (u64, Result<Value, ()>) {
        let seq = self.requests.fetch_add(1, Ordering::Relaxed) + 1;
        let parsed: Result<Value, ()> = if body.is_empty() {
            Ok(Value::Null)
        } else {
            serde_json::from_slice(body).map_err(|_| ())
        };
        if self.opts.record_requests {
            let stored = match &parsed {
                Ok(v) => v.clone(),
                Err(()) => json!({"_raw": String::from_utf8_lossy(body)}),
            };
            self.record(seq, method, uri, headers, stored);
        }
        (seq, parsed)
    }
}

fn now_secs() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// A running mock upstream. Dropping it without [`MockUpstream::stop`] still shuts the server
/// down in the background.
pub struct MockUpstream {
    shared: Arc<Shared>,
    addr: SocketAddr,
    task: Option<JoinHandle<io::Result<()>>>,
}

impl MockUpstream {
    /// Starts on `127.0.0.1:0` on the current tokio runtime.
    pub async fn start() -> io::Result<MockUpstream> {
        Self::start_with(0, MockOptions::default()).await
    }

    pub async fn start_on(port: u16) -> io::Result<MockUpstream> {
        Self::start_with(port, MockOptions::default()).await
    }

    pub async fn start_with(port: u16, opts: MockOptions) -> io::Result<MockUpstream> {
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::new(opts));
        let app = router(shared.clone());
        let token = shared.shutdown.clone();
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let task = tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async move { token.cancelled().await })
                .await
        });
        Ok(MockUpstream {
            shared,
            addr,
            task: Some(task),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// `http://127.0.0.1:PORT/v1` — an OpenAI-style base URL.
    pub fn openai_base(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// `http://127.0.0.1:PORT` — an Anthropic-style base URL (the SDK appends `/v1/messages`).
    pub fn anthropic_base(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Queues a behaviour for a later request.
    pub fn push(&self, b: Behaviour) {
        self.shared.push(b);
    }

    pub fn push_all(&self, bs: impl IntoIterator<Item = Behaviour>) {
        bs.into_iter().for_each(|b| self.shared.push(b));
    }

    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.recorded).iter().cloned().collect()
    }

    pub fn stats(&self) -> MockStats {
        self.shared.stats()
    }

    /// Clears the queue, the recorded requests and the counters.
    pub fn reset(&self) {
        self.shared.reset();
    }

    /// Polls the stats until `pred` holds or `timeout` passes; returns the last stats and whether it held.
    pub async fn wait_for_stats(
        &self,
        timeout: Duration,
        pred: impl Fn(&MockStats) -> bool,
    ) -> (MockStats, bool) {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let s = self.stats();
            if pred(&s) {
                return (s, true);
            }
            if tokio::time::Instant::now() >= deadline {
                return (s, false);
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Graceful shutdown: hanging/slow responses are cut short; waits for the server task
    /// (aborting it after 5 s).
    pub async fn stop(mut self) {
        self.shared.shutdown.cancel();
        if let Some(mut task) = self.task.take()
            && tokio::time::timeout(Duration::from_secs(5), &mut task)
                .await
                .is_err()
        {
            task.abort();
            let _ = task.await;
        }
    }
}

impl Drop for MockUpstream {
    fn drop(&mut self) {
        self.shared.shutdown.cancel();
    }
}

// ---------------------------------------------------------------------------- routing

pub(crate) fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/v1/chat/completions", post(llm))
        .route("/v1/messages", post(llm))
        .route("/v1/messages/count_tokens", post(count_tokens))
        .route("/v1/responses", post(llm))
        .route("/v1/models", get(models))
        .route("/v1/embeddings", post(embeddings))
        .route("/_mock/script", post(ctl_script))
        .route("/_mock/reset", post(ctl_reset))
        .route("/_mock/requests", get(ctl_requests))
        .route("/_mock/stats", get(ctl_stats))
        .fallback(not_found)
        .layer(DefaultBodyLimit::disable())
        .with_state(shared)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    OpenAi,
    Anthropic,
    /// OpenAI's Responses API; errors have OpenAI's shape.
    Responses,
}

fn json_response(status: StatusCode, v: &Value, seq: u64) -> Response {
    let body = serde_json::to_vec(v).expect("serialize");
    let mut resp = Response::new(Body::from(body));
    *resp.status_mut() = status;
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if let Ok(v) = HeaderValue::from_str(&format!("req_mock_{seq}")) {
        h.insert(HeaderName::from_static("x-request-id"), v.clone());
        h.insert(HeaderName::from_static("request-id"), v);
    }
    resp
}

fn error_response(
    api: Api,
    status: u16,
    body: Option<Value>,
    headers: &BTreeMap<String, String>,
    seq: u64,
) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let body = body.unwrap_or_else(|| recorded::default_for(api, status.as_u16()).body.clone());
    let mut resp = json_response(status, &body, seq);
    for (k, v) in headers {
        if let (Ok(k), Ok(v)) = (
            HeaderName::from_bytes(k.to_ascii_lowercase().as_bytes()),
            HeaderValue::from_str(v),
        ) {
            resp.headers_mut().insert(k, v);
        }
    }
    resp
}

fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => {
            let mut out = String::new();
            for p in parts {
                if matches!(
                    p.get("type").and_then(Value::as_str),
                    Some("text" | "input_text")
                ) && let Some(t) = p.get("text").and_then(Value::as_str)
                {
                    out.push_str(t);
                }
            }
            out
        }
        _ => String::new(),
    }
}

const INTERNAL_CONTEXT: &str = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>";

/// The text of the last `user` message that has any text, skipping OpenClaw's internal-context
/// carrier (so tool results, which carry no user text, fall back to the question before them).
pub fn last_user_text(body: &Value) -> String {
    if let Some(Value::String(s)) = body.get("input") {
        return s.clone();
    }
    let Some(msgs) = body
        .get("messages")
        .or_else(|| body.get("input"))
        .and_then(Value::as_array)
    else {
        return String::new();
    };
    for m in msgs.iter().rev() {
        if m.get("role").and_then(Value::as_str) != Some("user") {
            continue;
        }
        let t = m.get("content").map(text_of).unwrap_or_default();
        if t.trim().is_empty() || t.trim_start().starts_with(INTERNAL_CONTEXT) {
            continue;
        }
        return t;
    }
    String::new()
}

/// Anthropic's token counter: a deterministic count of the body's size, so a test can tell
/// a forwarded answer from the proxy's own estimate.
async fn count_tokens(
    State(sh): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (seq, parsed) = sh.arrive(&method, &uri, &headers, &body);
    match parsed {
        Ok(Value::Object(_)) => json_response(
            StatusCode::OK,
            &json!({"input_tokens": 1000 + body.len() as u64}),
            seq,
        ),
        _ => error_response(Api::Anthropic, 400, None, &BTreeMap::new(), seq),
    }
}

/// Counts `delay_ms`/`hang` requests abandoned by their client.
struct WaitGuard<'a>(&'a Shared, bool);

impl Drop for WaitGuard<'_> {
    fn drop(&mut self) {
        if !self.1 {
            self.0.aborted_requests.fetch_add(1, Ordering::Relaxed);
        }
    }
}

async fn llm(
    State(sh): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let api = match uri.path() {
        "/v1/messages" => Api::Anthropic,
        "/v1/responses" => Api::Responses,
        _ => Api::OpenAi,
    };
    let (seq, parsed) = sh.arrive(&method, &uri, &headers, &body);
    let Ok(req) = parsed else {
        return error_response(api, 400, None, &BTreeMap::new(), seq);
    };
    if !req.is_object() {
        return error_response(api, 400, None, &BTreeMap::new(), seq);
    }
    let last_user = last_user_text(&req);
    let mut behaviour = sh.pop(uri.path(), &last_user);
    let stream = req.get("stream").and_then(Value::as_bool).unwrap_or(false);
    let ctx = Ctx {
        seq,
        model: req
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or("mock-model")
            .to_owned(),
        include_usage: req
            .pointer("/stream_options/include_usage")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        prompt_tokens: (body.len() as u64 / 4).max(1),
        created: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        chunks: sh.opts.stream_chunks.max(1),
    };
    drop(req);

    // Resolve waits and errors first.
    let answer = loop {
        match behaviour {
            Some(Behaviour::DelayMs { ms, then }) => {
                let mut guard = WaitGuard(&sh, false);
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(ms)) => {}
                    _ = sh.shutdown.cancelled() => {
                        guard.1 = true;
                        return error_response(api, 503, None, &BTreeMap::new(), seq);
                    }
                }
                guard.1 = true;
                behaviour = then.map(|b| b.unwrap_match());
            }
            Some(Behaviour::Hang) => {
                let mut guard = WaitGuard(&sh, false);
                sh.shutdown.cancelled().await;
                guard.1 = true;
                return error_response(api, 503, None, &BTreeMap::new(), seq);
            }
            Some(Behaviour::Match { then, .. }) => behaviour = Some(then.unwrap_match()),
            Some(Behaviour::Error {
                status,
                body,
                headers,
            }) => return error_response(api, status, body, &headers, seq),
            other => break plan(other, &last_user, ctx.chunks),
        }
    };

    if !stream {
        return match answer.end {
            End::StreamError {
                status, message, ..
            } => {
                let body = recorded::body(api, status, &message);
                error_response(api, status, Some(body), &BTreeMap::new(), seq)
            }
            End::Reset { .. } | End::Normal => {
                if let Some(d) = answer.interval {
                    tokio::time::sleep(d * answer.content.len() as u32).await;
                }
                let v = match api {
                    Api::OpenAi => render::openai_json(&ctx, &answer),
                    Api::Anthropic => render::anthropic_json(&ctx, &answer),
                    Api::Responses => render::responses_json(&ctx, &answer),
                };
                if matches!(answer.end, End::Reset { .. }) {
                    // Promise the whole body, send half of it, then abort the connection.
                    let full = serde_json::to_vec(&v).expect("serialize");
                    let len = full.len();
                    let half = Bytes::from(full).slice(..len / 2);
                    let steps = vec![
                        Step::Data(half),
                        Step::Sleep(Duration::from_millis(5)),
                        Step::Abort,
                    ];
                    let mut resp =
                        Response::new(Body::from_stream(ScriptStream::new(steps, sh.clone())));
                    resp.headers_mut().insert(
                        header::CONTENT_TYPE,
                        HeaderValue::from_static("application/json"),
                    );
                    resp.headers_mut()
                        .insert(header::CONTENT_LENGTH, HeaderValue::from(len));
                    resp
                } else {
                    json_response(StatusCode::OK, &v, seq)
                }
            }
        };
    }

    let steps = match api {
        Api::OpenAi => render::openai_stream(&ctx, &answer),
        Api::Anthropic => render::anthropic_stream(&ctx, &answer),
        Api::Responses => render::responses_stream(&ctx, &answer),
    };
    let mut resp = Response::new(Body::from_stream(ScriptStream::new(steps, sh.clone())));
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream; charset=utf-8"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if let Ok(v) = HeaderValue::from_str(&format!("req_mock_{seq}")) {
        h.insert(HeaderName::from_static("x-request-id"), v.clone());
        h.insert(HeaderName::from_static("request-id"), v);
    }
    resp
}

/// Turns a (non-waiting, non-error) behaviour into an answer.
fn plan(b: Option<Behaviour>, last_user: &str, chunks: usize) -> Answer {
    let split = |s: &str| render::split_pieces(s, chunks);
    let default_text = || Behaviour::default_reply_text(last_user);
    let mut a = Answer {
        reasoning: Vec::new(),
        content: Vec::new(),
        calls: Vec::new(),
        interval: None,
        end: End::Normal,
    };
    match b {
        Some(Behaviour::Reply { text }) => a.content = split(&text),
        Some(Behaviour::Reasoning { reasoning, text }) => {
            a.reasoning = split(&reasoning);
            a.content = split(&text);
        }
        Some(Behaviour::ToolCall {
            name,
            arguments,
            text,
        }) => {
            a.calls = vec![ToolCallSpec { name, arguments }];
            a.content = text.as_deref().map(split).unwrap_or_default();
        }
        Some(Behaviour::ToolCalls { calls, text }) => {
            a.calls = calls;
            a.content = text.as_deref().map(split).unwrap_or_default();
        }
        Some(Behaviour::ResetMidStream { after_events }) => {
            a.content = split(&default_text());
            a.end = End::Reset { after_events };
        }
        Some(Behaviour::SlowStream {
            events,
            interval_ms,
            text,
        }) => {
            a.content = match text {
                Some(t) => render::split_pieces(&t, events),
                None => (0..events).map(|i| format!("w{i} ")).collect(),
            };
            a.interval = Some(Duration::from_millis(interval_ms));
        }
        Some(Behaviour::StreamError {
            after_events,
            status,
            message,
        }) => {
            a.content = split(&default_text());
            a.end = End::StreamError {
                after_events,
                status: status.unwrap_or(500),
                message: message.unwrap_or_else(|| "mock upstream stream error".to_owned()),
            };
        }
        // Waits, errors and matches are resolved by the caller.
        Some(
            Behaviour::DelayMs { .. }
            | Behaviour::Hang
            | Behaviour::Error { .. }
            | Behaviour::Recorded { .. }
            | Behaviour::Match { .. },
        )
        | None => a.content = split(&default_text()),
    }
    a
}

async fn models(
    State(sh): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let (seq, _) = sh.arrive(&method, &uri, &headers, &Bytes::new());
    // One list that satisfies both the OpenAI and the Anthropic SDK model types.
    let data: Vec<Value> = ["mock-model", "mock-claude"]
        .iter()
        .map(|id| {
            json!({"id": id, "object": "model", "type": "model", "created": 0, "owned_by": "mock",
                   "display_name": id, "created_at": "2025-01-01T00:00:00Z"})
        })
        .collect();
    let v = json!({"object": "list", "data": data, "has_more": false, "first_id": "mock-model", "last_id": "mock-claude"});
    json_response(StatusCode::OK, &v, seq)
}

async fn embeddings(
    State(sh): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (seq, parsed) = sh.arrive(&method, &uri, &headers, &body);
    let Ok(req) = parsed else {
        return error_response(Api::OpenAi, 400, None, &BTreeMap::new(), seq);
    };
    let texts = embed::inputs(req.get("input").unwrap_or(&Value::Null));
    let mut behaviour = sh.pop(uri.path(), &texts.join("\n"));
    loop {
        match behaviour {
            Some(Behaviour::Error {
                status,
                body,
                headers,
            }) => return error_response(Api::OpenAi, status, body, &headers, seq),
            Some(Behaviour::DelayMs { ms, then }) => {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                behaviour = then.map(|b| b.unwrap_match());
            }
            Some(Behaviour::Hang) => {
                sh.shutdown.cancelled().await;
                return error_response(Api::OpenAi, 503, None, &BTreeMap::new(), seq);
            }
            _ => break,
        }
    }
    if texts.is_empty() {
        let v = recorded::body(Api::OpenAi, 400, "'input' is required");
        return json_response(StatusCode::BAD_REQUEST, &v, seq);
    }
    let dim = req
        .get("dimensions")
        .and_then(Value::as_u64)
        .map(|d| d as usize)
        .unwrap_or(embed::DEFAULT_DIM)
        .clamp(1, 4096);
    let b64 = req.get("encoding_format").and_then(Value::as_str) == Some("base64");
    let mut tokens = 0u64;
    let data: Vec<Value> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            tokens += (t.len() as u64 / 4).max(1);
            let v = fake_embedding(t, dim);
            let emb = if b64 {
                json!(embed::base64_f32(&v))
            } else {
                json!(v)
            };
            json!({"object": "embedding", "index": i, "embedding": emb})
        })
        .collect();
    let model = req
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("mock-embedding");
    let v = json!({"object": "list", "data": data, "model": model, "usage": {"prompt_tokens": tokens, "total_tokens": tokens}});
    json_response(StatusCode::OK, &v, seq)
}

async fn not_found(
    State(sh): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (seq, _) = sh.arrive(&method, &uri, &headers, &body);
    let v = recorded::body(
        Api::OpenAi,
        404,
        &format!("mock upstream: no route for {} {}", method, uri.path()),
    );
    json_response(StatusCode::NOT_FOUND, &v, seq)
}

async fn ctl_script(State(sh): State<Arc<Shared>>, body: Bytes) -> Response {
    let parsed: Result<Vec<Behaviour>, String> = match serde_json::from_slice::<Value>(&body) {
        Ok(Value::Array(items)) => items
            .into_iter()
            .enumerate()
            .map(|(i, v)| {
                serde_json::from_value::<Behaviour>(v)
                    .map_err(|e| e.to_string())
                    .and_then(Behaviour::resolve)
                    .map_err(|e| format!("item {i}: {e}"))
            })
            .collect(),
        Ok(v) => serde_json::from_value::<Behaviour>(v)
            .map_err(|e| e.to_string())
            .and_then(Behaviour::resolve)
            .map(|b| vec![b]),
        Err(e) => Err(e.to_string()),
    };
    match parsed {
        Ok(bs) => bs.into_iter().for_each(|b| sh.push(b)),
        Err(detail) => {
            return (
                StatusCode::BAD_REQUEST,
                axum::Json(json!({"error": detail})),
            )
                .into_response();
        }
    }
    axum::Json(json!({"queued": lock(&sh.queue).len()})).into_response()
}

async fn ctl_reset(State(sh): State<Arc<Shared>>) -> Response {
    sh.reset();
    axum::Json(json!({"ok": true})).into_response()
}

async fn ctl_requests(State(sh): State<Arc<Shared>>) -> Response {
    let reqs: Vec<RecordedRequest> = lock(&sh.recorded).iter().cloned().collect();
    axum::Json(reqs).into_response()
}

async fn ctl_stats(State(sh): State<Arc<Shared>>) -> Response {
    axum::Json(sh.stats()).into_response()
}
