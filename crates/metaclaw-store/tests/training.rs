//! Training data through the public API: steps, checkpoints, PRM votes, turn rewards and
//! the dashboard aggregates, on real database files.

use std::path::{Path, PathBuf};

use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use metaclaw_domain::TurnRecord;
use metaclaw_store::{
    Checkpoint, CheckpointKind, MAX_DAYS, NewSample, PrmVote, PruneReport, RewardSource,
    SCHEMA_VERSION, SampleState, Store, StoreError, TrainingStatus, TrainingStep,
};
use serde_json::json;
use tempfile::TempDir;

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 1, 12, 0, 0).unwrap()
}

fn at(secs: i64) -> DateTime<Utc> {
    t0() + chrono::Duration::seconds(secs)
}

fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, mo, d, h, mi, 0).unwrap()
}

fn date(y: i32, mo: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, mo, d).unwrap()
}

fn open() -> (TempDir, PathBuf, Store) {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("metaclaw.db");
    let store = Store::open(&path).unwrap();
    (dir, path, store)
}

fn count(path: &Path, sql: &str) -> i64 {
    rusqlite::Connection::open(path)
        .unwrap()
        .query_row(sql, [], |r| r.get(0))
        .unwrap()
}

fn turn(id: &str, started_at: DateTime<Utc>) -> TurnRecord {
    TurnRecord::minimal("s", id, id, started_at)
}

fn record_turns(store: &Store, turns: &[(&str, DateTime<Utc>)]) {
    let rec = store.recorder();
    for (id, started) in turns {
        rec.record_turn(turn(id, *started));
    }
    store.flush().unwrap();
}

fn step(n: u64, status: TrainingStatus) -> TrainingStep {
    TrainingStep {
        step: n,
        started_at: at(n as i64 * 60),
        finished_at: None,
        status,
        loss: None,
        mean_reward: None,
        success_rate: None,
        tokens: None,
        kl: None,
        samples: None,
        skill_generation: None,
        error: None,
        checkpoint: None,
        progress: None,
    }
}

fn finished(n: u64) -> TrainingStep {
    TrainingStep {
        finished_at: Some(at(n as i64 * 60 + 59)),
        loss: Some(0.5 / (n as f64 + 1.0)),
        mean_reward: Some(0.1 * n as f64),
        success_rate: Some(0.25),
        tokens: Some(12_345 + n),
        kl: Some(0.002),
        samples: Some(64),
        skill_generation: Some(3),
        checkpoint: Some(format!("step-{n}")),
        progress: Some(1.0),
        ..step(n, TrainingStatus::Ok)
    }
}

fn vote(index: u32, score: i8) -> PrmVote {
    PrmVote {
        vote: index,
        score,
        rationale: format!("vote {index}: {score}"),
        created_at: at(i64::from(index)),
    }
}

fn invalid_value(result: Result<impl std::fmt::Debug, StoreError>) -> bool {
    matches!(result, Err(StoreError::InvalidValue { .. }))
}

#[test]
fn schema_is_numbered_through_the_training_migration() {
    let (_dir, path, _store) = open();
    const { assert!(SCHEMA_VERSION >= 5) };
    assert_eq!(count(&path, "PRAGMA user_version"), SCHEMA_VERSION as i64);
    for table in [
        "training_steps",
        "checkpoints",
        "prm_votes",
        "turn_rewards",
        "samples",
    ] {
        assert_eq!(
            count(
                &path,
                &format!("SELECT strict FROM pragma_table_list WHERE name = '{table}'")
            ),
            1,
            "{table}"
        );
    }
}

#[test]
fn training_steps_round_trip_in_step_order_with_a_limit() {
    let (_dir, path, store) = open();
    assert!(store.training_steps(10).unwrap().is_empty());
    for n in [3, 1, 2, 0] {
        store.upsert_training_step(finished(n)).unwrap();
    }
    let all = store.training_steps(10).unwrap();
    assert_eq!(all.iter().map(|s| s.step).collect::<Vec<_>>(), [0, 1, 2, 3]);
    assert_eq!(all[2], finished(2));
    // The limit keeps the most recent steps, still in ascending order.
    let last_two = store.training_steps(2).unwrap();
    assert_eq!(last_two.iter().map(|s| s.step).collect::<Vec<_>>(), [2, 3]);
    assert!(store.training_steps(0).unwrap().is_empty());

    // Timestamps use the crate's fixed-width format.
    let started: String = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row(
            "SELECT started_at FROM training_steps WHERE step = 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(started, "2025-03-01T12:01:00.000Z");

    // Survives a reopen, and read-only stores see it.
    drop(store);
    let ro = Store::open_read_only(&path).unwrap();
    assert_eq!(ro.training_steps(10).unwrap(), all);
    assert!(matches!(
        ro.upsert_training_step(finished(9)),
        Err(StoreError::ReadOnly)
    ));
}

#[test]
fn upserting_a_step_replaces_every_field() {
    let (_dir, _path, store) = open();
    let mut running = step(5, TrainingStatus::Running);
    running.progress = Some(0.25);
    running.samples = Some(10);
    store.upsert_training_step(running.clone()).unwrap();
    assert_eq!(store.training_steps(10).unwrap(), [running.clone()]);

    running.progress = Some(0.75);
    store.upsert_training_step(running.clone()).unwrap();
    assert_eq!(store.training_steps(10).unwrap(), [running]);

    // Failed: fields not given are cleared, not kept from the earlier write.
    let failed = TrainingStep {
        finished_at: Some(at(400)),
        error: Some("sampler crashed".to_owned()),
        ..step(5, TrainingStatus::Failed)
    };
    store.upsert_training_step(failed.clone()).unwrap();
    assert_eq!(store.training_steps(10).unwrap(), [failed]);

    // Non-finite numbers are stored as None; step numbers must fit SQLite's integers.
    let weird = TrainingStep {
        loss: Some(f64::NAN),
        kl: Some(f64::INFINITY),
        mean_reward: Some(-0.5),
        ..step(6, TrainingStatus::Ok)
    };
    store.upsert_training_step(weird).unwrap();
    let stored = store.training_steps(1).unwrap().remove(0);
    assert_eq!(
        (stored.loss, stored.kl, stored.mean_reward),
        (None, None, Some(-0.5))
    );
    assert!(invalid_value(
        store.upsert_training_step(step(u64::MAX, TrainingStatus::Ok))
    ));
    assert_eq!(store.training_steps(10).unwrap().len(), 2);
}

#[test]
fn current_step_is_the_highest_running_one() {
    let (_dir, _path, store) = open();
    assert_eq!(store.current_training_step().unwrap(), None);
    store.upsert_training_step(finished(1)).unwrap();
    assert_eq!(store.current_training_step().unwrap(), None);
    let running = TrainingStep {
        progress: Some(0.5),
        ..step(2, TrainingStatus::Running)
    };
    store.upsert_training_step(running.clone()).unwrap();
    assert_eq!(store.current_training_step().unwrap(), Some(running));
    // A stale running row (e.g. after a crash) loses to the newer one.
    store
        .upsert_training_step(step(0, TrainingStatus::Running))
        .unwrap();
    assert_eq!(store.current_training_step().unwrap().unwrap().step, 2);
    store.upsert_training_step(finished(2)).unwrap();
    assert_eq!(store.current_training_step().unwrap().unwrap().step, 0);
    store
        .upsert_training_step(step(0, TrainingStatus::Paused))
        .unwrap();
    assert_eq!(store.current_training_step().unwrap(), None);
}

#[test]
fn training_step_serializes_and_deserializes() {
    let s = finished(4);
    let value = serde_json::to_value(&s).unwrap();
    assert_eq!(value["status"], "ok");
    assert_eq!(value["started_at"], "2025-03-01T12:04:00Z");
    assert_eq!(serde_json::from_value::<TrainingStep>(value).unwrap(), s);
    // Optional fields may be left out.
    let minimal: TrainingStep = serde_json::from_value(json!({
        "step": 7, "started_at": "2025-03-01T12:00:00Z", "status": "running"
    }))
    .unwrap();
    assert_eq!(
        minimal,
        TrainingStep {
            started_at: t0(),
            ..step(7, TrainingStatus::Running)
        }
    );
    assert!(
        serde_json::from_value::<TrainingStep>(json!({
            "step": 7, "started_at": "2025-03-01T12:00:00Z", "status": "done"
        }))
        .is_err()
    );
}

#[test]
fn checkpoints_are_listed_newest_first_and_replaced_by_name() {
    let (_dir, _path, store) = open();
    assert!(store.checkpoints().unwrap().is_empty());
    let cp = |name: &str, step: u64, kind, secs| Checkpoint {
        name: name.to_owned(),
        step,
        path: format!("/ckpt/{name}"),
        kind,
        created_at: at(secs),
    };
    store
        .record_checkpoint(cp("a", 10, CheckpointKind::State, 100))
        .unwrap();
    store
        .record_checkpoint(cp("c", 30, CheckpointKind::Sampler, 300))
        .unwrap();
    store
        .record_checkpoint(cp("b", 20, CheckpointKind::State, 200))
        .unwrap();
    let names = |store: &Store| {
        store
            .checkpoints()
            .unwrap()
            .into_iter()
            .map(|c| c.name)
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&store), ["c", "b", "a"]);
    assert_eq!(
        store.checkpoints().unwrap()[0],
        cp("c", 30, CheckpointKind::Sampler, 300)
    );
    // Same name: replaced, and now the newest.
    let again = cp("a", 40, CheckpointKind::Sampler, 400);
    store.record_checkpoint(again.clone()).unwrap();
    assert_eq!(names(&store), ["a", "c", "b"]);
    assert_eq!(store.checkpoints().unwrap()[0], again);
    assert!(invalid_value(store.record_checkpoint(cp(
        "z",
        u64::MAX,
        CheckpointKind::State,
        0
    ))));
    assert_eq!(
        serde_json::to_value(&again).unwrap()["kind"],
        json!("sampler")
    );
}

#[test]
fn prm_votes_are_replaced_validated_and_scoped_to_stored_turns() {
    let (_dir, _path, store) = open();
    record_turns(&store, &[("t1", at(0)), ("t2", at(1))]);
    assert!(store.prm_votes("t1").unwrap().is_empty());

    let votes = [vote(2, 1), vote(0, -1), vote(1, 0)];
    store.record_prm_votes("t1", &votes).unwrap();
    assert_eq!(
        store.prm_votes("t1").unwrap(),
        [vote(0, -1), vote(1, 0), vote(2, 1)]
    );
    assert!(store.prm_votes("t2").unwrap().is_empty());

    // Recording again replaces the whole set.
    store.record_prm_votes("t1", &[vote(0, 1)]).unwrap();
    assert_eq!(store.prm_votes("t1").unwrap(), [vote(0, 1)]);

    // Refused writes leave the stored votes alone.
    assert!(invalid_value(store.record_prm_votes("t1", &[vote(0, 2)])));
    assert!(invalid_value(store.record_prm_votes("t1", &[vote(0, -2)])));
    assert!(matches!(
        store.record_prm_votes("t1", &[vote(0, 1), vote(0, -1)]),
        Err(StoreError::Sqlite(_))
    ));
    assert!(matches!(
        store.record_prm_votes("nope", &[vote(0, 1)]),
        Err(StoreError::NotFound { what: "turn", .. })
    ));
    assert_eq!(store.prm_votes("t1").unwrap(), [vote(0, 1)]);

    store.record_prm_votes("t1", &[]).unwrap();
    assert!(store.prm_votes("t1").unwrap().is_empty());
}

#[test]
fn turn_rewards_are_set_replaced_and_validated() {
    let (_dir, _path, store) = open();
    record_turns(&store, &[("t1", at(0))]);
    assert_eq!(store.turn_reward("t1").unwrap(), None);

    store.set_turn_reward("t1", 0.5, RewardSource::Prm).unwrap();
    let r = store.turn_reward("t1").unwrap().unwrap();
    assert_eq!((r.reward, r.source), (0.5, RewardSource::Prm));
    assert!((Utc::now() - r.created_at).num_seconds().abs() < 60);

    store
        .set_turn_reward("t1", -1.0, RewardSource::Combined)
        .unwrap();
    let r = store.turn_reward("t1").unwrap().unwrap();
    assert_eq!((r.reward, r.source), (-1.0, RewardSource::Combined));

    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert!(invalid_value(store.set_turn_reward(
            "t1",
            bad,
            RewardSource::Feedback
        )));
    }
    assert!(matches!(
        store.set_turn_reward("nope", 1.0, RewardSource::Feedback),
        Err(StoreError::NotFound { .. })
    ));
    assert_eq!(store.turn_reward("t1").unwrap().unwrap().reward, -1.0);
    assert_eq!(
        serde_json::to_value(store.turn_reward("t1").unwrap().unwrap()).unwrap()["source"],
        json!("combined")
    );
    assert_eq!(
        "feedback".parse::<RewardSource>().unwrap(),
        RewardSource::Feedback
    );
}

#[test]
fn votes_and_rewards_go_with_pruned_turns() {
    let (_dir, path, store) = open();
    let day = 86_400;
    record_turns(&store, &[("old", at(0)), ("new", at(10 * day))]);
    for id in ["old", "new"] {
        store
            .record_prm_votes(id, &[vote(0, 1), vote(1, 1)])
            .unwrap();
        store.set_turn_reward(id, 1.0, RewardSource::Prm).unwrap();
    }
    store.upsert_training_step(finished(1)).unwrap();
    store
        .record_checkpoint(Checkpoint {
            name: "c".to_owned(),
            step: 1,
            path: "/c".to_owned(),
            kind: CheckpointKind::State,
            created_at: at(0),
        })
        .unwrap();
    assert_eq!(
        store.prm_score_distribution().unwrap(),
        [(-1, 0), (0, 0), (1, 2)]
    );

    let report = store.prune(at(5 * day)).unwrap();
    assert_eq!(
        report,
        PruneReport {
            turns: 1,
            sessions: 0,
            blobs: 0
        }
    );
    assert!(store.prm_votes("old").unwrap().is_empty());
    assert_eq!(store.turn_reward("old").unwrap(), None);
    assert_eq!(store.prm_votes("new").unwrap().len(), 2);
    assert!(store.turn_reward("new").unwrap().is_some());
    assert_eq!(count(&path, "SELECT count(*) FROM prm_votes"), 2);
    assert_eq!(count(&path, "SELECT count(*) FROM turn_rewards"), 1);
    assert_eq!(
        store.prm_score_distribution().unwrap(),
        [(-1, 0), (0, 0), (1, 1)]
    );
    // Training history is not turn data: retention keeps it.
    assert_eq!(store.training_steps(10).unwrap().len(), 1);
    assert_eq!(store.checkpoints().unwrap().len(), 1);
    assert_eq!(
        count(&path, "SELECT count(*) FROM pragma_foreign_key_check"),
        0
    );
}

#[test]
fn prm_distribution_counts_the_majority_vote_per_turn() {
    let (_dir, _path, store) = open();
    assert_eq!(
        store.prm_score_distribution().unwrap(),
        [(-1, 0), (0, 0), (1, 0)]
    );
    let cases: &[(&str, &[i8])] = &[
        ("good", &[1, 1, 0]),
        ("bad", &[-1]),
        ("bad2", &[-1, -1, 1]),
        ("tie", &[1, -1]),
        ("tie3", &[1, 1, -1, -1, 0]),
        ("neutral", &[0, 0, 1]),
        ("unvoted", &[]),
    ];
    let turns: Vec<(&str, DateTime<Utc>)> = cases
        .iter()
        .zip(0..)
        .map(|((id, _), i)| (*id, at(i)))
        .collect();
    record_turns(&store, &turns);
    for (id, scores) in cases {
        let votes: Vec<PrmVote> = scores.iter().zip(0..).map(|(&s, i)| vote(i, s)).collect();
        store.record_prm_votes(id, &votes).unwrap();
    }
    // Rewards are not what the distribution counts.
    store
        .set_turn_reward("unvoted", 1.0, RewardSource::Prm)
        .unwrap();
    assert_eq!(
        store.prm_score_distribution().unwrap(),
        [(-1, 2), (0, 3), (1, 1)]
    );
}

#[test]
fn turns_per_day_buckets_by_local_day() {
    let (_dir, _path, store) = open();
    record_turns(
        &store,
        &[
            ("a", utc(2025, 3, 9, 23, 30)),
            ("b", utc(2025, 3, 10, 0, 30)),
            ("c", utc(2025, 3, 9, 21, 0)),
            ("d", utc(2025, 3, 8, 12, 0)),
            ("e", utc(2025, 3, 5, 12, 0)),
            ("f", utc(2025, 3, 10, 23, 0)),
        ],
    );
    let now = utc(2025, 3, 10, 1, 30);

    // UTC: today is Mar 10; "f" is later today and counts.
    assert_eq!(
        store.turns_per_day_at(now, 3, 0).unwrap(),
        [
            (date(2025, 3, 8), 1),
            (date(2025, 3, 9), 2),
            (date(2025, 3, 10), 2)
        ]
    );
    // UTC+2: "a" moves to Mar 10; "f" is Mar 11 local, after today.
    assert_eq!(
        store.turns_per_day_at(now, 3, 120).unwrap(),
        [
            (date(2025, 3, 8), 1),
            (date(2025, 3, 9), 1),
            (date(2025, 3, 10), 2)
        ]
    );
    // UTC-5: it is still Mar 9 locally; "a", "b" and "c" are all Mar 9 evening.
    assert_eq!(
        store.turns_per_day_at(now, 3, -300).unwrap(),
        [
            (date(2025, 3, 7), 0),
            (date(2025, 3, 8), 1),
            (date(2025, 3, 9), 3)
        ]
    );
    // UTC+5:30, a longer window with empty days included.
    let week = store.turns_per_day_at(now, 7, 330).unwrap();
    assert_eq!(week.len(), 7);
    assert_eq!(week[0], (date(2025, 3, 4), 0));
    assert_eq!(week[1], (date(2025, 3, 5), 1));
    assert_eq!(week.iter().map(|(_, n)| n).sum::<u64>(), 5);

    assert!(store.turns_per_day_at(now, 0, 0).unwrap().is_empty());
    assert!(invalid_value(store.turns_per_day_at(now, 3, 1440)));
    assert!(invalid_value(store.turns_per_day_at(now, 3, -1440)));
    assert!(invalid_value(store.turns_per_day_at(now, MAX_DAYS + 1, 0)));
    assert_eq!(
        store.turns_per_day_at(now, MAX_DAYS, 0).unwrap().len(),
        MAX_DAYS as usize
    );
    // With the real clock: one entry for today.
    assert_eq!(store.turns_per_day(1, 0).unwrap().len(), 1);
}

fn sample(turn_id: &str, idx: u32, generation: u64) -> NewSample {
    NewSample {
        turn_id: turn_id.to_owned(),
        idx,
        session_id: "s".to_owned(),
        created_at: at(0),
        skill_generation: generation,
        sampler: "tinker://m/sampler_weights/s0".to_owned(),
        renderer: "qwen3".to_owned(),
        prompt_tokens: vec![1, 2, 3, u32::MAX],
        response_tokens: vec![7, 8],
        response_logprobs: vec![-0.5, f32::MIN_POSITIVE],
        response_text: "hi".to_owned(),
    }
}

#[test]
fn samples_keep_exact_tokens_and_move_through_states() {
    let (_dir, path, store) = open();
    record_turns(&store, &[("t1", at(0)), ("t2", at(1))]);
    let a = store.insert_sample(sample("t1", 0, 3)).unwrap();
    let b = store.insert_sample(sample("t1", 1, 3)).unwrap();
    store.insert_sample(sample("t2", 0, 2)).unwrap();
    let rows = store.samples_for_turn("t1").unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].prompt_tokens, [1, 2, 3, u32::MAX]);
    assert_eq!(rows[0].response_logprobs, [-0.5, f32::MIN_POSITIVE]);
    assert_eq!(rows[0].state, SampleState::Pending);
    // t2 came after t1 in the same session, so t1 is due for judging; t2 is not yet.
    assert_eq!(store.turns_due_for_judging().unwrap(), ["t1"]);

    // A reward makes a pending sample ready; unknown samples report false.
    assert!(
        store
            .set_sample_reward("t1", 0, 1.0, RewardSource::Prm)
            .unwrap()
    );
    assert!(
        !store
            .set_sample_reward("t1", 9, 1.0, RewardSource::Prm)
            .unwrap()
    );
    assert!(
        store
            .set_sample_reward("t1", 1, f64::NAN, RewardSource::Prm)
            .is_err()
    );
    let ready = store.samples_in_state(SampleState::Ready, 10).unwrap();
    assert_eq!(ready.iter().map(|r| r.id).collect::<Vec<_>>(), [a]);
    // A group is complete only when none of its samples waits for a reward.
    assert!(store.ready_sample_groups(10).unwrap().is_empty());
    assert_eq!(ready[0].reward, Some(1.0));

    // Batched and trained samples keep the reward they were trained with.
    store
        .set_sample_state(vec![a], SampleState::Batched, Some(4))
        .unwrap();
    assert!(
        !store
            .set_sample_reward("t1", 0, -1.0, RewardSource::Feedback)
            .unwrap()
    );
    let batched = store.samples_in_state(SampleState::Batched, 10).unwrap();
    assert_eq!((batched[0].reward, batched[0].step), (Some(1.0), Some(4)));

    // Older skill generations go stale, except what was already taken.
    assert_eq!(store.mark_stale_samples(3).unwrap(), 1);
    let counts = store.sample_counts().unwrap();
    assert_eq!(counts["stale"], 1);
    assert_eq!(counts["pending"], 1);
    assert_eq!(counts["batched"], 1);
    assert_eq!(counts["trained"], 0);

    store.set_teacher_logprobs(b, vec![-1.0, -2.0]).unwrap();
    assert_eq!(
        store.samples_for_turn("t1").unwrap()[1].teacher_logprobs,
        Some(vec![-1.0, -2.0])
    );
    assert_eq!(count(&path, "SELECT count(*) FROM samples"), 3);
    assert!(
        store
            .set_sample_reward("t1", 1, -1.0, RewardSource::Prm)
            .unwrap()
    );
    assert_eq!(store.ready_sample_groups(10).unwrap(), ["t1"]);
}

#[test]
fn samples_need_their_turn_and_matching_logprobs() {
    let (_dir, _path, store) = open();
    assert!(matches!(
        store.insert_sample(sample("missing", 0, 0)),
        Err(StoreError::NotFound { .. })
    ));
    record_turns(&store, &[("t1", at(0))]);
    let mut bad = sample("t1", 0, 0);
    bad.response_logprobs.pop();
    assert!(invalid_value(store.insert_sample(bad)));
    store.insert_sample(sample("t1", 0, 0)).unwrap();
    // The same (turn, idx) twice is refused rather than silently replaced.
    assert!(store.insert_sample(sample("t1", 0, 0)).is_err());
    // Samples go with their turn on retention.
    store.prune(at(10)).unwrap();
    assert!(store.samples_for_turn("t1").unwrap().is_empty());
}

#[test]
fn turns_come_due_for_judging_once_a_later_main_turn_is_stored() {
    let (_dir, _path, store) = open();
    record_turns(&store, &[("t1", at(0))]);
    store.insert_sample(sample("t1", 0, 0)).unwrap();
    assert!(store.turns_due_for_judging().unwrap().is_empty());
    record_turns(&store, &[("t2", at(1))]);
    store.insert_sample(sample("t2", 0, 0)).unwrap();
    assert_eq!(store.turns_due_for_judging().unwrap(), ["t1"]);

    // A rating on a served sample is reported until the reward includes it.
    store.set_feedback("t1", -1, None).unwrap();
    let rated = store.rated_samples_without_feedback().unwrap();
    assert_eq!((rated.len(), rated[0].rating), (1, -1));
    store
        .set_sample_reward("t1", 0, -1.0, RewardSource::Combined)
        .unwrap();
    assert!(store.rated_samples_without_feedback().unwrap().is_empty());
}

/// Live use's implicit signals (a tool error, a correction) reach a live turn's reward, never
/// a rollout episode's: its task's verifier rewards it, also before that reward lands.
#[test]
fn implicit_signals_leave_rollout_episodes_to_their_verifier() {
    let (_dir, _path, store) = open();
    store.mark_rollout_session("rollout-1").unwrap();
    let rec = store.recorder();
    // Each answer is followed by a turn whose request corrects it and reports tool errors.
    let turns = [
        ("live", "l1", "l1-next"),
        ("rollout-1", "r1", "r1-next"),
        ("rollout-1", "r2", "r2-next"),
    ];
    for (n, (session, id, next)) in turns.iter().enumerate() {
        rec.record_turn(TurnRecord::minimal(session, id, "run it", at(2 * n as i64)));
        rec.record_turn(TurnRecord::minimal(
            session,
            next,
            "no, wrong",
            at(2 * n as i64 + 1),
        ));
    }
    store.flush().unwrap();
    for (session, id, next) in turns {
        store
            .insert_sample(NewSample {
                session_id: session.to_owned(),
                ..sample(id, 0, 0)
            })
            .unwrap();
        rec.record_follow_up(metaclaw_store::FollowUp {
            turn_id: next.into(),
            session_id: session.into(),
            correction: true,
            retry: false,
            tool_error: true,
        });
        store.flush().unwrap();
    }

    let live = store.turn_signals("l1").unwrap();
    assert!(live.corrected && live.tool_error);
    let episode = store.turn_signals("r1").unwrap();
    assert!(!episode.corrected && !episode.tool_error && !episode.retried);
    // Pending (no reward yet) and verifier-rewarded episode samples are both left alone.
    store
        .set_sample_reward("r2", 0, 1.0, RewardSource::Verifier)
        .unwrap();
    let signalled: Vec<String> = store
        .signalled_samples()
        .unwrap()
        .into_iter()
        .map(|s| s.turn_id)
        .collect();
    assert_eq!(signalled, ["l1"]);
    // Marking twice is harmless (a rollout resumed).
    store.mark_rollout_session("rollout-1").unwrap();
}
