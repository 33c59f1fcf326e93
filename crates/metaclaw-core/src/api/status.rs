use axum::Json;
use axum::extract::State;
use chrono::{Local, TimeZone, Utc};
use serde_json::{Value, json};

use super::{ApiResult, ApiState};

pub(crate) async fn status(State(s): State<ApiState>) -> ApiResult<Json<Value>> {
    let config = s.parts.live.get();
    let store = s.store();
    let midnight = Local::now()
        .date_naive()
        .and_hms_opt(0, 0, 0)
        .and_then(|t| Local.from_local_datetime(&t).earliest());
    let turns_today = match midnight {
        Some(m) => store.turns_since(m.with_timezone(&Utc))?,
        None => 0,
    };
    let pending = store
        .proposals(Some(metaclaw_store::ProposalStatus::Pending))?
        .len();
    let skills = s.parts.skills.as_ref().map_or(0, |svc| svc.library().len());
    let current = store.current_training_step()?;
    let uptime = (s.parts.clock.now() - s.parts.started_at)
        .num_milliseconds()
        .max(0) as f64
        / 1000.0;
    let rl = s.parts.rl.status();
    let rl_message = rl_message(&rl);
    Ok(Json(json!({
        "version": env!("CARGO_PKG_VERSION"),
        "pid": std::process::id(),
        "uptime_s": uptime,
        "mode": config.mode.as_str(),
        "opd_enabled": config.opd.enabled,
        "rl_enabled": config.rl.enabled,
        "learning_paused": config.learning_paused,
        "upstream": {"url": config.llm.api_base, "reachable": Value::Null, "detail": "use Test connection in Settings"},
        "counts": {
            "sessions": store.session_count()?,
            "turns": store.turn_count()?,
            "turns_today": turns_today,
            "skills": skills,
            "pending_proposals": pending,
        },
        "training": {
            "running": current.is_some(),
            "step": current.as_ref().map(|c| c.step),
            "progress": current.as_ref().and_then(|c| c.progress),
            "message": if current.is_some() { "training".to_owned() } else { rl_message },
        },
        "rl": rl,
        "scheduler": super::training::scheduler_summary(&s.parts.scheduler),
        "last_evolution_failure": store.last_evolution_failure()?,
    })))
}

/// One line for the status card: what RL is doing, or what it needs.
fn rl_message(rl: &metaclaw_rl::RlStatus) -> String {
    use metaclaw_rl::Phase;
    match (rl.phase, &rl.message) {
        (Phase::Off, _) if !rl.mode.is_rl() => "RL is off — switch the mode to rl or auto".into(),
        (Phase::Failed, Some(m)) => m.clone(),
        (Phase::Starting, _) => "RL is starting (creating the LoRA model)".into(),
        (Phase::Serving, _) => match rl.warnings.first() {
            Some(w) => format!("serving the policy; {w}"),
            None => "serving the policy".into(),
        },
        _ => "RL is waiting to start".into(),
    }
}
