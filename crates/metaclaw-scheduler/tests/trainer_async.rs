//! The async trainer API and the background monitor, on tokio's paused clock.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use metaclaw_domain::Clock;
use metaclaw_scheduler::{
    JsonFilePersistence, MemoryPersistence, Scheduler, SchedulerSettings, SchedulerState,
    StatePersistence, TransitionReason, WindowSource,
};

#[tokio::test(start_paused = true)]
async fn wait_for_window_sleeps_until_sleep_hours_without_spinning() {
    // 21:00 UTC; sleep hours start at 23:00.
    let clock = Arc::new(TokioClock::new(utc("2026-05-01T21:00:00Z")));
    let idle = FakeIdle::new(clock.clone(), Some(utc("2026-05-01T20:59:00Z")));
    let s = Scheduler::builder(SchedulerSettings {
        sleep_start: Some("23:00".into()),
        sleep_end: Some("07:00".into()),
        ..gated()
    })
    .clock(clock.clone())
    .time_zone(chrono_tz::UTC)
    .idle_source(idle.clone())
    .build();

    let w = s.wait_for_window().await;
    assert_eq!(w.source, WindowSource::Sleep);
    assert_eq!(clock.now(), utc("2026-05-01T23:00:00Z"));
    assert_eq!(w.end, Some(utc("2026-05-02T07:00:00Z")));
    assert_eq!(s.state(), SchedulerState::WindowOpen);
    // Two hours of waiting cost a bounded number of wake-ups (≤ one a minute).
    assert!(idle.reads() <= 125, "{} idle reads", idle.reads());
}

#[tokio::test(start_paused = true)]
async fn idle_window_opens_when_the_threshold_is_reached() {
    let clock = Arc::new(TokioClock::new(utc("2026-05-01T12:00:00Z")));
    let idle = FakeIdle::new(clock.clone(), Some(utc("2026-05-01T11:50:00Z")));
    let s = Scheduler::builder(SchedulerSettings {
        idle_threshold_minutes: Some(30),
        ..gated()
    })
    .clock(clock.clone())
    .time_zone(chrono_tz::UTC)
    .idle_source(idle.clone())
    .build();
    let w = s.wait_for_window().await;
    assert_eq!(w.source, WindowSource::Idle);
    assert_eq!(clock.now(), utc("2026-05-01T12:20:00Z"));
    // 20 minutes of waiting: at most one wake-up a minute.
    assert!(idle.reads() <= 25, "{} idle reads", idle.reads());
}

#[tokio::test(start_paused = true)]
async fn pause_switch_blocks_and_releases_the_trainer() {
    let clock = Arc::new(TokioClock::new(utc("2026-05-01T02:00:00Z")));
    let s = Scheduler::builder(SchedulerSettings {
        sleep_start: Some("23:00".into()),
        sleep_end: Some("07:00".into()),
        ..gated()
    })
    .clock(clock.clone())
    .time_zone(chrono_tz::UTC)
    .idle_source(FakeIdle::new(clock.clone(), None))
    .build();
    s.set_paused(true);
    assert!(s.should_pause());
    let waiter = {
        let s = s.clone();
        tokio::spawn(async move { s.wait_for_window().await })
    };
    tokio::time::sleep(Duration::from_secs(600)).await;
    assert!(!waiter.is_finished());
    assert_eq!(s.state(), SchedulerState::IdleWait);
    assert_eq!(
        s.status().blocked_reason.as_deref(),
        Some("learning is paused")
    );
    s.set_paused(false);
    let w = tokio::time::timeout(Duration::from_secs(1), waiter)
        .await
        .expect("released at once")
        .unwrap();
    assert_eq!(w.source, WindowSource::Sleep);
    assert!(!s.should_pause());
}

#[tokio::test(start_paused = true)]
async fn background_monitor_moves_updating_to_pausing_when_the_user_returns() {
    let clock = Arc::new(TokioClock::new(utc("2026-05-01T12:00:00Z")));
    let idle = FakeIdle::new(clock.clone(), Some(utc("2026-05-01T11:00:00Z")));
    let persistence = Arc::new(MemoryPersistence::new());
    let s = Scheduler::builder(SchedulerSettings {
        idle_threshold_minutes: Some(30),
        ..gated()
    })
    .clock(clock.clone())
    .time_zone(chrono_tz::UTC)
    .idle_source(idle.clone())
    .persistence(persistence.clone())
    .build();
    let _bg = s.spawn_background();
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(
        s.state(),
        SchedulerState::WindowOpen,
        "opened by the monitor"
    );
    s.started();
    tokio::time::sleep(Duration::from_secs(300)).await;
    assert_eq!(s.state(), SchedulerState::Updating);
    idle.input_now();
    // Detected within one poll interval (10 s), without the trainer asking.
    tokio::time::sleep(Duration::from_secs(11)).await;
    assert_eq!(s.state(), SchedulerState::Pausing);
    assert!(s.should_pause());
    s.finished(Duration::from_secs(310));
    let reasons: Vec<_> = persistence
        .transitions()
        .into_iter()
        .map(|t| t.reason)
        .collect();
    assert_eq!(
        reasons,
        vec![
            TransitionReason::WindowOpened,
            TransitionReason::TrainerStarted,
            TransitionReason::UserReturned,
            TransitionReason::TrainerFinished,
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn ungated_wait_returns_immediately() {
    let clock = Arc::new(TokioClock::new(utc("2026-05-01T12:00:00Z")));
    let s = Scheduler::builder(SchedulerSettings {
        enabled: false,
        mode_auto: false,
        ..SchedulerSettings::default()
    })
    .clock(clock.clone())
    .time_zone(chrono_tz::UTC)
    .idle_source(FakeIdle::new(
        clock.clone(),
        Some(utc("2026-05-01T12:00:00Z")),
    ))
    .build();
    let w = s.wait_for_window().await;
    assert_eq!(w.source, WindowSource::Ungated);
    assert_eq!(clock.now(), utc("2026-05-01T12:00:00Z"));
    s.started();
    assert!(!s.should_pause());
    s.finished(Duration::from_secs(1));
    assert_eq!(s.wait_for_window().await.source, WindowSource::Ungated);
}

#[tokio::test(start_paused = true)]
async fn state_is_restored_after_a_restart() {
    let home = tempfile::tempdir().unwrap();
    let clock = Arc::new(TokioClock::new(utc("2026-05-01T01:00:00Z")));
    let settings = SchedulerSettings {
        sleep_start: Some("23:00".into()),
        sleep_end: Some("07:00".into()),
        ..gated()
    };
    let first = Scheduler::builder(settings.clone())
        .clock(clock.clone())
        .time_zone(chrono_tz::UTC)
        .idle_source(FakeIdle::new(clock.clone(), None))
        .home(home.path())
        .build();
    first.wait_for_window().await;
    first.started();
    tokio::time::sleep(Duration::from_secs(600)).await;
    first.finished(Duration::from_secs(600));
    first.set_paused(true);
    first.set_paused(false);
    first.wait_for_window().await;
    first.started(); // the process dies during this step
    tokio::time::sleep(Duration::from_secs(60)).await;
    drop(first);

    assert!(home.path().join("scheduler_state.json").exists());
    let log = std::fs::read_to_string(home.path().join("scheduler_transitions.jsonl")).unwrap();
    assert_eq!(log.lines().count(), 7);

    let second = Scheduler::builder(settings.clone())
        .clock(clock.clone())
        .time_zone(chrono_tz::UTC)
        .idle_source(FakeIdle::new(clock.clone(), None))
        .home(home.path())
        .build();
    // The interrupted step is closed; the measured step duration survived.
    assert_eq!(second.state(), SchedulerState::IdleWait);
    assert_eq!(second.step_estimate(), Some(Duration::from_secs(600)));
    assert!(!second.is_paused());
    let last = JsonFilePersistence::new(home.path())
        .load()
        .unwrap()
        .recent
        .last()
        .cloned()
        .unwrap();
    assert_eq!(last.reason, TransitionReason::RecoveredAfterRestart);
    // Past training shows up in the timeline of the new process.
    let training: Vec<_> = second
        .timeline(clock.now(), Duration::from_secs(6 * 3600))
        .into_iter()
        .filter(|b| b.kind == metaclaw_scheduler::BandKind::Training)
        .map(|b| (b.start, b.end))
        .collect();
    assert_eq!(
        training,
        vec![
            (utc("2026-05-01T01:00:00Z"), utc("2026-05-01T01:10:00Z")),
            (utc("2026-05-01T01:10:00Z"), utc("2026-05-01T01:11:00Z")),
        ]
    );

    // A paused flag survives too.
    second.set_paused(true);
    drop(second);
    let third = Scheduler::builder(settings)
        .clock(clock.clone())
        .time_zone(chrono_tz::UTC)
        .idle_source(FakeIdle::new(clock.clone(), None))
        .home(home.path())
        .build();
    assert!(third.is_paused());
    assert!(third.should_pause());
}
