//! Plain configuration for the scheduler. The daemon maps its config keys onto this struct;
//! this crate never reads config files itself.

use std::path::PathBuf;
use std::time::Duration;

use chrono::NaiveTime;
use serde::{Deserialize, Serialize};

/// Everything the scheduler needs to know from the user's configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SchedulerSettings {
    /// `scheduler.enabled`. Gating is on when this is true **or** `mode_auto` is true
    /// (upstream: `mode: auto` forces the scheduler on).
    pub enabled: bool,
    /// True when the daemon runs in `auto` mode (RL gated by OMLS). In `rl` mode with
    /// `enabled == false` the scheduler always says "go".
    pub mode_auto: bool,
    /// Local wall-clock start of sleep hours, `"HH:MM"`. `None` turns the sleep source off.
    pub sleep_start: Option<String>,
    /// Local wall-clock end of sleep hours, `"HH:MM"`. `None` turns the sleep source off.
    pub sleep_end: Option<String>,
    /// OS idle time (or time since the last proxied request) that opens a window.
    /// `None` (or `Some(0)`) turns the idle source off.
    pub idle_threshold_minutes: Option<u32>,
    /// A window with a known end must have at least this much time left to start a step.
    pub min_window_minutes: u32,
    pub calendar: CalendarSettings,
    /// How often the OS idle time is read while training runs (the user-return check).
    pub poll_seconds: u64,
}

impl Default for SchedulerSettings {
    fn default() -> Self {
        Self {
            enabled: false,
            mode_auto: false,
            sleep_start: Some("23:00".to_owned()),
            sleep_end: Some("07:00".to_owned()),
            idle_threshold_minutes: Some(30),
            min_window_minutes: 15,
            calendar: CalendarSettings::default(),
            poll_seconds: 10,
        }
    }
}

/// Calendar source configuration (`scheduler.calendar.*`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CalendarSettings {
    pub enabled: bool,
    /// `.ics` files, or folders whose `*.ics` files are all read. Watched for changes.
    pub paths: Vec<PathBuf>,
    /// `http(s)://` or `webcal://` URLs of `.ics` feeds, fetched every `refresh_minutes`.
    pub urls: Vec<String>,
    /// The user's address; events where this attendee has `PARTSTAT=DECLINED` are not busy.
    pub user_email: Option<String>,
    /// Whether all-day events count as busy (default: no — an all-day "conference" or
    /// "holiday" entry says little about whether the user is at the keyboard).
    pub include_all_day: bool,
    pub refresh_minutes: u32,
}

impl Default for CalendarSettings {
    fn default() -> Self {
        Self {
            enabled: false,
            paths: Vec::new(),
            urls: Vec::new(),
            user_email: None,
            include_all_day: false,
            refresh_minutes: 30,
        }
    }
}

impl SchedulerSettings {
    /// True when training is gated by windows (otherwise the scheduler always says "go").
    pub fn gating(&self) -> bool {
        self.enabled || self.mode_auto
    }

    pub(crate) fn idle_threshold(&self) -> Option<Duration> {
        match self.idle_threshold_minutes {
            Some(m) if m > 0 => Some(Duration::from_secs(u64::from(m) * 60)),
            _ => None,
        }
    }

    pub(crate) fn min_window(&self) -> Duration {
        Duration::from_secs(u64::from(self.min_window_minutes) * 60)
    }

    pub(crate) fn poll_interval(&self) -> Duration {
        Duration::from_secs(self.poll_seconds.clamp(1, 3600))
    }

    pub(crate) fn refresh_interval(&self) -> Duration {
        Duration::from_secs(u64::from(self.calendar.refresh_minutes.max(1)) * 60)
    }

    /// Parse the sleep hours. `Ok(None)` = source turned off; `Err` = configured but invalid
    /// (reported in the status, and the source then stays closed).
    pub(crate) fn sleep_hours(&self) -> Result<Option<SleepHours>, String> {
        match (&self.sleep_start, &self.sleep_end) {
            (Some(s), Some(e)) if !s.trim().is_empty() && !e.trim().is_empty() => {
                let start = parse_hhmm(s)?;
                let end = parse_hhmm(e)?;
                if start == end {
                    return Err(format!("sleep_start and sleep_end are both {s}"));
                }
                Ok(Some(SleepHours { start, end }))
            }
            _ => Ok(None),
        }
    }
}

/// Parsed sleep hours (local wall-clock times).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SleepHours {
    pub start: NaiveTime,
    pub end: NaiveTime,
}

/// Parse `"HH:MM"` (24 h; `"24:00"` is accepted as midnight).
pub fn parse_hhmm(s: &str) -> Result<NaiveTime, String> {
    let t = s.trim();
    let (h, m) = t
        .split_once(':')
        .ok_or_else(|| format!("{s:?} is not HH:MM"))?;
    let h: u32 = h.parse().map_err(|_| format!("{s:?} is not HH:MM"))?;
    let m: u32 = m.parse().map_err(|_| format!("{s:?} is not HH:MM"))?;
    if h == 24 && m == 0 {
        return Ok(NaiveTime::MIN);
    }
    NaiveTime::from_hms_opt(h, m, 0).ok_or_else(|| format!("{s:?} is not a valid time of day"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hhmm_parsing() {
        assert_eq!(
            parse_hhmm("23:05").unwrap(),
            NaiveTime::from_hms_opt(23, 5, 0).unwrap()
        );
        assert_eq!(
            parse_hhmm(" 7:00 ").unwrap(),
            NaiveTime::from_hms_opt(7, 0, 0).unwrap()
        );
        assert_eq!(parse_hhmm("24:00").unwrap(), NaiveTime::MIN);
        for bad in ["", "7", "25:00", "12:60", "ab:cd", "-1:00", "12:00:00"] {
            assert!(parse_hhmm(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn sleep_hours_can_be_off_or_invalid() {
        let mut s = SchedulerSettings::default();
        assert!(s.sleep_hours().unwrap().is_some());
        s.sleep_start = None;
        assert!(s.sleep_hours().unwrap().is_none());
        s.sleep_start = Some("07:00".into());
        assert!(s.sleep_hours().is_err(), "start == end is rejected");
        s.sleep_start = Some("nope".into());
        assert!(s.sleep_hours().is_err());
    }
}
