use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use metaclaw_domain::{Clock, Event};
use tokio::sync::broadcast;

use crate::hooks::Hooks;
use crate::local::LocalModel;
use crate::session::SessionTracker;
use crate::settings::ProxySettings;
use crate::truncate::{EstimateCounter, TokenCounter};

/// Everything the `/v1` handlers share. Cheap to clone. A change of settings swaps the whole
/// `Inner` (settings and the upstream client built for them): a request takes one snapshot when
/// it starts, so requests in flight finish on the upstream they started with.
#[derive(Clone)]
pub struct ProxyState {
    current: Arc<ArcSwap<Inner>>,
}

pub(crate) struct Inner {
    pub settings: ProxySettings,
    pub client: reqwest::Client,
    /// Shared by every snapshot: open sessions outlive a settings change.
    pub sessions: Arc<SessionTracker>,
    pub hooks: Hooks,
    pub counter: Arc<dyn TokenCounter>,
    pub clock: Arc<dyn Clock>,
    pub events: broadcast::Sender<Event>,
    pub local: Option<Arc<dyn LocalModel>>,
    /// Kept for the next client a settings change builds.
    pub tls: Option<native_tls::TlsConnector>,
}

/// Builds a [`ProxyState`]; the defaults suit production.
pub struct ProxyStateBuilder {
    settings: ProxySettings,
    clock: Arc<dyn Clock>,
    events: broadcast::Sender<Event>,
    hooks: Hooks,
    counter: Arc<dyn TokenCounter>,
    local: Option<Arc<dyn LocalModel>>,
    tls: Option<native_tls::TlsConnector>,
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
            tls: None,
        }
    }

    /// The snapshot a request works with from start to end.
    pub(crate) fn inner(&self) -> Arc<Inner> {
        self.current.load_full()
    }

    pub fn sessions(&self) -> Arc<SessionTracker> {
        self.inner().sessions.clone()
    }

    pub fn settings(&self) -> ProxySettings {
        self.inner().settings.clone()
    }

    /// Serve new requests with `settings` (a new upstream, key, timeout, limits); requests
    /// already started finish with the settings they started with.
    pub fn reconfigure(&self, settings: ProxySettings) -> Result<(), reqwest::Error> {
        let old = self.inner();
        let client = upstream_client(&settings, old.tls.clone())?;
        old.sessions.set_idle_timeout(settings.session_idle_timeout);
        self.current.store(Arc::new(Inner {
            settings,
            client,
            sessions: old.sessions.clone(),
            hooks: old.hooks.clone(),
            counter: old.counter.clone(),
            clock: old.clock.clone(),
            events: old.events.clone(),
            local: old.local.clone(),
            tls: old.tls.clone(),
        }));
        Ok(())
    }
}

fn upstream_client(
    settings: &ProxySettings,
    tls: Option<native_tls::TlsConnector>,
) -> Result<reqwest::Client, reqwest::Error> {
    let mut builder = reqwest::Client::builder();
    if let Some(tls) = tls {
        builder = builder.tls_backend_preconfigured(tls);
    }
    builder
        .connect_timeout(Duration::from_secs(10))
        // Applies to each read, so a stream that goes silent is cut off too.
        .read_timeout(settings.upstream.timeout)
        .pool_idle_timeout(Duration::from_secs(90))
        .pool_max_idle_per_host(256)
        .tcp_nodelay(true)
        .user_agent(concat!("metaclaw/", env!("CARGO_PKG_VERSION")))
        .build()
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

    /// A TLS context the process already built (with ALPN for h2), so building the upstream
    /// client does not load the system roots again.
    pub fn tls(mut self, tls: Option<native_tls::TlsConnector>) -> Self {
        self.tls = tls;
        self
    }

    pub fn build(self) -> Result<ProxyState, reqwest::Error> {
        let client = upstream_client(&self.settings, self.tls.clone())?;
        let sessions = Arc::new(SessionTracker::new(
            self.clock.clone(),
            self.settings.session_idle_timeout,
            self.events.clone(),
        ));
        Ok(ProxyState {
            current: Arc::new(ArcSwap::from_pointee(Inner {
                settings: self.settings,
                client,
                sessions,
                hooks: self.hooks,
                counter: self.counter,
                clock: self.clock,
                events: self.events,
                local: self.local,
                tls: self.tls,
            })),
        })
    }
}
