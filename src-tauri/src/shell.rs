//! The desktop app: the core started in-process on Tauri's tokio runtime, the tray icon, the
//! dashboard window and desktop notifications.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use metaclaw_config::Home;
use metaclaw_core::api::ops::login::NewLoginCode;
use metaclaw_core::api::{Api, NoInput};
use metaclaw_core::instance::{InstanceError, InstanceKind, InstanceLock, InstanceState};
use metaclaw_core::{CoreOptions, RunningCore};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Manager, RunEvent, Runtime, WebviewUrl, WebviewWindowBuilder};

use crate::autostart::{Autostart, HIDDEN_ARG};
use crate::prefs::Prefs;
use crate::tray::{Dashboard, Notifier, Tray, TrayParts, id};

const WINDOW: &str = "main";

/// Desktop notifications over D-Bus (org.freedesktop.Notifications). Sent off the UI thread:
/// the call blocks until the notification server answers.
struct DesktopNotifier;

impl Notifier for DesktopNotifier {
    fn notify(&self, title: &str, body: &str) {
        let (title, body) = (title.to_owned(), body.to_owned());
        tauri::async_runtime::spawn_blocking(move || {
            if let Err(e) = show_notification(&title, &body) {
                tracing::warn!("notification not shown ({title}): {e}");
            }
        });
    }
}

fn show_notification(title: &str, body: &str) -> Result<(), notify_rust::error::Error> {
    notify_rust::Notification::new()
        .appname("MetaClaw")
        .summary(title)
        .body(body)
        .icon("metaclaw-app")
        .show()
        .map(|_| ())
}

/// A problem that stops the app before it has a window: said on stderr and, when a
/// notification server listens, on the desktop (a launch from the menu has no terminal).
fn fatal(message: &str) -> ! {
    // Not through tracing as well: that also writes to stderr.
    eprintln!("metaclaw-app: {message}");
    let _ = show_notification("MetaClaw did not start", message);
    std::process::exit(1);
}

/// The dashboard window: the core's own dashboard over http://127.0.0.1, logged in with a
/// one-time code, so the window and a browser show the same UI through the same API.
struct WindowDashboard {
    api: Api,
}

fn go_to<R: Runtime>(window: &tauri::WebviewWindow<R>, page: &str) {
    // Page names are our own constants; nothing user-provided reaches this script.
    let _ = window.eval(format!("location.hash = '#/{page}'"));
}

impl<R: Runtime> Dashboard<R> for WindowDashboard {
    fn open(&self, app: &AppHandle<R>, page: Option<&str>) {
        if let Some(window) = app.get_webview_window(WINDOW) {
            if let Some(page) = page {
                go_to(&window, page);
            }
            let _ = window.unminimize();
            let _ = window.show();
            let _ = window.set_focus();
            return;
        }
        // The page rides on the login URL's fragment, which the browser keeps across the
        // login's redirect to `/`: the dashboard starts on it (no hash change after load that
        // could race its own first-run redirect to onboarding).
        let fragment = page.map(|p| format!("#/{p}")).unwrap_or_default();
        let (app, api) = (app.clone(), self.api.clone());
        tauri::async_runtime::spawn(async move {
            // The login code comes from the core in process, as `metaclaw dashboard` gets one
            // over HTTP: one login mechanism.
            let (code, addr) = match (api.call::<NewLoginCode>((), NoInput {}).await, api.addr()) {
                (Ok(c), Some(addr)) => (c.code, addr),
                (Err(e), _) => {
                    tracing::warn!("dashboard: {e}");
                    return;
                }
                (_, None) => return,
            };
            let url = format!(
                "http://127.0.0.1:{}/login?code={code}{fragment}",
                addr.port()
            );
            let Ok(url) = url.parse::<tauri::Url>() else {
                return;
            };
            // Closing the window destroys it (no close handler keeps it): its WebKit web
            // process exits and the memory goes back, while the app, core and tray keep
            // running (`RunEvent::ExitRequested` below). Opening builds a new one here.
            let built = WebviewWindowBuilder::new(&app, WINDOW, WebviewUrl::External(url))
                .title("MetaClaw")
                .inner_size(1100.0, 760.0)
                .build();
            if let Err(e) = built {
                tracing::warn!("dashboard window: {e}");
            }
        });
    }
}

/// The D-Bus name of the single-instance plugin, per home directory: two homes may run side
/// by side (as the lock allows), a second launch on the same home focuses the first.
fn single_instance_id(identifier: &str, home: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in home.as_os_str().as_bytes() {
        h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("{identifier}.h{h:016x}")
}

/// Held as Tauri state until exit, when the core is shut down and the lock released.
struct Running {
    core: Mutex<Option<RunningCore>>,
    lock: InstanceLock,
}

pub fn main() {
    let hidden = std::env::args().any(|a| a == HIDDEN_ARG);
    let home = Home::from_env().unwrap_or_else(|e| fatal(&e.to_string()));
    home.ensure().unwrap_or_else(|e| fatal(&e.to_string()));
    // A desktop app has no terminal: its log is the home's size-rotated metaclaw.log.
    let _log = metaclaw_core::init_tracing(metaclaw_core::LogTarget::File(home.log_path()));
    // Taken before anything starts. If the daemon holds it, say so now. If another tray app
    // does, the single-instance plugin hands this launch over to it (it shows its window).
    let has_display = ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|d| !d.is_empty()));
    let lock = match InstanceLock::acquire(&home) {
        Err(InstanceError::AlreadyRunning {
            state: Some(ref s), ..
        }) if s.kind == InstanceKind::Tray && has_display => None,
        Err(e) => fatal(&e.to_string()),
        Ok(lock) => Some(lock),
    };
    let loaded =
        metaclaw_config::load(&home.config_path()).unwrap_or_else(|e| fatal(&e.to_string()));
    for w in &loaded.warnings {
        tracing::warn!("config: {w}");
    }
    let config = loaded.config;
    let context = tauri::generate_context!();
    let bus_id = single_instance_id(&context.config().identifier, home.root());

    let app = tauri::Builder::default()
        .plugin(
            tauri_plugin_single_instance::Builder::new()
                .dbus_id(bus_id)
                .callback(|app, _argv, _cwd| {
                    open_menu_item(app, id::OPEN);
                })
                .build(),
        )
        .setup(move |app| {
            // Reaching here with no lock means the other tray app was not reachable over
            // D-Bus (no session bus): refuse rather than run twice on one home.
            let lock = match lock {
                Some(lock) => lock,
                None => fatal(
                    &InstanceLock::acquire(&home)
                        .err()
                        .map_or_else(|| "MetaClaw is already running".into(), |e| e.to_string()),
                ),
            };
            let mode = config.mode.as_str().to_owned();
            let host = config.proxy.host.clone();
            let core = tauri::async_runtime::block_on(metaclaw_core::start(CoreOptions::new(
                home.clone(),
                config,
            )))
            .unwrap_or_else(|e| fatal(&e.to_string()));
            // Point the agent at the proxy, as `metaclaw start` does, through the core's own
            // operation (each agent gets its own proxy key first); the operation runs the
            // agent's CLI off the async workers.
            let wiring_api = core.api().clone();
            tauri::async_runtime::spawn(async move {
                let wire = wiring_api
                    .call::<metaclaw_core::api::ops::wiring::Wire>(
                        (),
                        metaclaw_core::api::NoInput {},
                    )
                    .await;
                match wire {
                    Ok(report) => {
                        for line in report.lines {
                            tracing::info!("wiring: {line}");
                        }
                    }
                    Err(e) => tracing::warn!("wiring failed: {e}"),
                }
            });
            lock.write_state(&InstanceState {
                pid: std::process::id(),
                host,
                port: core.addr().port(),
                mode,
                started_at: core.started_at(),
                version: env!("CARGO_PKG_VERSION").to_owned(),
                kind: InstanceKind::Tray,
            })?;
            let api = core.api().clone();
            let tray = Tray::new(
                app.handle(),
                TrayParts {
                    api: api.clone(),
                    prefs_path: Prefs::path(home.root()),
                    autostart: Autostart::for_current_user(),
                    notifier: Arc::new(DesktopNotifier),
                    dashboard: Arc::new(WindowDashboard { api }),
                },
            )?;
            let activity = tauri::async_runtime::block_on(tray.activity());
            let icon = TrayIconBuilder::with_id("metaclaw")
                .icon(crate::tray::icon(activity))
                .tooltip(tray.tooltip())
                .menu(&tray.items.menu)
                .on_menu_event(|app, event| open_menu_item(app, event.id().as_ref()))
                .build(app.handle())?;
            tauri::async_runtime::block_on(tray.attach_icon(icon));
            app.manage(tray.clone());

            let mut events = core.events();
            let t = tray.clone();
            tauri::async_runtime::spawn(async move {
                use tokio::sync::broadcast::error::RecvError;
                loop {
                    match events.recv().await {
                        Ok(event) => t.on_event(&event).await,
                        Err(RecvError::Lagged(_)) => t.refresh().await,
                        Err(RecvError::Closed) => return,
                    }
                }
            });
            let t = tray.clone();
            tauri::async_runtime::spawn(async move {
                let mut tick = tokio::time::interval(Duration::from_secs(5));
                loop {
                    tick.tick().await;
                    t.poll().await;
                }
            });
            let handle = app.handle().clone();
            tauri::async_runtime::spawn(async move {
                metaclaw_core::shutdown_signal().await;
                tracing::info!("signal received, quitting");
                handle.exit(0);
            });
            tracing::info!(addr = %core.addr(), "MetaClaw tray app running");
            app.manage(Running {
                core: Mutex::new(Some(core)),
                lock,
            });
            let handle = app.handle().clone();
            tauri::async_runtime::spawn(async move { tray.open_at_launch(&handle, hidden).await });
            Ok(())
        })
        .build(context)
        .unwrap_or_else(|e| fatal(&format!("could not start the desktop app: {e}")));

    app.run(|app, event| match event {
        // The window was closed (destroyed) or none was open: the tray keeps running.
        RunEvent::ExitRequested {
            code: None, api, ..
        } => api.prevent_exit(),
        RunEvent::Exit => shut_down(app),
        // The web process went with the window; what the app freed alongside (the page's
        // share of GTK and WebKit state) stays with the allocator unless handed back.
        RunEvent::WindowEvent {
            event: tauri::WindowEvent::Destroyed,
            ..
        } => {
            std::thread::spawn(|| {
                std::thread::sleep(std::time::Duration::from_secs(1));
                metaclaw_core::return_memory_to_os();
            });
        }
        _ => {}
    });
}

/// A menu click runs off the UI thread: the handler calls the core's API.
fn open_menu_item(app: &AppHandle<tauri::Wry>, item: &str) {
    if let Some(tray) = app.try_state::<Arc<Tray<tauri::Wry>>>() {
        let (tray, app, item) = (tray.inner().clone(), app.clone(), item.to_owned());
        tauri::async_runtime::spawn(async move { tray.handle_menu(&app, &item).await });
    }
}

/// Stop the core cleanly (in-flight turns are committed), then drop the lock.
fn shut_down<R: Runtime>(app: &AppHandle<R>) {
    let Some(running) = app.try_state::<Running>() else {
        return;
    };
    let core = running
        .core
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take();
    if let Some(core) = core {
        let done = tauri::async_runtime::block_on(async {
            tokio::time::timeout(Duration::from_secs(10), core.shutdown()).await
        });
        match done {
            Ok(Ok(())) => tracing::info!("core stopped"),
            Ok(Err(e)) => tracing::warn!("core stopped with an error: {e}"),
            Err(_) => tracing::warn!("core did not stop within 10 s"),
        }
    }
    running.lock.clear_state();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_instance_names_differ_per_home_and_are_valid_bus_names() {
        let a = single_instance_id("dev.metaclaw.desktop", Path::new("/home/a/.metaclaw"));
        let b = single_instance_id("dev.metaclaw.desktop", Path::new("/home/b/.metaclaw"));
        assert_ne!(a, b);
        for name in [a, b] {
            assert!(name.split('.').all(|part| {
                !part.is_empty()
                    && !part.starts_with(|c: char| c.is_ascii_digit())
                    && part
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            }));
        }
    }
}
