//! Where the core's log goes. A desktop app or a detached daemon writes `metaclaw.log` in the
//! home, rotated by size so weeks of running never fill the disk: at most [`KEEP`] old files
//! of [`MAX_BYTES`] each beside the current one. A core run in a terminal logs to stderr.

use std::path::{Path, PathBuf};

use file_rotate::suffix::AppendCount;
use file_rotate::{ContentLimit, FileRotate};
use tracing_appender::non_blocking::WorkerGuard;

/// Size at which the current log file is rotated.
pub const MAX_BYTES: usize = 4 * 1024 * 1024;
/// Rotated files kept (`metaclaw.log.1` is the newest); older ones are deleted.
pub const KEEP: usize = 3;

/// Where tracing output goes.
#[derive(Debug, Clone)]
pub enum LogTarget {
    Stderr,
    /// A size-capped, rotated file.
    File(PathBuf),
}

/// Keeps the log writer's background thread alive; dropping it flushes what is queued.
#[must_use = "dropping the guard stops file logging"]
pub struct LogGuard {
    _worker: Option<WorkerGuard>,
}

/// A writer for `path` that rotates at `max_bytes` and keeps `keep` old files.
pub fn rotating_file(path: &Path, max_bytes: usize, keep: usize) -> FileRotate<AppendCount> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut open = std::fs::OpenOptions::new();
    // Logs can name sessions and upstream errors: readable by the user only, like config.yaml.
    open.read(true).create(true).append(true).mode(0o600);
    FileRotate::new(
        path,
        AppendCount::new(keep),
        ContentLimit::BytesSurpassed(max_bytes),
        file_rotate::compression::Compression::None,
        Some(open),
    )
}

/// Install the global subscriber (level from `METACLAW_LOG`, default `info`). Panics are
/// logged through it too, so they reach the file rather than a detached stderr.
pub fn init_tracing(target: LogTarget) -> LogGuard {
    let filter = tracing_subscriber::EnvFilter::try_from_env("METACLAW_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let guard = match target {
        LogTarget::Stderr => {
            let _ = tracing_subscriber::fmt()
                .with_env_filter(filter)
                .with_writer(std::io::stderr)
                .try_init();
            None
        }
        LogTarget::File(path) => {
            // Log lines are written by a background thread, so no request waits for the disk.
            let (writer, guard) =
                tracing_appender::non_blocking(rotating_file(&path, MAX_BYTES, KEEP));
            let _ = tracing_subscriber::fmt()
                .with_env_filter(filter)
                .with_ansi(false)
                .with_writer(writer)
                .try_init();
            Some(guard)
        }
    };
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        tracing::error!("panic: {info}");
        default_hook(info);
    }));
    LogGuard { _worker: guard }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    #[test]
    fn the_log_is_rotated_by_size_and_old_files_are_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("metaclaw.log");
        let mut log = rotating_file(&path, 1000, 2);
        let line = [b'x'; 99];
        for _ in 0..100 {
            log.write_all(&line).unwrap();
            log.write_all(b"\n").unwrap();
        }
        log.flush().unwrap();
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        // 10,000 bytes written; the current file and two rotated ones remain.
        assert_eq!(names, ["metaclaw.log", "metaclaw.log.1", "metaclaw.log.2"]);
        for name in &names {
            let len = std::fs::metadata(dir.path().join(name)).unwrap().len();
            assert!(len <= 1000 + 100, "{name} has {len} bytes");
        }
    }

    #[test]
    fn an_existing_log_is_appended_to_and_counted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("metaclaw.log");
        std::fs::write(&path, "from an earlier run\n".repeat(60)).unwrap();
        let mut log = rotating_file(&path, 1000, 1);
        log.write_all(b"new line\n").unwrap();
        log.flush().unwrap();
        // The earlier 1,200 bytes already passed the limit: the new line starts a new file.
        let current = std::fs::read_to_string(&path).unwrap();
        let rotated = std::fs::read_to_string(dir.path().join("metaclaw.log.1")).unwrap();
        assert!(rotated.starts_with("from an earlier run"));
        assert!(current.ends_with("new line\n"));
    }
}
