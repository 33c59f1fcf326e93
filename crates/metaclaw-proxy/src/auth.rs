use axum::http::HeaderMap;

use crate::error::ProxyError;
use crate::settings::ProxySettings;

/// The header carrying MetaClaw's own key when `Authorization`/`x-api-key` carry the
/// caller's upstream credential (subscription pass-through; Claude Code sends it through
/// `ANTHROPIC_CUSTOM_HEADERS`).
pub const PROXY_KEY_HEADER: &str = "x-metaclaw-key";

/// The header an agent may send to name itself when it has no key of its own (the global
/// key, or none, authenticates it; an agent's own key always decides instead).
pub const AGENT_HEADER: &str = "x-metaclaw-agent";

/// Authenticate the caller and tell which agent it is. An agent's own key (`agents.<name>.
/// api_key`, in `x-metaclaw-key` or the standard headers) names that agent; otherwise
/// `x-metaclaw-key`, when sent, must match `proxy.api_key`. Under pass-through the standard
/// headers hold the caller's own upstream credential, so they are not compared with the proxy
/// key; the listener is then loopback-only (config validation), which limits callers to this
/// machine.
pub(crate) fn check_caller(
    headers: &HeaderMap,
    settings: &ProxySettings,
) -> Result<String, ProxyError> {
    let expected = settings.api_key.as_str();
    if let Some(key) = headers.get(PROXY_KEY_HEADER) {
        let key = key.to_str().map(str::trim).unwrap_or_default();
        if let Some(agent) = settings.agent_for_key(key) {
            return Ok(agent.to_owned());
        }
        if expected.is_empty() || constant_time_eq(key.as_bytes(), expected.as_bytes()) {
            return Ok(named_agent(headers, settings));
        }
        return Err(ProxyError::Unauthorized(
            "the x-metaclaw-key header does not match proxy.api_key",
        ));
    }
    if settings.upstream.passthrough {
        return Ok(named_agent(headers, settings));
    }
    if let Some(agent) = presented_key(headers).and_then(|k| settings.agent_for_key(k)) {
        return Ok(agent.to_owned());
    }
    check(headers, expected)?;
    Ok(named_agent(headers, settings))
}

/// The agent an `x-metaclaw-agent` header names, when it is a configured one; the default
/// agent otherwise (a label never creates an agent).
fn named_agent(headers: &HeaderMap, settings: &ProxySettings) -> String {
    headers
        .get(AGENT_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|name| settings.agents.iter().any(|a| a.name == *name))
        .unwrap_or(metaclaw_domain::DEFAULT_AGENT)
        .to_owned()
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

    fn settings(shared: &str, passthrough: bool) -> ProxySettings {
        let mut config = metaclaw_config::Config::default();
        config.proxy.api_key = shared.into();
        if passthrough {
            config.llm.auth_method = metaclaw_config::AuthMethod::Passthrough;
        }
        for (name, key) in [
            ("claude-code", "mc-cc-key"),
            ("codex", "mc-codex-key"),
            ("hermes", ""),
        ] {
            config.agents.insert(
                name.into(),
                metaclaw_config::AgentConfig {
                    api_key: key.into(),
                    ..Default::default()
                },
            );
        }
        ProxySettings::from_config(&config)
    }

    #[test]
    fn an_agents_own_key_names_it_in_any_header() {
        let s = settings("shared", false);
        let who = |pairs: &[(&'static str, &str)]| check_caller(&headers(pairs), &s);
        assert_eq!(
            who(&[("authorization", "Bearer mc-cc-key")]).unwrap(),
            "claude-code"
        );
        assert_eq!(who(&[("x-api-key", "mc-codex-key")]).unwrap(), "codex");
        assert_eq!(who(&[("x-metaclaw-key", "mc-codex-key")]).unwrap(), "codex");
        // The shared key still works, for the default agent or the one a header names.
        assert_eq!(
            who(&[("authorization", "Bearer shared")]).unwrap(),
            "default"
        );
        assert_eq!(
            who(&[("authorization", "Bearer shared"), (AGENT_HEADER, "hermes")]).unwrap(),
            "hermes"
        );
        // A header never overrides a key, and never invents an agent.
        assert_eq!(
            who(&[
                ("authorization", "Bearer mc-cc-key"),
                (AGENT_HEADER, "codex")
            ])
            .unwrap(),
            "claude-code"
        );
        assert_eq!(
            who(&[("authorization", "Bearer shared"), (AGENT_HEADER, "nobody")]).unwrap(),
            "default"
        );
        assert!(who(&[("authorization", "Bearer wrong")]).is_err());
        assert!(who(&[(AGENT_HEADER, "codex")]).is_err());
    }

    #[test]
    fn pass_through_takes_the_agent_key_from_its_own_header() {
        let s = settings("shared", true);
        let who = |pairs: &[(&'static str, &str)]| check_caller(&headers(pairs), &s);
        // The bearer is the caller's own sign-in, not a proxy key.
        assert_eq!(
            who(&[
                ("authorization", "Bearer sk-ant-oat-x"),
                ("x-metaclaw-key", "mc-cc-key")
            ])
            .unwrap(),
            "claude-code"
        );
        assert_eq!(
            who(&[("authorization", "Bearer sk-ant-oat-x")]).unwrap(),
            "default"
        );
        assert!(who(&[("x-metaclaw-key", "wrong")]).is_err());
        // Without any shared key, agent keys still name their agents.
        let open = settings("", false);
        assert_eq!(
            check_caller(&headers(&[("authorization", "Bearer mc-cc-key")]), &open).unwrap(),
            "claude-code"
        );
        assert_eq!(
            check_caller(&headers(&[("authorization", "Bearer anything")]), &open).unwrap(),
            "default"
        );
    }

    #[test]
    fn empty_expected_key_disables_auth() {
        assert!(check(&headers(&[]), "").is_ok());
    }
}
