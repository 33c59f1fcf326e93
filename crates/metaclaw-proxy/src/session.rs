//! Which conversation a request belongs to, and when a conversation ends.
//!
//! Precedence: `X-Session-Id` header, `session_id` body key, OpenClaw's `prompt_cache_key`
//! (`<sessionId>:<n>`), OpenClaw's `Runtime: … sessionId=<uuid>` line, and finally a heuristic
//! per client and model (a new session when the message count drops or after the idle timeout).

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::HeaderMap;
use chrono::{DateTime, Utc};
use metaclaw_domain::{Clock, Dialect, Event, SessionEndReason, SessionSource, TurnType};
use serde_json::{Map, Value};
use tokio::sync::broadcast;

/// Body keys that only mean something to MetaClaw; they never reach the upstream.
const PRIVATE_BODY_KEYS: &[&str] = &[
    "session_id",
    "turn_type",
    "session_done",
    "memory_scope",
    "user_id",
    "workspace_id",
];

/// Session hints taken from one request (and removed from its body).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct SessionHints {
    pub explicit: Option<(String, SessionSource)>,
    pub turn_type: Option<TurnType>,
    pub done: bool,
    pub message_count: usize,
    /// Client dialect and model, for the header-less heuristic.
    pub heuristic_key: String,
}

impl SessionHints {
    pub fn extract(headers: &HeaderMap, body: &mut Map<String, Value>, dialect: Dialect) -> Self {
        let removed: Vec<(&str, Value)> = PRIVATE_BODY_KEYS
            .iter()
            .filter_map(|k| body.remove(*k).map(|v| (*k, v)))
            .collect();
        let body_key = |name: &str| removed.iter().find(|(k, _)| *k == name).map(|(_, v)| v);
        let header = |name: &str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::trim)
                .filter(|s| !s.is_empty())
        };

        let explicit = header("x-session-id")
            .map(|s| (s.to_owned(), SessionSource::Header))
            .or_else(|| {
                body_key("session_id")
                    .and_then(value_as_id)
                    .map(|s| (s, SessionSource::Body))
            })
            .or_else(|| prompt_cache_session(body).map(|s| (s, SessionSource::PromptCacheKey)))
            .or_else(|| runtime_session(body, dialect).map(|s| (s, SessionSource::AgentRuntime)));

        let turn_type = header("x-turn-type")
            .map(str::to_owned)
            .or_else(|| {
                body_key("turn_type")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
            .map(|t| {
                if t.eq_ignore_ascii_case("main") {
                    TurnType::Main
                } else {
                    TurnType::Side
                }
            });

        let done = header("x-session-done").is_some_and(truthy)
            || body_key("session_done").is_some_and(|v| match v {
                Value::Bool(b) => *b,
                Value::String(s) => truthy(s),
                Value::Number(n) => n.as_i64() == Some(1),
                _ => false,
            });

        // Responses bodies carry `input` (items or one string) instead of `messages`, and get
        // their own heuristic key.
        let (message_count, api) = match (body.get("messages"), body.get("input")) {
            (Some(Value::Array(m)), _) => (m.len(), dialect.as_str()),
            (None, Some(Value::Array(items))) => (items.len(), "responses"),
            (None, Some(Value::String(_))) => (1, "responses"),
            _ => (0, dialect.as_str()),
        };
        let model = body
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or("default");
        Self {
            explicit,
            turn_type,
            done,
            message_count,
            heuristic_key: format!("{api}:{model}"),
        }
    }
}

fn truthy(s: &str) -> bool {
    matches!(s.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on")
}

fn value_as_id(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_owned()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// OpenClaw sends `prompt_cache_key: "<sessionId>:<n>"` when the provider opts in.
fn prompt_cache_session(body: &Map<String, Value>) -> Option<String> {
    let key = body.get("prompt_cache_key")?.as_str()?.trim();
    let id = match key.rsplit_once(':') {
        Some((id, n)) if n.chars().all(|c| c.is_ascii_digit()) => id,
        _ => key,
    };
    (!id.is_empty()).then(|| id.to_owned())
}

/// OpenClaw's Runtime line: in the first user message (OpenAI) or the system blocks (Anthropic).
fn runtime_session(body: &Map<String, Value>, dialect: Dialect) -> Option<String> {
    let text: String = match dialect {
        Dialect::OpenAi => {
            let first_user = body
                .get("messages")?
                .as_array()?
                .iter()
                .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))?;
            content_text(first_user.get("content")?)
        }
        Dialect::Anthropic => content_text(body.get("system")?),
    };
    let start = text.find("sessionId=")? + "sessionId=".len();
    let id: String = text[start..]
        .chars()
        .take_while(|c| c.is_ascii_hexdigit() || *c == '-')
        .collect();
    (id.len() >= 8).then_some(id)
}

fn content_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The session a turn was assigned to.
#[derive(Debug, Clone, PartialEq)]
pub struct Assigned {
    pub session_id: String,
    pub source: SessionSource,
    pub turn_type: TurnType,
    /// Close the session once this turn is recorded (`X-Session-Done`).
    pub end_after: bool,
}

#[derive(Debug)]
struct Open {
    source: SessionSource,
    last_seen: DateTime<Utc>,
    message_count: usize,
    turns: u64,
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// Open sessions, kept in memory; the store keeps the durable copy.
pub struct SessionTracker {
    open: Mutex<Tracked>,
    clock: Arc<dyn Clock>,
    /// Milliseconds of silence that end a session (`session.idle_timeout`; changeable live).
    idle_timeout_ms: AtomicI64,
    events: broadcast::Sender<Event>,
}

#[derive(Default)]
struct Tracked {
    sessions: HashMap<String, Open>,
    /// Heuristic key → the session currently open for it.
    heuristic: HashMap<String, String>,
}

impl SessionTracker {
    pub fn new(
        clock: Arc<dyn Clock>,
        idle_timeout: Duration,
        events: broadcast::Sender<Event>,
    ) -> Self {
        Self {
            open: Mutex::new(Tracked::default()),
            clock,
            idle_timeout_ms: AtomicI64::new(millis(idle_timeout)),
            events,
        }
    }

    pub fn set_idle_timeout(&self, idle_timeout: Duration) {
        self.idle_timeout_ms
            .store(millis(idle_timeout), Ordering::Relaxed);
    }

    fn idle_timeout(&self) -> chrono::Duration {
        chrono::Duration::milliseconds(self.idle_timeout_ms.load(Ordering::Relaxed))
    }

    pub fn assign(&self, hints: &SessionHints) -> Assigned {
        let now = self.clock.now();
        let mut ended = Vec::new();
        let (session_id, source) = {
            let mut t = self.open.lock().unwrap_or_else(|e| e.into_inner());
            let (id, source) = match &hints.explicit {
                Some((id, source)) => (id.clone(), *source),
                None => {
                    let current = t.heuristic.get(&hints.heuristic_key).cloned();
                    let reuse = current
                        .as_ref()
                        .and_then(|id| t.sessions.get(id).map(|s| (id, s)));
                    match reuse {
                        Some((id, s))
                            if hints.message_count >= s.message_count
                                && now - s.last_seen <= self.idle_timeout() =>
                        {
                            (id.clone(), SessionSource::Heuristic)
                        }
                        other => {
                            if let Some((old, s)) = other {
                                let reason = if hints.message_count < s.message_count {
                                    SessionEndReason::CountDrop
                                } else {
                                    SessionEndReason::IdleTimeout
                                };
                                let old = old.clone();
                                if let Some(s) = t.sessions.remove(&old) {
                                    ended.push((old, reason, s.turns));
                                }
                            }
                            let id = new_heuristic_id(&hints.heuristic_key);
                            t.heuristic.insert(hints.heuristic_key.clone(), id.clone());
                            (id, SessionSource::Heuristic)
                        }
                    }
                }
            };
            // An explicit session that sat idle past the timeout was already closed (or is
            // about to be by the sweeper); this request reopens it.
            if let Some(s) = t.sessions.get(&id)
                && now - s.last_seen > self.idle_timeout()
                && let Some(s) = t.sessions.remove(&id)
            {
                ended.push((id.clone(), SessionEndReason::IdleTimeout, s.turns));
            }
            let entry = t.sessions.entry(id.clone()).or_insert_with(|| Open {
                source,
                last_seen: now,
                message_count: 0,
                turns: 0,
            });
            let is_new = entry.turns == 0;
            entry.last_seen = now;
            entry.message_count = hints.message_count;
            entry.turns += 1;
            if is_new {
                let _ = self.events.send(Event::SessionStarted {
                    session_id: id.clone(),
                    at: now,
                });
            }
            (id, source)
        };
        for (id, reason, turns) in ended {
            self.emit_end(id, reason, turns, now);
        }
        Assigned {
            session_id,
            source,
            turn_type: hints.turn_type.unwrap_or_default(),
            end_after: hints.done,
        }
    }

    /// Close a session now (explicit done, or shutdown).
    pub fn end(&self, session_id: &str, reason: SessionEndReason) {
        let removed = {
            let mut t = self.open.lock().unwrap_or_else(|e| e.into_inner());
            t.heuristic.retain(|_, v| v != session_id);
            t.sessions.remove(session_id)
        };
        let turns = removed.map_or(0, |s| s.turns);
        self.emit_end(session_id.to_owned(), reason, turns, self.clock.now());
    }

    /// Close every session idle for longer than the timeout; returns their ids.
    pub fn sweep(&self) -> Vec<String> {
        let now = self.clock.now();
        let expired: Vec<(String, u64)> = {
            let mut t = self.open.lock().unwrap_or_else(|e| e.into_inner());
            let ids: Vec<String> = t
                .sessions
                .iter()
                .filter(|(_, s)| now - s.last_seen > self.idle_timeout())
                .map(|(id, _)| id.clone())
                .collect();
            let out = ids
                .into_iter()
                .filter_map(|id| t.sessions.remove(&id).map(|s| (id, s.turns)))
                .collect::<Vec<_>>();
            t.heuristic.retain(|_, v| out.iter().all(|(id, _)| id != v));
            out
        };
        for (id, turns) in &expired {
            self.emit_end(id.clone(), SessionEndReason::IdleTimeout, *turns, now);
        }
        expired.into_iter().map(|(id, _)| id).collect()
    }

    pub fn open_sessions(&self) -> Vec<(String, SessionSource)> {
        let t = self.open.lock().unwrap_or_else(|e| e.into_inner());
        t.sessions
            .iter()
            .map(|(id, s)| (id.clone(), s.source))
            .collect()
    }

    fn emit_end(
        &self,
        session_id: String,
        reason: SessionEndReason,
        turns: u64,
        at: DateTime<Utc>,
    ) {
        tracing::debug!(%session_id, reason = reason.as_str(), turns, "session ended");
        let _ = self.events.send(Event::SessionEnded {
            session_id,
            reason,
            turns,
            at,
        });
    }
}

fn new_heuristic_id(key: &str) -> String {
    let model: String = key
        .split_once(':')
        .map_or(key, |(_, m)| m)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .take(48)
        .collect();
    let suffix = uuid::Uuid::new_v4().simple().to_string();
    format!("tui-{model}-{}", &suffix[..8])
}

#[cfg(test)]
mod tests {
    use super::*;
    use metaclaw_domain::ManualClock;
    use serde_json::json;

    fn tracker(clock: &ManualClock) -> (SessionTracker, broadcast::Receiver<Event>) {
        let (tx, rx) = broadcast::channel(64);
        (
            SessionTracker::new(Arc::new(clock.clone()), Duration::from_secs(300), tx),
            rx,
        )
    }

    fn hints(headers: &[(&'static str, &str)], body: Value) -> (SessionHints, Map<String, Value>) {
        let mut h = HeaderMap::new();
        for (k, v) in headers {
            h.insert(*k, v.parse().unwrap());
        }
        let mut body = body.as_object().unwrap().clone();
        (SessionHints::extract(&h, &mut body, Dialect::OpenAi), body)
    }

    fn msgs(n: usize) -> Value {
        Value::Array(
            (0..n)
                .map(|i| json!({"role": "user", "content": format!("m{i}")}))
                .collect(),
        )
    }

    fn ended(rx: &mut broadcast::Receiver<Event>) -> Vec<(String, SessionEndReason)> {
        let mut out = Vec::new();
        while let Ok(e) = rx.try_recv() {
            if let Event::SessionEnded {
                session_id, reason, ..
            } = e
            {
                out.push((session_id, reason));
            }
        }
        out
    }

    #[test]
    fn header_beats_body_and_private_keys_are_stripped() {
        let (h, body) = hints(
            &[("x-session-id", "from-header"), ("x-turn-type", "side")],
            json!({"messages": msgs(1), "session_id": "from-body", "turn_type": "main",
                   "session_done": true, "memory_scope": "x", "temperature": 0.2}),
        );
        assert_eq!(
            h.explicit,
            Some(("from-header".into(), SessionSource::Header))
        );
        assert_eq!(h.turn_type, Some(TurnType::Side));
        assert!(h.done);
        let keys: Vec<&String> = body.keys().collect();
        assert_eq!(keys, ["messages", "temperature"]);
    }

    #[test]
    fn prompt_cache_key_and_runtime_line() {
        let (h, body) = hints(
            &[],
            json!({"messages": msgs(1), "prompt_cache_key": "abc-123:0"}),
        );
        assert_eq!(
            h.explicit,
            Some(("abc-123".into(), SessionSource::PromptCacheKey))
        );
        assert!(
            body.contains_key("prompt_cache_key"),
            "official OpenAI field is forwarded"
        );
        let text = "[Sat] hi\n\nRuntime: agent=main | session=agent:main:k | sessionId=0f8fad5b-d9cb-469f-a165-70867728950e | host=x";
        let (h, _) = hints(
            &[],
            json!({"messages": [{"role": "user", "content": text}]}),
        );
        assert_eq!(
            h.explicit,
            Some((
                "0f8fad5b-d9cb-469f-a165-70867728950e".into(),
                SessionSource::AgentRuntime
            ))
        );
    }

    #[test]
    fn heuristic_session_splits_on_count_drop_and_idle() {
        let clock = ManualClock::new(Utc::now());
        let (t, mut rx) = tracker(&clock);
        let (h1, _) = hints(&[], json!({"model": "m", "messages": msgs(1)}));
        let (h3, _) = hints(&[], json!({"model": "m", "messages": msgs(3)}));
        let a = t.assign(&h1);
        let b = t.assign(&h3);
        assert_eq!(a.session_id, b.session_id);
        assert!(a.session_id.starts_with("tui-m-"));
        let c = t.assign(&h1); // count dropped: a new conversation
        assert_ne!(c.session_id, a.session_id);
        assert_eq!(
            ended(&mut rx),
            vec![(a.session_id.clone(), SessionEndReason::CountDrop)]
        );
        clock.advance(chrono::Duration::seconds(301));
        let d = t.assign(&h3);
        assert_ne!(d.session_id, c.session_id);
        assert_eq!(
            ended(&mut rx),
            vec![(c.session_id, SessionEndReason::IdleTimeout)]
        );
    }

    #[test]
    fn sweep_closes_idle_explicit_sessions() {
        let clock = ManualClock::new(Utc::now());
        let (t, mut rx) = tracker(&clock);
        let (h, _) = hints(&[("x-session-id", "s1")], json!({"messages": msgs(1)}));
        t.assign(&h);
        clock.advance(chrono::Duration::seconds(200));
        assert!(t.sweep().is_empty());
        clock.advance(chrono::Duration::seconds(101));
        assert_eq!(t.sweep(), vec!["s1".to_string()]);
        assert_eq!(
            ended(&mut rx),
            vec![("s1".into(), SessionEndReason::IdleTimeout)]
        );
        assert!(t.open_sessions().is_empty());
    }

    #[test]
    fn explicit_end_emits_event_with_turn_count() {
        let clock = ManualClock::new(Utc::now());
        let (t, mut rx) = tracker(&clock);
        let (h, _) = hints(
            &[("x-session-id", "s2"), ("x-session-done", "TRUE")],
            json!({"messages": msgs(2)}),
        );
        let a = t.assign(&h);
        assert!(a.end_after);
        t.assign(&h);
        t.end("s2", SessionEndReason::Explicit);
        let mut turns = None;
        while let Ok(e) = rx.try_recv() {
            if let Event::SessionEnded { turns: n, .. } = e {
                turns = Some(n);
            }
        }
        assert_eq!(turns, Some(2));
    }
}
