use axum::Json;
use axum::extract::{Path, Query, State};
use metaclaw_store::ProposalStatus;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{ApiError, ApiResult, ApiState};

#[derive(Deserialize)]
pub(crate) struct StatusFilter {
    status: Option<String>,
}

pub(crate) async fn list(
    State(s): State<ApiState>,
    Query(f): Query<StatusFilter>,
) -> ApiResult<Json<Value>> {
    let status = match f.status.as_deref().filter(|s| !s.is_empty() && *s != "all") {
        Some(text) => Some(
            text.parse::<ProposalStatus>()
                .map_err(|e| ApiError::bad_request(e.to_string()))?,
        ),
        None => None,
    };
    Ok(Json(json!(s.evolution()?.proposals(status)?)))
}

pub(crate) async fn detail(
    State(s): State<ApiState>,
    Path(id): Path<i64>,
) -> ApiResult<Json<Value>> {
    let p = s
        .store()
        .proposal(id)?
        .ok_or_else(|| ApiError::not_found(format!("no proposal #{id}")))?;
    Ok(Json(json!(p)))
}

#[derive(Deserialize, Default)]
pub(crate) struct ApproveBody {
    content: Option<String>,
}

pub(crate) async fn approve(
    State(s): State<ApiState>,
    Path(id): Path<i64>,
    body: Option<Json<ApproveBody>>,
) -> ApiResult<Json<Value>> {
    let content = body
        .and_then(|Json(b)| b.content)
        .filter(|c| !c.trim().is_empty());
    Ok(Json(json!(s.evolution()?.approve(id, content)?)))
}

#[derive(Deserialize, Default)]
pub(crate) struct RejectBody {
    reason: Option<String>,
}

pub(crate) async fn reject(
    State(s): State<ApiState>,
    Path(id): Path<i64>,
    body: Option<Json<RejectBody>>,
) -> ApiResult<Json<Value>> {
    let reason = body
        .and_then(|Json(b)| b.reason)
        .filter(|r| !r.trim().is_empty());
    s.evolution()?.reject(id, reason)?;
    Ok(Json(json!({"ok": true})))
}

pub(crate) async fn undo(State(s): State<ApiState>, Path(id): Path<i64>) -> ApiResult<Json<Value>> {
    Ok(Json(json!(s.evolution()?.undo(id)?)))
}

#[derive(Deserialize)]
pub(crate) struct BulkBody {
    action: String,
    ids: Vec<i64>,
    reason: Option<String>,
}

pub(crate) async fn bulk(
    State(s): State<ApiState>,
    Json(b): Json<BulkBody>,
) -> ApiResult<Json<Value>> {
    let evo = s.evolution()?;
    if b.action != "approve" && b.action != "reject" {
        return Err(ApiError::bad_request(
            "`action` must be \"approve\" or \"reject\"",
        ));
    }
    let results: Vec<Value> = b
        .ids
        .iter()
        .map(|id| {
            let r = if b.action == "approve" {
                evo.approve(*id, None).map(|_| ())
            } else {
                evo.reject(*id, b.reason.clone())
            };
            match r {
                Ok(()) => json!({"id": id, "ok": true, "error": null}),
                Err(e) => json!({"id": id, "ok": false, "error": e.to_string()}),
            }
        })
        .collect();
    Ok(Json(json!({"results": results})))
}

#[derive(Deserialize, Default)]
pub(crate) struct DistilBody {
    session_id: Option<String>,
}

pub(crate) async fn distil(
    State(s): State<ApiState>,
    body: Option<Json<DistilBody>>,
) -> ApiResult<Json<Value>> {
    let session = match body.and_then(|Json(b)| b.session_id) {
        Some(id) => id,
        None => s
            .store()
            .sessions(1)?
            .into_iter()
            .next()
            .map(|x| x.id)
            .ok_or_else(|| ApiError::not_found("no sessions recorded yet"))?,
    };
    let report = s
        .evolution()?
        .distil(&session, metaclaw_store::EvolutionTrigger::Manual)
        .await?;
    Ok(Json(json!(report)))
}
