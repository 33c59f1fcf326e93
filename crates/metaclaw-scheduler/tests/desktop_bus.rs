//! The D-Bus idle source against fake desktop services on a private bus: a `dbus-daemon` this
//! test starts (and kills), serving a fake `org.gnome.Mutter.IdleMonitor`,
//! `org.freedesktop.ScreenSaver` and `org.gnome.ScreenSaver` with zbus.
#![cfg(target_os = "linux")]

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::*;
use metaclaw_domain::ManualClock;
use metaclaw_scheduler::{
    DbusIdleSource, IdleReading, IdleSource, IdleSourceUsed, Scheduler, SchedulerSettings,
    SchedulerState, Wanted, WindowSource,
};
use zbus::blocking::Connection;
use zbus::blocking::connection::Builder;

const MUTTER: &str = "org.gnome.Mutter.IdleMonitor";
const MUTTER_PATH: &str = "/org/gnome/Mutter/IdleMonitor/Core";
const FDO: &str = "org.freedesktop.ScreenSaver";
const GNOME_SS: &str = "org.gnome.ScreenSaver";

/// A private session bus; the daemon is killed on drop.
struct PrivateBus {
    daemon: Child,
    address: String,
    _dir: tempfile::TempDir,
}

impl PrivateBus {
    fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("bus.conf");
        // No <servicedir>: nothing on this machine can be auto-started onto the test bus.
        std::fs::write(
            &config,
            format!(
                r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"#,
                dir.path().join("bus").display()
            ),
        )
        .unwrap();
        // Its stderr goes to a file: shown only when the bus does not come up (as root it
        // also warns about the fd limit on every start).
        let log = dir.path().join("daemon.log");
        let mut daemon = Command::new("dbus-daemon")
            .arg(format!("--config-file={}", config.display()))
            .args(["--nofork", "--print-address"])
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("dbus-daemon is needed for this test (Debian package dbus-daemon; see scripts/install-deps.sh)");
        // The address is printed once the bus listens.
        let mut line = String::new();
        BufReader::new(daemon.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let address = line.trim().to_owned();
        assert!(
            address.starts_with("unix:"),
            "dbus-daemon printed {line:?}; its log: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        Self {
            daemon,
            address,
            _dir: dir,
        }
    }

    fn source(&self, wanted: Wanted) -> DbusIdleSource {
        DbusIdleSource::at_address(&self.address, wanted)
    }
}

impl Drop for PrivateBus {
    fn drop(&mut self) {
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}

/// The state the fake desktop reports.
#[derive(Default)]
struct Desktop {
    idle_ms: AtomicU64,
    locked: AtomicBool,
}

impl Desktop {
    fn set(&self, idle: Duration, locked: bool) {
        self.idle_ms
            .store(idle.as_millis().try_into().unwrap(), Ordering::SeqCst);
        self.locked.store(locked, Ordering::SeqCst);
    }
}

struct FakeMutter(Arc<Desktop>);

#[zbus::interface(name = "org.gnome.Mutter.IdleMonitor")]
impl FakeMutter {
    #[zbus(name = "GetIdletime")]
    fn get_idletime(&self) -> u64 {
        self.0.idle_ms.load(Ordering::SeqCst)
    }
}

/// KDE's org.freedesktop.ScreenSaver: idle time in whole seconds.
struct FakeKde {
    idle_secs: Arc<AtomicU32>,
    active: Arc<AtomicBool>,
}

#[zbus::interface(name = "org.freedesktop.ScreenSaver")]
impl FakeKde {
    #[zbus(name = "GetSessionIdleTime")]
    fn get_session_idle_time(&self) -> u32 {
        self.idle_secs.load(Ordering::SeqCst)
    }

    #[zbus(name = "GetActive")]
    fn get_active(&self) -> bool {
        self.active.load(Ordering::SeqCst)
    }
}

struct FakeGnomeScreenSaver(Arc<Desktop>);

#[zbus::interface(name = "org.gnome.ScreenSaver")]
impl FakeGnomeScreenSaver {
    #[zbus(name = "GetActive")]
    fn get_active(&self) -> bool {
        self.0.locked.load(Ordering::SeqCst)
    }
}

/// GNOME: Mutter's idle monitor and GNOME Shell's screensaver, under their well-known names.
fn serve_gnome(bus: &PrivateBus, desktop: &Arc<Desktop>) -> Connection {
    Builder::address(bus.address.as_str())
        .unwrap()
        .name(MUTTER)
        .unwrap()
        .name(GNOME_SS)
        .unwrap()
        .serve_at(MUTTER_PATH, FakeMutter(desktop.clone()))
        .unwrap()
        .serve_at(
            "/org/gnome/ScreenSaver",
            FakeGnomeScreenSaver(desktop.clone()),
        )
        .unwrap()
        .build()
        .unwrap()
}

/// The service leaves the bus (as when the compositor restarts).
fn stop(conn: Connection, names: &[&str]) {
    for n in names {
        assert!(conn.release_name(*n).unwrap(), "{n} was owned");
    }
    drop(conn);
}

fn read_until(src: &dyn IdleSource, what: &str, ok: impl Fn(&IdleReading) -> bool) -> IdleReading {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let r = src.read();
        if ok(&r) {
            return r;
        }
        assert!(Instant::now() < deadline, "waiting for {what}; last {r:?}");
        std::thread::yield_now();
    }
}

#[test]
fn mutter_idle_milliseconds_and_gnome_lock() {
    let bus = PrivateBus::start();
    let desktop = Arc::new(Desktop::default());
    desktop.set(Duration::from_millis(90_999), false);
    let _gnome = serve_gnome(&bus, &desktop);
    let src = bus.source(Wanted::IdleAndLock);
    assert!(src.may_block(), "D-Bus calls must run off the async loops");

    assert_eq!(src.read(), IdleReading::Known { idle_secs: 90 });
    assert_eq!(src.name(), "mutter + lock: gnome-screensaver");
    // Every read asks again (only the choice of service is cached).
    desktop.set(Duration::from_millis(4_000), false);
    assert_eq!(src.read(), IdleReading::Known { idle_secs: 4 });

    desktop.set(Duration::from_millis(2_000), true);
    assert_eq!(src.read(), IdleReading::Locked { idle_secs: Some(2) });

    // X11 asks only for the lock.
    let lock = bus.source(Wanted::LockOnly);
    assert!(lock.sample().unwrap().locked);
    assert_eq!(lock.sample().unwrap().idle, None);
    assert_eq!(lock.in_use().unwrap(), "lock: gnome-screensaver");
}

#[test]
fn kde_screensaver_seconds_and_lock() {
    let bus = PrivateBus::start();
    let idle_secs = Arc::new(AtomicU32::new(42));
    let active = Arc::new(AtomicBool::new(false));
    // KDE's older object path (the source asks /org/freedesktop/ScreenSaver first).
    let _kde = Builder::address(bus.address.as_str())
        .unwrap()
        .name(FDO)
        .unwrap()
        .serve_at(
            "/ScreenSaver",
            FakeKde {
                idle_secs: idle_secs.clone(),
                active: active.clone(),
            },
        )
        .unwrap()
        .build()
        .unwrap();
    let src = bus.source(Wanted::IdleAndLock);
    assert_eq!(src.read(), IdleReading::Known { idle_secs: 42 });
    assert_eq!(src.name(), "freedesktop-screensaver");

    active.store(true, Ordering::SeqCst);
    idle_secs.store(1, Ordering::SeqCst);
    assert_eq!(src.read(), IdleReading::Locked { idle_secs: Some(1) });
}

#[test]
fn no_service_is_unknown_with_a_reason() {
    let bus = PrivateBus::start();
    let src = bus.source(Wanted::IdleAndLock);
    let r = src.read();
    assert!(
        matches!(&r, IdleReading::Unknown { reason } if reason.contains("no idle service")),
        "{r:?}"
    );
    assert!(
        src.name()
            .starts_with("proxy activity (no OS idle source: no idle service"),
        "{}",
        src.name()
    );

    let nowhere = DbusIdleSource::at_address("unix:path=/nonexistent/bus", Wanted::IdleAndLock);
    let r = nowhere.read();
    assert!(
        matches!(&r, IdleReading::Unknown { reason } if reason.contains("no D-Bus session bus")),
        "{r:?}"
    );
}

#[test]
fn service_gone_mid_run_then_reprobed_later() {
    let bus = PrivateBus::start();
    let desktop = Arc::new(Desktop::default());
    desktop.set(Duration::from_secs(30), false);
    let gnome = serve_gnome(&bus, &desktop);
    // `eager` may probe again at once; `patient` only after an hour.
    let eager = bus
        .source(Wanted::IdleAndLock)
        .reprobe_after(Duration::ZERO);
    let patient = bus
        .source(Wanted::IdleAndLock)
        .reprobe_after(Duration::from_secs(3600));
    assert_eq!(eager.read(), IdleReading::Known { idle_secs: 30 });
    assert_eq!(patient.read(), IdleReading::Known { idle_secs: 30 });

    stop(gnome, &[MUTTER, GNOME_SS]);
    for src in [&eager, &patient] {
        let r = src.read();
        assert!(
            matches!(&r, IdleReading::Unknown { reason } if reason.contains("mutter stopped answering")),
            "{r:?}"
        );
        assert!(
            src.name()
                .starts_with("proxy activity (no OS idle source: mutter stopped answering"),
            "{}",
            src.name()
        );
    }

    let _back = serve_gnome(&bus, &desktop);
    read_until(&eager, "the re-probe to find mutter again", |r| {
        *r == IdleReading::Known { idle_secs: 30 }
    });
    assert_eq!(eager.name(), "mutter + lock: gnome-screensaver");
    // Not re-probed on every read: the patient source keeps its answer until its hour is up.
    assert!(matches!(patient.read(), IdleReading::Unknown { .. }));
}

/// logind's session object: only the property the source reads.
struct FakeLogindSession(Arc<Desktop>);

#[zbus::interface(name = "org.freedesktop.login1.Session")]
impl FakeLogindSession {
    #[zbus(property)]
    fn locked_hint(&self) -> bool {
        self.0.locked.load(Ordering::SeqCst)
    }
}

/// Mutter without GNOME Shell's screensaver on the session bus (e.g. a desktop whose locker
/// only tells logind), and logind on a second private bus standing for the system bus.
#[test]
fn logind_locked_hint_when_no_session_service_knows_the_lock() {
    let session = PrivateBus::start();
    let system = PrivateBus::start();
    let desktop = Arc::new(Desktop::default());
    desktop.set(Duration::from_secs(7), false);
    let _mutter = Builder::address(session.address.as_str())
        .unwrap()
        .name(MUTTER)
        .unwrap()
        .serve_at(MUTTER_PATH, FakeMutter(desktop.clone()))
        .unwrap()
        .build()
        .unwrap();
    let logind = Builder::address(system.address.as_str())
        .unwrap()
        .name("org.freedesktop.login1")
        .unwrap()
        .serve_at(
            "/org/freedesktop/login1/session/auto",
            FakeLogindSession(desktop.clone()),
        )
        .unwrap()
        .build()
        .unwrap();

    // Without the system bus, nothing knows about the lock.
    let blind = session.source(Wanted::IdleAndLock);
    desktop.set(Duration::from_secs(7), true);
    assert_eq!(blind.read(), IdleReading::Known { idle_secs: 7 });
    assert_eq!(blind.name(), "mutter");

    let src = session
        .source(Wanted::IdleAndLock)
        .logind_at(&system.address)
        .reprobe_after(Duration::ZERO);
    assert_eq!(src.read(), IdleReading::Locked { idle_secs: Some(7) });
    assert_eq!(src.name(), "mutter + lock: logind");
    desktop.set(Duration::from_secs(2), false);
    assert_eq!(src.read(), IdleReading::Known { idle_secs: 2 });

    // X11 asks only for the lock: logind alone is enough.
    let lock = session.source(Wanted::LockOnly).logind_at(&system.address);
    desktop.set(Duration::from_secs(2), true);
    assert!(lock.sample().unwrap().locked);
    assert_eq!(lock.in_use().unwrap(), "lock: logind");

    // logind leaves the bus: the failure names it, and nothing is taken as locked.
    stop(logind, &["org.freedesktop.login1"]);
    let r = src.read();
    assert!(
        matches!(&r, IdleReading::Unknown { reason } if reason.contains("logind stopped answering")),
        "{r:?}"
    );
}

fn scheduler_on(bus: &PrivateBus, clock: &ManualClock) -> Scheduler {
    let settings = SchedulerSettings {
        idle_threshold_minutes: Some(10),
        ..gated()
    };
    Scheduler::builder(settings)
        .clock(Arc::new(clock.clone()))
        .idle_source(Arc::new(
            bus.source(Wanted::IdleAndLock)
                .reprobe_after(Duration::ZERO),
        ))
        .build()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scheduler_window_follows_the_desktop() {
    let bus = PrivateBus::start();
    let desktop = Arc::new(Desktop::default());
    desktop.set(Duration::from_secs(5), false);
    let _gnome = serve_gnome(&bus, &desktop);
    let clock = ManualClock::new(utc("2026-03-02T10:00:00Z"));
    let s = scheduler_on(&bus, &clock);

    assert_eq!(s.tick(), SchedulerState::IdleWait);
    let st = s.status();
    assert_eq!(st.sources.idle.source, "mutter + lock: gnome-screensaver");
    assert_eq!(st.sources.idle.source_used, IdleSourceUsed::Os);
    assert_eq!(st.sources.idle.idle_secs, 5);
    assert!(!st.user_away);

    // The desktop says 11 min without input: the trainer's wait (async, blocking pool) ends.
    desktop.set(Duration::from_secs(11 * 60), false);
    let w = tokio::time::timeout(Duration::from_secs(20), s.wait_for_window())
        .await
        .expect("a window opens");
    assert_eq!(w.source, WindowSource::Idle);
    assert_eq!(w.start, utc("2026-03-02T09:49:00Z"));
    s.started();

    // The user is back: the next fresh reading (after poll_seconds) pauses the step.
    desktop.set(Duration::from_secs(3), false);
    clock.advance(chrono::Duration::seconds(11));
    assert!(s.should_pause());
    s.interrupted();
    assert_eq!(s.tick(), SchedulerState::IdleWait);

    // Locking the screen counts as away at once, although the last input was 3 s ago.
    desktop.set(Duration::from_secs(3), true);
    assert_eq!(s.tick(), SchedulerState::WindowOpen);
    let st = s.status();
    assert_eq!(st.sources.idle.source_used, IdleSourceUsed::ScreenLocked);
    assert!(st.sources.idle.open && st.user_away);
    assert_eq!(st.window.map(|w| w.source), Some(WindowSource::Idle));

    // Unlocked and active: the window closes.
    desktop.set(Duration::from_secs(1), false);
    assert_eq!(s.tick(), SchedulerState::IdleWait);
}

#[test]
fn scheduler_falls_back_to_proxy_activity_when_the_service_leaves() {
    let bus = PrivateBus::start();
    let desktop = Arc::new(Desktop::default());
    desktop.set(Duration::from_secs(11 * 60), false);
    let gnome = serve_gnome(&bus, &desktop);
    let clock = ManualClock::new(utc("2026-03-02T10:00:00Z"));
    let s = scheduler_on(&bus, &clock);
    s.note_activity(utc("2026-03-02T09:58:00Z"));
    assert_eq!(s.tick(), SchedulerState::WindowOpen);

    stop(gnome, &[MUTTER, GNOME_SS]);
    // The last request was 2 min ago: without the desktop, that is the idle time.
    assert_eq!(s.tick(), SchedulerState::IdleWait);
    let st = s.status();
    assert_eq!(st.sources.idle.source_used, IdleSourceUsed::ProxyActivity);
    assert!(
        st.sources
            .idle
            .source
            .starts_with("proxy activity (no OS idle source:"),
        "{}",
        st.sources.idle.source
    );
}
