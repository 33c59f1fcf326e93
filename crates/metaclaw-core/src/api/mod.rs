//! The one API of the running core. Every operation (status, settings, skills, proposals,
//! sessions, feedback, training, scheduler, wiring, login) is a typed [`Operation`] in `ops`;
//! the `/api` routes (`http`), the OpenAPI document (`openapi`), the HTTP client the CLI uses
//! (`client`) and the tray's in-process calls ([`Api::call`]) are all derived from them.
//! The same router serves the tray app's window and a browser; see docs/api.md.

mod auth;
mod catalogue;
mod charts;
pub mod client;
mod error;
mod events;
mod http;
pub mod openapi;
mod operation;
pub mod ops;
mod ui;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use metaclaw_config::{Config, Home};
use metaclaw_domain::{Clock, Event};
use metaclaw_store::Store;
use tokio::sync::broadcast;

pub use catalogue::routes;
pub use client::ApiClient;
pub use error::{ApiError, ErrorBody, ErrorCode, FieldError};
pub use operation::{Method, NoInput, Operation, PathArgs};

use crate::error::{CoreError, SkillError};
use crate::evolution::Evolution;
use crate::live::LiveConfig;
use crate::skills::SkillService;

/// What the operations work on: the parts of one core.
pub(crate) struct ApiParts {
    pub store: Arc<Store>,
    pub skills: Arc<SkillService>,
    pub evolution: Arc<Evolution>,
    pub events: broadcast::Sender<Event>,
    pub live: Arc<LiveConfig>,
    pub home: Home,
    pub clock: Arc<dyn Clock>,
    pub started_at: DateTime<Utc>,
    /// Cancelled on shutdown: long-lived event streams end so the server can stop.
    pub shutdown: tokio_util::sync::CancellationToken,
    pub scheduler: Arc<metaclaw_scheduler::Scheduler>,
    pub rl: Arc<metaclaw_rl::RlService>,
    /// Where the proxy and this API listen; `None` for a CLI working on the home directly.
    pub addr: Option<std::net::SocketAddr>,
    /// Rollouts, evaluations and the adapter gate; `None` without a listening proxy.
    pub tasks: Option<Arc<crate::rollout::TaskRunner>>,
}

/// A handle on the core's API. Cheap to clone; every clone acts on the same core.
#[derive(Clone)]
pub struct Api(Arc<Inner>);

pub(crate) struct Inner {
    pub parts: ApiParts,
    /// The per-install dashboard token.
    pub token: String,
    /// One-time login codes and when they expire.
    pub codes: Mutex<HashMap<String, DateTime<Utc>>>,
}

impl Api {
    pub(crate) fn new(parts: ApiParts) -> Result<Api, CoreError> {
        let token = auth::load_or_create_token(&parts.home)?;
        Ok(Api(Arc::new(Inner {
            parts,
            token,
            codes: Mutex::default(),
        })))
    }

    /// Run one operation in process (the tray; the CLI when no daemon runs).
    pub async fn call<O: Operation>(
        &self,
        path: O::Path,
        input: O::Input,
    ) -> Result<O::Output, ApiError> {
        O::run(self, path, input).await
    }

    /// The running configuration.
    pub fn config(&self) -> Arc<Config> {
        self.0.parts.live.get()
    }

    /// Where the proxy and the dashboard listen, when this core serves them.
    pub fn addr(&self) -> Option<std::net::SocketAddr> {
        self.0.parts.addr
    }

    /// The skill library, unless `skills.enabled` is off.
    pub(crate) fn skills(&self) -> Result<&Arc<SkillService>, ApiError> {
        let parts = &self.0.parts;
        if parts.skills.is_enabled() {
            Ok(&parts.skills)
        } else {
            Err(SkillError::Off.into())
        }
    }

    /// Skill evolution and the review inbox, unless `skills.enabled` is off.
    pub(crate) fn evolution(&self) -> Result<&Arc<Evolution>, ApiError> {
        self.skills()?;
        Ok(&self.0.parts.evolution)
    }

    pub(crate) fn parts(&self) -> &ApiParts {
        &self.0.parts
    }

    pub(crate) fn token(&self) -> &str {
        &self.0.token
    }

    pub(crate) fn codes(&self) -> std::sync::MutexGuard<'_, HashMap<String, DateTime<Utc>>> {
        self.0.codes.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn store(&self) -> &Store {
        &self.0.parts.store
    }

    pub(crate) fn now(&self) -> DateTime<Utc> {
        self.0.parts.clock.now()
    }
}

/// The dashboard: `/api` (token or login cookie), `/login`, and the built UI at `/`, all on
/// loopback host names only.
pub(crate) fn router(api: Api) -> axum::Router {
    let routes = catalogue::router()
        .layer(axum::middleware::from_fn_with_state(
            api.clone(),
            auth::require_token,
        ))
        .layer(axum::extract::DefaultBodyLimit::max(4 * 1024 * 1024));
    axum::Router::new()
        .merge(routes)
        .route("/login", axum::routing::get(auth::login))
        .fallback(ui::serve)
        .layer(axum::middleware::from_fn(auth::loopback_only))
        .with_state(api)
}
