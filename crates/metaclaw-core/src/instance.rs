//! One running MetaClaw per home directory, whichever host runs it (the headless daemon or the
//! tray app). The owner holds an exclusive lock on `daemon.lock` for its whole life and
//! describes itself in `daemon.json`. The lock, not the pid file, is the truth: the kernel
//! drops it when the process dies, however it dies.

use std::fs::{File, OpenOptions};
use std::path::PathBuf;

use chrono::{DateTime, Utc};
use metaclaw_config::Home;
use serde::{Deserialize, Serialize};

/// Which program holds the home directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum InstanceKind {
    /// `metaclaw start` (also what older `daemon.json` files without a `kind` mean).
    #[default]
    Daemon,
    /// The desktop tray app.
    Tray,
}

impl InstanceKind {
    fn describe(self) -> &'static str {
        match self {
            InstanceKind::Daemon => "the metaclaw daemon",
            InstanceKind::Tray => "the MetaClaw tray app",
        }
    }
}

/// Contents of `daemon.json` while an instance runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InstanceState {
    pub pid: u32,
    pub host: String,
    pub port: u16,
    pub mode: String,
    pub started_at: DateTime<Utc>,
    pub version: String,
    #[serde(default)]
    pub kind: InstanceKind,
}

#[derive(Debug, thiserror::Error)]
pub enum InstanceError {
    #[error(
        "MetaClaw is already running on {home}{who}; stop it with {how} (the tray app and the daemon cannot share a home directory)"
    )]
    AlreadyRunning {
        home: PathBuf,
        who: String,
        how: &'static str,
        state: Option<Box<InstanceState>>,
    },
    #[error("could not open {path}: {source}")]
    Open {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("could not write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The running instance's description, if `daemon.json` exists and parses.
pub fn read_state(home: &Home) -> Option<InstanceState> {
    let text = std::fs::read_to_string(home.state_path()).ok()?;
    serde_json::from_str(&text).ok()
}

fn open_lock(home: &Home) -> std::io::Result<File> {
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(home.lock_path())
}

/// True while some process holds the home's lock.
pub fn is_running(home: &Home) -> bool {
    let Ok(file) = open_lock(home) else {
        return false;
    };
    match file.try_lock() {
        Ok(()) => {
            let _ = file.unlock();
            false
        }
        Err(_) => true,
    }
}

/// The home directory's lock, held until dropped (or the process ends).
#[derive(Debug)]
pub struct InstanceLock {
    _file: File,
    home: Home,
}

impl InstanceLock {
    /// Take the lock, or explain who holds it and how to stop them.
    pub fn acquire(home: &Home) -> Result<InstanceLock, InstanceError> {
        let file = open_lock(home).map_err(|source| InstanceError::Open {
            path: home.lock_path(),
            source,
        })?;
        if file.try_lock().is_err() {
            let state = read_state(home);
            let who = state
                .as_ref()
                .map(|s| format!(" ({}, pid {}, port {})", s.kind.describe(), s.pid, s.port))
                .unwrap_or_default();
            let how = match state.as_ref().map(|s| s.kind) {
                Some(InstanceKind::Tray) => "the tray menu's Quit or `metaclaw stop`",
                _ => "`metaclaw stop`",
            };
            return Err(InstanceError::AlreadyRunning {
                home: home.root().to_owned(),
                who,
                how,
                state: state.map(Box::new),
            });
        }
        Ok(InstanceLock {
            _file: file,
            home: home.clone(),
        })
    }

    /// Publish `daemon.json` (atomically: readers never see half a file).
    pub fn write_state(&self, state: &InstanceState) -> Result<(), InstanceError> {
        let path = self.home.state_path();
        let tmp = path.with_extension("json.tmp");
        let fail = |source| InstanceError::Write {
            path: path.clone(),
            source,
        };
        let body = serde_json::to_vec_pretty(state).map_err(std::io::Error::other);
        std::fs::write(&tmp, body.map_err(fail)?).map_err(fail)?;
        std::fs::rename(&tmp, &path).map_err(fail)?;
        Ok(())
    }

    /// Remove `daemon.json`; the lock itself goes when this value is dropped.
    pub fn clear_state(&self) {
        let _ = std::fs::remove_file(self.home.state_path());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(kind: InstanceKind) -> InstanceState {
        InstanceState {
            pid: 42,
            host: "127.0.0.1".into(),
            port: 30000,
            mode: "skills_only".into(),
            started_at: Utc::now(),
            version: "0".into(),
            kind,
        }
    }

    #[test]
    fn second_lock_on_one_home_is_refused_with_who_holds_it() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::at(dir.path());
        home.ensure().unwrap();
        let first = InstanceLock::acquire(&home).unwrap();
        first.write_state(&state(InstanceKind::Tray)).unwrap();
        assert!(is_running(&home));
        let err = InstanceLock::acquire(&home).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("already running"), "{msg}");
        assert!(msg.contains("tray app, pid 42, port 30000"), "{msg}");
        first.clear_state();
        drop(first);
        assert!(!is_running(&home));
        assert!(read_state(&home).is_none());
        InstanceLock::acquire(&home).unwrap();
    }

    #[test]
    fn old_state_files_without_kind_mean_the_daemon() {
        let s: InstanceState = serde_json::from_str(
            r#"{"pid":1,"host":"h","port":2,"mode":"rl","started_at":"2026-01-01T00:00:00Z","version":"0"}"#,
        )
        .unwrap();
        assert_eq!(s.kind, InstanceKind::Daemon);
    }
}
