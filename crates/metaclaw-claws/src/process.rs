//! Whether a process is running, from its command line (for restart commands that hang
//! when there is nothing to restart).

use std::path::Path;

/// `Some(true)` when a process whose command line (arguments joined by spaces) contains one
/// of `fragments` is running, `Some(false)` when none is, `None` when this system cannot
/// tell (no `/proc`) or no fragments are given.
pub(crate) fn any_running(fragments: &[String]) -> Option<bool> {
    if fragments.is_empty() {
        return None;
    }
    any_running_in(Path::new("/proc"), fragments)
}

fn any_running_in(proc_dir: &Path, fragments: &[String]) -> Option<bool> {
    let entries = std::fs::read_dir(proc_dir).ok()?;
    let me = std::process::id().to_string();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str() else { continue };
        if !pid.bytes().all(|b| b.is_ascii_digit()) || pid == me {
            continue;
        }
        // A process may exit between listing and reading: skip it.
        let Ok(raw) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let line = String::from_utf8_lossy(&raw).replace('\0', " ");
        if fragments.iter().any(|f| line.contains(f.as_str())) {
            return Some(true);
        }
    }
    Some(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_processes_by_command_line_fragment() {
        let dir = tempfile::tempdir().unwrap();
        let add = |pid: &str, cmdline: &[u8]| {
            std::fs::create_dir(dir.path().join(pid)).unwrap();
            std::fs::write(dir.path().join(pid).join("cmdline"), cmdline).unwrap();
        };
        add(
            "17",
            b"/usr/bin/python3\0-m\0hermes_cli.main\0gateway\0run\0",
        );
        add("18", b"bash\0");
        std::fs::create_dir(dir.path().join("self")).unwrap();
        let f = |s: &str| vec![s.to_owned()];
        assert_eq!(
            any_running_in(dir.path(), &f("hermes_cli.main gateway")),
            Some(true)
        );
        assert_eq!(
            any_running_in(dir.path(), &f("hermes gateway run")),
            Some(false)
        );
        assert_eq!(any_running_in(&dir.path().join("none"), &f("x")), None);
        assert_eq!(any_running(&[]), None);
    }
}
