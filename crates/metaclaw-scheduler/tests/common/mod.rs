#![allow(dead_code)]

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use metaclaw_domain::Clock;
use metaclaw_scheduler::{
    CalendarFetcher, FetchFuture, FetchResponse, IdleReading, IdleSource, SchedulerSettings,
};

pub fn utc(s: &str) -> DateTime<Utc> {
    s.parse().expect("RFC 3339 time")
}

/// A clock that follows tokio's (pausable) clock, so `tokio::time::pause` + auto-advance
/// moves "wall time" too.
pub struct TokioClock {
    base: DateTime<Utc>,
    start: tokio::time::Instant,
}

impl TokioClock {
    pub fn new(base: DateTime<Utc>) -> Self {
        Self {
            base,
            start: tokio::time::Instant::now(),
        }
    }
}

impl Clock for TokioClock {
    fn now(&self) -> DateTime<Utc> {
        self.base + chrono::Duration::from_std(self.start.elapsed()).expect("small duration")
    }
}

/// Fake OS idle: idle time = now − last input (or "unknown").
pub struct FakeIdle {
    clock: Arc<dyn Clock>,
    last_input: Mutex<Option<DateTime<Utc>>>,
    pub reads: AtomicUsize,
}

impl FakeIdle {
    pub fn new(clock: Arc<dyn Clock>, last_input: Option<DateTime<Utc>>) -> Arc<Self> {
        Arc::new(Self {
            clock,
            last_input: Mutex::new(last_input),
            reads: AtomicUsize::new(0),
        })
    }

    /// The user touches the mouse now.
    pub fn input_now(&self) {
        *self.last_input.lock().unwrap() = Some(self.clock.now());
    }

    pub fn set_last_input(&self, t: Option<DateTime<Utc>>) {
        *self.last_input.lock().unwrap() = t;
    }

    pub fn reads(&self) -> usize {
        self.reads.load(Ordering::SeqCst)
    }
}

impl IdleSource for FakeIdle {
    fn read(&self) -> IdleReading {
        self.reads.fetch_add(1, Ordering::SeqCst);
        match *self.last_input.lock().unwrap() {
            Some(t) => IdleReading::Known {
                idle_secs: (self.clock.now() - t).num_seconds().max(0).unsigned_abs(),
            },
            None => IdleReading::Unknown {
                reason: "fake: no display".into(),
            },
        }
    }

    fn name(&self) -> String {
        "fake".to_owned()
    }
}

/// Scripted HTTP: one queued answer per request; records (url, If-None-Match).
#[derive(Default)]
pub struct FakeFetcher {
    pub answers: Mutex<VecDeque<(String, Result<FetchResponse, String>)>>,
    pub requests: Mutex<Vec<(String, Option<String>)>>,
}

impl FakeFetcher {
    pub fn push(&self, url: &str, answer: Result<FetchResponse, String>) {
        self.answers
            .lock()
            .unwrap()
            .push_back((url.to_owned(), answer));
    }
}

impl CalendarFetcher for FakeFetcher {
    fn fetch<'a>(&'a self, url: &'a str, etag: Option<&'a str>) -> FetchFuture<'a> {
        self.requests
            .lock()
            .unwrap()
            .push((url.to_owned(), etag.map(str::to_owned)));
        let mut q = self.answers.lock().unwrap();
        let pos = q.iter().position(|(u, _)| u == url);
        let answer = match pos.and_then(|i| q.remove(i)) {
            Some((_, a)) => a,
            None => Err("no scripted answer".to_owned()),
        };
        Box::pin(async move { answer })
    }
}

/// Gated settings with sleep/idle off unless a test turns them on.
pub fn gated() -> SchedulerSettings {
    SchedulerSettings {
        enabled: true,
        mode_auto: true,
        sleep_start: None,
        sleep_end: None,
        idle_threshold_minutes: None,
        min_window_minutes: 15,
        poll_seconds: 10,
        ..SchedulerSettings::default()
    }
}

pub fn ics(body: &str) -> String {
    format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n{}END:VCALENDAR\r\n",
        body.replace('\n', "\r\n")
    )
}

pub fn event(uid: &str, start: &str, end: &str, extra: &str) -> String {
    format!("BEGIN:VEVENT\nUID:{uid}\nDTSTART:{start}\nDTEND:{end}\n{extra}END:VEVENT\n")
}
