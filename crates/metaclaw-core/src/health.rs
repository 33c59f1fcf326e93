use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use metaclaw_domain::Clock;
use serde_json::{Value, json};

use crate::live::LiveConfig;

/// What `/healthz` reports; `metaclaw start` and `status` read it.
#[derive(Clone)]
pub(crate) struct Health {
    pub live: Arc<LiveConfig>,
    pub started_at: DateTime<Utc>,
    pub clock: Arc<dyn Clock>,
}

pub(crate) async fn healthz(State(h): State<Health>) -> Json<Value> {
    let uptime = (h.clock.now() - h.started_at).num_milliseconds().max(0) as f64 / 1000.0;
    Json(json!({
        "ok": true,
        "version": env!("CARGO_PKG_VERSION"),
        "pid": std::process::id(),
        "mode": h.live.get().mode.as_str(),
        "started_at": h.started_at.to_rfc3339(),
        "uptime_s": uptime,
    }))
}
