//! First-run onboarding through the API: presets, checking a candidate endpoint before it is
//! saved (success, the provider's own 401 message, a refused port, a timeout, Anthropic),
//! `needs_onboarding`, saving the endpoint and the agent settings.

mod support;

use reqwest::Method;
use serde_json::{Value, json};
use support::{Harness, PROXY_KEY};

use metaclaw_tests::mock_upstream::Behaviour;

const CANDIDATE_KEY: &str = "sk-candidate-secret-0123456789";

#[tokio::test]
async fn presets_list_the_cloud_and_local_providers() {
    let h = Harness::start().await;
    let api = h.api().never_echo(CANDIDATE_KEY);
    let p = api.get("/api/onboarding/presets").await;
    let find = |name: &str| {
        p["presets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == name)
            .unwrap_or_else(|| panic!("no preset {name}: {p}"))
            .clone()
    };
    for (name, base) in [
        ("ollama", "http://127.0.0.1:11434/v1"),
        ("vllm", "http://127.0.0.1:8000/v1"),
        ("lmstudio", "http://127.0.0.1:1234/v1"),
    ] {
        let x = find(name);
        assert_eq!(
            (x["api_base"].as_str(), x["local"].as_bool()),
            (Some(base), Some(true))
        );
        assert_eq!(
            (x["needs_key"].as_bool(), &x["provider"]),
            (Some(false), &json!("custom"))
        );
    }
    for name in [
        "kimi",
        "qwen",
        "openai",
        "openrouter",
        "anthropic",
        "custom",
    ] {
        find(name);
    }
    assert_eq!(find("anthropic")["provider"], "anthropic");
    assert_eq!(find("openai")["needs_key"], true);
    // The harness's endpoint is the mock, which no preset names.
    assert_eq!(
        (&p["current"], &p["has_key"]),
        (&json!("custom"), &json!(true))
    );
    h.stop().await;
}

#[tokio::test]
async fn a_candidate_lists_its_models_and_answers_one_token() {
    let h = Harness::start().await;
    let api = h.api().never_echo(CANDIDATE_KEY);
    let base = h.mock.openai_base();
    let models = api
        .post(
            "/api/onboarding/models",
            json!({"provider": "custom", "api_base": base, "api_key": CANDIDATE_KEY}),
        )
        .await;
    assert_eq!(
        models,
        json!({"models": ["mock-claude", "mock-model"], "failure": null})
    );
    let t = api
        .post(
            "/api/onboarding/test",
            json!({"provider": "custom", "api_base": base, "api_key": CANDIDATE_KEY, "model": "mock-model"}),
        )
        .await;
    assert_eq!(
        (&t["ok"], &t["failure"]),
        (&json!(true), &Value::Null),
        "{t}"
    );
    let chat: Vec<_> = h
        .mock
        .requests()
        .into_iter()
        .filter(|r| r.path == "/v1/chat/completions")
        .collect();
    assert_eq!(chat.len(), 1, "one real request");
    assert_eq!(chat[0].body["max_tokens"], 1);
    assert_eq!(chat[0].body["model"], "mock-model");
    assert_eq!(
        chat[0].headers["authorization"],
        format!("Bearer {CANDIDATE_KEY}")
    );
    // Nothing was saved by testing.
    assert_eq!(h.core().api().config().llm.api_key, "upstream-key");

    // Without a key, the stored one goes to the stored endpoint only.
    h.mock.reset();
    api.post(
        "/api/onboarding/test",
        json!({"api_base": base, "model": "mock-model"}),
    )
    .await;
    assert_eq!(
        h.mock.requests()[0].headers["authorization"],
        "Bearer upstream-key"
    );
    h.stop().await;
}

#[tokio::test]
async fn a_refused_key_shows_the_status_and_the_providers_message() {
    let h = Harness::start().await;
    let api = h.api().never_echo(CANDIDATE_KEY);
    h.mock.push(Behaviour::error_with(
        401,
        json!({"error": {"message": "Invalid Authentication", "type": "invalid_request_error"}}),
        &[],
    ));
    let t = api
        .post(
            "/api/onboarding/test",
            json!({"provider": "kimi", "api_base": h.mock.openai_base(), "api_key": CANDIDATE_KEY, "model": "mock-model"}),
        )
        .await;
    assert_eq!(t["ok"], false);
    let f = &t["failure"];
    assert_eq!(f["summary"], "401: Invalid Authentication", "{t}");
    assert_eq!(
        (&f["kind"], &f["status"]),
        (&json!("unauthorized"), &json!(401))
    );
    assert_eq!(f["upstream_message"], "Invalid Authentication");
    // Tried once: a refused key is not retried.
    assert_eq!(h.mock.stats().requests, 1);
    h.stop().await;
}

#[tokio::test]
async fn a_closed_port_and_a_silent_server_are_told_apart() {
    let h = Harness::start().await;
    let api = h.api().never_echo(CANDIDATE_KEY);
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let t = api
        .post(
            "/api/onboarding/test",
            json!({"api_base": format!("http://127.0.0.1:{closed}/v1"), "api_key": "", "model": "m"}),
        )
        .await;
    assert_eq!(t["failure"]["kind"], "connection_refused", "{t}");
    assert_eq!(
        t["failure"]["summary"],
        "Nothing is listening at that address"
    );
    assert_eq!(t["failure"]["status"], Value::Null);
    let m = api
        .post(
            "/api/onboarding/models",
            json!({"api_base": format!("http://127.0.0.1:{closed}/v1")}),
        )
        .await;
    assert_eq!(
        (&m["models"], &m["failure"]["kind"]),
        (&json!([]), &json!("connection_refused"))
    );

    // The mock holds the answer for 30 s; the check gives up after 300 ms.
    h.mock
        .push(Behaviour::delay(30_000, Behaviour::reply("late")));
    let started = std::time::Instant::now();
    let t = api
        .post(
            "/api/onboarding/test",
            json!({"api_base": h.mock.openai_base(), "model": "mock-model", "timeout_ms": 300}),
        )
        .await;
    assert_eq!(t["failure"]["kind"], "timeout", "{t}");
    assert!(
        t["failure"]["summary"]
            .as_str()
            .unwrap()
            .contains("no answer within 0.3 s"),
        "{t}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(10));

    // https:// to a plain-HTTP server: the handshake fails, and says so.
    let t = api
        .post(
            "/api/onboarding/test",
            json!({"api_base": format!("https://{}/v1", h.mock.addr()), "model": "m"}),
        )
        .await;
    assert_eq!(t["failure"]["kind"], "tls", "{t}");
    assert_eq!(t["failure"]["summary"], "The secure connection failed");

    let t = api
        .post(
            "/api/onboarding/test",
            json!({"api_base": "ftp://example", "model": "m"}),
        )
        .await;
    assert_eq!(t["failure"]["kind"], "config", "{t}");
    h.stop().await;
}

#[tokio::test]
async fn anthropic_is_tested_with_a_messages_request() {
    let h = Harness::start().await;
    let api = h.api().never_echo(CANDIDATE_KEY);
    let base = h.mock.anthropic_base();
    let models = api
        .post(
            "/api/onboarding/models",
            json!({"provider": "anthropic", "api_base": base, "api_key": CANDIDATE_KEY}),
        )
        .await;
    assert_eq!(models["models"], json!(["mock-claude", "mock-model"]));
    let t = api
        .post(
            "/api/onboarding/test",
            json!({"provider": "anthropic", "api_base": base, "api_key": CANDIDATE_KEY, "model": "mock-claude"}),
        )
        .await;
    assert_eq!(t["ok"], true, "{t}");
    let reqs = h.mock.requests();
    let messages = reqs.iter().find(|r| r.path == "/v1/messages").unwrap();
    assert_eq!(messages.headers["x-api-key"], CANDIDATE_KEY);
    assert_eq!(messages.body["max_tokens"], 1);
    h.stop().await;
}

#[tokio::test]
async fn bad_candidates_are_refused_with_a_reason() {
    let h = Harness::start().await;
    let api = h.api().never_echo(CANDIDATE_KEY);
    for (path, body, needle) in [
        (
            "/api/onboarding/test",
            json!({"api_base": " ", "model": "m"}),
            "api_base",
        ),
        (
            "/api/onboarding/test",
            json!({"api_base": h.mock.openai_base()}),
            "model",
        ),
        (
            "/api/onboarding/models",
            json!({"api_base": ""}),
            "api_base",
        ),
        (
            "/api/onboarding/endpoint",
            json!({"api_base": "http://h/v1", "colour": 1}),
            "colour",
        ),
    ] {
        let (s, v) = api.call(Method::POST, path, Some(body)).await;
        assert_eq!(s, 400, "{path}: {v}");
        assert!(
            v["error"]["message"].as_str().unwrap().contains(needle),
            "{path}: {v}"
        );
    }
    h.stop().await;
}

#[tokio::test]
async fn a_fresh_home_needs_onboarding_until_an_endpoint_is_saved() {
    let h = Harness::start_with(|c| {
        c.llm = Default::default();
    })
    .await;
    let api = h.api().never_echo(CANDIDATE_KEY);
    let status = api.get("/api/status").await;
    assert_eq!(status["needs_onboarding"], true, "{status}");
    assert_eq!(
        api.get("/api/onboarding/presets").await["current"],
        Value::Null
    );
    // An agent that calls before onboarding is told what to do.
    let r = h
        .chat(&json!({"model": "x", "messages": [{"role": "user", "content": "hi"}]}))
        .await;
    assert_eq!(r.status(), 502);
    let body: Value = r.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no upstream LLM is configured"),
        "{body}"
    );

    let saved = api
        .post(
            "/api/onboarding/endpoint",
            json!({"provider": "custom", "api_base": h.mock.openai_base(), "api_key": CANDIDATE_KEY, "model": "mock-model"}),
        )
        .await;
    assert_eq!(saved["restart_required"], false, "{saved}");
    assert_eq!(saved["config"]["llm"]["api_base"], h.mock.openai_base());
    let status = api.get("/api/status").await;
    assert_eq!(status["needs_onboarding"], false);
    assert_eq!(status["upstream"]["url"], h.mock.openai_base());
    // Written to config.yaml, the same keys `metaclaw setup` writes.
    let file = std::fs::read_to_string(h.home().join("config.yaml")).unwrap();
    for want in ["provider: custom", "model_id: mock-model", CANDIDATE_KEY] {
        assert!(file.contains(want), "{want} missing from:\n{file}");
    }
    // And live: the next request through the proxy goes to the saved endpoint.
    let r = h
        .chat(&json!({"model": "x", "messages": [{"role": "user", "content": "hi"}]}))
        .await;
    assert_eq!(r.status(), 200);
    let upstream = h.mock.requests().pop().unwrap();
    assert_eq!(upstream.path, "/v1/chat/completions");
    assert_eq!(
        upstream.headers["authorization"],
        format!("Bearer {CANDIDATE_KEY}")
    );
    h.stop().await;
}

#[tokio::test]
async fn a_new_host_without_a_key_does_not_inherit_the_stored_one() {
    let h = Harness::start().await;
    let api = h.api().never_echo(CANDIDATE_KEY);
    api.post(
        "/api/onboarding/endpoint",
        json!({"api_base": "http://127.0.0.1:11434/v1", "model": "qwen3"}),
    )
    .await;
    assert_eq!(h.core().api().config().llm.api_key, "");
    assert_eq!(
        api.get("/api/onboarding/presets").await["current"],
        "ollama"
    );
    h.stop().await;
}

#[tokio::test]
async fn agent_settings_name_the_proxy_and_its_key() {
    let h = Harness::start().await;
    let api = h.api().never_echo(CANDIDATE_KEY);
    let a = api.get("/api/wiring/agents").await;
    let port = h.core().addr().port();
    assert_eq!(a["base_url"], format!("http://127.0.0.1:{port}/v1"));
    assert_eq!(a["anthropic_base_url"], format!("http://127.0.0.1:{port}"));
    assert_eq!(a["api_key"], PROXY_KEY);
    assert!(a["detected"].is_array(), "{a}");
    h.stop().await;
}

#[tokio::test]
async fn the_agents_own_sign_in_at_the_provider_step_says_what_needs_a_key_of_metaclaws() {
    let h = Harness::start_with(|c| {
        c.llm = Default::default();
    })
    .await;
    let api = h.api().never_echo(CANDIDATE_KEY);
    let anthropic = json!({"provider": "anthropic", "api_base": h.mock.anthropic_base(),
        "model": "claude-sonnet-4-6", "api_key": "", "auth_method": "passthrough"});
    // Nothing to test the connection with: said, not attempted.
    let (status, body) = api
        .call(
            Method::POST,
            "/api/onboarding/test",
            Some(anthropic.clone()),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("no key of its own")),
        "{body}"
    );
    assert!(h.mock.requests().is_empty());

    // Saved without a key of MetaClaw's: the answer and the status both say what cannot run.
    let saved = api.post("/api/onboarding/endpoint", anthropic).await;
    assert_eq!(
        saved["config"]["llm"]["auth_method"], "passthrough",
        "{saved}"
    );
    let said = |v: &Value| {
        v.as_array().is_some_and(|w| {
            w.iter().any(|w| {
                w.as_str().is_some_and(|w| {
                    w.contains("skill distillation, the judge and connection checks cannot run")
                })
            })
        })
    };
    assert!(said(&saved["warnings"]), "{saved}");
    let status = api.get("/api/status").await;
    assert_eq!(status["needs_onboarding"], false);
    assert!(said(&status["warnings"]), "{status}");
    // Reopened, onboarding starts from the stored choice.
    assert_eq!(
        api.get("/api/onboarding/presets").await["auth_method"],
        "passthrough"
    );
    let file = std::fs::read_to_string(h.home().join("config.yaml")).unwrap();
    assert!(file.contains("auth_method: passthrough"), "{file}");

    // Given a key of its own, the connection is tested with it and the warning goes away.
    let own = json!({"provider": "anthropic", "api_base": h.mock.anthropic_base(),
        "model": "claude-sonnet-4-6", "api_key": CANDIDATE_KEY, "auth_method": "passthrough"});
    let tested = api.post("/api/onboarding/test", own.clone()).await;
    assert_eq!(tested["ok"], true, "{tested}");
    assert_eq!(
        h.mock.requests().pop().unwrap().header("x-api-key"),
        Some(CANDIDATE_KEY)
    );
    let saved = api.post("/api/onboarding/endpoint", own).await;
    assert!(!said(&saved["warnings"]), "{saved}");
    assert!(!said(&api.get("/api/status").await["warnings"]));
    h.stop().await;
}
