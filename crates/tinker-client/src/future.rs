//! Server-side futures: `retrieve_future` long-poll state machine (spec §3).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use bytes::Bytes;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::session::Shared;
use crate::transport::{PROTO_CT, RawResponse, Request};
use crate::wire::json::{RetrieveFutureRequest, UntypedFuture};

/// A completed future's payload, before typed decoding.
#[derive(Debug)]
pub(crate) enum ResultBody {
    Json(Value),
    Proto(Bytes),
}

pub(crate) type Decoder<T> = Box<dyn FnOnce(ResultBody, &UntypedFuture) -> Result<T> + Send>;

/// A submitted request whose result has not been fetched yet.
///
/// Submission already happened (the server accepted it and fixed its `seq_id`
/// position); [`Pending::result`] long-polls for the outcome. This lets callers
/// submit `forward_backward` and `optim_step` back-to-back and await both later.
#[must_use = "a Pending does nothing unless its result is awaited"]
pub struct Pending<T> {
    shared: Arc<Shared>,
    request: Request,
    idem_key: String,
    future: UntypedFuture,
    request_type: &'static str,
    accept_proto: bool,
    submitted_at: Instant,
    decode: Decoder<T>,
    poison: Option<Arc<AtomicBool>>,
}

impl<T> std::fmt::Debug for Pending<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pending")
            .field("request_id", &self.future.request_id)
            .field("request_type", &self.request_type)
            .finish()
    }
}

impl<T> Pending<T> {
    pub(crate) fn new(
        shared: Arc<Shared>,
        request: Request,
        idem_key: String,
        future: UntypedFuture,
        request_type: &'static str,
        decode: Decoder<T>,
    ) -> Self {
        let accept_proto = matches!(request_type, "Sample" | "ForwardBackward" | "Forward");
        Self {
            shared,
            request,
            idem_key,
            future,
            request_type,
            accept_proto,
            submitted_at: Instant::now(),
            decode,
            poison: None,
        }
    }

    pub(crate) fn poisoning(mut self, flag: Arc<AtomicBool>) -> Self {
        self.poison = Some(flag);
        self
    }

    /// The server's id for this request.
    pub fn request_id(&self) -> &str {
        &self.future.request_id
    }

    /// Waits for the result. A failure of a training request poisons its
    /// `TrainingClient` (see [`Error::Poisoned`]).
    pub async fn result(mut self) -> Result<T> {
        let poison = self.poison.take();
        let out = self.poll().await;
        if out.is_err()
            && let Some(flag) = poison
        {
            flag.store(true, Ordering::SeqCst);
        }
        out
    }

    async fn poll(self) -> Result<T> {
        let Pending {
            shared,
            request,
            idem_key,
            mut future,
            request_type,
            accept_proto,
            submitted_at,
            decode,
            ..
        } = self;
        let t = &shared.transport;
        let policy = &t.cfg.retry;
        let mut iteration: u64 = 0;
        let mut backoff_k: u32 = 0;
        let mut bare_400: u32 = 0;
        let mut server_errors: u32 = 0;
        let mut allow_metadata_only = true;
        let mut billing_start: Option<Instant> = None;
        let mut last_queue_state: Option<String> = None;
        // Unlike the SDK, give up if the server stays unreachable for a whole
        // submit budget, so a dead server cannot hang the caller forever.
        let mut unreachable_since: Option<Instant> = None;
        loop {
            let body = RetrieveFutureRequest {
                request_id: future.request_id.clone(),
                allow_metadata_only,
            };
            let req = Request::post_json("/api/v1/retrieve_future", &body, "APIFuture.result")?;
            let mut extra: Vec<(&'static str, String)> = vec![
                ("X-Tinker-Request-Iteration", iteration.to_string()),
                ("X-Tinker-Request-Type", request_type.to_string()),
            ];
            if iteration == 0 {
                extra.push((
                    "X-Tinker-Create-Promise-Roundtrip-Time",
                    format!("{:.6}", submitted_at.elapsed().as_secs_f64()),
                ));
            }
            if accept_proto {
                extra.push(("Accept", format!("{PROTO_CT}, application/json")));
            }
            iteration += 1;
            let resp = match t.send_once(&req, None, &extra, t.cfg.poll_timeout).await {
                Ok(r) => {
                    unreachable_since = None;
                    r
                }
                Err(e @ (Error::Transport(_) | Error::Timeout(_))) => {
                    if unreachable_since.get_or_insert_with(Instant::now).elapsed()
                        > policy.submit_budget
                    {
                        return Err(e);
                    }
                    // Connection trouble: back off, growing until a response arrives.
                    let d = policy.backoff(backoff_k);
                    backoff_k = backoff_k.saturating_add(1);
                    tracing::debug!(error = %e, ?d, "retrieve_future transport error; backing off");
                    tokio::time::sleep(d).await;
                    continue;
                }
                Err(e) => return Err(e),
            };
            if resp.status != 429 {
                backoff_k = 0;
            }
            if resp.status < 500 {
                server_errors = 0;
            }
            match resp.status {
                200 => {
                    if resp.is_proto() {
                        return decode(ResultBody::Proto(resp.body), &future);
                    }
                    let v: Value = serde_json::from_slice(&resp.body).map_err(Error::decode)?;
                    match classify_json(&v) {
                        JsonOutcome::TryAgain => {
                            let qs = v
                                .get("queue_state")
                                .and_then(Value::as_str)
                                .map(str::to_string);
                            if qs != last_queue_state {
                                tracing::info!(request_id = %future.request_id, queue_state = ?qs, "queue state");
                                last_queue_state = qs;
                            }
                        }
                        JsonOutcome::Metadata => allow_metadata_only = false,
                        JsonOutcome::Failed { category, message } => {
                            return Err(Error::RequestFailed { category, message });
                        }
                        JsonOutcome::Result => return decode(ResultBody::Json(v), &future),
                    }
                }
                // Long-poll deadline hit server-side: ask again at once.
                408 => {}
                400 => {
                    if let Some(detail) = detail_message(&resp) {
                        // SkyRL reports handled future failures as 400 {"detail"}.
                        return Err(Error::RequestFailed {
                            category: "user".into(),
                            message: detail,
                        });
                    }
                    bare_400 += 1;
                    if bare_400 > 3 {
                        return Err(resp.http_error());
                    }
                }
                402 => {
                    let began = *billing_start.get_or_insert_with(Instant::now);
                    if began.elapsed() >= policy.billing_pause_max {
                        return Err(Error::BillingPause(policy.billing_pause_max));
                    }
                    tokio::time::sleep(policy.billing_sleep).await;
                }
                410 => {
                    // Promise expired: resubmit the original request (same key,
                    // same seq_id) and poll the new future.
                    tracing::info!(request_id = %future.request_id, "future expired (410); resubmitting");
                    let r = t.submit(&request, Some(&idem_key)).await?;
                    let mut fresh: UntypedFuture =
                        serde_json::from_slice(&r.body).map_err(Error::decode)?;
                    if fresh.sample_sequence_ids.is_none() {
                        fresh.sample_sequence_ids = future.sample_sequence_ids.take();
                    }
                    future = fresh;
                    iteration = 0;
                    allow_metadata_only = true;
                }
                429 => {
                    let d = policy.backoff(backoff_k);
                    backoff_k = backoff_k.saturating_add(1);
                    tokio::time::sleep(d).await;
                }
                s if s >= 500 => {
                    if s == 500
                        && let Some(detail) = detail_message(&resp)
                    {
                        // SkyRL: unhandled failure of the future itself.
                        return Err(Error::RequestFailed {
                            category: "server".into(),
                            message: detail,
                        });
                    }
                    server_errors += 1;
                    if server_errors > policy.poll_max_server_errors {
                        return Err(resp.http_error());
                    }
                }
                _ => return Err(resp.http_error()),
            }
        }
    }
}

pub(crate) enum JsonOutcome {
    TryAgain,
    Metadata,
    Failed { category: String, message: String },
    Result,
}

impl JsonOutcome {
    /// A finished result to decode (not a poll-again, metadata or failure answer).
    pub(crate) fn is_result(&self) -> bool {
        matches!(self, JsonOutcome::Result)
    }
}

pub(crate) fn classify_json(v: &Value) -> JsonOutcome {
    let Some(obj) = v.as_object() else {
        return JsonOutcome::Result;
    };
    let s = |k: &str| obj.get(k).and_then(Value::as_str);
    if s("type") == Some("try_again") || s("status") == Some("pending") {
        return JsonOutcome::TryAgain;
    }
    if s("status") == Some("complete_metadata") {
        return JsonOutcome::Metadata;
    }
    if let Some(err) = obj.get("error").filter(|e| !e.is_null()) {
        let message = match err {
            Value::String(m) => m.clone(),
            other => other.to_string(),
        };
        let category = s("category").unwrap_or("unknown").to_string();
        return JsonOutcome::Failed { category, message };
    }
    JsonOutcome::Result
}

/// The `detail` of a FastAPI-style error body, if any.
pub(crate) fn detail_message(resp: &RawResponse) -> Option<String> {
    let v = resp.json()?;
    match v.get("detail")? {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// Decode a JSON result into `T`, mapping serde errors to [`Error::Decode`].
pub(crate) fn from_json<T: serde::de::DeserializeOwned>(body: ResultBody) -> Result<T> {
    match body {
        ResultBody::Json(v) => serde_json::from_value(v).map_err(Error::decode),
        ResultBody::Proto(_) => Err(Error::Decode("unexpected protobuf result".into())),
    }
}
