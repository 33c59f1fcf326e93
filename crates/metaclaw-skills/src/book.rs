//! The live library, swapped whole on reload so a request never sees a half-built one.
//!
//! Hot reload reacts only to changes on disk: the watcher also reports opens and reads (the
//! reload's own reads among them), so access events are ignored, and a batch of events that
//! leaves every SKILL.md as it was (same size and modification time) reloads nothing.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use arc_swap::ArcSwap;
use notify::{EventKind, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};

use crate::error::{Result, SkillsError};
use crate::library::{Library, Sources};

pub struct SkillBook {
    current: ArcSwap<Library>,
    /// Where skills come from; replaced when the user changes `skills.dir` or
    /// `skills.include_bundled` (see [`SkillBook::set_sources`]).
    sources: ArcSwap<Sources>,
    /// The watcher [`SkillBook::start_watching`] keeps, moved to a new folder with the sources.
    watcher: Mutex<Option<WatchGuard>>,
    /// What the user's folder looked like when the current library was read.
    on_disk: Mutex<Fingerprint>,
    reloads: AtomicU64,
    /// Event batches the watcher delivered, whether or not they changed anything.
    batches: AtomicU64,
}

/// Keeps the file watcher alive; dropping it stops hot reload.
pub struct WatchGuard {
    _debouncer: Debouncer<notify::RecommendedWatcher, RecommendedCache>,
}

/// Path, size and modification time of every file one and two levels below the user's
/// folder (`<name>/SKILL.md` and its neighbours), sorted: equal fingerprints mean nothing a
/// reload would read has changed.
#[derive(Debug, Default, PartialEq, Eq)]
struct Fingerprint(Vec<(PathBuf, u64, Option<SystemTime>)>);

impl Fingerprint {
    fn of(dir: Option<&Path>) -> Fingerprint {
        let mut files = Vec::new();
        let Some(dir) = dir else {
            return Fingerprint(files);
        };
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Fingerprint(files);
        };
        for entry in entries.filter_map(|e| e.ok()) {
            let path = entry.path();
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                let Ok(inner) = std::fs::read_dir(&path) else {
                    continue;
                };
                for file in inner.filter_map(|e| e.ok()) {
                    if let Ok(m) = file.metadata() {
                        files.push((file.path(), m.len(), m.modified().ok()));
                    }
                }
            } else {
                files.push((path, meta.len(), meta.modified().ok()));
            }
        }
        files.sort();
        Fingerprint(files)
    }
}

/// Whether an event can mean a change of content (opening or reading a file cannot).
fn is_change(kind: &EventKind) -> bool {
    !matches!(kind, EventKind::Access(_))
}

impl SkillBook {
    pub fn load(sources: Sources) -> Arc<SkillBook> {
        let on_disk = Fingerprint::of(sources.user_dir.as_deref());
        let library = Library::load(&sources);
        for p in library.problems() {
            tracing::warn!("skill: {p}");
        }
        Arc::new(SkillBook {
            current: ArcSwap::from_pointee(library),
            sources: ArcSwap::from_pointee(sources),
            watcher: Mutex::new(None),
            on_disk: Mutex::new(on_disk),
            reloads: AtomicU64::new(0),
            batches: AtomicU64::new(0),
        })
    }

    /// The library as of now; later reloads do not change it.
    pub fn library(&self) -> Arc<Library> {
        self.current.load_full()
    }

    pub fn sources(&self) -> Arc<Sources> {
        self.sources.load_full()
    }

    /// Read skills from somewhere else from now on: the library is rebuilt from the new
    /// sources and swapped in whole, and a running watcher moves to the new folder.
    /// Returns whether anything changed.
    pub fn set_sources(self: &Arc<Self>, sources: Sources) -> Result<bool> {
        if *self.sources.load_full() == sources {
            return Ok(false);
        }
        self.sources.store(Arc::new(sources));
        self.reload();
        let mut watcher = self.watcher.lock().unwrap_or_else(|p| p.into_inner());
        if watcher.is_some() {
            // The old folder's watcher stops before the new one starts.
            *watcher = None;
            *watcher = self.watch()?;
        }
        Ok(true)
    }

    /// Like [`SkillBook::watch`], but the book keeps the watcher (and moves it when the
    /// sources change) until [`SkillBook::stop_watching`].
    pub fn start_watching(self: &Arc<Self>) -> Result<()> {
        let mut watcher = self.watcher.lock().unwrap_or_else(|p| p.into_inner());
        *watcher = None;
        *watcher = self.watch()?;
        Ok(())
    }

    pub fn stop_watching(&self) {
        *self.watcher.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// How many times the library was rebuilt since it was loaded.
    pub fn reloads(&self) -> u64 {
        self.reloads.load(Ordering::Relaxed)
    }

    /// How many batches of file events the watcher has handled (changes or not).
    pub fn watch_batches(&self) -> u64 {
        self.batches.load(Ordering::Relaxed)
    }

    /// Re-read every source and swap the result in (after a change this process made).
    pub fn reload(&self) {
        let mut on_disk = self.on_disk.lock().unwrap_or_else(|p| p.into_inner());
        *on_disk = Fingerprint::of(self.sources.load().user_dir.as_deref());
        self.rebuild();
    }

    /// Reload only if a file under the user's folder differs from what the library was
    /// built from.
    fn reload_if_changed(&self) -> bool {
        let mut on_disk = self.on_disk.lock().unwrap_or_else(|p| p.into_inner());
        let now = Fingerprint::of(self.sources.load().user_dir.as_deref());
        if now == *on_disk {
            return false;
        }
        *on_disk = now;
        self.rebuild();
        true
    }

    fn rebuild(&self) {
        let library = Library::load(&self.sources.load());
        self.reloads.fetch_add(1, Ordering::Relaxed);
        tracing::info!(
            skills = library.len(),
            problems = library.problems().len(),
            "skills reloaded"
        );
        self.current.store(Arc::new(library));
    }

    /// Reload (debounced) whenever a file under the user's skills folder changes.
    pub fn watch(self: &Arc<Self>) -> Result<Option<WatchGuard>> {
        let Some(dir) = self.sources.load().user_dir.clone() else {
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
                let (Ok(events), Some(book)) = (res, book.upgrade()) else {
                    return;
                };
                if events.iter().any(|e| is_change(&e.kind)) {
                    book.reload_if_changed();
                }
                book.batches.fetch_add(1, Ordering::Relaxed);
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

    const COFFEE: &str = "---\nname: brew-coffee\ndescription: Use when making pour-over coffee\n---\nGrind medium-fine.\n";

    /// Polls `done` until it holds; file events arrive from the OS on their own schedule.
    fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !done() {
            assert!(
                std::time::Instant::now() < deadline,
                "timed out waiting for {what}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn book_over(dir: &Path) -> Arc<SkillBook> {
        SkillBook::load(Sources {
            user_dir: Some(dir.to_owned()),
            bundled: false,
        })
    }

    /// A watched folder holding one skill, and that skill's file.
    fn watched_coffee() -> (tempfile::TempDir, PathBuf, Arc<SkillBook>, WatchGuard) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("brew-coffee")).unwrap();
        let file = dir.path().join("brew-coffee/SKILL.md");
        std::fs::write(&file, COFFEE).unwrap();
        let book = book_over(dir.path());
        let guard = book.watch().unwrap().unwrap();
        (dir, file, book, guard)
    }

    #[test]
    fn edits_on_disk_are_picked_up_and_old_snapshots_stay_whole() {
        let dir = tempfile::tempdir().unwrap();
        let book = book_over(dir.path());
        let _guard = book.watch().unwrap().unwrap();
        let before = book.library();
        assert!(before.is_empty());
        std::fs::create_dir_all(dir.path().join("brew-coffee")).unwrap();
        std::fs::write(dir.path().join("brew-coffee/SKILL.md"), COFFEE).unwrap();
        wait_until("the new skill", || {
            book.library().get("brew-coffee").is_some()
        });
        assert!(before.is_empty(), "a snapshot taken earlier never changes");
    }

    #[test]
    fn reading_the_folder_never_reloads() {
        let (_dir, file, book, _guard) = watched_coffee();
        // Reads as the reload itself does them: each open and read is a watcher event.
        for _ in 0..20 {
            std::fs::read_to_string(&file).unwrap();
            drop(Library::load(&book.sources()));
        }
        wait_until("the watcher to see the reads", || book.watch_batches() >= 1);
        assert_eq!(book.reloads(), 0, "reads alone reloaded the library");

        // A real edit still reloads, exactly once.
        std::fs::write(&file, COFFEE.replace("medium-fine", "coarse")).unwrap();
        wait_until("the edit", || {
            book.library()
                .get("brew-coffee")
                .is_some_and(|s| s.body.contains("coarse"))
        });
        assert_eq!(book.reloads(), 1);
    }

    #[test]
    fn editors_that_save_by_rename_are_picked_up() {
        let (dir, file, book, _guard) = watched_coffee();
        let tmp = dir.path().join("brew-coffee/.SKILL.md.swp");
        std::fs::write(&tmp, COFFEE.replace("medium-fine", "extra-fine")).unwrap();
        std::fs::rename(&tmp, &file).unwrap();
        wait_until("the renamed file", || {
            book.library()
                .get("brew-coffee")
                .is_some_and(|s| s.body.contains("extra-fine"))
        });
    }

    #[test]
    fn new_sources_rebuild_the_library_and_move_the_watcher() {
        let old = tempfile::tempdir().unwrap();
        let new = tempfile::tempdir().unwrap();
        let book = book_over(old.path());
        book.start_watching().unwrap();
        let before = book.library();

        let changed = book
            .set_sources(Sources {
                user_dir: Some(new.path().to_owned()),
                bundled: true,
            })
            .unwrap();
        assert!(changed);
        assert!(!book.library().is_empty(), "the bundled bank is in");
        assert!(before.is_empty(), "a snapshot taken earlier never changes");
        let same = book.sources().as_ref().clone();
        assert!(
            !book.set_sources(same).unwrap(),
            "the same sources change nothing"
        );

        // The watcher now follows the new folder.
        std::fs::create_dir_all(new.path().join("brew-coffee")).unwrap();
        std::fs::write(new.path().join("brew-coffee/SKILL.md"), COFFEE).unwrap();
        wait_until("the skill in the new folder", || {
            book.library().get("brew-coffee").is_some()
        });
        book.stop_watching();
    }

    #[test]
    fn access_events_are_not_changes() {
        use notify::event::{AccessKind, AccessMode, CreateKind, ModifyKind, RenameMode};
        assert!(!is_change(&EventKind::Access(AccessKind::Open(
            AccessMode::Any
        ))));
        assert!(!is_change(&EventKind::Access(AccessKind::Close(
            AccessMode::Read
        ))));
        assert!(is_change(&EventKind::Create(CreateKind::File)));
        assert!(is_change(&EventKind::Modify(ModifyKind::Name(
            RenameMode::To
        ))));
    }
}
