//! RL mode end to end through the daemon, with the in-process fake Tinker server as the
//! trainer/sampler and the mock upstream as the PRM judge: serving from the policy (OpenAI,
//! Anthropic, streaming), exact sample recording, judging on the next turn and at session
//! end, a training step with hot swap, support/query separation, and readiness messages.

mod support;

use metaclaw_tests::wait::wait_for;

use std::time::Duration;

use metaclaw_config::Mode;
use metaclaw_store::{CheckpointKind, SampleState, TrainingStatus};
use metaclaw_tests::mock_upstream::Behaviour;
use serde_json::{Value, json};
use support::{Harness, PROXY_KEY};
use tinker_client::fake::{FakeServer, Knobs};

const TOKENIZER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/fixtures/rl/tiny-qwen3-tokenizer.json"
);

async fn fake() -> FakeServer {
    FakeServer::start_with(Knobs {
        vocab_size: 362,
        ..Knobs::default()
    })
    .await
}

async fn start(fake: &FakeServer, edit: impl FnOnce(&mut metaclaw_config::Config)) -> Harness {
    let url = fake.url();
    Harness::start_with(move |c| {
        c.mode = Mode::Rl;
        c.skills.enabled = false;
        c.rl.model = "Qwen/Qwen3-4B-Instruct-2507".into();
        c.rl.base_url = url;
        c.rl.tokenizer_path = TOKENIZER.into();
        c.rl.batch_size = 2;
        c.rl.max_new_tokens = 12;
        c.rl.prm_m = 1;
        c.rl.prm_model = "judge".into();
        c.rl.prm_api_key = "judge-key".into();
        c.rl.prm_url = c.llm.api_base.clone();
        edit(c);
    })
    .await
}

fn judge(contains: &str, score: i8) -> Behaviour {
    Behaviour::Match {
        contains: Some(contains.into()),
        path: None,
        then: Box::new(Behaviour::reply(format!("Reasoning.\nScore: {score}"))),
    }
}

async fn api(h: &Harness, method: reqwest::Method, path: &str) -> (u16, Value) {
    let token = std::fs::read_to_string(h.home().join("dashboard.token")).unwrap();
    let resp = reqwest::Client::new()
        .request(method, format!("http://{}{path}", h.core().addr()))
        .bearer_auth(token.trim())
        .send()
        .await
        .unwrap();
    (
        resp.status().as_u16(),
        resp.json().await.unwrap_or(Value::Null),
    )
}

async fn wait_serving(h: &Harness) {
    for _ in 0..400 {
        let (_, s) = api(h, reqwest::Method::GET, "/api/rl").await;
        if s["phase"] == "serving" && s["sampler"].is_string() {
            return;
        }
        assert_ne!(s["phase"], "failed", "{s}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the policy did not start");
}

fn user(text: &str) -> Value {
    json!({"role": "user", "content": text})
}

async fn chat(h: &Harness, session: &str, messages: Value, done: bool) -> Value {
    let mut req = h
        .post("/v1/chat/completions")
        .header("x-session-id", session)
        .json(&json!({"model": "policy", "messages": messages}));
    if done {
        req = req.header("x-session-done", "true");
    }
    let resp = req.send().await.unwrap();
    assert_eq!(resp.status(), 200);
    resp.json().await.unwrap()
}

#[tokio::test]
async fn served_turns_are_judged_trained_on_and_the_new_sampler_serves() {
    let fake = fake().await;
    let h = start(&fake, |c| c.rl.manual_train_trigger = true).await;
    wait_serving(&h).await;
    h.mock.push_all([judge("alpha", 1), judge("beta", -1)]);

    let first = chat(&h, "s1", json!([user("alpha: say hi")]), false).await;
    assert_eq!(first["object"], "chat.completion");
    assert_eq!(first["choices"][0]["message"]["role"], "assistant");
    let completion_tokens = first["usage"]["completion_tokens"].as_u64().unwrap();
    assert!(completion_tokens > 0);
    let answer = first["choices"][0]["message"]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    chat(
        &h,
        "s1",
        json!([user("alpha: say hi"), {"role": "assistant", "content": answer}, user("beta: and bye")]),
        true,
    )
    .await;
    // Nothing reached the upstream LLM except the judge.
    assert!(h.mock.requests().iter().all(|r| r.body["model"] == "judge"));

    let store = h.core().store();
    h.wait_turns(2).await;
    let turns = h.all_turns();
    assert_eq!(turns.len(), 2);
    let samples = wait_for("two ready samples", || {
        store.flush().unwrap();
        let ready = store.samples_in_state(SampleState::Ready, 10).unwrap();
        (ready.len() == 2).then_some(ready)
    })
    .await;
    // The exact sampled tokens and the sampler's logprobs, one per token.
    let s1 = samples.iter().find(|s| s.turn_id == turns[0].id).unwrap();
    assert_eq!(s1.response_tokens.len() as u64, completion_tokens);
    assert_eq!(s1.response_logprobs.len(), s1.response_tokens.len());
    assert!(s1.response_logprobs.iter().all(|l| *l <= 0.0));
    assert_eq!(s1.reward, Some(1.0));
    let s2 = samples.iter().find(|s| s.turn_id == turns[1].id).unwrap();
    assert_eq!(s2.reward, Some(-1.0));
    assert_eq!(store.prm_votes(&turns[0].id).unwrap()[0].score, 1);
    assert!(s1.sampler.starts_with("sampling") || s1.sampler.starts_with("tinker://"));

    // Learner logprobs of the positively rewarded tokens, before and after the step.
    let model = fake.model_ids().pop().unwrap();
    let logprob_sum = |s: &metaclaw_store::SampleRow| -> f32 {
        let all: Vec<u32> = s
            .prompt_tokens
            .iter()
            .chain(&s.response_tokens)
            .copied()
            .collect();
        let p = s.prompt_tokens.len();
        (p..all.len())
            .map(|i| fake.model_logprob(&model, all[i - 1], all[i]).unwrap())
            .sum()
    };
    let (good_before, bad_before) = (logprob_sum(s1), logprob_sum(s2));

    let (status, outcome) = api(&h, reqwest::Method::POST, "/api/training/step").await;
    assert_eq!(status, 200, "{outcome}");
    assert_eq!(outcome["status"], "trained", "{outcome}");
    assert_eq!(outcome["step"], 1);
    assert_eq!(outcome["samples"], 2);
    assert!(
        logprob_sum(s1) > good_before,
        "rewarded tokens became more likely"
    );
    assert!(
        logprob_sum(s2) < bad_before,
        "penalised tokens became less likely"
    );

    let step = store.training_steps(10).unwrap().pop().unwrap();
    assert_eq!(step.status, TrainingStatus::Ok);
    assert_eq!(step.samples, Some(2));
    assert_eq!(step.mean_reward, Some(0.0));
    assert_eq!(step.success_rate, Some(0.5));
    assert!(step.loss.is_some() && step.tokens.unwrap() > 0);
    assert!(
        store
            .samples_in_state(SampleState::Trained, 10)
            .unwrap()
            .len()
            == 2
    );
    let sampler_ckpt = store
        .checkpoints()
        .unwrap()
        .into_iter()
        .find(|c| c.kind == CheckpointKind::Sampler)
        .unwrap();

    // The swapped-in sampler serves the next turn.
    chat(&h, "s2", json!([user("gamma")]), false).await;
    let next = wait_for("a sample of the next turn", || {
        store.flush().unwrap();
        store
            .samples_in_state(SampleState::Pending, 10)
            .unwrap()
            .pop()
    })
    .await;
    assert_eq!(next.sampler, sampler_ckpt.path);
    let (_, rl) = api(&h, reqwest::Method::GET, "/api/rl").await;
    assert_eq!(rl["sampler_step"], 1);

    // Nothing else to train on: a manual step says so.
    let (_, outcome) = api(&h, reqwest::Method::POST, "/api/training/step").await;
    assert_eq!(outcome["status"], "skipped", "{outcome}");
    h.stop().await;
    fake.shutdown().await;
}

#[tokio::test]
async fn the_policy_answers_anthropic_and_streaming_clients() {
    let fake = fake().await;
    let h = start(&fake, |c| c.rl.manual_train_trigger = true).await;
    wait_serving(&h).await;

    let resp = h
        .post("/v1/chat/completions")
        .json(&json!({"model": "policy", "stream": true,
            "stream_options": {"include_usage": true}, "messages": [user("stream please")]}))
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
    let text = resp.text().await.unwrap();
    assert!(text.starts_with("data: {"), "{text}");
    assert!(text.trim_end().ends_with("data: [DONE]"));
    assert!(
        text.contains("\"finish_reason\":\"length\"")
            || text.contains("\"finish_reason\":\"stop\"")
    );
    assert!(text.contains("\"usage\""));

    let resp = h
        .post("/v1/messages")
        .header("x-api-key", PROXY_KEY)
        .header("anthropic-version", "2023-06-01")
        .json(&json!({"model": "policy", "max_tokens": 8, "stream": true,
            "messages": [user("anthropic stream")]}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let text = resp.text().await.unwrap();
    let events: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("event: "))
        .collect();
    assert_eq!(events.first(), Some(&"message_start"), "{text}");
    assert_eq!(events.last(), Some(&"message_stop"), "{text}");

    let resp = h
        .post("/v1/messages")
        .header("x-api-key", PROXY_KEY)
        .json(&json!({"model": "policy", "max_tokens": 8, "messages": [user("anthropic whole")]}))
        .send()
        .await
        .unwrap();
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["type"], "message", "{body}");
    assert_eq!(body["role"], "assistant");
    // max_tokens 8 was honoured: the sampler stopped there.
    assert!(body["usage"]["output_tokens"].as_u64().unwrap() <= 8);

    // Images cannot be rendered for this model: an OpenAI-shaped 400, not a crash.
    let resp = h
        .post("/v1/chat/completions")
        .json(
            &json!({"model": "policy", "messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]}]}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    let err: Value = resp.json().await.unwrap();
    assert_eq!(err["error"]["type"], "invalid_request_error", "{err}");
    h.stop().await;
    fake.shutdown().await;
}

#[tokio::test]
async fn the_trainer_runs_by_itself_and_skips_stale_generations() {
    let fake = fake().await;
    let h = start(&fake, |_| {}).await;
    wait_serving(&h).await;
    h.mock.push_all([judge("one", 1), judge("two", -1)]);
    chat(&h, "a", json!([user("one")]), true).await;
    chat(&h, "b", json!([user("two")]), true).await;
    let store = h.core().store();
    let step = wait_for("an automatic step", || {
        store
            .training_steps(10)
            .unwrap()
            .into_iter()
            .find(|s| s.status == TrainingStatus::Ok)
    })
    .await;
    assert_eq!(step.samples, Some(2));

    // Samples from before a skill change are never trained on.
    chat(&h, "c", json!([user("three")]), false).await;
    wait_for("a pending sample", || {
        store.flush().unwrap();
        (!store
            .samples_in_state(SampleState::Pending, 10)
            .unwrap()
            .is_empty())
        .then_some(())
    })
    .await;
    let before = store.skill_generation().unwrap();
    store
        .record_skill_version(metaclaw_store::NewSkillVersion {
            skill_name: "x".into(),
            content: "---\nname: x\ndescription: d\n---\nbody".into(),
            action: metaclaw_store::VersionAction::Create,
            author: metaclaw_store::Author::User,
            proposal_id: None,
        })
        .unwrap();
    assert!(store.skill_generation().unwrap() > before);
    let (_, outcome) = api(&h, reqwest::Method::POST, "/api/training/step").await;
    assert_eq!(outcome["status"], "skipped", "{outcome}");
    assert_eq!(store.sample_counts().unwrap()["stale"], 1);
    h.stop().await;
    fake.shutdown().await;
}

#[tokio::test]
async fn missing_settings_are_explained_and_chat_keeps_working() {
    let h = Harness::start_with(|c| {
        c.mode = Mode::Rl;
        c.rl.model.clear();
        c.llm.model_id.clear();
    })
    .await;
    let (_, rl) = wait_rl_failed(&h).await;
    let message = rl["message"].as_str().unwrap();
    assert!(message.contains("rl.model"), "{message}");
    assert!(message.contains("rl.api_key"), "{message}");
    assert_eq!(rl["reward_sources"], "feedback_only");
    // Until the policy runs, chat goes to the upstream LLM.
    let resp = h
        .post("/v1/chat/completions")
        .json(&json!({"model": "m", "messages": [user("hello")]}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let (status, err) = api(&h, reqwest::Method::POST, "/api/training/step").await;
    assert_eq!(status, 409);
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("rl.model")
            || err.to_string().contains("rl.model"),
        "{err}"
    );
    h.stop().await;
}

async fn wait_rl_failed(h: &Harness) -> (u16, Value) {
    for _ in 0..400 {
        let r = api(h, reqwest::Method::GET, "/api/rl").await;
        if r.1["phase"] == "failed" {
            return r;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("RL did not report its missing settings");
}

#[tokio::test]
async fn without_a_judge_only_rated_turns_train_and_feedback_overrides() {
    let fake = fake().await;
    let h = start(&fake, |c| {
        c.rl.manual_train_trigger = true;
        c.rl.prm_url.clear();
    })
    .await;
    wait_serving(&h).await;
    let (_, rl) = api(&h, reqwest::Method::GET, "/api/rl").await;
    assert_eq!(rl["reward_sources"], "feedback_only");
    assert!(
        rl["warnings"][0]
            .as_str()
            .unwrap()
            .contains("only turns you rate")
    );
    chat(&h, "f", json!([user("rate me")]), false).await;
    chat(
        &h,
        "f",
        json!([user("rate me"), {"role": "assistant", "content": "x"}, user("and me")]),
        true,
    )
    .await;
    let store = h.core().store();
    wait_for("two samples", || {
        store.flush().unwrap();
        (store.sample_counts().unwrap()["pending"] == 2).then_some(())
    })
    .await;
    // Both turns are recorded before their samples (one writer, in order).
    h.wait_turns(2).await;
    let turns = h.all_turns();
    // Unrated turns never train.
    let (_, outcome) = api(&h, reqwest::Method::POST, "/api/training/step").await;
    assert_eq!(outcome["status"], "skipped", "{outcome}");

    // Thumbs up on one, down on the other: both become rewards, and a step trains on them.
    let token = std::fs::read_to_string(h.home().join("dashboard.token")).unwrap();
    for (turn, rating) in [(&turns[0].id, 1), (&turns[1].id, -1)] {
        let resp = reqwest::Client::new()
            .post(format!(
                "http://{}/api/turns/{turn}/feedback",
                h.core().addr()
            ))
            .bearer_auth(token.trim())
            .json(&json!({"rating": rating}))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
    }
    let (_, outcome) = api(&h, reqwest::Method::POST, "/api/training/step").await;
    assert_eq!(outcome["status"], "trained", "{outcome}");
    let reward = store.turn_reward(&turns[1].id).unwrap().unwrap();
    assert_eq!(
        (reward.reward, reward.source),
        (-1.0, metaclaw_store::RewardSource::Feedback)
    );
    h.stop().await;
    fake.shutdown().await;
}

/// A vLLM-like teacher: echoes the prompt ids with a logprob per token, the tokens spelled
/// with our tokenizer (or, when `foreign`, with one token less: a different tokenizer).
async fn teacher(foreign: bool) -> (String, tokio::task::JoinHandle<()>) {
    use axum::routing::post;
    let tok = std::sync::Arc::new(
        metaclaw_render::Tokenizer::from_file(std::path::Path::new(TOKENIZER)).unwrap(),
    );
    let app = axum::Router::new().route(
        "/v1/completions",
        post(move |axum::Json(body): axum::Json<Value>| {
            let tok = tok.clone();
            async move {
                let ids: Vec<u32> = body["prompt"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_u64().unwrap() as u32)
                    .collect();
                let mut tokens: Vec<String> = ids.iter().map(|i| tok.decode(&[*i])).collect();
                let mut lps: Vec<Value> = std::iter::once(Value::Null)
                    .chain(ids.iter().skip(1).map(|_| json!(-0.25)))
                    .collect();
                if foreign {
                    tokens.pop();
                    lps.pop();
                }
                axum::Json(json!({"choices": [{"text": "", "logprobs": {
                    "tokens": tokens, "token_logprobs": lps}}]}))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    (
        url,
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() }),
    )
}

#[tokio::test]
async fn opd_scores_served_tokens_with_the_teacher_and_trains_without_a_judge() {
    let fake = fake().await;
    let (url, server) = teacher(false).await;
    let h = start(&fake, |c| {
        c.rl.manual_train_trigger = true;
        c.rl.prm_url.clear();
        c.rl.batch_size = 1;
        c.opd.enabled = true;
        c.opd.teacher_url = url;
        c.opd.teacher_model = "teacher".into();
        c.opd.kl_penalty_coef = 0.5;
    })
    .await;
    wait_serving(&h).await;
    let (_, rl) = api(&h, reqwest::Method::GET, "/api/rl").await;
    assert_eq!(rl["reward_sources"], "teacher_and_feedback");
    chat(&h, "o", json!([user("teach me")]), false).await;
    let store = h.core().store();
    let sample = wait_for("a teacher-scored sample", || {
        store.flush().unwrap();
        store
            .samples_in_state(SampleState::Ready, 10)
            .unwrap()
            .pop()
    })
    .await;
    let teacher_lp = sample.teacher_logprobs.clone().unwrap();
    assert_eq!(teacher_lp.len(), sample.response_tokens.len());
    assert!(teacher_lp.iter().all(|l| *l == -0.25));
    let (_, outcome) = api(&h, reqwest::Method::POST, "/api/training/step").await;
    assert_eq!(outcome["status"], "trained", "{outcome}");
    let step = store.training_steps(1).unwrap().pop().unwrap();
    let expected: f64 = sample
        .response_logprobs
        .iter()
        .map(|l| f64::from(*l) + 0.25)
        .sum::<f64>()
        / sample.response_logprobs.len() as f64;
    assert!(
        (step.kl.unwrap() - expected).abs() < 1e-6,
        "kl {:?} vs {expected}",
        step.kl
    );
    h.stop().await;
    server.abort();
    fake.shutdown().await;
}

#[tokio::test]
async fn a_teacher_with_another_tokenizer_is_refused_with_a_clear_error() {
    let fake = fake().await;
    let (url, server) = teacher(true).await;
    let h = start(&fake, |c| {
        c.rl.manual_train_trigger = true;
        c.rl.prm_url.clear();
        c.opd.enabled = true;
        c.opd.teacher_url = url;
        c.opd.teacher_model = "other-family".into();
    })
    .await;
    wait_serving(&h).await;
    chat(&h, "x", json!([user("hello")]), false).await;
    let mut rl = Value::Null;
    for _ in 0..200 {
        rl = api(&h, reqwest::Method::GET, "/api/rl").await.1;
        if rl["teacher_error"].is_string() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let err = rl["teacher_error"].as_str().unwrap_or_default();
    assert!(err.contains("tokenizer differs"), "{rl}");
    // Nothing trains on a sample the teacher could not score.
    assert_eq!(rl["samples"]["ready"], 0);
    h.stop().await;
    server.abort();
    fake.shutdown().await;
}

#[tokio::test]
async fn auto_mode_trains_only_in_a_scheduler_window() {
    let dir = tempfile::tempdir().unwrap();
    let cal = dir.path().join("work.ics");
    let ics = |start: chrono::DateTime<chrono::Utc>| {
        let fmt = |t: chrono::DateTime<chrono::Utc>| t.format("%Y%m%dT%H%M%SZ").to_string();
        format!(
            "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//metaclaw//test//EN\r\nBEGIN:VEVENT\r\nUID:m1\r\nDTSTAMP:{}\r\nDTSTART:{}\r\nDTEND:{}\r\nSUMMARY:Offsite\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
            fmt(start),
            fmt(start),
            fmt(start + chrono::Duration::hours(3))
        )
    };
    let now = chrono::Utc::now();
    std::fs::write(&cal, ics(now + chrono::Duration::hours(5))).unwrap();
    let fake = fake().await;
    let path = cal.display().to_string();
    let h = start(&fake, move |c| {
        c.mode = Mode::Auto;
        c.scheduler.enabled = true;
        c.scheduler.sleep_enabled = false;
        c.scheduler.idle_enabled = false;
        c.scheduler.min_window_minutes = 0;
        c.scheduler.poll_seconds = 1;
        c.scheduler.calendar.enabled = true;
        c.scheduler.calendar.paths = vec![path];
    })
    .await;
    wait_serving(&h).await;
    h.mock.push_all([judge("one", 1), judge("two", -1)]);
    chat(&h, "a", json!([user("one")]), true).await;
    chat(&h, "b", json!([user("two")]), true).await;
    let store = h.core().store();
    wait_for("two ready samples", || {
        store.flush().unwrap();
        (store.sample_counts().unwrap()["ready"] == 2).then_some(())
    })
    .await;
    // The user is around (no meeting now): the batch waits.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert!(store.training_steps(10).unwrap().is_empty());
    assert_eq!(store.sample_counts().unwrap()["ready"], 2);

    // A meeting starts now: the window opens and the batch trains.
    std::fs::write(&cal, ics(now - chrono::Duration::minutes(1))).unwrap();
    let step = wait_for("a step in the window", || {
        store
            .training_steps(10)
            .unwrap()
            .into_iter()
            .find(|s| s.status == TrainingStatus::Ok)
    })
    .await;
    assert_eq!(step.samples, Some(2));
    h.stop().await;
    fake.shutdown().await;
}

#[tokio::test]
async fn a_restarted_daemon_resumes_from_its_last_checkpoint() {
    let fake = fake().await;
    let h = start(&fake, |c| {
        c.rl.manual_train_trigger = true;
        c.rl.checkpoint_every = 1;
    })
    .await;
    wait_serving(&h).await;
    h.mock.push_all([judge("one", 1), judge("two", -1)]);
    chat(&h, "a", json!([user("one")]), false).await;
    chat(
        &h,
        "a",
        json!([user("one"), {"role": "assistant", "content": "x"}, user("two")]),
        true,
    )
    .await;
    let store = h.core().store();
    wait_for("two ready samples", || {
        store.flush().unwrap();
        (store.sample_counts().unwrap()["ready"] == 2).then_some(())
    })
    .await;
    let (_, outcome) = api(&h, reqwest::Method::POST, "/api/training/step").await;
    assert_eq!(outcome["status"], "trained", "{outcome}");
    let state = store
        .checkpoints()
        .unwrap()
        .into_iter()
        .find(|c| c.kind == CheckpointKind::State)
        .expect("a resumable checkpoint after step 1");
    assert!(fake.requests_to("/api/v1/load_weights").is_empty());

    let h = h.restart().await;
    wait_serving(&h).await;
    let loads = fake.requests_to("/api/v1/load_weights");
    assert_eq!(loads.len(), 1);
    assert_eq!(loads[0].json().unwrap()["path"], state.path);
    let (_, rl) = api(&h, reqwest::Method::GET, "/api/rl").await;
    assert_eq!(rl["last_step"]["step"], 1);
    h.stop().await;
    fake.shutdown().await;
}

/// A turn's reward in the session view: (value, source, parts as (component, value)).
type ShownReward = Option<(f64, String, Vec<(String, f64)>)>;

/// The session view's reward of each turn, by sequence number.
async fn rewards_in(h: &Harness, session: &str) -> Vec<ShownReward> {
    let (status, detail) = api(h, reqwest::Method::GET, &format!("/api/sessions/{session}")).await;
    assert_eq!(status, 200, "{detail}");
    let mut turns = detail["turns"].as_array().unwrap().clone();
    turns.sort_by_key(|t| t["seq"].as_u64());
    turns
        .iter()
        .map(|t| {
            let r = &t["reward"];
            r.is_object().then(|| {
                (
                    r["value"].as_f64().unwrap(),
                    r["source"].as_str().unwrap().to_owned(),
                    r["parts"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|p| {
                            // Each part is its signal times its weight.
                            let value = p["value"].as_f64().unwrap();
                            let product =
                                p["signal"].as_f64().unwrap() * p["weight"].as_f64().unwrap();
                            assert!((value - product).abs() < 1e-12, "{p}");
                            (p["component"].as_str().unwrap().to_owned(), value)
                        })
                        .collect(),
                )
            })
        })
        .collect()
}

/// Polls the session view until `check` accepts its rewards.
async fn wait_rewards(
    h: &Harness,
    session: &str,
    what: &str,
    check: impl Fn(&[ShownReward]) -> bool,
) -> Vec<ShownReward> {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let r = rewards_in(h, session).await;
        if check(&r) {
            return r;
        }
        assert!(std::time::Instant::now() < deadline, "{what}: {r:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

fn parts(r: &ShownReward) -> Vec<(&str, f64)> {
    r.as_ref()
        .map(|(_, _, p)| p.iter().map(|(c, v)| (c.as_str(), *v)).collect())
        .unwrap_or_default()
}

#[tokio::test]
async fn implicit_signals_weigh_in_each_turns_reward() {
    let fake = fake().await;
    let h = start(&fake, |c| {
        c.rl.manual_train_trigger = true;
        c.rl.thumbs_weight = 0.8;
        c.rl.correction_weight = 0.5;
        c.rl.retry_weight = 0.3;
        c.rl.tool_error_weight = 0.25;
    })
    .await;
    wait_serving(&h).await;
    h.mock.push_all([
        judge("alpha", 1),
        judge("beta", 1),
        judge("gamma", 0),
        judge("delta", 1),
    ]);
    let said = |t: &str| user(t);
    let answer = |t: &str| json!({"role": "assistant", "content": t});
    // Turn 1 is corrected by turn 2; turn 2 is asked again by turn 3; turn 3 is rated up.
    let mut history = vec![said("alpha: convert 10 miles to km")];
    chat(&h, "w", Value::Array(history.clone()), false).await;
    history.extend([
        answer("1.6 km"),
        said("No, that's wrong: beta, it is 16 km"),
    ]);
    chat(&h, "w", Value::Array(history.clone()), false).await;
    history.extend([answer("sorry"), said("gamma: try again")]);
    chat(&h, "w", Value::Array(history.clone()), false).await;
    history.extend([answer("16.09 km"), said("delta: thanks")]);
    chat(&h, "w", Value::Array(history.clone()), true).await;

    // By hand: judge + Σ(-1 × weight) of what happened.
    let r = wait_rewards(&h, "w", "all four turns rewarded", |r| {
        r.len() == 4 && r.iter().all(Option::is_some)
    })
    .await;
    assert_eq!(parts(&r[0]), [("judge", 1.0), ("correction", -0.5)]);
    assert!(close(r[0].as_ref().unwrap().0, 0.5), "{r:?}");
    assert_eq!(r[0].as_ref().unwrap().1, "combined");
    assert_eq!(parts(&r[1]), [("judge", 1.0), ("retry", -0.3)]);
    assert!(close(r[1].as_ref().unwrap().0, 0.7), "{r:?}");
    assert_eq!(parts(&r[2]), [("judge", 0.0)]);
    assert!(close(r[2].as_ref().unwrap().0, 0.0), "{r:?}");
    assert_eq!(parts(&r[3]), [("judge", 1.0)]);
    assert_eq!(r[3].as_ref().unwrap().1, "prm");

    // A thumbs up replaces the judge's 0 with +1 × 0.8.
    let turns = h.all_turns();
    let third = turns.iter().find(|t| t.seq == 3).unwrap().id.clone();
    let token = std::fs::read_to_string(h.home().join("dashboard.token")).unwrap();
    let resp = reqwest::Client::new()
        .post(format!(
            "http://{}/api/turns/{third}/feedback",
            h.core().addr()
        ))
        .bearer_auth(token.trim())
        .json(&json!({"rating": 1}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let r = wait_rewards(&h, "w", "the thumbs up counted", |r| {
        r[2].as_ref().is_some_and(|x| close(x.0, 0.8))
    })
    .await;
    assert_eq!(parts(&r[2]), [("thumbs", 0.8)]);
    assert_eq!(r[2].as_ref().unwrap().1, "feedback");

    // A weight of 0 removes its part: the retried turn is back to the judge's score alone.
    let resp = reqwest::Client::new()
        .patch(format!("http://{}/api/config", h.core().addr()))
        .bearer_auth(token.trim())
        .json(&json!({"set": {"rl.retry_weight": 0}}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200, "{}", resp.text().await.unwrap());
    let r = wait_rewards(&h, "w", "the retry part removed", |r| {
        r[1].as_ref().is_some_and(|x| close(x.0, 1.0))
    })
    .await;
    assert_eq!(parts(&r[1]), [("judge", 1.0)]);
    // The settings refuse a weight outside 0..1.
    let resp = reqwest::Client::new()
        .patch(format!("http://{}/api/config", h.core().addr()))
        .bearer_auth(token.trim())
        .json(&json!({"set": {"rl.correction_weight": 1.5}}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);

    // The trainer takes the rewards as shown.
    let store = h.core().store();
    let (_, outcome) = api(&h, reqwest::Method::POST, "/api/training/step").await;
    assert_eq!(outcome["status"], "trained", "{outcome}");
    let first = turns.iter().find(|t| t.seq == 1).unwrap().id.clone();
    let sample = store
        .samples_for_turn(&first)
        .unwrap()
        .into_iter()
        .find(|s| s.idx == 0)
        .unwrap();
    assert_eq!(sample.reward, Some(0.5));
    assert_eq!(sample.state, SampleState::Trained);
    h.stop().await;
    fake.shutdown().await;
}

#[tokio::test]
async fn a_failed_tool_call_takes_its_weight_off_without_a_judge() {
    let fake = fake().await;
    let h = start(&fake, |c| {
        c.rl.manual_train_trigger = true;
        c.rl.prm_url.clear();
        c.rl.tool_error_weight = 0.25;
    })
    .await;
    wait_serving(&h).await;
    let ask = user("epsilon: list the files");
    chat(&h, "tools", json!([ask]), false).await;
    // The agent ran the tool the answer asked for; it failed.
    chat(
        &h,
        "tools",
        json!([ask,
            {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "exec", "arguments": "{\"cmd\": \"ls /nope\"}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "ls: cannot access '/nope': No such file or directory"}]),
        true,
    )
    .await;
    let r = wait_rewards(&h, "tools", "the tool error counted", |r| {
        r.len() == 2 && r[0].is_some()
    })
    .await;
    assert_eq!(parts(&r[0]), [("tool_error", -0.25)]);
    assert_eq!(r[0].as_ref().unwrap().1, "combined");
    // Nothing was said about the second turn: it has no reward and never trains.
    assert!(r[1].is_none(), "{r:?}");
    h.stop().await;
    fake.shutdown().await;
}
