//! The user's local time zone, from one source for every part of MetaClaw (scheduler windows,
//! "today" in the status, charts per day, times printed by the CLI): `TZ` when it names a zone,
//! else the system's zone, else UTC.

use chrono_tz::Tz;

/// A local zone and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalZone {
    pub tz: Tz,
    /// `TZ`, `system` or `fallback`.
    pub source: &'static str,
    /// Why the zone is not the one asked for, when it is not.
    pub note: Option<String>,
}

/// The local zone of this process (`TZ` first, then the system's).
pub fn local_zone() -> LocalZone {
    let env = std::env::var("TZ").ok();
    resolve(env.as_deref(), || {
        iana_time_zone::get_timezone().map_err(|e| e.to_string())
    })
}

/// `local_zone` with the environment and the system lookup passed in.
pub fn resolve(tz_env: Option<&str>, system: impl FnOnce() -> Result<String, String>) -> LocalZone {
    let mut note = None;
    if let Some(value) = tz_env.map(str::trim).filter(|v| !v.is_empty()) {
        match parse_tz_variable(value) {
            Some(tz) => {
                return LocalZone {
                    tz,
                    source: "TZ",
                    note: None,
                };
            }
            None => note = Some(format!("TZ={value:?} names no known zone; ")),
        }
    }
    let prefix = note.take().unwrap_or_default();
    match system() {
        Ok(name) => match name.parse::<Tz>() {
            Ok(tz) => LocalZone {
                tz,
                source: "system",
                note: (!prefix.is_empty()).then(|| format!("{prefix}using the system zone {name}")),
            },
            Err(_) => LocalZone {
                tz: Tz::UTC,
                source: "fallback",
                note: Some(format!(
                    "{prefix}unknown system time zone {name:?}; using UTC"
                )),
            },
        },
        Err(e) => LocalZone {
            tz: Tz::UTC,
            source: "fallback",
            note: Some(format!(
                "{prefix}cannot detect the time zone ({e}); using UTC"
            )),
        },
    }
}

/// `TZ` as the C library reads it: `Europe/Berlin`, `:Europe/Berlin`, a path into a zoneinfo
/// folder, or `UTC`/`UTC0`/`GMT`. POSIX rule strings (`CET-1CEST,...`) name no IANA zone.
fn parse_tz_variable(value: &str) -> Option<Tz> {
    let value = value.strip_prefix(':').unwrap_or(value);
    if let Ok(tz) = value.parse::<Tz>() {
        return Some(tz);
    }
    if let Some((_, name)) = value.rsplit_once("zoneinfo/")
        && let Ok(tz) = name.parse::<Tz>()
    {
        return Some(tz);
    }
    matches!(value, "UTC0" | "GMT0" | "UTC" | "GMT" | "Z").then_some(Tz::UTC)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn system_utc() -> Result<String, String> {
        Ok("Etc/UTC".into())
    }

    #[test]
    fn tz_wins_over_the_system() {
        let z = resolve(Some("Europe/Berlin"), system_utc);
        assert_eq!((z.tz, z.source), (chrono_tz::Europe::Berlin, "TZ"));
        let z = resolve(Some(":America/New_York"), system_utc);
        assert_eq!(z.tz, chrono_tz::America::New_York);
        let z = resolve(Some("/usr/share/zoneinfo/Asia/Shanghai"), system_utc);
        assert_eq!(z.tz, chrono_tz::Asia::Shanghai);
        assert_eq!(
            resolve(Some("UTC0"), || Ok("Europe/Paris".into())).tz,
            Tz::UTC
        );
    }

    #[test]
    fn no_or_unusable_tz_falls_back_to_the_system_and_says_why() {
        let z = resolve(None, || Ok("Asia/Tokyo".into()));
        assert_eq!(
            (z.tz, z.source, z.note),
            (chrono_tz::Asia::Tokyo, "system", None)
        );
        let z = resolve(Some("CET-1CEST,M3.5.0,M10.5.0/3"), || {
            Ok("Europe/Madrid".into())
        });
        assert_eq!((z.tz, z.source), (chrono_tz::Europe::Madrid, "system"));
        assert!(z.note.unwrap().contains("names no known zone"));
        let z = resolve(None, || Err("no /etc/localtime".into()));
        assert_eq!((z.tz, z.source), (Tz::UTC, "fallback"));
        assert!(z.note.unwrap().contains("no /etc/localtime"));
    }
}
