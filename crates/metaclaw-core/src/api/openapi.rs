//! The OpenAPI document of `/api`. It and the router in `mod.rs` must list the same routes;
//! a test calls every documented operation.

use axum::Json;
use serde_json::{Map, Value, json};

/// (method, path, summary) for every route.
const OPERATIONS: &[(&str, &str, &str)] = &[
    (
        "get",
        "/api/status",
        "Mode, health, counts, training and scheduler state",
    ),
    ("get", "/api/sessions", "Recent sessions"),
    (
        "get",
        "/api/sessions/{id}",
        "A session with its turns, injected skills and feedback",
    ),
    (
        "post",
        "/api/turns/{id}/feedback",
        "Thumbs up (1) or down (-1) on a turn, with a note",
    ),
    (
        "get",
        "/api/skills",
        "Skills in effect, with switches and usage (filter: q, category)",
    ),
    (
        "post",
        "/api/skills",
        "Create a user skill from SKILL.md text",
    ),
    (
        "get",
        "/api/skills/{name}",
        "One skill: info, SKILL.md text and lint problems",
    ),
    (
        "put",
        "/api/skills/{name}",
        "Replace a skill's SKILL.md (a new version)",
    ),
    (
        "delete",
        "/api/skills/{name}",
        "Remove the user's copy of a skill",
    ),
    (
        "post",
        "/api/skills/{name}/state",
        "Enable, disable, pin or unpin a skill",
    ),
    (
        "get",
        "/api/skills/{name}/history",
        "Every version of a skill",
    ),
    (
        "post",
        "/api/skills/{name}/rollback",
        "Restore a version of a skill",
    ),
    (
        "post",
        "/api/retrieval",
        "Try retrieval: every candidate with its score and reason",
    ),
    ("get", "/api/proposals", "Skill proposals (filter: status)"),
    (
        "post",
        "/api/proposals/bulk",
        "Approve or reject several proposals",
    ),
    (
        "get",
        "/api/proposals/{id}",
        "One proposal with provenance and diff",
    ),
    (
        "post",
        "/api/proposals/{id}/approve",
        "Approve, optionally with edited content",
    ),
    (
        "post",
        "/api/proposals/{id}/reject",
        "Reject, with an optional reason",
    ),
    ("post", "/api/proposals/{id}/undo", "Take back an approval"),
    ("post", "/api/distil", "Distil skills from a session now"),
    (
        "get",
        "/api/training/steps",
        "Training steps and their metrics",
    ),
    ("get", "/api/training/checkpoints", "Saved checkpoints"),
    (
        "get",
        "/api/scheduler",
        "Scheduler state, sources, next window and 24 h timeline",
    ),
    (
        "get",
        "/api/config",
        "The effective configuration, secrets masked",
    ),
    (
        "patch",
        "/api/config",
        "Change mode, OPD, RL, pause learning or the LLM endpoint",
    ),
    (
        "post",
        "/api/config/test-connection",
        "Check that an endpoint answers",
    ),
    (
        "get",
        "/api/charts/{name}",
        "An SVG chart (reward.svg, loss.svg, success_rate.svg, kl.svg, prm_distribution.svg, turns_per_day.svg)",
    ),
    ("get", "/api/events", "Live updates as Server-Sent Events"),
    ("get", "/api/openapi.json", "This document"),
    (
        "post",
        "/api/login-codes",
        "A one-time login code for the browser",
    ),
];

pub(crate) async fn document() -> Json<Value> {
    let mut paths = Map::new();
    for (method, path, summary) in OPERATIONS {
        let params: Vec<Value> = path
            .split('/')
            .filter_map(|seg| seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
            .map(|name| json!({"name": name, "in": "path", "required": true, "schema": {"type": "string"}}))
            .collect();
        let entry = paths.entry((*path).to_owned()).or_insert_with(|| json!({}));
        entry[*method] = json!({
            "summary": summary,
            "parameters": params,
            "security": [{"bearer": []}, {"cookie": []}],
            "responses": {
                "200": {"description": "OK"},
                "400": {"$ref": "#/components/responses/Error"},
                "401": {"$ref": "#/components/responses/Error"},
                "404": {"$ref": "#/components/responses/Error"}
            }
        });
    }
    Json(json!({
        "openapi": "3.1.0",
        "info": {"title": "MetaClaw dashboard API", "version": env!("CARGO_PKG_VERSION")},
        "paths": paths,
        "components": {
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "cookie": {"type": "apiKey", "in": "cookie", "name": super::auth::COOKIE}
            },
            "responses": {"Error": {"description": "An error", "content": {"application/json": {"schema": {
                "type": "object", "properties": {"error": {"type": "object", "properties": {
                    "message": {"type": "string"}, "code": {"type": "string"}}}}}}}}}
        }
    }))
}
