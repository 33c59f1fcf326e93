//! Running the core: in the foreground, detached, and stopping it again.
//!
//! One daemon per home directory: the running daemon holds an exclusive lock on
//! `daemon.lock` and describes itself in `daemon.json`.

use std::fs::OpenOptions;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use metaclaw_config::Home;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use metaclaw_core::api::NoInput;
use metaclaw_core::api::ops::login::NewLoginCode;
use metaclaw_core::api::ops::wiring::{Unwire, Wire};

use crate::cli::StartArgs;
use crate::connection::Core;
use crate::output::{say, warn};

// The single-instance rule is shared with the tray app (metaclaw-core's `instance`).
use metaclaw_core::LogTarget;
use metaclaw_core::instance::{InstanceKind, InstanceLock, InstanceState};
pub use metaclaw_core::instance::{is_running, read_state};

fn load_config(home: &Home, args: &StartArgs) -> Result<metaclaw_config::Config> {
    let loaded = metaclaw_config::load(&home.config_path())?;
    for w in &loaded.warnings {
        warn(&w.to_string());
    }
    let mut config = loaded.config;
    if let Some(mode) = args.mode {
        config.mode = serde_json::from_value(serde_json::json!(mode.as_str()))?;
    }
    if let Some(port) = args.port {
        config.proxy.port = port;
    }
    Ok(config)
}

pub fn run_foreground(home: &Home, args: &StartArgs) -> Result<()> {
    let _log = metaclaw_core::init_tracing(if args.log_to_file {
        LogTarget::File(home.log_path())
    } else {
        LogTarget::Stderr
    });
    home.ensure()?;
    let config = load_config(home, args)?;
    let lock = InstanceLock::acquire(home)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("could not start the async runtime")?;
    runtime.block_on(async {
        let mode = serde_json::to_value(config.mode)?
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let host = config.proxy.host.clone();
        let core =
            metaclaw_core::start(metaclaw_core::CoreOptions::new(home.clone(), config)).await?;
        let state = InstanceState {
            pid: std::process::id(),
            host,
            port: core.addr().port(),
            mode,
            started_at: core.started_at(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            kind: InstanceKind::Daemon,
        };
        lock.write_state(&state)?;
        if !args.no_wire {
            // Through the core's own operation (in process): it gives each agent its own
            // proxy key first, and runs the agents' CLIs off the async workers.
            let api = core.api().clone();
            tokio::spawn(async move {
                match api.call::<Wire>((), NoInput {}).await {
                    Ok(report) => {
                        for line in report.lines {
                            tracing::info!("wiring: {line}");
                        }
                    }
                    Err(e) => tracing::warn!("wiring failed: {e}"),
                }
            });
        }
        let token = core.shutdown_token();
        tokio::spawn(async move {
            metaclaw_core::shutdown_signal().await;
            tracing::info!("shutting down");
            token.cancel();
        });
        let result = core.wait().await;
        lock.clear_state();
        result.map_err(anyhow::Error::from)
    })
}

pub fn start_detached(home: &Home, args: &StartArgs) -> Result<()> {
    home.ensure()?;
    if is_running(home) {
        let s = read_state(home);
        let at = s
            .map(|s| format!(" (pid {}, http://{}:{}/v1)", s.pid, s.host, s.port))
            .unwrap_or_default();
        say(&format!("MetaClaw is already running{at}."));
        if !args.no_wire {
            wire(home)?;
        }
        return Ok(());
    }
    // Fail fast on a broken config instead of in the detached child's log.
    let config = load_config(home, args)?;
    let log_path = home.log_path();
    let log = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .with_context(|| format!("could not open the log file {}", log_path.display()))?;
    let log_start = log.metadata().map(|m| m.len()).unwrap_or(0);
    let exe = std::env::current_exe().context("cannot find the metaclaw executable")?;
    let mut cmd = Command::new(exe);
    // The parent wires the agent once the daemon answers, so the messages reach this terminal.
    // Its stdout and stderr go to the log file too, for what is printed before logging starts.
    cmd.args(["start", "--foreground", "--no-wire", "--log-to-file"]);
    if let Some(mode) = args.mode {
        cmd.args(["--mode", mode.as_str()]);
    }
    if let Some(port) = args.port {
        cmd.args(["--port", &port.to_string()]);
    }
    {
        use std::os::unix::process::CommandExt;
        // Its own process group: the terminal's Ctrl-C does not reach the daemon.
        cmd.process_group(0);
    }
    let mut child = cmd
        .env("METACLAW_HOME", home.root())
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .spawn()
        .context("could not start the daemon process")?;

    let url = format!("http://127.0.0.1:{}/healthz", config.proxy.port);
    let deadline = Instant::now() + Duration::from_secs(15);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let client = metaclaw_llm::http_client(&metaclaw_llm::HttpOptions::loopback(
        Duration::from_millis(500),
    ))?;
    loop {
        if let Some(status) = child.try_wait()? {
            bail!(
                "the daemon exited during start-up ({status}). Log:\n{}",
                log_tail(&log_path, log_start)
            );
        }
        let healthy = runtime.block_on(async {
            let resp = client.get(&url).send().await.ok()?;
            let v: serde_json::Value = resp.json().await.ok()?;
            Some(v.get("pid").and_then(serde_json::Value::as_u64) == Some(u64::from(child.id())))
        });
        if healthy == Some(true) {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            bail!(
                "the daemon did not answer {url} within 15 s and was stopped. Log:\n{}",
                log_tail(&log_path, log_start)
            );
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    let mode = args.mode.map(|m| m.as_str().to_owned()).unwrap_or_else(|| {
        serde_json::to_value(config.mode)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default()
    });
    say(&format!(
        "MetaClaw started (pid {}): http://127.0.0.1:{}/v1, mode {mode}. Logs: {}",
        child.id(),
        config.proxy.port,
        log_path.display()
    ));
    if let Some(w) = metaclaw_core::onboarding::own_endpoint_warning(&config) {
        crate::output::warn(&w);
    }
    if !args.no_wire {
        wire(home)?;
    }
    Ok(())
}

/// Point the agent at the proxy, through the running core (its wiring state lives in the home).
fn wire(home: &Home) -> Result<()> {
    let core = Core::running(home, "metaclaw start", Duration::from_secs(120))?;
    show_wiring(core.call::<Wire>((), NoInput {})?);
    Ok(())
}

fn show_wiring(report: metaclaw_core::wiring::WiringReport) {
    for line in &report.lines {
        say(line);
    }
    if let Some(manual) = &report.manual {
        say(manual);
    }
}

/// Restore the agent's configuration (`stop --unwire`, `uninstall`).
pub fn unwire(home: &Home) -> Result<()> {
    let core = Core::connect(home)?;
    show_wiring(core.call::<Unwire>((), NoInput {})?);
    Ok(())
}

pub fn uninstall(home: &Home, yes: bool, purge: bool) -> Result<()> {
    use std::io::IsTerminal;
    let what = if purge {
        format!(
            "stop MetaClaw, restore your agent's config and DELETE {} (config, database, logs and skills)",
            home.root().display()
        )
    } else {
        format!(
            "stop MetaClaw and restore your agent's config (your data in {} is kept)",
            home.root().display()
        )
    };
    if !yes {
        if !std::io::stdin().is_terminal() {
            bail!("this would {what}; run again with --yes to confirm");
        }
        let ok = dialoguer::Confirm::new()
            .with_prompt(format!("This will {what}. Continue?"))
            .default(false)
            .interact()?;
        if !ok {
            say("Nothing done.");
            return Ok(());
        }
    }
    stop(home)?;
    if home.config_path().exists() {
        unwire(home)?;
    }
    if purge {
        match std::fs::remove_dir_all(home.root()) {
            Ok(()) => say(&format!("Deleted {}.", home.root().display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                say(&format!("{} was already gone.", home.root().display()))
            }
            Err(e) => bail!("could not delete {}: {e}", home.root().display()),
        }
    } else {
        say(&format!(
            "Kept {} (config, database and skills); `metaclaw uninstall --purge` deletes it.",
            home.root().display()
        ));
    }
    if let Ok(exe) = std::env::current_exe() {
        say(&format!(
            "The program itself is {}; remove it with `cargo uninstall metaclaw-cli` or delete that file.",
            exe.display()
        ));
    }
    Ok(())
}

fn log_tail(path: &Path, from: u64) -> String {
    let text = std::fs::read(path).unwrap_or_default();
    let from = usize::try_from(from).unwrap_or(0).min(text.len());
    let tail = String::from_utf8_lossy(&text[from..]).into_owned();
    let lines: Vec<&str> = tail.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

pub fn stop(home: &Home) -> Result<()> {
    let state = read_state(home);
    if !is_running(home) {
        if state.is_some() {
            let _ = std::fs::remove_file(home.state_path());
        }
        say("MetaClaw is not running.");
        return Ok(());
    }
    let Some(state) = state else {
        bail!(
            "a MetaClaw process holds {} but wrote no {}; stop it by hand",
            home.lock_path().display(),
            home.state_path().display()
        );
    };
    let pid = Pid::from_raw(i32::try_from(state.pid).context("bad pid in daemon.json")?);
    kill(pid, Signal::SIGTERM).with_context(|| format!("could not signal pid {}", state.pid))?;
    let deadline = Instant::now() + Duration::from_secs(15);
    while is_running(home) {
        if Instant::now() > deadline {
            let _ = kill(pid, Signal::SIGKILL);
            std::thread::sleep(Duration::from_millis(200));
            let _ = std::fs::remove_file(home.state_path());
            say(&format!(
                "MetaClaw (pid {}) did not stop within 15 s and was killed.",
                state.pid
            ));
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    say(&format!("MetaClaw stopped (pid {}).", state.pid));
    Ok(())
}

/// A one-time login link for the running core's dashboard.
pub fn dashboard(home: &Home, print_only: bool) -> Result<()> {
    let core = Core::running(home, "metaclaw start", Duration::from_secs(10))?;
    let code = core.call::<NewLoginCode>((), NoInput {})?;
    let url = format!(
        "{}/login?code={}",
        core.base_url().unwrap_or_default(),
        code.code
    );
    say(&url);
    if !print_only {
        let opener = if cfg!(target_os = "macos") {
            "open"
        } else {
            "xdg-open"
        };
        if Command::new(opener)
            .arg(&url)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .is_err()
        {
            say("Open that link in your browser (it works once, for 5 minutes).");
        }
    }
    Ok(())
}
