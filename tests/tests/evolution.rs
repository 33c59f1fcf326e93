//! Skill evolution end to end, with the mock upstream playing the evolver.

mod support;

use metaclaw_tests::wait::wait_for;

use metaclaw_core::EvolutionTrigger;
use metaclaw_store::ProposalStatus;
use metaclaw_tests::mock_upstream::Behaviour;
use serde_json::{Value, json};
use support::Harness;

const SECRET: &str = "sk-proj-abcdefghijklmnopqrstuvwxyz0123";

fn evolver_answer(proposals: Value) -> Behaviour {
    // Only the evolver's request lists the existing skills.
    Behaviour::Match {
        contains: Some("## Existing skills".into()),
        path: None,
        then: Box::new(Behaviour::reply(
            json!({"proposals": proposals}).to_string(),
        )),
    }
}

fn units_proposal() -> Value {
    json!([{
        "name": "convert-units-precisely",
        "description": "Use when converting between miles and kilometres or other imperial and metric units, giving two decimals",
        "category": "productivity",
        "body": "# Convert units precisely\n\n## Steps\n1. Use 1 mile = 1.609344 km.\n2. Round to two decimals.\n\n## Anti-patterns\n- Rounding the factor to 1.6.",
        "reason": "The user corrected a sloppy conversion.",
        "turns": []
    }])
}

fn chat(messages: Value) -> Value {
    json!({"model": "m", "messages": messages})
}

/// What the last agent request carried to the upstream (skills go beside the newest user
/// turn by default, `skills.placement: user`).
fn system_sent(h: &Harness) -> String {
    let last = h
        .mock
        .requests()
        .into_iter()
        .rev()
        .find(|r| {
            r.path == "/v1/chat/completions" && !r.body.to_string().contains("## Existing skills")
        })
        .unwrap();
    last.body["messages"].to_string()
}

#[tokio::test]
async fn correction_to_proposal_to_approval_to_rollback() {
    let h = Harness::start().await;
    let evo = h.core().evolution().unwrap().clone();
    h.mock.push(evolver_answer(units_proposal()));
    let first = format!("my api key is {SECRET}; how far is 10 miles in km?");
    let t1 = json!([{"role": "system", "content": "You are helpful."}, {"role": "user", "content": first}]);
    h.post("/v1/chat/completions")
        .header("x-session-id", "units")
        .json(&chat(t1))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let t2 = json!([{"role": "system", "content": "You are helpful."}, {"role": "user", "content": first},
        {"role": "assistant", "content": "About 16 km."},
        {"role": "user", "content": "No, that's wrong: I asked for two decimals, 16.09 km"}]);
    h.post("/v1/chat/completions")
        .header("x-session-id", "units")
        .header("x-session-done", "true")
        .json(&chat(t2))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();

    // The session end triggers the evolver in the background; a pending proposal appears.
    let proposal = wait_for("a proposal distilled from the correction", || {
        evo.proposals(Some(ProposalStatus::Pending))
            .unwrap()
            .into_iter()
            .next()
    })
    .await;
    assert_eq!(proposal.skill_name, "convert-units-precisely");
    assert_eq!(proposal.session_id.as_deref(), Some("units"));
    assert_eq!(proposal.evolver_model, "mock-model");
    let turn_ids = h.core().store().turn_ids_in_session("units").unwrap();
    assert_eq!(
        proposal.turn_ids,
        vec![turn_ids[0].clone()],
        "the corrected turn is the provenance"
    );
    assert!(
        proposal.signals.to_string().contains("correction"),
        "{}",
        proposal.signals
    );
    // The transcript reached the evolver with the secret redacted.
    let evolver_req = h
        .mock
        .requests()
        .into_iter()
        .find(|r| r.body.to_string().contains("## Existing skills"))
        .unwrap();
    let sent = evolver_req.body.to_string();
    assert!(
        sent.contains("two decimals") && !sent.contains(SECRET),
        "secret leaked to the evolver"
    );
    assert_eq!(evolver_req.body["response_format"]["type"], "json_schema");

    // Pending proposals are not injected.
    let ask = json!([{"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "convert 26.2 miles to kilometres with two decimals please"}]);
    h.post("/v1/chat/completions")
        .json(&chat(ask.clone()))
        .send()
        .await
        .unwrap();
    assert!(!system_sent(&h).contains("### convert-units-precisely"));
    let generation_before = h.core().skills().unwrap().generation();

    // Approved: written to the user's folder and injected on the next related request.
    let v = evo.approve(proposal.id, None).unwrap();
    assert_eq!(
        v.version, 2,
        "version 1 records that the skill did not exist"
    );
    assert!(
        h.home()
            .join("skills/convert-units-precisely/SKILL.md")
            .exists()
    );
    h.post("/v1/chat/completions")
        .header("x-session-id", "after")
        .json(&chat(ask.clone()))
        .send()
        .await
        .unwrap();
    assert!(system_sent(&h).contains("### convert-units-precisely"));
    h.wait_turns(4).await;
    let after = &h.core().store().turns_in_session("after").unwrap()[0];
    assert!(
        after.skill_generation.unwrap() > generation_before,
        "turns record the generation they ran under"
    );

    // Rolling back to version 1 removes it again.
    let history = evo.history("convert-units-precisely").unwrap();
    assert_eq!(
        history.iter().map(|v| v.version).collect::<Vec<_>>(),
        [1, 2]
    );
    evo.rollback("convert-units-precisely", 1).unwrap();
    assert!(
        !h.home()
            .join("skills/convert-units-precisely/SKILL.md")
            .exists()
    );
    h.post("/v1/chat/completions")
        .json(&chat(ask))
        .send()
        .await
        .unwrap();
    assert!(!system_sent(&h).contains("### convert-units-precisely"));
    h.stop().await;
}

async fn session_with_correction(h: &Harness, id: &str) {
    let msgs = json!([{"role": "user", "content": "rename the variable"},
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": "that didn't work, you forgot the tests"}]);
    h.post("/v1/chat/completions")
        .header("x-session-id", id)
        .header("x-turn-type", "main")
        .json(&chat(
            json!([{"role": "user", "content": "rename the variable"}]),
        ))
        .send()
        .await
        .unwrap();
    h.post("/v1/chat/completions")
        .header("x-session-id", id)
        .json(&chat(msgs))
        .send()
        .await
        .unwrap();
    h.wait_turns(0).await;
    h.core().store().flush().unwrap();
}

#[tokio::test]
async fn evolver_failures_are_recorded_and_write_nothing() {
    let h = Harness::start_with(|c| c.skills.auto_evolve = false).await;
    let evo = h.core().evolution().unwrap().clone();
    session_with_correction(&h, "bad").await;
    for (behaviour, needle) in [
        (
            Behaviour::reply("I think the user wanted the tests renamed too."),
            "could not be parsed",
        ),
        (
            Behaviour::reply("{\"proposals\": [{\"name\": 3}"),
            "could not be parsed",
        ),
        (Behaviour::error(500), "HTTP 500"),
    ] {
        // Prose and broken JSON get one retry, and the client retries a 500 twice: script
        // enough answers for either; the reset below drops the unused ones.
        let wrap = |b: Behaviour| Behaviour::Match {
            contains: Some("##".into()),
            path: None,
            then: Box::new(b),
        };
        for _ in 0..3 {
            h.mock.push(wrap(behaviour.clone()));
        }
        let report = evo.distil("bad", EvolutionTrigger::Manual).await.unwrap();
        assert_eq!(report.status, metaclaw_store::EvolutionRunStatus::Failed);
        assert!(
            report.error.as_deref().unwrap().contains(needle),
            "{:?}",
            report.error
        );
        h.mock.reset();
    }
    assert!(evo.proposals(None).unwrap().is_empty());
    assert!(
        !h.home()
            .join("skills")
            .read_dir()
            .map(|mut d| d.next().is_some())
            .unwrap_or(false)
    );
    let failure = h.core().store().last_evolution_failure().unwrap().unwrap();
    assert!(failure.error.unwrap().contains("HTTP 500"));
    h.stop().await;
}

#[tokio::test]
async fn an_upstream_without_structured_output_is_asked_for_plain_json() {
    let h = Harness::start_with(|c| c.skills.auto_evolve = false).await;
    let evo = h.core().evolution().unwrap().clone();
    session_with_correction(&h, "plain").await;
    let refusal = json!({"error": {"message": "response_format of type json_schema is not supported",
        "type": "invalid_request_error"}});
    h.mock.push(Behaviour::Match {
        contains: Some("## Existing skills".into()),
        path: None,
        then: Box::new(Behaviour::error_with(400, refusal, &[])),
    });
    h.mock.push(evolver_answer(json!([])));
    let report = evo.distil("plain", EvolutionTrigger::Manual).await.unwrap();
    assert_eq!(
        report.status,
        metaclaw_store::EvolutionRunStatus::Ok,
        "{:?}",
        report.error
    );
    let sent: Vec<Value> = h
        .mock
        .requests()
        .into_iter()
        .filter(|r| r.body.to_string().contains("## Existing skills"))
        .map(|r| r.body)
        .collect();
    assert_eq!(sent.len(), 2, "the refusal is not retried as is");
    assert_eq!(sent[0]["response_format"]["type"], "json_schema");
    assert!(sent[1].get("response_format").is_none(), "{}", sent[1]);
    assert_eq!(sent[0]["messages"], sent[1]["messages"]);
    h.stop().await;
}

#[tokio::test]
async fn duplicates_become_updates_and_rejections_stick() {
    let h = Harness::start_with(|c| c.skills.auto_evolve = false).await;
    let evo = h.core().evolution().unwrap().clone();
    session_with_correction(&h, "dup").await;
    let near_duplicate = json!([{
        "name": "handle-intermittent-test-failures",
        "description": "Use when a test passes and fails intermittently, fails randomly on CI but passes locally, depends on test order or timing",
        "category": "debugging",
        "body": "# Flaky tests\n\n## Steps\n1. Check for shared temp directories first.\n\n## Anti-patterns\n- Retrying blindly.",
        "reason": "seen twice", "turns": []
    }]);
    h.mock.push(evolver_answer(near_duplicate.clone()));
    let report = evo.distil("dup", EvolutionTrigger::Manual).await.unwrap();
    let p = evo
        .proposals(Some(ProposalStatus::Pending))
        .unwrap()
        .into_iter()
        .find(|p| report.proposals.contains(&p.id))
        .unwrap();
    assert_eq!(
        p.skill_name, "fix-flaky-tests",
        "a near duplicate updates the existing skill"
    );
    assert_eq!(p.kind, metaclaw_store::ProposalKind::Update);
    assert!(
        p.diff
            .as_deref()
            .unwrap()
            .contains("+1. Check for shared temp directories first.")
    );

    evo.reject(p.id, Some("not general enough".into())).unwrap();
    h.mock.push(evolver_answer(near_duplicate));
    let again = evo.distil("dup", EvolutionTrigger::Manual).await.unwrap();
    assert!(
        again.proposals.is_empty(),
        "a rejected proposal is not made again: {again:?}"
    );
    assert!(again.dropped.iter().any(|d| d.reason.contains("rejected")));
    // The rejected names reach the evolver so it stops proposing them.
    let last = h
        .mock
        .requests()
        .into_iter()
        .rev()
        .find(|r| r.body.to_string().contains("## Existing skills"))
        .unwrap();
    assert!(
        last.body
            .to_string()
            .contains("Rejected by the user before")
    );

    // An approved edit by the user is a version authored by the user, then undo restores.
    h.mock.push(evolver_answer(units_proposal()));
    let r = evo.distil("dup", EvolutionTrigger::Manual).await.unwrap();
    let id = r.proposals[0];
    let bad_edit = "---\nname: other-name\ndescription: x\n---\nbody";
    assert!(
        evo.approve(id, Some(bad_edit.into()))
            .unwrap_err()
            .to_string()
            .contains("must stay")
    );
    let edited = evo
        .proposals(None)
        .unwrap()
        .into_iter()
        .find(|p| p.id == id)
        .unwrap()
        .content
        .replace("two decimals", "three decimals");
    let v = evo.approve(id, Some(edited)).unwrap();
    assert_eq!(v.author, metaclaw_store::Author::User);
    let text =
        std::fs::read_to_string(h.home().join("skills/convert-units-precisely/SKILL.md")).unwrap();
    assert!(text.contains("three decimals"));
    evo.undo(id).unwrap();
    assert!(
        !h.home()
            .join("skills/convert-units-precisely/SKILL.md")
            .exists()
    );
    h.stop().await;
}

#[tokio::test]
async fn feedback_is_a_signal_and_every_n_turns_triggers() {
    let h = Harness::start_with(|c| c.skills.evolution_every_n_turns = 2).await;
    let evo = h.core().evolution().unwrap().clone();
    h.mock.push(evolver_answer(json!([])));
    for i in 0..2 {
        let msgs =
            json!([{"role": "user", "content": format!("write release notes for version {i}")}]);
        h.post("/v1/chat/completions")
            .header("x-session-id", "fb")
            .json(&chat(msgs))
            .send()
            .await
            .unwrap();
    }
    h.wait_turns(2).await;
    let turn = h.core().store().turn_ids_in_session("fb").unwrap()[0].clone();
    evo.feedback(&turn, -1, Some("too long".into())).unwrap();
    assert!(evo.feedback("no-such-turn", 1, None).is_err());
    assert!(evo.feedback(&turn, 5, None).is_err());
    // Two main turns: the every-N trigger ran (it may have run before the feedback landed).
    let runs = wait_for("the every-N-turns evolution run", || {
        let runs = h.core().store().evolution_runs(10).unwrap();
        (!runs.is_empty()).then_some(runs)
    })
    .await;
    assert_eq!(runs[0].trigger, EvolutionTrigger::EveryNTurns);
    h.mock.push(evolver_answer(json!([])));
    let report = evo.distil("fb", EvolutionTrigger::Manual).await.unwrap();
    assert!(
        report
            .signals
            .iter()
            .any(|s| s.kind == metaclaw_evolve::SignalKind::NegativeFeedback
                && s.detail == "too long")
    );
    h.stop().await;
}

#[tokio::test]
async fn sessions_left_open_by_a_previous_run_are_closed_at_start() {
    use metaclaw_config::Home;
    use metaclaw_core::CoreOptions;
    let mock = metaclaw_tests::mock_upstream::MockUpstream::start()
        .await
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut config = support::config_for(&mock);
    config.skills.auto_evolve = false;
    let start = |config| {
        let mut opts = CoreOptions::new(Home::at(home.path()), config);
        opts.bind = Some("127.0.0.1:0".parse().unwrap());
        metaclaw_core::start(opts)
    };
    let first = start(config.clone()).await.unwrap();
    reqwest::Client::new()
        .post(format!("http://{}/v1/chat/completions", first.addr()))
        .bearer_auth(support::PROXY_KEY)
        .header("x-session-id", "left-open")
        .json(&chat(json!([{"role": "user", "content": "hello"}])))
        .send()
        .await
        .unwrap();
    // The turn is committed (and its session row exists) before the core stops.
    wait_for("the turn to be recorded", || {
        first.store().flush().unwrap();
        (first.store().turn_count().unwrap() >= 1).then_some(())
    })
    .await;
    first.shutdown().await.unwrap();
    let second = start(config).await.unwrap();
    let ended = wait_for("the session left open to be closed at start-up", || {
        second.store().flush().unwrap();
        second
            .store()
            .session("left-open")
            .unwrap()
            .and_then(|s| s.end_reason)
    })
    .await;
    assert_eq!(ended, metaclaw_domain::SessionEndReason::Shutdown);
    second.shutdown().await.unwrap();
    mock.stop().await;
}
