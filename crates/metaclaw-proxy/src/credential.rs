//! Which credential goes upstream. MetaClaw's own (`llm.api_key`, or a subscription
//! `llm.oauth_token` as a bearer), or under pass-through the caller's, forwarded exactly as
//! it came: an OAuth bearer must stay a bearer (Anthropic refuses one sent as `x-api-key`),
//! and its `anthropic-beta` flags travel with it. Credentials are never logged or kept.

use axum::http::{HeaderMap, header};
use metaclaw_domain::Dialect;
use reqwest::RequestBuilder;

use crate::settings::ProxySettings;

/// The beta flag Anthropic requires with OAuth (subscription) bearer tokens.
const OAUTH_BETA: &str = "oauth-2025-04-20";

/// Caller headers forwarded under pass-through besides the credential: Anthropic checks
/// subscription traffic against the client that signed in.
const PASSTHROUGH_HEADERS: [&str; 2] = ["x-app", "user-agent"];

/// Add the upstream credential and the dialect's version headers to `rb`.
pub(crate) fn apply(
    mut rb: RequestBuilder,
    client: &HeaderMap,
    settings: &ProxySettings,
    upstream: Dialect,
) -> RequestBuilder {
    let up = &settings.upstream;
    let mut betas: Vec<String> = client
        .get("anthropic-beta")
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(',').map(|b| b.trim().to_owned()).collect())
        .unwrap_or_default();
    let forwarded = settings.pass_through_auth()
        && caller_credential(client)
        && !sends_proxy_key(client, &settings.api_key);
    if forwarded {
        let openai_key_only =
            upstream == Dialect::OpenAi && !client.contains_key(header::AUTHORIZATION);
        for name in [header::AUTHORIZATION.as_str(), "x-api-key"]
            .into_iter()
            .chain(PASSTHROUGH_HEADERS)
        {
            let Some(v) = client.get(name) else { continue };
            rb = if name == "x-api-key" && openai_key_only {
                // OpenAI-style upstreams read only the bearer.
                rb.header(header::AUTHORIZATION, [b"Bearer ", v.as_bytes()].concat())
            } else {
                rb.header(name, v.as_bytes())
            };
        }
    } else if !up.api_key.is_empty() {
        rb = match upstream {
            Dialect::OpenAi => rb.bearer_auth(&up.api_key),
            Dialect::Anthropic => rb.header("x-api-key", &up.api_key),
        };
    } else if !up.oauth_token.is_empty() {
        rb = rb.bearer_auth(&up.oauth_token);
        if upstream == Dialect::Anthropic && !betas.iter().any(|b| b == OAUTH_BETA) {
            betas.push(OAUTH_BETA.to_owned());
        }
    }
    if upstream == Dialect::Anthropic {
        let version = client
            .get("anthropic-version")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("2023-06-01");
        rb = rb.header("anthropic-version", version);
        betas.retain(|b| !b.is_empty());
        if !betas.is_empty() {
            rb = rb.header("anthropic-beta", betas.join(","));
        }
    }
    rb
}

/// An agent wired with MetaClaw's key (one without a sign-in of its own) presents the proxy
/// key, which must never travel upstream: MetaClaw's own credential is used instead.
fn sends_proxy_key(client: &HeaderMap, proxy_key: &str) -> bool {
    !proxy_key.is_empty()
        && crate::auth::presented_key(client)
            .is_some_and(|k| crate::auth::constant_time_eq(k.as_bytes(), proxy_key.as_bytes()))
}

/// The caller sent an upstream credential of its own.
fn caller_credential(client: &HeaderMap) -> bool {
    client.contains_key(header::AUTHORIZATION) || client.contains_key("x-api-key")
}
