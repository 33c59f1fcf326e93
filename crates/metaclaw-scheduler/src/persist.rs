//! Persistence of the state machine: the current state plus an append-only transition log.
//!
//! [`StatePersistence`] is deliberately small so the daemon can swap the JSON files for SQLite.
//! [`JsonFilePersistence`] writes `<home>/scheduler_state.json` (rewritten atomically on every
//! transition) and appends one JSON object per line to `<home>/scheduler_transitions.jsonl`.

use std::collections::VecDeque;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::types::{SchedulerState, Window};

/// Step durations kept for the estimate (and persisted).
pub const STEP_HISTORY: usize = 20;
/// Transitions handed back by `load()` (for the timeline and status).
const RECENT_TRANSITIONS: usize = 2000;
/// The log is compacted to `RECENT_TRANSITIONS` lines once it grows past this.
const COMPACT_AFTER_LINES: usize = 10_000;

pub const STATE_FILE: &str = "scheduler_state.json";
pub const TRANSITIONS_FILE: &str = "scheduler_transitions.jsonl";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransitionReason {
    /// A window opened (idle_wait → window_open).
    WindowOpened,
    /// The window closed before the trainer started (window_open → idle_wait).
    WindowClosed,
    /// `started()` (→ updating).
    TrainerStarted,
    /// The user came back or learning was paused during an update (updating → pausing).
    UserReturned,
    /// `finished()` (→ idle_wait), with the step duration.
    TrainerFinished,
    /// `interrupted()`: the trainer stopped without completing a step (→ idle_wait).
    TrainerInterrupted,
    /// `set_paused(true)` (state unchanged, `paused` flag set).
    Paused,
    /// `set_paused(false)`.
    Resumed,
    /// On start-up a persisted `updating`/`pausing` state belonged to a trainer that no longer
    /// runs (→ idle_wait).
    RecoveredAfterRestart,
}

/// One line of the transition log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Transition {
    pub at: DateTime<Utc>,
    pub from: SchedulerState,
    pub to: SchedulerState,
    pub reason: TransitionReason,
    /// The "learning paused" flag after this transition.
    #[serde(default)]
    pub paused: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<Window>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_duration_secs: Option<f64>,
}

/// What survives a restart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PersistedState {
    pub state: SchedulerState,
    pub since: DateTime<Utc>,
    pub paused: bool,
    /// The last [`STEP_HISTORY`] step durations, oldest first.
    pub step_durations_secs: Vec<f64>,
    /// Recent transitions, oldest first (not stored in the state file).
    #[serde(skip)]
    pub recent: Vec<Transition>,
}

impl PersistedState {
    /// Fold one transition into the state.
    pub fn apply(&mut self, t: &Transition) {
        self.state = t.to;
        if t.from != t.to {
            self.since = t.at;
        }
        self.paused = t.paused;
        if let Some(d) = t.step_duration_secs.filter(|d| d.is_finite() && *d >= 0.0) {
            self.step_durations_secs.push(d);
            let excess = self.step_durations_secs.len().saturating_sub(STEP_HISTORY);
            self.step_durations_secs.drain(..excess);
        }
    }

    fn from_transitions(list: &[Transition]) -> Option<Self> {
        let first = list.first()?;
        let mut s = Self {
            state: first.from,
            since: first.at,
            paused: false,
            step_durations_secs: Vec::new(),
            recent: Vec::new(),
        };
        for t in list {
            s.apply(t);
        }
        Some(s)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PersistError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("serialise: {0}")]
    Json(#[from] serde_json::Error),
}

/// Where the scheduler keeps its state. `record` is called once per transition, in order.
pub trait StatePersistence: Send + Sync + 'static {
    fn load(&self) -> Option<PersistedState>;
    fn record(&self, transition: &Transition) -> Result<(), PersistError>;
}

/// Keeps everything in memory (tests, or a daemon without a home directory).
#[derive(Debug, Default)]
pub struct MemoryPersistence {
    log: Mutex<Vec<Transition>>,
}

impl MemoryPersistence {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn transitions(&self) -> Vec<Transition> {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl StatePersistence for MemoryPersistence {
    fn load(&self) -> Option<PersistedState> {
        let log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        let mut s = PersistedState::from_transitions(&log)?;
        let skip = log.len().saturating_sub(RECENT_TRANSITIONS);
        s.recent = log[skip..].to_vec();
        Some(s)
    }

    fn record(&self, transition: &Transition) -> Result<(), PersistError> {
        self.log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(transition.clone());
        Ok(())
    }
}

/// The state file's layout.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct StateFile {
    state: SchedulerState,
    since: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    #[serde(default)]
    paused: bool,
    #[serde(default)]
    step_durations_secs: Vec<f64>,
}

/// `<home>/scheduler_state.json` + `<home>/scheduler_transitions.jsonl`.
#[derive(Debug)]
pub struct JsonFilePersistence {
    dir: PathBuf,
    /// State as of the last record/load, so `record` can rewrite the state file.
    current: Mutex<Option<PersistedState>>,
}

impl JsonFilePersistence {
    pub fn new(home: impl Into<PathBuf>) -> Self {
        Self {
            dir: home.into(),
            current: Mutex::new(None),
        }
    }

    pub fn state_path(&self) -> PathBuf {
        self.dir.join(STATE_FILE)
    }

    pub fn transitions_path(&self) -> PathBuf {
        self.dir.join(TRANSITIONS_FILE)
    }

    fn io(path: &Path) -> impl FnOnce(std::io::Error) -> PersistError + '_ {
        move |source| PersistError::Io {
            path: path.to_owned(),
            source,
        }
    }

    fn read_log(&self) -> (VecDeque<Transition>, usize) {
        let path = self.transitions_path();
        let Ok(text) = std::fs::read_to_string(&path) else {
            return (VecDeque::new(), 0);
        };
        if !text.is_empty() && !text.ends_with('\n') {
            // Terminate a torn last line so the next append starts on a line of its own.
            let repaired = std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .and_then(|mut f| f.write_all(b"\n"));
            if let Err(e) = repaired {
                tracing::warn!(path = %path.display(), error = %e, "cannot repair the transition log");
            }
        }
        let mut lines = 0;
        let mut recent = VecDeque::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            lines += 1;
            match serde_json::from_str::<Transition>(line) {
                Ok(t) => {
                    recent.push_back(t);
                    if recent.len() > RECENT_TRANSITIONS {
                        recent.pop_front();
                    }
                }
                // A torn last line after a crash, or a hand edit: skip it.
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "skipping bad transition line")
                }
            }
        }
        (recent, lines)
    }

    fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), PersistError> {
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, bytes).map_err(Self::io(&tmp))?;
        std::fs::rename(&tmp, path).map_err(Self::io(path))
    }

    fn compact(&self, recent: &VecDeque<Transition>) -> Result<(), PersistError> {
        let mut out = String::new();
        for t in recent {
            out.push_str(&serde_json::to_string(t)?);
            out.push('\n');
        }
        Self::write_atomic(&self.transitions_path(), out.as_bytes())
    }
}

impl StatePersistence for JsonFilePersistence {
    fn load(&self) -> Option<PersistedState> {
        let (recent, lines) = self.read_log();
        if lines > COMPACT_AFTER_LINES
            && let Err(e) = self.compact(&recent)
        {
            tracing::warn!(error = %e, "could not compact the scheduler transition log");
        }
        let recent: Vec<Transition> = recent.into();
        let file: Option<StateFile> = std::fs::read(self.state_path())
            .ok()
            .and_then(|b| match serde_json::from_slice(&b) {
                Ok(f) => Some(f),
                Err(e) => {
                    tracing::warn!(error = %e, "scheduler_state.json is unreadable; using the transition log");
                    None
                }
            });
        let derived = PersistedState::from_transitions(&recent);
        let mut state = match (file, derived) {
            (None, None) => return None,
            (None, Some(d)) => d,
            (Some(f), derived) => {
                let mut s = PersistedState {
                    state: f.state,
                    since: f.since,
                    paused: f.paused,
                    step_durations_secs: f.step_durations_secs,
                    recent: Vec::new(),
                };
                // A crash between appending to the log and rewriting the state file leaves the
                // log ahead: trust its last line.
                if let (Some(d), Some(last)) = (derived, recent.last())
                    && last.at > f.updated_at
                {
                    s.state = d.state;
                    s.since = d.since;
                    s.paused = d.paused;
                    if let Some(secs) = last.step_duration_secs {
                        s.step_durations_secs.push(secs);
                        let excess = s.step_durations_secs.len().saturating_sub(STEP_HISTORY);
                        s.step_durations_secs.drain(..excess);
                    }
                }
                s
            }
        };
        state.recent = recent;
        let mut cur = self.current.lock().unwrap_or_else(|e| e.into_inner());
        *cur = Some(PersistedState {
            recent: Vec::new(),
            ..state.clone()
        });
        Some(state)
    }

    fn record(&self, transition: &Transition) -> Result<(), PersistError> {
        std::fs::create_dir_all(&self.dir).map_err(Self::io(&self.dir))?;
        let mut line = serde_json::to_string(transition)?;
        line.push('\n');
        let log = self.transitions_path();
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .map_err(Self::io(&log))?;
        f.write_all(line.as_bytes()).map_err(Self::io(&log))?;

        let mut cur = self.current.lock().unwrap_or_else(|e| e.into_inner());
        let st = cur.get_or_insert_with(|| PersistedState {
            state: transition.from,
            since: transition.at,
            paused: false,
            step_durations_secs: Vec::new(),
            recent: Vec::new(),
        });
        st.apply(transition);
        let file = StateFile {
            state: st.state,
            since: st.since,
            updated_at: transition.at,
            paused: st.paused,
            step_durations_secs: st.step_durations_secs.clone(),
        };
        Self::write_atomic(&self.state_path(), &serde_json::to_vec_pretty(&file)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(
        at: &str,
        from: SchedulerState,
        to: SchedulerState,
        reason: TransitionReason,
    ) -> Transition {
        Transition {
            at: at.parse().unwrap(),
            from,
            to,
            reason,
            paused: false,
            window: None,
            step_duration_secs: None,
        }
    }

    #[test]
    fn json_files_round_trip_and_survive_a_torn_line() {
        use SchedulerState::*;
        let dir = tempfile::tempdir().unwrap();
        let p = JsonFilePersistence::new(dir.path());
        assert!(p.load().is_none());
        p.record(&t(
            "2026-01-01T00:00:00Z",
            IdleWait,
            WindowOpen,
            TransitionReason::WindowOpened,
        ))
        .unwrap();
        p.record(&t(
            "2026-01-01T00:00:01Z",
            WindowOpen,
            Updating,
            TransitionReason::TrainerStarted,
        ))
        .unwrap();
        let mut fin = t(
            "2026-01-01T00:05:00Z",
            Updating,
            IdleWait,
            TransitionReason::TrainerFinished,
        );
        fin.step_duration_secs = Some(299.0);
        p.record(&fin).unwrap();
        let mut paused = t(
            "2026-01-01T00:06:00Z",
            IdleWait,
            IdleWait,
            TransitionReason::Paused,
        );
        paused.paused = true;
        p.record(&paused).unwrap();

        // Simulate a crash mid-append.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(p.transitions_path())
            .unwrap();
        f.write_all(b"{\"at\":\"2026-01-01T00:07").unwrap();

        let again = JsonFilePersistence::new(dir.path());
        let s = again.load().unwrap();
        assert_eq!(s.state, IdleWait);
        assert_eq!(
            s.since,
            "2026-01-01T00:05:00Z".parse::<DateTime<Utc>>().unwrap()
        );
        assert!(s.paused);
        assert_eq!(s.step_durations_secs, vec![299.0]);
        assert_eq!(s.recent.len(), 4);

        // The state file alone (log deleted) is enough.
        std::fs::remove_file(again.transitions_path()).unwrap();
        let s = JsonFilePersistence::new(dir.path()).load().unwrap();
        assert_eq!((s.state, s.paused), (IdleWait, true));

        // Corrupt state file and a log: derived from the log.
        std::fs::write(again.state_path(), b"{not json").unwrap();
        again
            .record(&t(
                "2026-01-02T00:00:00Z",
                IdleWait,
                WindowOpen,
                TransitionReason::WindowOpened,
            ))
            .unwrap();
        std::fs::write(again.state_path(), b"{not json").unwrap();
        let s = JsonFilePersistence::new(dir.path()).load().unwrap();
        assert_eq!(s.state, WindowOpen);
    }

    #[test]
    fn memory_persistence_folds_transitions() {
        use SchedulerState::*;
        let m = MemoryPersistence::new();
        assert!(m.load().is_none());
        for i in 0..25 {
            let mut f = t(
                "2026-01-01T00:00:00Z",
                Updating,
                IdleWait,
                TransitionReason::TrainerFinished,
            );
            f.step_duration_secs = Some(f64::from(i));
            m.record(&f).unwrap();
        }
        let s = m.load().unwrap();
        assert_eq!(s.step_durations_secs.len(), STEP_HISTORY);
        assert_eq!(s.step_durations_secs[0], 5.0);
    }
}
