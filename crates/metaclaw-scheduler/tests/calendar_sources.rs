//! Calendar files (broken input, live edits) and URLs (ETag, errors).

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use metaclaw_domain::ManualClock;
use metaclaw_scheduler::{
    CalendarSettings, FetchResponse, Scheduler, SchedulerSettings, SchedulerState, WindowSource,
};

fn calendar_settings(paths: Vec<std::path::PathBuf>, urls: Vec<String>) -> SchedulerSettings {
    SchedulerSettings {
        calendar: CalendarSettings {
            enabled: true,
            paths,
            urls,
            ..CalendarSettings::default()
        },
        ..gated()
    }
}

#[test]
fn broken_and_missing_files_are_reported_and_skipped() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("good.ics"),
        ics(&event("g", "20260501T130000Z", "20260501T140000Z", "")),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("broken.ics"),
        b"BEGIN:VCALENDAR\r\nthis is not ical\r\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("binary.ics"), [0xffu8, 0x00, 0xfe, 0x13]).unwrap();
    std::fs::write(
        dir.path().join("partly.ics"),
        ics(concat!(
            "BEGIN:VEVENT\nUID:nostart\nSUMMARY:no start\nEND:VEVENT\n",
            "BEGIN:VEVENT\nUID:badtz\nDTSTART;TZID=Mars/Base:20260501T150000\nDTEND;TZID=Mars/Base:20260501T160000\nEND:VEVENT\n",
            "BEGIN:VEVENT\nUID:ok\nDTSTART:20260501T170000Z\nDURATION:PT1H\nEND:VEVENT\n",
        )),
    )
    .unwrap();
    std::fs::write(dir.path().join("notes.txt"), b"ignored").unwrap();
    let missing = dir.path().join("nope.ics");

    let clock = ManualClock::new(utc("2026-05-01T13:30:00Z"));
    let s = Scheduler::builder(calendar_settings(
        vec![dir.path().to_owned(), missing],
        vec![],
    ))
    .clock(Arc::new(clock.clone()))
    .time_zone(chrono_tz::UTC)
    .idle_source(FakeIdle::new(Arc::new(clock.clone()), None))
    .build();
    assert_eq!(
        s.tick(),
        SchedulerState::WindowOpen,
        "good.ics still counts"
    );
    let st = s.status();
    let cal = &st.sources.calendar;
    let files: Vec<_> = cal
        .files
        .iter()
        .map(|f| f.path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files, vec!["good.ics", "partly.ics"]);
    let problem_for = |name: &str| {
        cal.problems
            .iter()
            .filter(|p| p.source.ends_with(name))
            .map(|p| p.reason.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(problem_for("broken.ics").len(), 1, "{:?}", cal.problems);
    assert_eq!(problem_for("binary.ics").len(), 1, "{:?}", cal.problems);
    assert_eq!(problem_for("nope.ics").len(), 1, "{:?}", cal.problems);
    let partly = problem_for("partly.ics");
    assert_eq!(partly.len(), 2, "{partly:?}");
    assert!(partly.iter().any(|r| r.contains("no DTSTART")));
    assert!(partly.iter().any(|r| r.contains("Mars/Base")));
    // The valid event in the partly broken file is used.
    let next = s.next_window(utc("2026-05-01T14:30:00Z")).unwrap();
    assert_eq!(next.start, utc("2026-05-01T17:00:00Z"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn editing_a_watched_file_changes_the_next_window() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("me.ics");
    std::fs::write(
        &file,
        ics(&event("a", "20260501T150000Z", "20260501T160000Z", "")),
    )
    .unwrap();
    let clock = ManualClock::new(utc("2026-05-01T12:00:00Z"));
    let s = Scheduler::builder(calendar_settings(vec![file.clone()], vec![]))
        .clock(Arc::new(clock.clone()))
        .time_zone(chrono_tz::UTC)
        .idle_source(FakeIdle::new(Arc::new(clock.clone()), None))
        .build();
    let now = utc("2026-05-01T12:00:00Z");
    assert_eq!(
        s.next_window(now).unwrap().start,
        utc("2026-05-01T15:00:00Z")
    );
    let _bg = s.spawn_background();
    tokio::time::sleep(Duration::from_millis(100)).await;

    // An editor-style save: write a temp file, then rename it over the original.
    let tmp = dir.path().join(".me.ics.tmp");
    std::fs::write(
        &tmp,
        ics(&event("a", "20260501T133000Z", "20260501T143000Z", "")),
    )
    .unwrap();
    std::fs::rename(&tmp, &file).unwrap();

    let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
    loop {
        let w = s.next_window(now).unwrap();
        if w.start == utc("2026-05-01T13:30:00Z") {
            assert_eq!(w.end, Some(utc("2026-05-01T14:30:00Z")));
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the edit was not picked up within 3 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // Deleting the file removes the window and reports the problem.
    std::fs::remove_file(&file).unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
    loop {
        let st = s.status();
        if st.sources.calendar.files.is_empty() && !st.sources.calendar.problems.is_empty() {
            assert!(s.next_window(now).is_none());
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "removal not seen");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn url_fetch_uses_etags_keeps_copies_and_reports_errors() {
    let good = "https://cal.example/team.ics";
    let down = "https://down.example/x.ics";
    let fetcher = Arc::new(FakeFetcher::default());
    let clock = ManualClock::new(utc("2026-05-01T12:00:00Z"));
    let s = Scheduler::builder(calendar_settings(vec![], vec![good.into(), down.into()]))
        .clock(Arc::new(clock.clone()))
        .time_zone(chrono_tz::UTC)
        .idle_source(FakeIdle::new(Arc::new(clock.clone()), None))
        .fetcher(fetcher.clone())
        .build();
    let now = utc("2026-05-01T12:00:00Z");
    assert!(s.next_window(now).is_none());

    // 1st round: 200 with an ETag; the other URL is unreachable.
    fetcher.push(
        good,
        Ok(FetchResponse::Body {
            bytes: ics(&event("t", "20260501T150000Z", "20260501T160000Z", "")).into_bytes(),
            etag: Some("\"v1\"".into()),
        }),
    );
    fetcher.push(down, Err("connection refused".into()));
    s.refresh_calendar_urls().await;
    assert_eq!(
        s.next_window(now).unwrap().start,
        utc("2026-05-01T15:00:00Z")
    );
    let st = s.status();
    let urls = &st.sources.calendar.urls;
    assert_eq!(urls[0].events, Some(1));
    assert_eq!(urls[0].etag.as_deref(), Some("\"v1\""));
    assert_eq!(urls[1].events, None);
    assert_eq!(st.sources.calendar.problems.len(), 1);
    assert_eq!(st.sources.calendar.problems[0].source, down);
    assert!(
        st.sources.calendar.problems[0]
            .reason
            .contains("connection refused")
    );

    // 2nd round: 304 keeps the old calendar; the ETag was sent.
    clock.set(utc("2026-05-01T12:30:00Z"));
    fetcher.push(good, Ok(FetchResponse::NotModified));
    fetcher.push(down, Err("timed out".into()));
    s.refresh_calendar_urls().await;
    let requests = fetcher.requests.lock().unwrap().clone();
    assert_eq!(requests[2], (good.to_owned(), Some("\"v1\"".to_owned())));
    assert_eq!(requests[3], (down.to_owned(), None));
    assert_eq!(
        s.next_window(now).unwrap().start,
        utc("2026-05-01T15:00:00Z")
    );
    let st = s.status();
    assert!(st.sources.calendar.urls[0].not_modified);
    assert_eq!(
        st.sources.calendar.urls[0].last_success,
        Some(utc("2026-05-01T12:30:00Z"))
    );

    // 3rd round: the good URL fails (kept copy, reported), then returns garbage (kept, reported).
    fetcher.push(good, Err("HTTP 503 Service Unavailable".into()));
    s.refresh_calendar_urls().await;
    let st = s.status();
    let p: Vec<_> = st
        .sources
        .calendar
        .problems
        .iter()
        .filter(|p| p.source == good)
        .collect();
    assert_eq!(p.len(), 1);
    assert!(p[0].reason.contains("503") && p[0].reason.contains("last successful fetch"));
    assert_eq!(
        s.next_window(now).unwrap().start,
        utc("2026-05-01T15:00:00Z")
    );

    fetcher.push(
        good,
        Ok(FetchResponse::Body {
            bytes: b"<html>login page</html>".to_vec(),
            etag: Some("\"v2\"".into()),
        }),
    );
    s.refresh_calendar_urls().await;
    let st = s.status();
    assert_eq!(st.sources.calendar.urls[0].etag.as_deref(), Some("\"v1\""));
    assert!(
        st.sources
            .calendar
            .problems
            .iter()
            .any(|p| p.source == good && p.reason.contains("no VCALENDAR"))
    );

    // A new version replaces the calendar and moves the window.
    fetcher.push(
        good,
        Ok(FetchResponse::Body {
            bytes: ics(&event("t", "20260501T180000Z", "20260501T190000Z", "")).into_bytes(),
            etag: Some("\"v3\"".into()),
        }),
    );
    s.refresh_calendar_urls().await;
    let w = s.next_window(now).unwrap();
    assert_eq!(
        (w.start, w.source),
        (utc("2026-05-01T18:00:00Z"), WindowSource::Calendar)
    );
    assert!(
        !s.status()
            .sources
            .calendar
            .problems
            .iter()
            .any(|p| p.source == good)
    );
}

#[tokio::test]
async fn real_http_fetcher_reports_unreachable_urls() {
    // Nothing listens on port 9 of a TEST-NET address / a closed local port: an error, no panic.
    let f = metaclaw_scheduler::HttpFetcher::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let r = metaclaw_scheduler::CalendarFetcher::fetch(
        &f,
        &format!("http://127.0.0.1:{port}/cal.ics"),
        Some("\"x\""),
    )
    .await;
    assert!(r.is_err(), "{r:?}");
}
