//! MetaClaw-Bench through the product: a small synthetic bench in the public layout
//! (`tests/fixtures/metaclaw-bench-mini`) run by the core through its proxy against the mock
//! upstream. The scripted answers make known rounds pass and others fail, so the table's
//! figures are checked against a hand computation.

mod support;

use std::time::{Duration, Instant};

use metaclaw_tests::mock_upstream::{Behaviour, last_user_text};
use serde_json::{Value, json};
use support::Harness;

const BENCH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/metaclaw-bench-mini");

const SKILL: &str = "---\nname: team-timestamps\ndescription: Write every timestamp in \
     report and status files as ISO 8601 with seconds and the +08:00 offset\n---\n\
     Use 2026-03-16T09:30:00+08:00, never a date alone or Z.\n";

/// The agent's `run_command` needs bubblewrap; without it the tool is never offered.
fn sandboxed() -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("bwrap").is_file()))
}

fn matching(marker: &str, then: Behaviour) -> Behaviour {
    Behaviour::Match {
        contains: Some(marker.to_owned()),
        path: None,
        then: Box::new(then),
    }
}

/// A round answered by running `command` first, then saying `text`.
fn with_command(marker: &str, command: &str, text: &str) -> [Behaviour; 2] {
    [
        matching(
            marker,
            Behaviour::tool_call("run_command", json!({ "command": command }).to_string()),
        ),
        matching(marker, Behaviour::reply(text)),
    ]
}

async fn start() -> (Harness, tempfile::TempDir) {
    let skills = tempfile::tempdir().unwrap();
    let skill = skills.path().join("team-timestamps/SKILL.md");
    std::fs::create_dir_all(skill.parent().unwrap()).unwrap();
    std::fs::write(&skill, SKILL).unwrap();
    let path = skills.path().display().to_string();
    let h = Harness::start_with(move |c| {
        c.skills.auto_evolve = false;
        c.skills.include_bundled = false;
        c.skills.dir = path;
        // One small skill: BM25 scores are small, so any match is relevant here.
        c.skills.min_score = 0.1;
        c.skills.holdout_share = 0.0;
    })
    .await;
    (h, skills)
}

async fn wait_job(h: &Harness) -> Value {
    let api = h.api();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let s = api.get("/api/rollouts").await;
        if s["running"] == false {
            assert!(s["error"].is_null(), "{s}");
            return s;
        }
        assert!(Instant::now() < deadline, "the bench did not finish: {s}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn close(a: &Value, b: f64) -> bool {
    (a.as_f64().unwrap() - b).abs() < 1e-9
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bench_runs_day_by_day_and_its_table_matches_a_hand_count() {
    if !sandboxed() {
        eprintln!("skipped: file_check rounds need run_command, which needs bubblewrap");
        return;
    }
    let (h, _skills) = start().await;
    // Baseline (skills off): D1R1 written right, D1R2 half the set, D1R3 no file,
    // D2R1 no file, D2R2 no \bbox at all.
    let report = r#"echo '{"when": "2026-03-16T09:30:00+08:00"}' > day01/report.json"#;
    h.mock.push_all(with_command("[D1R1]", report, "Written."));
    h.mock
        .push(matching("[D1R2]", Behaviour::reply(r"\bbox{A}")));
    h.mock.push(matching(
        "[D1R3]",
        Behaviour::reply("Tasks: CI report, demo."),
    ));
    h.mock
        .push(matching("[D2R1]", Behaviour::reply("Updated.")));
    h.mock
        .push(matching("[D2R2]", Behaviour::reply("I pick B.")));
    // Skills: every file right (day02's only if the workspace is that day's alone, with the
    // persona files and the scripts), D1R2 exact, D2R2 one extra letter.
    h.mock.push_all(with_command("[D1R1]", report, "Written."));
    h.mock
        .push(matching("[D1R2]", Behaviour::reply(r"\bbox{C, A}")));
    h.mock.push_all(with_command(
        "[D1R3]",
        "printf 'review the CI report\\nprepare the demo\\n' > day01/notes.md",
        "Summarised.",
    ));
    h.mock.push_all(with_command(
        "[D2R1]",
        r#"test ! -e day01 && test -f USER.md && test -f scripts/check_iso.py && echo '{"updated": "2026-03-17T10:00:00.250+08:00"}' > day02/status.json"#,
        "Updated.",
    ));
    h.mock
        .push(matching("[D2R2]", Behaviour::reply(r"\bbox{B,D}")));

    let api = h.api();
    let started = api
        .post(
            "/api/bench",
            json!({"dir": BENCH, "arms": ["baseline", "skills", "skills-rl"],
                   "allow_commands": true, "max_steps": 4}),
        )
        .await;
    assert_eq!(started["kind"], "bench", "{started}");
    let job = wait_job(&h).await;
    let bench = &job["bench"];
    assert_eq!(bench["days"], 2, "{bench}");
    assert_eq!(bench["rounds"], 5);
    assert_eq!(bench["file_check_rounds"], 3);

    // Malformed files: named with their line, skipped; the rest ran.
    let problems: Vec<(String, u64)> = bench["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["file"].as_str().unwrap().to_owned(),
                p["line"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(
        problems,
        [
            ("eval/day02/questions.json".to_owned(), 38),
            ("eval/day03/questions.json".to_owned(), 8),
            ("all_tests.json".to_owned(), 16),
        ],
        "{}",
        bench["problems"]
    );

    // The hand count. Baseline: file checks 1 of 3; multiple choice 0.75 (A of A,C over four
    // options) and 0 (no \bbox); overall (1 + 0.75) / 5.
    let arms = bench["arms"].as_array().unwrap();
    let base = &arms[0];
    assert_eq!(base["arm"], "baseline");
    assert!(close(&base["accuracy"]["total"], 1.75), "{base}");
    assert!(close(&base["accuracy"]["mean"], 0.35));
    assert_eq!(base["accuracy"]["n"], 5);
    assert_eq!(
        (
            &base["file_check"]["successes"],
            &base["file_check"]["trials"]
        ),
        (&json!(1), &json!(3))
    );
    assert!(close(&base["multi_choice"]["mean"], 0.375), "{base}");
    assert_eq!(base["multi_choice_exact"]["successes"], 0);
    assert_eq!(base["format_errors"], 1);
    // Skills: file checks 3 of 3; multiple choice 1 and 0.75 (one extra letter of four);
    // overall 4.75 / 5.
    let skills = &arms[1];
    assert_eq!(skills["arm"], "skills");
    assert!(close(&skills["accuracy"]["total"], 4.75), "{skills}");
    assert_eq!(skills["file_check"]["successes"], 3, "{skills}");
    assert!(close(&skills["multi_choice"]["mean"], 0.875));
    assert_eq!(
        (
            &skills["multi_choice_exact"]["successes"],
            &skills["multi_choice_exact"]["trials"]
        ),
        (&json!(1), &json!(2))
    );
    let low = skills["accuracy"]["low"].as_f64().unwrap();
    assert!(low > 0.0 && low < 0.95, "{skills}");
    // RL is off in this home: the arm says so instead of running.
    assert_eq!(arms[2]["arm"], "skills-rl");
    assert!(
        arms[2]["not_run"]
            .as_str()
            .unwrap()
            .starts_with("RL is off"),
        "{}",
        arms[2]
    );
    let table = bench["table"].as_str().unwrap();
    eprintln!("{table}");
    assert!(
        table.contains("35.0 [") && table.contains("95.0 ["),
        "{table}"
    );
    assert!(table.contains("skills-rl: not run: RL is off"), "{table}");
    assert_eq!(h.mock.stats().queued, 0, "every scripted answer was used");

    // Feedback reaches the next round's request; a new day starts without it.
    let requests = h.mock.requests();
    let texts = |marker: &str| -> Vec<String> {
        requests
            .iter()
            .map(|r| last_user_text(&r.body))
            .filter(|t| t.contains(marker))
            .collect()
    };
    assert!(
        texts("[D1R2]")[0].contains("[Previous Feedback] D1R1 good"),
        "{:?}",
        texts("[D1R2]")
    );
    let d1r3 = &texts("[D1R3]")[0];
    assert!(
        d1r3.contains(
            "[Previous Feedback] You missed option C: C has milliseconds, which are allowed, \
             and +08:00.\nKeep this in mind as you continue with the next task.\n\n[D1R3]"
        ),
        "{d1r3}"
    );
    assert!(
        texts("[D2R1]")
            .iter()
            .all(|t| !t.contains("[Previous Feedback]"))
    );
    assert!(
        texts("[Previous Feedback] D1R3 wrong: day01/notes.md")
            .iter()
            .any(|t| !t.contains("[D")),
        "the last round's feedback is sent on its own"
    );
    // The day continues its seeded conversation, with the persona files in front.
    let first = requests
        .iter()
        .find(|r| last_user_text(&r.body).contains("[D1R1]"))
        .unwrap();
    let body = first.body.to_string();
    assert!(body.contains("It is Monday 2026-03-16"), "{body}");
    assert!(body.contains("Lives in Beijing (UTC+8)"), "{body}");

    // Skills: none in the baseline's turns, injected in the skills arm's.
    h.core().store().flush().unwrap();
    let turns = h.all_turns();
    let injected = |prefix: &str| {
        turns
            .iter()
            .filter(|t| t.session_id.starts_with(prefix))
            .map(|t| t.injected.as_array().map_or(0, Vec::len))
            .collect::<Vec<_>>()
    };
    let base_injected = injected("bench-baseline-");
    let skills_injected = injected("bench-skills-");
    assert!(base_injected.len() >= 7, "{base_injected:?}");
    assert!(base_injected.iter().all(|n| *n == 0), "{base_injected:?}");
    assert!(
        skills_injected.iter().any(|n| *n > 0),
        "{skills_injected:?}"
    );
    let baseline_session = turns
        .iter()
        .find(|t| t.session_id.starts_with("bench-baseline-"))
        .unwrap()
        .session_id
        .clone();
    let skills_session = turns
        .iter()
        .find(|t| t.session_id.starts_with("bench-skills-"))
        .unwrap()
        .session_id
        .clone();
    let store = h.core().store();
    assert!(store.is_eval_session(&baseline_session).unwrap());
    assert!(!store.is_eval_session(&skills_session).unwrap());

    // Stored: one evaluation run per arm that ran, its rounds beside it.
    let runs = api.get("/api/evals").await;
    let bench_runs: Vec<&Value> = runs
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["split"] == "metaclaw-bench")
        .collect();
    assert_eq!(bench_runs.len(), 2, "{runs}");
    assert_eq!(
        (
            &bench_runs[1]["arm"],
            &bench_runs[1]["successes"],
            &bench_runs[1]["trials"]
        ),
        (&json!("skills"), &json!(4), &json!(5))
    );
    let rounds = store
        .bench_rounds(bench_runs[0]["id"].as_i64().unwrap())
        .unwrap();
    assert_eq!(rounds.len(), 5);
    assert_eq!(rounds[0].day, "day01");
    assert_eq!(rounds[0].kind, "file_check");
    assert!(rounds[0].detail.starts_with("exit 0"), "{:?}", rounds[0]);
    h.stop().await;
}

#[tokio::test]
async fn a_folder_that_is_not_a_bench_is_refused_with_the_reason() {
    let (h, _skills) = start().await;
    let api = h.api();
    let empty = tempfile::tempdir().unwrap();
    let (status, body) = api
        .call(
            reqwest::Method::POST,
            "/api/bench",
            Some(json!({"dir": empty.path().display().to_string()})),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no all_tests.json"),
        "{body}"
    );
    let (status, body) = api
        .call(
            reqwest::Method::POST,
            "/api/bench",
            Some(json!({"dir": BENCH, "arms": ["rl-only"]})),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    h.stop().await;
}

/// A copy of the mini bench whose day-one r3 check always passes, so the skills + RL arm's
/// first day has rewards that differ (a step has something to learn from).
fn bench_with_a_free_round() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(std::path::Path::new(BENCH), dir.path());
    let q = dir.path().join("eval/day01/questions.json");
    let text = std::fs::read_to_string(&q).unwrap().replace(
        "python scripts/check_lines.py day01/notes.md 2",
        "test -f day01/tasks.txt",
    );
    std::fs::write(&q, text).unwrap();
    dir
}

fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_skills_rl_arm_rewards_its_rounds_and_trains_between_days() {
    use tinker_client::fake::{FakeServer, Knobs};
    let fake = FakeServer::start_with(Knobs {
        vocab_size: 362,
        ..Knobs::default()
    })
    .await;
    let bench = bench_with_a_free_round();
    let skills = tempfile::tempdir().unwrap();
    let skill = skills.path().join("team-timestamps/SKILL.md");
    std::fs::create_dir_all(skill.parent().unwrap()).unwrap();
    std::fs::write(&skill, SKILL).unwrap();
    let (url, path) = (fake.url(), skills.path().display().to_string());
    let h = Harness::start_with(move |c| {
        c.mode = metaclaw_config::Mode::Rl;
        c.skills.auto_evolve = false;
        c.skills.include_bundled = false;
        c.skills.dir = path;
        c.rl.model = "Qwen/Qwen3-4B-Instruct-2507".into();
        c.rl.base_url = url;
        c.rl.tokenizer_path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/rl/tiny-qwen3-tokenizer.json"
        )
        .into();
        c.rl.prm_api_key = String::new();
        c.rl.manual_train_trigger = true;
        c.rl.max_new_tokens = 4;
    })
    .await;
    let api = h.api();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let s = api.get("/api/rl").await;
        if s["phase"] == "serving" && s["sampler"].is_string() {
            break;
        }
        assert!(Instant::now() < deadline, "the policy did not start: {s}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }

    api.post(
        "/api/bench",
        json!({"dir": bench.path().display().to_string(), "arms": ["skills-rl"]}),
    )
    .await;
    let job = wait_job(&h).await;
    let arm = &job["bench"]["arms"][0];
    assert!(arm["not_run"].is_null(), "{arm}");
    assert_eq!(arm["accuracy"]["n"], 5, "{arm}");
    // Only the free round passes: the policy cannot write files (no run_command) and its
    // four-token answers hold no \bbox.
    assert_eq!(arm["file_check"]["successes"], 1, "{arm}");
    // One step after day one, none after the last day.
    assert_eq!(arm["training_steps"], 1, "{arm}");
    assert_eq!(job["steps_done"], 1);
    assert!(
        job["bench"]["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("without run_command")),
        "{job}"
    );

    // Each scored round's turn was sampled and rewarded by its score; the closing feedback's
    // turn (nothing grades it) was not sampled.
    let store = h.core().store();
    store.flush().unwrap();
    let mut rewards = Vec::new();
    for state in metaclaw_store::SampleState::ALL {
        for s in store.samples_in_state(*state, 100_000).unwrap() {
            assert!(
                s.session_id.starts_with("bench-skills-rl-"),
                "{}",
                s.session_id
            );
            assert_eq!(
                s.reward_source,
                Some(metaclaw_store::RewardSource::Verifier),
                "{s:?}"
            );
            rewards.push(s.reward.unwrap());
        }
    }
    rewards.sort_by(f64::total_cmp);
    assert_eq!(rewards, [0.0, 0.0, 0.0, 0.0, 1.0]);
    h.stop().await;
    fake.shutdown().await;
}
