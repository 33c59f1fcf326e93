//! Tests of the mock upstream itself (stream shapes, scripted faults, disconnect accounting).

use std::time::Duration;

use futures_util::StreamExt;
use metaclaw_tests::mock_upstream::{Behaviour, MockUpstream};
use serde_json::{Value, json};

fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

/// Reads a whole SSE body into (event name, data) pairs.
async fn sse(resp: reqwest::Response) -> Vec<(String, String)> {
    use eventsource_stream::Eventsource;
    let mut out = Vec::new();
    let mut s = resp.bytes_stream().eventsource();
    while let Some(ev) = s.next().await {
        let ev = ev.expect("sse event");
        out.push((ev.event, ev.data));
    }
    out
}

#[tokio::test]
async fn openai_stream_shape() {
    let mock = MockUpstream::start().await.unwrap();
    let resp = client()
        .post(format!("{}/chat/completions", mock.openai_base()))
        .json(
            &json!({"model": "m1", "stream": true, "stream_options": {"include_usage": true},
                      "messages": [{"role": "user", "content": "hello world"}]}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert!(
        resp.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let events = sse(resp).await;
    assert_eq!(events.last().unwrap().1, "[DONE]");
    let chunks: Vec<Value> = events[..events.len() - 1]
        .iter()
        .map(|(_, d)| serde_json::from_str(d).unwrap())
        .collect();
    assert_eq!(
        chunks[0]["choices"][0]["delta"],
        json!({"role": "assistant", "content": "", "refusal": null})
    );
    let text: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(text, "mock reply: hello world");
    let content_chunks = chunks
        .iter()
        .filter(|c| {
            c["choices"][0]["delta"]["content"]
                .as_str()
                .is_some_and(|s| !s.is_empty())
        })
        .count();
    assert!(
        content_chunks >= 3,
        "content split into several chunks: {content_chunks}"
    );
    let finish = &chunks[chunks.len() - 2];
    assert_eq!(finish["choices"][0]["finish_reason"], "stop");
    assert_eq!(finish["choices"][0]["delta"], json!({}));
    let usage = &chunks[chunks.len() - 1];
    assert_eq!(usage["choices"], json!([]));
    assert!(usage["usage"]["total_tokens"].as_u64().unwrap() > 0);
    assert!(chunks.iter().all(|c| c["model"] == "m1"));
    assert_eq!(mock.stats().completed_streams, 1);
    mock.stop().await;
}

#[tokio::test]
async fn openai_stream_tool_calls_and_reasoning() {
    let mock = MockUpstream::start().await.unwrap();
    mock.push(Behaviour::ToolCalls {
        calls: vec![
            metaclaw_tests::mock_upstream::ToolCallSpec {
                name: "read".into(),
                arguments: r#"{"path":"HELLO.txt"}"#.into(),
            },
            metaclaw_tests::mock_upstream::ToolCallSpec {
                name: "ls".into(),
                arguments: r#"{"dir":"."}"#.into(),
            },
        ],
        text: None,
    });
    mock.push(Behaviour::reasoning("let me think", "42"));
    let c = client();
    let url = format!("{}/chat/completions", mock.openai_base());
    let body =
        json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "q"}]});

    let events = sse(c.post(&url).json(&body).send().await.unwrap()).await;
    let mut names = vec![String::new(); 2];
    let mut args = vec![String::new(); 2];
    let mut finish = None;
    for (_, d) in &events[..events.len() - 1] {
        let v: Value = serde_json::from_str(d).unwrap();
        if let Some(f) = v["choices"][0]["finish_reason"].as_str() {
            finish = Some(f.to_owned());
        }
        for tc in v["choices"][0]["delta"]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let i = tc["index"].as_u64().unwrap() as usize;
            if let Some(n) = tc["function"]["name"].as_str() {
                assert!(tc["id"].is_string(), "id in the first delta of a call");
                names[i].push_str(n);
            }
            args[i].push_str(tc["function"]["arguments"].as_str().unwrap_or(""));
        }
    }
    assert_eq!(names, ["read", "ls"]);
    assert_eq!(args, [r#"{"path":"HELLO.txt"}"#, r#"{"dir":"."}"#]);
    assert_eq!(finish.as_deref(), Some("tool_calls"));

    let events = sse(c.post(&url).json(&body).send().await.unwrap()).await;
    let chunks: Vec<Value> = events[..events.len() - 1]
        .iter()
        .map(|(_, d)| serde_json::from_str(d).unwrap())
        .collect();
    let reasoning: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["reasoning_content"].as_str())
        .collect();
    let text: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!((reasoning.as_str(), text.as_str()), ("let me think", "42"));
    mock.stop().await;
}

#[tokio::test]
async fn anthropic_stream_event_sequence() {
    let mock = MockUpstream::start().await.unwrap();
    mock.push(Behaviour::ToolCall {
        name: "read".into(),
        arguments: r#"{"path":"a"}"#.into(),
        text: Some("Reading.".into()),
    });
    let resp = client()
        .post(format!("{}/v1/messages", mock.anthropic_base()))
        .json(&json!({"model": "claude-x", "max_tokens": 100, "stream": true, "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .unwrap();
    let events = sse(resp).await;
    let names: Vec<&str> = events.iter().map(|(e, _)| e.as_str()).collect();
    let mut dedup = names.clone();
    dedup.dedup();
    assert_eq!(
        dedup,
        [
            "message_start",
            "content_block_start",
            "ping",
            "content_block_delta",
            "content_block_stop",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
    for (e, d) in &events {
        let v: Value = serde_json::from_str(d).unwrap();
        assert_eq!(v["type"], e.as_str(), "data.type matches the event name");
    }
    let delta: Value = serde_json::from_str(&events[events.len() - 2].1).unwrap();
    assert_eq!(delta["delta"]["stop_reason"], "tool_use");
    let json: String = events
        .iter()
        .filter_map(|(_, d)| serde_json::from_str::<Value>(d).ok())
        .filter_map(|v| v["delta"]["partial_json"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(json, r#"{"path":"a"}"#);
    mock.stop().await;
}

#[tokio::test]
async fn scripted_errors_in_each_api_shape() {
    let mock = MockUpstream::start().await.unwrap();
    let c = client();
    mock.push(Behaviour::error_with(
        429,
        json!({"error": {"message": "slow down", "type": "requests"}}),
        &[("retry-after", "7")],
    ));
    mock.push(Behaviour::error(500));
    mock.push(Behaviour::error(401));

    let r = c
        .post(format!("{}/chat/completions", mock.openai_base()))
        .json(&json!({"messages": []}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 429);
    assert_eq!(r.headers()["retry-after"], "7");
    assert_eq!(
        r.json::<Value>().await.unwrap()["error"]["message"],
        "slow down"
    );

    let r = c
        .post(format!("{}/chat/completions", mock.openai_base()))
        .json(&json!({"messages": []}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 500);
    assert_eq!(
        r.json::<Value>().await.unwrap()["error"]["type"],
        "server_error"
    );

    let r = c
        .post(format!("{}/v1/messages", mock.anthropic_base()))
        .json(&json!({"messages": []}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let v: Value = r.json().await.unwrap();
    assert_eq!(
        (v["type"].as_str(), v["error"]["type"].as_str()),
        (Some("error"), Some("authentication_error"))
    );

    // Queue drained: default reply again.
    let r = c
        .post(format!("{}/chat/completions", mock.openai_base()))
        .json(&json!({"messages": [{"role": "user", "content": "again"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        r.json::<Value>().await.unwrap()["choices"][0]["message"]["content"],
        "mock reply: again"
    );
    assert_eq!(mock.stats().requests, 4);
    mock.stop().await;
}

#[tokio::test]
async fn reset_mid_stream_breaks_the_body() {
    let mock = MockUpstream::start().await.unwrap();
    mock.push(Behaviour::reset_mid_stream(2));
    let resp = client()
        .post(format!("{}/chat/completions", mock.openai_base()))
        .json(&json!({"stream": true, "messages": [{"role": "user", "content": "hello world"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let mut got = Vec::new();
    let mut s = resp.bytes_stream();
    let mut failed = false;
    while let Some(item) = s.next().await {
        match item {
            Ok(b) => got.extend_from_slice(&b),
            Err(_) => {
                failed = true;
                break;
            }
        }
    }
    assert!(failed, "the body must end in an error");
    let text = String::from_utf8(got).unwrap();
    assert_eq!(text.matches("data: ").count(), 2, "{text}");
    assert!(!text.contains("[DONE]"));
    assert_eq!(mock.stats().reset_streams, 1);
    mock.stop().await;
}

#[tokio::test]
async fn cancelled_streams_counts_a_client_that_drops_a_slow_stream() {
    let mock = MockUpstream::start().await.unwrap();
    mock.push(Behaviour::slow_stream(100, 20));
    let resp = client()
        .post(format!("{}/v1/messages", mock.anthropic_base()))
        .json(&json!({"stream": true, "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .unwrap();
    let mut s = resp.bytes_stream();
    let first = s.next().await.unwrap().unwrap();
    assert!(String::from_utf8_lossy(&first).contains("message_start"));
    drop(s);
    let (stats, ok) = mock
        .wait_for_stats(Duration::from_secs(3), |s| s.cancelled_streams == 1)
        .await;
    assert!(ok, "{stats:?}");
    assert_eq!(stats.completed_streams, 0);
    mock.stop().await;
}

#[tokio::test]
async fn control_api_match_embeddings_and_prompt_stop() {
    let mock = MockUpstream::start().await.unwrap();
    let c = client();
    let base = mock.anthropic_base();
    let r = c
        .post(format!("{base}/_mock/script"))
        .json(&json!([{"kind": "match", "contains": "special", "then": {"kind": "reply", "text": "matched"}}, {"kind": "hang"}]))
        .send()
        .await
        .unwrap();
    assert_eq!(r.json::<Value>().await.unwrap()["queued"], 2);
    let ask = |text: &'static str| {
        let c = c.clone();
        let url = format!("{base}/v1/chat/completions");
        async move {
            c.post(url)
                .json(&json!({"messages": [{"role": "user", "content": text}]}))
                .send()
                .await
                .unwrap()
                .json::<Value>()
                .await
                .unwrap()["choices"][0]["message"]["content"]
                .clone()
        }
    };
    assert_eq!(ask("this is special").await, "matched");
    // The next request consumes the `hang`; the mock must still stop promptly.
    let hung = tokio::spawn(ask("plain"));
    mock.wait_for_stats(Duration::from_secs(2), |s| s.queued == 0)
        .await;

    let e1: Value = c
        .post(format!("{base}/v1/embeddings"))
        .json(&json!({"input": ["abc", "xyz"], "model": "e"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let e2: Value = c
        .post(format!("{base}/v1/embeddings"))
        .json(&json!({"input": "abc"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(e1["data"][0]["embedding"].as_array().unwrap().len(), 64);
    assert_eq!(e1["data"][0]["embedding"], e2["data"][0]["embedding"]);
    assert_ne!(e1["data"][0]["embedding"], e1["data"][1]["embedding"]);

    let stats: Value = c
        .get(format!("{base}/_mock/stats"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(stats["requests"], 4);
    let reqs: Value = c
        .get(format!("{base}/_mock/requests"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(reqs[0]["body"]["messages"][0]["content"], "this is special");
    assert_eq!(reqs[0]["headers"]["content-type"], "application/json");

    let t0 = std::time::Instant::now();
    mock.stop().await;
    assert!(
        t0.elapsed() < Duration::from_secs(2),
        "stop took {:?}",
        t0.elapsed()
    );
    let _ = hung.await;
}
