//! OMLS scheduler: decides when MetaClaw may run RL training steps — only while the user is
//! away.
//!
//! # Window sources (any one opens a window; each can be turned off)
//! * **Sleep hours** (`sleep_start`–`sleep_end`, local wall-clock in an injected
//!   [`chrono_tz::Tz`], across midnight, DST-safe; known end).
//! * **Idle**: OS input idle time ≥ `idle_threshold_minutes` ([`IdleSource`]; the real one,
//!   [`OsIdleSource`], asks the desktop over D-Bus on Wayland — Mutter, KDE — and `user-idle`
//!   on X11/macOS/Windows), or a **locked screen** (counts as away at once: no threshold, no
//!   step-length check; unlocking closes the window). When the OS reading is unknown (no
//!   display, no desktop service, feature off) the time since the last proxied request
//!   ([`Scheduler::note_activity`]) is used instead; the status names the source. Unknown end.
//! * **Calendar**: a busy event in progress in local `.ics` files/folders (watched) or `.ics`
//!   URLs (ETag refresh); see [`ics`] for what counts as busy. Known end.
//!
//! # Rules
//! * Known-end windows (sleep, calendar) that overlap or touch are chained; the window's end is
//!   the chain's end.
//! * **Presence veto**: when the OS reports input within the last 2 minutes (and the screen is
//!   not locked) ([`PRESENCE`],
//!   capped at the idle threshold), the user is at the computer, so sleep/calendar windows do
//!   not count as "away" (an idle window cannot be open then anyway).
//! * **Starting a step** (`idle_wait → window_open`):
//!   * known-end window: remaining time ≥ max(`min_window_minutes`, step estimate);
//!   * otherwise an idle window: idle ≥ threshold **and** step estimate ≤ the time the user has
//!     already been idle (no estimate yet: accepted). Rationale: the only evidence about how
//!     long the user stays away is how long they have been away; a step no longer than that
//!     is expected to fit, and a threshold-long absence always allows steps up to the threshold.
//!   * The step estimate is the median of the last 20 measured step durations
//!     ([`Scheduler::finished`]), persisted across restarts.
//! * **Pausing** ([`Scheduler::should_pause`], `updating → pausing`): learning paused, or (when
//!   gated) no source is open any more — idle reset, event ended, sleep ended — or the presence
//!   veto applies.
//! * **Gating**: `enabled || mode_auto`; without gating the scheduler always says "go"
//!   (window source `ungated`); only the pause switch stops training.
//!
//! # State machine
//! `idle_wait → window_open → updating → pausing → idle_wait`, plus `window_open → idle_wait`
//! (closed before the trainer started) and `updating → idle_wait` (`finished`). Every transition
//! is recorded through [`StatePersistence`]. A persisted `updating`/`pausing` state is recovered
//! to `idle_wait` at start-up (that trainer is gone).
//!
//! # Wiring (daemon side)
//! ```no_run
//! # async fn demo(settings: metaclaw_scheduler::SchedulerSettings) {
//! use metaclaw_scheduler::Scheduler;
//! let sched = Scheduler::builder(settings).home("/home/me/.metaclaw").build();
//! let _background = sched.spawn_background(); // keep alive for the daemon's lifetime
//! // Proxy, on every forwarded request:
//! sched.note_activity(chrono::Utc::now());
//! // Trainer loop:
//! loop {
//!     let _window = sched.wait_for_window().await;
//!     sched.started();
//!     let t0 = std::time::Instant::now();
//!     // ... collect a batch, checking `sched.should_pause()` between samples ...
//!     if sched.should_pause() {
//!         sched.interrupted(); // keep the partial batch for the next window
//!         continue;
//!     }
//!     // ... train one step ...
//!     sched.finished(t0.elapsed());
//! }
//! # }
//! ```
//! CLI/dashboard: [`Scheduler::status`], [`Scheduler::next_window`], [`Scheduler::timeline`].
//!
//! # CPU
//! No busy loops: the loops sleep until the next instant something can change on its own (a
//! sleep/event boundary, the idle threshold being reached), wake on changes (calendar edits,
//! activity, pause switch, trainer calls), and poll the OS idle time every `poll_seconds` only
//! while a window is open or a step runs; otherwise they wake at most once a minute (so a
//! screen lock opens an idle window within a minute). D-Bus idle reads cost two calls (~3 ms in
//! a debug build against a local bus) and run on tokio's blocking pool.

pub mod calendar;
#[cfg(target_os = "linux")]
mod dbus_idle;
mod estimate;
pub mod ics;
pub mod idle;
pub mod persist;
mod scheduler;
pub mod settings;
pub mod sleep;
pub mod types;
#[cfg(target_os = "linux")]
mod xprobe;

pub use calendar::{CalendarFetcher, CalendarStore, FetchFuture, FetchResponse, HttpFetcher};
pub use chrono_tz::Tz;
pub use estimate::StepEstimator;
pub use ics::{BusyFilter, IcsError, ParsedCalendar, parse_ics};
#[cfg(target_os = "linux")]
pub use idle::{DbusIdleSource, DesktopSample, Wanted};
pub use idle::{
    IdleSource, NoIdleSource, OsIdleSource, SessionKind, classify_session, fallback_name,
};
pub use persist::{
    JsonFilePersistence, MemoryPersistence, PersistError, PersistedState, StatePersistence,
    Transition, TransitionReason,
};
pub use scheduler::{BackgroundTasks, PRESENCE, Scheduler, SchedulerBuilder, detect_time_zone};
pub use settings::{CalendarSettings, SchedulerSettings};
pub use types::*;
