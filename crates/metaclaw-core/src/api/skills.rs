use axum::Json;
use axum::extract::{Path, Query, State};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{ApiError, ApiResult, ApiState};

#[derive(Deserialize)]
pub(crate) struct Filter {
    q: Option<String>,
    category: Option<String>,
}

pub(crate) async fn list(
    State(s): State<ApiState>,
    Query(f): Query<Filter>,
) -> ApiResult<Json<Value>> {
    let mut skills = s.skills()?.list();
    if let Some(c) = f.category.filter(|c| !c.is_empty()) {
        skills.retain(|x| x.category == c);
    }
    if let Some(q) = f.q.map(|q| q.to_lowercase()).filter(|q| !q.is_empty()) {
        skills.retain(|x| x.name.contains(&q) || x.description.to_lowercase().contains(&q));
    }
    Ok(Json(json!(skills)))
}

pub(crate) async fn detail(
    State(s): State<ApiState>,
    Path(name): Path<String>,
) -> ApiResult<Json<Value>> {
    let svc = s.skills()?;
    let info = svc
        .list()
        .into_iter()
        .find(|x| x.name == name)
        .ok_or_else(|| ApiError::not_found(format!("no skill named `{name}`")))?;
    let lib = svc.library();
    let skill = lib
        .get(&name)
        .ok_or_else(|| ApiError::not_found(format!("no skill named `{name}`")))?;
    let content = skill.file_text();
    let problems: Vec<Value> = metaclaw_skills::check_skill(skill, &name)
        .into_iter()
        .map(|f| json!({"level": f.level, "message": f.message}))
        .collect();
    Ok(Json(
        json!({"skill": info, "content": content, "problems": problems}),
    ))
}

#[derive(Deserialize)]
pub(crate) struct Content {
    content: String,
}

pub(crate) async fn create(
    State(s): State<ApiState>,
    Json(b): Json<Content>,
) -> ApiResult<Json<Value>> {
    Ok(Json(json!(s.evolution()?.create_skill(&b.content)?)))
}

pub(crate) async fn edit(
    State(s): State<ApiState>,
    Path(name): Path<String>,
    Json(b): Json<Content>,
) -> ApiResult<Json<Value>> {
    Ok(Json(json!(s.evolution()?.edit_skill(&name, &b.content)?)))
}

pub(crate) async fn delete(
    State(s): State<ApiState>,
    Path(name): Path<String>,
) -> ApiResult<Json<Value>> {
    Ok(Json(json!(s.evolution()?.delete_skill(&name)?)))
}

#[derive(Deserialize)]
pub(crate) struct StateBody {
    enabled: Option<bool>,
    pinned: Option<bool>,
}

pub(crate) async fn set_state(
    State(s): State<ApiState>,
    Path(name): Path<String>,
    Json(b): Json<StateBody>,
) -> ApiResult<Json<Value>> {
    if b.enabled.is_none() && b.pinned.is_none() {
        return Err(ApiError::bad_request("send `enabled` and/or `pinned`"));
    }
    s.skills()?.set_state(&name, b.enabled, b.pinned)?;
    Ok(Json(json!({"ok": true})))
}

pub(crate) async fn history(
    State(s): State<ApiState>,
    Path(name): Path<String>,
) -> ApiResult<Json<Value>> {
    Ok(Json(json!(s.evolution()?.history(&name)?)))
}

#[derive(Deserialize)]
pub(crate) struct RollbackBody {
    version: u64,
}

pub(crate) async fn rollback(
    State(s): State<ApiState>,
    Path(name): Path<String>,
    Json(b): Json<RollbackBody>,
) -> ApiResult<Json<Value>> {
    Ok(Json(json!(s.evolution()?.rollback(&name, b.version)?)))
}

#[derive(Deserialize)]
pub(crate) struct QueryBody {
    query: String,
}

pub(crate) async fn retrieval(
    State(s): State<ApiState>,
    Json(b): Json<QueryBody>,
) -> ApiResult<Json<Value>> {
    if b.query.trim().is_empty() {
        return Err(ApiError::bad_request("`query` must not be empty"));
    }
    Ok(Json(json!(s.skills()?.retrieve(&b.query).await)))
}
