//! The tray menu and what its items do. Generic over the Tauri runtime, so the same code runs
//! in the app (Wry) and in the tests (the mock runtime, no display).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use metaclaw_config::Mode;
use metaclaw_core::api::ops::config::{ConfigChange, ConfigPatch, PatchConfig};
use metaclaw_core::api::ops::status::{GetStatus, Status};
use metaclaw_core::api::{Api, ApiError, ErrorCode, NoInput};
use metaclaw_domain::Event;
use tauri::image::Image;
use tauri::menu::{CheckMenuItem, Menu, MenuItem, PredefinedMenuItem, Submenu};
use tauri::tray::TrayIcon;
use tauri::{AppHandle, Manager, Runtime};

use crate::autostart::Autostart;
use crate::prefs::Prefs;
use crate::status::{Activity, Notice, NoticeKind, TrayStatus, serving_weights};

/// Menu item ids (also what the D-Bus menu test clicks, by label).
pub mod id {
    pub const STATUS: &str = "status";
    pub const SERVING: &str = "serving";
    pub const LAST_EVENT: &str = "last-event";
    pub const OPEN: &str = "open";
    pub const MODE_SKILLS_ONLY: &str = "mode:skills_only";
    pub const MODE_RL: &str = "mode:rl";
    pub const MODE_AUTO: &str = "mode:auto";
    pub const RL: &str = "rl";
    pub const OPD: &str = "opd";
    pub const PAUSE: &str = "pause";
    pub const PENDING: &str = "pending";
    pub const NOTIFY_PROPOSALS: &str = "notify:proposals";
    pub const NOTIFY_TRAINING: &str = "notify:training";
    pub const NOTIFY_WINDOWS: &str = "notify:windows";
    pub const AUTOSTART: &str = "autostart";
    pub const QUIT: &str = "quit";
}

/// Dashboard pages the tray opens (hash routes of the dashboard, `#/<page>`).
pub mod page {
    /// Onboarding: where the app opens while no upstream is configured.
    pub const WELCOME: &str = "welcome";
    pub const INBOX: &str = "inbox";
    /// Settings, scrolled to the RL section: where "Enable RL" takes the user when the core
    /// says RL settings are missing. The query is part of the hash, so the dashboard's router
    /// still sees the `settings` page.
    pub const RL_SETTINGS: &str = "settings/rl";
}

/// Shows desktop notifications. The app uses the notification plugin; tests record them.
pub trait Notifier: Send + Sync {
    fn notify(&self, title: &str, body: &str);
}

/// Opens (or focuses) the dashboard window at a page (`None`: where it was).
pub trait Dashboard<R: Runtime>: Send + Sync {
    fn open(&self, app: &AppHandle<R>, page: Option<&str>);
}

/// The tray icon per state, drawn by scripts/make-icons.py.
pub fn icon(activity: Activity) -> Image<'static> {
    match activity {
        Activity::Idle => tauri::include_image!("icons/tray-idle.png"),
        Activity::Learning => tauri::include_image!("icons/tray-learning.png"),
        Activity::Training => tauri::include_image!("icons/tray-training.png"),
        Activity::Paused => tauri::include_image!("icons/tray-paused.png"),
        Activity::Error => tauri::include_image!("icons/tray-error.png"),
    }
}

pub struct Items<R: Runtime> {
    pub menu: Menu<R>,
    pub status: MenuItem<R>,
    /// Which weights answer chat: the adapter version when RL serves.
    pub serving: MenuItem<R>,
    /// The last event, also in the tooltip: Linux tray hosts (StatusNotifierItem through
    /// appindicator) show no tooltip, so the menu carries it too.
    pub last_event: MenuItem<R>,
    pub modes: [(Mode, CheckMenuItem<R>); 3],
    pub rl: CheckMenuItem<R>,
    pub opd: CheckMenuItem<R>,
    pub pause: CheckMenuItem<R>,
    pub pending: MenuItem<R>,
    pub notify: [(NoticeKind, CheckMenuItem<R>); 3],
    pub autostart: CheckMenuItem<R>,
}

impl<R: Runtime> Items<R> {
    pub fn build<M: Manager<R>>(app: &M, prefs: &Prefs, autostart: bool) -> tauri::Result<Self> {
        let status = MenuItem::with_id(app, id::STATUS, "MetaClaw", false, None::<&str>)?;
        let serving = MenuItem::with_id(
            app,
            id::SERVING,
            "Serves: your upstream model",
            false,
            None::<&str>,
        )?;
        let last_event = MenuItem::with_id(
            app,
            id::LAST_EVENT,
            "Last event: started",
            false,
            None::<&str>,
        )?;
        let open = MenuItem::with_id(app, id::OPEN, "Open dashboard", true, None::<&str>)?;
        let check = |id: &str, text: &str, on: bool| {
            CheckMenuItem::with_id(app, id, text, true, on, None::<&str>)
        };
        let modes = [
            (
                Mode::SkillsOnly,
                check(id::MODE_SKILLS_ONLY, "skills_only", false)?,
            ),
            (Mode::Rl, check(id::MODE_RL, "rl", false)?),
            (Mode::Auto, check(id::MODE_AUTO, "auto", false)?),
        ];
        let mode_menu =
            Submenu::with_items(app, "Mode", true, &[&modes[0].1, &modes[1].1, &modes[2].1])?;
        let rl = check(id::RL, "Enable RL", false)?;
        let opd = check(id::OPD, "OPD", false)?;
        let pause = check(id::PAUSE, "Pause learning", false)?;
        let pending =
            MenuItem::with_id(app, id::PENDING, "Pending skills (0)", true, None::<&str>)?;
        let notify = [
            (
                NoticeKind::Proposals,
                check(
                    id::NOTIFY_PROPOSALS,
                    "New skill proposals",
                    prefs.notify_proposals,
                )?,
            ),
            (
                NoticeKind::Training,
                check(
                    id::NOTIFY_TRAINING,
                    "Training steps finished or failed",
                    prefs.notify_training,
                )?,
            ),
            (
                NoticeKind::Window,
                check(
                    id::NOTIFY_WINDOWS,
                    "Training windows opened",
                    prefs.notify_windows,
                )?,
            ),
        ];
        let notify_menu = Submenu::with_items(
            app,
            "Notifications",
            true,
            &[&notify[0].1, &notify[1].1, &notify[2].1],
        )?;
        let autostart = check(id::AUTOSTART, "Start at login", autostart)?;
        let quit = MenuItem::with_id(app, id::QUIT, "Quit", true, None::<&str>)?;
        let menu = Menu::with_items(
            app,
            &[
                &status,
                &serving,
                &last_event,
                &PredefinedMenuItem::separator(app)?,
                &open,
                &mode_menu,
                &rl,
                &opd,
                &pause,
                &pending,
                &PredefinedMenuItem::separator(app)?,
                &notify_menu,
                &autostart,
                &PredefinedMenuItem::separator(app)?,
                &quit,
            ],
        )?;
        Ok(Items {
            menu,
            status,
            serving,
            last_event,
            modes,
            rl,
            opd,
            pause,
            pending,
            notify,
            autostart,
        })
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Everything the tray needs, managed as Tauri state (`app.state::<Arc<Tray<R>>>()`).
pub struct Tray<R: Runtime> {
    /// The core's API, called in process.
    pub api: Api,
    pub items: Items<R>,
    icon: Mutex<Option<TrayIcon<R>>>,
    status: Mutex<TrayStatus>,
    prefs: Mutex<Prefs>,
    prefs_path: std::path::PathBuf,
    autostart: Option<Autostart>,
    notifier: Arc<dyn Notifier>,
    dashboard: Arc<dyn Dashboard<R>>,
}

pub struct TrayParts<R: Runtime> {
    pub api: Api,
    pub prefs_path: std::path::PathBuf,
    pub autostart: Option<Autostart>,
    pub notifier: Arc<dyn Notifier>,
    pub dashboard: Arc<dyn Dashboard<R>>,
}

impl<R: Runtime> Tray<R> {
    /// Builds the menu (not the icon: that needs a desktop, see [`Tray::attach_icon`]). Call
    /// [`Tray::refresh`] once to fill it in from the core.
    pub fn new<M: Manager<R>>(app: &M, parts: TrayParts<R>) -> tauri::Result<Arc<Tray<R>>> {
        let prefs = Prefs::load(&parts.prefs_path);
        let autostart_on = parts.autostart.as_ref().is_some_and(Autostart::is_enabled);
        let items = Items::build(app, &prefs, autostart_on)?;
        let tray = Arc::new(Tray {
            api: parts.api,
            items,
            icon: Mutex::new(None),
            status: Mutex::new(TrayStatus::default()),
            prefs: Mutex::new(prefs),
            prefs_path: parts.prefs_path,
            autostart: parts.autostart,
            notifier: parts.notifier,
            dashboard: parts.dashboard,
        });
        Ok(tray)
    }

    pub async fn attach_icon(&self, icon: TrayIcon<R>) {
        *lock(&self.icon) = Some(icon);
        self.refresh().await;
    }

    pub fn prefs(&self) -> Prefs {
        *lock(&self.prefs)
    }

    async fn status(&self) -> Result<Status, ApiError> {
        self.api.call::<GetStatus>((), NoInput {}).await
    }

    fn activity_of(&self, status: &Status) -> Activity {
        lock(&self.status).activity(status.learning_paused, status.training.running)
    }

    /// The icon state now.
    pub async fn activity(&self) -> Activity {
        match self.status().await {
            Ok(s) => self.activity_of(&s),
            Err(_) => lock(&self.status).activity(false, false),
        }
    }

    fn last_event(&self) -> String {
        lock(&self.status)
            .last_event()
            .map(str::to_owned)
            .unwrap_or_else(|| "started".into())
    }

    /// The tooltip: mode and the last event.
    pub fn tooltip(&self) -> String {
        let mode = self.api.config().mode;
        let adapter = lock(&self.status)
            .adapter()
            .map(|v| format!(", adapter {v}"))
            .unwrap_or_default();
        format!("MetaClaw ({mode}{adapter}): {}", self.last_event())
    }

    /// Make every item, the icon and the tooltip match the core. Called after each change,
    /// whoever made it (tray, dashboard, CLI), so the menu never shows a stale switch.
    pub async fn refresh(&self) {
        let snapshot = match self.status().await {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!("tray: could not read the status: {e}");
                return;
            }
        };
        let activity = self.activity_of(&snapshot);
        let i = &self.items;
        let _ = i
            .status
            .set_text(format!("{} · mode {}", activity.label(), snapshot.mode));
        let serving = serving_weights(
            snapshot.mode.is_rl(),
            snapshot.rl.phase.as_str(),
            snapshot.rl.sampler_step,
        );
        lock(&self.status).set_serving(&serving);
        let _ = i.serving.set_text(serving);
        let _ = i
            .last_event
            .set_text(format!("Last event: {}", self.last_event()));
        for (mode, item) in &i.modes {
            let _ = item.set_checked(*mode == snapshot.mode);
        }
        let _ = i.rl.set_checked(snapshot.rl_enabled);
        let _ = i.opd.set_checked(snapshot.opd_enabled);
        let _ = i.pause.set_checked(snapshot.learning_paused);
        let _ = i.pending.set_text(format!(
            "Pending skills ({})",
            snapshot.counts.pending_proposals
        ));
        let prefs = self.prefs();
        for (kind, item) in &i.notify {
            let _ = item.set_checked(prefs.allows(*kind));
        }
        if let Some(a) = &self.autostart {
            let _ = i.autostart.set_checked(a.is_enabled());
        }
        // Cloned out first: these calls wait for the main thread, which may itself be
        // waiting for this lock in a menu handler.
        let tray_icon = lock(&self.icon).clone();
        if let Some(tray_icon) = tray_icon {
            let _ = tray_icon.set_icon(Some(icon(activity)));
            let _ = tray_icon.set_tooltip(Some(self.tooltip()));
        }
    }

    fn show(&self, notice: Notice) {
        if self.prefs().allows(notice.kind) {
            self.notifier.notify(&notice.title, &notice.body);
        }
    }

    fn tell(&self, title: &str, body: &str, last_event: &str) {
        lock(&self.status).set_last_event(last_event);
        self.show(Notice {
            kind: NoticeKind::Feedback,
            title: title.into(),
            body: body.into(),
        });
    }

    /// One core event: update the state, maybe notify, refresh the menu.
    pub async fn on_event(&self, event: &Event) {
        let notice = lock(&self.status).apply(event);
        if let Some(n) = notice {
            self.show(n);
        }
        self.refresh().await;
    }

    /// The periodic check: scheduler windows have no event of their own.
    pub async fn poll(&self) {
        let notice = self.status().await.ok().and_then(|s| {
            let state = if s.scheduler.training_windows {
                s.scheduler.state
            } else {
                metaclaw_scheduler::SchedulerState::IdleWait
            };
            let source = s
                .scheduler
                .source
                .and_then(|w| serde_json::to_value(w).ok())
                .and_then(|v| v.as_str().map(str::to_owned));
            lock(&self.status).scheduler(state.as_str(), source.as_deref())
        });
        if let Some(n) = notice {
            self.show(n);
        }
        self.refresh().await;
    }

    async fn patch(&self, patch: ConfigPatch) -> Result<ConfigChange, ApiError> {
        self.api.call::<PatchConfig>((), patch).await
    }

    /// RL that starts with a caveat (no judge: only rated turns train) says so when it is
    /// switched on, not only in the status.
    fn advise_if_training(&self, result: &Result<ConfigChange, ApiError>) {
        let Ok(change) = result else { return };
        if change.config.mode != Mode::SkillsOnly && !change.warnings.is_empty() {
            self.show(Notice {
                kind: NoticeKind::Feedback,
                title: "RL is on, with a caveat".into(),
                body: change.warnings.join("\n"),
            });
        }
    }

    fn applied(&self, what: &str, result: Result<impl Sized, ApiError>) {
        match result {
            Ok(_) => lock(&self.status).set_last_event(what),
            Err(e) if e.code == ErrorCode::NotReady => {
                tracing::info!("tray: {what} refused: {e}");
                self.tell(
                    "RL cannot start yet",
                    &e.message,
                    &format!("RL not ready: set {}", e.keys.join(", ")),
                );
            }
            Err(e) => {
                tracing::warn!("tray: {what} failed: {e}");
                self.tell(
                    "MetaClaw",
                    &format!("{what} failed: {e}"),
                    &format!("{what} failed"),
                );
            }
        }
    }

    /// The window at launch: onboarding whenever the core has no upstream yet (even when
    /// started `--hidden` at login: the app is unusable until then), else the dashboard
    /// unless started hidden.
    pub async fn open_at_launch(&self, app: &AppHandle<R>, hidden: bool) {
        let needs_onboarding = match self.status().await {
            Ok(s) => s.needs_onboarding,
            Err(e) => {
                tracing::warn!("tray: could not read the status at launch: {e}");
                false
            }
        };
        if needs_onboarding {
            self.dashboard.open(app, Some(page::WELCOME));
        } else if !hidden {
            self.dashboard.open(app, None);
        }
    }

    /// What a click on a menu item does. The check mark GTK toggled on click is corrected by
    /// the refresh at the end, so a refused change never shows as done.
    pub async fn handle_menu(&self, app: &AppHandle<R>, item: &str) {
        let config = self.api.config();
        match item {
            id::OPEN => {
                lock(&self.status).acknowledge_error();
                self.dashboard.open(app, None);
            }
            id::PENDING => self.dashboard.open(app, Some(page::INBOX)),
            id::MODE_SKILLS_ONLY | id::MODE_RL | id::MODE_AUTO => {
                let mode = match item {
                    id::MODE_RL => Mode::Rl,
                    id::MODE_AUTO => Mode::Auto,
                    _ => Mode::SkillsOnly,
                };
                if mode != config.mode {
                    let result = self
                        .patch(ConfigPatch {
                            mode: Some(mode),
                            ..ConfigPatch::default()
                        })
                        .await;
                    self.advise_if_training(&result);
                    self.applied(&format!("mode {mode}"), result);
                }
            }
            id::RL => {
                let on = !config.rl.enabled;
                let what = if on { "RL enabled" } else { "RL disabled" };
                let result = self
                    .patch(ConfigPatch {
                        rl_enabled: Some(on),
                        ..ConfigPatch::default()
                    })
                    .await;
                if matches!(&result, Err(e) if e.code == ErrorCode::NotReady) {
                    // The settings live in the dashboard: take the user there.
                    self.dashboard.open(app, Some(page::RL_SETTINGS));
                }
                self.advise_if_training(&result);
                self.applied(what, result);
            }
            id::OPD => {
                let on = !config.opd.enabled;
                let what = if on { "OPD on" } else { "OPD off" };
                let result = self
                    .patch(ConfigPatch {
                        opd_enabled: Some(on),
                        ..ConfigPatch::default()
                    })
                    .await;
                self.applied(what, result);
            }
            id::PAUSE => {
                let on = !config.learning_paused;
                let what = if on {
                    "learning paused"
                } else {
                    "learning resumed"
                };
                let result = self
                    .patch(ConfigPatch {
                        learning_paused: Some(on),
                        ..ConfigPatch::default()
                    })
                    .await;
                self.applied(what, result);
            }
            id::NOTIFY_PROPOSALS | id::NOTIFY_TRAINING | id::NOTIFY_WINDOWS => {
                let kind = match item {
                    id::NOTIFY_PROPOSALS => NoticeKind::Proposals,
                    id::NOTIFY_TRAINING => NoticeKind::Training,
                    _ => NoticeKind::Window,
                };
                let mut prefs = lock(&self.prefs);
                let on = !prefs.allows(kind);
                prefs.set(kind, on);
                if let Err(e) = prefs.save(&self.prefs_path) {
                    tracing::warn!("tray: could not save {}: {e}", self.prefs_path.display());
                }
            }
            id::AUTOSTART => {
                if let Some(a) = &self.autostart {
                    let on = !a.is_enabled();
                    if let Err(e) = a.set(on) {
                        self.tell(
                            "MetaClaw",
                            &format!("could not change {}: {e}", a.entry().display()),
                            "start at login failed",
                        );
                    }
                }
            }
            id::QUIT => app.exit(0),
            _ => {}
        }
        self.refresh().await;
    }
}
