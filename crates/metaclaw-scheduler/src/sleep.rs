//! Sleep hours in an injected IANA time zone, DST-safe.
//!
//! A sleep window starts at `start` local wall-clock time on some local date and ends at the
//! first `end` wall-clock time after that (the same date, or the next one when it wraps midnight).
//! Wall-clock times are turned into instants in the zone of that date, so a 23:00–07:00 window
//! lasts 7 h on a spring-forward night and 9 h on a fall-back night (in Europe/Berlin).
//! A time that does not exist (inside a spring-forward gap) moves forward by the gap;
//! an ambiguous time (inside a fall-back overlap) takes its first occurrence.

use chrono::{DateTime, Days, NaiveDate, NaiveDateTime, TimeZone, Utc};
use chrono_tz::Tz;

use crate::settings::SleepHours;
use crate::types::Interval;

/// Convert a local wall-clock time in `tz` to an instant (see module docs for gaps/overlaps).
pub fn local_to_utc(tz: Tz, naive: NaiveDateTime) -> DateTime<Utc> {
    match tz.from_local_datetime(&naive) {
        chrono::LocalResult::Single(t) => t.with_timezone(&Utc),
        chrono::LocalResult::Ambiguous(first, _) => first.with_timezone(&Utc),
        chrono::LocalResult::None => {
            // Inside a gap: use the offset in force just before it, which lands the instant
            // after the transition (e.g. 02:30 on a CET→CEST night becomes 03:30 CEST).
            let before = naive
                .checked_sub_signed(chrono::Duration::hours(3))
                .and_then(|b| tz.from_local_datetime(&b).earliest());
            match before {
                Some(b) => {
                    let offset = chrono::Offset::fix(b.offset()).local_minus_utc();
                    let utc = naive - chrono::Duration::seconds(i64::from(offset));
                    Utc.from_utc_datetime(&utc)
                }
                None => Utc.from_utc_datetime(&naive),
            }
        }
    }
}

/// The sleep window that starts on local date `date`.
fn window_on(hours: SleepHours, tz: Tz, date: NaiveDate) -> Option<Interval> {
    let start = local_to_utc(tz, date.and_time(hours.start));
    let end_date = if hours.end > hours.start {
        date
    } else {
        date.checked_add_days(Days::new(1))?
    };
    let end = local_to_utc(tz, end_date.and_time(hours.end));
    (end > start).then_some(Interval { start, end })
}

/// All sleep windows that overlap `[from, to)`, in order.
pub fn sleep_windows(
    hours: SleepHours,
    tz: Tz,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Vec<Interval> {
    let mut out = Vec::new();
    if to <= from {
        return out;
    }
    let first = from.with_timezone(&tz).date_naive().pred_opt();
    let last = to.with_timezone(&tz).date_naive();
    let Some(mut date) = first else {
        return out;
    };
    while date <= last {
        if let Some(w) = window_on(hours, tz, date)
            && w.end > from
            && w.start < to
        {
            out.push(w);
        }
        match date.succ_opt() {
            Some(d) => date = d,
            None => break,
        }
    }
    out
}

/// The sleep window containing `now` (half-open: `start <= now < end`), if any.
pub fn sleep_window_at(hours: SleepHours, tz: Tz, now: DateTime<Utc>) -> Option<Interval> {
    sleep_windows(hours, tz, now, now + chrono::Duration::seconds(1))
        .into_iter()
        .find(|w| w.contains(now))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::parse_hhmm;

    fn hours(s: &str, e: &str) -> SleepHours {
        SleepHours {
            start: parse_hhmm(s).unwrap(),
            end: parse_hhmm(e).unwrap(),
        }
    }

    fn utc(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    #[test]
    fn window_across_midnight() {
        let tz = chrono_tz::Europe::Berlin;
        let h = hours("23:00", "07:00");
        // 2026-01-15 23:30 CET = 22:30Z
        let w = sleep_window_at(h, tz, utc("2026-01-15T22:30:00Z")).unwrap();
        assert_eq!(w.start, utc("2026-01-15T22:00:00Z"));
        assert_eq!(w.end, utc("2026-01-16T06:00:00Z"));
        // 03:00 local the next morning: same window (started the previous local date).
        let w2 = sleep_window_at(h, tz, utc("2026-01-16T02:00:00Z")).unwrap();
        assert_eq!(w, w2);
        // 07:00 local exactly: closed (half-open), and 22:59 local: closed.
        assert!(sleep_window_at(h, tz, utc("2026-01-16T06:00:00Z")).is_none());
        assert!(sleep_window_at(h, tz, utc("2026-01-16T21:59:00Z")).is_none());
    }

    #[test]
    fn daytime_window_without_wrap() {
        let tz = chrono_tz::UTC;
        let h = hours("13:00", "14:30");
        let w = sleep_window_at(h, tz, utc("2026-05-01T13:10:00Z")).unwrap();
        assert_eq!(w.end - w.start, chrono::Duration::minutes(90));
        assert!(sleep_window_at(h, tz, utc("2026-05-01T12:59:59Z")).is_none());
    }

    #[test]
    fn berlin_spring_forward_night_is_seven_hours() {
        // 2026-03-29 02:00 CET -> 03:00 CEST.
        let tz = chrono_tz::Europe::Berlin;
        let w = sleep_window_at(hours("23:00", "07:00"), tz, utc("2026-03-29T01:30:00Z")).unwrap();
        assert_eq!(w.start, utc("2026-03-28T22:00:00Z")); // 23:00 CET
        assert_eq!(w.end, utc("2026-03-29T05:00:00Z")); // 07:00 CEST
        assert_eq!(w.end - w.start, chrono::Duration::hours(7));
    }

    #[test]
    fn berlin_fall_back_night_is_nine_hours() {
        // 2026-10-25 03:00 CEST -> 02:00 CET.
        let tz = chrono_tz::Europe::Berlin;
        let w = sleep_window_at(hours("23:00", "07:00"), tz, utc("2026-10-25T01:30:00Z")).unwrap();
        assert_eq!(w.start, utc("2026-10-24T21:00:00Z")); // 23:00 CEST
        assert_eq!(w.end, utc("2026-10-25T06:00:00Z")); // 07:00 CET
        assert_eq!(w.end - w.start, chrono::Duration::hours(9));
    }

    #[test]
    fn start_inside_the_gap_moves_forward() {
        let tz = chrono_tz::Europe::Berlin;
        // 02:30 does not exist on 2026-03-29; it becomes 03:30 CEST = 01:30Z.
        let w = sleep_window_at(hours("02:30", "06:00"), tz, utc("2026-03-29T02:00:00Z")).unwrap();
        assert_eq!(w.start, utc("2026-03-29T01:30:00Z"));
        assert_eq!(w.end, utc("2026-03-29T04:00:00Z"));
        // Ambiguous 02:30 on the fall-back day: the first (CEST) occurrence.
        let w = sleep_window_at(hours("02:30", "06:00"), tz, utc("2026-10-25T01:00:00Z")).unwrap();
        assert_eq!(w.start, utc("2026-10-25T00:30:00Z"));
        assert_eq!(w.end, utc("2026-10-25T05:00:00Z"));
    }

    #[test]
    fn new_york_dst_days() {
        let tz = chrono_tz::America::New_York;
        let h = hours("22:00", "06:00");
        // 2026-03-08 02:00 EST -> 03:00 EDT: 22:00 EST (03:00Z) to 06:00 EDT (10:00Z) = 7 h.
        let w = sleep_window_at(h, tz, utc("2026-03-08T08:00:00Z")).unwrap();
        assert_eq!(w.start, utc("2026-03-08T03:00:00Z"));
        assert_eq!(w.end, utc("2026-03-08T10:00:00Z"));
        // 2026-11-01 02:00 EDT -> 01:00 EST: 22:00 EDT (02:00Z) to 06:00 EST (11:00Z) = 9 h.
        let w = sleep_window_at(h, tz, utc("2026-11-01T08:00:00Z")).unwrap();
        assert_eq!(w.start, utc("2026-11-01T02:00:00Z"));
        assert_eq!(w.end, utc("2026-11-01T11:00:00Z"));
    }

    #[test]
    fn windows_in_a_range_are_ordered_and_disjoint() {
        let tz = chrono_tz::Europe::Berlin;
        let ws = sleep_windows(
            hours("23:00", "07:00"),
            tz,
            utc("2026-03-27T12:00:00Z"),
            utc("2026-03-31T12:00:00Z"),
        );
        assert_eq!(ws.len(), 4);
        for pair in ws.windows(2) {
            assert!(pair[0].end < pair[1].start);
        }
    }
}
