//! Running a claw's restart command, bounded in time and never fatal.

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::recipe::Recipe;
use crate::report::{RestartOutcome, RestartReport};

/// How long a restart command may run.
pub const RESTART_TIMEOUT: Duration = Duration::from_secs(30);

/// Make the claw pick up its new config: run the recipe's restart command
/// (at most the recipe's timeout, [`RESTART_TIMEOUT`] unless it says otherwise), and not
/// at all when what it restarts is not running. Problems become report lines, not errors.
pub fn restart(recipe: &Recipe) -> RestartReport {
    restart_with_timeout(recipe, recipe.restart.timeout)
}

pub fn restart_with_timeout(recipe: &Recipe, timeout: Duration) -> RestartReport {
    let spec = &recipe.restart;
    let command = (!spec.argv.is_empty()).then(|| spec.argv.join(" "));
    let outcome = if spec.hot_reload {
        RestartOutcome::NotNeeded
    } else if spec.argv.is_empty() {
        RestartOutcome::Manual
    } else if crate::process::any_running(&spec.only_if_running) == Some(false) {
        RestartOutcome::NotRunning
    } else {
        match run(&spec.argv, timeout) {
            Ok(()) => RestartOutcome::Restarted,
            Err(reason) => RestartOutcome::Failed { reason },
        }
    };
    RestartReport {
        claw: recipe.name.clone(),
        display_name: recipe.display_name.clone(),
        command,
        hint: spec.hint.clone(),
        outcome,
    }
}

fn run(argv: &[String], timeout: Duration) -> Result<(), String> {
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => "was not found on PATH".to_string(),
            _ => format!("could not be started: {e}"),
        })?;

    // Read stderr on a thread: a daemon the command leaves behind may keep
    // the pipe open, so never wait for it longer than a moment.
    let (tx, rx) = mpsc::channel();
    if let Some(mut err) = child.stderr.take() {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = err.read_to_end(&mut buf);
            let _ = tx.send(String::from_utf8_lossy(&buf).into_owned());
        });
    }

    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "timed out after {} s",
                    timeout.as_secs_f32().round()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(25)),
            Err(e) => return Err(format!("could not be waited for: {e}")),
        }
    };
    if status.success() {
        return Ok(());
    }
    let stderr = rx
        .recv_timeout(Duration::from_millis(300))
        .unwrap_or_default();
    let last = stderr
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| format!(": {l}"))
        .unwrap_or_default();
    Err(match status.code() {
        Some(code) => format!("failed (exit status {code}){last}"),
        None => format!("was killed by a signal{last}"),
    })
}
