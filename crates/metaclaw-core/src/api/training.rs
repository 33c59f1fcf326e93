use axum::Json;
use axum::extract::State;
use chrono::{Duration, Local, NaiveTime, TimeZone};
use metaclaw_config::Config;
use serde_json::{Value, json};

use super::{ApiResult, ApiState};

pub(crate) async fn steps(State(s): State<ApiState>) -> ApiResult<Json<Value>> {
    Ok(Json(json!(s.store().training_steps(10_000)?)))
}

pub(crate) async fn checkpoints(State(s): State<ApiState>) -> ApiResult<Json<Value>> {
    Ok(Json(json!(s.store().checkpoints()?)))
}

/// Sleep-hour windows in the next 24 hours, from the configured local times.
fn sleep_band(config: &Config) -> Vec<Value> {
    let parse = |t: &str| NaiveTime::parse_from_str(t, "%H:%M").ok();
    let (Some(start), Some(end)) = (
        parse(&config.scheduler.sleep_start),
        parse(&config.scheduler.sleep_end),
    ) else {
        return Vec::new();
    };
    let now = Local::now();
    let horizon = now + Duration::hours(24);
    let mut out = Vec::new();
    for day in [-1i64, 0, 1] {
        let date = now.date_naive() + Duration::days(day);
        let Some(s) = Local.from_local_datetime(&date.and_time(start)).earliest() else {
            continue;
        };
        let end_date = if end <= start {
            date + Duration::days(1)
        } else {
            date
        };
        let Some(e) = Local
            .from_local_datetime(&end_date.and_time(end))
            .earliest()
        else {
            continue;
        };
        if e > now && s < horizon {
            out.push(json!({"start": s.max(now).to_rfc3339(), "end": e.min(horizon).to_rfc3339(), "kind": "sleep"}));
        }
    }
    out
}

/// Scheduler state for the status card (the OMLS scheduler fills in the live state).
pub(crate) fn scheduler_summary(config: &Config) -> Value {
    let enabled = config.scheduler.enabled || config.mode == metaclaw_config::Mode::Auto;
    let next = sleep_band(config).into_iter().next();
    json!({
        "enabled": enabled,
        "state": if enabled { "idle_wait" } else { "disabled" },
        "source": Value::Null,
        "next_window": next.map(|w| json!({"start": w["start"], "end": w["end"], "source": "sleep"})),
    })
}

pub(crate) async fn scheduler(State(s): State<ApiState>) -> ApiResult<Json<Value>> {
    let config = s.parts.live.get();
    let mut summary = scheduler_summary(&config);
    let mut timeline = sleep_band(&config);
    // Past training windows: the steps of the last 24 hours.
    let since = chrono::Utc::now() - Duration::hours(24);
    for step in s.store().training_steps(10_000)? {
        if step.started_at >= since {
            let end = step.finished_at.unwrap_or_else(chrono::Utc::now);
            timeline.push(json!({"start": step.started_at.to_rfc3339(), "end": end.to_rfc3339(), "kind": "training"}));
        }
    }
    summary["sources"] = json!({
        "sleep": {"start": config.scheduler.sleep_start, "end": config.scheduler.sleep_end},
        "idle": {"threshold_minutes": config.scheduler.idle_threshold_minutes, "available": Value::Null},
        "calendar": {"paths": [], "urls": []},
    });
    summary["timeline"] = Value::Array(timeline);
    Ok(Json(summary))
}
