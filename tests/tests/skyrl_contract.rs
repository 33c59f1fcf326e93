//! Contract test against a real Tinker-compatible server (SkyRL on CPU with a tiny model).
//! Opt-in: `scripts/rl-contract.sh` starts the server and runs these with `--ignored`
//! (they need `METACLAW_SKYRL_URL` and `METACLAW_SKYRL_MODEL`).

mod support;

use std::collections::BTreeMap;
use std::time::Duration;

use metaclaw_config::Mode;
use metaclaw_store::{CheckpointKind, SampleState, TrainingStatus};
use metaclaw_tests::mock_upstream::Behaviour;
use serde_json::{Value, json};
use support::Harness;
use tinker_client::{
    AdamParams, ClientConfig, Datum, LoraConfig, LossFn, SamplerSource, ServiceClient, TensorData,
};

fn server() -> (String, String) {
    let url = std::env::var("METACLAW_SKYRL_URL")
        .expect("METACLAW_SKYRL_URL (run scripts/rl-contract.sh)");
    let model = std::env::var("METACLAW_SKYRL_MODEL").expect("METACLAW_SKYRL_MODEL");
    (url, model)
}

fn judge(contains: &str, score: i8) -> Behaviour {
    Behaviour::Match {
        contains: Some(contains.into()),
        path: None,
        then: Box::new(Behaviour::reply(format!("Score: {score}"))),
    }
}

async fn api(h: &Harness, method: reqwest::Method, path: &str) -> Value {
    let token = std::fs::read_to_string(h.home().join("dashboard.token")).unwrap();
    reqwest::Client::builder()
        .timeout(Duration::from_secs(900))
        .build()
        .unwrap()
        .request(method, format!("http://{}{path}", h.core().addr()))
        .bearer_auth(token.trim())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

async fn chat(h: &Harness, session: &str, text: &str, done: bool) {
    let mut req = reqwest::Client::builder()
        .timeout(Duration::from_secs(600))
        .build()
        .unwrap()
        .post(format!("http://{}/v1/chat/completions", h.core().addr()))
        .bearer_auth(support::PROXY_KEY)
        .header("x-session-id", session)
        .json(&json!({"model": "tiny", "max_tokens": 8,
            "messages": [{"role": "user", "content": text}]}));
    if done {
        req = req.header("x-session-done", "true");
    }
    let resp = req.send().await.unwrap();
    let status = resp.status();
    let body: Value = resp.json().await.unwrap();
    assert_eq!(status, 200, "{body}");
}

/// Sum of the sampler's logprobs over a sample's response tokens.
async fn response_logprob(
    sampler: &tinker_client::SamplingClient,
    prompt: &[u32],
    response: &[u32],
) -> f64 {
    let all: Vec<u32> = prompt.iter().chain(response).copied().collect();
    let lps = sampler.compute_logprobs(&all).await.unwrap();
    lps[prompt.len()..]
        .iter()
        .map(|l| f64::from(l.expect("a logprob for every response token")))
        .sum()
}

#[tokio::test]
#[ignore = "needs a SkyRL server: scripts/rl-contract.sh"]
async fn daemon_trains_on_served_turns_and_hot_swaps_against_skyrl() {
    let (url, model) = server();
    let tokenizer = format!("{model}/tokenizer.json");
    let h = Harness::start_with(|c| {
        c.mode = Mode::Rl;
        c.skills.enabled = false;
        c.rl.model = model.clone();
        c.rl.base_url = url.clone();
        c.rl.tokenizer_path = tokenizer;
        c.rl.renderer_name = "qwen3_instruct".into();
        c.rl.lora_rank = 4;
        c.rl.batch_size = 2;
        c.rl.learning_rate = 1e-2;
        c.rl.max_new_tokens = 8;
        c.rl.manual_train_trigger = true;
        c.rl.prm_m = 1;
        c.rl.prm_model = "judge".into();
        c.rl.prm_api_key = "k".into();
        c.rl.prm_url = c.llm.api_base.clone();
        c.llm.timeout_seconds = 600;
    })
    .await;
    let started = std::time::Instant::now();
    loop {
        let rl = api(&h, reqwest::Method::GET, "/api/rl").await;
        if rl["phase"] == "serving" {
            break;
        }
        assert_ne!(rl["phase"], "failed", "{rl}");
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "policy did not start: {rl}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    println!(
        "policy serving after {:.1} s",
        started.elapsed().as_secs_f64()
    );
    h.mock.push_all([judge("good", 1), judge("bad", -1)]);
    let t = std::time::Instant::now();
    chat(&h, "c1", "good: hello there", false).await;
    println!("first served turn {:.1} s", t.elapsed().as_secs_f64());
    chat(&h, "c1", "bad: hello again", true).await;

    let store = h.core().store();
    let samples = loop {
        store.flush().unwrap();
        let ready = store.samples_in_state(SampleState::Ready, 10).unwrap();
        if ready.len() == 2 {
            break ready;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let good = samples
        .iter()
        .find(|s| s.reward == Some(1.0))
        .unwrap()
        .clone();

    let t = std::time::Instant::now();
    let outcome = api(&h, reqwest::Method::POST, "/api/training/step").await;
    println!(
        "training step {:.1} s: {outcome}",
        t.elapsed().as_secs_f64()
    );
    assert_eq!(outcome["status"], "trained", "{outcome}");
    let step = store.training_steps(1).unwrap().pop().unwrap();
    assert_eq!(step.status, TrainingStatus::Ok);
    assert_eq!(step.samples, Some(2));
    assert!(step.loss.is_some(), "loss recorded");
    println!("step metrics: {step:?}");

    // The learner moved towards the rewarded response: the new sampler's logprobs of those
    // tokens exceed what the old sampler gave them.
    let path = store
        .checkpoints()
        .unwrap()
        .into_iter()
        .find(|c| c.kind == CheckpointKind::Sampler)
        .unwrap()
        .path;
    let client = ServiceClient::connect(ClientConfig::new(url.clone(), "tml-contract"))
        .await
        .unwrap();
    let sampler = client
        .create_sampling_session(SamplerSource::ModelPath(path.clone()))
        .await
        .unwrap();
    let before: f64 = good.response_logprobs.iter().map(|l| f64::from(*l)).sum();
    let after = response_logprob(&sampler, &good.prompt_tokens, &good.response_tokens).await;
    println!("rewarded response logprob: before {before:.4}, after {after:.4}");
    assert!(after > before, "before {before}, after {after}");

    // The hot-swapped sampler serves the next turn.
    chat(&h, "c2", "next turn", false).await;
    let next = loop {
        store.flush().unwrap();
        if let Some(s) = store
            .samples_in_state(SampleState::Pending, 10)
            .unwrap()
            .pop()
        {
            break s;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(next.sampler, path);
    client.close().await;
    h.stop().await;
}

#[tokio::test]
#[ignore = "needs a SkyRL server: scripts/rl-contract.sh"]
async fn save_state_then_load_state_reproduces_logprobs_on_skyrl() {
    let (url, model) = server();
    let client = ServiceClient::connect(ClientConfig::new(url, "tml-contract"))
        .await
        .unwrap();
    let training = client
        .create_lora_model(&model, LoraConfig::rank(4))
        .await
        .unwrap();
    let tokens: Vec<u32> = vec![5, 17, 42, 99, 7, 63, 120, 33, 2];
    let datum = |w: f32| {
        Datum::new(tokens[..tokens.len() - 1].to_vec())
            .with(
                "target_tokens",
                TensorData::i64(tokens[1..].iter().map(|&t| i64::from(t)).collect()),
            )
            .with("weights", TensorData::f32(vec![w; tokens.len() - 1]))
    };
    let logprobs = |out: &tinker_client::ForwardBackwardOutput| out.logprobs(0).unwrap().to_vec();
    let train = |lr: f64| {
        let training = training.clone();
        let d = datum(1.0);
        async move {
            let f = training
                .forward_backward(vec![d], LossFn::CrossEntropy, BTreeMap::new())
                .await
                .unwrap();
            let o = training.optim_step(AdamParams::lr(lr)).await.unwrap();
            f.result().await.unwrap();
            o.result().await.unwrap();
        }
    };
    train(1e-2).await;
    let saved = training
        .forward(vec![datum(0.0)])
        .await
        .unwrap()
        .result()
        .await
        .unwrap();
    let path = training
        .save_state("contract")
        .await
        .unwrap()
        .result()
        .await
        .unwrap();
    println!("saved state at {path}");
    train(5e-2).await;
    let moved = training
        .forward(vec![datum(0.0)])
        .await
        .unwrap()
        .result()
        .await
        .unwrap();
    assert_ne!(
        logprobs(&saved),
        logprobs(&moved),
        "training changed the model"
    );
    training
        .load_state(&path, true)
        .await
        .unwrap()
        .result()
        .await
        .unwrap();
    let restored = training
        .forward(vec![datum(0.0)])
        .await
        .unwrap()
        .result()
        .await
        .unwrap();
    for (a, b) in logprobs(&saved).iter().zip(logprobs(&restored)) {
        assert!((a - b).abs() < 1e-4, "saved {a}, restored {b}");
    }
    client.close().await;
}

/// Reads a number from the environment, or the default when it is unset.
fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a number")),
        Err(_) => default,
    }
}

/// A task folder for the learning curve: an answer passes when it starts with a letter from
/// n to z. The tiny random model's first answer token is one of those about one time in
/// eight (measured at the rollouts' temperature), so the base policy mostly fails, and what
/// RL can move is the first answer token's distribution, as in the server's reference curve
/// through the official SDK (a fixed set of first tokens, base rate ~0.17).
fn late_letter_tasks(train: usize, test: usize, gate: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (split, n) in [("train", train), ("test", test), ("gate", gate)] {
        let lines: String = (0..n)
            .map(|i| {
                json!({"task_id": format!("{split}-{i}"),
                    "instruction": format!("Answer task {i} of {split} with a word."),
                    "pattern": r"^\s*[N-Zn-z]"})
                .to_string()
                    + "\n"
            })
            .collect();
        std::fs::write(dir.path().join(format!("{split}.jsonl")), lines).unwrap();
    }
    dir
}

/// The product loop against SkyRL: rollout → proxy → policy → verifier → trainer → gate →
/// hot swap, with the evaluation after every step. Needs the server started with
/// `SKYRL_LM_HEAD_SCALE=8` (the stock tiny model cannot learn; see tools/skyrl/README.md).
/// `METACLAW_SKYRL_CURVE_STEPS` (default 6) and `METACLAW_SKYRL_CURVE_LR` (default 1e-3)
/// set the run; `scripts/rl-curve.sh` runs a longer one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a SkyRL server with SKYRL_LM_HEAD_SCALE=8: scripts/rl-contract.sh"]
async fn a_rollout_against_skyrl_learns_and_the_curve_rises() {
    let (url, model) = server();
    let steps: u32 = env_or("METACLAW_SKYRL_CURVE_STEPS", 6);
    let lr: f64 = env_or("METACLAW_SKYRL_CURVE_LR", 1e-3);
    let tasks = late_letter_tasks(1, 32, 8);
    let tasks_dir = tasks.path().display().to_string();
    let h = Harness::start_with(|c| {
        c.mode = Mode::Rl;
        c.skills.enabled = false;
        c.rl.model = model.clone();
        c.rl.base_url = url.clone();
        c.rl.tokenizer_path = format!("{model}/tokenizer.json");
        c.rl.renderer_name = "qwen3_instruct".into();
        c.rl.lora_rank = 8;
        c.rl.learning_rate = lr;
        c.rl.max_new_tokens = 6;
        c.rl.manual_train_trigger = true;
        c.rl.prm_api_key = String::new();
        // A periodic checkpoint on a promoted step: the gate's snapshot must reuse it (the
        // server refuses a second state of the same name).
        c.rl.checkpoint_every = 2;
        // A coarse gate (8 tasks): it must refuse a collapse, not a point of noise.
        c.rl.gate_split = "gate".into();
        c.rl.gate_tolerance = 0.25;
        c.openclaw_env_data_dir = tasks_dir;
        c.llm.timeout_seconds = 600;
    })
    .await;
    let started = std::time::Instant::now();
    loop {
        let rl = api(&h, reqwest::Method::GET, "/api/rl").await;
        if rl["phase"] == "serving" && rl["sampler"].is_string() {
            break;
        }
        assert_ne!(rl["phase"], "failed", "{rl}");
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "policy did not start: {rl}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    println!(
        "policy serving after {:.1} s",
        started.elapsed().as_secs_f64()
    );

    let token = std::fs::read_to_string(h.home().join("dashboard.token")).unwrap();
    let client = reqwest::Client::new();
    let resp = client
        .post(format!("http://{}/api/rollouts", h.core().addr()))
        .bearer_auth(token.trim())
        .json(
            &json!({"split": "train", "group": 16, "steps": steps, "eval": "test",
            "concurrency": 4, "max_steps": 1}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200, "{}", resp.text().await.unwrap());
    let run = std::time::Instant::now();
    let mut printed = 0;
    let job = loop {
        let job = api(&h, reqwest::Method::GET, "/api/rollouts").await;
        let curve = job["curve"].as_array().cloned().unwrap_or_default();
        for p in &curve[printed..] {
            println!(
                "step {:>2} (adapter v{}): eval success {:.3} ({}/{})  train reward {}  \
                 step {} s  gate: {}",
                p["round"],
                p["adapter_step"],
                p["success"]["rate"].as_f64().unwrap(),
                p["success"]["successes"],
                p["success"]["trials"],
                p["train_reward"]
                    .as_f64()
                    .map_or("-".into(), |r| format!("{r:.3}")),
                p["step_seconds"]
                    .as_f64()
                    .map_or("-".into(), |s| format!("{s:.2}")),
                p["gate"].as_str().unwrap_or("-"),
            );
        }
        printed = curve.len();
        if job["running"] == false {
            break job;
        }
        assert!(
            run.elapsed() < Duration::from_secs(1800),
            "the rollout did not finish: {job}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(job["error"].is_null(), "{job}");
    let curve: Vec<Value> = job["curve"].as_array().unwrap().clone();
    let rates: Vec<f64> = curve
        .iter()
        .map(|p| p["success"]["rate"].as_f64().unwrap())
        .collect();
    // Seconds of the rounds that took a training step (not those whose groups all agreed),
    // without the first: it compiles JAX kernels.
    let seconds: Vec<f64> = curve
        .iter()
        .filter(|p| {
            !p["gate"]
                .as_str()
                .unwrap_or("no step")
                .starts_with("no step")
        })
        .filter_map(|p| p["step_seconds"].as_f64())
        .collect();
    let warm = &seconds[1.min(seconds.len())..];
    let per_step = warm.iter().sum::<f64>() / warm.len().max(1) as f64;
    println!(
        "{}",
        json!({"curve": rates, "step_seconds": seconds, "warm_seconds_per_step": per_step,
            "loop_seconds": run.elapsed().as_secs_f64(), "steps": steps, "lr": lr})
    );
    let done = job["steps_done"].as_u64().unwrap();
    assert!(done >= 1, "{job}");
    assert!(rates[0] <= 0.35, "starts low: {rates:?}");
    // The first training step after which the evaluation passes half the tasks.
    let reached = curve
        .iter()
        .find(|p| p["success"]["rate"].as_f64().unwrap() >= 0.5)
        .map(|p| p["round"].as_u64().unwrap());
    assert!(
        reached.is_some_and(|s| s <= u64::from(steps)),
        "success never reached 0.5 in {steps} steps: {rates:?}"
    );
    assert!(
        *rates.last().unwrap() >= 0.5,
        "the curve fell back: {rates:?}"
    );
    // The adapter that serves is the one the last promoted step made, with its gate figure.
    let versions = api(&h, reqwest::Method::GET, "/api/adapters").await;
    let serving: Vec<&Value> = versions
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["status"] == "serving")
        .collect();
    assert_eq!(serving.len(), 1, "{versions}");
    let rl = api(&h, reqwest::Method::GET, "/api/rl").await;
    assert_eq!(serving[0]["step"], rl["sampler_step"], "{rl}");
    assert!(serving[0]["eval_success"].is_number(), "{}", serving[0]);
    h.stop().await;
}
