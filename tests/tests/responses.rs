//! `/v1/responses` and `/v1/messages/count_tokens` end to end, in process: a real core in
//! front of the mock upstream, translated to chat completions (`custom`) or forwarded as is
//! (`openai`).

mod support;

use metaclaw_config::{LlmProvider, ResponsesApi};
use metaclaw_domain::TurnStatus;
use metaclaw_tests::mock_upstream::Behaviour;
use serde_json::{Value, json};
use support::Harness;

const FLAKY: &str =
    "my pytest suite fails randomly on CI but always passes locally, how do I fix it?";

/// `(event name, data)` of every SSE frame.
fn sse(body: &str) -> Vec<(String, Value)> {
    body.split("\n\n")
        .filter(|f| !f.trim().is_empty())
        .map(|frame| {
            let mut name = String::new();
            let mut data = Value::Null;
            for line in frame.lines() {
                if let Some(n) = line.strip_prefix("event: ") {
                    name = n.to_owned();
                } else if let Some(d) = line.strip_prefix("data: ") {
                    data = serde_json::from_str(d).unwrap_or(Value::String(d.to_owned()));
                }
            }
            (name, data)
        })
        .collect()
}

async fn post_json(h: &Harness, path: &str, body: &Value) -> (u16, Value) {
    let resp = h.post(path).json(body).send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap())
}

async fn post_text(h: &Harness, path: &str, body: &Value) -> (u16, String) {
    let resp = h.post(path).json(body).send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.text().await.unwrap())
}

#[tokio::test]
async fn translated_answer_and_its_turn_record() {
    let h = Harness::start().await;
    let body = json!({"model": "codex-model", "instructions": "Be brief.", "store": false,
        "input": [{"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "hello responses"}]}],
        "max_output_tokens": 64, "temperature": 0.3});
    let resp = h
        .post("/v1/responses")
        .header("x-session-id", "r1")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["x-metaclaw-session-id"], "r1");
    let r: Value = resp.json().await.unwrap();
    assert_eq!(r["object"], "response");
    assert_eq!(r["status"], "completed");
    assert!(r["id"].as_str().unwrap().starts_with("resp_"));
    assert_eq!(r["instructions"], "Be brief.");
    assert_eq!(r["output"][0]["type"], "message");
    let text = r["output"][0]["content"][0]["text"].as_str().unwrap();
    assert_eq!(text, "mock reply: hello responses");
    assert!(r["usage"]["input_tokens"].as_u64().unwrap() > 0);

    let sent = &h.mock.requests()[0];
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(
        sent.body["messages"],
        json!([{"role": "system", "content": "Be brief."},
               {"role": "user", "content": "hello responses"}])
    );
    assert_eq!(sent.body["max_tokens"], 64);
    assert_eq!(sent.body["temperature"], 0.3);
    assert_eq!(sent.body["model"], "mock-model");
    assert!(sent.body.get("store").is_none() && sent.body.get("input").is_none());

    h.wait_turns(1).await;
    let turn = &h.core().store().turns_in_session("r1").unwrap()[0];
    assert_eq!(turn.status, TurnStatus::Ok);
    assert_eq!(turn.request["messages"][1]["content"], "hello responses");
    assert_eq!(
        turn.response.as_ref().unwrap()["choices"][0]["message"]["content"],
        text
    );
    assert_eq!(turn.output_tokens, r["usage"]["output_tokens"].as_u64());
    h.stop().await;
}

#[tokio::test]
async fn translated_stream_follows_the_event_grammar() {
    let h = Harness::start().await;
    let body = json!({"model": "m", "input": "stream this please", "stream": true});
    let resp = h.post("/v1/responses").json(&body).send().await.unwrap();
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let events = sse(&resp.text().await.unwrap());
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    let deltas = names
        .iter()
        .filter(|n| **n == "response.output_text.delta")
        .count();
    assert!(deltas >= 2, "the mock streams several pieces: {names:?}");
    let mut expected = vec![
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
    ];
    expected.extend(std::iter::repeat_n("response.output_text.delta", deltas));
    expected.extend([
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]);
    assert_eq!(names, expected);
    for (i, (name, data)) in events.iter().enumerate() {
        assert_eq!(data["type"], name.as_str());
        assert_eq!(data["sequence_number"], i as u64, "{name}");
    }
    let item_id = &events[2].1["item"]["id"];
    assert!(
        events[4..4 + deltas]
            .iter()
            .all(|(_, d)| d["item_id"] == *item_id)
    );
    let joined: String = events[4..4 + deltas]
        .iter()
        .map(|(_, d)| d["delta"].as_str().unwrap())
        .collect();
    assert_eq!(joined, "mock reply: stream this please");
    let done = &events.last().unwrap().1["response"];
    assert_eq!(done["output"][0]["content"][0]["text"], joined);
    assert!(
        done["usage"]["output_tokens"].as_u64().unwrap() > 0,
        "{done}"
    );
    assert_eq!(
        h.mock.requests()[0].body["stream_options"],
        json!({"include_usage": true})
    );
    h.stop().await;
}

#[tokio::test]
async fn tool_call_and_its_output_round_trip() {
    let h = Harness::start().await;
    h.mock
        .push(Behaviour::tool_call("read_file", r#"{"path":"HELLO.txt"}"#));
    let tools = json!([{"type": "function", "name": "read_file", "description": "Read a file",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}, "strict": false},
        {"type": "web_search"}]);
    let first = json!({"model": "m", "input": "read HELLO.txt", "tools": tools,
        "tool_choice": "auto", "parallel_tool_calls": true, "stream": true});
    let (_, text) = post_text(&h, "/v1/responses", &first).await;
    let events = sse(&text);
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names[2], "response.output_item.added");
    assert!(names.contains(&"response.function_call_arguments.delta"));
    let done = &events.last().unwrap().1["response"];
    let call = done["output"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["type"] == "function_call")
        .unwrap()
        .clone();
    assert_eq!(call["name"], "read_file");
    assert_eq!(call["arguments"], r#"{"path":"HELLO.txt"}"#);
    let args_done = events
        .iter()
        .find(|(n, _)| n == "response.function_call_arguments.done")
        .unwrap();
    assert_eq!(args_done.1["arguments"], call["arguments"]);
    let sent = &h.mock.requests()[0].body;
    assert_eq!(
        sent["tools"],
        json!([{"type": "function", "function": {"name": "read_file", "description": "Read a file",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}, "strict": false}}]),
        "hosted tools are not offered to a chat backend"
    );
    assert_eq!(sent["tool_choice"], "auto");

    // Codex's follow-up: the whole history, with the call echoed and its output.
    let second = json!({"model": "m", "store": false, "tools": tools, "input": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "read HELLO.txt"}]},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "opaque"},
        call,
        {"type": "function_call_output", "id": "fco_1", "call_id": call["call_id"], "output": "hello world"}
    ]});
    let (status, r) = post_json(&h, "/v1/responses", &second).await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["output"][0]["type"], "message");
    let msgs = h.mock.requests()[1].body["messages"].clone();
    assert_eq!(msgs[1]["role"], "assistant");
    assert_eq!(msgs[1]["tool_calls"][0]["id"], call["call_id"]);
    assert_eq!(
        msgs[1]["tool_calls"][0]["function"],
        json!({"name": "read_file", "arguments": r#"{"path":"HELLO.txt"}"#})
    );
    assert_eq!(
        msgs[2],
        json!({"role": "tool", "tool_call_id": call["call_id"], "content": "hello world"})
    );
    assert_eq!(msgs.as_array().unwrap().len(), 3, "{msgs}");
    h.stop().await;
}

/// The same request sent through the proxy and straight to the mock, with the mock's
/// per-request counter and clock taken out.
fn normalised(v: &Value, seq: u64) -> Value {
    match v {
        Value::String(s) => Value::String(s.replace(&format!("mock_{seq}"), "mock_N")),
        Value::Array(a) => Value::Array(a.iter().map(|x| normalised(x, seq)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| {
                    let x = if k == "created_at" {
                        json!(0)
                    } else {
                        normalised(x, seq)
                    };
                    (k.clone(), x)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

#[tokio::test]
async fn native_upstream_gets_the_body_and_the_client_every_byte() {
    let h = Harness::start_with(|c| c.llm.provider = LlmProvider::Openai).await;
    h.mock.push(Behaviour::reasoning("think", "answer"));
    let body = json!({"model": "m", "stream": true, "store": false,
        "include": ["reasoning.encrypted_content"], "client_metadata": {"turn_id": "t"},
        "prompt_cache_key": "thread-9", "reasoning": {"summary": "auto"},
        "input": [{"type": "reasoning", "id": "rs_0", "summary": [], "encrypted_content": "e"},
                  {"role": "user", "content": "native please"}],
        "previous_response_id": null});
    let (status, proxied) = post_text(&h, "/v1/responses", &body).await;
    assert_eq!(status, 200);
    let sent = &h.mock.requests()[0];
    assert_eq!(sent.path, "/v1/responses");
    assert_eq!(sent.header("authorization"), Some("Bearer upstream-key"));
    let mut expected = body.clone();
    expected["model"] = json!("mock-model");
    assert_eq!(
        sent.body, expected,
        "forwarded as sent (model override aside)"
    );

    h.mock.push(Behaviour::reasoning("think", "answer"));
    let direct = h
        .client
        .post(format!("{}/responses", h.mock.openai_base()))
        .json(&expected)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let p: Vec<(String, Value)> = sse(&proxied);
    let d: Vec<(String, Value)> = sse(&direct);
    assert!(p.len() > 8);
    let p: Vec<(String, Value)> = p.into_iter().map(|(n, v)| (n, normalised(&v, 1))).collect();
    let d: Vec<(String, Value)> = d.into_iter().map(|(n, v)| (n, normalised(&v, 2))).collect();
    assert_eq!(p, d);
    assert_eq!(
        proxied.len(),
        direct.len(),
        "no byte added or dropped (the ids are the same length)"
    );
    assert!(p.iter().any(|(_, v)| v["item"]["type"] == "reasoning"));

    // Non-streamed: the upstream's JSON as it was.
    let whole = json!({"model": "m", "input": "whole", "previous_response_id": "resp_prev"});
    let (status, r) = post_json(&h, "/v1/responses", &whole).await;
    assert_eq!(status, 200, "a native upstream keeps its own state");
    assert_eq!(r["id"], "resp_mock_3");
    assert_eq!(
        h.mock.requests()[2].body["previous_response_id"],
        "resp_prev"
    );

    // Upstream errors keep their status and OpenAI shape.
    h.mock.push(Behaviour::recorded("openai", 429));
    let (status, err) = post_json(&h, "/v1/responses", &whole).await;
    assert_eq!(status, 429);
    assert!(err["error"]["message"].is_string(), "{err}");

    h.wait_turns(3).await;
    let turns = h.all_turns();
    let streamed = turns
        .iter()
        .find(|t| t.stream)
        .expect("the streamed turn is logged");
    assert_eq!(streamed.status, TurnStatus::Ok);
    assert_eq!(streamed.request["messages"][0]["content"], "native please");
    assert_eq!(
        streamed.response.as_ref().unwrap()["choices"][0]["message"]["content"],
        "answer"
    );
    assert!(streamed.input_tokens.is_some());
    h.stop().await;
}

#[tokio::test]
async fn the_responses_api_setting_overrides_the_provider() {
    let h = Harness::start_with(|c| {
        c.llm.provider = LlmProvider::Openai;
        c.llm.responses_api = ResponsesApi::Translate;
    })
    .await;
    let (status, _) = post_json(&h, "/v1/responses", &json!({"input": "x"})).await;
    assert_eq!(status, 200);
    assert_eq!(h.mock.requests()[0].path, "/v1/chat/completions");
    h.stop().await;
    let h = Harness::start_with(|c| c.llm.responses_api = ResponsesApi::Native).await;
    let (status, _) = post_json(&h, "/v1/responses", &json!({"input": "x"})).await;
    assert_eq!(status, 200);
    assert_eq!(h.mock.requests()[0].path, "/v1/responses");
    h.stop().await;
}

#[tokio::test]
async fn malformed_bodies_get_openai_errors_naming_the_field() {
    let h = Harness::start().await;
    let cases = [
        (json!({"model": "m"}), "input"),
        (json!({"input": 42}), "input"),
        (
            json!({"input": [{"type": "function_call_output", "output": "x"}]}),
            "input[0].call_id",
        ),
        (
            json!({"input": [{"role": "user", "content": "a"}, {"role": "bot", "content": "b"}]}),
            "input[1].role",
        ),
        (
            json!({"input": "x", "max_output_tokens": -1}),
            "max_output_tokens",
        ),
        (
            json!({"input": "x", "tools": [{"type": "function", "parameters": {}}]}),
            "tools[0].name",
        ),
        (
            json!({"input": "x", "previous_response_id": "resp_1"}),
            "previous_response_id",
        ),
        (
            json!({"input": [{"role": "user", "content": [{"type": "input_file", "file_id": "f"}]}]}),
            "input[0].content[0]",
        ),
    ];
    for (body, param) in cases {
        let (status, err) = post_json(&h, "/v1/responses", &body).await;
        assert_eq!(status, 400, "{body}: {err}");
        assert_eq!(err["error"]["type"], "invalid_request_error", "{err}");
        assert_eq!(err["error"]["param"], param, "{err}");
        assert!(
            err["error"]["message"].as_str().unwrap().contains(param),
            "{err}"
        );
    }
    let (_, err) = post_json(
        &h,
        "/v1/responses",
        &json!({"input": "x", "previous_response_id": "resp_1"}),
    )
    .await;
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("is not supported"),
        "{err}"
    );
    let resp = h
        .client
        .post(format!("{}/v1/responses", h.base))
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401, "the key is checked first");
    let resp = h
        .post("/v1/responses")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    let err: Value = resp.json().await.unwrap();
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not valid JSON")
    );
    assert!(
        h.mock.requests().is_empty(),
        "nothing malformed went upstream"
    );
    h.stop().await;
}

#[tokio::test]
async fn a_broken_upstream_stream_ends_with_error_and_failed() {
    let h = Harness::start().await;
    h.mock.push(Behaviour::reset_mid_stream(2));
    let body = json!({"input": "break please", "stream": true});
    let (_, text) = post_text(&h, "/v1/responses", &body).await;
    let events = sse(&text);
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names[..2], ["response.created", "response.in_progress"]);
    assert_eq!(
        names[names.len() - 2..],
        ["error", "response.failed"],
        "{names:?}"
    );
    for (i, (_, data)) in events.iter().enumerate() {
        assert_eq!(data["sequence_number"], i as u64);
    }
    h.wait_turns(1).await;
    assert_eq!(h.all_turns()[0].status, TurnStatus::StreamBroken);
    h.stop().await;
}

#[tokio::test]
async fn skills_are_injected_into_instructions() {
    // With the system placement; the default (beside the newest user item) is the proxy's.
    let h = Harness::start_with(|c| c.skills.placement = metaclaw_config::Placement::System).await;
    // Codex's shape: no `instructions`, the base prompt as a developer item.
    let body = json!({"model": "m", "store": false, "stream": true, "input": [
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "You are Codex."}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": FLAKY}]}]});
    let resp = h
        .post("/v1/responses")
        .header("x-session-id", "skills")
        .json(&body)
        .send()
        .await
        .unwrap();
    let events = sse(&resp.text().await.unwrap());
    let completed = &events.last().unwrap().1["response"];
    let instructions = completed["instructions"].as_str().unwrap();
    assert!(
        instructions.starts_with("<!-- metaclaw:skills -->"),
        "{instructions}"
    );
    assert!(
        instructions.contains("### fix-flaky-tests"),
        "{instructions}"
    );
    let sent = &h.mock.requests()[0].body["messages"];
    assert_eq!(sent[0]["content"], instructions);
    assert_eq!(
        sent[1],
        json!({"role": "system", "content": "You are Codex."})
    );
    h.wait_turns(1).await;
    let turn = &h.core().store().turns_in_session("skills").unwrap()[0];
    let injected = turn.injected.as_array().unwrap();
    assert!(
        injected.iter().any(|i| i["name"] == "fix-flaky-tests"),
        "{injected:?}"
    );
    h.stop().await;
}

#[tokio::test]
async fn count_tokens_is_estimated_without_an_anthropic_upstream() {
    let h = Harness::start().await;
    let body = json!({"model": "claude", "system": "You are helpful.",
        "tools": [{"name": "read", "input_schema": {"type": "object"}}],
        "messages": [{"role": "user", "content": "How many tokens is this?"}]});
    let resp = h
        .post("/v1/messages/count_tokens")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let got: Value = resp.json().await.unwrap();
    let expected = metaclaw_proxy::prompt_tokens(
        body.as_object().unwrap(),
        metaclaw_domain::Dialect::Anthropic,
        &metaclaw_proxy::EstimateCounter,
    );
    assert_eq!(got, json!({"input_tokens": expected}));
    assert!(expected > 10);
    assert!(h.mock.requests().is_empty(), "estimated locally");

    let (status, err) = post_json(
        &h,
        "/v1/messages/count_tokens",
        &json!({"model": "claude", "messages": [{"role": "tool", "content": "x"}]}),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(err["type"], "error");
    assert_eq!(err["error"]["type"], "invalid_request_error");
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("messages[0].role")
    );
    h.wait_turns(0).await;
    assert_eq!(h.core().store().turn_count().unwrap(), 0, "not a turn");
    h.stop().await;
}

#[tokio::test]
async fn count_tokens_is_forwarded_to_an_anthropic_upstream() {
    let h = Harness::start_with(|c| c.llm.provider = LlmProvider::Anthropic).await;
    let body = json!({"model": "claude", "messages": [{"role": "user", "content": "count me"}]});
    let resp = h
        .post("/v1/messages/count_tokens")
        .header("anthropic-version", "2023-06-01")
        .header("anthropic-beta", "token-counting-2024-11-01")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let got: Value = resp.json().await.unwrap();
    let sent = &h.mock.requests()[0];
    assert_eq!(sent.path, "/v1/messages/count_tokens");
    assert_eq!(sent.header("x-api-key"), Some("upstream-key"));
    assert_eq!(
        sent.header("anthropic-beta"),
        Some("token-counting-2024-11-01")
    );
    assert_eq!(sent.body["model"], "mock-model");
    let forwarded_len = serde_json::to_vec(&sent.body).unwrap().len() as u64;
    assert_eq!(got, json!({"input_tokens": 1000 + forwarded_len}));
    let resp = h
        .post("/v1/responses")
        .json(&json!({"input": "x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400, "no Responses API in front of Anthropic");
    h.stop().await;
}
