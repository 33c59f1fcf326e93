//! The Settings page's API: the catalogue, field-level validation errors, every group applied
//! live through PATCH /api/config (no restart), Enable RL's missing fields, Test Tinker against
//! the fake server and a refused port, and the data operations (export, delete a session).

mod support;

use std::time::Duration;

use metaclaw_tests::wait::free_port;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use support::Harness;
use tinker_client::fake::{FakeServer, Knobs};

const TOKENIZER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/fixtures/rl/tiny-qwen3-tokenizer.json"
);

struct Api<'a> {
    h: &'a Harness,
    token: String,
}

impl<'a> Api<'a> {
    fn new(h: &'a Harness) -> Self {
        let token = std::fs::read_to_string(h.home().join("dashboard.token")).unwrap();
        Api {
            h,
            token: token.trim().to_owned(),
        }
    }

    async fn send(&self, method: Method, path: &str, body: Option<Value>) -> (StatusCode, Value) {
        let mut req = self
            .h
            .client
            .request(method, format!("{}{path}", self.h.base))
            .bearer_auth(&self.token);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let r = req.send().await.unwrap();
        let status = r.status();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    async fn get(&self, path: &str) -> Value {
        let (status, v) = self.send(Method::GET, path, None).await;
        assert_eq!(status, 200, "GET {path}: {v}");
        v
    }

    /// PATCH one key; the answer must not ask for a restart.
    async fn set(&self, key: &str, value: Value) -> Value {
        let (status, v) = self
            .send(
                Method::PATCH,
                "/api/config",
                Some(json!({"set": {key: value}})),
            )
            .await;
        assert_eq!(status, 200, "set {key}: {v}");
        assert_eq!(v["restart_required"], false, "{key}: {v}");
        v
    }
}

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
    let api = Api::new(&h);
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
    let api = Api::new(&h);
    let before = std::fs::read_to_string(h.home().join("config.yaml")).unwrap_or_default();
    let (status, v) = api
        .send(
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

async fn injected(api: &Api<'_>, query: &str) -> (usize, Value) {
    let (status, v) = api
        .send(
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
    let api = Api::new(&h);
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

async fn fake() -> FakeServer {
    FakeServer::start_with(Knobs {
        vocab_size: 362,
        ..Knobs::default()
    })
    .await
}

async fn rl_status(api: &Api<'_>) -> Value {
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
    let api = Api::new(&h);

    let (status, v) = api
        .send(
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
        .send(Method::POST, "/api/config/test-tinker", None)
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
    let api = Api::new(&h);
    let (status, probe) = api
        .send(Method::POST, "/api/config/test-tinker", None)
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
    let api = Api::new(&h);
    let (_, judge) = api
        .send(
            Method::POST,
            "/api/config/test-connection",
            Some(json!({"target": "judge"})),
        )
        .await;
    assert_eq!(judge["ok"], true, "{judge}");
    let (_, teacher) = api
        .send(
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
    let api = Api::new(&h);
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
        .send(Method::DELETE, "/api/sessions/drop-me", None)
        .await;
    assert_eq!(status, 200, "{v}");
    let (status, _) = api.send(Method::GET, "/api/sessions/drop-me", None).await;
    assert_eq!(status, 404);
    let (status, _) = api
        .send(Method::DELETE, "/api/sessions/drop-me", None)
        .await;
    assert_eq!(status, 404, "deleting twice: not found");
    assert_eq!(api.get("/api/data").await["sessions"], 1);
    h.stop().await;
}
