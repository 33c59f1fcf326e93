//! Public value types: windows, states, status snapshots, timeline bands.

use std::path::PathBuf;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// A half-open time interval `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Interval {
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
}

impl Interval {
    pub fn contains(&self, t: DateTime<Utc>) -> bool {
        self.start <= t && t < self.end
    }

    pub fn overlaps(&self, from: DateTime<Utc>, to: DateTime<Utc>) -> bool {
        self.start < to && self.end > from
    }
}

/// Where a training window comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WindowSource {
    /// Configured sleep hours (known end).
    Sleep,
    /// A busy calendar event: the user is in a meeting, away from the keyboard (known end).
    Calendar,
    /// The user has been idle for at least the threshold (unknown end).
    Idle,
    /// Gating is off (`rl` mode without `scheduler.enabled`): always "go".
    Ungated,
}

/// A training window. `end` is known for sleep and calendar windows (when several known-end
/// windows overlap or touch, `end` is the end of the whole chain), and `None` for idle windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Window {
    pub start: DateTime<Utc>,
    pub end: Option<DateTime<Utc>>,
    pub source: WindowSource,
}

impl Window {
    /// Known time left at `now` (`None` for windows without a known end).
    pub fn remaining(&self, now: DateTime<Utc>) -> Option<chrono::Duration> {
        self.end.map(|e| e - now)
    }
}

/// The OMLS state machine: `idle_wait → window_open → updating → pausing → idle_wait`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SchedulerState {
    IdleWait,
    WindowOpen,
    Updating,
    Pausing,
}

impl SchedulerState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::IdleWait => "idle_wait",
            Self::WindowOpen => "window_open",
            Self::Updating => "updating",
            Self::Pausing => "pausing",
        }
    }
}

impl std::fmt::Display for SchedulerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the idle source reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum IdleReading {
    /// Time since the last keyboard/mouse input, from the OS.
    Known { idle_secs: u64 },
    /// The screen is locked (screensaver active): the user is away, however recent the last
    /// input (a bumped mouse on the lock screen does not mean they are back). `idle_secs` is the
    /// input idle time when the OS also reports it.
    Locked { idle_secs: Option<u64> },
    /// The OS idle time cannot be read here (no display or desktop idle service, feature off,
    /// error).
    Unknown { reason: String },
}

/// Which signal the idle source actually used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IdleSourceUsed {
    /// OS input idle time.
    Os,
    /// The screen is locked: counts as away at once (the idle threshold does not apply).
    ScreenLocked,
    /// Time since the last request the proxy forwarded (`note_activity`), because the OS
    /// reading is unknown.
    ProxyActivity,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SleepStatus {
    pub enabled: bool,
    pub sleep_start: Option<String>,
    pub sleep_end: Option<String>,
    /// Set when the sleep hours are configured but cannot be parsed (the source stays closed).
    pub problem: Option<String>,
    /// The sleep window containing now.
    pub current: Option<Interval>,
    /// The next sleep window that starts after now.
    pub next: Option<Interval>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct IdleStatus {
    pub enabled: bool,
    pub threshold_secs: Option<u64>,
    /// The idle source in use: "mutter", "freedesktop-screensaver", "x11", … or
    /// "proxy activity (no OS idle source: <why>)".
    pub source: String,
    /// The raw OS reading ("unknown" with a reason when not available).
    pub reading: IdleReading,
    pub source_used: IdleSourceUsed,
    /// The idle time the scheduler acts on (from `source_used`).
    pub idle_secs: u64,
    pub last_activity: DateTime<Utc>,
    /// True when `idle_secs >= threshold`.
    pub open: bool,
}

impl IdleStatus {
    /// The OS reports a locked screen (the user counts as away).
    pub fn screen_locked(&self) -> bool {
        matches!(self.reading, IdleReading::Locked { .. })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CalendarFileStatus {
    pub path: PathBuf,
    pub events: usize,
    pub loaded_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CalendarUrlStatus {
    pub url: String,
    /// Events in the copy in use (possibly an older copy when the last fetch failed).
    pub events: Option<usize>,
    pub etag: Option<String>,
    pub last_attempt: Option<DateTime<Utc>>,
    pub last_success: Option<DateTime<Utc>>,
    /// True when the last fetch answered 304 Not Modified.
    pub not_modified: bool,
}

/// A calendar source that could not be used, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SourceProblem {
    /// A file path or URL.
    pub source: String,
    pub reason: String,
    pub at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CalendarStatus {
    pub enabled: bool,
    pub files: Vec<CalendarFileStatus>,
    pub urls: Vec<CalendarUrlStatus>,
    pub problems: Vec<SourceProblem>,
    /// The (merged) busy interval containing now.
    pub busy_now: Option<Interval>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SourcesStatus {
    pub sleep: SleepStatus,
    pub idle: IdleStatus,
    pub calendar: CalendarStatus,
}

/// A snapshot for `metaclaw scheduler status` and the dashboard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SchedulerStatus {
    pub now: DateTime<Utc>,
    pub time_zone: String,
    /// False in `rl` mode without `scheduler.enabled`: the scheduler always says "go".
    pub gating: bool,
    /// Learning paused by the user (`set_paused(true)`).
    pub paused: bool,
    pub state: SchedulerState,
    pub since: DateTime<Utc>,
    /// The window a step may start in now (respecting `min_window_minutes` and the step
    /// estimate), if any.
    pub window: Option<Window>,
    /// Why no step may start although some source is open (e.g. the window is too short).
    pub blocked_reason: Option<String>,
    /// True when at least one source is open (the user is away).
    pub user_away: bool,
    /// Median of the last step durations, if any step was measured.
    pub step_estimate_secs: Option<f64>,
    pub sources: SourcesStatus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BandKind {
    Sleep,
    Calendar,
    Training,
}

/// One band of the timeline view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Band {
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    pub kind: BandKind,
}
