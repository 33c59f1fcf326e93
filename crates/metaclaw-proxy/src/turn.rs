//! The life of one turn after its request was accepted: timing, capture of what the client
//! received, and hand-off to the after-response hooks when it ends — however it ends.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use chrono::{DateTime, Utc};
use metaclaw_domain::{Dialect, Event, SessionEndReason, TurnRecord, TurnStatus};
use serde_json::Value;

use crate::capture;
use crate::hooks::{ClientApi, PreparedRequest, TurnContext};
use crate::responses;
use crate::session::Assigned;
use crate::state::Inner;

/// Responses bigger than this are not kept whole in the log.
const CAPTURE_LIMIT: usize = 16 * 1024 * 1024;

#[derive(Debug, Clone)]
enum Outcome {
    Ok,
    UpstreamError(String),
    Unreachable(String),
    Broken(String),
}

/// Owns the bookkeeping of a turn; dropping it records the turn. A guard dropped before the
/// response ended means the client went away.
pub(crate) struct TurnGuard {
    inner: Arc<Inner>,
    ctx: TurnContext,
    assigned: Assigned,
    request: PreparedRequest,
    stream: bool,
    started: Instant,
    started_at: DateTime<Utc>,
    ttfb: Option<Duration>,
    http_status: u16,
    buffer: BytesMut,
    capture_overflow: bool,
    outcome: Option<Outcome>,
}

impl TurnGuard {
    pub fn new(
        inner: Arc<Inner>,
        ctx: TurnContext,
        assigned: Assigned,
        request: PreparedRequest,
        started: Instant,
        started_at: DateTime<Utc>,
    ) -> Self {
        let stream = request.body.get("stream").and_then(Value::as_bool) == Some(true);
        Self {
            inner,
            ctx,
            assigned,
            request,
            stream,
            started,
            started_at,
            ttfb: None,
            http_status: 200,
            buffer: BytesMut::new(),
            capture_overflow: false,
            outcome: None,
        }
    }

    pub fn is_stream(&self) -> bool {
        self.stream
    }

    pub fn ctx(&self) -> &TurnContext {
        &self.ctx
    }

    pub fn request(&self) -> &PreparedRequest {
        &self.request
    }

    /// Bytes sent to the client, in the client's dialect.
    pub fn on_chunk(&mut self, chunk: &[u8]) {
        if self.ttfb.is_none() {
            self.ttfb = Some(self.started.elapsed());
        }
        if self.buffer.len() + chunk.len() <= CAPTURE_LIMIT {
            self.buffer.extend_from_slice(chunk);
        } else {
            self.capture_overflow = true;
        }
    }

    pub fn complete(&mut self) {
        self.outcome.get_or_insert(Outcome::Ok);
    }

    pub fn upstream_error(&mut self, status: u16, body: &[u8], message: String) {
        self.http_status = status;
        self.stream = false;
        self.buffer = BytesMut::from(body);
        self.outcome = Some(Outcome::UpstreamError(message));
    }

    pub fn unreachable(&mut self, status: u16, message: String) {
        self.http_status = status;
        self.outcome = Some(Outcome::Unreachable(message));
    }

    pub fn broken(&mut self, message: String) {
        self.outcome = Some(Outcome::Broken(message));
    }
}

impl Drop for TurnGuard {
    fn drop(&mut self) {
        let latency = self.started.elapsed();
        let outcome = self.outcome.take();
        let bytes = std::mem::take(&mut self.buffer).freeze();
        let api = self.request.api;
        let request = std::mem::replace(
            &mut self.request,
            PreparedRequest {
                api,
                body: Default::default(),
                injected: vec![],
                skill_generation: None,
            },
        );
        let finished = Finished {
            inner: self.inner.clone(),
            ctx: self.ctx.clone(),
            assigned: self.assigned.clone(),
            request,
            stream: self.stream,
            started_at: self.started_at,
            latency,
            ttfb: self.ttfb,
            http_status: self.http_status,
            bytes,
            overflow: self.capture_overflow,
            outcome,
        };
        // Assembling and logging happen off the request path.
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn(finished.record());
            }
            Err(_) => tracing::warn!(turn_id = %self.ctx.turn_id, "no runtime to record the turn"),
        }
    }
}

struct Finished {
    inner: Arc<Inner>,
    ctx: TurnContext,
    assigned: Assigned,
    request: PreparedRequest,
    stream: bool,
    started_at: DateTime<Utc>,
    latency: Duration,
    ttfb: Option<Duration>,
    http_status: u16,
    bytes: Bytes,
    overflow: bool,
    outcome: Option<Outcome>,
}

impl Finished {
    async fn record(self) {
        let dialect: Dialect = self.ctx.dialect;
        // Responses turns are logged in their chat-completions form, the shape everything
        // that reads turns (transcripts, training, the dashboard) knows.
        let (assembled, request) = match self.request.api {
            ClientApi::Responses => {
                let mut a = capture::assemble_responses(self.stream, self.bytes).await;
                a.response = a.response.map(|r| {
                    if r.get("output").is_some() {
                        responses::translate::response_to_chat(&r)
                    } else {
                        r
                    }
                });
                (a, responses::translate::request_to_chat(&self.request.body))
            }
            _ => (
                capture::assemble(dialect, self.stream, self.bytes).await,
                self.request.body,
            ),
        };
        let (status, mut error) = match (self.outcome, assembled.stream_error) {
            (Some(Outcome::Ok), None) => (TurnStatus::Ok, None),
            (Some(Outcome::Ok), Some(e)) => (TurnStatus::UpstreamError, Some(e)),
            (Some(Outcome::UpstreamError(e)), _) => (TurnStatus::UpstreamError, Some(e)),
            (Some(Outcome::Unreachable(e)), _) => (TurnStatus::UpstreamUnreachable, Some(e)),
            (Some(Outcome::Broken(e)), _) => (TurnStatus::StreamBroken, Some(e)),
            (None, _) => (
                TurnStatus::ClientAborted,
                Some("the client disconnected before the response ended".to_owned()),
            ),
        };
        if self.overflow {
            error.get_or_insert_with(|| {
                "response larger than the capture limit; log truncated".into()
            });
        }
        let model = request
            .get("model")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let record = TurnRecord {
            turn_id: self.ctx.turn_id.clone(),
            session_id: self.ctx.session_id.clone(),
            session_source: self.assigned.source,
            turn_type: self.ctx.turn_type,
            api: dialect,
            stream: self.stream,
            model,
            // The user's words as sent, without the skills block placed beside them.
            request: {
                let mut body = request;
                crate::hooks::strip_user_injection(&mut body);
                Value::Object(body)
            },
            response: assembled.response,
            status,
            http_status: self.http_status,
            error,
            usage: assembled.usage,
            started_at: self.started_at,
            latency_ms: self.latency.as_secs_f64() * 1000.0,
            ttfb_ms: self.ttfb.map(|d| d.as_secs_f64() * 1000.0),
            injected: Value::Array(self.request.injected),
            skill_generation: self.request.skill_generation,
            agent: self.ctx.agent.clone(),
        };
        let record = Arc::new(record);
        self.inner.hooks.after_response(&record);
        let _ = self.inner.events.send(Event::TurnCompleted {
            session_id: record.session_id.clone(),
            turn_id: record.turn_id.clone(),
            turn_type: record.turn_type,
        });
        if self.assigned.end_after {
            self.inner
                .sessions
                .end(&record.session_id, SessionEndReason::Explicit);
        }
    }
}
