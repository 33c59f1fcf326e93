//! Running the `openclaw` command line.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use wait_timeout::ChildExt;

use crate::error::OpenClawError;

/// How to call `openclaw`: the binary and the environment it runs in (tests isolate
/// `HOME`/`OPENCLAW_STATE_DIR`; users get their own environment).
#[derive(Debug, Clone)]
pub struct OpenClawCli {
    pub program: PathBuf,
    pub env: Vec<(String, String)>,
    /// `config set` takes 8–16 s on a small machine; keep well above that.
    pub timeout: Duration,
}

/// What a finished command printed.
#[derive(Debug, Clone)]
pub struct Output {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

impl OpenClawCli {
    /// Find `openclaw` on `PATH` (or `METACLAW_OPENCLAW_BIN`).
    pub fn locate(path_var: Option<&str>, explicit: Option<&str>) -> Option<OpenClawCli> {
        let program = match explicit.filter(|p| !p.is_empty()) {
            Some(p) => Some(PathBuf::from(p)).filter(|p| p.is_file())?,
            None => which::which_in_global("openclaw", Some(path_var?))
                .ok()?
                .next()?,
        };
        Some(OpenClawCli {
            program,
            env: Vec::new(),
            timeout: Duration::from_secs(90),
        })
    }

    pub fn from_env() -> Option<OpenClawCli> {
        let path = std::env::var("PATH").ok();
        let explicit = std::env::var("METACLAW_OPENCLAW_BIN").ok();
        Self::locate(path.as_deref(), explicit.as_deref())
    }

    pub fn run(&self, args: &[&str]) -> Result<Output, OpenClawError> {
        let shown = args.first().copied().unwrap_or("").to_owned()
            + " "
            + args.get(1).copied().unwrap_or("");
        let mut child = Command::new(&self.program)
            .args(args)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| OpenClawError::Command {
                command: shown.clone(),
                message: e.to_string(),
            })?;
        // Drain the pipes on threads so a chatty command cannot block on a full pipe.
        let mut out = child.stdout.take();
        let mut err = child.stderr.take();
        let out_reader = std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(o) = out.as_mut() {
                let _ = o.read_to_string(&mut s);
            }
            s
        });
        let err_reader = std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(e) = err.as_mut() {
                let _ = e.read_to_string(&mut s);
            }
            s
        });
        let status = match child.wait_timeout(self.timeout) {
            Ok(Some(status)) => status,
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(OpenClawError::Timeout(shown));
            }
            Err(e) => {
                return Err(OpenClawError::Command {
                    command: shown,
                    message: e.to_string(),
                });
            }
        };
        Ok(Output {
            success: status.success(),
            stdout: out_reader.join().unwrap_or_default(),
            stderr: err_reader.join().unwrap_or_default(),
        })
    }

    /// Run and require success; the error carries what OpenClaw said.
    pub fn run_ok(&self, args: &[&str]) -> Result<Output, OpenClawError> {
        let out = self.run(args)?;
        if out.success {
            return Ok(out);
        }
        let said = if out.stderr.trim().is_empty() {
            &out.stdout
        } else {
            &out.stderr
        };
        let message: String = said
            .trim()
            .lines()
            .rev()
            .take(4)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join(" | ");
        Err(OpenClawError::Command {
            command: args.iter().take(3).copied().collect::<Vec<_>>().join(" "),
            message,
        })
    }
}
