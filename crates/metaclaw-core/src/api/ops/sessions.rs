//! Recorded sessions and turns, and thumbs on a turn.

use std::collections::HashMap;

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
    /// Skip this many of the newest first (default 0): the next page starts at the previous
    /// page's offset plus its length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<usize>,
    /// Only this agent's sessions (`default`: those of no agent of their own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

/// Most sessions one call returns.
pub const MAX_SESSIONS_PAGE: usize = 1000;

pub struct ListSessions;

impl Operation for ListSessions {
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/api/sessions";
    const SUMMARY: &'static str = "Recent sessions (filter: agent)";
    type Path = ();
    type Input = SessionQuery;
    type Output = Vec<SessionRow>;

    async fn run(api: &Api, _: (), q: SessionQuery) -> Result<Vec<SessionRow>, ApiError> {
        let limit = q.limit.unwrap_or(50).min(MAX_SESSIONS_PAGE);
        let agent = q.agent.as_deref().filter(|a| !a.is_empty());
        Ok(api
            .store()
            .agent_sessions_page(agent, limit, q.offset.unwrap_or(0))?)
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct SessionTurnsQuery {
    /// At most this many turns, in order (default 200, at most 1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
    /// Skip this many of the first turns (default 0); `session.turn_count` says how many
    /// there are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<usize>,
}

/// Most turns one session call returns.
pub const MAX_TURNS_PAGE: usize = 1000;

/// A session with (a page of) its turns as the dashboard shows them.
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
    /// The RL reward the turn got (RL mode), with the parts it is the sum of.
    #[serde(default)]
    pub reward: Option<TurnRewardView>,
}

/// A turn's reward: the judge or the thumbs, plus the implicit parts of live use (each
/// signal × its weight in the settings). Rollout turns have their verifier's score and no
/// parts.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TurnRewardView {
    pub value: f64,
    pub source: metaclaw_store::RewardSource,
    pub parts: Vec<metaclaw_store::RewardPart>,
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

pub struct GetSession;

impl Operation for GetSession {
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/api/sessions/{id}";
    const SUMMARY: &'static str =
        "A session with its turns (pages: limit, offset), injected skills and feedback";
    type Path = String;
    type Input = SessionTurnsQuery;
    type Output = SessionDetail;

    async fn run(api: &Api, id: String, q: SessionTurnsQuery) -> Result<SessionDetail, ApiError> {
        let store = api.store();
        let session = store
            .session(&id)?
            .ok_or_else(|| ApiError::not_found(format!("no session `{id}`")))?;
        let feedback = store.feedback_in_session(&id)?;
        let mut parts = store.reward_parts_in_session(&id)?;
        // Only the conversation is shown: system prompts and tool lists stay blob refs.
        let turns = store
            .turns_in_session_unexpanded(
                &id,
                q.limit.unwrap_or(200).min(MAX_TURNS_PAGE),
                q.offset.unwrap_or(0),
            )?
            .into_iter()
            .map(|t| {
                let reward = store.turn_reward(&t.id)?.map(|r| TurnRewardView {
                    value: r.reward,
                    source: r.source,
                    parts: parts.remove(&t.id).unwrap_or_default(),
                });
                let mut s = summary(t, &feedback);
                s.reward = reward;
                Ok(s)
            })
            .collect::<Result<Vec<_>, metaclaw_store::StoreError>>()?;
        Ok(SessionDetail { session, turns })
    }
}

fn summary(t: TurnRow, feedback: &HashMap<String, metaclaw_store::Feedback>) -> TurnSummary {
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
    let feedback = feedback.get(&t.id).map(|f| TurnFeedback {
        rating: f.rating,
        note: f.note.clone(),
    });
    // Moved, not cloned: a turn's request can be large.
    let v = metaclaw_evolve::TurnView {
        turn_id: t.id,
        seq: t.seq,
        turn_type: t.turn_type,
        api: t.api,
        request: t.request,
        response: t.response,
        status: t.status,
        feedback: None,
        reward: None,
    };
    TurnSummary {
        user_text: metaclaw_evolve::redact(&metaclaw_evolve::user_text(&v)),
        assistant_text: metaclaw_evolve::redact(&metaclaw_evolve::assistant_text(&v)),
        id: v.turn_id,
        seq: t.seq,
        turn_type: t.turn_type,
        api: t.api,
        model: t.model,
        status: t.status,
        error: t.error,
        started_at: t.started_at,
        latency_ms: t.latency_ms,
        injected,
        feedback,
        skill_generation: t.skill_generation,
        reward: None,
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
