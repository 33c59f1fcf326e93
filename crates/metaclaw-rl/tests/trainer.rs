//! The trainer against the fake Tinker server: a paused step keeps its batch and resumes it,
//! a poisoned model is recreated from the last checkpoint and the batch retried, group
//! sampling trains group-relative, constant groups are dropped, and OPD trains on the
//! teacher's signal alone.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use metaclaw_config::LossFn;
use metaclaw_domain::{Clock, SystemClock, TurnRecord};
use metaclaw_render::{Renderer, RendererKind, test_tokenizer};
use metaclaw_rl::StepOutcome;
use metaclaw_rl::policy::{Policy, SamplingDefaults};
use metaclaw_rl::trainer::{NeverPause, PauseGate, Trainer, TrainerSettings};
use metaclaw_store::{CheckpointKind, NewSample, RewardSource, SampleState, Store, TrainingStatus};
use serde_json::json;
use tempfile::TempDir;
use tinker_client::fake::{FakeServer, Fault, Knobs};
use tinker_client::{ClientConfig, ServiceClient};

struct Setup {
    _dir: TempDir,
    store: Arc<Store>,
    fake: FakeServer,
    policy: Arc<Policy>,
}

async fn setup() -> Setup {
    let dir = TempDir::new().unwrap();
    let store = Arc::new(Store::open(dir.path().join("db.sqlite")).unwrap());
    let fake = FakeServer::start_with(Knobs {
        vocab_size: 700,
        ..Knobs::default()
    })
    .await;
    let renderer = Arc::new(
        Renderer::new(
            RendererKind::Qwen3Instruct,
            test_tokenizer(RendererKind::Qwen3Instruct),
        )
        .unwrap(),
    );
    let policy = Arc::new(Policy::new(
        renderer,
        "m".into(),
        SamplingDefaults {
            temperature: 1.0,
            max_new_tokens: 8,
            group_size: 1,
        },
        Default::default(),
    ));
    Setup {
        _dir: dir,
        store,
        fake,
        policy,
    }
}

fn settings(batch_size: u32, group_size: u32, kl: Option<f64>) -> TrainerSettings {
    TrainerSettings {
        base_model: "Qwen/Qwen3-4B-Instruct-2507".into(),
        lora_rank: 4,
        batch_size,
        group_size,
        loss_fn: LossFn::ImportanceSampling,
        learning_rate: 0.05,
        checkpoint_every: 1,
        save_timeout: std::time::Duration::from_secs(10),
        kl_coef: kl,
        gated: false,
    }
}

async fn trainer(s: &Setup, settings: TrainerSettings) -> Arc<Trainer> {
    let service = ServiceClient::connect(ClientConfig::fast(s.fake.url(), "tml-test"))
        .await
        .unwrap();
    let (events, _) = tokio::sync::broadcast::channel(64);
    Trainer::start(
        s.store.clone(),
        service,
        s.policy.clone(),
        events,
        settings,
        None,
    )
    .await
    .unwrap()
}

fn turn(id: &str) -> TurnRecord {
    TurnRecord {
        skill_generation: Some(0),
        ..TurnRecord::minimal("s", id, id, SystemClock.now())
    }
}

/// Stores a turn with `rewards.len()` samples (a group) and sets their rewards.
fn group(store: &Store, id: &str, rewards: &[Option<f64>], teacher: bool) {
    store.recorder().record_turn(turn(id));
    store.flush().unwrap();
    for (i, r) in rewards.iter().enumerate() {
        let sample_id = store
            .insert_sample(NewSample {
                turn_id: id.into(),
                idx: i as u32,
                session_id: "s".into(),
                created_at: SystemClock.now(),
                skill_generation: 0,
                sampler: "fake".into(),
                renderer: "qwen3_instruct".into(),
                prompt_tokens: vec![1, 2, 3],
                response_tokens: vec![10 + i as u32, 20, 30],
                response_logprobs: vec![-2.0, -2.0, -2.0],
                response_text: "x".into(),
            })
            .unwrap();
        if let Some(r) = r {
            store
                .set_sample_reward(id, i as u32, *r, RewardSource::Prm)
                .unwrap();
        }
        if teacher {
            store
                .set_teacher_logprobs(sample_id, vec![-0.5, -0.5, -0.5])
                .unwrap();
            store
                .set_sample_state(vec![sample_id], SampleState::Ready, None)
                .unwrap();
        }
    }
}

/// Pauses at the n-th question.
struct PauseAt {
    at: usize,
    asked: AtomicUsize,
}

impl PauseGate for PauseAt {
    fn should_pause(&self) -> bool {
        self.asked.fetch_add(1, Ordering::SeqCst) + 1 >= self.at
    }
}

#[tokio::test]
async fn a_paused_batch_stays_in_the_database_and_resumes() {
    let s = setup().await;
    let t = trainer(&s, settings(2, 1, None)).await;
    group(&s.store, "a", &[Some(1.0)], false);
    group(&s.store, "b", &[Some(-1.0)], false);
    let gate = PauseAt {
        at: 1,
        asked: AtomicUsize::new(0),
    };
    let out = t.step(&gate, false).await.unwrap();
    assert_eq!(out, StepOutcome::Paused { step: 1 });
    let batched = s.store.samples_in_state(SampleState::Batched, 10).unwrap();
    assert_eq!(batched.len(), 2);
    // Nothing was sent to the server yet.
    assert!(s.fake.requests_to("/api/v1/forward_backward").is_empty());

    // A fresh trainer (a restart) picks the same batch up first.
    let t = trainer(&s, settings(2, 1, None)).await;
    group(&s.store, "c", &[Some(1.0)], false);
    let out = t.step(&NeverPause, false).await.unwrap();
    let StepOutcome::Trained { step, samples, .. } = out else {
        panic!("{out:?}");
    };
    assert_eq!((step, samples), (1, 2));
    let trained: Vec<String> = s
        .store
        .samples_in_state(SampleState::Trained, 10)
        .unwrap()
        .into_iter()
        .map(|x| x.turn_id)
        .collect();
    assert_eq!(trained, ["a", "b"]);
    let steps = s.store.training_steps(10).unwrap();
    assert_eq!(steps.last().unwrap().status, TrainingStatus::Ok);
    // checkpoint_every = 1: a resumable state was saved and recorded.
    assert!(
        s.store
            .checkpoints()
            .unwrap()
            .iter()
            .any(|c| c.kind == CheckpointKind::State && c.step == 1)
    );
}

#[tokio::test]
async fn pausing_after_the_update_saves_the_sampler_next_time() {
    let s = setup().await;
    let t = trainer(&s, settings(2, 1, None)).await;
    group(&s.store, "a", &[Some(1.0)], false);
    group(&s.store, "b", &[Some(-1.0)], false);
    let before = s.policy.current().unwrap().step;
    let gate = PauseAt {
        at: 2,
        asked: AtomicUsize::new(0),
    };
    assert_eq!(
        t.step(&gate, false).await.unwrap(),
        StepOutcome::Paused { step: 1 }
    );
    assert_eq!(
        s.policy.current().unwrap().step,
        before,
        "no swap while paused"
    );
    assert_eq!(
        s.store
            .samples_in_state(SampleState::Trained, 10)
            .unwrap()
            .len(),
        2
    );
    assert!(
        t.has_batch().unwrap(),
        "the unsaved sampler is pending work"
    );
    let out = t.step(&NeverPause, false).await.unwrap();
    assert!(matches!(out, StepOutcome::Skipped { .. }), "{out:?}");
    assert_eq!(
        s.policy.current().unwrap().step,
        1,
        "the step's sampler now serves"
    );
}

#[tokio::test]
async fn a_failed_step_recreates_the_model_from_the_last_checkpoint() {
    let s = setup().await;
    let t = trainer(&s, settings(2, 1, None)).await;
    group(&s.store, "a", &[Some(1.0)], false);
    group(&s.store, "b", &[Some(-1.0)], false);
    t.step(&NeverPause, false).await.unwrap();
    let models_before = s.fake.model_ids().len();

    group(&s.store, "c", &[Some(1.0)], false);
    group(&s.store, "d", &[Some(-1.0)], false);
    s.fake.inject(
        "/api/v1/retrieve_future",
        Fault::failed_future("server", "boom"),
        1,
    );
    let err = t.step(&NeverPause, false).await.unwrap_err();
    assert!(err.to_string().contains("boom"), "{err}");
    let failed = s.store.training_steps(10).unwrap();
    assert_eq!(failed.last().unwrap().status, TrainingStatus::Failed);
    assert!(
        s.fake.model_ids().len() > models_before,
        "a new model was created"
    );
    assert!(
        !s.fake.requests_to("/api/v1/load_weights").is_empty(),
        "from the checkpoint"
    );
    // The batch was kept and trains on the new model.
    let out = t.step(&NeverPause, false).await.unwrap();
    let StepOutcome::Trained { step, samples, .. } = out else {
        panic!("{out:?}");
    };
    assert_eq!((step, samples), (2, 2));
}

#[tokio::test]
async fn groups_train_relative_to_their_mean_and_constant_groups_are_dropped() {
    let s = setup().await;
    let t = trainer(&s, settings(2, 2, None)).await;
    group(&s.store, "mixed", &[Some(1.0), Some(-1.0)], false);
    group(&s.store, "same", &[Some(1.0), Some(1.0)], false);
    // An incomplete group (one sample unscored) waits.
    group(&s.store, "waiting", &[Some(1.0), None], false);
    let out = t.step(&NeverPause, false).await.unwrap();
    let StepOutcome::Trained { samples, .. } = out else {
        panic!("{out:?}");
    };
    assert_eq!(samples, 2);
    let skipped = s.store.samples_in_state(SampleState::Skipped, 10).unwrap();
    assert!(skipped.iter().all(|x| x.turn_id == "same") && skipped.len() == 2);
    let body = s.fake.requests_to("/api/v1/forward_backward")[0]
        .json()
        .unwrap();
    let adv: Vec<f64> =
        body["forward_backward_input"]["data"][0]["loss_fn_inputs"]["advantages"]["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
    // Prompt positions carry zero advantage; the response carries +1 (reward 1, mean 0).
    assert_eq!(adv, [0.0, 0.0, 1.0, 1.0, 1.0]);
    assert_eq!(
        s.store
            .samples_in_state(SampleState::Ready, 10)
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn opd_trains_on_the_teacher_signal_without_rewards() {
    let s = setup().await;
    let t = trainer(&s, settings(1, 1, Some(2.0))).await;
    group(&s.store, "t", &[None], true);
    let out = t.step(&NeverPause, false).await.unwrap();
    assert!(
        matches!(out, StepOutcome::Trained { samples: 1, .. }),
        "{out:?}"
    );
    let body = s.fake.requests_to("/api/v1/forward_backward")[0]
        .json()
        .unwrap();
    let adv = &body["forward_backward_input"]["data"][0]["loss_fn_inputs"]["advantages"]["data"];
    // -coef * (student - teacher) = -2 * (-2 - -0.5) = 3 on every response token.
    assert_eq!(adv, &json!([0.0, 0.0, 3.0, 3.0, 3.0]));
    let step = s.store.training_steps(1).unwrap().pop().unwrap();
    assert_eq!(step.kl, Some(-1.5));
}
