//! The live library, swapped whole on reload so a request never sees a half-built one.

use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use notify::RecursiveMode;
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};

use crate::error::{Result, SkillsError};
use crate::library::{Library, Sources};

pub struct SkillBook {
    current: ArcSwap<Library>,
    sources: Sources,
}

/// Keeps the file watcher alive; dropping it stops hot reload.
pub struct WatchGuard {
    _debouncer: Debouncer<notify::RecommendedWatcher, RecommendedCache>,
}

impl SkillBook {
    pub fn load(sources: Sources) -> Arc<SkillBook> {
        let library = Library::load(&sources);
        for p in library.problems() {
            tracing::warn!("skill: {p}");
        }
        Arc::new(SkillBook {
            current: ArcSwap::from_pointee(library),
            sources,
        })
    }

    /// The library as of now; later reloads do not change it.
    pub fn library(&self) -> Arc<Library> {
        self.current.load_full()
    }

    pub fn sources(&self) -> &Sources {
        &self.sources
    }

    /// Re-read every source and swap the result in.
    pub fn reload(&self) {
        let library = Library::load(&self.sources);
        tracing::info!(
            skills = library.len(),
            problems = library.problems().len(),
            "skills reloaded"
        );
        self.current.store(Arc::new(library));
    }

    /// Reload (debounced) whenever a file under the user's skills folder changes.
    pub fn watch(self: &Arc<Self>) -> Result<Option<WatchGuard>> {
        let Some(dir) = self.sources.user_dir.clone() else {
            return Ok(None);
        };
        std::fs::create_dir_all(&dir).map_err(|source| SkillsError::Io {
            path: dir.clone(),
            source,
        })?;
        let book = Arc::downgrade(self);
        let mut debouncer = new_debouncer(
            Duration::from_millis(250),
            None,
            move |res: DebounceEventResult| {
                if let (Ok(events), Some(book)) = (res, book.upgrade())
                    && !events.is_empty()
                {
                    book.reload();
                }
            },
        )
        .map_err(|e| SkillsError::Watch {
            path: dir.clone(),
            reason: e.to_string(),
        })?;
        debouncer
            .watch(&dir, RecursiveMode::Recursive)
            .map_err(|e| SkillsError::Watch {
                path: dir.clone(),
                reason: e.to_string(),
            })?;
        Ok(Some(WatchGuard {
            _debouncer: debouncer,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_on_disk_are_picked_up_and_old_snapshots_stay_whole() {
        let dir = tempfile::tempdir().unwrap();
        let book = SkillBook::load(Sources {
            user_dir: Some(dir.path().to_owned()),
            bundled: false,
        });
        let _guard = book.watch().unwrap().unwrap();
        let before = book.library();
        assert!(before.is_empty());
        std::fs::create_dir_all(dir.path().join("brew-coffee")).unwrap();
        std::fs::write(
            dir.path().join("brew-coffee/SKILL.md"),
            "---\nname: brew-coffee\ndescription: Use when making pour-over coffee\n---\nGrind medium-fine.\n",
        )
        .unwrap();
        let mut found = false;
        for _ in 0..100 {
            if book.library().get("brew-coffee").is_some() {
                found = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(found, "hot reload did not pick up the new skill");
        assert!(before.is_empty(), "a snapshot taken earlier never changes");
    }
}
