//! The OMLS scheduler as the running app uses it: settings from config.yaml, the user's
//! activity from the proxy, the pause switch from the live config.

use std::path::PathBuf;
use std::sync::Arc;

use metaclaw_config::{Config, Home, Mode};
use metaclaw_domain::{Clock, Event};
use metaclaw_scheduler::{CalendarSettings, OsIdleSource, Scheduler, SchedulerSettings};
use tokio::sync::broadcast;

use crate::live::LiveConfig;

fn expand(path: &str, home: &Home) -> PathBuf {
    match path.strip_prefix("~/") {
        Some(rest) => std::env::var("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|_| home.root().to_owned())
            .join(rest),
        None => PathBuf::from(path),
    }
}

pub fn settings_from(config: &Config, home: &Home) -> SchedulerSettings {
    let s = &config.scheduler;
    let c = &s.calendar;
    SchedulerSettings {
        enabled: s.enabled,
        mode_auto: config.mode == Mode::Auto,
        sleep_start: s.sleep_enabled.then(|| s.sleep_start.clone()),
        sleep_end: s.sleep_enabled.then(|| s.sleep_end.clone()),
        idle_threshold_minutes: s.idle_enabled.then_some(s.idle_threshold_minutes),
        min_window_minutes: s.min_window_minutes,
        calendar: CalendarSettings {
            enabled: c.enabled,
            paths: c.paths.iter().map(|p| expand(p, home)).collect(),
            urls: c.urls.clone(),
            user_email: (!c.user_email.is_empty()).then(|| c.user_email.clone()),
            include_all_day: c.include_all_day,
            refresh_minutes: c.refresh_minutes,
        },
        poll_seconds: s.poll_seconds,
    }
}

/// The scheduler for a home directory; its state survives restarts in the home.
pub fn build(config: &Config, home: &Home, clock: Arc<dyn Clock>) -> Scheduler {
    Scheduler::builder(settings_from(config, home))
        .clock(clock)
        .idle_source(Arc::new(OsIdleSource::new()))
        .home(home.root())
        .build()
}

/// Proxied requests count as the user being present; the pause switch and the settings
/// (sleep hours, idle, calendars, mode auto) follow the config.
pub(crate) async fn follow_events(
    scheduler: Arc<Scheduler>,
    mut rx: broadcast::Receiver<Event>,
    live: Arc<LiveConfig>,
    clock: Arc<dyn Clock>,
    home: Home,
) {
    scheduler.set_paused(live.get().learning_paused);
    loop {
        match rx.recv().await {
            Ok(Event::TurnCompleted { .. }) => scheduler.note_activity(clock.now()),
            Ok(Event::ConfigChanged) => {
                let config = live.get();
                scheduler.reconfigure(settings_from(&config, &home));
                scheduler.set_paused(config.learning_paused);
            }
            Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}
