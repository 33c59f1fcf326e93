//! Retry decisions shared by submission and polling (spec §1.3).

use std::time::Duration;

use reqwest::header::HeaderMap;

/// Statuses a submission retries (with back-off) unless `x-should-retry: false`.
pub(crate) fn is_retryable_status(status: u16) -> bool {
    matches!(status, 408 | 409 | 429) || status >= 500
}

/// `x-should-retry: true|false` overrides the status-based decision.
pub(crate) fn should_retry_header(headers: &HeaderMap) -> Option<bool> {
    let v = headers.get("x-should-retry")?.to_str().ok()?;
    match v.trim() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// `retry-after-ms` or `retry-after` (seconds), honoured only when 0 < value ≤ 60 s.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let parse =
        |name: &str| -> Option<f64> { headers.get(name)?.to_str().ok()?.trim().parse().ok() };
    let d = if let Some(ms) = parse("retry-after-ms") {
        Duration::from_secs_f64(ms.max(0.0) / 1000.0)
    } else {
        let secs = parse("retry-after")?;
        if !secs.is_finite() || secs < 0.0 {
            return None;
        }
        Duration::from_secs_f64(secs)
    };
    (d > Duration::ZERO && d <= Duration::from_secs(60)).then_some(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn retry_after_bounds() {
        let mut h = HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after", HeaderValue::from_static("120"));
        assert_eq!(retry_after(&h), None);
        h.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(250)));
        h.insert("x-should-retry", HeaderValue::from_static("false"));
        assert_eq!(should_retry_header(&h), Some(false));
        assert!(is_retryable_status(503) && is_retryable_status(409) && !is_retryable_status(404));
    }
}
