//! Task rollouts, evaluations and gated adapters through the whole product loop: rollout →
//! proxy → policy (the in-process fake Tinker server) → verifier → trainer → gate → hot swap.
//!
//! The toy task: every prompt ends with the same token, so the fake's bigram policy cannot
//! tell tasks apart; what it can learn is the distribution of its first answer token. The
//! verifier asks for an answer that starts with a vowel: about 9 % of the tiny tokenizer's
//! 362 tokens do, so the base policy fails almost always, and the first-token row of the
//! bigram table is exactly what group-relative importance sampling moves.

mod support;

use std::time::{Duration, Instant};

use metaclaw_config::Mode;
use serde_json::{Value, json};
use support::Harness;
use tinker_client::fake::{FakeServer, Knobs};

const TOKENIZER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/fixtures/rl/tiny-qwen3-tokenizer.json"
);

const VOWEL: &str = r"^\s*[AEIOUaeiou]";
const NOT_VOWEL: &str = r"^\s*[^AEIOUaeiou\s]";

fn write_split(dir: &std::path::Path, split: &str, n: usize, pattern: &str, extra: &str) {
    let mut text = String::new();
    for i in 0..n {
        text.push_str(
            &json!({"task_id": format!("{split}-{i}"),
                "instruction": format!("Answer task {i} of {split} with a word."),
                "pattern": pattern})
            .to_string(),
        );
        text.push('\n');
    }
    text.push_str(extra);
    std::fs::write(dir.join(format!("{split}.jsonl")), text).unwrap();
}

fn toy_tasks() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    // A malformed line in the training split: reported and skipped, the rest runs.
    write_split(dir.path(), "train", 4, VOWEL, "{\"task_id\": \"broken\"\n");
    write_split(dir.path(), "inverted", 4, NOT_VOWEL, "");
    write_split(dir.path(), "test", 20, VOWEL, "");
    write_split(dir.path(), "gate", 10, VOWEL, "");
    // A finer gate for the regression test: thirty tasks tell a real drop from noise.
    write_split(dir.path(), "gate30", 30, VOWEL, "");
    dir
}

async fn start(fake: &FakeServer, tasks: &std::path::Path, tolerance: f64) -> Harness {
    start_gated(fake, tasks, "gate", tolerance).await
}

async fn start_gated(
    fake: &FakeServer,
    tasks: &std::path::Path,
    gate: &'static str,
    tolerance: f64,
) -> Harness {
    let url = fake.url();
    let tasks = tasks.display().to_string();
    Harness::start_with(move |c| {
        c.mode = Mode::Rl;
        c.skills.enabled = false;
        c.rl.model = "Qwen/Qwen3-4B-Instruct-2507".into();
        c.rl.base_url = url;
        c.rl.tokenizer_path = TOKENIZER.into();
        c.rl.prm_api_key = String::new();
        c.rl.manual_train_trigger = true;
        c.rl.max_new_tokens = 4;
        c.rl.learning_rate = 1.0;
        c.rl.gate_split = gate.into();
        c.rl.gate_tolerance = tolerance;
        c.openclaw_env_data_dir = tasks;
    })
    .await
}

async fn api(
    h: &Harness,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let token = std::fs::read_to_string(h.home().join("dashboard.token")).unwrap();
    let mut req = reqwest::Client::new()
        .request(method, format!("http://{}{path}", h.core().addr()))
        .bearer_auth(token.trim());
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req.send().await.unwrap();
    (
        resp.status().as_u16(),
        resp.json().await.unwrap_or(Value::Null),
    )
}

async fn wait_serving(h: &Harness) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (_, s) = api(h, reqwest::Method::GET, "/api/rl", None).await;
        if s["phase"] == "serving" && s["sampler"].is_string() {
            return;
        }
        assert_ne!(s["phase"], "failed", "{s}");
        assert!(Instant::now() < deadline, "the policy did not start: {s}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Polls the job until it is no longer running.
async fn wait_job(h: &Harness) -> Value {
    let deadline = Instant::now() + Duration::from_secs(240);
    loop {
        let (_, s) = api(h, reqwest::Method::GET, "/api/rollouts", None).await;
        if s["running"] == false {
            assert!(s["error"].is_null(), "{s}");
            return s;
        }
        assert!(Instant::now() < deadline, "the job did not finish: {s}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn rate(point: &Value) -> f64 {
    point["success"]["rate"].as_f64().unwrap()
}

async fn rollout(h: &Harness, body: Value) -> Value {
    let (status, started) = api(h, reqwest::Method::POST, "/api/rollouts", Some(body)).await;
    assert_eq!(status, 200, "{started}");
    wait_job(h).await
}

async fn serving_step(h: &Harness) -> u64 {
    let (_, s) = api(h, reqwest::Method::GET, "/api/rl", None).await;
    s["sampler_step"].as_u64().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rollout_learns_the_toy_task_and_the_curve_rises() {
    let fake = FakeServer::start_with(Knobs {
        vocab_size: 362,
        ..Knobs::default()
    })
    .await;
    let tasks = toy_tasks();
    // Ten gate tasks are a coarse measure: a point of noise must not refuse progress.
    let h = start(&fake, tasks.path(), 0.1).await;
    wait_serving(&h).await;

    let started = Instant::now();
    let job = rollout(
        &h,
        json!({"split": "train", "group": 16, "steps": 8, "eval": "test", "concurrency": 4}),
    )
    .await;
    let elapsed = started.elapsed().as_secs_f64();
    let curve = job["curve"].as_array().unwrap();
    let line: Vec<String> = curve
        .iter()
        .map(|p| {
            format!(
                "step {} (v{}): {:.2} [{:.2}s] {}",
                p["round"],
                p["adapter_step"],
                rate(p),
                p["step_seconds"].as_f64().unwrap_or(0.0),
                p["gate"].as_str().unwrap_or("")
            )
        })
        .collect();
    eprintln!("learning curve ({elapsed:.1} s):\n{}", line.join("\n"));
    assert_eq!(job["problems"][0]["line"], 5, "{job}");
    assert!(rate(&curve[0]) <= 0.2, "starts low: {line:?}");
    assert!(rate(curve.last().unwrap()) >= 0.8, "ends high: {line:?}");
    assert_eq!(job["steps_done"], 8);

    // Every trained adapter is a version with its gate figure; one serves.
    let (_, versions) = api(&h, reqwest::Method::GET, "/api/adapters", None).await;
    let versions = versions.as_array().unwrap();
    assert_eq!(
        versions.iter().filter(|v| v["status"] == "serving").count(),
        1
    );
    let serving = versions.iter().find(|v| v["status"] == "serving").unwrap();
    assert_eq!(serving["step"].as_u64(), Some(serving_step(&h).await));
    assert!(
        serving["eval_success"].as_f64().unwrap() >= 0.5,
        "{serving}"
    );

    // Evaluation sessions were never sampled for training: every stored sample belongs to a
    // rollout session.
    let store = h.core().store();
    store.flush().unwrap();
    for state in metaclaw_store::SampleState::ALL {
        for s in store.samples_in_state(*state, 100_000).unwrap() {
            assert!(s.session_id.starts_with("rollout-"), "{}", s.session_id);
            assert!(!store.is_eval_session(&s.session_id).unwrap());
        }
    }

    // Arms compared in one run: the base model against the trained adapter.
    let (status, _) = api(
        &h,
        reqwest::Method::POST,
        "/api/evals",
        Some(json!({"split": "test", "arms": ["base", "current"]})),
    )
    .await;
    assert_eq!(status, 200);
    let job = wait_job(&h).await;
    let arms = job["report"]["arms"].as_array().unwrap();
    assert_eq!(arms[0]["arm"], "base");
    assert!(rate(&arms[0]) <= 0.2, "{}", arms[0]["success"]);
    assert!(rate(&arms[1]) >= 0.8, "{}", arms[1]["success"]);
    assert_eq!(arms[1]["outcomes"].as_array().unwrap().len(), 20);
    let low = arms[1]["success"]["low"].as_f64().unwrap();
    assert!(low > 0.5 && low < rate(&arms[1]), "{}", arms[1]["success"]);
    let (_, runs) = api(&h, reqwest::Method::GET, "/api/evals", None).await;
    assert!(
        runs.as_array()
            .unwrap()
            .iter()
            .any(|r| r["arm"] == "base" && r["trials"] == 20)
    );
    h.stop().await;
    fake.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_regressing_adapter_is_refused_and_rollback_restores_the_previous() {
    regressing_adapter_is_refused(false).await;
}

/// The same on a server that samples every sampler of a model with its latest saved
/// weights (SkyRL): the refused weights must not answer through the kept version's sampler.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_adapter_never_answers_when_samplers_follow_the_latest_weights() {
    regressing_adapter_is_refused(true).await;
}

async fn regressing_adapter_is_refused(samplers_follow_latest: bool) {
    let fake = FakeServer::start_with(Knobs {
        vocab_size: 362,
        samplers_follow_latest,
        ..Knobs::default()
    })
    .await;
    let tasks = toy_tasks();
    // While learning, a point of noise on the gate split must not refuse progress.
    let h = start_gated(&fake, tasks.path(), "gate30", 0.15).await;
    wait_serving(&h).await;

    // Learn first, so the gate has something to lose.
    // Partway (two steps: some answers right, most wrong), so the inverted reward has both to
    // learn from; after four the policy can be all vowels, and then it has nothing.
    let job = rollout(&h, json!({"split": "train", "group": 16, "steps": 2})).await;
    assert_eq!(job["steps_done"], 2, "{job}");
    let good = serving_step(&h).await;
    assert!(good > 0);

    // From now on any drop refuses: changed live, through the one settings path.
    let (status, body) = api(
        &h,
        reqwest::Method::PATCH,
        "/api/config",
        Some(json!({"set": {"rl.gate_tolerance": 0.0}})),
    )
    .await;
    assert_eq!(status, 200, "{body}");

    // Trained on the inverted reward. Adam's momentum from learning carries the first
    // step(s) on, so such a candidate may still do better and serve; once the inverted
    // reward wins, candidates regress, the gate refuses them and the adapter before keeps
    // serving.
    let job = rollout(&h, json!({"split": "inverted", "group": 16, "steps": 2})).await;
    let curve = job["curve"].as_array().unwrap();
    let mut serving = good;
    let mut refusals = 0;
    for point in curve {
        let gate = point["gate"].as_str().unwrap_or_default();
        if gate.starts_with("refused") {
            refusals += 1;
            assert_eq!(
                point["adapter_step"].as_u64(),
                Some(serving),
                "the previous adapter keeps serving: {gate}"
            );
        } else if gate.starts_with("serving") {
            serving = point["adapter_step"].as_u64().unwrap();
        }
    }
    assert!(
        refusals > 0,
        "no regressing candidate was refused: {curve:?}"
    );
    assert_eq!(serving_step(&h).await, serving);

    // What answers now is the serving version itself: on the gate split (same seeds) it
    // scores exactly the figure the gate recorded for it, not a refused candidate's.
    let (_, versions) = api(&h, reqwest::Method::GET, "/api/adapters", None).await;
    let recorded = versions
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["status"] == "serving")
        .and_then(|v| v["eval_success"].as_f64())
        .unwrap();
    let (status, body) = api(
        &h,
        reqwest::Method::POST,
        "/api/evals",
        Some(json!({"split": "gate30", "arms": ["current"]})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let job = wait_job(&h).await;
    assert_eq!(
        rate(&job["report"]["arms"][0]),
        recorded,
        "{}",
        job["report"]["arms"][0]["success"]
    );
    let (_, versions) = api(&h, reqwest::Method::GET, "/api/adapters", None).await;
    let refused = versions
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["status"] == "refused" && v["step"].as_u64().unwrap() > good)
        .unwrap()
        .clone();
    assert!(
        refused["reason"]
            .as_str()
            .unwrap()
            .contains("keeps serving"),
        "{refused}"
    );

    // The refused version cannot be served; an earlier good one can.
    let path = format!("/api/adapters/{}/rollback", refused["step"]);
    let (status, body) = api(&h, reqwest::Method::POST, &path, None).await;
    assert_eq!(status, 409, "{body}");
    let earlier = versions
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["status"] == "kept" && v["step"].as_u64().unwrap() < good)
        .map(|v| v["step"].as_u64().unwrap())
        .max()
        .unwrap();
    let (status, body) = api(
        &h,
        reqwest::Method::POST,
        &format!("/api/adapters/{earlier}/rollback"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "serving");
    assert_eq!(serving_step(&h).await, earlier);
    let (_, versions) = api(&h, reqwest::Method::GET, "/api/adapters", None).await;
    let serving: Vec<u64> = versions
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["status"] == "serving")
        .map(|v| v["step"].as_u64().unwrap())
        .collect();
    assert_eq!(serving, [earlier]);
    h.stop().await;
    fake.shutdown().await;
}
