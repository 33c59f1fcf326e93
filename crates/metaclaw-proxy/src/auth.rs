use axum::http::HeaderMap;

use crate::error::ProxyError;
use crate::settings::ProxySettings;

/// The header carrying MetaClaw's own key when `Authorization`/`x-api-key` carry the
/// caller's upstream credential (subscription pass-through; Claude Code sends it through
/// `ANTHROPIC_CUSTOM_HEADERS`).
pub const PROXY_KEY_HEADER: &str = "x-metaclaw-key";

/// Authenticate the caller. `x-metaclaw-key`, when sent, must match `proxy.api_key`. Under
/// pass-through the standard headers hold the caller's own upstream credential, so they are
/// not compared with the proxy key; the listener is then loopback-only (config validation),
/// which limits callers to this machine.
pub(crate) fn check_caller(
    headers: &HeaderMap,
    settings: &ProxySettings,
) -> Result<(), ProxyError> {
    let expected = settings.api_key.as_str();
    if let Some(key) = headers.get(PROXY_KEY_HEADER) {
        if expected.is_empty() {
            return Ok(());
        }
        let key = key.to_str().map(str::trim).unwrap_or_default();
        return if constant_time_eq(key.as_bytes(), expected.as_bytes()) {
            Ok(())
        } else {
            Err(ProxyError::Unauthorized(
                "the x-metaclaw-key header does not match proxy.api_key",
            ))
        };
    }
    if settings.upstream.passthrough {
        return Ok(());
    }
    check(headers, expected)
}

/// Accept `Authorization: Bearer <key>` or Anthropic's `x-api-key: <key>`.
pub(crate) fn check(headers: &HeaderMap, expected: &str) -> Result<(), ProxyError> {
    if expected.is_empty() {
        return Ok(());
    }
    let presented = presented_key(headers).ok_or(ProxyError::Unauthorized(
        "send the proxy key as `Authorization: Bearer <key>` or `x-api-key: <key>`",
    ))?;
    if constant_time_eq(presented.as_bytes(), expected.as_bytes()) {
        Ok(())
    } else {
        Err(ProxyError::Unauthorized(
            "the key does not match proxy.api_key",
        ))
    }
}

pub(crate) fn presented_key(headers: &HeaderMap) -> Option<&str> {
    if let Some(v) = headers.get("x-api-key").and_then(|v| v.to_str().ok()) {
        return Some(v.trim());
    }
    let auth = headers.get("authorization")?.to_str().ok()?.trim();
    let (scheme, key) = auth.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| key.trim())
}

/// Compares secrets without leaking how long a matching prefix is through timing.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn accepts_bearer_and_x_api_key() {
        assert!(check(&headers(&[("authorization", "Bearer k1")]), "k1").is_ok());
        assert!(check(&headers(&[("authorization", "bearer k1")]), "k1").is_ok());
        assert!(check(&headers(&[("x-api-key", "k1")]), "k1").is_ok());
    }

    #[test]
    fn rejects_missing_wrong_and_non_bearer() {
        assert!(check(&headers(&[]), "k1").is_err());
        assert!(check(&headers(&[("authorization", "Bearer k2")]), "k1").is_err());
        assert!(check(&headers(&[("authorization", "Basic k1")]), "k1").is_err());
    }

    #[test]
    fn empty_expected_key_disables_auth() {
        assert!(check(&headers(&[]), "").is_ok());
    }
}
