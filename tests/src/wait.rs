//! Waiting in tests: for an outcome (polled until a deadline, never a fixed sleep), and for a
//! free port.

use std::time::{Duration, Instant};

/// How long a test waits for an outcome before it fails.
pub const DEADLINE: Duration = Duration::from_secs(10);

/// Polls `f` every 25 ms until it returns `Some`, and returns that; panics naming `what` after
/// [`DEADLINE`].
pub async fn wait_for<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + DEADLINE;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// [`wait_for`] for code without a runtime.
pub fn wait_for_blocking<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + DEADLINE;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// A port on 127.0.0.1 that was free a moment ago.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port on 127.0.0.1")
}
