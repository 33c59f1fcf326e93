//! The scheduler inside the daemon: calendar files from config.yaml, edited on disk, move the
//! next training window that the dashboard shows.

mod support;

use std::time::Duration;

use chrono::Utc;
use serde_json::Value;
use support::Harness;

fn ics(start: chrono::DateTime<Utc>, minutes: i64) -> String {
    let fmt = |t: chrono::DateTime<Utc>| t.format("%Y%m%dT%H%M%SZ").to_string();
    format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//metaclaw//test//EN\r\nBEGIN:VEVENT\r\nUID:meeting-1\r\nDTSTAMP:{}\r\nDTSTART:{}\r\nDTEND:{}\r\nSUMMARY:Team sync\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
        fmt(start),
        fmt(start),
        fmt(start + chrono::Duration::minutes(minutes))
    )
}

async fn next_start(h: &Harness, token: &str) -> Option<String> {
    let v: Value = h
        .client
        .get(format!("{}/api/scheduler", h.base))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    v["next_window"]["start"].as_str().map(str::to_owned)
}

#[tokio::test]
async fn an_edited_calendar_file_moves_the_next_window() {
    let dir = tempfile::tempdir().unwrap();
    let cal = dir.path().join("work.ics");
    // Whole minutes: .ics times have no fractions.
    let t = (Utc::now() + chrono::Duration::hours(2)).timestamp();
    let first = chrono::DateTime::from_timestamp(t - t % 60, 0).unwrap();
    std::fs::write(&cal, ics(first, 60)).unwrap();
    let path = cal.display().to_string();
    let h = Harness::start_with(move |c| {
        c.scheduler.enabled = true;
        c.scheduler.sleep_enabled = false;
        c.scheduler.idle_enabled = false;
        c.scheduler.calendar.enabled = true;
        c.scheduler.calendar.paths = vec![path];
    })
    .await;
    let token = std::fs::read_to_string(h.home().join("dashboard.token"))
        .unwrap()
        .trim()
        .to_owned();
    let expected = first.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let got = next_start(&h, &token).await.expect("a calendar window");
    assert_eq!(
        chrono::DateTime::parse_from_rfc3339(&got).unwrap(),
        chrono::DateTime::parse_from_rfc3339(&expected).unwrap()
    );

    let moved = first + chrono::Duration::hours(3);
    std::fs::write(&cal, ics(moved, 60)).unwrap();
    let mut now_start = None;
    for _ in 0..60 {
        now_start = next_start(&h, &token).await;
        if now_start
            .as_deref()
            .map(|s| chrono::DateTime::parse_from_rfc3339(s).unwrap())
            == Some(moved.into())
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        now_start.map(|s| chrono::DateTime::parse_from_rfc3339(&s).unwrap()),
        Some(moved.into()),
        "the watcher did not pick up the edit"
    );
    let status: Value = h
        .client
        .get(format!("{}/api/status", h.base))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(status["scheduler"]["enabled"].as_bool().unwrap());
    h.stop().await;
}
