use axum::Json;
use axum::extract::State;
use serde_json::{Value, json};

use super::{ApiResult, ApiState};

pub(crate) async fn steps(State(s): State<ApiState>) -> ApiResult<Json<Value>> {
    Ok(Json(json!(s.store().training_steps(10_000)?)))
}

pub(crate) async fn checkpoints(State(s): State<ApiState>) -> ApiResult<Json<Value>> {
    Ok(Json(json!(s.store().checkpoints()?)))
}

/// Scheduler state for the status card.
pub(crate) fn scheduler_summary(scheduler: &metaclaw_scheduler::Scheduler) -> Value {
    let status = scheduler.status();
    let next = scheduler.next_window(chrono::Utc::now());
    json!({
        "enabled": scheduler.settings().enabled || scheduler.settings().mode_auto,
        "state": status.state,
        "source": status.window.map(|w| w.source),
        "next_window": next,
    })
}

pub(crate) async fn scheduler(State(s): State<ApiState>) -> ApiResult<Json<Value>> {
    let sched = &s.parts.scheduler;
    let now = chrono::Utc::now();
    let status = sched.status();
    Ok(Json(json!({
        "enabled": sched.settings().enabled || sched.settings().mode_auto,
        "state": status.state,
        "since": status.since,
        "source": status.window.map(|w| w.source),
        "window": status.window,
        "sources": status.sources,
        "next_window": sched.next_window(now),
        "timeline": sched.timeline(now, std::time::Duration::from_secs(24 * 3600)),
        "step_estimate_s": sched.step_estimate().map(|d| d.as_secs_f64()),
    })))
}
