use std::sync::Arc;
use std::time::Duration;

use metaclaw_domain::{Clock, Event};
use tokio::sync::broadcast;

use crate::hooks::Hooks;
use crate::local::LocalModel;
use crate::session::SessionTracker;
use crate::settings::ProxySettings;
use crate::truncate::{EstimateCounter, TokenCounter};

/// Everything the `/v1` handlers share. Cheap to clone.
#[derive(Clone)]
pub struct ProxyState {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub settings: ProxySettings,
    pub client: reqwest::Client,
    pub sessions: SessionTracker,
    pub hooks: Hooks,
    pub counter: Arc<dyn TokenCounter>,
    pub clock: Arc<dyn Clock>,
    pub events: broadcast::Sender<Event>,
    pub local: Option<Arc<dyn LocalModel>>,
}

/// Builds a [`ProxyState`]; the defaults suit production.
pub struct ProxyStateBuilder {
    settings: ProxySettings,
    clock: Arc<dyn Clock>,
    events: broadcast::Sender<Event>,
    hooks: Hooks,
    counter: Arc<dyn TokenCounter>,
    local: Option<Arc<dyn LocalModel>>,
}

impl ProxyState {
    pub fn builder(
        settings: ProxySettings,
        clock: Arc<dyn Clock>,
        events: broadcast::Sender<Event>,
    ) -> ProxyStateBuilder {
        ProxyStateBuilder {
            settings,
            clock,
            events,
            hooks: Hooks::default(),
            counter: Arc::new(EstimateCounter),
            local: None,
        }
    }

    pub fn sessions(&self) -> &SessionTracker {
        &self.inner.sessions
    }

    pub fn settings(&self) -> &ProxySettings {
        &self.inner.settings
    }
}

impl ProxyStateBuilder {
    pub fn hooks(mut self, hooks: Hooks) -> Self {
        self.hooks = hooks;
        self
    }

    pub fn token_counter(mut self, counter: Arc<dyn TokenCounter>) -> Self {
        self.counter = counter;
        self
    }

    /// A model served in-process for the turns it claims (the RL policy).
    pub fn local_model(mut self, model: Arc<dyn LocalModel>) -> Self {
        self.local = Some(model);
        self
    }

    pub fn build(self) -> Result<ProxyState, reqwest::Error> {
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            // Applies to each read, so a stream that goes silent is cut off too.
            .read_timeout(self.settings.upstream.timeout)
            .pool_idle_timeout(Duration::from_secs(90))
            .pool_max_idle_per_host(256)
            .tcp_nodelay(true)
            .user_agent(concat!("metaclaw/", env!("CARGO_PKG_VERSION")))
            .build()?;
        let sessions = SessionTracker::new(
            self.clock.clone(),
            self.settings.session_idle_timeout,
            self.events.clone(),
        );
        Ok(ProxyState {
            inner: Arc::new(Inner {
                settings: self.settings,
                client,
                sessions,
                hooks: self.hooks,
                counter: self.counter,
                clock: self.clock,
                events: self.events,
                local: self.local,
            }),
        })
    }
}
