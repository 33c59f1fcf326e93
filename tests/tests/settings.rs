//! The Settings page's API: the catalogue, field-level validation errors, every group applied
//! live through PATCH /api/config (no restart), Enable RL's missing fields, Test Tinker against
//! the fake server and a refused port, and the data operations (export, delete a session).

mod support;

use std::time::Duration;

use metaclaw_tests::wait::free_port;
use reqwest::Method;
use serde_json::{Value, json};
use support::{ApiClient, Harness};
use tinker_client::fake::{FakeServer, Knobs};

const TOKENIZER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/fixtures/rl/tiny-qwen3-tokenizer.json"
);

/// Polls `f` until it returns `Some`, for at most 10 s.
async fn poll<T, F, Fut>(what: &str, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

#[tokio::test]
async fn the_catalogue_lists_every_group_and_never_a_secret() {
    let h = Harness::start_with(|c| c.rl.prm_api_key = "sk-judge-secret-0123456789".into()).await;
    let api = h.api();
    let cat = api.get("/api/settings").await;
    let groups: Vec<&str> = cat["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_str().unwrap())
        .collect();
    for g in [
        "llm",
        "skills",
        "evolution",
        "rl",
        "judge",
        "teacher",
        "scheduler",
        "data",
    ] {
        assert!(groups.contains(&g), "{g} missing from {groups:?}");
        assert!(
            cat["fields"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["group"] == g),
            "no field in {g}"
        );
    }
    let text = cat.to_string();
    assert!(!text.contains("sk-judge-secret-0123456789"));
    assert!(!text.contains("upstream-key"), "the LLM key leaked");
    let judge_key = cat["fields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["key"] == "rl.prm_api_key")
        .unwrap();
    assert_eq!(judge_key["kind"], "secret");
    assert!(judge_key["masked"].as_str().unwrap().ends_with("6789"));
    h.stop().await;
}

#[tokio::test]
async fn an_invalid_value_names_its_key_with_the_cli_message_and_changes_nothing() {
    let h = Harness::start().await;
    let api = h.api();
    let before = std::fs::read_to_string(h.home().join("config.yaml")).unwrap_or_default();
    let (status, v) = api
        .call(
            Method::PATCH,
            "/api/config",
            Some(json!({"set": {"skills.top_k": "many"}})),
        )
        .await;
    assert_eq!(status, 400, "{v}");
    let err = &v["error"];
    assert_eq!(err["code"], "invalid_setting");
    assert_eq!(err["fields"][0]["key"], "skills.top_k");
    // The CLI's `config KEY VALUE` says the same.
    assert_eq!(
        err["fields"][0]["message"],
        "invalid value for `skills.top_k`: \"many\" (expected an integer >= 1)"
    );
    let after = std::fs::read_to_string(h.home().join("config.yaml")).unwrap_or_default();
    assert_eq!(before, after, "config.yaml unchanged");
    h.stop().await;
}

async fn injected(api: &ApiClient<'_>, query: &str) -> (usize, Value) {
    let (status, v) = api
        .call(
            Method::POST,
            "/api/retrieval",
            Some(json!({"query": query})),
        )
        .await;
    assert_eq!(status, 200, "{v}");
    let n = v["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["injected"] == true)
        .count();
    (n, v)
}

#[tokio::test]
async fn skills_and_scheduler_settings_apply_live() {
    let h = Harness::start_with(|c| {
        c.skills.auto_evolve = false;
        c.skills.min_score = 0.0;
        c.skills.relative_threshold = 0.0;
        c.skills.token_budget = 100_000;
        c.skills.top_k = 4;
    })
    .await;
    let api = h.api();
    let query = "my pytest suite fails randomly on CI but always passes locally, how do I fix it?";
    let (many, v) = injected(&api, query).await;
    assert!(many > 1, "the query should inject several skills: {v}");
    api.set("skills.top_k", json!(1)).await;
    let (one, v) = injected(&api, query).await;
    assert_eq!(one, 1, "top_k applies to the running retriever: {v}");

    api.set("scheduler.sleep_start", json!("21:15")).await;
    api.set("scheduler.sleep_end", json!("06:45")).await;
    let sched = api.get("/api/scheduler").await;
    let sleep = &sched["status"]["sources"]["sleep"];
    assert_eq!(sleep["sleep_start"], "21:15", "{sleep}");
    assert_eq!(sleep["sleep_end"], "06:45", "{sleep}");
    api.set("scheduler.enabled", json!(true)).await;
    assert_eq!(api.get("/api/scheduler").await["enabled"], true);

    // Every other group: a representative key, no restart asked for.
    api.set("skills.auto_approve", json!(true)).await;
    api.set("records.retention_days", json!(30)).await;
    api.set("rl.lora_rank", json!(8)).await;
    api.set("rl.prm_m", json!(3)).await;
    api.set("opd.kl_penalty_coef", json!(0.5)).await;
    assert_eq!(api.get("/api/data").await["retention_days"], 30);
    h.stop().await;
}

#[tokio::test]
async fn the_skill_library_switches_and_moves_without_a_restart() {
    let h = Harness::start_with(|c| {
        c.skills.auto_evolve = false;
        c.skills.min_score = 0.0;
        c.skills.relative_threshold = 0.0;
    })
    .await;
    let api = h.api();
    let query = "my pytest suite fails randomly on CI but always passes locally";
    let ask = || async {
        h.post("/v1/chat/completions")
            .json(&json!({"model": "m", "messages": [{"role": "user", "content": query}]}))
            .send()
            .await
            .unwrap();
        h.mock.requests().last().unwrap().body.to_string()
    };
    assert!(
        ask().await.contains("fix-flaky-tests"),
        "bundled skills inject"
    );

    // Off: nothing is injected and the skill operations say why; on again: back at once.
    api.set("skills.enabled", json!(false)).await;
    assert!(
        !ask().await.contains("fix-flaky-tests"),
        "injected while off"
    );
    let (status, v) = api.call(Method::GET, "/api/skills", None).await;
    assert_eq!(status, 503, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("skills are off"),
        "{v}"
    );
    assert_eq!(api.get("/api/status").await["counts"]["skills"], 0);
    api.set("skills.enabled", json!(true)).await;
    assert!(
        ask().await.contains("fix-flaky-tests"),
        "not injected once on again"
    );

    // Another folder, without the bundled bank: only its skills, and edits there reload.
    let folder = tempfile::tempdir().unwrap();
    let skill = folder.path().join("ci-retries/SKILL.md");
    std::fs::create_dir_all(skill.parent().unwrap()).unwrap();
    std::fs::write(
        &skill,
        "---\nname: ci-retries\ndescription: Use when a pytest suite fails randomly on CI\n---\nQuarantine, then fix.\n",
    )
    .unwrap();
    api.set("skills.dir", json!(folder.path().display().to_string()))
        .await;
    api.set("skills.include_bundled", json!(false)).await;
    let names = |v: Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(names(api.get("/api/skills").await), ["ci-retries"]);
    let body = ask().await;
    assert!(
        body.contains("ci-retries") && !body.contains("fix-flaky-tests"),
        "{body}"
    );
    std::fs::write(
        folder.path().join("ci-retries/SKILL.md"),
        "---\nname: ci-retries\ndescription: Use when a pytest suite fails randomly on CI\n---\nRerun twice, then quarantine.\n",
    )
    .unwrap();
    poll("the edit in the new folder", || async {
        let s = api.get("/api/skills/ci-retries").await;
        s.to_string().contains("Rerun twice").then_some(())
    })
    .await;
    h.stop().await;
}

async fn fake() -> FakeServer {
    FakeServer::start_with(Knobs {
        vocab_size: 362,
        ..Knobs::default()
    })
    .await
}

async fn rl_status(api: &ApiClient<'_>) -> Value {
    api.get("/api/rl").await
}

#[tokio::test]
async fn enable_rl_names_the_missing_fields_then_starts_and_restarts_on_a_change() {
    let fake = fake().await;
    let h = Harness::start_with(|c| {
        c.skills.enabled = false;
        c.llm.model_id.clear();
        c.rl.prm_model = "judge".into();
        c.rl.prm_m = 1;
    })
    .await;
    let api = h.api();

    let (status, v) = api
        .call(
            Method::PATCH,
            "/api/config",
            Some(json!({"rl_enabled": true})),
        )
        .await;
    assert_eq!(status, 409, "{v}");
    let err = &v["error"];
    assert_eq!(err["code"], "not_ready");
    let fields = err["fields"].as_array().unwrap();
    let keys: Vec<&str> = fields.iter().map(|f| f["key"].as_str().unwrap()).collect();
    assert!(keys.contains(&"rl.model"), "{keys:?}");
    assert!(keys.contains(&"rl.api_key"), "{keys:?}");
    assert!(
        !keys.contains(&"rl.tinker_api_key"),
        "legacy names stay hidden"
    );
    for f in fields {
        assert!(
            f["message"]
                .as_str()
                .unwrap()
                .starts_with("needed for RL: "),
            "{f}"
        );
    }
    assert_eq!(rl_status(&api).await["mode"], "skills_only");

    // Filled in, tested, then switched on: it starts without a restart.
    api.set("rl.model", json!("Qwen/Qwen3-4B-Instruct-2507"))
        .await;
    api.set("rl.base_url", json!(fake.url())).await;
    api.set("rl.tokenizer_path", json!(TOKENIZER)).await;
    let (status, probe) = api
        .call(Method::POST, "/api/config/test-tinker", None)
        .await;
    assert_eq!(status, 200);
    assert_eq!(probe["ok"], true, "{probe}");
    assert!(
        probe["detail"].as_str().unwrap().contains("session"),
        "{probe}"
    );
    api.set("rl.enabled", json!(true)).await;
    let first = poll("the policy to serve", || async {
        let s = rl_status(&api).await;
        assert_ne!(s["phase"], "failed", "{s}");
        (s["phase"] == "serving").then_some(s)
    })
    .await;
    assert_eq!(first["starts"], 1, "{first}");

    // A judge change while RL runs restarts the RL service in the background.
    api.set("rl.prm_m", json!(2)).await;
    let again = poll("the policy to restart", || async {
        let s = rl_status(&api).await;
        (s["phase"] == "serving" && s["starts"] == 2).then_some(s)
    })
    .await;
    assert_eq!(again["restarting"], false);
    // A Tinker change too.
    api.set("rl.lora_rank", json!(4)).await;
    poll("the policy to restart for the LoRA rank", || async {
        let s = rl_status(&api).await;
        (s["phase"] == "serving" && s["starts"] == 3).then_some(())
    })
    .await;
    h.stop().await;
    fake.shutdown().await;
}

#[tokio::test]
async fn test_tinker_explains_a_refused_port() {
    let port = free_port();
    let h = Harness::start_with(|c| c.rl.base_url = format!("http://127.0.0.1:{port}")).await;
    let api = h.api();
    let (status, probe) = api
        .call(Method::POST, "/api/config/test-tinker", None)
        .await;
    assert_eq!(status, 200);
    assert_eq!(probe["ok"], false, "{probe}");
    let detail = probe["detail"].as_str().unwrap();
    assert!(
        detail.starts_with(&format!("cannot reach http://127.0.0.1:{port}")),
        "{detail}"
    );
    h.stop().await;
}

#[tokio::test]
async fn test_judge_and_teacher_reach_their_endpoints() {
    let h = Harness::start_with(|c| {
        c.rl.prm_url = c.llm.api_base.clone();
        c.rl.prm_api_key = "judge-key".into();
    })
    .await;
    let api = h.api();
    let (_, judge) = api
        .call(
            Method::POST,
            "/api/config/test-connection",
            Some(json!({"target": "judge"})),
        )
        .await;
    assert_eq!(judge["ok"], true, "{judge}");
    let (_, teacher) = api
        .call(
            Method::POST,
            "/api/config/test-connection",
            Some(json!({"target": "teacher"})),
        )
        .await;
    assert_eq!(teacher["ok"], false);
    assert_eq!(teacher["detail"], "no endpoint configured");
    h.stop().await;
}

#[tokio::test]
async fn sessions_export_as_jsonl_and_delete() {
    let h = Harness::start_with(|c| c.skills.auto_evolve = false).await;
    let api = h.api();
    for s in ["keep-me", "drop-me"] {
        let r = h
            .post("/v1/chat/completions")
            .header("x-session-id", s)
            .json(&json!({"model": "m", "messages": [{"role": "user", "content": format!("hello from {s}")}]}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    }
    h.wait_turns(2).await;

    let data = api.get("/api/data").await;
    assert_eq!(data["sessions"], 2);
    assert!(data["database_bytes"].as_u64().unwrap() > 0);

    let export = api.get("/api/data/export").await;
    assert_eq!(export["sessions"], 2);
    let lines: Vec<Value> = export["jsonl"]
        .as_str()
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert!(
        lines
            .iter()
            .all(|l| l["turns"].as_array().unwrap().len() == 1)
    );
    let one = api.get("/api/data/export?session=keep-me").await;
    assert!(
        one["jsonl"]
            .as_str()
            .unwrap()
            .contains("hello from keep-me")
    );
    assert!(
        !one["jsonl"]
            .as_str()
            .unwrap()
            .contains("hello from drop-me")
    );

    let (status, v) = api
        .call(Method::DELETE, "/api/sessions/drop-me", None)
        .await;
    assert_eq!(status, 200, "{v}");
    let (status, _) = api.call(Method::GET, "/api/sessions/drop-me", None).await;
    assert_eq!(status, 404);
    let (status, _) = api
        .call(Method::DELETE, "/api/sessions/drop-me", None)
        .await;
    assert_eq!(status, 404, "deleting twice: not found");
    assert_eq!(api.get("/api/data").await["sessions"], 1);
    h.stop().await;
}

/// A hub (or mirror) on 127.0.0.1 that sends `body` in eight slow pieces with its length,
/// as a real download over a home connection arrives.
async fn slow_hub(path: &'static str, body: Vec<u8>) -> (String, tokio::task::JoinHandle<()>) {
    use axum::body::Body;
    let body = std::sync::Arc::new(body);
    let app = axum::Router::new().route(
        path,
        axum::routing::get(move || {
            let body = body.clone();
            async move {
                let len = body.len();
                let piece = len.div_ceil(8);
                let chunks = futures_util::stream::unfold(0usize, move |at| {
                    let body = body.clone();
                    async move {
                        if at >= len {
                            return None;
                        }
                        tokio::time::sleep(Duration::from_millis(40)).await;
                        let end = (at + piece).min(len);
                        let chunk = bytes::Bytes::copy_from_slice(&body[at..end]);
                        Some((Ok::<_, std::io::Error>(chunk), end))
                    }
                });
                axum::response::Response::builder()
                    .header("content-length", len)
                    .body(Body::from_stream(chunks))
                    .unwrap()
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    (url, task)
}

#[tokio::test]
async fn rl_start_up_shows_the_tokenizer_download_as_it_happens() {
    let fake = fake().await;
    // A real tokenizer is megabytes: the test one, padded (JSON allows trailing spaces).
    let mut tokenizer = std::fs::read(TOKENIZER).unwrap();
    tokenizer.resize(tokenizer.len() + 2_000_000, b' ');
    let total = tokenizer.len() as u64;
    let (hub, server) = slow_hub(
        "/Qwen/Qwen3-4B-Instruct-2507/resolve/main/tokenizer.json",
        tokenizer,
    )
    .await;
    let url = fake.url();
    let h = Harness::start_with(move |c| {
        c.skills.enabled = false;
        c.rl.model = "Qwen/Qwen3-4B-Instruct-2507".into();
        c.rl.base_url = url;
        c.rl.prm_model = "judge".into();
        c.rl.prm_m = 1;
    })
    .await;
    let api = h.api();
    let mut events = h.core().events();
    // The download site is a setting like any other (a mirror where the hub is out of reach).
    api.set("rl.tokenizer_hub_url", json!(hub)).await;
    api.set("rl.enabled", json!(true)).await;

    // While it downloads, the status says what and how far.
    let during = poll("the download to show", || async {
        let s = rl_status(&api).await;
        assert_ne!(s["phase"], "failed", "{s}");
        (!s["progress"].is_null()).then_some(s)
    })
    .await;
    assert_eq!(during["phase"], "starting", "{during}");
    let progress = &during["progress"];
    assert_eq!(
        progress["what"],
        "tokenizer.json of Qwen/Qwen3-4B-Instruct-2507"
    );
    assert_eq!(progress["total_bytes"], total);
    assert!(progress["done_bytes"].as_u64().unwrap() < total, "{during}");

    // The event bus tells each step, the download in tenths, until it serves.
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let event = tokio::time::timeout_at(deadline, events.recv())
            .await
            .expect("RL did not serve in time")
            .unwrap();
        if let metaclaw_domain::Event::RlPhase {
            phase,
            message,
            progress,
        } = event
        {
            assert_ne!(phase, "failed", "{message:?}");
            let serving = phase == "serving";
            seen.push((phase, message, progress));
            if serving {
                break;
            }
        }
    }
    let fractions: Vec<f64> = seen.iter().filter_map(|(_, _, p)| *p).collect();
    assert!(
        fractions.windows(2).all(|w| w[0] < w[1]),
        "progress only moves forward: {fractions:?}"
    );
    assert_eq!(fractions.last(), Some(&1.0), "{seen:?}");
    let steps: Vec<&str> = seen.iter().filter_map(|(_, m, _)| m.as_deref()).collect();
    for step in [
        "loading the tokenizer of",
        "opening a Tinker session",
        "creating the LoRA model",
    ] {
        assert!(steps.iter().any(|m| m.contains(step)), "{step}: {steps:?}");
    }
    let serving = rl_status(&api).await;
    assert!(serving["progress"].is_null(), "{serving}");
    // Downloaded once into the home: the next start-up reads the cache.
    assert!(
        h.home()
            .join("tokenizers/Qwen/Qwen3-4B-Instruct-2507/main/tokenizer.json")
            .is_file()
    );
    h.stop().await;
    fake.shutdown().await;
    server.abort();
}
