//! The dashboard API under `/api` (see docs/api.md), the one-time login, and the built UI at
//! `/`. The same router serves the tray app's window and a browser.

mod auth;
mod charts;
mod config;
mod error;
mod events;
mod openapi;
mod proposals;
mod sessions;
mod skills;
mod status;
mod training;
mod ui;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::routing::{get, post};
use chrono::{DateTime, Utc};
use metaclaw_config::Home;
use metaclaw_domain::{Clock, Event};
use metaclaw_store::Store;
use tokio::sync::broadcast;

pub(crate) use error::{ApiError, ApiResult};

use crate::error::CoreError;
use crate::evolution::Evolution;
use crate::live::LiveConfig;
use crate::skills::SkillService;

pub(crate) struct ApiParts {
    pub store: Arc<Store>,
    pub skills: Option<Arc<SkillService>>,
    pub evolution: Option<Arc<Evolution>>,
    pub events: broadcast::Sender<Event>,
    pub live: Arc<LiveConfig>,
    pub home: Home,
    pub clock: Arc<dyn Clock>,
    pub started_at: DateTime<Utc>,
    /// Cancelled on shutdown: long-lived event streams end so the server can stop.
    pub shutdown: tokio_util::sync::CancellationToken,
    pub scheduler: Arc<metaclaw_scheduler::Scheduler>,
    pub rl: Arc<metaclaw_rl::RlService>,
}

#[derive(Clone)]
pub(crate) struct ApiState(Arc<Inner>);

pub(crate) struct Inner {
    pub parts: ApiParts,
    /// The per-install dashboard token.
    pub token: String,
    /// One-time login codes and when they expire.
    pub codes: Mutex<HashMap<String, DateTime<Utc>>>,
    pub http: reqwest::Client,
}

impl std::ops::Deref for ApiState {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}

impl ApiState {
    pub fn new(parts: ApiParts) -> Result<ApiState, CoreError> {
        let token = auth::load_or_create_token(&parts.home)?;
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| CoreError::Http(e.to_string()))?;
        Ok(ApiState(Arc::new(Inner {
            parts,
            token,
            codes: Mutex::default(),
            http,
        })))
    }

    pub fn skills(&self) -> ApiResult<&Arc<SkillService>> {
        self.parts.skills.as_ref().ok_or_else(|| {
            ApiError::new(
                axum::http::StatusCode::SERVICE_UNAVAILABLE,
                "skills are off (skills.enabled: false)",
            )
        })
    }

    pub fn evolution(&self) -> ApiResult<&Arc<Evolution>> {
        self.parts.evolution.as_ref().ok_or_else(|| {
            ApiError::new(
                axum::http::StatusCode::SERVICE_UNAVAILABLE,
                "skills are off (skills.enabled: false)",
            )
        })
    }

    pub fn store(&self) -> &Store {
        &self.parts.store
    }
}

/// Every `/api` route; the OpenAPI document lists exactly these (tested).
fn api_routes() -> Router<ApiState> {
    Router::new()
        .route("/api/status", get(status::status))
        .route("/api/sessions", get(sessions::list))
        .route("/api/sessions/{id}", get(sessions::detail))
        .route("/api/turns/{id}/feedback", post(sessions::feedback))
        .route("/api/skills", get(skills::list).post(skills::create))
        .route(
            "/api/skills/{name}",
            get(skills::detail).put(skills::edit).delete(skills::delete),
        )
        .route("/api/skills/{name}/state", post(skills::set_state))
        .route("/api/skills/{name}/history", get(skills::history))
        .route("/api/skills/{name}/rollback", post(skills::rollback))
        .route("/api/retrieval", post(skills::retrieval))
        .route("/api/proposals", get(proposals::list))
        .route("/api/proposals/bulk", post(proposals::bulk))
        .route("/api/proposals/{id}", get(proposals::detail))
        .route("/api/proposals/{id}/approve", post(proposals::approve))
        .route("/api/proposals/{id}/reject", post(proposals::reject))
        .route("/api/proposals/{id}/undo", post(proposals::undo))
        .route("/api/distil", post(proposals::distil))
        .route("/api/training/steps", get(training::steps))
        .route("/api/training/checkpoints", get(training::checkpoints))
        .route("/api/training/step", post(training::step))
        .route("/api/rl", get(training::rl_status))
        .route("/api/scheduler", get(training::scheduler))
        .route("/api/config", get(config::read).patch(config::patch))
        .route("/api/config/test-connection", post(config::test_connection))
        .route("/api/charts/{name}", get(charts::chart))
        .route("/api/events", get(events::stream))
        .route("/api/openapi.json", get(openapi::document))
        .route("/api/login-codes", post(auth::new_login_code))
        .fallback(|| async { ApiError::not_found("unknown API endpoint") })
}

pub(crate) fn router(state: ApiState) -> Router {
    let api = api_routes()
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::require_token,
        ))
        .layer(axum::extract::DefaultBodyLimit::max(4 * 1024 * 1024));
    Router::new()
        .merge(api)
        .route("/login", get(auth::login))
        .fallback(ui::serve)
        .layer(axum::middleware::from_fn(auth::loopback_only))
        .with_state(state)
}
