//! `metaclaw dev seed`: sample data for demos and the dashboard's browser tests.

use std::sync::Arc;

use anyhow::{Context, Result};
use chrono::{DateTime, Duration, Utc};
use metaclaw_config::Home;
use metaclaw_domain::{Dialect, SessionSource, TurnRecord, TurnStatus, TurnType, Usage};
use metaclaw_store::{NewProposal, ProposalKind, Store, TrainingStatus, TrainingStep};
use serde_json::json;

use crate::output::say;

fn turn(
    now: DateTime<Utc>,
    session: &str,
    n: u64,
    user: &str,
    answer: &str,
    skill: Option<&str>,
) -> TurnRecord {
    let started = now - Duration::minutes(60 - n as i64);
    TurnRecord {
        turn_id: format!("{session}-t{n}"),
        session_id: session.to_owned(),
        session_source: SessionSource::Header,
        turn_type: TurnType::Main,
        api: Dialect::OpenAi,
        stream: false,
        model: Some("mock-model".into()),
        request: json!({"model": "mock-model", "messages": [{"role": "system", "content": "You are a helpful agent."}, {"role": "user", "content": user}]}),
        response: Some(json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}]})),
        status: TurnStatus::Ok,
        http_status: 200,
        error: None,
        usage: Usage { input_tokens: Some(120), output_tokens: Some(40) },
        started_at: started,
        latency_ms: 850.0,
        ttfb_ms: Some(120.0),
        injected: json!(skill.map(|s| vec![json!({"kind": "skill", "name": s, "version": "1", "score": 14.2, "reason": "relevant"})]).unwrap_or_default()),
        agent: metaclaw_domain::DEFAULT_AGENT.to_owned(),
        skill_generation: Some(0),
    }
}

pub fn run(home: &Home) -> Result<()> {
    home.ensure()?;
    // Writes the database directly, so only while nothing else runs on this home.
    let _lock = metaclaw_core::instance::InstanceLock::acquire(home)?;
    let store = Arc::new(
        Store::open(home.db_path())
            .with_context(|| format!("could not open {}", home.db_path().display()))?,
    );
    let recorder = store.recorder();
    let now = store.now();
    let turns = [
        turn(
            now,
            "seed-debugging",
            1,
            "my pytest suite fails randomly on CI",
            "Run it 200 times to reproduce, then isolate shared state.",
            Some("fix-flaky-tests"),
        ),
        turn(
            now,
            "seed-debugging",
            2,
            "No, that's wrong: it only fails in parallel",
            "Then it is shared state between workers: use tmp_path.",
            Some("fix-flaky-tests"),
        ),
        turn(
            now,
            "seed-writing",
            1,
            "draft release notes for version 2.3",
            "## 2.3\n- Faster sync\n- Fixed login loop",
            Some("draft-release-notes"),
        ),
        turn(
            now,
            "seed-writing",
            2,
            "shorter please",
            "2.3: faster sync, login loop fixed.",
            None,
        ),
    ];
    for t in turns {
        recorder.record_turn(t);
    }
    store.flush()?;
    let content = "---\nname: seeded-proposal\ndescription: Use when a test fails only when tests run in parallel\ncategory: debugging\nmetadata:\n  metaclaw:\n    version: 1\n    created_by: evolver\n---\n\n# Parallel-only test failures\n\n## Steps\n1. Run the suite with one worker to confirm.\n2. Give each worker its own temp dir and port.\n\n## Anti-patterns\n- Marking the test as flaky and moving on.\n";
    let id = store.insert_proposal(NewProposal {
        kind: ProposalKind::New,
        skill_name: "seeded-proposal".into(),
        content: content.into(),
        base_content: None,
        diff: None,
        reason: "The user corrected the assistant: the failure only happens in parallel runs.".into(),
        session_id: Some("seed-debugging".into()),
        turn_ids: vec!["seed-debugging-t1".into()],
        signals: json!([{"turn_id": "seed-debugging-t1", "kind": "correction", "detail": "No, that's wrong: it only fails in parallel"}]),
        evolver_model: "mock-model".into(),
        fingerprint: "seeded-proposal:0".into(),
    })?;
    for step in 1..=20u64 {
        let x = step as f64;
        store.upsert_training_step(TrainingStep {
            step,
            started_at: now - Duration::hours(30) + Duration::minutes(step as i64 * 20),
            finished_at: Some(now - Duration::hours(30) + Duration::minutes(step as i64 * 20 + 3)),
            status: TrainingStatus::Ok,
            loss: Some(1.2 / x.sqrt()),
            mean_reward: Some((x / 20.0 - 0.3).clamp(-1.0, 1.0)),
            success_rate: Some((0.3 + x / 40.0).min(1.0)),
            tokens: Some(4000 + step * 10),
            kl: Some(0.05 / x),
            samples: Some(4),
            skill_generation: Some(0),
            error: None,
            checkpoint: (step % 5 == 0).then(|| format!("step_{step:04}")),
            progress: Some(1.0),
        })?;
    }
    say(&format!(
        "Seeded 2 sessions (4 turns), proposal #{id} `seeded-proposal`, and 20 training steps in {}.",
        home.db_path().display()
    ));
    Ok(())
}
