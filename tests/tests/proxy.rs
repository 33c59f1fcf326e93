//! The proxy end to end, in process: a real core on port 0 in front of the mock upstream.

mod support;

use std::time::Duration;

use futures_util::StreamExt;
use metaclaw_domain::{Event, SessionEndReason, TurnStatus};
use metaclaw_tests::mock_upstream::Behaviour;
use serde_json::{Value, json};
use support::Harness;

fn chat(text: &str) -> Value {
    json!({"model": "client-model", "messages": [{"role": "user", "content": text}]})
}

fn data_events(body: &str) -> Vec<String> {
    body.split("\n\n")
        .filter_map(|e| {
            e.lines()
                .find_map(|l| l.strip_prefix("data: "))
                .map(str::to_owned)
        })
        .collect()
}

#[tokio::test]
async fn records_turns_in_their_sessions() {
    let h = Harness::start().await;
    for (session, n) in [("alpha", 3), ("beta", 2)] {
        for i in 0..n {
            let resp = h
                .post("/v1/chat/completions")
                .header("x-session-id", session)
                .json(&chat(&format!("{session} question {i}")))
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status(), 200);
            assert_eq!(resp.headers()["x-metaclaw-session-id"], session);
        }
    }
    h.wait_turns(5).await;
    let store = h.core().store();
    for (session, n) in [("alpha", 3usize), ("beta", 2)] {
        let turns = store.turns_in_session(session).unwrap();
        assert_eq!(turns.len(), n);
        for (i, t) in turns.iter().enumerate() {
            assert_eq!(t.seq, i as u64 + 1);
            assert_eq!(t.status, TurnStatus::Ok);
            assert_eq!(
                t.request["messages"][0]["content"],
                format!("{session} question {i}")
            );
            let answer = t.response.as_ref().unwrap()["choices"][0]["message"]["content"]
                .as_str()
                .unwrap();
            assert!(
                answer.contains(&format!("{session} question {i}")),
                "{answer}"
            );
            assert_eq!(
                t.model.as_deref(),
                Some("mock-model"),
                "llm.model_id replaces the client's model"
            );
        }
    }
    assert_eq!(store.turn_count().unwrap(), 5);
    h.stop().await;
}

#[tokio::test]
async fn private_keys_are_stripped_and_model_forced() {
    let h = Harness::start().await;
    let mut body = chat("hi");
    body["session_id"] = json!("s-body");
    body["turn_type"] = json!("main");
    body["session_done"] = json!(false);
    body["prompt_cache_key"] = json!("s-body:0");
    let resp = h.chat(&body).await;
    assert_eq!(resp.headers()["x-metaclaw-session-id"], "s-body");
    let got = &h.mock.requests()[0].body;
    for key in ["session_id", "turn_type", "session_done"] {
        assert!(got.get(key).is_none(), "{key} reached the upstream");
    }
    assert_eq!(got["prompt_cache_key"], "s-body:0");
    assert_eq!(got["model"], "mock-model");
    assert_eq!(
        h.mock.requests()[0].header("authorization"),
        Some("Bearer upstream-key")
    );
    h.stop().await;
}

#[tokio::test]
async fn streaming_passes_every_event_through_unchanged() {
    let h = Harness::start().await;
    h.mock
        .push(Behaviour::reasoning("think first", "then answer"));
    let mut body = chat("stream please");
    body["stream"] = json!(true);
    body["stream_options"] = json!({"include_usage": true});
    let proxied = h.chat(&body).await;
    assert_eq!(proxied.headers()["content-type"], "text/event-stream");
    let proxied = proxied.text().await.unwrap();
    // Same scripted answer straight from the mock, for comparison.
    h.mock
        .push(Behaviour::reasoning("think first", "then answer"));
    let mut direct_body = body.clone();
    direct_body["model"] = json!("mock-model");
    let direct = h
        .client
        .post(format!("{}/chat/completions", h.mock.openai_base()))
        .json(&direct_body)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let strip_ids = |events: Vec<String>| -> Vec<Value> {
        events
            .into_iter()
            .map(|e| match serde_json::from_str::<Value>(&e) {
                Ok(mut v) => {
                    v.as_object_mut().map(|o| {
                        o.remove("id");
                        o.remove("created")
                    });
                    v
                }
                Err(_) => Value::String(e),
            })
            .collect()
    };
    let (p, d) = (data_events(&proxied), data_events(&direct));
    assert!(p.len() > 4);
    assert_eq!(
        strip_ids(p.clone()),
        strip_ids(d),
        "proxied stream differs from the upstream's"
    );
    assert!(p.iter().any(|e| e.contains("reasoning_content")));
    assert!(p.iter().any(|e| e.contains("\"usage\":{")));
    assert_eq!(p.last().unwrap(), "[DONE]");
    h.wait_turns(1).await;
    let turn = &h
        .core()
        .store()
        .turns_in_session(&h.core().store().sessions(10).unwrap()[0].id)
        .unwrap()[0];
    let msg = &turn.response.as_ref().unwrap()["choices"][0]["message"];
    assert_eq!(msg["content"], "then answer");
    assert_eq!(msg["reasoning_content"], "think first");
    assert!(turn.ttfb_ms.is_some() && turn.input_tokens.is_some());
    h.stop().await;
}

#[tokio::test]
async fn stream_events_arrive_as_they_are_produced() {
    let h = Harness::start().await;
    h.mock.push(Behaviour::slow_stream(6, 150));
    let mut body = chat("slow");
    body["stream"] = json!(true);
    let started = std::time::Instant::now();
    let resp = h.chat(&body).await;
    let mut stream = resp.bytes_stream();
    let first = stream.next().await.unwrap().unwrap();
    let first_at = started.elapsed();
    assert!(!first.is_empty());
    while stream.next().await.is_some() {}
    let total = started.elapsed();
    assert!(
        total >= Duration::from_millis(700),
        "the stream should take ~900 ms, took {total:?}"
    );
    assert!(
        first_at < total / 2,
        "first event at {first_at:?} of {total:?}: the proxy buffered"
    );
    h.stop().await;
}

#[tokio::test]
async fn client_disconnect_cancels_the_upstream_and_is_recorded() {
    let h = Harness::start().await;
    h.mock.push(Behaviour::slow_stream(50, 100));
    let mut body = chat("long");
    body["stream"] = json!(true);
    let resp = h
        .post("/v1/chat/completions")
        .header("x-session-id", "gone")
        .json(&body)
        .send()
        .await
        .unwrap();
    let mut stream = resp.bytes_stream();
    stream.next().await.unwrap().unwrap();
    drop(stream);
    let (stats, ok) = h
        .mock
        .wait_for_stats(Duration::from_secs(5), |s| s.cancelled_streams == 1)
        .await;
    assert!(ok, "upstream stream was not cancelled: {stats:?}");
    h.wait_turns(1).await;
    let t = &h.core().store().turns_in_session("gone").unwrap()[0];
    assert_eq!(t.status, TurnStatus::ClientAborted);
    h.stop().await;
}

#[tokio::test]
async fn upstream_errors_keep_status_and_shape() {
    let h = Harness::start().await;
    h.mock.push(Behaviour::error_with(
        429,
        json!({"error": {"message": "slow down", "type": "rate_limit_error", "code": "rate_limited"}}),
        &[("retry-after", "1")],
    ));
    let resp = h.chat(&chat("a")).await;
    assert_eq!(resp.status(), 429);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["message"], "slow down");

    h.mock.push(Behaviour::error(500));
    let resp = h
        .post("/v1/messages")
        .json(&json!({"model": "m", "max_tokens": 10,
        "messages": [{"role": "user", "content": "x"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 500);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["type"], "error");
    assert_eq!(body["error"]["type"], "api_error");

    h.mock
        .push(Behaviour::delay(3000, Behaviour::reply("late")));
    let resp = h.chat(&chat("slow")).await;
    assert_eq!(resp.status(), 504);
    let body: Value = resp.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("timed out")
    );
    h.wait_turns(3).await;
    let statuses: Vec<TurnStatus> = h.all_turns().into_iter().map(|t| t.status).collect();
    assert_eq!(
        statuses
            .iter()
            .filter(|s| **s == TurnStatus::UpstreamError)
            .count(),
        2
    );
    assert_eq!(
        statuses
            .iter()
            .filter(|s| **s == TurnStatus::UpstreamUnreachable)
            .count(),
        1
    );
    h.stop().await;
}

#[tokio::test]
async fn refused_connection_is_a_502_and_the_proxy_survives() {
    let h = Harness::start_with(|c| c.llm.api_base = "http://127.0.0.1:9/v1".into()).await;
    let resp = h.chat(&chat("a")).await;
    assert_eq!(resp.status(), 502);
    let body: Value = resp.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unreachable"),
        "{body}"
    );
    let health = h
        .client
        .get(format!("{}/healthz", h.base))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    h.stop().await;
}

#[tokio::test]
async fn broken_stream_ends_with_an_error_event() {
    let h = Harness::start().await;
    h.mock.push(Behaviour::reset_mid_stream(2));
    let mut body = chat("x");
    body["stream"] = json!(true);
    let text = h
        .post("/v1/chat/completions")
        .header("x-session-id", "cut")
        .json(&body)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let events = data_events(&text);
    let last: Value = serde_json::from_str(events.last().unwrap()).unwrap();
    assert_eq!(last["error"]["code"], "upstream_stream_broken");
    h.wait_turns(1).await;
    assert_eq!(
        h.core().store().turns_in_session("cut").unwrap()[0].status,
        TurnStatus::StreamBroken
    );
    h.stop().await;
}

#[tokio::test]
async fn bad_input_gets_openai_and_anthropic_shaped_errors() {
    let h = Harness::start_with(|c| c.proxy.max_body_bytes = 4096).await;
    let cases: Vec<(&str, Vec<u8>, u16, &str)> = vec![
        (
            "/v1/chat/completions",
            b"{not json".to_vec(),
            400,
            "not valid JSON",
        ),
        (
            "/v1/chat/completions",
            br#"{"model":"m"}"#.to_vec(),
            400,
            "`messages` is required",
        ),
        (
            "/v1/chat/completions",
            br#"{"messages":[{"role":"user","content":1}]}"#.to_vec(),
            400,
            "content",
        ),
        ("/v1/chat/completions", b"\xff\xfe".to_vec(), 400, "UTF-8"),
        ("/v1/chat/completions", vec![b' '; 5000], 413, "limit"),
        (
            "/v1/messages",
            br#"{"messages":[{"role":"tool","content":"x"}]}"#.to_vec(),
            400,
            "role",
        ),
    ];
    for (path, body, status, needle) in cases {
        let resp = h
            .post(path)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), status, "{path} {needle}");
        // A body too large to read leaves the connection unusable; one read to the end does
        // not.
        assert_eq!(
            resp.headers()
                .get("connection")
                .is_some_and(|v| v == "close"),
            status == 413,
            "{path} {needle}"
        );
        let v: Value = resp.json().await.unwrap();
        let message = if path == "/v1/messages" {
            assert_eq!(v["type"], "error");
            v["error"]["message"].as_str().unwrap().to_owned()
        } else {
            assert!(v["error"]["type"].is_string());
            v["error"]["message"].as_str().unwrap().to_owned()
        };
        assert!(message.contains(needle), "{message} lacks {needle}");
    }
    let resp = h
        .client
        .post(format!("{}/v1/chat/completions", h.base))
        .json(&chat("x"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
    let resp = h
        .client
        .post(format!("{}/v1/messages", h.base))
        .header("x-api-key", "wrong")
        .json(&chat("x"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
    assert_eq!(
        resp.json::<Value>().await.unwrap()["error"]["type"],
        "authentication_error"
    );
    // Refused before its body is read: the client is told the connection closes, so a
    // keep-alive client's next request opens a new one instead of finding it dead.
    for attempt in 0..20 {
        let resp = h
            .client
            .post(format!("{}/v1/chat/completions", h.base))
            .bearer_auth("nope")
            .json(&chat("x"))
            .send()
            .await
            .unwrap_or_else(|e| panic!("attempt {attempt}: {e}"));
        assert_eq!(resp.status(), 401);
        assert_eq!(resp.headers()["connection"], "close");
    }
    assert!(
        h.mock.requests().is_empty(),
        "nothing invalid reached the upstream"
    );
    h.stop().await;
}

#[tokio::test]
async fn anthropic_client_tool_use_round_trip_over_openai_upstream() {
    let h = Harness::start().await;
    h.mock
        .push(Behaviour::tool_call("read", r#"{"path":"HELLO.txt"}"#));
    let first = json!({"model": "claude", "max_tokens": 100,
        "system": [{"type": "text", "text": "You are an agent."}],
        "tools": [{"name": "read", "description": "read a file", "input_schema": {"type": "object",
            "properties": {"path": {"type": "string"}}}}],
        "messages": [{"role": "user", "content": "read HELLO.txt"}]});
    let resp: Value = h
        .post("/v1/messages")
        .json(&first)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(resp["stop_reason"], "tool_use");
    let tool = resp["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "tool_use")
        .unwrap()
        .clone();
    assert_eq!(tool["input"], json!({"path": "HELLO.txt"}));
    let upstream = &h.mock.requests()[0].body;
    assert_eq!(
        upstream["messages"][0],
        json!({"role": "system", "content": "You are an agent."})
    );
    assert_eq!(upstream["tools"][0]["function"]["name"], "read");

    let mut second = first.clone();
    second["messages"] = json!([
        {"role": "user", "content": "read HELLO.txt"},
        {"role": "assistant", "content": [tool.clone()]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool["id"], "content": "hello"}]}
    ]);
    second["stream"] = json!(true);
    let text = h
        .post("/v1/messages")
        .json(&second)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(text.starts_with("event: message_start"));
    assert!(text.contains("event: message_stop"));
    let upstream = &h.mock.requests()[1].body;
    let msgs = upstream["messages"].as_array().unwrap();
    assert_eq!(msgs[2]["tool_calls"][0]["id"], tool["id"]);
    assert_eq!(
        msgs[3],
        json!({"role": "tool", "tool_call_id": tool["id"], "content": "hello"})
    );
    assert_eq!(upstream["stream_options"], json!({"include_usage": true}));
    h.stop().await;
}

#[tokio::test]
async fn anthropic_native_passthrough() {
    // An api_base ending in /v1 works for Anthropic too: requests go to <base>/messages.
    let h = Harness::start_with(|c| c.llm.provider = metaclaw_config::LlmProvider::Anthropic).await;
    let body = json!({"model": "claude", "max_tokens": 20, "stream": true, "messages": [{"role": "user", "content": "native"}]});
    let text = h
        .post("/v1/messages")
        .header("anthropic-version", "2023-06-01")
        .json(&body)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(text.contains("event: content_block_delta"), "{text}");
    let req = &h.mock.requests()[0];
    assert_eq!(req.path, "/v1/messages");
    assert_eq!(req.header("x-api-key"), Some("upstream-key"));
    assert_eq!(req.header("anthropic-version"), Some("2023-06-01"));
    let resp = h.chat(&chat("x")).await;
    assert_eq!(
        resp.status(),
        400,
        "OpenAI clients get a clear error with an Anthropic upstream"
    );
    h.stop().await;
}

#[tokio::test]
async fn session_done_and_count_drop_emit_session_end() {
    let h = Harness::start().await;
    let mut events = h.core().events();
    h.post("/v1/chat/completions")
        .header("x-session-id", "done-1")
        .header("x-session-done", "true")
        .json(&chat("bye"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    // Header-less: 2 messages then 1 message = a new conversation.
    let two = json!({"model": "client-model", "messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}]});
    h.chat(&two).await.text().await.unwrap();
    h.chat(&chat("fresh")).await.text().await.unwrap();
    let mut ends = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while ends.len() < 2 && tokio::time::Instant::now() < deadline {
        if let Ok(Ok(Event::SessionEnded {
            session_id, reason, ..
        })) = tokio::time::timeout(Duration::from_millis(200), events.recv()).await
        {
            ends.push((session_id, reason));
        }
    }
    assert!(
        ends.contains(&("done-1".to_owned(), SessionEndReason::Explicit)),
        "{ends:?}"
    );
    assert!(ends.iter().any(|(id, r)| id.starts_with("tui-client-model-") && *r == SessionEndReason::CountDrop), "{ends:?}");
    h.wait_turns(3).await;
    for _ in 0..100 {
        h.core().store().flush().unwrap();
        if h.core()
            .store()
            .session("done-1")
            .unwrap()
            .and_then(|s| s.end_reason)
            .is_some()
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        h.core()
            .store()
            .session("done-1")
            .unwrap()
            .unwrap()
            .end_reason,
        Some(SessionEndReason::Explicit)
    );
    h.stop().await;
}

#[tokio::test]
async fn max_context_tokens_truncates_before_forwarding() {
    let h = Harness::start_with(|c| c.max_context_tokens = 2048 + 300).await;
    let filler = "word ".repeat(400); // ~500 tokens each
    let body = json!({"model": "m", "messages": [
        {"role": "system", "content": "system prompt"},
        {"role": "user", "content": filler},
        {"role": "assistant", "content": filler},
        {"role": "user", "content": "latest question"}]});
    h.chat(&body).await.text().await.unwrap();
    let sent = h.mock.requests()[0].body["messages"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert_eq!(sent[0]["role"], "system");
    assert_eq!(sent[1]["content"], "latest question");
    h.stop().await;
}

#[tokio::test]
async fn models_and_unknown_routes() {
    let h = Harness::start().await;
    let models: Value = h
        .client
        .get(format!("{}/v1/models", h.base))
        .bearer_auth(support::PROXY_KEY)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(models["data"][0]["id"], "mock-model");
    let resp = h.post("/v1/nope").json(&json!({})).send().await.unwrap();
    assert_eq!(resp.status(), 404);
    assert_eq!(
        resp.json::<Value>().await.unwrap()["error"]["code"],
        "unknown_url"
    );
    h.stop().await;
}

/// The human message a recorded provider error carries, wherever the provider put it.
fn recorded_message(body: &Value) -> &str {
    body.pointer("/error/message")
        .or_else(|| body.get("message"))
        .and_then(Value::as_str)
        .expect("every recording has a message")
}

/// Every error response a real provider sent (tests/fixtures/upstream_errors.json) reaches
/// each kind of client with its status, in a shape that client's SDK reads, saying what the
/// provider said; and each is recorded as an upstream error.
#[tokio::test]
async fn recorded_provider_errors_reach_every_client_readable() {
    // Scripts can name a recording by provider and status (the first of that pair). The
    // harness's 2 s upstream limit is for the timeout tests; a loaded machine must not turn
    // a recorded error into a timeout here. Skill evolution is off: its background call to
    // the same upstream could take the error scripted for the next client.
    let patient = |c: &mut metaclaw_config::Config| {
        c.llm.timeout_seconds = 30;
        c.skills.auto_evolve = false;
    };
    let h = Harness::start_with(patient).await;
    h.mock.push(Behaviour::recorded("openrouter", 401));
    let resp = h.chat(&chat("x")).await;
    assert_eq!(resp.status(), 401);
    let got: Value = resp.json().await.unwrap();
    assert_eq!(got["error"]["message"], "No auth credentials found");
    h.stop().await;

    use metaclaw_tests::mock_upstream::recorded;
    let openai_wire = Harness::start_with(patient).await;
    let anthropic_wire = Harness::start_with(|c| {
        patient(c);
        c.llm.provider = metaclaw_config::LlmProvider::Anthropic;
    })
    .await;
    let messages_body = |stream: bool| {
        json!({"model": "m", "max_tokens": 10, "stream": stream,
               "messages": [{"role": "user", "content": "x"}]})
    };
    for r in recorded::all() {
        let said = recorded_message(&r.body);
        let what = format!("{} {} ({})", r.provider, r.status, r.source);
        let (h, clients): (&Harness, &[(&str, bool)]) = match r.wire.as_str() {
            "openai" => (
                &openai_wire,
                &[
                    ("/v1/chat/completions", false),
                    ("/v1/chat/completions", true),
                    ("/v1/messages", false),
                    ("/v1/messages", true),
                ],
            ),
            _ => (
                &anthropic_wire,
                &[("/v1/messages", false), ("/v1/messages", true)],
            ),
        };
        for &(path, stream) in clients {
            let headers: Vec<(&str, &str)> = r
                .headers
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            h.mock
                .push(Behaviour::error_with(r.status, r.body.clone(), &headers));
            let body = if path == "/v1/messages" {
                messages_body(stream)
            } else {
                let mut b = chat("x");
                b["stream"] = json!(stream);
                b
            };
            let resp = h.post(path).json(&body).send().await.unwrap();
            assert_eq!(resp.status().as_u16(), r.status, "{what} via {path}");
            let got: Value = resp.json().await.unwrap();
            let message = if path == "/v1/messages" {
                assert_eq!(got["type"], "error", "{what} via {path}: {got}");
                assert!(got["error"]["type"].is_string(), "{what} via {path}: {got}");
                got["error"]["message"].as_str()
            } else {
                got["error"]["message"].as_str()
            };
            let message = message.unwrap_or_else(|| panic!("{what} via {path}: {got}"));
            assert!(message.contains(said), "{what} via {path}: {got}");
        }
    }
    for h in [openai_wire, anthropic_wire] {
        let expected = h.mock.requests().len() as u64;
        h.wait_turns(expected).await;
        let turns = h.all_turns();
        assert!(
            turns.iter().all(|t| t.status == TurnStatus::UpstreamError),
            "{:?}",
            turns.iter().map(|t| t.status).collect::<Vec<_>>()
        );
        h.stop().await;
    }
}

/// Every byte under `dir` (database, WAL, logs), for "never stored" checks.
fn all_bytes_under(dir: &std::path::Path) -> Vec<u8> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(bytes) = std::fs::read(&path) {
                out.extend(bytes);
            }
        }
    }
    out
}

#[tokio::test]
async fn subscription_passthrough_forwards_the_bearer_untouched_and_never_stores_it() {
    const OAUTH: &str = "sk-ant-oat01-FAKEsubscriptionTOKEN-0123456789abcdef";
    const BETAS: &str = "claude-code-20250219,oauth-2025-04-20,extended-cache-ttl-2025-04-11";
    let h = Harness::start_with(|c| {
        c.llm.provider = metaclaw_config::LlmProvider::Anthropic;
        c.llm.api_key = String::new();
        c.llm.auth_method = metaclaw_config::AuthMethod::Passthrough;
    })
    .await;
    let body = json!({"model": "claude-sonnet-4-6", "max_tokens": 20, "stream": true,
        "messages": [{"role": "user", "content": "my bash script breaks when a filename has spaces"}]});
    let send = |key: &'static str| {
        h.client
            .post(format!("{}/v1/messages?beta=true", h.base))
            .bearer_auth(OAUTH)
            .header("anthropic-version", "2023-06-01")
            .header("anthropic-beta", BETAS)
            .header("x-app", "cli")
            .header("x-metaclaw-key", key)
            .json(&body)
            .send()
    };
    let resp = send(support::PROXY_KEY).await.unwrap();
    assert_eq!(resp.status(), 200);
    let text = resp.text().await.unwrap();
    assert!(text.contains("event: message_stop"), "{text}");
    let req = &h.mock.requests()[0];
    assert_eq!(
        req.header("authorization"),
        Some(format!("Bearer {OAUTH}").as_str())
    );
    assert_eq!(
        req.header("x-api-key"),
        None,
        "an OAuth bearer must stay a bearer"
    );
    assert_eq!(req.header("anthropic-beta"), Some(BETAS));
    assert_eq!(req.header("x-app"), Some("cli"));
    assert_eq!(
        req.header("x-metaclaw-key"),
        None,
        "the proxy key stays here"
    );

    // An agent wired with the proxy key (no sign-in of its own) never leaks it upstream.
    let resp = h
        .post("/v1/messages")
        .json(&json!({"model": "m", "max_tokens": 5,
            "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let req = &h.mock.requests()[1];
    assert_eq!(req.header("authorization"), None);
    assert_eq!(req.header("x-api-key"), None);

    // The proxy still checks its own key where the agent sends one.
    let wrong = send("not-the-proxy-key").await.unwrap();
    assert_eq!(wrong.status(), 401);
    assert_eq!(h.mock.requests().len(), 2);

    h.wait_turns(2).await;
    h.core().store().flush().unwrap();
    let stored = all_bytes_under(h.home());
    assert!(!stored.is_empty());
    assert!(
        !stored.windows(OAUTH.len()).any(|w| w == OAUTH.as_bytes()),
        "the subscription token was written under the MetaClaw home"
    );
    h.stop().await;
}

#[tokio::test]
async fn an_own_subscription_token_goes_upstream_as_a_bearer() {
    let h = Harness::start_with(|c| {
        c.llm.provider = metaclaw_config::LlmProvider::Anthropic;
        c.llm.api_key = String::new();
        c.llm.oauth_token = "sk-ant-oat01-metaclaws-own".into();
    })
    .await;
    let body = json!({"model": "claude", "max_tokens": 20,
        "messages": [{"role": "user", "content": "hello"}]});
    let resp = h
        .post("/v1/messages")
        .header("anthropic-beta", "interleaved-thinking-2025-05-14")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let req = &h.mock.requests()[0];
    assert_eq!(
        req.header("authorization"),
        Some("Bearer sk-ant-oat01-metaclaws-own")
    );
    assert_eq!(req.header("x-api-key"), None);
    assert_eq!(
        req.header("anthropic-beta"),
        Some("interleaved-thinking-2025-05-14,oauth-2025-04-20")
    );
    h.stop().await;
}
