//! The OMLS scheduler: window evaluation, the state machine, the trainer API and the
//! visibility functions. See the crate docs for the rules.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::Duration;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use metaclaw_domain::{Clock, SystemClock};
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;

use crate::calendar::{CalendarFetcher, CalendarStore, HttpFetcher, watch_paths};
use crate::estimate::StepEstimator;
use crate::idle::{IdleSource, OsIdleSource};
use crate::persist::{
    JsonFilePersistence, MemoryPersistence, StatePersistence, Transition, TransitionReason,
};
use crate::settings::{SchedulerSettings, SleepHours};
use crate::sleep::sleep_windows;
use crate::types::{
    Band, BandKind, IdleReading, IdleSourceUsed, IdleStatus, Interval, SchedulerState,
    SchedulerStatus, SleepStatus, SourcesStatus, Window, WindowSource,
};

/// OS input within this long (capped at the idle threshold) means the user is at the computer,
/// which vetoes sleep and calendar windows.
pub const PRESENCE: Duration = Duration::from_secs(120);
/// Known windows are looked for this far ahead (and behind).
const LOOKAHEAD_DAYS: i64 = 8;
const LOOKBEHIND_DAYS: i64 = 2;
/// `next_window` looks this far ahead.
const NEXT_WINDOW_DAYS: i64 = 14;
/// Transitions kept in memory for the timeline.
const KEEP_TRANSITIONS: usize = 2000;
/// Debounce for file-system events.
const WATCH_DEBOUNCE: Duration = Duration::from_millis(150);

/// The local zone every part of MetaClaw uses (`TZ` first, then the system's; UTC with a
/// reason when neither names a zone).
pub fn detect_time_zone() -> (Tz, Option<String>) {
    let zone = metaclaw_domain::local_zone();
    (zone.tz, zone.note)
}

/// Builds a [`Scheduler`]; every dependency can be injected.
pub struct SchedulerBuilder {
    settings: SchedulerSettings,
    clock: Option<Arc<dyn Clock>>,
    tz: Option<Tz>,
    idle: Option<Arc<dyn IdleSource>>,
    fetcher: Option<Arc<dyn CalendarFetcher>>,
    persistence: Option<Arc<dyn StatePersistence>>,
}

impl SchedulerBuilder {
    pub fn new(settings: SchedulerSettings) -> Self {
        Self {
            settings,
            clock: None,
            tz: None,
            idle: None,
            fetcher: None,
            persistence: None,
        }
    }

    /// Default: [`SystemClock`].
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = Some(clock);
        self
    }

    /// Default: [`detect_time_zone`].
    pub fn time_zone(mut self, tz: Tz) -> Self {
        self.tz = Some(tz);
        self
    }

    /// Default: [`OsIdleSource`].
    pub fn idle_source(mut self, idle: Arc<dyn IdleSource>) -> Self {
        self.idle = Some(idle);
        self
    }

    /// Default: [`HttpFetcher`].
    pub fn fetcher(mut self, fetcher: Arc<dyn CalendarFetcher>) -> Self {
        self.fetcher = Some(fetcher);
        self
    }

    /// Default: [`MemoryPersistence`] (nothing survives a restart).
    pub fn persistence(mut self, p: Arc<dyn StatePersistence>) -> Self {
        self.persistence = Some(p);
        self
    }

    /// Persist to `<home>/scheduler_state.json` + `<home>/scheduler_transitions.jsonl`.
    pub fn home(self, home: impl Into<PathBuf>) -> Self {
        self.persistence(Arc::new(JsonFilePersistence::new(home)))
    }

    /// Builds the scheduler: restores the persisted state and reads local calendar files.
    /// Call [`Scheduler::spawn_background`] (inside a tokio runtime) to start watching.
    pub fn build(self) -> Scheduler {
        let clock = self.clock.unwrap_or_else(|| Arc::new(SystemClock));
        let (tz, tz_problem) = match self.tz {
            Some(tz) => (tz, None),
            None => detect_time_zone(),
        };
        if let Some(p) = &tz_problem {
            tracing::warn!("{p}");
        }
        let persistence = self
            .persistence
            .unwrap_or_else(|| Arc::new(MemoryPersistence::new()));
        let now = clock.now();
        let sleep = self.settings.sleep_hours();
        if let Err(e) = &sleep {
            tracing::warn!(error = %e, "sleep hours ignored");
        }
        let calendars = Arc::new(CalendarStore::new(self.settings.calendar.clone()));
        calendars.reload_files(now);

        let mut core = Core {
            state: SchedulerState::IdleWait,
            since: now,
            paused: false,
            window: None,
            last_activity: now,
            steps: StepEstimator::default(),
            transitions: VecDeque::new(),
            idle_cache: None,
        };
        let restored = persistence.load();
        if let Some(p) = &restored {
            core.state = p.state;
            core.since = p.since;
            core.paused = p.paused;
            core.steps = StepEstimator::from_secs(&p.step_durations_secs);
            core.transitions = p.recent.iter().cloned().collect();
        }
        let (changes, _) = watch::channel(0u64);
        let scheduler = Scheduler {
            inner: Arc::new(Inner {
                configured: RwLock::new(Arc::new(Configured {
                    settings: self.settings,
                    sleep,
                    calendars,
                })),
                calendar_changed: Notify::new(),
                tz,
                tz_problem,
                clock,
                idle: self.idle.unwrap_or_else(|| Arc::new(OsIdleSource::new())),
                fetcher: self.fetcher.unwrap_or_else(|| Arc::new(HttpFetcher::new())),
                persistence,
                core: Mutex::new(core),
                changes,
            }),
        };
        // The trainer that was updating died with the old process.
        scheduler.end_trainer_episode(now, TransitionReason::RecoveredAfterRestart);
        scheduler
    }
}

/// What the settings decide; replaced as a whole by [`Scheduler::reconfigure`].
struct Configured {
    settings: SchedulerSettings,
    sleep: Result<Option<SleepHours>, String>,
    calendars: Arc<CalendarStore>,
}

struct Inner {
    configured: RwLock<Arc<Configured>>,
    /// Wakes the calendar refresher when the calendar settings change.
    calendar_changed: Notify,
    tz: Tz,
    tz_problem: Option<String>,
    clock: Arc<dyn Clock>,
    idle: Arc<dyn IdleSource>,
    fetcher: Arc<dyn CalendarFetcher>,
    persistence: Arc<dyn StatePersistence>,
    core: Mutex<Core>,
    /// Bumped on every change that may open/close a window or change the state.
    changes: watch::Sender<u64>,
}

struct Core {
    state: SchedulerState,
    since: DateTime<Utc>,
    paused: bool,
    /// The window the current `window_open`/`updating` episode opened with.
    window: Option<Window>,
    last_activity: DateTime<Utc>,
    steps: StepEstimator,
    transitions: VecDeque<Transition>,
    idle_cache: Option<(DateTime<Utc>, IdleReading)>,
}

/// A known-end interval with its source.
#[derive(Debug, Clone, Copy)]
struct Known {
    iv: Interval,
    source: WindowSource,
}

/// Overlapping/touching known intervals chained together.
#[derive(Debug, Clone)]
struct Block {
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    members: Vec<Known>,
}

impl Block {
    /// The source covering `t` that lasts longest (sleep wins ties).
    fn source_at(&self, t: DateTime<Utc>) -> WindowSource {
        self.members
            .iter()
            .filter(|k| k.iv.contains(t))
            .max_by_key(|k| (k.iv.end, k.source == WindowSource::Sleep))
            .or(self.members.first())
            .map_or(WindowSource::Sleep, |k| k.source)
    }
}

fn blocks(mut known: Vec<Known>) -> Vec<Block> {
    known.sort_by_key(|k| (k.iv.start, k.iv.end));
    let mut out: Vec<Block> = Vec::new();
    for k in known {
        match out.last_mut() {
            Some(b) if k.iv.start <= b.end => {
                b.end = b.end.max(k.iv.end);
                b.members.push(k);
            }
            _ => out.push(Block {
                start: k.iv.start,
                end: k.iv.end,
                members: vec![k],
            }),
        }
    }
    out
}

/// Everything the rules need at one instant.
#[derive(Debug, Clone)]
struct Eval {
    reading: IdleReading,
    idle_used: IdleSourceUsed,
    idle: Duration,
    idle_open: bool,
    os_present: bool,
    sleep_now: Option<Interval>,
    busy_now: Option<Interval>,
    user_away: bool,
    window: Option<Window>,
    blocked: Option<String>,
    estimate: Option<Duration>,
    blocks: Vec<Block>,
}

/// The OMLS scheduler. Cheap to clone (shared state).
#[derive(Clone)]
pub struct Scheduler {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let core = self.lock();
        f.debug_struct("Scheduler")
            .field("state", &core.state)
            .field("since", &core.since)
            .field("paused", &core.paused)
            .finish_non_exhaustive()
    }
}

/// Background tasks started by [`Scheduler::spawn_background`]; dropping this stops them.
pub struct BackgroundTasks {
    handles: Vec<JoinHandle<()>>,
    _watcher: Option<notify::RecommendedWatcher>,
}

impl std::fmt::Debug for BackgroundTasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackgroundTasks")
            .field("tasks", &self.handles.len())
            .field("watching", &self._watcher.is_some())
            .finish()
    }
}

impl Drop for BackgroundTasks {
    fn drop(&mut self) {
        for h in &self.handles {
            h.abort();
        }
    }
}

fn fmt_dur(d: Duration) -> String {
    let m = d.as_secs() / 60;
    if m >= 60 {
        format!("{}h{:02}m", m / 60, m % 60)
    } else if m > 0 {
        format!("{m} min")
    } else {
        format!("{} s", d.as_secs())
    }
}

fn to_std(d: chrono::Duration) -> Duration {
    d.to_std().unwrap_or_default()
}

impl Scheduler {
    pub fn builder(settings: SchedulerSettings) -> SchedulerBuilder {
        SchedulerBuilder::new(settings)
    }

    fn lock(&self) -> MutexGuard<'_, Core> {
        self.inner.core.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn notify_changed(&self) {
        self.inner.changes.send_modify(|g| *g = g.wrapping_add(1));
    }

    fn cfg(&self) -> Arc<Configured> {
        self.inner
            .configured
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub fn settings(&self) -> SchedulerSettings {
        self.cfg().settings.clone()
    }

    /// Apply new settings to the running scheduler (the dashboard's Settings page): sleep
    /// hours, idle threshold, windows and calendars change at once, without a restart.
    /// Calendar data already fetched is kept when the calendar settings did not change.
    pub fn reconfigure(&self, settings: SchedulerSettings) {
        let old = self.cfg();
        if old.settings == settings {
            return;
        }
        let sleep = settings.sleep_hours();
        if let Err(e) = &sleep {
            tracing::warn!(error = %e, "sleep hours ignored");
        }
        let calendar_changed = old.settings.calendar != settings.calendar;
        let calendars = if calendar_changed {
            let store = Arc::new(CalendarStore::new(settings.calendar.clone()));
            store.reload_files(self.inner.clock.now());
            store
        } else {
            old.calendars.clone()
        };
        *self
            .inner
            .configured
            .write()
            .unwrap_or_else(|e| e.into_inner()) = Arc::new(Configured {
            settings,
            sleep,
            calendars,
        });
        if calendar_changed {
            self.inner.calendar_changed.notify_one();
        }
        tracing::info!("scheduler settings applied");
        self.notify_changed();
        self.tick();
    }

    pub fn time_zone(&self) -> Tz {
        self.inner.tz
    }

    pub fn calendars(&self) -> Arc<CalendarStore> {
        self.cfg().calendars.clone()
    }

    pub fn state(&self) -> SchedulerState {
        self.lock().state
    }

    pub fn is_paused(&self) -> bool {
        self.lock().paused
    }

    /// Median of the recent step durations.
    pub fn step_estimate(&self) -> Option<Duration> {
        self.lock().steps.estimate()
    }

    // ----------------------------------------------------------------------------------
    // Inputs from the daemon
    // ----------------------------------------------------------------------------------

    /// The proxy forwarded a request at `at` (the idle fallback when the OS idle time is
    /// unknown).
    pub fn note_activity(&self, at: DateTime<Utc>) {
        {
            let mut core = self.lock();
            if at <= core.last_activity {
                return;
            }
            core.last_activity = at;
        }
        self.notify_changed();
    }

    /// Pause or resume learning (the user's switch). Paused: no window opens and
    /// `should_pause()` is true.
    pub fn set_paused(&self, paused: bool) {
        let now = self.inner.clock.now();
        {
            let mut core = self.lock();
            if core.paused == paused {
                return;
            }
            core.paused = paused;
            let state = core.state;
            let reason = if paused {
                TransitionReason::Paused
            } else {
                TransitionReason::Resumed
            };
            self.transition(&mut core, now, state, reason, None, None);
        }
        self.notify_changed();
        self.tick();
    }

    /// Re-read local calendar files now (the watcher does this on changes).
    pub fn reload_calendar_files(&self) {
        self.cfg().calendars.reload_files(self.inner.clock.now());
        self.notify_changed();
    }

    /// Fetch the calendar URLs now (the background task does this every `refresh_minutes`).
    pub async fn refresh_calendar_urls(&self) {
        let now = self.inner.clock.now();
        self.cfg()
            .calendars
            .refresh_urls(self.inner.fetcher.as_ref(), now)
            .await;
        self.notify_changed();
    }

    // ----------------------------------------------------------------------------------
    // Trainer API
    // ----------------------------------------------------------------------------------

    /// A state still `updating`/`pausing` has no trainer behind it any more: back to
    /// `idle_wait`, for `reason`.
    fn end_trainer_episode(&self, now: DateTime<Utc>, reason: TransitionReason) {
        let mut core = self.lock();
        if matches!(
            core.state,
            SchedulerState::Updating | SchedulerState::Pausing
        ) {
            self.transition(&mut core, now, SchedulerState::IdleWait, reason, None, None);
        }
    }

    /// Wait until a step may start; the state is then `window_open`. Calling this while the
    /// state is still `updating`/`pausing` ends that episode (`TrainerInterrupted`).
    pub async fn wait_for_window(&self) -> Window {
        let mut rx = self.inner.changes.subscribe();
        self.end_trainer_episode(self.inner.clock.now(), TransitionReason::TrainerInterrupted);
        loop {
            rx.borrow_and_update();
            let reading = self.read_idle_async().await;
            let (state, window, wake) = self.advance(reading);
            if state == SchedulerState::WindowOpen
                && let Some(w) = window
            {
                return w;
            }
            tokio::select! {
                _ = rx.changed() => {}
                _ = tokio::time::sleep(wake) => {}
            }
        }
    }

    /// True when the trainer should stop collecting: learning is paused, or (when gated) the
    /// user is back — no source is open any more (idle reset, event ended, sleep ended) or
    /// OS input shows the user at the computer. Moves `updating` to `pausing`.
    pub fn should_pause(&self) -> bool {
        let now = self.inner.clock.now();
        let reading = self.cached_idle(now);
        let mut core = self.lock();
        let ev = self.evaluate(now, reading, &core);
        let pause = self.pause_needed(&core, &ev);
        if pause && core.state == SchedulerState::Updating {
            self.transition(
                &mut core,
                now,
                SchedulerState::Pausing,
                TransitionReason::UserReturned,
                None,
                None,
            );
            drop(core);
            self.notify_changed();
        }
        pause
    }

    /// The trainer started a step (→ `updating`).
    pub fn started(&self) {
        let now = self.inner.clock.now();
        let mut core = self.lock();
        if core.state == SchedulerState::Updating {
            return;
        }
        let window = core.window;
        self.transition(
            &mut core,
            now,
            SchedulerState::Updating,
            TransitionReason::TrainerStarted,
            window,
            None,
        );
        drop(core);
        self.notify_changed();
    }

    /// The trainer finished a step that took `step_duration` (→ `idle_wait`; the duration feeds
    /// the estimate).
    pub fn finished(&self, step_duration: Duration) {
        let now = self.inner.clock.now();
        let mut core = self.lock();
        core.steps.record(step_duration);
        self.transition(
            &mut core,
            now,
            SchedulerState::IdleWait,
            TransitionReason::TrainerFinished,
            None,
            Some(step_duration.as_secs_f64()),
        );
        drop(core);
        self.notify_changed();
    }

    /// The trainer stopped (after a pause) without completing a step (→ `idle_wait`).
    pub fn interrupted(&self) {
        let now = self.inner.clock.now();
        let mut core = self.lock();
        self.transition(
            &mut core,
            now,
            SchedulerState::IdleWait,
            TransitionReason::TrainerInterrupted,
            None,
            None,
        );
        drop(core);
        self.notify_changed();
    }

    /// Evaluate now and apply the state machine's automatic transitions
    /// (`idle_wait → window_open`, `window_open → idle_wait`, `updating → pausing`).
    /// Returns the state afterwards. Reads the idle source.
    pub fn tick(&self) -> SchedulerState {
        let reading = self.inner.idle.read();
        let now = self.inner.clock.now();
        self.lock().idle_cache = Some((now, reading.clone()));
        self.advance(reading).0
    }

    // ----------------------------------------------------------------------------------
    // Background
    // ----------------------------------------------------------------------------------

    /// Start the monitor loop (automatic transitions), the calendar file watcher and the URL
    /// refresher. Must be called inside a tokio runtime. Dropping the handle stops them.
    pub fn spawn_background(&self) -> BackgroundTasks {
        let mut handles = Vec::new();
        let me = self.clone();
        handles.push(tokio::spawn(async move { me.monitor_loop().await }));

        let mut watcher = None;
        let cal = self.cfg().calendars.clone();
        // Files are watched where they were at start; files added later in Settings are
        // re-read on each refresh below (and at once when the settings change).
        if cal.enabled() && !cal.settings().paths.is_empty() {
            let kick = Arc::new(Notify::new());
            let k2 = kick.clone();
            match watch_paths(cal.clone(), move || k2.notify_one()) {
                Ok(w) => watcher = Some(w),
                Err(e) => tracing::warn!(error = %e, "calendar file watcher unavailable"),
            }
            let me = self.clone();
            handles.push(tokio::spawn(async move {
                loop {
                    kick.notified().await;
                    tokio::time::sleep(WATCH_DEBOUNCE).await;
                    me.reload_calendar_files();
                }
            }));
        }
        // Runs whether or not calendars are on now: they can be turned on in Settings.
        let me = self.clone();
        handles.push(tokio::spawn(async move {
            let mut first = true;
            loop {
                let cfg = me.cfg();
                if cfg.calendars.enabled() {
                    if !cfg.calendars.settings().urls.is_empty() {
                        me.refresh_calendar_urls().await;
                    }
                    if !first {
                        // Safety net for missed file events.
                        me.reload_calendar_files();
                    }
                }
                first = false;
                let every = cfg.settings.refresh_interval();
                tokio::select! {
                    _ = tokio::time::sleep(every) => {}
                    _ = me.inner.calendar_changed.notified() => {}
                }
            }
        }));
        BackgroundTasks {
            handles,
            _watcher: watcher,
        }
    }

    async fn monitor_loop(self) {
        let mut rx = self.inner.changes.subscribe();
        loop {
            rx.borrow_and_update();
            let reading = self.read_idle_async().await;
            let (_, _, wake) = self.advance(reading);
            tokio::select! {
                r = rx.changed() => if r.is_err() { return },
                _ = tokio::time::sleep(wake) => {}
            }
        }
    }

    // ----------------------------------------------------------------------------------
    // Visibility
    // ----------------------------------------------------------------------------------

    /// A snapshot for the CLI and dashboard. Changes no state.
    pub fn status(&self) -> SchedulerStatus {
        let now = self.inner.clock.now();
        let reading = self.cached_idle(now);
        let core = self.lock();
        let ev = self.evaluate(now, reading, &core);
        let threshold = self.cfg().settings.idle_threshold();
        let (sleep_enabled, sleep_problem) = match &self.cfg().sleep {
            Ok(h) => (h.is_some(), None),
            Err(e) => (false, Some(e.clone())),
        };
        let next_sleep = match &self.cfg().sleep {
            Ok(Some(h)) => sleep_windows(*h, self.inner.tz, now, now + chrono::Duration::days(2))
                .into_iter()
                .find(|w| w.start > now),
            _ => None,
        };
        let mut calendar = self.cfg().calendars.status(ev.busy_now);
        if let Some(p) = &self.inner.tz_problem {
            calendar.problems.push(crate::types::SourceProblem {
                source: "time zone".into(),
                reason: p.clone(),
                at: now,
            });
        }
        SchedulerStatus {
            now,
            time_zone: self.inner.tz.name().to_owned(),
            gating: self.cfg().settings.gating(),
            paused: core.paused,
            state: core.state,
            since: core.since,
            window: ev.window,
            blocked_reason: ev.blocked.clone(),
            user_away: ev.user_away,
            step_estimate_secs: ev.estimate.map(|d| d.as_secs_f64()),
            sources: SourcesStatus {
                sleep: SleepStatus {
                    enabled: sleep_enabled,
                    sleep_start: self.cfg().settings.sleep_start.clone(),
                    sleep_end: self.cfg().settings.sleep_end.clone(),
                    problem: sleep_problem,
                    current: ev.sleep_now,
                    next: next_sleep,
                },
                idle: IdleStatus {
                    enabled: threshold.is_some(),
                    threshold_secs: threshold.map(|t| t.as_secs()),
                    source: self.inner.idle.name(),
                    reading: ev.reading.clone(),
                    source_used: ev.idle_used,
                    idle_secs: ev.idle.as_secs(),
                    last_activity: core.last_activity,
                    open: ev.idle_open,
                },
                calendar,
            },
        }
    }

    /// The window open now if a step may start, else the next window with a known start
    /// (sleep hours or calendar) long enough for a step, within the next 14 days. Idle windows
    /// cannot be predicted. Ignores the pause switch.
    pub fn next_window(&self, now: DateTime<Utc>) -> Option<Window> {
        if !self.cfg().settings.gating() {
            return Some(Window {
                start: now,
                end: None,
                source: WindowSource::Ungated,
            });
        }
        let reading = self.cached_idle(now);
        let core = self.lock();
        let ev = self.evaluate(now, reading, &core);
        if ev.window.is_some() && !core.paused {
            return ev.window;
        }
        let required = self.required_known(ev.estimate);
        drop(core);
        let known = self.known(now, now + chrono::Duration::days(NEXT_WINDOW_DAYS));
        blocks(known)
            .iter()
            .filter(|b| b.start > now)
            .find(|b| to_std(b.end - b.start) >= required)
            .map(|b| Window {
                start: b.start,
                end: Some(b.end),
                source: b.source_at(b.start),
            })
    }

    /// Bands for `[now - span, now + span]`: sleep hours, busy calendar time, and past (and
    /// ongoing) training from the transition log, clipped to the range, sorted by start.
    pub fn timeline(&self, now: DateTime<Utc>, span: Duration) -> Vec<Band> {
        let span = chrono::Duration::from_std(span).unwrap_or(chrono::Duration::days(1));
        let (from, to) = (now - span, now + span);
        let mut bands = Vec::new();
        let mut clip = |start: DateTime<Utc>, end: DateTime<Utc>, kind: BandKind| {
            let (s, e) = (start.max(from), end.min(to));
            if s < e {
                bands.push(Band {
                    start: s,
                    end: e,
                    kind,
                });
            }
        };
        if let Ok(Some(h)) = &self.cfg().sleep {
            for w in sleep_windows(*h, self.inner.tz, from, to) {
                clip(w.start, w.end, BandKind::Sleep);
            }
        }
        for b in self.cfg().calendars.busy(from, to, self.inner.tz) {
            clip(b.start, b.end, BandKind::Calendar);
        }
        let core = self.lock();
        let mut open: Option<DateTime<Utc>> = None;
        let training =
            |s: SchedulerState| matches!(s, SchedulerState::Updating | SchedulerState::Pausing);
        for t in &core.transitions {
            if !training(t.from) && training(t.to) {
                open = Some(t.at);
            } else if training(t.from)
                && !training(t.to)
                && let Some(s) = open.take()
            {
                clip(s, t.at, BandKind::Training);
            }
        }
        if let Some(s) = open
            && training(core.state)
        {
            let present = self.inner.clock.now();
            clip(s, present.max(s), BandKind::Training);
        }
        drop(core);
        bands.sort_by_key(|b| (b.start, b.end));
        bands
    }

    // ----------------------------------------------------------------------------------
    // Internals
    // ----------------------------------------------------------------------------------

    async fn read_idle_async(&self) -> IdleReading {
        let reading = if self.inner.idle.may_block() {
            let idle = self.inner.idle.clone();
            tokio::task::spawn_blocking(move || idle.read())
                .await
                .unwrap_or_else(|e| IdleReading::Unknown {
                    reason: format!("idle reader failed: {e}"),
                })
        } else {
            self.inner.idle.read()
        };
        let now = self.inner.clock.now();
        self.lock().idle_cache = Some((now, reading.clone()));
        reading
    }

    /// The last reading if younger than `poll_seconds`, else a fresh one.
    fn cached_idle(&self, now: DateTime<Utc>) -> IdleReading {
        let poll = self.cfg().settings.poll_interval();
        if let Some((at, r)) = &self.lock().idle_cache
            && *at <= now
            && to_std(now - *at) < poll
        {
            return r.clone();
        }
        let r = self.inner.idle.read();
        self.lock().idle_cache = Some((now, r.clone()));
        r
    }

    fn required_known(&self, estimate: Option<Duration>) -> Duration {
        self.cfg()
            .settings
            .min_window()
            .max(estimate.unwrap_or_default())
    }

    fn presence(&self) -> Duration {
        match self.cfg().settings.idle_threshold() {
            Some(t) => PRESENCE.min(t),
            None => PRESENCE,
        }
    }

    fn known(&self, from: DateTime<Utc>, to: DateTime<Utc>) -> Vec<Known> {
        let mut out = Vec::new();
        if let Ok(Some(h)) = &self.cfg().sleep {
            out.extend(
                sleep_windows(*h, self.inner.tz, from, to)
                    .into_iter()
                    .map(|iv| Known {
                        iv,
                        source: WindowSource::Sleep,
                    }),
            );
        }
        out.extend(
            self.cfg()
                .calendars
                .busy(from, to, self.inner.tz)
                .into_iter()
                .map(|iv| Known {
                    iv,
                    source: WindowSource::Calendar,
                }),
        );
        out
    }

    fn evaluate(&self, now: DateTime<Utc>, reading: IdleReading, core: &Core) -> Eval {
        let cfg = self.cfg();
        let settings = &cfg.settings;
        let estimate = core.steps.estimate();
        let since_activity = || to_std(now - core.last_activity);
        let (idle_used, idle) = match &reading {
            IdleReading::Known { idle_secs } => {
                (IdleSourceUsed::Os, Duration::from_secs(*idle_secs))
            }
            IdleReading::Locked { idle_secs } => (
                IdleSourceUsed::ScreenLocked,
                idle_secs.map_or_else(since_activity, Duration::from_secs),
            ),
            IdleReading::Unknown { .. } => (IdleSourceUsed::ProxyActivity, since_activity()),
        };
        let locked = idle_used == IdleSourceUsed::ScreenLocked;
        let threshold = settings.idle_threshold();
        // A locked screen is an explicit "I am away": no threshold to wait for.
        let idle_open = threshold.is_some_and(|t| locked || idle >= t);
        let os_present = idle_used == IdleSourceUsed::Os && idle < self.presence();

        let known = self.known(
            now - chrono::Duration::days(LOOKBEHIND_DAYS),
            now + chrono::Duration::days(LOOKAHEAD_DAYS),
        );
        let at_now = |src: WindowSource| {
            known
                .iter()
                .filter(|k| k.source == src && k.iv.contains(now))
                .map(|k| k.iv)
                .max_by_key(|iv| iv.end)
        };
        let sleep_now = at_now(WindowSource::Sleep);
        let busy_now = at_now(WindowSource::Calendar);
        let blocks = blocks(known);
        let block_now = blocks
            .iter()
            .find(|b| b.start <= now && now < b.end)
            .cloned();
        let known_away = block_now.is_some() && !os_present;
        let user_away = idle_open || known_away;

        let mut window = None;
        let mut blocked = None;
        if !settings.gating() {
            window = Some(Window {
                start: now,
                end: None,
                source: WindowSource::Ungated,
            });
        } else {
            if let Some(b) = &block_now {
                let source = b.source_at(now);
                let remaining = to_std(b.end - now);
                let required = self.required_known(estimate);
                if os_present {
                    blocked = Some(format!(
                        "{source:?} window, but the user used the computer {} ago",
                        fmt_dur(idle)
                    ));
                } else if remaining >= required {
                    window = Some(Window {
                        start: b.start,
                        end: Some(b.end),
                        source,
                    });
                } else {
                    blocked = Some(format!(
                        "{source:?} window ends in {} (a step needs {})",
                        fmt_dur(remaining),
                        fmt_dur(required)
                    ));
                }
            }
            if window.is_none() && idle_open {
                match estimate {
                    // Locked: unlocking closes the window and pauses the step, so no need to
                    // wait until the absence has lasted a step.
                    Some(e) if e > idle && !locked => {
                        blocked = Some(format!(
                            "idle for {}, but a step takes about {}: waiting until the user has \
                             been away at least that long",
                            fmt_dur(idle),
                            fmt_dur(e)
                        ));
                    }
                    _ => {
                        window = Some(Window {
                            start: now - chrono::Duration::from_std(idle).unwrap_or_default(),
                            end: None,
                            source: WindowSource::Idle,
                        });
                        blocked = None;
                    }
                }
            }
        }
        if core.paused {
            if window.is_some() || blocked.is_some() {
                blocked = Some("learning is paused".to_owned());
            }
            window = None;
        }
        Eval {
            reading,
            idle_used,
            idle,
            idle_open,
            os_present,
            sleep_now,
            busy_now,
            user_away,
            window,
            blocked,
            estimate,
            blocks,
        }
    }

    fn pause_needed(&self, core: &Core, ev: &Eval) -> bool {
        core.paused || (self.cfg().settings.gating() && !ev.user_away)
    }

    /// How long the loops may sleep before something could change on its own.
    fn wake_after(&self, now: DateTime<Utc>, state: SchedulerState, ev: &Eval) -> Duration {
        let poll = self.cfg().settings.poll_interval();
        let cap = poll.max(Duration::from_secs(60));
        if !self.cfg().settings.gating() {
            return cap;
        }
        let mut next: Option<Duration> = None;
        let mut consider = |d: Duration| {
            if !d.is_zero() {
                next = Some(next.map_or(d, |n| n.min(d)));
            }
        };
        let required = self.required_known(ev.estimate);
        for b in &ev.blocks {
            for k in &b.members {
                for t in [k.iv.start, k.iv.end] {
                    if t > now {
                        consider(to_std(t - now));
                    }
                }
            }
            if b.start <= now && now < b.end {
                let closes = b.end - chrono::Duration::from_std(required).unwrap_or_default();
                if closes > now {
                    consider(to_std(closes - now));
                }
            }
        }
        if let Some(t) = self.cfg().settings.idle_threshold()
            && ev.idle_used != IdleSourceUsed::ScreenLocked
        {
            let needed = t.max(ev.estimate.unwrap_or_default());
            if ev.idle < needed {
                consider(needed - ev.idle);
            }
        }
        if ev.os_present {
            consider(self.presence().saturating_sub(ev.idle));
        }
        let watching_user = matches!(state, SchedulerState::WindowOpen | SchedulerState::Updating);
        if watching_user && ev.idle_used != IdleSourceUsed::ProxyActivity {
            consider(poll);
        }
        next.unwrap_or(cap).min(cap).max(Duration::from_millis(10))
    }

    /// Evaluate with `reading` and apply automatic transitions.
    fn advance(&self, reading: IdleReading) -> (SchedulerState, Option<Window>, Duration) {
        let now = self.inner.clock.now();
        let mut core = self.lock();
        let ev = self.evaluate(now, reading, &core);
        let before = core.state;
        match core.state {
            SchedulerState::IdleWait => {
                if let Some(w) = ev.window {
                    core.window = Some(w);
                    self.transition(
                        &mut core,
                        now,
                        SchedulerState::WindowOpen,
                        TransitionReason::WindowOpened,
                        Some(w),
                        None,
                    );
                }
            }
            SchedulerState::WindowOpen => {
                if ev.window.is_none() {
                    self.transition(
                        &mut core,
                        now,
                        SchedulerState::IdleWait,
                        TransitionReason::WindowClosed,
                        None,
                        None,
                    );
                } else {
                    core.window = ev.window;
                }
            }
            SchedulerState::Updating => {
                if self.pause_needed(&core, &ev) {
                    self.transition(
                        &mut core,
                        now,
                        SchedulerState::Pausing,
                        TransitionReason::UserReturned,
                        None,
                        None,
                    );
                }
            }
            SchedulerState::Pausing => {}
        }
        let state = core.state;
        let window = if state == SchedulerState::WindowOpen {
            ev.window
        } else {
            None
        };
        let wake = self.wake_after(now, state, &ev);
        drop(core);
        if state != before {
            self.notify_changed();
        }
        (state, window, wake)
    }

    /// Record a transition (also used for pause flag changes with `to == from`).
    fn transition(
        &self,
        core: &mut Core,
        now: DateTime<Utc>,
        to: SchedulerState,
        reason: TransitionReason,
        window: Option<Window>,
        step_duration_secs: Option<f64>,
    ) {
        let t = Transition {
            at: now,
            from: core.state,
            to,
            reason,
            paused: core.paused,
            window,
            step_duration_secs,
        };
        tracing::info!(from = %t.from, to = %t.to, reason = ?reason, "scheduler transition");
        if core.state != to {
            core.since = now;
        }
        core.state = to;
        if to == SchedulerState::IdleWait {
            core.window = None;
        }
        if let Err(e) = self.inner.persistence.record(&t) {
            tracing::warn!(error = %e, "could not persist the scheduler transition");
        }
        core.transitions.push_back(t);
        while core.transitions.len() > KEEP_TRANSITIONS {
            core.transitions.pop_front();
        }
    }
}
