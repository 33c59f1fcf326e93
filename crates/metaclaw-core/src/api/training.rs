use axum::Json;
use axum::extract::State;
use serde_json::{Value, json};

use super::error::ApiError;
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

/// Runs one training step now on everything that is ready (`metaclaw train-step`).
pub(crate) async fn step(State(s): State<ApiState>) -> ApiResult<Json<Value>> {
    match s.parts.rl.train_step().await {
        Ok(outcome) => Ok(Json(json!(outcome))),
        Err(metaclaw_rl::RlError::Config(m)) => {
            Err(ApiError::new(axum::http::StatusCode::CONFLICT, m))
        }
        Err(e) => Err(ApiError::new(
            axum::http::StatusCode::BAD_GATEWAY,
            e.to_string(),
        )),
    }
}

/// RL mode's state: phase, what is missing, reward sources, sampler, sample counts.
pub(crate) async fn rl_status(State(s): State<ApiState>) -> ApiResult<Json<Value>> {
    Ok(Json(json!(s.parts.rl.status())))
}
