//! Recorded sessions and turns, and thumbs on a turn.

use chrono::{DateTime, Utc};
use metaclaw_domain::{Dialect, TurnStatus, TurnType};
use metaclaw_store::{SessionRow, TurnRow};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Ack;
use crate::api::{Api, ApiError, Method, Operation};

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct SessionQuery {
    /// At most this many, newest first (default 50, at most 1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

pub struct ListSessions;

impl Operation for ListSessions {
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/api/sessions";
    const SUMMARY: &'static str = "Recent sessions";
    type Path = ();
    type Input = SessionQuery;
    type Output = Vec<SessionRow>;

    async fn run(api: &Api, _: (), q: SessionQuery) -> Result<Vec<SessionRow>, ApiError> {
        Ok(api.store().sessions(q.limit.unwrap_or(50).min(1000))?)
    }
}

/// A session with its turns as the dashboard shows them.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SessionDetail {
    pub session: SessionRow,
    pub turns: Vec<TurnSummary>,
}

/// A turn, with its texts redacted and what was injected into it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TurnSummary {
    pub id: String,
    pub seq: u64,
    pub turn_type: TurnType,
    pub api: Dialect,
    pub model: Option<String>,
    pub status: TurnStatus,
    pub error: Option<String>,
    pub started_at: DateTime<Utc>,
    pub latency_ms: f64,
    pub user_text: String,
    pub assistant_text: String,
    pub injected: Vec<InjectedSkill>,
    pub feedback: Option<TurnFeedback>,
    pub skill_generation: Option<u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct InjectedSkill {
    pub name: String,
    pub version: serde_json::Value,
    pub score: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TurnFeedback {
    pub rating: i8,
    pub note: Option<String>,
}

fn view(turn: &TurnRow) -> metaclaw_evolve::TurnView {
    metaclaw_evolve::TurnView {
        turn_id: turn.id.clone(),
        seq: turn.seq,
        turn_type: turn.turn_type,
        api: turn.api,
        request: turn.request.clone(),
        response: turn.response.clone(),
        status: turn.status,
        feedback: None,
        reward: None,
    }
}

pub struct GetSession;

impl Operation for GetSession {
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/api/sessions/{id}";
    const SUMMARY: &'static str = "A session with its turns, injected skills and feedback";
    type Path = String;
    type Input = crate::api::NoInput;
    type Output = SessionDetail;

    async fn run(api: &Api, id: String, _: crate::api::NoInput) -> Result<SessionDetail, ApiError> {
        let store = api.store();
        let session = store
            .session(&id)?
            .ok_or_else(|| ApiError::not_found(format!("no session `{id}`")))?;
        let feedback = store.feedback_in_session(&id)?;
        let turns = store
            .turns_in_session(&id)?
            .iter()
            .map(|t| {
                let v = view(t);
                let injected = t
                    .injected
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|i| i.get("kind").and_then(serde_json::Value::as_str) == Some("skill"))
                    .map(|i| InjectedSkill {
                        name: i["name"].as_str().unwrap_or_default().to_owned(),
                        version: i["version"].clone(),
                        score: i["score"].as_f64(),
                    })
                    .collect();
                TurnSummary {
                    id: t.id.clone(),
                    seq: t.seq,
                    turn_type: t.turn_type,
                    api: t.api,
                    model: t.model.clone(),
                    status: t.status,
                    error: t.error.clone(),
                    started_at: t.started_at,
                    latency_ms: t.latency_ms,
                    user_text: metaclaw_evolve::redact(&metaclaw_evolve::user_text(&v)),
                    assistant_text: metaclaw_evolve::redact(&metaclaw_evolve::assistant_text(&v)),
                    injected,
                    feedback: feedback.get(&t.id).map(|f| TurnFeedback {
                        rating: f.rating,
                        note: f.note.clone(),
                    }),
                    skill_generation: t.skill_generation,
                }
            })
            .collect();
        Ok(SessionDetail { session, turns })
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct FeedbackInput {
    /// 1 (thumbs up) or -1 (thumbs down).
    pub rating: i8,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

pub struct SetFeedback;

impl Operation for SetFeedback {
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/api/turns/{id}/feedback";
    const SUMMARY: &'static str = "Thumbs up (1) or down (-1) on a turn, with a note";
    type Path = String;
    type Input = FeedbackInput;
    type Output = Ack;

    async fn run(api: &Api, id: String, b: FeedbackInput) -> Result<Ack, ApiError> {
        if b.rating != 1 && b.rating != -1 {
            return Err(ApiError::bad_request(
                "rating must be 1 (thumbs up) or -1 (thumbs down)",
            ));
        }
        api.store()
            .set_feedback(&id, b.rating, b.note.filter(|n| !n.trim().is_empty()))?;
        Ok(Ack::OK)
    }
}
