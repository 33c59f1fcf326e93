//! Agents as first-class identities, end to end against the mock upstream: each agent's own
//! key names its turns, its own skills folder is layered over the shared one, its learning
//! switches decide distillation and RL samples, and the dashboard filters by agent without
//! ever showing a key.

mod support;

use std::path::Path;

use metaclaw_config::{AgentConfig, Mode};
use metaclaw_core::EvolutionTrigger;
use metaclaw_store::{EvolutionRunStatus, ProposalStatus, SampleState};
use metaclaw_tests::mock_upstream::Behaviour;
use metaclaw_tests::wait::wait_for;
use serde_json::{Value, json};
use support::{Harness, PROXY_KEY};

const KEY_A: &str = "mc-agent-a-0123456789abcdef0123456789";
const KEY_B: &str = "mc-agent-b-fedcba9876543210fedcba9876";
const REQUEST: &str = "my bash script breaks when a filename has spaces, how do I fix it?";

fn skill(name: &str, body: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: Use when a bash script breaks on a filename with spaces; quote every variable expansion\n---\n# Filenames with spaces\n\n{body}\n"
    )
}

fn write_skill(dir: &Path, name: &str, body: &str) {
    std::fs::create_dir_all(dir.join(name)).unwrap();
    std::fs::write(dir.join(name).join("SKILL.md"), skill(name, body)).unwrap();
}

/// Two agents with their own keys: `claude-code` (A) and `codex` (B), shared skills in
/// `shared`, A's own in `own_a`; only these skills (no bundled bank).
fn two_agents(
    c: &mut metaclaw_config::Config,
    shared: &Path,
    own_a: &Path,
    edit_b: impl FnOnce(&mut AgentConfig),
) {
    c.skills.include_bundled = false;
    // BM25 scores are small over a library of two or three skills (every term is common).
    c.skills.min_score = 0.1;
    c.skills.dir = shared.display().to_string();
    c.agents.insert(
        "claude-code".into(),
        AgentConfig {
            api_key: KEY_A.into(),
            skills_dir: own_a.display().to_string(),
            ..AgentConfig::default()
        },
    );
    let mut b = AgentConfig {
        api_key: KEY_B.into(),
        ..AgentConfig::default()
    };
    edit_b(&mut b);
    c.agents.insert("codex".into(), b);
}

async fn send(h: &Harness, key: &str, session: &str, messages: Value) -> reqwest::Response {
    let resp = h
        .client
        .post(format!("{}/v1/chat/completions", h.base))
        .bearer_auth(key)
        .header("x-session-id", session)
        .json(&json!({"model": "m", "messages": messages}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    resp
}

fn user(text: &str) -> Value {
    json!([{"role": "system", "content": "You are a coding agent."}, {"role": "user", "content": text}])
}

/// What the upstream received for the agent request of `nth` (0-based) turn.
fn sent(h: &Harness, nth: usize) -> String {
    h.mock.requests()[nth].body["messages"].to_string()
}

#[tokio::test]
async fn each_agent_is_recorded_under_its_key_and_sees_its_own_skills() {
    let shared = tempfile::tempdir().unwrap();
    let own_a = tempfile::tempdir().unwrap();
    write_skill(
        shared.path(),
        "bash-spaces",
        "SHARED VERSION: quote \"$file\".",
    );
    write_skill(
        own_a.path(),
        "bash-spaces",
        "AGENT A VERSION: use arrays and quote.",
    );
    write_skill(
        own_a.path(),
        "a-only-find-print0",
        "AGENT A ONLY: find -print0 | xargs -0 for filenames with spaces.",
    );
    let (s, a) = (shared.path().to_owned(), own_a.path().to_owned());
    let h = Harness::start_with(|c| two_agents(c, &s, &a, |_| {})).await;

    send(&h, KEY_A, "sa", user(REQUEST)).await;
    send(&h, KEY_B, "sb", user(REQUEST)).await;
    // The shared key keeps working, for the default agent.
    send(&h, PROXY_KEY, "sd", user(REQUEST)).await;
    // An unknown key is refused as before.
    let refused = h
        .client
        .post(format!("{}/v1/chat/completions", h.base))
        .bearer_auth("mc-not-a-key")
        .json(&json!({"model": "m", "messages": user(REQUEST)}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);

    // A's own skill is injected for A, in its own version; never for B, who gets the shared one.
    let (to_a, to_b) = (sent(&h, 0), sent(&h, 1));
    assert!(to_a.contains("AGENT A VERSION"), "{to_a}");
    assert!(to_a.contains("AGENT A ONLY"), "{to_a}");
    assert!(!to_a.contains("SHARED VERSION"), "{to_a}");
    assert!(to_b.contains("SHARED VERSION"), "{to_b}");
    assert!(!to_b.contains("AGENT A"), "{to_b}");
    // No agent's key goes upstream: the proxy sends its own upstream credential.
    for r in h.mock.requests() {
        let auth = r.headers.get("authorization").cloned().unwrap_or_default();
        assert!(!auth.contains(KEY_A) && !auth.contains(KEY_B), "{auth}");
    }

    h.wait_turns(3).await;
    let store = h.core().store();
    let agent_of = |session: &str| store.turns_in_session(session).unwrap()[0].agent.clone();
    assert_eq!(agent_of("sa"), "claude-code");
    assert_eq!(agent_of("sb"), "codex");
    assert_eq!(agent_of("sd"), "default");

    let api = h.api().never_echo(KEY_A).never_echo(KEY_B);
    let only = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        only(&api.get("/api/sessions?agent=claude-code").await),
        ["sa"]
    );
    assert_eq!(only(&api.get("/api/sessions?agent=codex").await), ["sb"]);
    assert_eq!(api.get("/api/sessions").await.as_array().unwrap().len(), 3);

    let skills_a = api.get("/api/skills?agent=claude-code").await;
    let mine: Vec<&str> = skills_a
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["agent"] == "claude-code")
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(mine.len(), 2, "{skills_a}");
    let skills_b = api.get("/api/skills?agent=codex").await;
    assert_eq!(skills_b.as_array().unwrap().len(), 1, "{skills_b}");

    // Agents are listed with masked keys; settings and config never show one whole.
    let agents = api.get("/api/agents").await;
    let a = agents
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "claude-code")
        .unwrap();
    assert_eq!(a["key"], "mc-…6789");
    api.get("/api/settings").await;
    api.get("/api/config").await;
    let chart = api
        .req(
            reqwest::Method::GET,
            "/api/charts/turns_per_day.svg?agent=codex",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(chart.status(), 200);
    h.stop().await;
}

#[tokio::test]
async fn turning_skills_off_for_one_agent_applies_live_to_it_alone() {
    let shared = tempfile::tempdir().unwrap();
    let own_a = tempfile::tempdir().unwrap();
    write_skill(
        shared.path(),
        "bash-spaces",
        "SHARED VERSION: quote \"$file\".",
    );
    let (s, a) = (shared.path().to_owned(), own_a.path().to_owned());
    let h = Harness::start_with(|c| two_agents(c, &s, &a, |_| {})).await;
    h.api().set("agents.codex.skills", json!(false)).await;
    send(&h, KEY_A, "sa", user(REQUEST)).await;
    send(&h, KEY_B, "sb", user(REQUEST)).await;
    assert!(sent(&h, 0).contains("SHARED VERSION"));
    assert!(!sent(&h, 1).contains("metaclaw:skills"), "{}", sent(&h, 1));
    let config = std::fs::read_to_string(h.home().join("config.yaml")).unwrap();
    assert!(config.contains("skills: false"), "{config}");
    h.stop().await;
}

fn evolver_answer(name: &str) -> Behaviour {
    Behaviour::Match {
        contains: Some("## Existing skills".into()),
        path: None,
        then: Box::new(Behaviour::reply(
            json!({"proposals": [{
                "name": name,
                "description": "Use when renaming files whose names contain spaces in a bash loop",
                "category": "coding",
                "body": "# Rename safely\n\n## Steps\n1. Quote \"$f\" in every mv.\n\n## Anti-patterns\n- Unquoted $f.",
                "reason": "The user corrected an unquoted mv.",
                "turns": []
            }]})
            .to_string(),
        )),
    }
}

/// A session with a correction, which is what distillation learns from.
async fn corrected_session(h: &Harness, key: &str, session: &str) {
    send(h, key, session, user(REQUEST)).await;
    let mut follow = user(REQUEST);
    let msgs = follow.as_array_mut().unwrap();
    msgs.push(json!({"role": "assistant", "content": "Use mv $f $f.bak"}));
    msgs.push(json!({"role": "user", "content": "No, that's wrong: it still breaks, you forgot the quotes"}));
    send(h, key, session, follow).await;
}

#[tokio::test]
async fn proposals_go_to_their_agents_folder_until_shared_and_learning_off_distils_nothing() {
    let shared = tempfile::tempdir().unwrap();
    let own_a = tempfile::tempdir().unwrap();
    let (s, a) = (shared.path().to_owned(), own_a.path().to_owned());
    let h = Harness::start_with(|c| {
        two_agents(c, &s, &a, |b| b.learning = false);
        c.skills.auto_evolve = false;
    })
    .await;
    let evo = h.core().evolution().unwrap().clone();

    corrected_session(&h, KEY_A, "sa").await;
    corrected_session(&h, KEY_B, "sb").await;
    h.wait_turns(4).await;

    // B opted out of learning: its session is not sent to the evolver.
    let before = h.mock.requests().len();
    let b = evo.distil("sb", EvolutionTrigger::Manual).await.unwrap();
    assert_eq!(b.status, EvolutionRunStatus::Skipped);
    assert!(b.error.unwrap().contains("learning is off"));
    assert_eq!(h.mock.requests().len(), before);

    h.mock.push(evolver_answer("rename-with-spaces"));
    let a_run = evo.distil("sa", EvolutionTrigger::Manual).await.unwrap();
    assert_eq!(a_run.proposals.len(), 1, "{:?}", a_run.error);
    let id = a_run.proposals[0];
    let api = h.api().never_echo(KEY_A).never_echo(KEY_B);
    let listed = api.get("/api/proposals?agent=claude-code").await;
    assert_eq!(listed[0]["id"], id);
    assert_eq!(listed[0]["agent"], "claude-code");
    assert!(
        api.get("/api/proposals?agent=codex")
            .await
            .as_array()
            .unwrap()
            .is_empty()
    );

    // Approved, it lands in A's own folder, and A's next turn gets it; B's does not.
    api.post(&format!("/api/proposals/{id}/approve"), json!({}))
        .await;
    let in_a = own_a.path().join("rename-with-spaces").join("SKILL.md");
    let in_shared = shared.path().join("rename-with-spaces").join("SKILL.md");
    assert!(in_a.exists() && !in_shared.exists());
    let ask = "how do I rename files with spaces in a bash loop with mv?";
    let n = h.mock.requests().len();
    send(&h, KEY_A, "sa2", user(ask)).await;
    send(&h, KEY_B, "sb2", user(ask)).await;
    assert!(
        sent(&h, n).contains("rename-with-spaces"),
        "{}",
        sent(&h, n)
    );
    assert!(!sent(&h, n + 1).contains("rename-with-spaces"));

    // Shared with all agents: the skill moves to the shared folder, and B gets it too.
    let shared_row = api
        .post(&format!("/api/proposals/{id}/share"), json!({}))
        .await;
    assert_eq!(shared_row["agent"], Value::Null);
    assert!(!in_a.exists() && in_shared.exists());
    let n = h.mock.requests().len();
    send(&h, KEY_B, "sb3", user(ask)).await;
    assert!(
        sent(&h, n).contains("rename-with-spaces"),
        "{}",
        sent(&h, n)
    );
    assert_eq!(
        evo.proposals(Some(ProposalStatus::Approved)).unwrap().len(),
        1
    );
    h.stop().await;
}

mod rl {
    use std::time::Duration;

    use super::*;
    use tinker_client::fake::{FakeServer, Knobs};

    const TOKENIZER: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/rl/tiny-qwen3-tokenizer.json"
    );

    async fn wait_serving(h: &Harness) {
        let api = h.api();
        for _ in 0..400 {
            let s = api.get("/api/rl").await;
            if s["phase"] == "serving" && s["sampler"].is_string() {
                return;
            }
            assert_ne!(s["phase"], "failed", "{s}");
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("the policy did not start");
    }

    #[tokio::test]
    async fn an_agent_with_learning_off_never_becomes_rl_samples() {
        let fake = FakeServer::start_with(Knobs {
            vocab_size: 362,
            ..Knobs::default()
        })
        .await;
        let url = fake.url();
        let shared = tempfile::tempdir().unwrap();
        let own_a = tempfile::tempdir().unwrap();
        let (s, a) = (shared.path().to_owned(), own_a.path().to_owned());
        let h = Harness::start_with(move |c| {
            two_agents(c, &s, &a, |b| b.learning = false);
            c.mode = Mode::Rl;
            c.skills.enabled = false;
            c.rl.model = "Qwen/Qwen3-4B-Instruct-2507".into();
            c.rl.base_url = url;
            c.rl.tokenizer_path = TOKENIZER.into();
            c.rl.batch_size = 8;
            c.rl.max_new_tokens = 8;
            c.rl.manual_train_trigger = true;
        })
        .await;
        wait_serving(&h).await;
        send(
            &h,
            KEY_B,
            "sb",
            json!([{"role": "user", "content": "beta: hi"}]),
        )
        .await;
        send(
            &h,
            KEY_A,
            "sa",
            json!([{"role": "user", "content": "alpha: hi"}]),
        )
        .await;
        h.wait_turns(2).await;
        let store = h.core().store();
        let a_turn = store.turns_in_session("sa").unwrap()[0].id.clone();
        let b_turn = store.turns_in_session("sb").unwrap()[0].id.clone();
        // A's sample is written after its turn (B's turn came first): once A's is there,
        // B would have had its chance.
        wait_for("agent A's sample", || {
            store.flush().unwrap();
            (!store.samples_for_turn(&a_turn).unwrap().is_empty()).then_some(())
        })
        .await;
        assert!(store.samples_for_turn(&b_turn).unwrap().is_empty());

        // Opting A out later takes its waiting samples out of training.
        h.api()
            .set("agents.claude-code.train_shared_policy", json!(false))
            .await;
        wait_for("A's samples skipped", || {
            store.flush().unwrap();
            store
                .samples_for_turn(&a_turn)
                .unwrap()
                .iter()
                .all(|s| s.state == SampleState::Skipped)
                .then_some(())
        })
        .await;
        h.stop().await;
        drop(fake);
    }
}

/// Under subscription pass-through the bearer is the user's own sign-in and goes upstream
/// untouched; the agent is named by its key in `x-metaclaw-key`, which never goes upstream.
#[tokio::test]
async fn pass_through_names_the_agent_by_its_own_header() {
    const OAUTH: &str = "sk-ant-oat01-fake-subscription-token";
    let shared = tempfile::tempdir().unwrap();
    let own_a = tempfile::tempdir().unwrap();
    let (s, a) = (shared.path().to_owned(), own_a.path().to_owned());
    let h = Harness::start_with(|c| {
        two_agents(c, &s, &a, |_| {});
        c.llm.auth_method = metaclaw_config::AuthMethod::Passthrough;
        c.llm.api_key.clear();
    })
    .await;
    for (session, key) in [("sa", Some(KEY_A)), ("sd", None)] {
        let mut req = h
            .client
            .post(format!("{}/v1/chat/completions", h.base))
            .bearer_auth(OAUTH)
            .header("x-session-id", session)
            .json(&json!({"model": "m", "messages": user(REQUEST)}));
        if let Some(key) = key {
            req = req.header("x-metaclaw-key", key);
        }
        assert_eq!(req.send().await.unwrap().status(), 200);
    }
    for r in h.mock.requests() {
        assert_eq!(
            r.headers.get("authorization").map(String::as_str),
            Some(format!("Bearer {OAUTH}").as_str())
        );
        assert!(!r.headers.contains_key("x-metaclaw-key"), "{:?}", r.headers);
    }
    h.wait_turns(2).await;
    let store = h.core().store();
    assert_eq!(
        store.turns_in_session("sa").unwrap()[0].agent,
        "claude-code"
    );
    assert_eq!(store.turns_in_session("sd").unwrap()[0].agent, "default");
    h.stop().await;
}
