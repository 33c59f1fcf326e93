use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::routing::get;
use axum::serve::ListenerExt;
use metaclaw_config::{Config, Home};
use metaclaw_domain::{Clock, Event, SessionEndReason, SystemClock};
use metaclaw_proxy::{Hooks, ProxySettings, ProxyState, TurnHook};
use metaclaw_store::{SessionRow, Store};
use tokio::sync::broadcast;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::api::Api;
use crate::error::CoreError;
use crate::evolution::Evolution;
use crate::health::{Health, healthz};
use crate::live::LiveConfig;
use crate::recording::RecordingHook;
use crate::skills::{SkillInjector, SkillService};

pub struct CoreOptions {
    pub home: Home,
    pub config: Config,
    pub clock: Arc<dyn Clock>,
    /// Listen here instead of `proxy.host:proxy.port` (tests use port 0).
    pub bind: Option<SocketAddr>,
}

impl CoreOptions {
    pub fn new(home: Home, config: Config) -> Self {
        Self {
            home,
            config,
            clock: Arc::new(SystemClock),
            bind: None,
        }
    }
}

/// A started core. Dropping it does not stop it; call [`RunningCore::shutdown`].
pub struct RunningCore {
    addr: SocketAddr,
    token: CancellationToken,
    server: JoinHandle<std::io::Result<()>>,
    background: Vec<JoinHandle<()>>,
    store: Arc<Store>,
    events: broadcast::Sender<Event>,
    proxy: ProxyState,
    skills: Arc<SkillService>,
    evolution: Arc<Evolution>,
    scheduler: Arc<metaclaw_scheduler::Scheduler>,
    api: Api,
    _scheduler_tasks: metaclaw_scheduler::BackgroundTasks,
}

/// The parts of a core that hold state: everything but the listener and background work.
struct Parts {
    store: Arc<Store>,
    events: broadcast::Sender<Event>,
    live: Arc<LiveConfig>,
    /// Built whether or not `skills.enabled` is on, so the switch applies live.
    skills: Arc<SkillService>,
    evolution: Arc<Evolution>,
    scheduler: Arc<metaclaw_scheduler::Scheduler>,
    rl: Arc<metaclaw_rl::RlService>,
}

impl Parts {
    fn open(home: &Home, config: &Config, clock: &Arc<dyn Clock>) -> Result<Parts, CoreError> {
        home.ensure()?;
        let t0 = std::time::Instant::now();
        let db_path = home.db_path();
        let store = Arc::new(Store::open_with_clock(&db_path, clock.clone()).map_err(
            |source| CoreError::Store {
                path: db_path.clone(),
                source,
            },
        )?);
        let store_ms = t0.elapsed().as_secs_f64() * 1e3;
        let (events, _) = broadcast::channel(1024);
        let live = LiveConfig::new(config.clone(), home.config_path(), events.clone());
        let t_skills = std::time::Instant::now();
        let skills = SkillService::new(config, home, store.clone())?;
        let skills_ms = t_skills.elapsed().as_secs_f64() * 1e3;
        let evolution = Evolution::new(
            config,
            store.clone(),
            skills.clone(),
            events.clone(),
            clock.clone(),
        );
        let t_scheduler = std::time::Instant::now();
        let scheduler = Arc::new(crate::scheduling::build(config, home, clock.clone()));
        let scheduler_ms = t_scheduler.elapsed().as_secs_f64() * 1e3;
        let t_rl = std::time::Instant::now();
        let rl = crate::rl::service(
            home,
            store.clone(),
            events.clone(),
            scheduler.clone(),
            &live,
        );
        // Start-up must not grow with the database; this says where the time went.
        let rl_ms = t_rl.elapsed().as_secs_f64() * 1e3;
        tracing::debug!(
            store_ms,
            skills_ms,
            scheduler_ms,
            rl_ms,
            total_ms = t0.elapsed().as_secs_f64() * 1e3,
            "core: parts opened"
        );
        Ok(Parts {
            store,
            events,
            live,
            skills,
            evolution,
            scheduler,
            rl,
        })
    }

    fn api(
        &self,
        home: &Home,
        clock: Arc<dyn Clock>,
        shutdown: CancellationToken,
        addr: Option<SocketAddr>,
        tasks: Option<Arc<crate::rollout::TaskRunner>>,
    ) -> Result<Api, CoreError> {
        Api::new(crate::api::ApiParts {
            store: self.store.clone(),
            skills: self.skills.clone(),
            evolution: self.evolution.clone(),
            events: self.events.clone(),
            live: self.live.clone(),
            home: home.clone(),
            started_at: clock.now(),
            clock,
            shutdown,
            scheduler: self.scheduler.clone(),
            rl: self.rl.clone(),
            addr,
            tasks,
        })
    }
}

/// A core opened on a home directory without serving it: what the CLI works on when no
/// daemon or tray app runs. It holds the home's instance lock, so nothing else writes to the
/// home meanwhile, and it starts no background work.
pub struct LocalCore {
    api: Api,
    _lock: crate::instance::InstanceLock,
}

impl LocalCore {
    pub fn api(&self) -> &Api {
        &self.api
    }
}

/// Open `home` for one command, or fail when another program holds it (then talk to that
/// program's API instead).
pub fn open_local(
    home: &Home,
    config: Config,
) -> Result<LocalCore, crate::instance::InstanceError> {
    let lock = crate::instance::InstanceLock::acquire(home)?;
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let open = || -> Result<Api, CoreError> {
        let parts = Parts::open(home, &config, &clock)?;
        parts.api(home, clock.clone(), CancellationToken::new(), None, None)
    };
    let api = open().map_err(|e| crate::instance::InstanceError::Open {
        path: home.root().to_owned(),
        source: std::io::Error::other(e.to_string()),
    })?;
    Ok(LocalCore { api, _lock: lock })
}

pub async fn start(opts: CoreOptions) -> Result<RunningCore, CoreError> {
    let CoreOptions {
        home,
        config,
        clock,
        bind,
    } = opts;
    let started = std::time::Instant::now();
    let parts = Parts::open(&home, &config, &clock)?;
    let Parts {
        store,
        events,
        live,
        skills,
        evolution,
        scheduler,
        rl,
    } = &parts;
    let mut background = Vec::new();

    background.push(tokio::spawn(prune_loop(
        store.clone(),
        clock.clone(),
        live.clone(),
        events.subscribe(),
    )));
    background.push(tokio::spawn(persist_session_ends(
        store.clone(),
        events.subscribe(),
    )));

    let mut hooks: Vec<Arc<dyn TurnHook>> = Vec::new();
    // Sessions an evaluation runs without skills (the skills-off arm).
    let skills_off = Arc::new(crate::rollout::SkillsOff::default());
    if let Err(e) = skills.start_watching() {
        tracing::warn!("skills hot reload is off: {e}");
    }
    hooks.push(Arc::new(SkillInjector {
        service: skills.clone(),
        skills_off: skills_off.clone(),
    }));
    background.push(tokio::spawn(crate::evolution::triggers(
        evolution.clone(),
        events.subscribe(),
        live.clone(),
    )));
    // Sessions the previous run left open are closed now (recent ones go through the event
    // bus, so skill evolution sees them).
    // Read before the listener opens, so no session of this run is mistaken for one.
    // Only open sessions are read (a partial index), however long the log is.
    let left_open: Vec<SessionRow> = store.open_sessions().unwrap_or_else(|e| {
        tracing::warn!("could not read the sessions left open: {e}");
        Vec::new()
    });
    background.push(tokio::spawn(close_sessions_left_open(
        left_open,
        store.clone(),
        events.clone(),
        clock.clone(),
    )));
    hooks.push(Arc::new(RecordingHook {
        recorder: store.recorder(),
    }));
    // After the recording hook: a sample is written after its turn (one writer, in order).
    hooks.push(Arc::new(metaclaw_rl::SampleHook(rl.clone())));
    let settings = ProxySettings::from_config(&config);
    let idle = settings.session_idle_timeout;
    let proxy = ProxyState::builder(settings, clock.clone(), events.clone())
        .hooks(Hooks::new(hooks))
        .local_model(Arc::new(metaclaw_rl::RlModel(rl.clone())))
        .tls(metaclaw_llm::shared_tls())
        .build()
        .map_err(|e| CoreError::Http(e.to_string()))?;
    background.push(tokio::spawn(sweep_sessions(proxy.clone(), idle)));
    let tasks = crate::rollout::TaskRunner::new(
        store.clone(),
        rl.clone(),
        events.clone(),
        live.clone(),
        proxy.sessions(),
        skills_off,
    );
    // Before the RL service starts: whether adapters wait for the gate is decided when the
    // policy is built.
    rl.set_gate(Arc::new(crate::rollout::RunnerGate(Arc::downgrade(&tasks))));
    background.push(tokio::spawn(apply_settings(
        proxy.clone(),
        evolution.clone(),
        skills.clone(),
        events.subscribe(),
        live.clone(),
    )));

    let scheduler_tasks = scheduler.spawn_background();
    background.push(tokio::spawn(crate::scheduling::follow_events(
        scheduler.clone(),
        events.subscribe(),
        live.clone(),
        clock.clone(),
        home.clone(),
    )));
    let token = CancellationToken::new();
    background.push(rl.spawn(token.child_token()));

    let addr = bind.unwrap_or_else(|| {
        let host = config
            .proxy
            .host
            .parse()
            .unwrap_or(std::net::Ipv4Addr::LOCALHOST.into());
        SocketAddr::new(host, config.proxy.port)
    });
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| CoreError::Bind {
            addr: addr.to_string(),
            source,
        })?;
    let addr = listener.local_addr().map_err(CoreError::Serve)?;
    tasks.set_addr(addr);
    let api = parts.api(&home, clock.clone(), token.clone(), Some(addr), Some(tasks))?;
    let health = Health {
        live: live.clone(),
        started_at: api.parts().started_at,
        clock: clock.clone(),
    };
    let app = Router::new()
        .route("/healthz", get(healthz).with_state(health))
        .merge(metaclaw_proxy::router(proxy.clone()))
        .merge(crate::api::router(api.clone()));
    // Without TCP_NODELAY, Nagle's algorithm holds back the tail of each SSE response by
    // ~40 ms (the client's delayed ACK): every streamed token would arrive late.
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let stop = token.clone();
    let server = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(stop.cancelled_owned())
            .await
    });
    tracing::info!(%addr, "MetaClaw proxy listening");
    tracing::debug!(ms = started.elapsed().as_secs_f64() * 1e3, "core: started");
    Ok(RunningCore {
        addr,
        token,
        server,
        background,
        store: store.clone(),
        events: events.clone(),
        proxy,
        skills: skills.clone(),
        evolution: evolution.clone(),
        scheduler: scheduler.clone(),
        api,
        _scheduler_tasks: scheduler_tasks,
    })
}

impl RunningCore {
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn events(&self) -> broadcast::Receiver<Event> {
        self.events.subscribe()
    }

    /// The core's API, called in process (the tray app).
    pub fn api(&self) -> &Api {
        &self.api
    }

    /// When this core started, by its clock (for the instance file both hosts write).
    pub fn started_at(&self) -> chrono::DateTime<chrono::Utc> {
        self.api.parts().started_at
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn proxy(&self) -> &ProxyState {
        &self.proxy
    }

    /// `None` when `skills.enabled` is false.
    pub fn skills(&self) -> Option<&Arc<SkillService>> {
        self.skills.is_enabled().then_some(&self.skills)
    }

    /// The OMLS scheduler (training windows).
    pub fn scheduler(&self) -> &Arc<metaclaw_scheduler::Scheduler> {
        &self.scheduler
    }

    /// Skill evolution and the review inbox; `None` when skills are off.
    pub fn evolution(&self) -> Option<&Arc<Evolution>> {
        self.skills.is_enabled().then_some(&self.evolution)
    }

    /// A token that stops the core when cancelled (signal handlers hold a clone).
    pub fn shutdown_token(&self) -> CancellationToken {
        self.token.clone()
    }

    /// Run until the shutdown token is cancelled, then stop cleanly.
    pub async fn wait(self) -> Result<(), CoreError> {
        self.token.cancelled().await;
        self.shutdown().await
    }

    /// Stop accepting requests, let in-flight ones finish, and commit every recorded turn.
    pub async fn shutdown(self) -> Result<(), CoreError> {
        self.token.cancel();
        self.skills.stop_watching();
        let served = self.server.await;
        for task in &self.background {
            task.abort();
        }
        // Turns finished during the drain are recorded by spawned tasks; let them run.
        tokio::time::sleep(Duration::from_millis(20)).await;
        let store = self.store.clone();
        let _ = tokio::task::spawn_blocking(move || store.flush()).await;
        match served {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(CoreError::Serve(e)),
            Err(e) => Err(CoreError::Serve(std::io::Error::other(e))),
        }
    }
}

async fn persist_session_ends(store: Arc<Store>, mut rx: broadcast::Receiver<Event>) {
    let recorder = store.recorder();
    loop {
        match rx.recv().await {
            Ok(Event::SessionEnded {
                session_id,
                reason,
                at,
                ..
            }) => {
                recorder.session_ended(session_id, reason, at);
            }
            Ok(_) => {}
            Err(broadcast::error::RecvError::Lagged(n)) => {
                tracing::warn!(
                    missed = n,
                    "event listener lagged; some session ends were not persisted"
                );
            }
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}

async fn close_sessions_left_open(
    sessions: Vec<SessionRow>,
    store: Arc<Store>,
    events: broadcast::Sender<Event>,
    clock: Arc<dyn Clock>,
) {
    let now = clock.now();
    for s in sessions {
        if now - s.last_seen_at < chrono::Duration::hours(24) {
            let _ = events.send(Event::SessionEnded {
                session_id: s.id,
                reason: SessionEndReason::Shutdown,
                turns: s.turn_count,
                at: now,
            });
        } else {
            store
                .recorder()
                .session_ended(s.id, SessionEndReason::Shutdown, now);
        }
    }
}

/// Gives changed settings to the parts that keep a copy of them: the proxy swaps its upstream
/// client (requests in flight finish on the old one), the evolver its endpoint, the retriever
/// its settings. No restart. (The scheduler and the RL service follow the events themselves.)
async fn apply_settings(
    proxy: ProxyState,
    evolution: Arc<Evolution>,
    skills: Arc<SkillService>,
    mut rx: broadcast::Receiver<Event>,
    live: Arc<LiveConfig>,
) {
    loop {
        match rx.recv().await {
            // A lagged receiver may have missed a change: re-read all the same.
            Ok(Event::ConfigChanged) | Err(broadcast::error::RecvError::Lagged(_)) => {
                let config = live.get();
                let settings = ProxySettings::from_config(&config);
                if settings != proxy.settings() {
                    match proxy.reconfigure(settings) {
                        Ok(()) => {
                            tracing::info!(upstream = %config.llm.api_base, "proxy settings applied")
                        }
                        Err(e) => tracing::warn!("proxy settings not applied: {e}"),
                    }
                }
                evolution.reconfigure(&config);
                if let Err(e) = skills.reconfigure(&config) {
                    tracing::warn!("skill settings not applied: {e}");
                }
                // An agent that stops training the shared policy takes its waiting samples
                // with it (what already trained stays trained).
                for name in config
                    .agents
                    .iter()
                    .filter(|(_, a)| !a.trains_policy())
                    .map(|(n, _)| n)
                {
                    match evolution.store().skip_agent_samples(name) {
                        Ok(0) => {}
                        Ok(n) => {
                            tracing::info!(agent = %name, samples = n, "rl: samples of an opted-out agent skipped")
                        }
                        Err(e) => tracing::warn!(agent = %name, "rl: samples not skipped: {e}"),
                    }
                }
            }
            Ok(_) => {}
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}

async fn sweep_sessions(proxy: ProxyState, idle: Duration) {
    let period = (idle / 4).clamp(Duration::from_secs(1), Duration::from_secs(15));
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        proxy.sessions().sweep();
    }
}

/// Deletes turns older than `records.retention_days` every six hours, and at once when the
/// retention changes (0 keeps everything).
async fn prune_loop(
    store: Arc<Store>,
    clock: Arc<dyn Clock>,
    live: Arc<LiveConfig>,
    mut rx: broadcast::Receiver<Event>,
) {
    let mut tick = tokio::time::interval(Duration::from_secs(6 * 3600));
    let mut last = live.get().records.retention_days;
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            ev = rx.recv() => match ev {
                Ok(Event::ConfigChanged) | Err(broadcast::error::RecvError::Lagged(_)) => {
                    if live.get().records.retention_days == last {
                        continue;
                    }
                }
                Ok(_) => continue,
                Err(broadcast::error::RecvError::Closed) => return,
            },
        }
        let days = live.get().records.retention_days;
        last = days;
        if days == 0 {
            continue;
        }
        let cutoff = clock.now() - chrono::Duration::days(i64::from(days));
        let s = store.clone();
        match tokio::task::spawn_blocking(move || s.prune(cutoff)).await {
            Ok(Ok(report)) => tracing::info!(?report, "pruned turns older than {days} days"),
            Ok(Err(e)) => tracing::warn!("pruning old turns failed: {e}"),
            Err(e) => tracing::warn!("pruning task failed: {e}"),
        }
    }
}

/// Resolves on SIGTERM or SIGINT: how both hosts (the daemon and the tray app) learn to stop.
/// Without signal handlers (they could not be installed) it never resolves.
pub async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        std::future::pending::<()>().await;
        return;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
}
