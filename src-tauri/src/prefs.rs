//! The tray's own switches (which notifications to show), kept in `<home>/tray.json` so
//! config.yaml stays the Python MetaClaw's format.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::status::NoticeKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Prefs {
    pub notify_proposals: bool,
    pub notify_training: bool,
    pub notify_windows: bool,
}

impl Default for Prefs {
    fn default() -> Self {
        Prefs {
            notify_proposals: true,
            notify_training: true,
            notify_windows: true,
        }
    }
}

impl Prefs {
    pub fn path(home_root: &Path) -> PathBuf {
        home_root.join("tray.json")
    }

    /// Missing or unreadable files give the defaults (everything on): a broken preferences
    /// file must not keep the app from starting.
    pub fn load(path: &Path) -> Prefs {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default()
    }

    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, serde_json::to_vec_pretty(self)?)?;
        std::fs::rename(tmp, path)
    }

    pub fn allows(&self, kind: NoticeKind) -> bool {
        match kind {
            NoticeKind::Proposals => self.notify_proposals,
            NoticeKind::Training => self.notify_training,
            NoticeKind::Window => self.notify_windows,
            NoticeKind::Feedback => true,
        }
    }

    pub fn set(&mut self, kind: NoticeKind, on: bool) {
        match kind {
            NoticeKind::Proposals => self.notify_proposals = on,
            NoticeKind::Training => self.notify_training = on,
            NoticeKind::Window => self.notify_windows = on,
            NoticeKind::Feedback => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let path = Prefs::path(dir.path());
        assert_eq!(Prefs::load(&path), Prefs::default());
        let mut p = Prefs::default();
        p.set(NoticeKind::Training, false);
        p.save(&path).unwrap();
        let back = Prefs::load(&path);
        assert!(!back.allows(NoticeKind::Training));
        assert!(back.allows(NoticeKind::Proposals));
        assert!(back.allows(NoticeKind::Feedback));
        std::fs::write(&path, "{not json").unwrap();
        assert_eq!(Prefs::load(&path), Prefs::default());
    }
}
