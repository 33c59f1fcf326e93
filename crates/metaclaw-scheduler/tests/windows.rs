//! Window rules and the state machine, with an injected clock and idle source.

mod common;

use std::sync::Arc;
use std::time::Duration;

use chrono::Duration as CDur;
use common::*;
use metaclaw_domain::ManualClock;
use metaclaw_scheduler::{
    BandKind, CalendarSettings, IdleSourceUsed, NoIdleSource, Scheduler, SchedulerSettings,
    SchedulerState, TransitionReason, WindowSource,
};

fn sleep_settings(start: &str, end: &str) -> SchedulerSettings {
    SchedulerSettings {
        sleep_start: Some(start.into()),
        sleep_end: Some(end.into()),
        ..gated()
    }
}

fn build(
    settings: SchedulerSettings,
    clock: &ManualClock,
    tz: chrono_tz::Tz,
    last_input: Option<&str>,
) -> (Scheduler, Arc<FakeIdle>) {
    let clock: Arc<ManualClock> = Arc::new(clock.clone());
    let idle = FakeIdle::new(clock.clone(), last_input.map(utc));
    let s = Scheduler::builder(settings)
        .clock(clock)
        .time_zone(tz)
        .idle_source(idle.clone())
        .build();
    (s, idle)
}

#[test]
fn sleep_window_across_midnight_and_min_window() {
    // Berlin winter: 23:00–07:00 local = 22:00Z–06:00Z. The user last typed at 21:00Z.
    let clock = ManualClock::new(utc("2026-01-15T21:30:00Z"));
    let (s, _) = build(
        sleep_settings("23:00", "07:00"),
        &clock,
        chrono_tz::Europe::Berlin,
        Some("2026-01-15T21:00:00Z"),
    );
    assert_eq!(s.tick(), SchedulerState::IdleWait);
    let next = s.next_window(clock.now_utc()).unwrap();
    assert_eq!(next.source, WindowSource::Sleep);
    assert_eq!(next.start, utc("2026-01-15T22:00:00Z"));
    assert_eq!(next.end, Some(utc("2026-01-16T06:00:00Z")));

    clock.set(utc("2026-01-16T02:00:00Z")); // 03:00 local, after midnight
    assert_eq!(s.tick(), SchedulerState::WindowOpen);
    let st = s.status();
    assert_eq!(st.window.unwrap().end, Some(utc("2026-01-16T06:00:00Z")));
    assert!(st.sources.sleep.current.is_some());

    // 06:44 local: 16 min left ≥ 15 → still open. 06:46: 14 min < 15 → closes before start.
    clock.set(utc("2026-01-16T05:44:00Z"));
    assert_eq!(s.tick(), SchedulerState::WindowOpen);
    clock.set(utc("2026-01-16T05:46:00Z"));
    assert_eq!(s.tick(), SchedulerState::IdleWait);
    let st = s.status();
    assert!(st.window.is_none());
    assert!(st.user_away, "still sleep hours");
    assert!(
        st.blocked_reason
            .as_deref()
            .unwrap()
            .contains("ends in 14 min"),
        "{:?}",
        st.blocked_reason
    );
}

#[test]
fn step_estimate_raises_the_known_window_minimum() {
    let clock = ManualClock::new(utc("2026-01-16T05:00:00Z")); // 06:00 Berlin, 60 min left
    let (s, _) = build(
        sleep_settings("23:00", "07:00"),
        &clock,
        chrono_tz::Europe::Berlin,
        None,
    );
    assert_eq!(s.tick(), SchedulerState::WindowOpen);
    s.started();
    for _ in 0..3 {
        s.finished(Duration::from_secs(70 * 60));
    }
    assert_eq!(s.step_estimate(), Some(Duration::from_secs(70 * 60)));
    // 60 min left < 70 min step estimate: no new step.
    assert_eq!(s.tick(), SchedulerState::IdleWait);
    assert!(s.status().blocked_reason.unwrap().contains("1h10m"));
    // The next night is long enough.
    let next = s.next_window(clock.now_utc()).unwrap();
    assert_eq!(next.start, utc("2026-01-16T22:00:00Z"));
}

#[test]
fn dst_nights_in_berlin_and_new_york() {
    let clock = ManualClock::new(utc("2026-03-28T12:00:00Z"));
    let (s, _) = build(
        sleep_settings("23:00", "07:00"),
        &clock,
        chrono_tz::Europe::Berlin,
        Some("2026-03-28T12:00:00Z"),
    );
    let w = s.next_window(clock.now_utc()).unwrap();
    assert_eq!(
        (w.start, w.end),
        (
            utc("2026-03-28T22:00:00Z"),
            Some(utc("2026-03-29T05:00:00Z"))
        ),
        "spring forward: 7 h"
    );
    clock.set(utc("2026-10-24T12:00:00Z"));
    let w = s.next_window(clock.now_utc()).unwrap();
    assert_eq!(
        (w.start, w.end),
        (
            utc("2026-10-24T21:00:00Z"),
            Some(utc("2026-10-25T06:00:00Z"))
        ),
        "fall back: 9 h"
    );
    // Inside the repeated hour (02:30 CET, second pass) the window is open.
    clock.set(utc("2026-10-25T01:30:00Z"));
    assert_eq!(s.tick(), SchedulerState::WindowOpen);

    let clock = ManualClock::new(utc("2026-03-07T12:00:00Z"));
    let (s, _) = build(
        sleep_settings("23:00", "07:00"),
        &clock,
        chrono_tz::America::New_York,
        Some("2026-03-07T12:00:00Z"),
    );
    let w = s.next_window(clock.now_utc()).unwrap();
    // 23:00 EST = 04:00Z; 07:00 EDT = 11:00Z.
    assert_eq!(
        (w.start, w.end),
        (
            utc("2026-03-08T04:00:00Z"),
            Some(utc("2026-03-08T11:00:00Z"))
        )
    );
    let bands = s.timeline(utc("2026-03-08T12:00:00Z"), Duration::from_secs(86_400));
    let sleep: Vec<_> = bands.iter().filter(|b| b.kind == BandKind::Sleep).collect();
    assert_eq!(sleep.len(), 2);
    assert_eq!(sleep[0].end - sleep[0].start, CDur::hours(7));
}

#[test]
fn idle_window_rule_uses_the_step_estimate() {
    let settings = SchedulerSettings {
        idle_threshold_minutes: Some(30),
        ..gated()
    };
    let clock = ManualClock::new(utc("2026-05-01T12:00:00Z"));
    let (s, idle) = build(
        settings,
        &clock,
        chrono_tz::UTC,
        Some("2026-05-01T11:40:00Z"),
    );
    assert_eq!(s.tick(), SchedulerState::IdleWait, "idle 20 min < 30");
    clock.set(utc("2026-05-01T12:10:00Z"));
    assert_eq!(
        s.tick(),
        SchedulerState::WindowOpen,
        "idle 30 min, no estimate yet"
    );
    let st = s.status();
    let w = st.window.unwrap();
    assert_eq!(w.source, WindowSource::Idle);
    assert_eq!(w.end, None);
    assert_eq!(w.start, utc("2026-05-01T11:40:00Z"));
    assert_eq!(st.sources.idle.source_used, IdleSourceUsed::Os);

    // Measured steps take 45 min: a 30-min absence is not enough evidence.
    s.started();
    s.finished(Duration::from_secs(45 * 60));
    idle.set_last_input(Some(utc("2026-05-01T12:10:00Z")));
    clock.set(utc("2026-05-01T12:45:00Z")); // idle 35 min
    assert_eq!(s.tick(), SchedulerState::IdleWait);
    assert!(
        s.status()
            .blocked_reason
            .unwrap()
            .contains("step takes about 45 min")
    );
    clock.set(utc("2026-05-01T12:55:00Z")); // idle 45 min
    assert_eq!(s.tick(), SchedulerState::WindowOpen);
}

#[test]
fn proxy_activity_is_the_fallback_without_os_idle() {
    let settings = SchedulerSettings {
        idle_threshold_minutes: Some(30),
        ..gated()
    };
    let clock = ManualClock::new(utc("2026-05-01T12:00:00Z"));
    let s = Scheduler::builder(settings)
        .clock(Arc::new(clock.clone()))
        .time_zone(chrono_tz::UTC)
        .idle_source(Arc::new(NoIdleSource {
            reason: "no DISPLAY".into(),
        }))
        .build();
    s.note_activity(utc("2026-05-01T12:05:00Z"));
    clock.set(utc("2026-05-01T12:30:00Z"));
    let st = s.status();
    assert_eq!(st.sources.idle.source_used, IdleSourceUsed::ProxyActivity);
    assert!(matches!(
        st.sources.idle.reading,
        metaclaw_scheduler::IdleReading::Unknown { ref reason } if reason == "no DISPLAY"
    ));
    assert_eq!(st.sources.idle.idle_secs, 25 * 60);
    assert_eq!(s.tick(), SchedulerState::IdleWait);
    clock.set(utc("2026-05-01T12:35:00Z"));
    assert_eq!(s.tick(), SchedulerState::WindowOpen);
    s.started();
    assert!(!s.should_pause());
    // A request comes in: the user (or their agent) is back.
    s.note_activity(utc("2026-05-01T12:36:00Z"));
    clock.set(utc("2026-05-01T12:36:00Z"));
    assert!(s.should_pause());
    assert_eq!(s.state(), SchedulerState::Pausing);
    s.interrupted();
    assert_eq!(s.state(), SchedulerState::IdleWait);
}

#[test]
fn pause_when_the_user_returns_mid_update() {
    // (a) idle resets during an idle window
    let settings = SchedulerSettings {
        idle_threshold_minutes: Some(30),
        ..gated()
    };
    let clock = ManualClock::new(utc("2026-05-01T12:00:00Z"));
    let (s, idle) = build(
        settings,
        &clock,
        chrono_tz::UTC,
        Some("2026-05-01T11:00:00Z"),
    );
    assert_eq!(s.tick(), SchedulerState::WindowOpen);
    s.started();
    clock.set(utc("2026-05-01T12:05:00Z"));
    assert!(!s.should_pause());
    idle.input_now();
    // The cached reading is at most `poll_seconds` old.
    clock.set(utc("2026-05-01T12:05:11Z"));
    assert!(s.should_pause());
    assert_eq!(s.state(), SchedulerState::Pausing);
    s.finished(Duration::from_secs(300));
    assert_eq!(s.state(), SchedulerState::IdleWait);

    // (b) the calendar event ends (no other source open)
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("work.ics");
    std::fs::write(
        &f,
        ics(&event("m", "20260501T130000Z", "20260501T140000Z", "")),
    )
    .unwrap();
    let settings = SchedulerSettings {
        calendar: CalendarSettings {
            enabled: true,
            paths: vec![f],
            ..CalendarSettings::default()
        },
        ..gated()
    };
    let clock = ManualClock::new(utc("2026-05-01T13:05:00Z"));
    let (s, _) = build(
        settings,
        &clock,
        chrono_tz::UTC,
        Some("2026-05-01T12:00:00Z"),
    );
    assert_eq!(s.tick(), SchedulerState::WindowOpen);
    assert_eq!(s.status().window.unwrap().source, WindowSource::Calendar);
    s.started();
    clock.set(utc("2026-05-01T13:59:00Z"));
    assert!(!s.should_pause());
    clock.set(utc("2026-05-01T14:00:00Z"));
    assert_eq!(s.tick(), SchedulerState::Pausing);
    assert!(s.should_pause());

    // (c) sleep hours end
    let clock = ManualClock::new(utc("2026-05-01T05:00:00Z"));
    let (s, _) = build(
        sleep_settings("23:00", "07:00"),
        &clock,
        chrono_tz::UTC,
        Some("2026-05-01T00:00:00Z"),
    );
    assert_eq!(s.tick(), SchedulerState::WindowOpen);
    s.started();
    clock.set(utc("2026-05-01T07:00:00Z"));
    assert!(s.should_pause());
    assert_eq!(s.state(), SchedulerState::Pausing);

    // (d) sleep hours, but OS input shows the user at the computer: presence veto.
    let clock = ManualClock::new(utc("2026-05-01T05:00:00Z"));
    let (s, idle) = build(
        sleep_settings("23:00", "07:00"),
        &clock,
        chrono_tz::UTC,
        Some("2026-05-01T00:00:00Z"),
    );
    assert_eq!(s.tick(), SchedulerState::WindowOpen);
    s.started();
    idle.input_now();
    clock.set(utc("2026-05-01T05:00:30Z"));
    assert_eq!(s.tick(), SchedulerState::Pausing);
    s.finished(Duration::from_secs(30));
    assert_eq!(s.tick(), SchedulerState::IdleWait);
    // Away from the keyboard for 2 minutes: the sleep window counts again.
    clock.set(utc("2026-05-01T05:02:30Z"));
    assert_eq!(s.tick(), SchedulerState::WindowOpen);
}

#[test]
fn known_windows_chain_and_calendar_filters_apply() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("cal.ics");
    let body = [
        // A meeting right before sleep hours: the window runs 21:30–07:00.
        event("late", "20260501T213000Z", "20260501T230000Z", ""),
        // Declined and transparent events are not busy.
        event(
            "declined",
            "20260502T100000Z",
            "20260502T110000Z",
            "ATTENDEE;PARTSTAT=DECLINED:mailto:me@example.com\n",
        ),
        event("free", "20260502T120000Z", "20260502T130000Z", "TRANSP:TRANSPARENT\n"),
        event("off", "20260502T140000Z", "20260502T150000Z", "STATUS:CANCELLED\n"),
        "BEGIN:VEVENT\nUID:allday\nDTSTART;VALUE=DATE:20260502\nDTEND;VALUE=DATE:20260503\nEND:VEVENT\n".into(),
        event("real", "20260502T160000Z", "20260502T170000Z", ""),
    ]
    .concat();
    std::fs::write(&f, ics(&body)).unwrap();
    let settings = SchedulerSettings {
        sleep_start: Some("23:00".into()),
        sleep_end: Some("07:00".into()),
        calendar: CalendarSettings {
            enabled: true,
            paths: vec![dir.path().to_owned()],
            user_email: Some("Me@Example.com".into()),
            ..CalendarSettings::default()
        },
        ..gated()
    };
    let clock = ManualClock::new(utc("2026-05-01T21:45:00Z"));
    let (s, _) = build(
        settings,
        &clock,
        chrono_tz::UTC,
        Some("2026-05-01T20:00:00Z"),
    );
    assert_eq!(s.tick(), SchedulerState::WindowOpen);
    let w = s.status().window.unwrap();
    assert_eq!(w.source, WindowSource::Calendar);
    assert_eq!(w.start, utc("2026-05-01T21:30:00Z"));
    assert_eq!(w.end, Some(utc("2026-05-02T07:00:00Z")));

    // After the night, the next window is the 16:00 meeting (others are filtered out).
    let next = s.next_window(utc("2026-05-02T08:00:00Z")).unwrap();
    assert_eq!(next.start, utc("2026-05-02T16:00:00Z"));
    assert_eq!(next.source, WindowSource::Calendar);
}

#[test]
fn recurring_event_with_exdate_and_tzid_drives_windows() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("team.ics");
    std::fs::write(
        &f,
        ics("BEGIN:VEVENT\nUID:weekly\nDTSTART;TZID=America/New_York:20260302T090000\nDTEND;TZID=America/New_York:20260302T100000\nRRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=4\nEXDATE;TZID=America/New_York:20260316T090000\nEND:VEVENT\n"),
    )
    .unwrap();
    let settings = SchedulerSettings {
        calendar: CalendarSettings {
            enabled: true,
            paths: vec![f],
            ..CalendarSettings::default()
        },
        ..gated()
    };
    let clock = ManualClock::new(utc("2026-03-09T00:00:00Z"));
    let (s, _) = build(
        settings,
        &clock,
        chrono_tz::America::New_York,
        Some("2026-03-01T00:00:00Z"),
    );
    // 2026-03-09 is after the US DST change: 09:00 EDT = 13:00Z.
    let w = s.next_window(clock.now_utc()).unwrap();
    assert_eq!(w.start, utc("2026-03-09T13:00:00Z"));
    // 2026-03-16 is excluded; the next one is 2026-03-23.
    let w = s.next_window(utc("2026-03-09T15:00:00Z")).unwrap();
    assert_eq!(w.start, utc("2026-03-23T13:00:00Z"));
    clock.set(utc("2026-03-16T13:30:00Z"));
    assert_eq!(s.tick(), SchedulerState::IdleWait);
    clock.set(utc("2026-03-23T13:30:00Z"));
    assert_eq!(s.tick(), SchedulerState::WindowOpen);
}

#[test]
fn ungated_mode_always_says_go() {
    let settings = SchedulerSettings {
        enabled: false,
        mode_auto: false,
        ..SchedulerSettings::default()
    };
    let clock = ManualClock::new(utc("2026-05-01T12:00:00Z"));
    let (s, _) = build(
        settings,
        &clock,
        chrono_tz::UTC,
        Some("2026-05-01T12:00:00Z"),
    );
    assert_eq!(s.tick(), SchedulerState::WindowOpen);
    assert_eq!(s.status().window.unwrap().source, WindowSource::Ungated);
    s.started();
    assert!(!s.should_pause());
    s.set_paused(true);
    assert!(s.should_pause());
    assert_eq!(s.state(), SchedulerState::Pausing);
}

#[test]
fn timeline_shows_sleep_calendar_and_training() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("c.ics");
    std::fs::write(
        &f,
        ics(&event("x", "20260501T150000Z", "20260501T160000Z", "")),
    )
    .unwrap();
    let settings = SchedulerSettings {
        sleep_start: Some("23:00".into()),
        sleep_end: Some("07:00".into()),
        calendar: CalendarSettings {
            enabled: true,
            paths: vec![f],
            ..CalendarSettings::default()
        },
        ..gated()
    };
    let clock = ManualClock::new(utc("2026-05-01T02:00:00Z"));
    let (s, _) = build(
        settings,
        &clock,
        chrono_tz::UTC,
        Some("2026-05-01T00:00:00Z"),
    );
    assert_eq!(s.tick(), SchedulerState::WindowOpen);
    s.started();
    clock.set(utc("2026-05-01T02:20:00Z"));
    s.finished(Duration::from_secs(1200));
    assert_eq!(s.tick(), SchedulerState::WindowOpen);
    s.started();
    clock.set(utc("2026-05-01T02:30:00Z"));

    let bands = s.timeline(utc("2026-05-01T12:00:00Z"), Duration::from_secs(12 * 3600));
    let kinds: Vec<_> = bands.iter().map(|b| (b.kind, b.start, b.end)).collect();
    assert_eq!(
        kinds,
        vec![
            (
                BandKind::Sleep,
                utc("2026-05-01T00:00:00Z"), // clipped to the range
                utc("2026-05-01T07:00:00Z")
            ),
            (
                BandKind::Training,
                utc("2026-05-01T02:00:00Z"),
                utc("2026-05-01T02:20:00Z")
            ),
            // The running step is shown up to the present.
            (
                BandKind::Training,
                utc("2026-05-01T02:20:00Z"),
                utc("2026-05-01T02:30:00Z")
            ),
            (
                BandKind::Calendar,
                utc("2026-05-01T15:00:00Z"),
                utc("2026-05-01T16:00:00Z")
            ),
            (
                BandKind::Sleep,
                utc("2026-05-01T23:00:00Z"),
                utc("2026-05-02T00:00:00Z")
            ),
        ]
    );
}

#[test]
fn window_closing_before_the_trainer_starts_goes_back_to_idle_wait() {
    let persistence = Arc::new(metaclaw_scheduler::MemoryPersistence::new());
    let clock = ManualClock::new(utc("2026-05-01T06:00:00Z"));
    let s = Scheduler::builder(sleep_settings("23:00", "07:00"))
        .clock(Arc::new(clock.clone()))
        .time_zone(chrono_tz::UTC)
        .idle_source(FakeIdle::new(
            Arc::new(clock.clone()),
            Some(utc("2026-05-01T00:00:00Z")),
        ))
        .persistence(persistence.clone())
        .build();
    assert_eq!(s.tick(), SchedulerState::WindowOpen);
    clock.set(utc("2026-05-01T06:50:00Z"));
    assert_eq!(s.tick(), SchedulerState::IdleWait);
    let reasons: Vec<_> = persistence.transitions().iter().map(|t| t.reason).collect();
    assert_eq!(
        reasons,
        vec![
            TransitionReason::WindowOpened,
            TransitionReason::WindowClosed
        ]
    );
}

/// `ManualClock::now` without importing the trait everywhere.
trait NowUtc {
    fn now_utc(&self) -> chrono::DateTime<chrono::Utc>;
}

impl NowUtc for ManualClock {
    fn now_utc(&self) -> chrono::DateTime<chrono::Utc> {
        metaclaw_domain::Clock::now(self)
    }
}
