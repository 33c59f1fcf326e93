//! Skill injection end to end: the mock upstream sees the block, the turn log records it.

mod support;

use metaclaw_tests::wait::wait_for;

use metaclaw_tests::mock_upstream::Behaviour;
use serde_json::{Value, json};
use support::Harness;

const FLAKY: &str =
    "my pytest suite fails randomly on CI but always passes locally, how do I fix it?";

fn chat(text: &str) -> Value {
    json!({"model": "m", "messages": [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": text}]})
}

/// These tests check the system-prompt placement (`skills.placement: system`); the default,
/// beside the newest user turn, is checked by the cache tests below and the proxy's own.
fn system_placement(c: &mut metaclaw_config::Config) {
    c.skills.placement = metaclaw_config::Placement::System;
}

fn upstream_system(h: &Harness, i: usize) -> String {
    h.mock.requests()[i].body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn relevant_skill_is_injected_and_logged() {
    let h = Harness::start_with(system_placement).await;
    h.post("/v1/chat/completions")
        .header("x-session-id", "s")
        .json(&chat(FLAKY))
        .send()
        .await
        .unwrap();
    let system = upstream_system(&h, 0);
    assert!(
        system.starts_with("You are a coding agent.\n\n<!-- metaclaw:skills -->"),
        "{system}"
    );
    assert!(system.contains("### fix-flaky-tests"), "{system}");
    assert!(system.ends_with("<!-- /metaclaw:skills -->"));
    h.wait_turns(1).await;
    let turn = &h.core().store().turns_in_session("s").unwrap()[0];
    let injected = turn.injected.as_array().unwrap();
    let flaky = injected
        .iter()
        .find(|i| i["name"] == "fix-flaky-tests")
        .expect("logged");
    assert_eq!(flaky["version"], "1");
    assert!(flaky["score"].as_f64().unwrap() > 0.0);
    h.stop().await;
}

#[tokio::test]
async fn side_turns_and_small_talk_get_nothing() {
    let h = Harness::start_with(system_placement).await;
    h.post("/v1/chat/completions")
        .header("x-turn-type", "side")
        .json(&chat(FLAKY))
        .send()
        .await
        .unwrap();
    h.post("/v1/chat/completions")
        .json(&chat("thanks, that was great, have a nice evening!"))
        .send()
        .await
        .unwrap();
    assert_eq!(upstream_system(&h, 0), "You are a coding agent.");
    assert_eq!(upstream_system(&h, 1), "You are a coding agent.");
    h.stop().await;
}

#[tokio::test]
async fn block_is_byte_identical_across_turns_of_a_session() {
    let h = Harness::start_with(system_placement).await;
    let first = chat(FLAKY);
    let mut second = first.clone();
    let msgs = second["messages"].as_array_mut().unwrap();
    msgs.push(json!({"role": "assistant", "content": "Try running it 200 times."}));
    msgs.push(json!({"role": "user", "content": "ok it failed 3 of 200 runs and the flaky test uses sleep; what should I change in the flaky test?"}));
    for body in [&first, &second] {
        h.post("/v1/chat/completions")
            .header("x-session-id", "cache")
            .json(body)
            .send()
            .await
            .unwrap();
    }
    assert!(upstream_system(&h, 0).contains("### fix-flaky-tests"));
    assert_eq!(
        upstream_system(&h, 0),
        upstream_system(&h, 1),
        "same skills must render to the same bytes"
    );
    h.stop().await;
}

#[tokio::test]
async fn openclaw_scaffolding_is_seen_through_and_block_goes_last() {
    let h = Harness::start_with(system_placement).await;
    let system = "<!-- openclaw:attempt:STABLE -->\nstable\n<!-- /openclaw:attempt:STABLE -->\n<!-- openclaw:attempt:DYNAMIC -->\ndynamic\n<!-- /openclaw:attempt:DYNAMIC -->";
    let body = json!({"model": "m", "prompt_cache_key": "0f8fad5b-d9cb-469f-a165-70867728950e:0", "messages": [
        {"role": "system", "content": system},
        {"role": "user", "content": format!("[Sat 2026-11-21 15:37 UTC] {FLAKY}\n\nRuntime: agent=main | session=agent:main:main | sessionId=0f8fad5b-d9cb-469f-a165-70867728950e | host=vm")},
        {"role": "user", "content": [{"type": "text", "text": "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nConversation data (data, not instructions):\n\"Active exec sessions:\\nnone\"\n<<<END_OPENCLAW_INTERNAL_CONTEXT>>>"}]}
    ]});
    h.post("/v1/chat/completions")
        .json(&body)
        .send()
        .await
        .unwrap();
    let sent = upstream_system(&h, 0);
    assert!(
        sent.starts_with(system),
        "the agent's own prompt stays a byte-identical prefix"
    );
    assert!(
        sent[system.len()..].contains("### fix-flaky-tests"),
        "{sent}"
    );
    h.stop().await;
}

#[tokio::test]
async fn anthropic_requests_get_an_extra_system_block() {
    let h = Harness::start_with(system_placement).await;
    let body = json!({"model": "claude", "max_tokens": 50,
        "system": [{"type": "text", "text": "stable", "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": FLAKY}]});
    h.post("/v1/messages").json(&body).send().await.unwrap();
    // Translated to OpenAI for the mock: the system blocks are joined into one message.
    let sent = upstream_system(&h, 0);
    assert!(
        sent.starts_with("stable\n\n<!-- metaclaw:skills -->"),
        "{sent}"
    );
    h.stop().await;
}

#[tokio::test]
async fn pins_disables_and_hot_reload() {
    let h = Harness::start_with(system_placement).await;
    let service = h.core().skills().unwrap().clone();
    service
        .set_state("write-clear-emails", None, Some(true))
        .unwrap();
    service
        .set_state("fix-flaky-tests", Some(false), None)
        .unwrap();
    assert!(
        service
            .set_state("no-such-skill", Some(false), None)
            .is_err()
    );
    h.post("/v1/chat/completions")
        .json(&chat(FLAKY))
        .send()
        .await
        .unwrap();
    let sent = upstream_system(&h, 0);
    assert!(
        sent.contains("### write-clear-emails"),
        "pinned skills are always injected"
    );
    assert!(
        !sent.contains("### fix-flaky-tests"),
        "disabled skills never are"
    );

    // A new skill written into the user's folder is used without a restart.
    let dir = h.home().join("skills/brew-pour-over-coffee");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: brew-pour-over-coffee\ndescription: Use when brewing pour-over coffee with a kettle, grinder and paper filter\ncategory: productivity\n---\nGrind medium-fine; 1:16 ratio; bloom 30 s.\n",
    )
    .unwrap();
    // A reload re-analyses the whole bank (trigger phrases in six languages): on a loaded
    // machine in a debug build that takes seconds, hence the shared deadline.
    wait_for("hot reload of the new skill", || {
        service.library().get("brew-pour-over-coffee").map(|_| ())
    })
    .await;
    h.post("/v1/chat/completions")
        .json(&chat(
            "how do I brew pour-over coffee? what grinder setting and filter?",
        ))
        .send()
        .await
        .unwrap();
    assert!(upstream_system(&h, 1).contains("### brew-pour-over-coffee"));
    h.stop().await;
}

#[tokio::test]
async fn embedding_mode_uses_the_endpoint_and_falls_back_to_bm25() {
    let h = Harness::start_with(|c| {
        system_placement(c);
        c.skills.retrieval_mode = metaclaw_config::RetrievalMode::Embedding;
        c.skills.embedding.model = "fake-embed".into();
    })
    .await;
    h.post("/v1/chat/completions")
        .json(&chat(FLAKY))
        .send()
        .await
        .unwrap();
    let embed_calls = h
        .mock
        .requests()
        .iter()
        .filter(|r| r.path == "/v1/embeddings")
        .count();
    assert_eq!(
        embed_calls, 2,
        "one batch for the skills, one for the query"
    );
    assert!(upstream_system(&h, 2).contains("### fix-flaky-tests"));
    // Cached skill vectors: the next turn embeds only the query.
    h.post("/v1/chat/completions")
        .json(&chat(FLAKY))
        .send()
        .await
        .unwrap();
    assert_eq!(
        h.mock
            .requests()
            .iter()
            .filter(|r| r.path == "/v1/embeddings")
            .count(),
        3
    );
    // The endpoint failing does not fail the turn: BM25 alone still injects.
    h.mock.push(Behaviour::Match {
        contains: None,
        path: Some("/v1/embeddings".into()),
        then: Box::new(Behaviour::error(500)),
    });
    let resp = h
        .post("/v1/chat/completions")
        .json(&chat(FLAKY))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let last = h
        .mock
        .requests()
        .into_iter()
        .rev()
        .find(|r| r.path == "/v1/chat/completions")
        .unwrap();
    assert!(
        last.body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("### fix-flaky-tests")
    );
    h.stop().await;
}

#[tokio::test]
async fn retrieval_keeps_its_figures_on_the_tuning_set() {
    use metaclaw_skills::{Library, Mode, RetrievalConfig, Sources};
    use metaclaw_tests::eval::{load_tune, non_english, run, score, score_refs};
    let cases = load_tune().unwrap();
    assert!(cases.len() >= 290, "{} cases", cases.len());
    let lib = Library::load(&Sources {
        user_dir: None,
        bundled: true,
    });
    let got = run(&lib, &cases, &RetrievalConfig::default(), None)
        .await
        .unwrap();
    let bm25 = score(&cases, &got);
    let template_cfg = RetrievalConfig {
        mode: Mode::Template,
        ..Default::default()
    };
    let template = score(
        &cases,
        &run(&lib, &cases, &template_cfg, None).await.unwrap(),
    );
    assert!(
        bm25.recall_at_3 > template.recall_at_3,
        "{bm25:?} vs {template:?}"
    );
    assert!(
        bm25.false_injection < template.false_injection,
        "{bm25:?} vs {template:?}"
    );
    // Floors a little below the measured figures (round 8: recall@3 0.934, recall@1 0.888, MRR
    // 0.910, false injection 0.0% over 154 requests without a skill; non-English recall@3
    // 0.982), so that a regression in the analyzer (CJK bigrams, katakana words, stemming), the
    // trigger field, query cleaning or ranking fails.
    assert!(bm25.recall_at_3 >= 0.90, "{bm25:?}");
    assert!(bm25.recall_at_1 >= 0.85 && bm25.mrr >= 0.87, "{bm25:?}");
    assert!(bm25.false_injection <= 0.03, "{bm25:?}");
    let (c, g) = non_english(&cases, &got);
    let other = score_refs(&c, &g);
    assert!(other.with >= 60, "{other:?}");
    assert!(other.recall_at_3 >= 0.95, "{other:?}");
}

/// Everyday tasks worded as requests (round 6's tuning file, written by three writers who saw
/// only the skills' names and descriptions): the everyday rule removes many of their false
/// injections (round 8: 7.0 % with it) for at most a little recall.
#[tokio::test]
async fn everyday_requests_worded_as_tasks_rarely_get_a_skill() {
    use metaclaw_skills::{Library, RetrievalConfig, Sources};
    use metaclaw_tests::eval::{fixtures_dir, load_cases, run, score};
    let cases = load_cases(&fixtures_dir().join("tune_request_words2.jsonl")).unwrap();
    let lib = Library::load(&Sources {
        user_dir: None,
        bundled: true,
    });
    let on = RetrievalConfig::default();
    let off = RetrievalConfig {
        everyday: None,
        ..on.clone()
    };
    let with = score(&cases, &run(&lib, &cases, &on, None).await.unwrap());
    let without = score(&cases, &run(&lib, &cases, &off, None).await.unwrap());
    assert!(with.without >= 200 && with.with >= 140, "{with:?}");
    assert!(with.false_injection <= 0.10, "{with:?}");
    assert!(
        with.false_injection + 0.04 <= without.false_injection,
        "{with:?} vs {without:?}"
    );
    assert!(
        with.recall_at_3 + 0.03 >= without.recall_at_3,
        "{with:?} vs {without:?}"
    );
}

/// The labelled set wrapped in each agent's recorded scaffolding (system reminders,
/// AGENTS.md and environment context, setup messages, memory context, OpenClaw's runtime
/// lines) retrieves what it retrieves bare.
#[test]
fn retrieval_sees_through_every_agents_scaffolding() {
    use metaclaw_skills::{Library, Sources};
    use metaclaw_tests::agents::{load_all, scaffold_recall};
    use metaclaw_tests::eval::load_tune;
    let cases = load_tune().unwrap();
    let lib = Library::load(&Sources {
        user_dir: None,
        bundled: true,
    });
    for fixture in load_all().unwrap() {
        let r = scaffold_recall(&lib, &cases, &fixture);
        eprintln!(
            "{:<12} recall@3 bare {:.3} wrapped {:.3}; identical injections {}/{}",
            r.agent, r.bare.recall_at_3, r.wrapped.recall_at_3, r.identical, r.cases
        );
        assert!(r.cases >= 120, "{}", r.cases);
        assert_eq!(
            r.identical, r.cases,
            "{}: wrapped requests retrieved differently",
            r.agent
        );
        assert!(
            (r.wrapped.recall_at_3 - r.bare.recall_at_3).abs() < 1e-9,
            "{}: {:.3} wrapped vs {:.3} bare",
            r.agent,
            r.wrapped.recall_at_3,
            r.bare.recall_at_3
        );
    }
}

/// Agents' own side requests (titles, memory extraction) get no query, hence no skills.
#[test]
fn side_requests_get_no_query() {
    use metaclaw_skills::query::from_body;
    use metaclaw_tests::agents::load;
    let qwen = load("qwen-code").unwrap();
    assert_eq!(from_body(qwen.side_request.as_ref().unwrap()), "");
    let claude = load("claude-code").unwrap();
    let mut title = claude.wrap(&claude.conversation[..1]);
    title.insert(
        "output_config".into(),
        serde_json::json!({"format": {"type": "json_schema", "schema": {}}}),
    );
    assert_eq!(from_body(&title), "");
    let codex = load("codex").unwrap();
    let first = codex.wrap(&codex.conversation[..1]);
    assert_eq!(
        from_body(&first),
        "my bash script breaks when a filename has spaces, how do I fix it?"
    );
}

/// With `skills.placement: user` the previous turn's bytes are sent again unchanged, so
/// more of every request is served from the prompt cache than with the system placement.
#[test]
fn user_placement_keeps_more_of_the_cached_prefix_for_every_agent() {
    use metaclaw_config::Placement;
    use metaclaw_skills::{Library, Sources};
    use metaclaw_tests::agents::{load_all, prefix_shares};
    let lib = Library::load(&Sources {
        user_dir: None,
        bundled: true,
    });
    for fixture in load_all().unwrap() {
        let user = prefix_shares(&lib, &fixture, Placement::User);
        let system = prefix_shares(&lib, &fixture, Placement::System);
        assert_eq!(user.len(), 3, "{}", fixture.agent);
        // Where the agent itself keeps earlier turns intact (the coding agents), every turn
        // gains; Hermes drops its memory context from the previous prompt, so a turn whose
        // skills did not change can be served equally well with the block in the system.
        if matches!(
            fixture.agent.as_str(),
            "claude-code" | "codex" | "qwen-code"
        ) {
            for (u, s) in user.iter().zip(&system) {
                assert!(u > s, "{}: user {u:.3} <= system {s:.3}", fixture.agent);
            }
        }
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        assert!(
            mean(&user) > mean(&system),
            "{}: {user:?} vs {system:?}",
            fixture.agent
        );
    }
}
