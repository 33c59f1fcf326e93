//! Input idle time and screen lock from the desktop over D-Bus (Linux; works on Wayland, where
//! XScreenSaver has nothing to say).
//!
//! Services asked, on the session bus:
//! * idle time: `org.gnome.Mutter.IdleMonitor` (`/org/gnome/Mutter/IdleMonitor/Core`,
//!   `GetIdletime` in ms), else `org.freedesktop.ScreenSaver` (`/org/freedesktop/ScreenSaver` or
//!   `/ScreenSaver`, `GetSessionIdleTime` in s; KDE implements it);
//! * screen lock: `org.gnome.ScreenSaver` `GetActive`, else `org.freedesktop.ScreenSaver`
//!   `GetActive`; else, on the system bus, logind's `LockedHint` for this session
//!   (`org.freedesktop.login1`, `/org/freedesktop/login1/session/auto`), which lockers of
//!   desktops without either screensaver service set (Xfce's light-locker, Cinnamon, LXQt…).
//!
//! The first service that answers is remembered; a failing call forgets it and the next probe
//! happens [`DbusIdleSource::reprobe_after`] later (not on every read). Every call has a 500 ms
//! timeout, so a hung desktop service cannot stall the scheduler for long. A missing or
//! vanished service is logged once per change, not per read.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use zbus::blocking::Connection;
use zbus::blocking::connection::Builder;

use crate::idle::{IdleSource, fallback_name};
use crate::types::IdleReading;

/// Longest a single D-Bus call may take.
pub const CALL_TIMEOUT: Duration = Duration::from_millis(500);

/// Default pause between probes while no service answers.
pub const REPROBE_AFTER: Duration = Duration::from_secs(60);

const NO_IDLE_SERVICE: &str = "no idle-time service on the session bus";
const FDO_SCREENSAVER: &str = "org.freedesktop.ScreenSaver";
const FDO_PATHS: [&str; 2] = ["/org/freedesktop/ScreenSaver", "/ScreenSaver"];
const LOGIND: &str = "org.freedesktop.login1";
/// logind resolves `auto` to the caller's own session.
const LOGIND_SESSION: &str = "/org/freedesktop/login1/session/auto";

/// A service that reports input idle time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IdleService {
    Mutter,
    FreedesktopScreenSaver(&'static str),
}

impl IdleService {
    fn candidates() -> impl Iterator<Item = Self> {
        std::iter::once(Self::Mutter).chain(FDO_PATHS.into_iter().map(Self::FreedesktopScreenSaver))
    }

    fn name(self) -> &'static str {
        match self {
            Self::Mutter => "mutter",
            Self::FreedesktopScreenSaver(_) => "freedesktop-screensaver",
        }
    }

    fn read(self, conn: &Connection) -> zbus::Result<Duration> {
        match self {
            Self::Mutter => {
                let ms: u64 = call(
                    conn,
                    "org.gnome.Mutter.IdleMonitor",
                    "/org/gnome/Mutter/IdleMonitor/Core",
                    "org.gnome.Mutter.IdleMonitor",
                    "GetIdletime",
                )?;
                Ok(Duration::from_millis(ms))
            }
            Self::FreedesktopScreenSaver(path) => {
                let secs: u32 = call(
                    conn,
                    FDO_SCREENSAVER,
                    path,
                    FDO_SCREENSAVER,
                    "GetSessionIdleTime",
                )?;
                Ok(Duration::from_secs(secs.into()))
            }
        }
    }
}

/// A service that says whether the screen is locked (screensaver active).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LockService {
    GnomeScreenSaver,
    FreedesktopScreenSaver(&'static str),
    /// logind's `LockedHint`, asked on the system bus.
    Logind,
}

impl LockService {
    /// The services on the session bus, in the order they are asked (logind comes last, on
    /// the other bus).
    fn session_candidates() -> impl Iterator<Item = Self> {
        std::iter::once(Self::GnomeScreenSaver)
            .chain(FDO_PATHS.into_iter().map(Self::FreedesktopScreenSaver))
    }

    fn name(self) -> &'static str {
        match self {
            Self::GnomeScreenSaver => "gnome-screensaver",
            Self::FreedesktopScreenSaver(_) => "freedesktop-screensaver",
            Self::Logind => "logind",
        }
    }

    /// `conns` has the session bus and, when one was reached, the system bus.
    fn read(self, conns: &Conns) -> zbus::Result<bool> {
        match self {
            Self::GnomeScreenSaver => call(
                &conns.session,
                "org.gnome.ScreenSaver",
                "/org/gnome/ScreenSaver",
                "org.gnome.ScreenSaver",
                "GetActive",
            ),
            Self::FreedesktopScreenSaver(path) => call(
                &conns.session,
                FDO_SCREENSAVER,
                path,
                FDO_SCREENSAVER,
                "GetActive",
            ),
            Self::Logind => {
                let system = conns.system.as_ref().ok_or_else(|| {
                    zbus::Error::Failure("no system bus to ask logind on".to_owned())
                })?;
                let value: zbus::zvariant::OwnedValue = system
                    .call_method(
                        Some(LOGIND),
                        LOGIND_SESSION,
                        Some("org.freedesktop.DBus.Properties"),
                        "Get",
                        &("org.freedesktop.login1.Session", "LockedHint"),
                    )?
                    .body()
                    .deserialize()?;
                Ok(bool::try_from(value)?)
            }
        }
    }
}

/// The connections a probe made.
struct Conns {
    session: Connection,
    system: Option<Connection>,
}

fn call<T>(
    conn: &Connection,
    dest: &'static str,
    path: &'static str,
    iface: &'static str,
    method: &'static str,
) -> zbus::Result<T>
where
    T: for<'d> serde::Deserialize<'d> + zbus::zvariant::Type,
{
    conn.call_method(Some(dest), path, Some(iface), method, &())?
        .body()
        .deserialize()
}

/// One reading from the desktop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DesktopSample {
    /// Input idle time, when an idle service answers (and idle time was asked for).
    pub idle: Option<Duration>,
    /// The screen is locked (false when no lock service answers).
    pub locked: bool,
}

/// What to ask the desktop for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wanted {
    /// Idle time and screen lock (Wayland).
    IdleAndLock,
    /// Only the screen lock (X11, where XScreenSaver gives the idle time).
    LockOnly,
}

#[derive(Debug, Clone)]
enum Bus {
    Session,
    System,
    Address(String),
    /// Not asked (tests on a private session bus leave the machine's system bus alone).
    None,
}

impl Bus {
    fn connect(&self) -> Option<zbus::Result<Connection>> {
        let builder = match self {
            Self::Session => Builder::session(),
            Self::System => Builder::system(),
            Self::Address(a) => Builder::address(a.as_str()),
            Self::None => return None,
        };
        Some(builder.and_then(|b| b.method_timeout(CALL_TIMEOUT).build()))
    }
}

/// The services that answered at the last probe.
struct Probed {
    conns: Conns,
    idle: Option<IdleService>,
    lock: Option<LockService>,
}

impl Probed {
    fn name(&self) -> String {
        match (self.idle, self.lock) {
            (Some(i), Some(l)) if i.name() == l.name() => i.name().to_owned(),
            (Some(i), Some(l)) => format!("{} + lock: {}", i.name(), l.name()),
            (Some(i), None) => i.name().to_owned(),
            (None, Some(l)) => format!("lock: {}", l.name()),
            (None, None) => "none".to_owned(),
        }
    }

    fn sample(&self) -> Result<DesktopSample, String> {
        let idle = match self.idle {
            Some(s) => Some(
                s.read(&self.conns.session)
                    .map_err(|e| format!("{} stopped answering: {e}", s.name()))?,
            ),
            None => None,
        };
        let locked = match self.lock {
            Some(s) => s
                .read(&self.conns)
                .map_err(|e| format!("{} stopped answering: {e}", s.name()))?,
            None => false,
        };
        Ok(DesktopSample { idle, locked })
    }
}

#[derive(Default)]
struct State {
    probed: Option<Probed>,
    /// When the last probe or read failed, and why.
    failed: Option<(Instant, String)>,
    /// The current failure was logged (reset when a probe succeeds).
    logged: bool,
}

/// Idle time and screen lock over D-Bus. Calls block (up to [`CALL_TIMEOUT`] each): the
/// scheduler runs them on tokio's blocking pool.
pub struct DbusIdleSource {
    bus: Bus,
    /// Where logind is asked for the lock when no session-bus service answers.
    system_bus: Bus,
    wanted: Wanted,
    reprobe_after: Duration,
    state: Mutex<State>,
}

impl std::fmt::Debug for DbusIdleSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DbusIdleSource")
            .field("bus", &self.bus)
            .field("wanted", &self.wanted)
            .field("in_use", &self.in_use())
            .finish()
    }
}

impl DbusIdleSource {
    /// On the user's session bus (`DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus`),
    /// with logind on the system bus.
    pub fn session(wanted: Wanted) -> Self {
        Self::new(Bus::Session, Bus::System, wanted)
    }

    /// On the bus at a D-Bus address such as `unix:path=/tmp/bus` (tests, custom setups);
    /// logind is not asked unless [`DbusIdleSource::logind_at`] says where.
    pub fn at_address(address: impl Into<String>, wanted: Wanted) -> Self {
        Self::new(Bus::Address(address.into()), Bus::None, wanted)
    }

    /// Ask logind on the bus at this address instead of the system bus.
    pub fn logind_at(mut self, address: impl Into<String>) -> Self {
        self.system_bus = Bus::Address(address.into());
        self
    }

    fn new(bus: Bus, system_bus: Bus, wanted: Wanted) -> Self {
        Self {
            bus,
            system_bus,
            wanted,
            reprobe_after: REPROBE_AFTER,
            state: Mutex::new(State::default()),
        }
    }

    /// How long to wait after a failure before probing the bus again (default
    /// [`REPROBE_AFTER`]).
    pub fn reprobe_after(mut self, after: Duration) -> Self {
        self.reprobe_after = after;
        self
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The services in use ("mutter", "freedesktop-screensaver", "mutter + lock:
    /// gnome-screensaver", "lock: gnome-screensaver"), or why none is. Asks nothing on the bus.
    pub fn in_use(&self) -> Result<String, String> {
        let st = self.state();
        match (&st.probed, &st.failed) {
            (Some(p), _) => Ok(p.name()),
            (None, Some((_, why))) => Err(why.clone()),
            (None, None) => Err("D-Bus not asked yet".to_owned()),
        }
    }

    /// True when an idle-time service (not only a lock service) is in use.
    pub fn has_idle_time(&self) -> bool {
        self.state()
            .probed
            .as_ref()
            .is_some_and(|p| p.idle.is_some())
    }

    /// Read the desktop; `Err` says why nothing could be read.
    pub fn sample(&self) -> Result<DesktopSample, String> {
        let mut st = self.state();
        if st.probed.is_none() {
            if let Some((at, why)) = &st.failed
                && at.elapsed() < self.reprobe_after
            {
                return Err(why.clone());
            }
            match self.probe() {
                Ok(p) => {
                    tracing::info!(source = %p.name(), "desktop idle/lock service found on D-Bus");
                    st.probed = Some(p);
                    st.failed = None;
                    st.logged = false;
                }
                Err(why) => return Err(Self::fail(&mut st, why)),
            }
        }
        let Some(p) = &st.probed else {
            return Err("no D-Bus idle service".to_owned());
        };
        match p.sample() {
            Ok(s) => Ok(s),
            Err(why) => {
                st.probed = None;
                Err(Self::fail(&mut st, why))
            }
        }
    }

    fn fail(st: &mut State, why: String) -> String {
        if !st.logged {
            tracing::info!(reason = %why, "no desktop idle time over D-Bus; will retry later");
            st.logged = true;
        }
        st.failed = Some((Instant::now(), why.clone()));
        why
    }

    fn probe(&self) -> Result<Probed, String> {
        let session = self
            .bus
            .connect()
            .unwrap_or_else(|| Err(zbus::Error::Failure("no bus given".to_owned())))
            .map_err(|e| format!("no D-Bus session bus: {e}"))?;
        let idle = match self.wanted {
            Wanted::IdleAndLock => IdleService::candidates().find(|s| s.read(&session).is_ok()),
            Wanted::LockOnly => None,
        };
        let mut conns = Conns {
            session,
            system: None,
        };
        let mut lock = LockService::session_candidates().find(|s| s.read(&conns).is_ok());
        if lock.is_none() {
            // Only now the system bus: most desktops answer on the session bus.
            conns.system = self.system_bus.connect().and_then(Result::ok);
            lock = Some(LockService::Logind).filter(|s| s.read(&conns).is_ok());
        }
        match (self.wanted, idle, lock) {
            (Wanted::IdleAndLock, None, None) => Err(
                "no idle service on the session bus (asked org.gnome.Mutter.IdleMonitor and \
                 org.freedesktop.ScreenSaver)"
                    .to_owned(),
            ),
            (Wanted::LockOnly, _, None) => {
                Err("no screen-lock service (asked org.gnome.ScreenSaver and \
                 org.freedesktop.ScreenSaver on the session bus, logind's LockedHint on the \
                 system bus)"
                    .to_owned())
            }
            _ => Ok(Probed { conns, idle, lock }),
        }
    }
}

impl IdleSource for DbusIdleSource {
    fn read(&self) -> IdleReading {
        match self.sample() {
            Ok(DesktopSample { idle, locked: true }) => IdleReading::Locked {
                idle_secs: idle.map(|d| d.as_secs()),
            },
            Ok(DesktopSample {
                idle: Some(d),
                locked: false,
            }) => IdleReading::Known {
                idle_secs: d.as_secs(),
            },
            Ok(DesktopSample { idle: None, .. }) => IdleReading::Unknown {
                reason: NO_IDLE_SERVICE.to_owned(),
            },
            Err(reason) => IdleReading::Unknown { reason },
        }
    }

    fn name(&self) -> String {
        match self.in_use() {
            Ok(name) if self.has_idle_time() => name,
            Ok(lock) => format!("{} + {lock}", fallback_name(NO_IDLE_SERVICE)),
            Err(why) => fallback_name(&why),
        }
    }

    fn may_block(&self) -> bool {
        true
    }
}
