//! Who may use the dashboard API: loopback hosts only (DNS rebinding), no cross-origin
//! requests, and the per-install token as a bearer header or the login cookie.

use axum::extract::{Query, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;

use super::{Api, ApiError, ErrorCode};
use crate::error::CoreError;

pub(crate) const COOKIE: &str = "metaclaw_session";
const CODE_LIFETIME_MINUTES: i64 = 5;

fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    rand::fill(&mut buf[..]);
    buf.iter().map(|b| format!("{b:02x}")).collect()
}

/// The token from `~/.metaclaw/dashboard.token`, created (0600) on first use.
pub(crate) fn load_or_create_token(home: &metaclaw_config::Home) -> Result<String, CoreError> {
    let path = home.dashboard_token_path();
    if let Ok(text) = std::fs::read_to_string(&path) {
        let t = text.trim();
        if t.len() >= 32 {
            return Ok(t.to_owned());
        }
    }
    let token = random_hex(32);
    let fail = |source| CoreError::Write {
        path: path.clone(),
        source,
    };
    {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .mode(0o600)
            .open(&path)
            .map_err(fail)?;
        f.write_all(token.as_bytes()).map_err(fail)?;
    }
    Ok(token)
}

fn host_is_loopback(headers: &HeaderMap) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else {
        return false;
    };
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']')
            .next()
            .map(|h| format!("[{h}]"))
            .unwrap_or_default()
    } else {
        host.split(':').next().unwrap_or("").to_owned()
    };
    matches!(
        name.to_ascii_lowercase().as_str(),
        "127.0.0.1" | "localhost" | "[::1]"
    )
}

/// Applies to everything this router serves (API, login and UI): a page loaded from another
/// host name that resolves to 127.0.0.1 (DNS rebinding) is refused.
pub(crate) async fn loopback_only(req: Request, next: Next) -> Response {
    if !host_is_loopback(req.headers()) {
        return ApiError::new(
            ErrorCode::Forbidden,
            "the dashboard only answers on loopback host names (127.0.0.1, localhost)",
        )
        .into_response();
    }
    next.run(req).await
}

fn same_origin(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN).and_then(|o| o.to_str().ok()) else {
        return true;
    };
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    origin == format!("http://{host}")
}

fn presented_token(headers: &HeaderMap) -> Option<String> {
    if let Some(auth) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        && let Some(t) = auth
            .strip_prefix("Bearer ")
            .or_else(|| auth.strip_prefix("bearer "))
    {
        return Some(t.trim().to_owned());
    }
    let cookies = headers.get(header::COOKIE)?.to_str().ok()?;
    cookies
        .split(';')
        .filter_map(|c| c.trim().split_once('='))
        .find(|(k, _)| *k == COOKIE)
        .map(|(_, v)| v.to_owned())
}

pub(crate) async fn require_token(State(state): State<Api>, req: Request, next: Next) -> Response {
    if !same_origin(req.headers()) {
        return ApiError::new(
            ErrorCode::Forbidden,
            "cross-origin requests to the dashboard API are refused",
        )
        .into_response();
    }
    match presented_token(req.headers()) {
        Some(t) if metaclaw_proxy::constant_time_eq(t.as_bytes(), state.token().as_bytes()) => {
            next.run(req).await
        }
        Some(_) => {
            ApiError::new(ErrorCode::Unauthorized, "invalid dashboard token").into_response()
        }
        None => ApiError::new(
            ErrorCode::Unauthorized,
            "log in with `metaclaw dashboard` (or send the dashboard token as a Bearer header)",
        )
        .into_response(),
    }
}

impl Api {
    /// A one-time login code and when it expires (the `NewLoginCode` operation).
    pub(crate) fn new_login_code(&self) -> (String, chrono::DateTime<chrono::Utc>) {
        let code = random_hex(16);
        let now = self.parts().clock.now();
        let expires = now + chrono::Duration::minutes(CODE_LIFETIME_MINUTES);
        let mut codes = self.codes();
        codes.retain(|_, exp| *exp > now);
        codes.insert(code.clone(), expires);
        (code, expires)
    }
}

#[derive(Deserialize)]
pub(crate) struct LoginQuery {
    code: String,
}

/// Exchange a one-time code for the session cookie, then open the dashboard.
pub(crate) async fn login(State(state): State<Api>, Query(q): Query<LoginQuery>) -> Response {
    let valid = {
        let mut codes = state.codes();
        codes
            .remove(&q.code)
            .is_some_and(|exp| exp > state.parts().clock.now())
    };
    if !valid {
        return (StatusCode::UNAUTHORIZED, axum::response::Html(
            "<!doctype html><title>MetaClaw</title><p>This login link has expired or was already used. Run <code>metaclaw dashboard</code> for a new one.</p>",
        ))
            .into_response();
    }
    let cookie = format!(
        "{COOKIE}={}; HttpOnly; SameSite=Strict; Path=/",
        state.token()
    );
    let mut resp = Redirect::to("/").into_response();
    if let Ok(v) = cookie.parse() {
        resp.headers_mut().insert(header::SET_COOKIE, v);
    }
    resp
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
    fn loopback_hosts_only() {
        for ok in ["127.0.0.1:30000", "localhost", "LOCALHOST:1", "[::1]:8080"] {
            assert!(host_is_loopback(&headers(&[("host", ok)])), "{ok}");
        }
        for bad in ["evil.example:30000", "127.0.0.1.evil.com", "10.0.0.2", ""] {
            assert!(!host_is_loopback(&headers(&[("host", bad)])), "{bad}");
        }
    }

    #[test]
    fn origins_and_tokens() {
        assert!(same_origin(&headers(&[
            ("host", "127.0.0.1:3"),
            ("origin", "http://127.0.0.1:3")
        ])));
        assert!(!same_origin(&headers(&[
            ("host", "127.0.0.1:3"),
            ("origin", "http://evil.example")
        ])));
        assert!(same_origin(&headers(&[("host", "127.0.0.1:3")])));
        assert_eq!(
            presented_token(&headers(&[("cookie", "a=b; metaclaw_session=tok")])).as_deref(),
            Some("tok")
        );
        assert_eq!(
            presented_token(&headers(&[("authorization", "Bearer tok")])).as_deref(),
            Some("tok")
        );
    }
}
