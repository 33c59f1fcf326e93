//! `LlmClient` against a scripted server on 127.0.0.1: request shapes, parsing, the retry
//! policy, timeouts, transport errors and secret safety.

mod support;

use std::time::Duration;

use metaclaw_llm::{
    ChatMessage, ChatRequest, CompletionRequest, EmbeddingRequest, ErrorKind, LlmClient, LlmError,
    Probe, Prompt, ResponseFormat, RetryPolicy,
};
use serde_json::json;
use support::{Reply, Upstream, ok, status};
use tokio::time::Instant;

const KEY: &str = "sk-test-5f0c9a7d2e8b4c61";

fn client(up: &Upstream) -> LlmClient {
    LlmClient::new(&up.url, KEY, Duration::from_secs(60)).unwrap()
}

fn chat_answer(text: &str) -> Reply {
    ok(json!({"id": "c1", "model": "m", "choices": [{"index": 0,
        "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}))
}

fn chat(format: Option<ResponseFormat>) -> ChatRequest {
    let mut req = ChatRequest::new(
        "m",
        vec![ChatMessage::system("be brief"), ChatMessage::user("hi")],
    );
    req.temperature = Some(0.5);
    req.max_tokens = Some(100);
    req.response_format = format;
    req
}

#[tokio::test]
async fn json_mode_request_has_the_openai_shape() {
    let up = Upstream::start([chat_answer("{\"a\": 1}")]).await;
    let answer = client(&up)
        .chat(&chat(Some(ResponseFormat::JsonObject)))
        .await
        .unwrap();
    assert_eq!(answer.content(), Some("{\"a\": 1}"));
    assert_eq!(answer.usage.unwrap().total_tokens, 5);
    let req = &up.requests()[0];
    assert_eq!(
        (req.method.as_str(), req.path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(req.headers["authorization"], format!("Bearer {KEY}"));
    assert_eq!(req.headers["content-type"], "application/json");
    assert!(req.headers.get("x-api-key").is_none());
    assert_eq!(
        req.body,
        json!({"model": "m", "messages": [{"role": "system", "content": "be brief"},
            {"role": "user", "content": "hi"}], "temperature": 0.5, "max_tokens": 100,
            "response_format": {"type": "json_object"}})
    );
    up.stop().await;
}

#[tokio::test]
async fn json_schema_and_unset_options() {
    let schema =
        json!({"type": "object", "required": ["a"], "properties": {"a": {"type": "integer"}}});
    let up = Upstream::start([
        chat_answer("{}"),
        ok(json!({"choices": [{"message": {"content": null}}]})),
    ])
    .await;
    let c = LlmClient::new(&format!("{}/", up.url), "", Duration::from_secs(60)).unwrap();
    let format = ResponseFormat::json_schema("answer", schema.clone(), true);
    c.chat(&chat(Some(format))).await.unwrap();
    let mut bare = ChatRequest::new("m", vec![ChatMessage::user("x")]);
    bare.max_completion_tokens = Some(7);
    // No content (a tool call or a cut-off answer) is a malformed answer for chat_text.
    let err = c.chat_text(&bare).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Malformed);
    let reqs = up.requests();
    assert_eq!(
        reqs[0].body["response_format"],
        json!({"type": "json_schema", "json_schema": {"name": "answer", "schema": schema, "strict": true}})
    );
    assert_eq!(
        reqs[1].body,
        json!({"model": "m", "messages": [{"role": "user", "content": "x"}], "max_completion_tokens": 7})
    );
    assert!(
        reqs[0].headers.get("authorization").is_none(),
        "no key, no header"
    );
    up.stop().await;
}

#[tokio::test]
async fn completions_with_echo_return_per_token_logprobs() {
    let up = Upstream::start([
        ok(
            json!({"choices": [{"text": "Hello world!", "index": 0, "logprobs": {
            "tokens": ["Hello", " world", "!"], "token_logprobs": [null, -1.5, -0.25],
            "top_logprobs": [null, {" world": -1.5}, {"!": -0.25}], "text_offset": [0, 5, 11]}}]}),
        ),
        ok(json!({"choices": [{"text": " there"}]})),
    ])
    .await;
    let c = client(&up);
    let mut req = CompletionRequest::new("t", Prompt::Tokens(vec![9906, 1917]));
    req.echo = true;
    req.logprobs = Some(1);
    req.max_tokens = Some(1);
    req.temperature = Some(0.0);
    let answer = c.complete(&req).await.unwrap();
    let lp = answer.choices[0].logprobs.as_ref().unwrap();
    assert_eq!(
        lp.token_logprobs.as_deref(),
        Some(&[None, Some(-1.5), Some(-0.25)][..])
    );
    assert_eq!(lp.tokens.as_ref().unwrap().concat(), "Hello world!");
    assert_eq!(
        lp.top_logprobs.as_ref().unwrap()[1].as_ref().unwrap()[" world"],
        -1.5
    );
    let text = c
        .complete(&CompletionRequest::new("t", Prompt::Text("hi".into())))
        .await
        .unwrap();
    assert_eq!(text.choices[0].text, " there");
    assert!(text.choices[0].logprobs.is_none());
    let reqs = up.requests();
    assert_eq!(reqs[0].path, "/v1/completions");
    assert_eq!(
        reqs[0].body,
        json!({"model": "t", "prompt": [9906, 1917], "echo": true, "logprobs": 1,
               "max_tokens": 1, "temperature": 0.0})
    );
    assert_eq!(reqs[1].body, json!({"model": "t", "prompt": "hi"}));
    up.stop().await;
}

#[tokio::test]
async fn embeddings_come_back_in_input_order() {
    let up = Upstream::start([
        ok(
            json!({"data": [{"index": 2, "embedding": [2.0]}, {"index": 0, "embedding": [0.0]},
                           {"index": 1, "embedding": [1.0]}]}),
        ),
        ok(json!({"data": [{"embedding": [5.0]}, {"embedding": [6.0]}]})),
        ok(json!({"data": [{"index": 0, "embedding": [1.0]}]})),
    ])
    .await;
    let c = client(&up);
    let req = |n: usize| EmbeddingRequest {
        model: "e".into(),
        input: (0..n).map(|i| format!("text {i}")).collect(),
    };
    assert_eq!(c.embed(&req(3)).await.unwrap(), [[0.0], [1.0], [2.0]]);
    assert_eq!(
        c.embed(&req(2)).await.unwrap(),
        [[5.0], [6.0]],
        "no index: list order"
    );
    let short = c.embed(&req(2)).await.unwrap_err();
    assert_eq!(short.kind(), ErrorKind::Malformed, "{short}");
    assert!(
        short.to_string().contains("1 embeddings for 2 inputs"),
        "{short}"
    );
    assert!(c.embed(&req(0)).await.unwrap().is_empty());
    assert_eq!(up.requests().len(), 3, "no inputs, no request");
    assert_eq!(
        up.requests()[0].body,
        json!({"model": "e", "input": ["text 0", "text 1", "text 2"]})
    );
    up.stop().await;
}

#[tokio::test]
async fn models_are_listed_with_both_key_headers() {
    let up = Upstream::start([ok(json!({"object": "list", "data": [
        {"id": "a", "object": "model", "owned_by": "me"}, {"id": "b"}]}))])
    .await;
    let models = client(&up).models().await.unwrap();
    let ids: Vec<&str> = models.data.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["a", "b"]);
    let req = &up.requests()[0];
    assert_eq!(
        (req.method.as_str(), req.path.as_str()),
        ("GET", "/v1/models")
    );
    assert_eq!(req.headers["x-api-key"], KEY);
    assert_eq!(req.headers["authorization"], format!("Bearer {KEY}"));
    up.stop().await;
}

#[tokio::test]
async fn a_ping_is_one_token_in_the_endpoints_dialect() {
    let up = Upstream::start([
        chat_answer("p"),
        ok(json!({"id": "m1", "type": "message", "content": [{"type": "text", "text": "p"}]})),
        ok(json!({"data": [{"id": "claude-x", "type": "model"}]})),
    ])
    .await;
    client(&up).ping("m").await.unwrap();
    // An Anthropic base without `/v1`, as `llm.api_base` holds it.
    let base = up.url.trim_end_matches("/v1").to_owned();
    let anthropic = LlmClient::new(&base, KEY, Duration::from_secs(60))
        .unwrap()
        .with_dialect(metaclaw_domain::Dialect::Anthropic);
    anthropic.ping("claude-x").await.unwrap();
    let models = anthropic.models().await.unwrap();
    assert_eq!(models.data[0].id, "claude-x");
    let reqs = up.requests();
    assert_eq!(reqs[0].path, "/v1/chat/completions");
    assert_eq!(
        reqs[0].body,
        json!({"model": "m", "messages": [{"role": "user", "content": "ping"}], "max_tokens": 1})
    );
    assert_eq!(
        (reqs[1].method.as_str(), reqs[1].path.as_str()),
        ("POST", "/v1/messages")
    );
    assert_eq!(reqs[1].body["max_tokens"], 1);
    assert_eq!(reqs[1].body["model"], "claude-x");
    assert_eq!(
        (reqs[2].method.as_str(), reqs[2].path.as_str()),
        ("GET", "/v1/models")
    );
    for r in &reqs[1..] {
        assert_eq!(r.headers["x-api-key"], KEY);
        assert_eq!(r.headers["anthropic-version"], "2023-06-01");
        assert!(r.headers.get("authorization").is_none());
    }
    up.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_429_is_retried_after_the_servers_retry_after() {
    let limited = Reply::Json {
        status: 429,
        body: json!({"error": {"message": "slow down"}}),
        headers: vec![("retry-after", "7".into())],
    };
    let up = Upstream::start([limited, chat_answer("done")]).await;
    let started = Instant::now();
    let text = client(&up).chat_text(&chat(None)).await.unwrap();
    assert_eq!(text, "done");
    assert!(
        started.elapsed() >= Duration::from_secs(7),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(up.requests().len(), 2);
    up.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_retry_after_past_the_limit_or_the_budget_is_not_waited_for() {
    let limited = |secs: &str| Reply::Json {
        status: 429,
        body: json!({"error": {"message": "quota"}}),
        headers: vec![("retry-after", secs.into())],
    };
    let up = Upstream::start([limited("3600"), limited("30")]).await;
    let c = client(&up);
    let err = c.chat(&chat(None)).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::RateLimited);
    assert_eq!(err.retry_after(), Some(Duration::from_secs(3600)));
    assert!(err.to_string().contains("retry after 3600 s"), "{err}");
    let short = LlmClient::new(&up.url, KEY, Duration::from_secs(10)).unwrap();
    let err = short.chat(&chat(None)).await.unwrap_err();
    assert_eq!(err.retry_after(), Some(Duration::from_secs(30)));
    assert_eq!(up.requests().len(), 2, "neither was retried");
    up.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_503_is_retried_with_backoff_until_it_succeeds() {
    let up = Upstream::start([status(503), status(502), chat_answer("ok")]).await;
    let started = Instant::now();
    assert_eq!(client(&up).chat_text(&chat(None)).await.unwrap(), "ok");
    // Two backoff waits: 250 ms and 500 ms at least (jitter only adds).
    assert!(
        started.elapsed() >= Duration::from_millis(750),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(up.requests().len(), 3);
    up.stop().await;
}

#[tokio::test(start_paused = true)]
async fn retries_are_bounded() {
    let up = Upstream::start([status(500), status(500), status(500), chat_answer("late")]).await;
    let err = client(&up).chat(&chat(None)).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UpstreamStatus);
    assert_eq!(err.status(), Some(500));
    assert!(err.to_string().contains("HTTP 500"), "{err}");
    assert!(err.to_string().contains("scripted 500"), "{err}");
    assert_eq!(up.requests().len(), 3, "one try and two retries");
    let once = client(&up).with_retry(RetryPolicy::none());
    assert_eq!(once.chat_text(&chat(None)).await.unwrap(), "late");
    up.stop().await;
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let up = Upstream::start([status(400), status(401), status(403), status(404)]).await;
    let c = client(&up);
    let mut kinds = Vec::new();
    for _ in 0..4 {
        kinds.push(c.chat(&chat(None)).await.unwrap_err().kind());
    }
    assert_eq!(
        kinds,
        [
            ErrorKind::UpstreamStatus,
            ErrorKind::Unauthorized,
            ErrorKind::Unauthorized,
            ErrorKind::NotFound
        ]
    );
    assert_eq!(up.requests().len(), 4, "one request each");
    up.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_hanging_server_times_out_once() {
    let up = Upstream::start([Reply::Hang, chat_answer("never asked")]).await;
    let c = LlmClient::new(&up.url, KEY, Duration::from_secs(5)).unwrap();
    let started = Instant::now();
    let err = c.chat(&chat(None)).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout);
    assert_eq!(
        err.to_string(),
        format!("{}/chat/completions: timed out after 5 s", up.url)
    );
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_secs(5) && waited < Duration::from_secs(6),
        "{waited:?}"
    );
    assert_eq!(up.requests().len(), 1, "a timeout is not retried");
    up.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_closed_port_is_connection_refused() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    drop(listener);
    let err = LlmClient::new(&url, KEY, Duration::from_secs(60))
        .unwrap()
        .models()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ConnectionRefused, "{err}");
    assert!(err.to_string().contains("connection refused"), "{err}");
}

#[tokio::test]
async fn tls_to_a_plain_http_server_is_a_tls_error() {
    let up = Upstream::start([]).await;
    let https = up.url.replace("http://", "https://");
    let c = LlmClient::new(&https, KEY, Duration::from_secs(60))
        .unwrap()
        .with_retry(RetryPolicy::none());
    let err = c.models().await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Tls, "{err}");
    up.stop().await;
}

#[tokio::test]
async fn malformed_answers_are_reported_with_their_status() {
    let up = Upstream::start([Reply::Text(200, "<html>proxy login</html>".into())]).await;
    let err = client(&up).chat(&chat(None)).await.unwrap_err();
    assert_eq!(
        (err.kind(), err.status()),
        (ErrorKind::Malformed, Some(200))
    );
    up.stop().await;
}

#[tokio::test]
async fn no_error_shows_the_api_key() {
    let up = Upstream::start([
        Reply::EchoKey(401),
        Reply::EchoKey(400),
        // A 200 whose wrong-typed field echoes the key: serde quotes the value it rejects.
        ok(json!({"choices": format!("Bearer {KEY}")})),
        Reply::Text(422, format!("key={KEY}")),
    ])
    .await;
    let c = client(&up);
    let mut errors: Vec<LlmError> = Vec::new();
    for _ in 0..4 {
        errors.push(c.chat(&chat(None)).await.unwrap_err());
    }
    assert_eq!(errors[0].kind(), ErrorKind::Unauthorized);
    assert!(
        errors[0].to_string().contains("[redacted]"),
        "{}",
        errors[0]
    );
    for e in &errors {
        for text in [e.to_string(), format!("{e:?}")] {
            assert!(!text.contains(KEY), "{text}");
            assert!(!text.contains(&KEY[..12]), "no prefix either: {text}");
        }
    }
    assert!(!format!("{c:?}").contains(KEY));
    let refused =
        LlmClient::new(&format!("ftp://{KEY}@host/"), KEY, Duration::from_secs(1)).unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::Config);
    assert!(!refused.to_string().contains(KEY), "{refused}");
    up.stop().await;
}

#[tokio::test]
async fn a_probe_takes_one_answer_and_sorts_it() {
    let up = Upstream::start([
        ok(json!({"data": []})),
        status(401),
        status(503),
        Reply::Text(200, "not a model list".into()),
    ])
    .await;
    let c = client(&up);
    let mut found = Vec::new();
    for _ in 0..4 {
        found.push(match c.probe().await {
            Probe::Reachable { status } => format!("reachable {status}"),
            Probe::KeyRefused { status } => format!("refused {status}"),
            Probe::Unreachable(e) => format!("unreachable {}", e.kind()),
        });
    }
    assert_eq!(
        found,
        [
            "reachable 200",
            "refused 401",
            "reachable 503",
            "reachable 200"
        ]
    );
    assert_eq!(up.requests().len(), 4, "a probe is never retried");
    let url = up.url.clone();
    up.stop().await;
    let fresh = LlmClient::new(&url, KEY, Duration::from_secs(60)).unwrap();
    let Probe::Unreachable(e) = fresh.probe().await else {
        panic!("a stopped server is unreachable");
    };
    assert_eq!(e.kind(), ErrorKind::ConnectionRefused);
}
