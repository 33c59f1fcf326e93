//! `.ics` parsing and busy-interval expansion.
//!
//! [`parse_ics`] is the single entry point for untrusted calendar bytes (files, URLs, the fuzzer).
//! It never panics: input is size- and depth-checked before the `icalendar` parser sees it, and
//! the parser plus the `rrule` expansion run under `catch_unwind` as a last line of defence (a
//! panic there becomes an [`IcsError::Panicked`]).
//!
//! Busy rules (see [`ParsedCalendar::busy_intervals`]): an occurrence is busy unless the event is
//! `STATUS:CANCELLED`, `TRANSP:TRANSPARENT`, declined by the configured user
//! (`ATTENDEE;PARTSTAT=DECLINED:mailto:<user_email>`), or all-day while all-day events are
//! excluded. Tentative / needs-action events count as busy.
//!
//! Times: `Z` times are instants; `TZID=` times use the IANA zone (Windows zone names and
//! `/mozilla.org/.../Europe/Berlin`-style ids are mapped); floating times and all-day dates are
//! read in the user's time zone passed to `busy_intervals`. RRULE/RDATE/EXDATE are expanded by
//! `icalendar`'s `recurrence` feature (the `rrule` crate); `RECURRENCE-ID` overrides replace the
//! instance they override.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::str::FromStr;

use chrono::{DateTime, Days, NaiveDate, NaiveDateTime, TimeZone, Utc};
use chrono_tz::Tz;
use icalendar::{CalendarDateTime, Component, DatePerhapsTime, Property};

use crate::sleep::local_to_utc;
use crate::types::Interval;

/// Larger inputs are rejected before parsing.
pub const MAX_ICS_BYTES: usize = 32 * 1024 * 1024;
/// Deeper `BEGIN:` nesting is rejected before parsing (the parser is recursive).
pub const MAX_NESTING: usize = 16;
/// At most this many occurrences of one event are expanded per query range.
const MAX_OCCURRENCES_PER_EVENT: u16 = 4000;
/// At most this many recurrence steps are taken per event and query (from DTSTART on).
const MAX_ITERATIONS_PER_EVENT: usize = 100_000;
/// Recurring events are no longer expanded once one `busy_intervals` call has run this long
/// (a hostile calendar full of rules that never match would otherwise cost minutes).
const EXPANSION_TIME_BUDGET: std::time::Duration = std::time::Duration::from_secs(3);
/// At most this many per-event warnings are kept.
const MAX_WARNINGS: usize = 50;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IcsError {
    #[error("calendar is too large ({0} bytes, limit {MAX_ICS_BYTES})")]
    TooLarge(usize),
    #[error("calendar components are nested more than {MAX_NESTING} levels deep")]
    TooDeep,
    #[error("no VCALENDAR/VEVENT data found")]
    NotCalendar,
    #[error("invalid iCalendar data: {0}")]
    Parse(String),
    #[error("the iCalendar parser panicked: {0}")]
    Panicked(String),
}

/// Which events count as busy for this user.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BusyFilter {
    pub user_email: Option<String>,
    pub include_all_day: bool,
}

impl BusyFilter {
    fn declined(&self, event: &CalEvent) -> bool {
        match &self.user_email {
            Some(me) => {
                let me = normalize_address(me);
                !me.is_empty() && event.declined_by.contains(&me)
            }
            None => false,
        }
    }

    fn is_busy(&self, event: &CalEvent) -> bool {
        let all_day_ok = !event.all_day || self.include_all_day;
        !event.cancelled && !event.transparent && all_day_ok && !self.declined(event)
    }
}

/// A time as written in the calendar.
#[derive(Debug, Clone, PartialEq)]
enum EventTime {
    Utc(DateTime<Utc>),
    Zoned(NaiveDateTime, Tz),
    Floating(NaiveDateTime),
    Date(NaiveDate),
}

impl EventTime {
    fn resolve(&self, tz: Tz) -> DateTime<Utc> {
        match self {
            Self::Utc(t) => *t,
            Self::Zoned(n, z) => local_to_utc(*z, *n),
            Self::Floating(n) => local_to_utc(tz, *n),
            Self::Date(d) => local_to_utc(tz, d.and_time(chrono::NaiveTime::MIN)),
        }
    }

    fn from_ical(dpt: DatePerhapsTime) -> Result<Self, String> {
        Ok(match dpt {
            DatePerhapsTime::Date(d) => Self::Date(d),
            DatePerhapsTime::DateTime(CalendarDateTime::Utc(t)) => Self::Utc(t),
            DatePerhapsTime::DateTime(CalendarDateTime::Floating(n)) => Self::Floating(n),
            DatePerhapsTime::DateTime(CalendarDateTime::WithTimezone { date_time, tzid }) => {
                let tz = parse_tzid(&tzid).ok_or_else(|| format!("unknown time zone {tzid:?}"))?;
                Self::Zoned(date_time, tz)
            }
        })
    }
}

#[derive(Debug, Clone)]
enum Length {
    /// An exact duration (DURATION, or DTEND − DTSTART for timed events).
    Exact(chrono::Duration),
    /// Until this DTEND (resolved per user time zone; floating ends need it).
    Until(EventTime),
    /// All-day events: a number of calendar days.
    Days(u64),
}

#[derive(Debug, Clone)]
struct CalEvent {
    summary: Option<String>,
    cancelled: bool,
    transparent: bool,
    all_day: bool,
    /// Normalised addresses of attendees with PARTSTAT=DECLINED.
    declined_by: Vec<String>,
    start: EventTime,
    length: Length,
    /// Present for RRULE/RDATE events.
    recurrence: Option<icalendar::rrule::RRuleSet>,
    /// Instances replaced by RECURRENCE-ID overrides (also EXDATE-like).
    overridden: Vec<EventTime>,
}

/// A parsed calendar, independent of the user's time zone until expansion.
#[derive(Debug, Clone, Default)]
pub struct ParsedCalendar {
    events: Vec<CalEvent>,
    warnings: Vec<String>,
}

/// A busy interval from one event occurrence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BusyInterval {
    pub interval: Interval,
    pub summary: Option<String>,
}

/// Parse untrusted `.ics` bytes. Never panics.
pub fn parse_ics(input: &[u8]) -> Result<ParsedCalendar, IcsError> {
    if input.len() > MAX_ICS_BYTES {
        return Err(IcsError::TooLarge(input.len()));
    }
    let text = String::from_utf8_lossy(input);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let unfolded = icalendar::parser::unfold(text);
    check_nesting(&unfolded)?;
    match catch_unwind(AssertUnwindSafe(|| parse_unfolded(&unfolded))) {
        Ok(r) => r,
        Err(payload) => Err(IcsError::Panicked(panic_message(&payload))),
    }
}

/// The fuzzing entry point: parse, then expand over a range around the first event and over a
/// fixed range, in two time zones. Returns the number of busy intervals.
pub fn fuzz_entry(input: &[u8]) -> usize {
    let Ok(cal) = parse_ics(input) else {
        return 0;
    };
    let mut n = 0;
    let anchors: Vec<DateTime<Utc>> = cal
        .events
        .first()
        .map(|e| e.start.resolve(chrono_tz::UTC))
        .into_iter()
        .chain(std::iter::once(
            Utc.with_ymd_and_hms(2026, 3, 29, 0, 0, 0)
                .single()
                .unwrap_or_default(),
        ))
        .collect();
    let filter = BusyFilter {
        user_email: Some("me@example.com".into()),
        include_all_day: true,
    };
    for anchor in anchors {
        let (Some(from), Some(to)) = (
            anchor.checked_sub_signed(chrono::Duration::days(1)),
            anchor.checked_add_signed(chrono::Duration::days(2)),
        ) else {
            continue;
        };
        for tz in [chrono_tz::UTC, chrono_tz::Europe::Berlin] {
            n += cal.busy_intervals(from, to, tz, &filter).len();
            n += cal
                .busy_intervals(from, to, tz, &BusyFilter::default())
                .len();
        }
    }
    n
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_owned()
    }
}

fn check_nesting(text: &str) -> Result<(), IcsError> {
    let mut depth: usize = 0;
    let mut saw_begin = false;
    for line in text.lines() {
        let line = line.trim_start();
        let upper = line.get(..6).map(str::to_ascii_uppercase);
        if upper.as_deref() == Some("BEGIN:") {
            saw_begin = true;
            depth += 1;
            if depth > MAX_NESTING {
                return Err(IcsError::TooDeep);
            }
        } else if line.get(..4).map(str::to_ascii_uppercase).as_deref() == Some("END:") {
            depth = depth.saturating_sub(1);
        }
    }
    if saw_begin {
        Ok(())
    } else {
        Err(IcsError::NotCalendar)
    }
}

fn parse_unfolded(unfolded: &str) -> Result<ParsedCalendar, IcsError> {
    let parsed = icalendar::parser::read_calendar(unfolded).map_err(|e| {
        // nom's error text quotes the input; keep the report short.
        let first = e.lines().take(4).collect::<Vec<_>>().join(" ");
        IcsError::Parse(truncate(&first, 300))
    })?;
    let calendar = icalendar::Calendar::from(parsed);

    let mut out = ParsedCalendar::default();
    let mut overrides: HashMap<String, Vec<EventTime>> = HashMap::new();
    let mut masters: Vec<(Option<String>, CalEvent)> = Vec::new();
    let mut saw_vevent = false;

    for cev in calendar.calendar_events() {
        saw_vevent = true;
        let ev = cev.event();
        let uid = ev.get_uid().map(str::to_owned);
        let label = ev
            .get_summary()
            .or(uid.as_deref())
            .map(|s| truncate(s, 60))
            .unwrap_or_else(|| "(untitled event)".to_owned());
        match convert_event(&cev) {
            Ok(converted) => {
                if let Some(w) = &converted.warning {
                    out.warn(format!("{label}: {w}"));
                }
                match (converted.recurrence_id, &uid) {
                    (Some(rid), Some(uid)) => {
                        overrides.entry(uid.clone()).or_default().push(rid);
                        // The override itself is a one-off event.
                        out.events.push(converted.event);
                    }
                    _ => masters.push((uid, converted.event)),
                }
            }
            Err(reason) => out.warn(format!("{label}: skipped: {reason}")),
        }
    }
    for (uid, mut ev) in masters {
        if let Some(list) = uid.as_ref().and_then(|u| overrides.get(u)) {
            ev.overridden.extend(list.iter().cloned());
        }
        out.events.push(ev);
    }
    // An empty VCALENDAR is a valid (free) calendar; anything else without events is not one.
    let is_vcalendar = unfolded
        .trim_start()
        .get(..15)
        .is_some_and(|s| s.eq_ignore_ascii_case("BEGIN:VCALENDAR"));
    if !saw_vevent && !is_vcalendar {
        return Err(IcsError::NotCalendar);
    }
    Ok(out)
}

struct Converted {
    event: CalEvent,
    /// Set when the event was simplified (e.g. its recurrence could not be expanded).
    warning: Option<String>,
    /// Set for an override instance (`RECURRENCE-ID`).
    recurrence_id: Option<EventTime>,
}

fn convert_event(cev: &icalendar::CalendarEvent<'_>) -> Result<Converted, String> {
    let ev = cev.event();
    let start_prop = ev.properties().get("DTSTART").ok_or("no DTSTART")?.clone();
    let start = EventTime::from_ical(
        DatePerhapsTime::from_property(&start_prop).ok_or("unreadable DTSTART")?,
    )?;
    let all_day = matches!(start, EventTime::Date(_));
    let mut warning = None;

    let duration = ev.property_value("DURATION").map(parse_duration);
    let length = match (&start, duration) {
        (_, Some(None)) => return Err("unreadable DURATION".into()),
        (EventTime::Date(_), Some(Some(d))) => Length::Days(d.num_days().max(1).unsigned_abs()),
        (_, Some(Some(d))) => Length::Exact(d),
        (EventTime::Date(sd), None) => match ev.get_end() {
            Some(DatePerhapsTime::Date(ed)) => {
                Length::Days(u64::try_from((ed - *sd).num_days()).unwrap_or(1).max(1))
            }
            Some(DatePerhapsTime::DateTime(_)) => {
                return Err("all-day DTSTART with a timed DTEND".into());
            }
            None => Length::Days(1),
        },
        (_, None) => match ev.get_end() {
            Some(end) => Length::Until(EventTime::from_ical(end)?),
            // RFC 5545: a timed DTSTART without DTEND/DURATION ends when it starts.
            None => Length::Exact(chrono::Duration::zero()),
        },
    };

    let status = ev.property_value("STATUS").unwrap_or("").trim();
    let transp = ev.property_value("TRANSP").unwrap_or("").trim();
    let declined_by = ev
        .multi_properties()
        .get("ATTENDEE")
        .map(|list| list.iter().filter_map(declined_address).collect())
        .unwrap_or_default();

    let recurrence_id = match ev.get_recurrence_id() {
        Some(rid) => Some(EventTime::from_ical(rid)?),
        None => None,
    };

    let has_rule = ev.property_value("RRULE").is_some()
        || ev.multi_properties().contains_key("RDATE")
        || ev.properties().contains_key("RDATE");
    let recurrence = if has_rule && recurrence_id.is_none() && !recurrence_is_ascii(ev) {
        // Recurrence data is ASCII by definition (RFC 5545 §3.3.10); `rrule` 0.14 slices
        // weekday strings by byte and panics on other input.
        warning = Some("non-ASCII recurrence data; only the first occurrence is used".into());
        None
    } else if has_rule && recurrence_id.is_none() {
        match cev.get_recurrence() {
            // `limit()` makes the iterator give up on rules that never produce a date.
            Ok(set) => Some(set.limit()),
            Err(first_err) => match own_recurrence_set(ev, &start_prop, &start) {
                Ok(set) => Some(set.limit()),
                Err(_) => {
                    warning = Some(format!(
                        "recurrence ignored ({first_err}); only the first occurrence is used"
                    ));
                    None
                }
            },
        }
    } else {
        None
    };

    if let Some(rule) = ev.property_value("RRULE") {
        let upper = rule.to_ascii_uppercase();
        if ["SECONDLY", "MINUTELY", "HOURLY"]
            .iter()
            .any(|f| upper.contains(&format!("FREQ={f}")))
        {
            warning.get_or_insert_with(|| {
                format!("high-frequency recurrence ({rule}); expanded at most {MAX_ITERATIONS_PER_EVENT} steps from DTSTART")
            });
        }
    }

    Ok(Converted {
        event: CalEvent {
            summary: ev.get_summary().map(|s| truncate(s, 200)),
            cancelled: status.eq_ignore_ascii_case("CANCELLED"),
            transparent: transp.eq_ignore_ascii_case("TRANSPARENT"),
            all_day,
            declined_by,
            start,
            length,
            recurrence,
            overridden: Vec::new(),
        },
        warning,
        recurrence_id,
    })
}

/// Whether everything handed to the `rrule` parser is ASCII.
fn recurrence_is_ascii(ev: &icalendar::Event) -> bool {
    let prop_ascii = |p: &Property| {
        p.value().is_ascii()
            && p.params()
                .iter()
                .all(|(k, v)| k.is_ascii() && v.value().is_ascii())
    };
    ["DTSTART", "RRULE", "RDATE", "EXDATE"].iter().all(|key| {
        ev.properties().get(*key).is_none_or(prop_ascii)
            && ev
                .multi_properties()
                .get(*key)
                .is_none_or(|list| list.iter().all(prop_ascii))
    })
}

/// Build the recurrence set ourselves when `icalendar` rejects it, mapping TZIDs that chrono-tz
/// does not know (Windows names, path-style ids) to IANA names.
fn own_recurrence_set(
    ev: &icalendar::Event,
    start_prop: &Property,
    start: &EventTime,
) -> Result<icalendar::rrule::RRuleSet, String> {
    let mut b = String::new();
    let tz_param = |p: &Property| -> Result<String, String> {
        match p.params().get("TZID") {
            Some(t) => {
                let tz = parse_tzid(t.value()).ok_or("unknown TZID")?;
                Ok(format!(";TZID={}", tz.name()))
            }
            None => Ok(String::new()),
        }
    };
    let line = |key: &str, p: &Property| -> Result<String, String> {
        let mut params = tz_param(p)?;
        if let Some(v) = p.params().get("VALUE") {
            let _ = write!(params, ";VALUE={}", v.value());
        }
        Ok(format!("{key}{params}:{}\n", p.value()))
    };
    if matches!(start, EventTime::Date(_)) {
        return Err("all-day recurrence handled by icalendar only".into());
    }
    b.push_str(&line("DTSTART", start_prop)?.replace(";VALUE=DATE-TIME", ""));
    match ev.property_value("RRULE") {
        Some(rule) => {
            let _ = writeln!(b, "RRULE:{rule}");
        }
        None => b.push_str(&line("RDATE", start_prop)?.replace(";VALUE=DATE-TIME", "")),
    }
    for key in ["RDATE", "EXDATE"] {
        let single = ev.properties().get(key);
        let multi = ev.multi_properties().get(key).into_iter().flatten();
        for p in single.into_iter().chain(multi) {
            b.push_str(&line(key, p)?);
        }
    }
    icalendar::rrule::RRuleSet::from_str(&b).map_err(|e| e.to_string())
}

fn declined_address(p: &Property) -> Option<String> {
    let partstat = p.params().get("PARTSTAT")?;
    if !partstat.value().trim().eq_ignore_ascii_case("DECLINED") {
        return None;
    }
    let addr = p
        .params()
        .get("EMAIL")
        .map(|e| e.value().to_owned())
        .unwrap_or_else(|| p.value().to_owned());
    let addr = normalize_address(&addr);
    (!addr.is_empty()).then_some(addr)
}

fn normalize_address(s: &str) -> String {
    let s = s.trim().trim_matches('"').trim();
    let s = match (s.get(..7), s.get(7..)) {
        (Some(scheme), Some(rest)) if scheme.eq_ignore_ascii_case("mailto:") => rest,
        _ => s,
    };
    s.trim().to_lowercase()
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        let mut t: String = s.chars().take(max).collect();
        t.push('…');
        t
    }
}

/// Parse an RFC 5545 DURATION (`P1W`, `P2D`, `PT1H30M`, `P1DT2H`). Negative durations and
/// durations over a year are rejected.
pub fn parse_duration(s: &str) -> Option<chrono::Duration> {
    let s = s.trim();
    let s = s.strip_prefix('+').unwrap_or(s);
    let rest = s.strip_prefix('P').or_else(|| s.strip_prefix('p'))?;
    let mut secs: i64 = 0;
    let mut in_time = false;
    let mut num = String::new();
    let mut any = false;
    for c in rest.chars() {
        match c.to_ascii_uppercase() {
            '0'..='9' => {
                if num.len() >= 9 {
                    return None;
                }
                num.push(c);
            }
            'T' if !in_time && num.is_empty() => in_time = true,
            unit => {
                let n: i64 = num.parse().ok()?;
                num.clear();
                let mult = match (unit, in_time) {
                    ('W', false) => 7 * 86_400,
                    ('D', false) => 86_400,
                    ('H', true) => 3600,
                    ('M', true) => 60,
                    ('S', true) => 1,
                    _ => return None,
                };
                secs = secs.checked_add(n.checked_mul(mult)?)?;
                any = true;
            }
        }
    }
    if !num.is_empty() || !any || secs > 366 * 86_400 {
        return None;
    }
    Some(chrono::Duration::seconds(secs))
}

/// Map a TZID to a chrono-tz zone: IANA names, path-style ids that end in an IANA name, and the
/// most common Windows zone names (Outlook/Exchange exports).
pub fn parse_tzid(raw: &str) -> Option<Tz> {
    let s = raw.trim().trim_matches('"').trim();
    if let Ok(tz) = s.parse::<Tz>() {
        return Some(tz);
    }
    let mut rest = s;
    while let Some((_, tail)) = rest.split_once('/') {
        if let Ok(tz) = tail.parse::<Tz>() {
            return Some(tz);
        }
        rest = tail;
    }
    let windows = [
        ("W. Europe Standard Time", "Europe/Berlin"),
        ("Central Europe Standard Time", "Europe/Budapest"),
        ("Central European Standard Time", "Europe/Warsaw"),
        ("Romance Standard Time", "Europe/Paris"),
        ("GMT Standard Time", "Europe/London"),
        ("Greenwich Standard Time", "Atlantic/Reykjavik"),
        ("E. Europe Standard Time", "Europe/Chisinau"),
        ("FLE Standard Time", "Europe/Kiev"),
        ("GTB Standard Time", "Europe/Bucharest"),
        ("Russian Standard Time", "Europe/Moscow"),
        ("Eastern Standard Time", "America/New_York"),
        ("Central Standard Time", "America/Chicago"),
        ("Mountain Standard Time", "America/Denver"),
        ("US Mountain Standard Time", "America/Phoenix"),
        ("Pacific Standard Time", "America/Los_Angeles"),
        ("Alaskan Standard Time", "America/Anchorage"),
        ("Hawaiian Standard Time", "Pacific/Honolulu"),
        ("Atlantic Standard Time", "America/Halifax"),
        ("E. South America Standard Time", "America/Sao_Paulo"),
        ("India Standard Time", "Asia/Kolkata"),
        ("China Standard Time", "Asia/Shanghai"),
        ("Tokyo Standard Time", "Asia/Tokyo"),
        ("Korea Standard Time", "Asia/Seoul"),
        ("Singapore Standard Time", "Asia/Singapore"),
        ("AUS Eastern Standard Time", "Australia/Sydney"),
        ("New Zealand Standard Time", "Pacific/Auckland"),
        ("UTC", "UTC"),
        ("Coordinated Universal Time", "UTC"),
    ];
    windows
        .iter()
        .find(|(w, _)| w.eq_ignore_ascii_case(s))
        .and_then(|(_, iana)| iana.parse().ok())
}

impl ParsedCalendar {
    /// Number of usable VEVENTs (including cancelled/transparent ones, excluding skipped ones).
    pub fn len(&self) -> usize {
        self.events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// Events that were skipped or simplified, with the reason.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    fn warn(&mut self, w: String) {
        if self.warnings.len() < MAX_WARNINGS {
            self.warnings.push(w);
        }
    }

    /// Busy occurrences overlapping `[from, to)`, sorted by start. Never panics.
    pub fn busy_intervals(
        &self,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        tz: Tz,
        filter: &BusyFilter,
    ) -> Vec<BusyInterval> {
        if to <= from {
            return Vec::new();
        }
        let mut out = Vec::new();
        let started = std::time::Instant::now();
        let mut skipped = 0usize;
        for ev in self.events.iter().filter(|e| filter.is_busy(e)) {
            if ev.recurrence.is_some() && started.elapsed() > EXPANSION_TIME_BUDGET {
                skipped += 1;
                continue;
            }
            let r = catch_unwind(AssertUnwindSafe(|| expand_event(ev, from, to, tz)));
            if let Ok(list) = r {
                out.extend(list.into_iter().map(|interval| BusyInterval {
                    interval,
                    summary: ev.summary.clone(),
                }));
            }
        }
        if skipped > 0 {
            tracing::warn!(
                skipped,
                "calendar expansion took too long; some recurring events were left out"
            );
        }
        out.sort_by_key(|b| (b.interval.start, b.interval.end));
        out
    }
}

/// The interval of one occurrence starting at `start` (given as the calendar wrote it).
fn occurrence(ev: &CalEvent, start: &EventTime, tz: Tz) -> Option<Interval> {
    let s = start.resolve(tz);
    let end = match (&ev.length, start) {
        (Length::Days(n), EventTime::Date(d)) => {
            let end_date = d.checked_add_days(Days::new(*n))?;
            local_to_utc(tz, end_date.and_time(chrono::NaiveTime::MIN))
        }
        (Length::Days(n), _) => {
            s.checked_add_signed(chrono::Duration::days(i64::try_from(*n).ok()?))?
        }
        (Length::Exact(d), _) => s.checked_add_signed(*d)?,
        (Length::Until(end), _) => {
            // DTEND − DTSTART of the first instance, applied to this instance.
            let len = end.resolve(tz) - ev.start.resolve(tz);
            s.checked_add_signed(len)?
        }
    };
    (end > s).then_some(Interval { start: s, end })
}

fn max_length(ev: &CalEvent, tz: Tz) -> chrono::Duration {
    match &ev.length {
        Length::Days(n) => chrono::Duration::days(i64::try_from(*n).unwrap_or(366).min(366) + 1),
        Length::Exact(d) => *d,
        Length::Until(end) => {
            (end.resolve(tz) - ev.start.resolve(tz)).max(chrono::Duration::zero())
        }
    }
    .min(chrono::Duration::days(400))
}

fn expand_event(ev: &CalEvent, from: DateTime<Utc>, to: DateTime<Utc>, tz: Tz) -> Vec<Interval> {
    let mut out = Vec::new();
    let overridden: Vec<DateTime<Utc>> = ev.overridden.iter().map(|t| t.resolve(tz)).collect();
    let mut push = |start: EventTime| {
        if let Some(iv) = occurrence(ev, &start, tz)
            && iv.overlaps(from, to)
            && !overridden.contains(&iv.start)
        {
            out.push(iv);
        }
    };
    let Some(set) = &ev.recurrence else {
        push(ev.start.clone());
        return out;
    };
    // Widen the query: floating/date occurrences are produced in another zone and
    // re-read in `tz` (up to ±26 h), and an occurrence that started earlier may still run.
    let slack = chrono::Duration::days(2);
    let (Some(q_from), Some(q_to)) = (
        from.checked_sub_signed(max_length(ev, tz) + slack),
        to.checked_add_signed(slack),
    ) else {
        return out;
    };
    // Walk the recurrence from DTSTART with a hard work budget: `rrule` has no way to jump
    // ahead, so a high-frequency rule started long ago would otherwise cost millions of steps.
    let mut found = 0usize;
    for (i, dt) in set.into_iter().enumerate() {
        if i >= MAX_ITERATIONS_PER_EVENT || found >= usize::from(MAX_OCCURRENCES_PER_EVENT) {
            tracing::debug!(summary = ?ev.summary, "recurrence expansion budget exhausted");
            break;
        }
        let utc = dt.with_timezone(&Utc);
        if utc > q_to {
            break;
        }
        if utc < q_from {
            continue;
        }
        found += 1;
        let start = match &ev.start {
            EventTime::Utc(_) | EventTime::Zoned(..) => EventTime::Utc(utc),
            EventTime::Floating(_) => EventTime::Floating(dt.naive_local()),
            EventTime::Date(_) => EventTime::Date(dt.naive_local().date()),
        };
        push(start);
    }
    out
}

/// Merge overlapping or touching intervals (input in any order).
pub fn merge_intervals(mut list: Vec<Interval>) -> Vec<Interval> {
    list.sort_by_key(|i| (i.start, i.end));
    let mut out: Vec<Interval> = Vec::with_capacity(list.len());
    for iv in list {
        match out.last_mut() {
            Some(last) if iv.start <= last.end => last.end = last.end.max(iv.end),
            _ => out.push(iv),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    fn cal(body: &str) -> String {
        format!(
            "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n{}END:VCALENDAR\r\n",
            body.replace('\n', "\r\n")
        )
    }

    fn busy(text: &str, from: &str, to: &str, tz: Tz, filter: &BusyFilter) -> Vec<Interval> {
        let c = parse_ics(text.as_bytes()).expect("parses");
        c.busy_intervals(utc(from), utc(to), tz, filter)
            .into_iter()
            .map(|b| b.interval)
            .collect()
    }

    #[test]
    fn durations() {
        assert_eq!(
            parse_duration("PT1H30M"),
            Some(chrono::Duration::minutes(90))
        );
        assert_eq!(parse_duration("P1W"), Some(chrono::Duration::days(7)));
        assert_eq!(parse_duration("P1DT2H"), Some(chrono::Duration::hours(26)));
        assert_eq!(
            parse_duration("+PT15M"),
            Some(chrono::Duration::minutes(15))
        );
        for bad in [
            "",
            "P",
            "PT",
            "-PT1H",
            "P1H",
            "PT1D",
            "P99999999999D",
            "1H",
            "PT1H2",
        ] {
            assert_eq!(parse_duration(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn tzid_mapping() {
        assert_eq!(parse_tzid("Europe/Berlin"), Some(chrono_tz::Europe::Berlin));
        assert_eq!(
            parse_tzid("/mozilla.org/20050126_1/America/New_York"),
            Some(chrono_tz::America::New_York)
        );
        assert_eq!(
            parse_tzid("W. Europe Standard Time"),
            Some(chrono_tz::Europe::Berlin)
        );
        assert_eq!(
            parse_tzid("\"Europe/Paris\""),
            Some(chrono_tz::Europe::Paris)
        );
        assert_eq!(parse_tzid("Mars/Olympus"), None);
    }

    #[test]
    fn empty_calendar_is_valid_and_free() {
        let c = parse_ics(cal("").as_bytes()).unwrap();
        assert!(c.is_empty());
        let c = parse_ics(b"BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n").unwrap();
        assert!(c.is_empty());
        // A lone VTODO is not an event source but is not an error either.
        let c = parse_ics(cal("BEGIN:VTODO\nUID:x\nEND:VTODO\n").as_bytes()).unwrap();
        assert!(c.is_empty());
        assert!(matches!(
            parse_ics(b"BEGIN:VCARD\r\nFN:x\r\nEND:VCARD\r\n"),
            Err(IcsError::NotCalendar)
        ));
    }

    #[test]
    fn single_utc_event() {
        let text = cal(
            "BEGIN:VEVENT\nUID:a\nDTSTART:20260310T090000Z\nDTEND:20260310T100000Z\nSUMMARY:Standup\nEND:VEVENT\n",
        );
        let b = busy(
            &text,
            "2026-03-10T00:00:00Z",
            "2026-03-11T00:00:00Z",
            chrono_tz::UTC,
            &BusyFilter::default(),
        );
        assert_eq!(
            b,
            vec![Interval {
                start: utc("2026-03-10T09:00:00Z"),
                end: utc("2026-03-10T10:00:00Z")
            }]
        );
    }

    #[test]
    fn recurring_with_tzid_and_exdate() {
        // Weekly Tue/Thu 10:00 Berlin, 6 instances, one EXDATE; crosses the 2026-03-29 DST change.
        let text = cal(
            "BEGIN:VEVENT\nUID:r\nDTSTART;TZID=Europe/Berlin:20260317T100000\nDTEND;TZID=Europe/Berlin:20260317T110000\nRRULE:FREQ=WEEKLY;BYDAY=TU,TH;COUNT=6\nEXDATE;TZID=Europe/Berlin:20260324T100000\nSUMMARY:Sync\nEND:VEVENT\n",
        );
        let b = busy(
            &text,
            "2026-03-01T00:00:00Z",
            "2026-04-30T00:00:00Z",
            chrono_tz::UTC,
            &BusyFilter::default(),
        );
        let starts: Vec<_> = b.iter().map(|i| i.start).collect();
        assert_eq!(
            starts,
            vec![
                utc("2026-03-17T09:00:00Z"), // CET
                utc("2026-03-19T09:00:00Z"),
                // 2026-03-24 excluded
                utc("2026-03-26T09:00:00Z"),
                utc("2026-03-31T08:00:00Z"), // CEST: still 10:00 local
                utc("2026-04-02T08:00:00Z"),
            ]
        );
        assert!(
            b.iter()
                .all(|i| i.end - i.start == chrono::Duration::hours(1))
        );
    }

    #[test]
    fn windows_tzid_recurrence_falls_back_to_own_builder() {
        let text = cal(
            "BEGIN:VEVENT\nUID:w\nDTSTART;TZID=W. Europe Standard Time:20260105T140000\nDTEND;TZID=W. Europe Standard Time:20260105T150000\nRRULE:FREQ=DAILY;COUNT=3\nEXDATE;TZID=W. Europe Standard Time:20260106T140000\nEND:VEVENT\n",
        );
        let b = busy(
            &text,
            "2026-01-01T00:00:00Z",
            "2026-01-31T00:00:00Z",
            chrono_tz::UTC,
            &BusyFilter::default(),
        );
        let starts: Vec<_> = b.iter().map(|i| i.start).collect();
        assert_eq!(
            starts,
            vec![utc("2026-01-05T13:00:00Z"), utc("2026-01-07T13:00:00Z")]
        );
    }

    #[test]
    fn filters_cancelled_transparent_declined_all_day() {
        let text = cal(concat!(
            "BEGIN:VEVENT\nUID:c\nDTSTART:20260310T090000Z\nDTEND:20260310T100000Z\nSTATUS:CANCELLED\nEND:VEVENT\n",
            "BEGIN:VEVENT\nUID:t\nDTSTART:20260310T110000Z\nDTEND:20260310T120000Z\nTRANSP:TRANSPARENT\nEND:VEVENT\n",
            "BEGIN:VEVENT\nUID:d\nDTSTART:20260310T130000Z\nDTEND:20260310T140000Z\nATTENDEE;CN=Me;PARTSTAT=DECLINED:mailto:Me@Example.com\nATTENDEE;PARTSTAT=ACCEPTED:mailto:boss@example.com\nEND:VEVENT\n",
            "BEGIN:VEVENT\nUID:a\nDTSTART;VALUE=DATE:20260310\nDTEND;VALUE=DATE:20260311\nSUMMARY:Holiday\nEND:VEVENT\n",
            "BEGIN:VEVENT\nUID:ok\nDTSTART:20260310T150000Z\nDURATION:PT30M\nSTATUS:TENTATIVE\nEND:VEVENT\n",
        ));
        let me = BusyFilter {
            user_email: Some("mailto:me@example.com".into()),
            include_all_day: false,
        };
        let b = busy(
            &text,
            "2026-03-10T00:00:00Z",
            "2026-03-11T00:00:00Z",
            chrono_tz::Europe::Berlin,
            &me,
        );
        assert_eq!(
            b,
            vec![Interval {
                start: utc("2026-03-10T15:00:00Z"),
                end: utc("2026-03-10T15:30:00Z")
            }]
        );
        // Someone else's view: the declined event is busy; all-day included on request.
        let other = BusyFilter {
            user_email: Some("boss@example.com".into()),
            include_all_day: true,
        };
        let b = busy(
            &text,
            "2026-03-10T00:00:00Z",
            "2026-03-11T00:00:00Z",
            chrono_tz::Europe::Berlin,
            &other,
        );
        assert_eq!(b.len(), 3);
        // The all-day event covers the local (Berlin) day.
        assert!(b.contains(&Interval {
            start: utc("2026-03-09T23:00:00Z"),
            end: utc("2026-03-10T23:00:00Z")
        }));
    }

    #[test]
    fn recurrence_id_override_moves_one_instance() {
        let text = cal(concat!(
            "BEGIN:VEVENT\nUID:m\nDTSTART:20260302T090000Z\nDTEND:20260302T100000Z\nRRULE:FREQ=DAILY;COUNT=3\nEND:VEVENT\n",
            "BEGIN:VEVENT\nUID:m\nRECURRENCE-ID:20260303T090000Z\nDTSTART:20260303T140000Z\nDTEND:20260303T150000Z\nEND:VEVENT\n",
        ));
        let b = busy(
            &text,
            "2026-03-01T00:00:00Z",
            "2026-03-10T00:00:00Z",
            chrono_tz::UTC,
            &BusyFilter::default(),
        );
        let starts: Vec<_> = b.iter().map(|i| i.start).collect();
        assert_eq!(
            starts,
            vec![
                utc("2026-03-02T09:00:00Z"),
                utc("2026-03-03T14:00:00Z"),
                utc("2026-03-04T09:00:00Z"),
            ]
        );
    }

    #[test]
    fn floating_times_use_the_user_zone() {
        let text = cal(
            "BEGIN:VEVENT\nUID:f\nDTSTART:20260310T090000\nDTEND:20260310T100000\nRRULE:FREQ=DAILY;COUNT=2\nEND:VEVENT\n",
        );
        let b = busy(
            &text,
            "2026-03-09T00:00:00Z",
            "2026-03-12T00:00:00Z",
            chrono_tz::America::New_York,
            &BusyFilter::default(),
        );
        let starts: Vec<_> = b.iter().map(|i| i.start).collect();
        assert_eq!(
            starts,
            vec![utc("2026-03-10T13:00:00Z"), utc("2026-03-11T13:00:00Z")]
        );
    }

    #[test]
    fn hostile_inputs_do_not_panic() {
        let mut deep = String::new();
        for _ in 0..10_000 {
            deep.push_str("BEGIN:VEVENT\r\n");
        }
        let cases: Vec<Vec<u8>> = vec![
            Vec::new(),
            b"\xff\xfe\x00garbage".to_vec(),
            b"BEGIN:".to_vec(),
            b"BEGIN:VCALENDAR\r\n".to_vec(),
            b"END:VCALENDAR\r\n".to_vec(),
            deep.into_bytes(),
            cal("BEGIN:VEVENT\nDTSTART:99999999T999999Z\nEND:VEVENT\n").into_bytes(),
            cal("BEGIN:VEVENT\nDTSTART:20260101T000000Z\nRRULE:FREQ=SECONDLY\nEND:VEVENT\n")
                .into_bytes(),
            cal("BEGIN:VEVENT\nDTSTART:20260101T000000Z\nDURATION:PT1H\nRRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30\nEND:VEVENT\n").into_bytes(),
            cal("BEGIN:VEVENT\nDTSTART;TZID=Nowhere/Else:20260101T000000\nRRULE:FREQ=DAILY\nEND:VEVENT\n").into_bytes(),
            cal("BEGIN:VEVENT\nDTSTART;VALUE=DATE:20260101\nDTEND:20260102T100000Z\nEND:VEVENT\n").into_bytes(),
            cal("BEGIN:VEVENT\nDTSTART:00010101T000000Z\nDURATION:P366D\nRRULE:FREQ=MINUTELY;INTERVAL=1\nEND:VEVENT\n").into_bytes(),
            cal("BEGIN:VEVENT\nDTSTART:20261025T023000\nRRULE:FREQ=DAILY;UNTIL=20261101T000000\nEXDATE;X-FOO=1:20261026T023000\nEND:VEVENT\n").into_bytes(),
            "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART:2026\u{0}0101T000000Z\r\nEND:VEVENT\r\nEND:VCALENDAR".as_bytes().to_vec(),
            vec![b'\n'; 100_000],
            // Found by the fuzzer: a non-ASCII BYDAY (panics inside rrule 0.14).
            cal("BEGIN:VEVENT\nDTSTART:20260105T140000Z\nDURATION:PT1H\nRRULE:FREQ=MONTHLY;BYDAY=-1F\u{1}\u{b6}R\nEND:VEVENT\n").into_bytes(),
            // Found by the fuzzer: a multi-byte character across byte 7 of an address.
            cal("BEGIN:VEVENT\nDTSTART:20260316T100000Z\nATTENDEE;PARTSTAT=DECLINED:m9\u{fffd}\u{fffd}#example.com\nEND:VEVENT\n").into_bytes(),
        ];
        for (i, c) in cases.iter().enumerate() {
            let t0 = std::time::Instant::now();
            let _ = fuzz_entry(c);
            let fuzz_time = t0.elapsed();
            let r = parse_ics(c);
            if let Ok(p) = &r {
                let _ = p.busy_intervals(
                    utc("2025-01-01T00:00:00Z"),
                    utc("2027-01-01T00:00:00Z"),
                    chrono_tz::Europe::Berlin,
                    &BusyFilter::default(),
                );
            }
            eprintln!(
                "case {i}: {:?}, fuzz_entry took {fuzz_time:?}",
                r.as_ref().map(|p| (p.len(), p.warnings().len()))
            );
        }
        assert!(matches!(parse_ics(&[]), Err(IcsError::NotCalendar)));
        assert!(matches!(
            parse_ics(cases[5].as_slice()),
            Err(IcsError::TooDeep)
        ));
        assert!(matches!(
            parse_ics(&vec![b'A'; MAX_ICS_BYTES + 1]),
            Err(IcsError::TooLarge(_))
        ));
    }

    #[test]
    fn merge() {
        let i = |a: &str, b: &str| Interval {
            start: utc(a),
            end: utc(b),
        };
        let m = merge_intervals(vec![
            i("2026-01-01T10:00:00Z", "2026-01-01T11:00:00Z"),
            i("2026-01-01T09:00:00Z", "2026-01-01T10:00:00Z"),
            i("2026-01-01T10:30:00Z", "2026-01-01T10:45:00Z"),
            i("2026-01-01T12:00:00Z", "2026-01-01T13:00:00Z"),
        ]);
        assert_eq!(
            m,
            vec![
                i("2026-01-01T09:00:00Z", "2026-01-01T11:00:00Z"),
                i("2026-01-01T12:00:00Z", "2026-01-01T13:00:00Z"),
            ]
        );
    }
}
