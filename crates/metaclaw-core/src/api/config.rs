use std::time::Instant;

use axum::Json;
use axum::extract::State;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{ApiError, ApiResult, ApiState};

fn masked(config: &metaclaw_config::Config) -> Value {
    metaclaw_config::masked(&config.to_document())
}

pub(crate) async fn read(State(s): State<ApiState>) -> ApiResult<Json<Value>> {
    Ok(Json(masked(&s.parts.live.get())))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct LlmPatch {
    api_base: Option<String>,
    model_id: Option<String>,
    api_key: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Patch {
    mode: Option<String>,
    opd_enabled: Option<bool>,
    rl_enabled: Option<bool>,
    learning_paused: Option<bool>,
    llm: Option<LlmPatch>,
}

pub(crate) async fn patch(
    State(s): State<ApiState>,
    Json(p): Json<Patch>,
) -> ApiResult<Json<Value>> {
    let mut changes: Vec<(&str, Value)> = Vec::new();
    if let Some(m) = p.mode {
        changes.push(("mode", json!(m)));
    }
    if let Some(v) = p.opd_enabled {
        changes.push(("opd.enabled", json!(v)));
    }
    if let Some(v) = p.rl_enabled {
        changes.push(("rl.enabled", json!(v)));
    }
    if let Some(v) = p.learning_paused {
        changes.push(("learning_paused", json!(v)));
    }
    let mut restart_required = false;
    if let Some(llm) = p.llm {
        for (key, value) in [
            ("llm.api_base", llm.api_base),
            ("llm.model_id", llm.model_id),
            ("llm.api_key", llm.api_key),
        ] {
            if let Some(v) = value {
                changes.push((key, json!(v)));
                // The proxy reads its upstream at start-up.
                restart_required = true;
            }
        }
    }
    if changes.is_empty() {
        return Err(ApiError::bad_request("nothing to change"));
    }
    let config = s.parts.live.update(&changes)?;
    Ok(Json(
        json!({"config": masked(&config), "restart_required": restart_required}),
    ))
}

#[derive(Deserialize)]
pub(crate) struct Target {
    target: String,
}

pub(crate) async fn test_connection(
    State(s): State<ApiState>,
    Json(t): Json<Target>,
) -> ApiResult<Json<Value>> {
    let config = s.parts.live.get();
    let (base, key) = match t.target.as_str() {
        "llm" => (config.llm.api_base.clone(), config.llm.api_key.clone()),
        "evolver" if !config.rl.evolver_api_base.is_empty() => (
            config.rl.evolver_api_base.clone(),
            config.rl.evolver_api_key.clone(),
        ),
        "evolver" => (config.llm.api_base.clone(), config.llm.api_key.clone()),
        "embedding" => {
            let e = &config.skills.embedding;
            let base = if e.api_base.is_empty() {
                config.llm.api_base.clone()
            } else {
                e.api_base.clone()
            };
            let key = if e.api_key.is_empty() {
                config.llm.api_key.clone()
            } else {
                e.api_key.clone()
            };
            (base, key)
        }
        other => {
            return Err(ApiError::bad_request(format!(
                "unknown target `{other}` (llm, evolver or embedding)"
            )));
        }
    };
    if base.is_empty() {
        return Ok(Json(
            json!({"ok": false, "detail": "no endpoint configured", "latency_ms": Value::Null}),
        ));
    }
    let started = Instant::now();
    let mut req = s.http.get(format!("{}/models", base.trim_end_matches('/')));
    if !key.is_empty() {
        req = req.bearer_auth(&key).header("x-api-key", &key);
    }
    let (ok, detail) = match req.send().await {
        Ok(r) if r.status().is_success() => {
            (true, format!("reachable (HTTP {})", r.status().as_u16()))
        }
        Ok(r) if matches!(r.status().as_u16(), 401 | 403) => (
            false,
            format!(
                "reachable, but HTTP {}: check the API key",
                r.status().as_u16()
            ),
        ),
        Ok(r) => (true, format!("reachable (HTTP {})", r.status().as_u16())),
        Err(e) if e.is_timeout() => (false, "timed out".to_owned()),
        Err(e) => (false, format!("unreachable: {e}")),
    };
    Ok(Json(
        json!({"ok": ok, "detail": detail, "latency_ms": started.elapsed().as_secs_f64() * 1000.0}),
    ))
}
