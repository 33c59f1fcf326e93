//! The tray's menu handlers and state changes on Tauri's mock runtime: a real core (temp home,
//! port 0) behind them, no display, no D-Bus.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use metaclaw_app::autostart::Autostart;
use metaclaw_app::status::Activity;
use metaclaw_app::tray::{Dashboard, Notifier, Tray, TrayParts, id, page};
use metaclaw_config::{Home, Mode};
use metaclaw_core::api::ops::config::{ConfigPatch, PatchConfig};
use metaclaw_core::{CoreOptions, RunningCore};
use metaclaw_domain::Event;
use tauri::test::{MockRuntime, mock_app};
use tauri::{AppHandle, Manager};

#[derive(Default)]
struct Recorded {
    notices: Mutex<Vec<(String, String)>>,
    pages: Mutex<Vec<Option<String>>>,
}

struct Recorder(Arc<Recorded>);

impl Notifier for Recorder {
    fn notify(&self, title: &str, body: &str) {
        self.0
            .notices
            .lock()
            .unwrap()
            .push((title.to_owned(), body.to_owned()));
    }
}

impl Dashboard<MockRuntime> for Recorder {
    fn open(&self, _app: &AppHandle<MockRuntime>, page: Option<&str>) {
        self.0.pages.lock().unwrap().push(page.map(str::to_owned));
    }
}

struct Fixture {
    dir: tempfile::TempDir,
    home: Home,
    core: Option<RunningCore>,
    app: tauri::App<MockRuntime>,
    tray: Arc<Tray<MockRuntime>>,
    seen: Arc<Recorded>,
}

impl Fixture {
    async fn new(config_yaml: &str) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::at(dir.path().join("home"));
        home.ensure().unwrap();
        std::fs::write(home.config_path(), config_yaml).unwrap();
        let config = metaclaw_config::load(&home.config_path()).unwrap().config;
        let mut opts = CoreOptions::new(home.clone(), config);
        opts.bind = Some(SocketAddr::from(([127, 0, 0, 1], 0)));
        let core = metaclaw_core::start(opts).await.unwrap();
        let app = mock_app();
        let seen = Arc::new(Recorded::default());
        let tray = Tray::new(
            &app,
            TrayParts {
                api: core.api().clone(),
                prefs_path: home.root().join("tray.json"),
                autostart: Some(Autostart::new(
                    dir.path().join("xdg/autostart/metaclaw.desktop"),
                    "/usr/bin/metaclaw-app".into(),
                )),
                notifier: Arc::new(Recorder(seen.clone())),
                dashboard: Arc::new(Recorder(seen.clone())),
            },
        )
        .unwrap();
        tray.refresh().await;
        app.manage(tray.clone());
        Fixture {
            dir,
            home,
            core: Some(core),
            app,
            tray,
            seen,
        }
    }

    async fn click(&self, item: &str) {
        self.tray.handle_menu(self.app.handle(), item).await;
    }

    fn checked(&self, item: &str) -> bool {
        let i = &self.tray.items;
        let found = match item {
            id::RL => &i.rl,
            id::OPD => &i.opd,
            id::PAUSE => &i.pause,
            id::AUTOSTART => &i.autostart,
            id::MODE_SKILLS_ONLY => &i.modes[0].1,
            id::MODE_RL => &i.modes[1].1,
            id::MODE_AUTO => &i.modes[2].1,
            id::NOTIFY_PROPOSALS => &i.notify[0].1,
            other => panic!("no check item {other}"),
        };
        found.is_checked().unwrap()
    }

    fn notices(&self) -> Vec<(String, String)> {
        self.seen.notices.lock().unwrap().clone()
    }

    fn saved_config(&self) -> String {
        std::fs::read_to_string(self.home.config_path()).unwrap()
    }

    async fn stop(mut self) {
        self.core.take().unwrap().shutdown().await.unwrap();
    }
}

// Complete RL settings that never leave the machine: a closed local port and a tokenizer
// path that does not exist, so the RL service fails fast instead of reaching a hub or Tinker.
const READY: &str = "rl:\n  model: Qwen/Qwen3-4B\n  api_key: tk-test\n  prm_api_key: sk-prm\n  base_url: http://127.0.0.1:9\n  tokenizer_path: /nonexistent/tokenizer.json\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn menu_starts_from_the_config() {
    let f = Fixture::new("mode: skills_only\nlearning_paused: true\n").await;
    assert!(f.checked(id::MODE_SKILLS_ONLY));
    assert!(!f.checked(id::MODE_RL) && !f.checked(id::MODE_AUTO));
    assert!(f.checked(id::PAUSE));
    assert!(!f.checked(id::RL) && !f.checked(id::OPD) && !f.checked(id::AUTOSTART));
    assert_eq!(f.tray.items.pending.text().unwrap(), "Pending skills (0)");
    assert_eq!(
        f.tray.items.status.text().unwrap(),
        "Paused · mode skills_only"
    );
    assert_eq!(f.tray.activity().await, Activity::Paused);
    assert!(f.tray.tooltip().starts_with("MetaClaw (skills_only)"));
    f.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mode_needs_rl_settings_and_says_what_is_missing() {
    let f = Fixture::new("mode: skills_only\n").await;
    f.click(id::MODE_RL).await;
    assert_eq!(f.tray.api.config().mode, Mode::SkillsOnly);
    assert!(f.checked(id::MODE_SKILLS_ONLY) && !f.checked(id::MODE_RL));
    let notices = f.notices();
    assert_eq!(notices.len(), 1);
    assert_eq!(notices[0].0, "RL cannot start yet");
    for key in ["rl.model", "rl.api_key"] {
        assert!(notices[0].1.contains(key), "{}", notices[0].1);
    }
    assert!(f.tray.tooltip().contains("RL not ready: set rl.model"));
    assert_eq!(
        f.tray.items.last_event.text().unwrap(),
        "Last event: RL not ready: set rl.model, rl.api_key"
    );
    f.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mode_radio_changes_the_core_and_config_yaml() {
    let f = Fixture::new(&format!("mode: skills_only\n{READY}")).await;
    let core = f.core.as_ref().unwrap();
    let mut events = core.events();
    f.click(id::MODE_AUTO).await;
    assert_eq!(f.tray.api.config().mode, Mode::Auto);
    assert!(f.checked(id::MODE_AUTO) && !f.checked(id::MODE_SKILLS_ONLY));
    // A training mode is RL on, so "Enable RL" shows checked too.
    assert!(f.tray.api.config().rl.enabled && f.checked(id::RL));
    assert!(
        f.saved_config().contains("mode: auto"),
        "{}",
        f.saved_config()
    );
    assert!(matches!(events.recv().await.unwrap(), Event::ConfigChanged));
    f.click(id::MODE_SKILLS_ONLY).await;
    assert_eq!(f.tray.api.config().mode, Mode::SkillsOnly);
    assert!(!f.checked(id::RL));
    assert!(f.notices().is_empty());
    f.stop().await;
}

// An upstream on a closed local port: configured (no onboarding), never reached.
const CONFIGURED: &str = "llm:\n  api_base: http://127.0.0.1:9/v1\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn launch_opens_onboarding_until_an_upstream_is_set() {
    // No upstream: onboarding opens, started hidden (at login) or not.
    for hidden in [false, true] {
        let f = Fixture::new("mode: skills_only\n").await;
        f.tray.open_at_launch(f.app.handle(), hidden).await;
        assert_eq!(
            *f.seen.pages.lock().unwrap(),
            vec![Some(page::WELCOME.to_owned())],
            "hidden: {hidden}"
        );
        f.stop().await;
    }
    // Configured: the dashboard where it was, unless started hidden.
    let f = Fixture::new(CONFIGURED).await;
    f.tray.open_at_launch(f.app.handle(), false).await;
    assert_eq!(*f.seen.pages.lock().unwrap(), vec![None]);
    f.tray.open_at_launch(f.app.handle(), true).await;
    assert_eq!(f.seen.pages.lock().unwrap().len(), 1);
    f.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enable_rl_validates_and_opens_the_settings_when_incomplete() {
    let f = Fixture::new("opd:\n  enabled: true\n").await;
    f.click(id::RL).await;
    assert!(!f.tray.api.config().rl.enabled);
    assert!(!f.checked(id::RL));
    assert_eq!(
        *f.seen.pages.lock().unwrap(),
        vec![Some(page::RL_SETTINGS.to_owned())]
    );
    assert!(f.notices()[0].1.contains("opd.teacher_url"));
    f.stop().await;

    let f = Fixture::new(READY).await;
    f.click(id::RL).await;
    let config = f.tray.api.config();
    assert!(config.rl.enabled);
    assert_eq!(config.mode, Mode::Rl);
    assert!(f.checked(id::RL) && f.checked(id::MODE_RL));
    assert!(f.notices().is_empty(), "{:?}", f.notices());
    f.click(id::RL).await;
    assert!(!f.tray.api.config().rl.enabled);
    assert_eq!(f.tray.api.config().mode, Mode::SkillsOnly);
    f.stop().await;

    // No judge: RL turns on (rated turns still reward) and the user is told what that means,
    // by Enable RL and by the Mode radio alike.
    let no_judge = READY.replace("  prm_api_key: sk-prm\n", "");
    let f = Fixture::new(&no_judge).await;
    f.click(id::RL).await;
    assert!(f.tray.api.config().rl.enabled);
    let notices = f.notices();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(notices[0].1.contains("only turns you rate"), "{notices:?}");
    f.click(id::MODE_SKILLS_ONLY).await;
    f.click(id::MODE_AUTO).await;
    assert_eq!(f.tray.api.config().mode, Mode::Auto);
    assert_eq!(f.notices().len(), 2);
    f.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opd_and_pause_toggle_and_the_icon_follows() {
    let f = Fixture::new("").await;
    f.click(id::OPD).await;
    assert!(f.tray.api.config().opd.enabled && f.checked(id::OPD));
    f.click(id::OPD).await;
    assert!(!f.tray.api.config().opd.enabled && !f.checked(id::OPD));
    f.click(id::PAUSE).await;
    assert!(f.tray.api.config().learning_paused && f.checked(id::PAUSE));
    assert_eq!(f.tray.activity().await, Activity::Paused);
    assert!(f.saved_config().contains("learning_paused: true"));
    f.click(id::PAUSE).await;
    assert_eq!(f.tray.activity().await, Activity::Idle);
    f.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proposals_notify_count_and_open_the_inbox() {
    let f = Fixture::new("").await;
    let id = f
        .core
        .as_ref()
        .unwrap()
        .store()
        .insert_proposal(metaclaw_store::NewProposal {
            kind: metaclaw_store::ProposalKind::New,
            skill_name: "tidy-commits".into(),
            content: "---\nname: tidy-commits\ndescription: d\n---\nbody\n".into(),
            base_content: None,
            diff: None,
            reason: "r".into(),
            session_id: None,
            turn_ids: vec![],
            signals: serde_json::json!({}),
            evolver_model: "m".into(),
            fingerprint: "fp".into(),
        })
        .unwrap();
    f.tray
        .on_event(&Event::ProposalsCreated {
            session_id: None,
            proposal_ids: vec![id],
        })
        .await;
    assert_eq!(f.tray.items.pending.text().unwrap(), "Pending skills (1)");
    assert_eq!(f.notices()[0].0, "1 new skill proposal");
    f.click(id::PENDING).await;
    assert_eq!(
        *f.seen.pages.lock().unwrap(),
        vec![Some(page::INBOX.to_owned())]
    );

    // Each kind of notification can be turned off, and that survives a restart.
    f.click(id::NOTIFY_PROPOSALS).await;
    assert!(!f.checked(id::NOTIFY_PROPOSALS));
    f.tray
        .on_event(&Event::ProposalsCreated {
            session_id: None,
            proposal_ids: vec![id],
        })
        .await;
    assert_eq!(f.notices().len(), 1);
    let saved = std::fs::read_to_string(f.home.root().join("tray.json")).unwrap();
    assert!(saved.contains("\"notify_proposals\": false"), "{saved}");
    f.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn training_events_drive_the_icon_and_notify() {
    let f = Fixture::new("").await;
    f.tray
        .on_event(&Event::Training {
            step: 4,
            status: "running".into(),
            progress: Some(0.25),
        })
        .await;
    assert_eq!(f.tray.activity().await, Activity::Training);
    assert!(f.tray.tooltip().ends_with("training step 4: 25%"));
    f.tray
        .on_event(&Event::Training {
            step: 4,
            status: "failed".into(),
            progress: None,
        })
        .await;
    assert_eq!(f.tray.activity().await, Activity::Error);
    assert_eq!(
        f.tray.items.status.text().unwrap(),
        "Error · mode skills_only"
    );
    assert_eq!(f.notices()[0].0, "Training step 4 failed");
    // Opening the dashboard acknowledges the error.
    f.click(id::OPEN).await;
    assert_eq!(f.tray.activity().await, Activity::Idle);
    assert_eq!(*f.seen.pages.lock().unwrap(), vec![None]);
    f.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_made_elsewhere_show_in_the_menu() {
    let f = Fixture::new(READY).await;
    // As the dashboard's PATCH /api/config would: the tray hears ConfigChanged.
    f.tray
        .api
        .call::<PatchConfig>(
            (),
            ConfigPatch {
                mode: Some(Mode::Rl),
                ..ConfigPatch::default()
            },
        )
        .await
        .unwrap();
    f.tray.on_event(&Event::ConfigChanged).await;
    assert!(f.checked(id::MODE_RL) && !f.checked(id::MODE_SKILLS_ONLY));
    f.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_at_login_writes_the_autostart_entry() {
    let f = Fixture::new("").await;
    f.click(id::AUTOSTART).await;
    assert!(f.checked(id::AUTOSTART));
    let entry = f.dir.path().join("xdg/autostart/metaclaw.desktop");
    let text = std::fs::read_to_string(&entry).unwrap();
    assert!(
        text.contains("Exec=\"/usr/bin/metaclaw-app\" --hidden"),
        "{text}"
    );
    f.click(id::AUTOSTART).await;
    assert!(!entry.exists() && !f.checked(id::AUTOSTART));
    f.stop().await;
}
