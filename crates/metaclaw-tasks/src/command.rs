//! Commands in an episode's scratch folder: the `run_command` tool and `check` verifiers.
//!
//! Each runs under a time limit (the whole process group is killed when it passes) with its
//! output capped. With bubblewrap (`bwrap`) installed, the command sees the filesystem
//! read-only except its scratch folder, has no network and no home folders; the agent's
//! `run_command` tool refuses to run without it, because a cwd alone confines nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

use crate::error::TaskError;

#[derive(Debug, Clone)]
pub struct CommandLimits {
    pub timeout: Duration,
    /// Bytes of stdout + stderr kept; the rest is read and dropped.
    pub output_cap: usize,
}

impl Default for CommandLimits {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(30),
            output_cap: 16 * 1024,
        }
    }
}

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommandOutput {
    /// `None` when killed by a signal (the time limit included).
    pub exit_code: Option<i32>,
    /// stdout then stderr, cut at the cap.
    pub output: String,
    pub truncated: bool,
    pub timed_out: bool,
    pub sandboxed: bool,
}

/// The `PATH` a confined command starts with (the caller's `env` may replace it).
pub const CONFINED_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Where bubblewrap is, if installed (looked up once).
pub fn sandbox() -> Option<&'static Path> {
    static BWRAP: OnceLock<Option<PathBuf>> = OnceLock::new();
    BWRAP
        .get_or_init(|| which::which_global("bwrap").ok())
        .as_deref()
}

/// Runs `sh -c cmd` in `dir` with `stdin`, confined as the module says (sandboxed when
/// bubblewrap is available).
pub async fn run_confined(
    cmd: &str,
    dir: &Path,
    stdin: &[u8],
    limits: &CommandLimits,
    env: &BTreeMap<String, String>,
) -> Result<CommandOutput, TaskError> {
    let dir = dir.canonicalize().map_err(TaskError::Scratch)?;
    let mut command = match sandbox() {
        Some(bwrap) => {
            let mut c = tokio::process::Command::new(bwrap);
            c.args(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]);
            // Hide the places personal files live, then expose only the scratch folder.
            for hidden in ["/tmp", "/home", "/root", "/run/user", "/var/tmp"] {
                if Path::new(hidden).is_dir() {
                    c.args(["--tmpfs", hidden]);
                }
            }
            c.arg("--bind").arg(&dir).arg(&dir);
            c.arg("--chdir").arg(&dir);
            c.args([
                "--unshare-net",
                "--unshare-pid",
                "--die-with-parent",
                "--new-session",
                "sh",
                "-c",
            ]);
            c.arg(cmd);
            c
        }
        None => {
            let mut c = tokio::process::Command::new("sh");
            c.arg("-c").arg(cmd);
            c
        }
    };
    command
        .current_dir(&dir)
        .env_clear()
        .env("PATH", CONFINED_PATH)
        .env("HOME", &dir)
        .env("TMPDIR", &dir)
        .env("LANG", "C.UTF-8")
        .envs(env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = command.spawn().map_err(TaskError::Spawn)?;
    let pid = child.id();
    if let Some(mut input) = child.stdin.take() {
        // A command that does not read its stdin closes the pipe: not an error.
        let _ = input.write_all(stdin).await;
    }
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let cap = limits.output_cap;
    let run = async {
        let (out, err) = tokio::join!(read_capped(stdout, cap), read_capped(stderr, cap));
        let status = child.wait().await;
        (out, err, status)
    };
    match tokio::time::timeout(limits.timeout, run).await {
        Ok((out, err, status)) => {
            let status = status.map_err(TaskError::Spawn)?;
            let (mut bytes, mut truncated) = out;
            let (err_bytes, err_truncated) = err;
            bytes.extend_from_slice(&err_bytes);
            truncated |= err_truncated;
            if bytes.len() > cap {
                bytes.truncate(cap);
                truncated = true;
            }
            Ok(CommandOutput {
                exit_code: status.code(),
                output: String::from_utf8_lossy(&bytes).into_owned(),
                truncated,
                timed_out: false,
                sandboxed: sandbox().is_some(),
            })
        }
        Err(_) => {
            if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
                // The group: a shell's children must not outlive the limit.
                let _ = nix::sys::signal::killpg(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            Ok(CommandOutput {
                exit_code: None,
                output: String::new(),
                truncated: false,
                timed_out: true,
                sandboxed: sandbox().is_some(),
            })
        }
    }
}

async fn read_capped(pipe: Option<impl AsyncRead + Unpin>, cap: usize) -> (Vec<u8>, bool) {
    let Some(mut pipe) = pipe else {
        return (Vec::new(), false);
    };
    let mut kept = Vec::new();
    let mut truncated = false;
    let mut buf = [0u8; 8192];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = cap.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
                truncated |= n > room;
            }
        }
    }
    (kept, truncated)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(ms: u64, cap: usize) -> CommandLimits {
        CommandLimits {
            timeout: Duration::from_millis(ms),
            output_cap: cap,
        }
    }

    #[tokio::test]
    async fn output_is_capped_and_time_is_limited() {
        let dir = tempfile::tempdir().unwrap();
        let out = run_confined(
            "yes | head -c 100000",
            dir.path(),
            b"",
            &limits(10_000, 100),
            &BTreeMap::new(),
        )
        .await
        .unwrap();
        assert_eq!(out.output.len(), 100);
        assert!(out.truncated);
        assert_eq!(out.exit_code, Some(0));
        let started = std::time::Instant::now();
        let out = run_confined(
            "sleep 20 & sleep 30",
            dir.path(),
            b"",
            &limits(300, 100),
            &BTreeMap::new(),
        )
        .await
        .unwrap();
        assert!(out.timed_out);
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[tokio::test]
    async fn commands_run_in_the_scratch_folder_and_cannot_write_outside_it() {
        let root = tempfile::tempdir().unwrap();
        let scratch = root.path().join("scratch");
        std::fs::create_dir(&scratch).unwrap();
        let secret = root.path().join("secret.txt");
        std::fs::write(&secret, "s3cret").unwrap();
        let out = run_confined(
            &format!(
                "pwd; echo hi > here.txt; echo x > {0}/escaped.txt; cat {1}; cat ../secret.txt",
                root.path().display(),
                secret.display()
            ),
            &scratch,
            b"",
            &limits(10_000, 4096),
            &BTreeMap::new(),
        )
        .await
        .unwrap();
        assert!(
            out.output
                .starts_with(&scratch.canonicalize().unwrap().display().to_string())
        );
        assert!(scratch.join("here.txt").exists());
        if out.sandboxed {
            assert!(!root.path().join("escaped.txt").exists(), "{out:?}");
            assert!(!out.output.contains("s3cret"), "{out:?}");
        }
    }
}
