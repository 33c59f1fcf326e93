//! The dashboard API: every route, auth, Host/Origin checks, bad input, no secrets.

mod support;

use reqwest::{Method, StatusCode};
use serde_json::json;
use support::Harness;

async fn setup() -> (Harness, String) {
    let h = Harness::start_with(|c| {
        c.skills.auto_evolve = false;
        c.llm.api_key = "sk-upstream-secret-1234567890".into();
    })
    .await;
    let token = std::fs::read_to_string(h.home().join("dashboard.token")).unwrap();
    // One turn so sessions and feedback have something to show.
    h.post("/v1/chat/completions")
        .header("x-session-id", "api-s")
        .json(&json!({"model": "m", "messages": [{"role": "user", "content": "my pytest suite fails randomly on CI"}]}))
        .send()
        .await
        .unwrap();
    h.wait_turns(1).await;
    (h, token.trim().to_owned())
}

#[tokio::test]
async fn auth_host_and_origin_are_enforced() {
    let (h, token) = setup().await;
    let url = format!("{}/api/status", h.base);
    assert_eq!(h.client.get(&url).send().await.unwrap().status(), 401);
    assert_eq!(
        h.client
            .get(&url)
            .bearer_auth("wrong")
            .send()
            .await
            .unwrap()
            .status(),
        401
    );
    assert_eq!(
        h.client
            .get(&url)
            .bearer_auth(&token)
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    // DNS rebinding: a foreign Host name is refused even with the token.
    let r = h
        .client
        .get(&url)
        .bearer_auth(&token)
        .header("host", "evil.example:30000")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    let r = h
        .client
        .get(&url)
        .bearer_auth(&token)
        .header("origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    // The token file is private.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(h.home().join("dashboard.token"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600);
    h.stop().await;
}

#[tokio::test]
async fn one_time_login_sets_a_cookie_and_works_once() {
    let (h, _) = setup().await;
    let api = h.api();
    let (_, code) = api
        .call(Method::POST, "/api/login-codes", Some(json!({})))
        .await;
    let code = code["code"].as_str().unwrap().to_owned();
    let no_redirect = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let r = no_redirect
        .get(format!("{}/login?code={code}", h.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    let cookie = r.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"));
    let pair = cookie.split(';').next().unwrap().to_owned();
    let r = no_redirect
        .get(format!("{}/api/status", h.base))
        .header("cookie", &pair)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let again = no_redirect
        .get(format!("{}/login?code={code}", h.base))
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 401, "a login code works once");
    // The UI itself is served at / without auth.
    let page = no_redirect
        .get(format!("{}/", h.base))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    assert!(
        page.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    h.stop().await;
}

#[tokio::test]
async fn every_route_answers_and_no_secret_leaks() {
    let (h, token) = setup().await;
    let api = h.api();
    let turn = h.core().store().turn_ids_in_session("api-s").unwrap()[0].clone();
    let mut bodies = String::new();

    let (s, status) = api.call(Method::GET, "/api/status", None).await;
    assert_eq!(s, 200);
    assert_eq!(status["mode"], "skills_only");
    assert_eq!(status["counts"]["turns"], 1);
    assert_eq!(status["counts"]["sessions"], 1);
    bodies.push_str(&status.to_string());

    let (s, sessions) = api.call(Method::GET, "/api/sessions", None).await;
    assert_eq!(s, 200);
    assert_eq!(sessions[0]["id"], "api-s");
    let (s, detail) = api.call(Method::GET, "/api/sessions/api-s", None).await;
    assert_eq!(s, 200);
    assert_eq!(
        detail["turns"][0]["user_text"],
        "my pytest suite fails randomly on CI"
    );
    assert_eq!(detail["turns"][0]["injected"][0]["name"], "fix-flaky-tests");
    assert_eq!(api.status("/api/sessions/nope").await, 404);

    assert_eq!(
        api.call(
            Method::POST,
            &format!("/api/turns/{turn}/feedback"),
            Some(json!({"rating": -1, "note": "meh"}))
        )
        .await
        .0,
        200
    );
    assert_eq!(
        api.call(
            Method::POST,
            &format!("/api/turns/{turn}/feedback"),
            Some(json!({"rating": 3}))
        )
        .await
        .0,
        400
    );
    assert_eq!(
        api.call(
            Method::POST,
            "/api/turns/nope/feedback",
            Some(json!({"rating": 1}))
        )
        .await
        .0,
        404
    );
    let (_, detail) = api.call(Method::GET, "/api/sessions/api-s", None).await;
    assert_eq!(detail["turns"][0]["feedback"]["rating"], -1);

    let (s, skills) = api
        .call(Method::GET, "/api/skills?category=debugging", None)
        .await;
    assert_eq!(s, 200);
    assert!(
        skills
            .as_array()
            .unwrap()
            .iter()
            .all(|x| x["category"] == "debugging")
    );
    let (s, one) = api
        .call(Method::GET, "/api/skills/fix-flaky-tests", None)
        .await;
    assert_eq!(s, 200);
    assert!(
        one["content"]
            .as_str()
            .unwrap()
            .contains("name: fix-flaky-tests")
    );
    assert_eq!(api.status("/api/skills/nope").await, 404);

    let new_skill = "---\nname: api-made-skill\ndescription: Use when testing the API\ncategory: coding\n---\nBody v1.\n";
    assert_eq!(
        api.call(
            Method::POST,
            "/api/skills",
            Some(json!({"content": new_skill}))
        )
        .await
        .0,
        200
    );
    assert_eq!(
        api.call(
            Method::POST,
            "/api/skills",
            Some(json!({"content": new_skill}))
        )
        .await
        .0,
        409
    );
    assert_eq!(
        api.call(
            Method::POST,
            "/api/skills",
            Some(json!({"content": "no frontmatter"}))
        )
        .await
        .0,
        400
    );
    let edited = new_skill.replace("Body v1.", "Body v2.");
    assert_eq!(
        api.call(
            Method::PUT,
            "/api/skills/api-made-skill",
            Some(json!({"content": edited}))
        )
        .await
        .0,
        200
    );
    let (s, bad) = api
        .call(
            Method::PUT,
            "/api/skills/api-made-skill",
            Some(json!({"content": edited.replace("name: api-made-skill", "name: renamed")})),
        )
        .await;
    assert_eq!(s, 400);
    assert!(
        bad["error"]["message"]
            .as_str()
            .unwrap()
            .contains("must stay")
    );
    let (_, history) = api
        .call(Method::GET, "/api/skills/api-made-skill/history", None)
        .await;
    assert_eq!(
        history.as_array().unwrap().len(),
        3,
        "absent, created, edited: {history}"
    );
    assert_eq!(
        api.call(
            Method::POST,
            "/api/skills/api-made-skill/rollback",
            Some(json!({"version": 2}))
        )
        .await
        .0,
        200
    );
    let (_, one) = api
        .call(Method::GET, "/api/skills/api-made-skill", None)
        .await;
    assert!(one["content"].as_str().unwrap().contains("Body v1."));
    assert_eq!(
        api.call(
            Method::POST,
            "/api/skills/api-made-skill/state",
            Some(json!({"pinned": true}))
        )
        .await
        .0,
        200
    );
    assert_eq!(
        api.call(
            Method::POST,
            "/api/skills/api-made-skill/state",
            Some(json!({}))
        )
        .await
        .0,
        400
    );
    assert_eq!(
        api.call(
            Method::DELETE,
            "/api/skills/api-made-skill",
            Some(json!({}))
        )
        .await
        .0,
        200
    );
    let (s, bundled) = api
        .call(
            Method::DELETE,
            "/api/skills/fix-flaky-tests",
            Some(json!({})),
        )
        .await;
    assert_eq!(
        (s.as_u16(), bundled["error"]["code"].as_str()),
        (409, Some("conflict")),
        "bundled skills are disabled, not deleted: {bundled}"
    );

    let (s, r) = api
        .call(
            Method::POST,
            "/api/retrieval",
            Some(json!({"query": "tests fail randomly on CI"})),
        )
        .await;
    assert_eq!(s, 200);
    assert_eq!(r["candidates"][0]["name"], "fix-flaky-tests");
    assert_eq!(
        api.call(Method::POST, "/api/retrieval", Some(json!({"query": " "})))
            .await
            .0,
        400
    );
    let (s, err) = api
        .call(Method::POST, "/api/retrieval", Some(json!({"nope": 1})))
        .await;
    assert_eq!(s, 400);
    assert!(
        err["error"]["message"].as_str().unwrap().contains("query"),
        "{err}"
    );

    let (s, proposals) = api
        .call(Method::GET, "/api/proposals?status=pending", None)
        .await;
    assert_eq!(s, 200);
    assert!(proposals.as_array().unwrap().is_empty());
    assert_eq!(api.status("/api/proposals?status=weird").await, 400);
    assert_eq!(api.status("/api/proposals/99").await, 404);
    assert_eq!(
        api.call(Method::POST, "/api/proposals/99/approve", Some(json!({})))
            .await
            .0,
        404
    );
    assert_eq!(
        api.call(Method::POST, "/api/proposals/99/reject", Some(json!({})))
            .await
            .0,
        404
    );
    assert_eq!(
        api.call(Method::POST, "/api/proposals/99/undo", Some(json!({})))
            .await
            .0,
        404
    );
    let (s, bulk) = api
        .call(
            Method::POST,
            "/api/proposals/bulk",
            Some(json!({"action": "approve", "ids": [99]})),
        )
        .await;
    assert_eq!(s, 200);
    assert_eq!(bulk["results"][0]["ok"], false);
    assert_eq!(
        api.call(
            Method::POST,
            "/api/proposals/bulk",
            Some(json!({"action": "eat", "ids": []}))
        )
        .await
        .0,
        400
    );
    let (s, run) = api
        .call(
            Method::POST,
            "/api/distil",
            Some(json!({"session_id": "api-s"})),
        )
        .await;
    assert_eq!(s, 200);
    assert!(run["status"].is_string());

    assert_eq!(api.status("/api/training/steps").await, 200);
    assert_eq!(api.status("/api/training/checkpoints").await, 200);
    let (s, sched) = api.call(Method::GET, "/api/scheduler", None).await;
    assert_eq!(s, 200);
    assert!(sched["timeline"].is_array());

    let (s, config) = api.call(Method::GET, "/api/config", None).await;
    assert_eq!(s, 200);
    bodies.push_str(&config.to_string());
    // RL is not switched on while settings it needs are missing: the error names them.
    let (s, refused) = api
        .call(Method::PATCH, "/api/config", Some(json!({"mode": "rl"})))
        .await;
    assert_eq!(
        (s.as_u16(), refused["error"]["code"].as_str()),
        (409, Some("not_ready")),
        "{refused}"
    );
    let keys = refused["error"]["keys"].to_string();
    assert!(keys.contains("rl.api_key"), "{keys}");
    assert_eq!(
        api.call(Method::GET, "/api/status", None).await.1["mode"],
        "skills_only"
    );
    // Any key by its dotted name; RL settings that fail fast without leaving the machine.
    let (s, patched) = api
        .call(
            Method::PATCH,
            "/api/config",
            Some(json!({"set": {"rl.model": "Qwen/Qwen3-4B", "rl.api_key": "tk-test", "rl.base_url": "http://127.0.0.1:9", "rl.tokenizer_path": "/nonexistent/tokenizer.json"}})),)
        .await;
    assert_eq!(s, 200, "{patched}");
    assert_eq!(patched["config"]["rl"]["model"], "Qwen/Qwen3-4B");
    let (s, patched) = api
        .call(Method::PATCH, "/api/config", Some(json!({"mode": "rl"})))
        .await;
    assert_eq!(s, 200, "{patched}");
    assert_eq!(patched["restart_required"], false);
    assert_eq!(
        patched["config"]["rl"]["enabled"], true,
        "the mode and rl.enabled move together"
    );
    assert_eq!(
        api.call(Method::GET, "/api/status", None).await.1["mode"],
        "rl"
    );
    let yaml = std::fs::read_to_string(h.home().join("config.yaml")).unwrap_or_default();
    assert!(yaml.contains("mode: rl"), "{yaml}");
    let (s, err) = api
        .call(Method::PATCH, "/api/config", Some(json!({"mode": "turbo"})))
        .await;
    assert_eq!(s, 400);
    assert!(err["error"]["message"].as_str().unwrap().contains("turbo"));
    let (s, err) = api
        .call(Method::PATCH, "/api/config", Some(json!({"colour": "red"})))
        .await;
    assert_eq!(
        (s.as_u16(), err["error"]["code"].as_str()),
        (400, Some("bad_request"))
    );
    assert!(
        err["error"]["message"].as_str().unwrap().contains("colour"),
        "{err}"
    );
    let (s, err) = api
        .call(
            Method::PATCH,
            "/api/config",
            Some(json!({"set": {"proxy.port": "many"}})),
        )
        .await;
    assert_eq!(
        (s.as_u16(), err["error"]["code"].as_str()),
        (400, Some("invalid_setting"))
    );
    assert_eq!(err["error"]["keys"], json!(["proxy.port"]));
    let (s, llm) = api
        .call(
            Method::PATCH,
            "/api/config",
            Some(json!({"llm": {"api_key": "sk-new-secret-abcdefghijkl"}})),
        )
        .await;
    assert_eq!(s, 200);
    // The proxy swaps its upstream client: no restart.
    assert_eq!(llm["restart_required"], false, "{llm}");
    bodies.push_str(&llm.to_string());
    let (s, conn) = api
        .call(
            Method::POST,
            "/api/config/test-connection",
            Some(json!({"target": "llm"})),
        )
        .await;
    assert_eq!(s, 200);
    assert_eq!(conn["ok"], true, "{conn}");
    assert_eq!(
        api.call(
            Method::POST,
            "/api/config/test-connection",
            Some(json!({"target": "x"}))
        )
        .await
        .0,
        400
    );

    for chart in [
        "reward",
        "loss",
        "success_rate",
        "kl",
        "prm_distribution",
        "turns_per_day",
    ] {
        let r = api
            .req(Method::GET, &format!("/api/charts/{chart}.svg?theme=dark"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{chart}");
        assert_eq!(r.headers()["content-type"], "image/svg+xml");
        assert!(r.text().await.unwrap().starts_with("<svg"), "{chart}");
    }
    assert_eq!(api.status("/api/charts/nope.svg").await, 404);
    assert_eq!(api.status("/api/charts/reward.svg?theme=sepia").await, 400);
    assert_eq!(api.status("/api/nope").await, 404);

    let (s, doc) = api.call(Method::GET, "/api/openapi.json", None).await;
    assert_eq!(s, 200);
    assert!(doc["paths"]["/api/status"]["get"].is_object());
    // Secrets never come back, masked or not.
    for secret in [
        "sk-upstream-secret-1234567890",
        "sk-new-secret-abcdefghijkl",
        support::PROXY_KEY,
        &token,
    ] {
        assert!(!bodies.contains(secret), "a secret leaked");
    }
    h.stop().await;
}

#[tokio::test]
async fn openapi_lists_exactly_the_routes_that_exist() {
    let (h, _) = setup().await;
    let api = h.api();
    let (_, doc) = api.call(Method::GET, "/api/openapi.json", None).await;
    let paths = doc["paths"].as_object().unwrap();
    assert!(paths.len() >= 25);
    for (path, ops) in paths {
        for method in ops.as_object().unwrap().keys() {
            let concrete = path
                .replace("{id}", "1")
                .replace("{name}", "fix-flaky-tests");
            let m = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            let mut req = api.req(m.clone(), &concrete);
            if m != Method::GET {
                req = req.json(&json!({}));
            }
            if concrete == "/api/events" {
                let r = req.send().await.unwrap();
                assert_eq!(r.status(), 200);
                assert_eq!(r.headers()["content-type"], "text/event-stream");
                continue;
            }
            let status = req.send().await.unwrap().status();
            // A documented route may reject this empty body, but it must exist.
            assert!(
                status != StatusCode::METHOD_NOT_ALLOWED,
                "{method} {path}: {status}"
            );
            let body = api
                .req(
                    Method::from_bytes(method.to_uppercase().as_bytes()).unwrap(),
                    &concrete,
                )
                .json(&json!({}))
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            assert!(
                !body.contains("unknown API endpoint"),
                "{method} {path} is documented but not routed"
            );
        }
    }
    h.stop().await;
}

#[tokio::test]
async fn events_stream_delivers_turns_and_state_changes() {
    use futures_util::StreamExt;
    let (h, _) = setup().await;
    let api = h.api();
    let resp = api.req(Method::GET, "/api/events").send().await.unwrap();
    let mut stream = resp.bytes_stream();
    api.call(
        Method::PATCH,
        "/api/config",
        Some(json!({"learning_paused": true})),
    )
    .await;
    h.post("/v1/chat/completions")
        .json(&json!({"model": "m", "messages": [{"role": "user", "content": "hello"}]}))
        .send()
        .await
        .unwrap();
    let mut seen = String::new();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
    while !(seen.contains("event: state") && seen.contains("event: turn"))
        && tokio::time::Instant::now() < deadline
    {
        if let Ok(Some(Ok(chunk))) =
            tokio::time::timeout(std::time::Duration::from_millis(500), stream.next()).await
        {
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
    assert!(
        seen.contains("event: state") && seen.contains("event: turn"),
        "{seen}"
    );
    h.stop().await;
}

/// Settings → a new endpoint: the next request goes to the new upstream, with no restart.
#[tokio::test]
async fn an_endpoint_change_reaches_the_next_request_without_a_restart() {
    let (h, _) = setup().await;
    let api = h.api();
    let second = metaclaw_tests::mock_upstream::MockUpstream::start()
        .await
        .unwrap();
    let (s, body) = api
        .call(
            Method::PATCH,
            "/api/config",
            Some(
                json!({"set": {"llm.api_base": second.openai_base(), "llm.api_key": "second-key"}}),
            ),
        )
        .await;
    assert_eq!(s, 200, "{body}");
    assert_eq!(body["restart_required"], false, "{body}");
    // The change is applied by a task that follows the event bus: poll for it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let r = h
            .chat(&json!({"model": "m", "messages": [{"role": "user", "content": "which upstream?"}]}))
            .await;
        assert_eq!(r.status(), 200);
        if !second.requests().is_empty() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the new upstream never got a request"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let reached = &second.requests()[0];
    assert_eq!(
        reached.headers.get("authorization").map(String::as_str),
        Some("Bearer second-key"),
        "the new key goes with the new endpoint"
    );
    h.stop().await;
}
