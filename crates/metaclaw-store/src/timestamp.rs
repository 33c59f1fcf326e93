//! The one timestamp format stored in every TEXT time column.

use chrono::{DateTime, SecondsFormat, Utc};

use crate::error::{Result, StoreError};

/// RFC 3339, UTC, milliseconds, `Z` suffix: fixed width, so SQL string comparison is
/// chronological comparison.
pub(crate) fn format(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

pub(crate) fn parse(column: &'static str, text: &str) -> Result<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| StoreError::InvalidColumn {
            column,
            value: text.to_owned(),
        })
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    #[test]
    fn format_is_fixed_width_millis_utc() {
        let t = Utc.with_ymd_and_hms(2025, 1, 2, 3, 4, 5).unwrap();
        assert_eq!(format(t), "2025-01-02T03:04:05.000Z");
        assert_eq!(parse("t", &format(t)).unwrap(), t);
        assert!(parse("t", "yesterday").is_err());
    }
}
