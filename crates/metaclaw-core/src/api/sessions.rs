use axum::Json;
use axum::extract::{Path, Query, State};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{ApiError, ApiResult, ApiState};

#[derive(Deserialize)]
pub(crate) struct Limit {
    limit: Option<usize>,
}

pub(crate) async fn list(
    State(s): State<ApiState>,
    Query(q): Query<Limit>,
) -> ApiResult<Json<Value>> {
    let sessions = s.store().sessions(q.limit.unwrap_or(50).min(1000))?;
    Ok(Json(json!(sessions)))
}

fn view(turn: &metaclaw_store::TurnRow) -> metaclaw_evolve::TurnView {
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

pub(crate) async fn detail(
    State(s): State<ApiState>,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    let store = s.store();
    let session = store
        .session(&id)?
        .ok_or_else(|| ApiError::not_found(format!("no session `{id}`")))?;
    let feedback = store.feedback_in_session(&id)?;
    let turns: Vec<Value> = store
        .turns_in_session(&id)?
        .iter()
        .map(|t| {
            let v = view(t);
            let injected: Vec<Value> = t
                .injected
                .as_array()
                .into_iter()
                .flatten()
                .filter(|i| i.get("kind").and_then(Value::as_str) == Some("skill"))
                .map(|i| json!({"name": i["name"], "version": i["version"], "score": i["score"]}))
                .collect();
            json!({
                "id": t.id, "seq": t.seq, "turn_type": t.turn_type, "api": t.api, "model": t.model,
                "status": t.status, "error": t.error, "started_at": t.started_at, "latency_ms": t.latency_ms,
                "user_text": metaclaw_evolve::redact(&metaclaw_evolve::user_text(&v)),
                "assistant_text": metaclaw_evolve::redact(&metaclaw_evolve::assistant_text(&v)),
                "injected": injected,
                "feedback": feedback.get(&t.id).map(|f| json!({"rating": f.rating, "note": f.note})),
                "skill_generation": t.skill_generation,
            })
        })
        .collect();
    Ok(Json(json!({"session": session, "turns": turns})))
}

#[derive(Deserialize)]
pub(crate) struct FeedbackBody {
    rating: i8,
    note: Option<String>,
}

pub(crate) async fn feedback(
    State(s): State<ApiState>,
    Path(id): Path<String>,
    Json(b): Json<FeedbackBody>,
) -> ApiResult<Json<Value>> {
    if b.rating != 1 && b.rating != -1 {
        return Err(ApiError::bad_request(
            "rating must be 1 (thumbs up) or -1 (thumbs down)",
        ));
    }
    s.store()
        .set_feedback(&id, b.rating, b.note.filter(|n| !n.trim().is_empty()))?;
    Ok(Json(json!({"ok": true})))
}
