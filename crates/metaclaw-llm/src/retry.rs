//! The one retry policy for LLM calls: a bounded number of retries with exponential backoff
//! and jitter, the server's `retry-after` honoured when it asks for a sane wait.

use std::time::Duration;

use backon::ExponentialBuilder;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt; 0 never retries.
    pub max_retries: usize,
    /// The wait before the first retry; it doubles (with jitter) after that.
    pub first_delay: Duration,
    /// No computed wait is longer than this.
    pub max_delay: Duration,
    /// A `retry-after` longer than this is not waited for: the error goes to the caller.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 2,
            first_delay: Duration::from_millis(250),
            max_delay: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// One attempt only: for probes, which report what the endpoint says right now.
    pub const fn none() -> RetryPolicy {
        RetryPolicy {
            max_retries: 0,
            first_delay: Duration::ZERO,
            max_delay: Duration::ZERO,
            max_retry_after: Duration::ZERO,
        }
    }

    pub(crate) fn backoff(&self) -> ExponentialBuilder {
        ExponentialBuilder::default()
            .with_min_delay(self.first_delay)
            .with_max_delay(self.max_delay)
            .with_factor(2.0)
            .with_max_times(self.max_retries)
            // Parallel calls (the judge's votes) that fail together should not retry together.
            .with_jitter()
    }

    /// The wait before the next retry: the server's `retry-after` when it gave one, else the
    /// backoff's `next`. `None` (give up) when retries are used up, the server wants longer
    /// than `max_retry_after`, or the wait would not end before `budget_left`.
    pub(crate) fn wait(
        &self,
        next: Option<Duration>,
        retry_after: Option<Duration>,
        budget_left: Duration,
    ) -> Option<Duration> {
        let next = next?;
        let wait = match retry_after {
            Some(asked) if asked > self.max_retry_after => return None,
            Some(asked) => asked,
            None => next,
        };
        (wait < budget_left).then_some(wait)
    }
}

/// A `retry-after` header: delay seconds or an HTTP date (counted from `now`); also OpenAI's
/// `retry-after-ms`.
pub(crate) fn parse_retry_after(
    headers: &reqwest::header::HeaderMap,
    now: std::time::SystemTime,
) -> Option<Duration> {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = text("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let value = text("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderMap, HeaderValue};

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn retry_after_forms() {
        let now = std::time::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        assert_eq!(
            parse_retry_after(&headers(&[("retry-after", "3")]), now),
            Some(Duration::from_secs(3))
        );
        assert_eq!(
            parse_retry_after(
                &headers(&[("retry-after", "3"), ("retry-after-ms", "1500")]),
                now
            ),
            Some(Duration::from_millis(1500))
        );
        let past = httpdate::fmt_http_date(std::time::UNIX_EPOCH);
        let later = httpdate::fmt_http_date(now + Duration::from_secs(90));
        assert_eq!(
            parse_retry_after(&headers(&[("retry-after", &later)]), now),
            Some(Duration::from_secs(90))
        );
        assert_eq!(
            parse_retry_after(&headers(&[("retry-after", &past)]), now),
            Some(Duration::ZERO)
        );
        assert_eq!(
            parse_retry_after(&headers(&[("retry-after", "soon")]), now),
            None
        );
        assert_eq!(
            parse_retry_after(&headers(&[("retry-after", "-1")]), now),
            None
        );
        assert_eq!(parse_retry_after(&HeaderMap::new(), now), None);
    }

    #[test]
    fn waits_respect_the_bounds() {
        let p = RetryPolicy::default();
        let s = Duration::from_secs;
        assert_eq!(p.wait(Some(s(1)), None, s(10)), Some(s(1)));
        assert_eq!(p.wait(Some(s(1)), Some(s(5)), s(10)), Some(s(5)));
        assert_eq!(p.wait(None, Some(s(5)), s(10)), None, "retries used up");
        assert_eq!(p.wait(Some(s(1)), Some(s(61)), s(100)), None, "too long");
        assert_eq!(
            p.wait(Some(s(1)), Some(s(5)), s(4)),
            None,
            "past the budget"
        );
    }
}
