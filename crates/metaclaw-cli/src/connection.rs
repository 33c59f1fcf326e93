//! The core a command works on. While the daemon or the tray app runs, the CLI is a client of
//! its API (with the per-install dashboard token), so a change reaches it at once. When nothing
//! runs, the command opens the home directory in this process, holding the instance lock, so
//! two writers never meet. Either way the same typed operations run.

use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use metaclaw_config::Home;
use metaclaw_core::api::{ApiClient, ApiError, ErrorCode, Operation};
use metaclaw_core::instance::{InstanceError, is_running, read_state};
use metaclaw_core::{LocalCore, open_local};

/// How long a command waits for a daemon that is starting, or for another command that holds
/// the home directory for a moment.
const WAIT: Duration = Duration::from_secs(10);
/// Remote calls that do real work (distilling a session calls the evolver) may take minutes.
const CALL_TIMEOUT: Duration = Duration::from_secs(300);

enum Target {
    Remote(ApiClient),
    Local(LocalCore),
}

pub struct Core {
    target: Target,
    runtime: tokio::runtime::Runtime,
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("could not start the async runtime")
}

/// The running instance's API, once its port accepts connections.
fn remote(home: &Home, timeout: Duration) -> Result<Option<ApiClient>> {
    let deadline = Instant::now() + WAIT;
    loop {
        if !is_running(home) {
            return Ok(None);
        }
        // The lock is taken before daemon.json is written and the port opened.
        if let Some(state) = read_state(home) {
            let addr = SocketAddr::from(([127, 0, 0, 1], state.port));
            if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                let token_path = home.dashboard_token_path();
                let token = std::fs::read_to_string(&token_path).with_context(|| {
                    format!(
                        "MetaClaw is running, but {} cannot be read",
                        token_path.display()
                    )
                })?;
                let client = ApiClient::new(format!("http://{addr}"), token.trim(), timeout)?;
                return Ok(Some(client));
            }
        }
        if Instant::now() > deadline {
            bail!(
                "MetaClaw holds {} but does not answer; is it starting or stuck? (`metaclaw status`)",
                home.root().display()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

impl Core {
    /// The running instance, or the home directory opened here when nothing runs.
    pub fn connect(home: &Home) -> Result<Core> {
        let runtime = runtime()?;
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(client) = remote(home, CALL_TIMEOUT)? {
                return Ok(Core {
                    target: Target::Remote(client),
                    runtime,
                });
            }
            let config = metaclaw_config::load(&home.config_path())?.config;
            match open_local(home, config) {
                Ok(local) => {
                    return Ok(Core {
                        target: Target::Local(local),
                        runtime,
                    });
                }
                // Another command holds the home for a moment, or a daemon is starting.
                Err(InstanceError::AlreadyRunning { .. }) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(100));
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// The running instance only (for what needs a live core: a training step, a login).
    pub fn running(home: &Home, start_hint: &str, timeout: Duration) -> Result<Core> {
        match remote(home, timeout)? {
            Some(client) => Ok(Core {
                target: Target::Remote(client),
                runtime: runtime()?,
            }),
            None => Err(ApiError::new(
                ErrorCode::NotRunning,
                format!("MetaClaw is not running; start it with `{start_hint}`"),
            )
            .into()),
        }
    }

    /// Where the running instance listens (remote only).
    pub fn base_url(&self) -> Option<&str> {
        match &self.target {
            Target::Remote(c) => Some(c.base()),
            Target::Local(_) => None,
        }
    }

    pub fn call<O: Operation>(
        &self,
        path: O::Path,
        input: O::Input,
    ) -> Result<O::Output, ApiError> {
        match &self.target {
            Target::Remote(client) => self.runtime.block_on(client.call::<O>(path, input)),
            Target::Local(local) => self.runtime.block_on(local.api().call::<O>(path, input)),
        }
    }
}
