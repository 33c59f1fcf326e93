//! OS idle time behind a trait, so tests (and other platforms) can inject it.
//!
//! The real reader ([`OsIdleSource`]) picks by session ([`current_session`]), once:
//! * **Wayland** (also with XWayland's `DISPLAY`): D-Bus on the session bus
//!   ([`DbusIdleSource`]): Mutter's `org.gnome.Mutter.IdleMonitor` or KDE's
//!   `org.freedesktop.ScreenSaver` for the idle time, `org.gnome.ScreenSaver` /
//!   `org.freedesktop.ScreenSaver` `GetActive` for the screen lock. XScreenSaver has no
//!   meaningful idle time there.
//! * **X11**: `user-idle` (XScreenSaver; cargo feature `os-idle`, on by default), plus the screen
//!   lock over D-Bus when a service answers. It only calls into X11 after checking that the
//!   display accepts a connection (see `xprobe`): `user-idle` 0.6 dereferences a NULL
//!   `Display*` (SIGSEGV) when `XOpenDisplay` fails. Built without `os-idle`, X11 uses D-Bus
//!   like Wayland.
//! * **macOS / Windows**: `user-idle` (IOKit, `GetLastInputInfo`).
//! * **Headless** (no `DISPLAY`/`WAYLAND_DISPLAY`): nothing.
//!
//! A locked screen reads [`IdleReading::Locked`]: the user is away whatever the input idle time.
//! When nothing answers the reading is [`IdleReading::Unknown`] and the scheduler falls back to
//! the time since the last proxied request; [`IdleSource::name`] then says
//! "proxy activity (no OS idle source: <why>)".

#[cfg(all(feature = "os-idle", target_os = "linux"))]
use std::sync::{Mutex, PoisonError};

#[cfg(target_os = "linux")]
pub use crate::dbus_idle::{DbusIdleSource, DesktopSample, Wanted};
use crate::types::IdleReading;

/// Something that can say how long the user has been idle.
pub trait IdleSource: Send + Sync + 'static {
    /// Must be cheap (called at most every `poll_seconds` and on demand) and must not block
    /// for long.
    fn read(&self) -> IdleReading;

    /// What is in use, for logs and status (e.g. "mutter", "x11", "proxy activity (no OS idle
    /// source: …)"). Must be cheap: it describes the last read and asks nothing.
    fn name(&self) -> String {
        "idle".to_owned()
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

    fn name(&self) -> String {
        match self.read() {
            IdleReading::Unknown { reason } => fallback_name(&reason),
            _ => "none".to_owned(),
        }
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

/// The name of a source that falls back to proxy activity, for `reason`.
pub fn fallback_name(reason: &str) -> String {
    format!("proxy activity (no OS idle source: {reason})")
}

/// The real OS idle reader. See the module docs for what it uses where.
#[derive(Debug)]
pub struct OsIdleSource {
    os: Os,
}

#[derive(Debug)]
enum Os {
    /// Idle time and lock over D-Bus (Wayland; X11 when built without `os-idle`).
    #[cfg(target_os = "linux")]
    Desktop(DbusIdleSource),
    /// XScreenSaver idle time, plus the screen lock over D-Bus when a service answers.
    #[cfg(all(feature = "os-idle", target_os = "linux"))]
    X11 {
        display: String,
        lock: DbusIdleSource,
        /// Why the last read found no idle time (for `name`).
        problem: Mutex<Option<String>>,
    },
    /// `user-idle` on macOS and Windows.
    #[cfg(all(feature = "os-idle", not(target_os = "linux")))]
    Native,
    /// Nothing to read; why.
    #[cfg_attr(all(feature = "os-idle", not(target_os = "linux")), allow(dead_code))]
    Nothing(String),
}

impl Default for OsIdleSource {
    fn default() -> Self {
        Self::new()
    }
}

impl OsIdleSource {
    /// Picks the reader for this process's session (see [`current_session`]).
    pub fn new() -> Self {
        Self::for_session(current_session())
    }

    /// Picks the reader for `session` (D-Bus services on the user's session bus).
    #[cfg(target_os = "linux")]
    pub fn for_session(session: SessionKind) -> Self {
        let os = match session {
            SessionKind::Headless => Os::Nothing("no graphical session (DISPLAY not set)".into()),
            SessionKind::Wayland => Os::Desktop(DbusIdleSource::session(Wanted::IdleAndLock)),
            #[cfg(feature = "os-idle")]
            SessionKind::X11(display) => Os::X11 {
                display,
                lock: DbusIdleSource::session(Wanted::LockOnly),
                problem: Mutex::new(None),
            },
            #[cfg(not(feature = "os-idle"))]
            SessionKind::X11(_) => Os::Desktop(DbusIdleSource::session(Wanted::IdleAndLock)),
        };
        Self { os }
    }

    /// Picks the reader for `session` (`user-idle` when built with `os-idle`).
    #[cfg(not(target_os = "linux"))]
    pub fn for_session(_session: SessionKind) -> Self {
        #[cfg(feature = "os-idle")]
        let os = Os::Native;
        #[cfg(not(feature = "os-idle"))]
        let os = Os::Nothing("built without the os-idle feature".into());
        Self { os }
    }
}

impl IdleSource for OsIdleSource {
    fn read(&self) -> IdleReading {
        match &self.os {
            #[cfg(target_os = "linux")]
            Os::Desktop(d) => d.read(),
            #[cfg(all(feature = "os-idle", target_os = "linux"))]
            Os::X11 {
                display,
                lock,
                problem,
            } => {
                let reading = x11_read(display, lock);
                *problem.lock().unwrap_or_else(PoisonError::into_inner) = match &reading {
                    IdleReading::Unknown { reason } => Some(reason.clone()),
                    _ => None,
                };
                reading
            }
            #[cfg(all(feature = "os-idle", not(target_os = "linux")))]
            Os::Native => user_idle_read(),
            Os::Nothing(reason) => IdleReading::Unknown {
                reason: reason.clone(),
            },
        }
    }

    fn may_block(&self) -> bool {
        !matches!(self.os, Os::Nothing(_))
    }

    fn name(&self) -> String {
        match &self.os {
            #[cfg(target_os = "linux")]
            Os::Desktop(d) => d.name(),
            #[cfg(all(feature = "os-idle", target_os = "linux"))]
            Os::X11 { lock, problem, .. } => {
                match problem
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .as_deref()
                {
                    Some(why) => fallback_name(why),
                    None => match lock.in_use() {
                        Ok(l) => format!("x11 + {l}"),
                        Err(_) => "x11".to_owned(),
                    },
                }
            }
            #[cfg(all(feature = "os-idle", not(target_os = "linux")))]
            Os::Native => std::env::consts::OS.to_owned(),
            Os::Nothing(reason) => fallback_name(reason),
        }
    }
}

/// XScreenSaver idle time; a locked screen (over D-Bus) wins.
#[cfg(all(feature = "os-idle", target_os = "linux"))]
fn x11_read(display: &str, lock: &DbusIdleSource) -> IdleReading {
    if let Err(why) = crate::xprobe::display_usable(display) {
        return IdleReading::Unknown {
            reason: format!("X display {display} is not usable: {why}"),
        };
    }
    let reading = user_idle_read();
    // No lock service is normal on bare X11 window managers: then only the idle time counts.
    let locked = lock.sample().is_ok_and(|s| s.locked);
    match reading {
        IdleReading::Known { idle_secs } if locked => IdleReading::Locked {
            idle_secs: Some(idle_secs),
        },
        IdleReading::Unknown { .. } if locked => IdleReading::Locked { idle_secs: None },
        other => other,
    }
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

    #[test]
    fn headless_falls_back_to_proxy_activity() {
        let src = OsIdleSource::for_session(SessionKind::Headless);
        assert!(!src.may_block());
        assert!(matches!(src.read(), IdleReading::Unknown { .. }));
        assert_eq!(
            src.name(),
            "proxy activity (no OS idle source: no graphical session (DISPLAY not set))"
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
