//! OS idle time behind a trait, so tests (and other platforms) can inject it.
//!
//! The real reader ([`OsIdleSource`]) uses `user-idle` (cargo feature `os-idle`, on by default):
//! X11 (XScreenSaver) on Linux, IOKit on macOS, `GetLastInputInfo` on Windows. On Linux it only
//! calls into X11 after checking that the X display accepts a connection (see `xprobe`):
//! `user-idle` 0.6 dereferences a NULL `Display*` (SIGSEGV) when `XOpenDisplay` fails. Wayland
//! sessions (also under XWayland) have no meaningful XScreenSaver idle time. In those cases the reading is
//! [`IdleReading::Unknown`] and the scheduler falls back to the time since the last proxied
//! request.

use crate::types::IdleReading;

/// Something that can say how long the user has been idle.
pub trait IdleSource: Send + Sync + 'static {
    /// Must be cheap (called at most every `poll_seconds` and on demand) and must not block
    /// for long.
    fn read(&self) -> IdleReading;

    /// Short description for logs and status (e.g. "x11", "fake").
    fn name(&self) -> &str {
        "idle"
    }

    /// True when `read` may block for a noticeable time (it then runs on tokio's blocking
    /// pool from the async loops).
    fn may_block(&self) -> bool {
        false
    }
}

/// An idle source that never knows (forces the proxy-activity fallback).
#[derive(Debug, Clone, Default)]
pub struct NoIdleSource {
    pub reason: String,
}

impl IdleSource for NoIdleSource {
    fn read(&self) -> IdleReading {
        IdleReading::Unknown {
            reason: if self.reason.is_empty() {
                "no OS idle source".to_owned()
            } else {
                self.reason.clone()
            },
        }
    }

    fn name(&self) -> &str {
        "none"
    }
}

/// The kind of graphical session, from the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionKind {
    /// X11 display name (`DISPLAY`).
    X11(String),
    Wayland,
    /// No graphical session (SSH, service, CI).
    Headless,
}

/// Classify the session from `DISPLAY`, `WAYLAND_DISPLAY` and `XDG_SESSION_TYPE`.
/// Wayland wins over a `DISPLAY` that only points at XWayland.
pub fn classify_session(
    display: Option<&str>,
    wayland_display: Option<&str>,
    xdg_session_type: Option<&str>,
) -> SessionKind {
    fn set(v: Option<&str>) -> Option<&str> {
        v.map(str::trim).filter(|s| !s.is_empty())
    }
    if set(wayland_display).is_some()
        || set(xdg_session_type).is_some_and(|t| t.eq_ignore_ascii_case("wayland"))
    {
        return SessionKind::Wayland;
    }
    match set(display) {
        Some(d) => SessionKind::X11(d.to_owned()),
        None => SessionKind::Headless,
    }
}

/// The session of this process.
pub fn current_session() -> SessionKind {
    let var = |k: &str| std::env::var(k).ok();
    classify_session(
        var("DISPLAY").as_deref(),
        var("WAYLAND_DISPLAY").as_deref(),
        var("XDG_SESSION_TYPE").as_deref(),
    )
}

/// The real OS idle reader. See the module docs for when it reports "unknown".
#[derive(Debug, Clone, Default)]
pub struct OsIdleSource;

impl OsIdleSource {
    pub fn new() -> Self {
        Self
    }
}

impl IdleSource for OsIdleSource {
    fn read(&self) -> IdleReading {
        os_read()
    }

    fn may_block(&self) -> bool {
        cfg!(feature = "os-idle")
    }

    fn name(&self) -> &str {
        if cfg!(feature = "os-idle") {
            "os"
        } else {
            "none (built without os-idle)"
        }
    }
}

#[cfg(not(feature = "os-idle"))]
fn os_read() -> IdleReading {
    IdleReading::Unknown {
        reason: "built without the os-idle feature".to_owned(),
    }
}

#[cfg(all(feature = "os-idle", target_os = "linux"))]
fn os_read() -> IdleReading {
    match current_session() {
        SessionKind::Wayland => IdleReading::Unknown {
            reason: "Wayland session (no XScreenSaver idle time)".to_owned(),
        },
        SessionKind::Headless => IdleReading::Unknown {
            reason: "no graphical session (DISPLAY not set)".to_owned(),
        },
        SessionKind::X11(display) => match crate::xprobe::display_usable(&display) {
            Ok(()) => user_idle_read(),
            Err(why) => IdleReading::Unknown {
                reason: format!("X display {display} is not usable: {why}"),
            },
        },
    }
}

#[cfg(all(feature = "os-idle", not(target_os = "linux")))]
fn os_read() -> IdleReading {
    user_idle_read()
}

#[cfg(feature = "os-idle")]
fn user_idle_read() -> IdleReading {
    match user_idle::UserIdle::get_time() {
        Ok(t) => IdleReading::Known {
            idle_secs: t.as_seconds(),
        },
        Err(e) => IdleReading::Unknown {
            reason: format!("OS idle query failed: {e:?}"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_classification() {
        assert_eq!(
            classify_session(Some(":0"), None, None),
            SessionKind::X11(":0".into())
        );
        assert_eq!(
            classify_session(Some(":0"), Some("wayland-0"), None),
            SessionKind::Wayland
        );
        assert_eq!(
            classify_session(Some(":1"), None, Some("wayland")),
            SessionKind::Wayland
        );
        assert_eq!(
            classify_session(None, None, Some("tty")),
            SessionKind::Headless
        );
        assert_eq!(
            classify_session(Some("  "), Some(""), None),
            SessionKind::Headless
        );
    }

    /// Safe to run anywhere: without a reachable display it must report "unknown", not crash.
    #[test]
    fn os_source_never_crashes_here() {
        let r = OsIdleSource::new().read();
        if std::env::var_os("DISPLAY").is_none() {
            assert!(matches!(r, IdleReading::Unknown { .. }), "{r:?}");
        }
    }
}
