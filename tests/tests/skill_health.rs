//! Evidence per skill and the Skill health view, with scripted sessions against the mock:
//! a skill the user keeps correcting is flagged and revised, a helpful one is not, and the
//! figures are the ones computed by hand below.

mod support;

use std::sync::Arc;

use chrono::{Duration, Utc};
use metaclaw_core::api::ops::config::PatchConfig;
use metaclaw_core::api::ops::skill_health::{GetSkillHealth, HealthQuery, MergeInput, MergeSkills};
use metaclaw_core::evidence::{Comparison, Verdict, held_out};
use metaclaw_core::{HealthFlag, SkillHealthReport, SkillHealthRow};
use metaclaw_domain::ManualClock;
use metaclaw_store::{EvidenceArm, ProposalKind, ProposalStatus};
use metaclaw_tests::mock_upstream::Behaviour;
use metaclaw_tests::wait::wait_for;
use reqwest::StatusCode;
use serde_json::{Value, json};
use support::Harness;

const SECRET: &str = "sk-proj-abcdefghijklmnopqrstuvwxyz0123";
const SHARE: f64 = 0.5;

const MILES: &str = "---
name: convert-miles-precisely
description: Use when converting miles into kilometres or kilometres into miles.
category: productivity
---

# Convert miles precisely

## Steps
1. Multiply miles by 1.6.
2. Give whole kilometres.

## Anti-patterns
- Using more decimals than needed.
";

const NOTES: &str = "---
name: write-release-notes
description: Use when drafting release notes from a changelog.
category: writing
---

# Write release notes

## Steps
1. Group changelog entries by theme.
2. Lead with user-visible changes.

## Anti-patterns
- Listing commit hashes.
";

/// Nearly the same text as `MILES`: a near-duplicate.
const MILES_TWIN: &str = "---
name: convert-miles-exactly
description: Use when converting miles into kilometres or kilometres into miles.
category: productivity
---

# Convert miles exactly

## Steps
1. Multiply miles by 1.6.
2. Give whole kilometres.

## Anti-patterns
- Using more decimals than needed.
";

const MILES_ASK: &str = "how many kilometres are 26 miles exactly";
const NOTES_ASK: &str = "draft release notes summarising the changelog entries";
const CORRECTION: &str = "No, that's wrong, you misunderstood what I wanted here entirely";
const FINE: &str = "Great, thank you, that is exactly what I wanted to see";

fn write_skill(dir: &std::path::Path, text: &str) {
    let name = text.lines().find_map(|l| l.strip_prefix("name: ")).unwrap();
    std::fs::create_dir_all(dir.join(name)).unwrap();
    std::fs::write(dir.join(name).join("SKILL.md"), text).unwrap();
}

async fn start(skills: &[&str], clock: Arc<ManualClock>) -> (Harness, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    for s in skills {
        write_skill(dir.path(), s);
    }
    let path = dir.path().display().to_string();
    let h = Harness::start_full(
        move |c| {
            c.skills.auto_evolve = false;
            c.skills.include_bundled = false;
            c.skills.dir = path;
            // Two small skills: BM25 scores are small, so any match is relevant here.
            c.skills.min_score = 0.1;
            c.skills.holdout_share = SHARE;
            c.skills.evidence_min_turns = 5;
        },
        clock,
    )
    .await;
    (h, dir)
}

/// A two-turn conversation: the request, then the user's reaction to the answer (as an
/// agent sends it: the answer and the new message, without the old request).
async fn converse(h: &Harness, session: &str, ask: &str, reaction: &str) {
    for messages in [
        json!([{"role": "user", "content": ask}]),
        json!([{"role": "assistant", "content": "Here you go."}, {"role": "user", "content": reaction}]),
    ] {
        let r = h
            .post("/v1/chat/completions")
            .header("x-session-id", session)
            .json(&json!({"model": "m", "messages": messages}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::OK);
        r.text().await.unwrap();
    }
}

/// Sessions named `{prefix}-{i}`: `held` of them that hold `skill` out and `served` that
/// do not, as (session, held out).
fn sessions(prefix: &str, skill: &str, served: usize, held: usize) -> Vec<(String, bool)> {
    let (mut s, mut k) = (0, 0);
    let mut out = Vec::new();
    for i in 0.. {
        if s == served && k == held {
            break;
        }
        let id = format!("{prefix}-{i}");
        match held_out(&id, skill, SHARE) {
            true if k < held => {
                k += 1;
                out.push((id, true));
            }
            false if s < served => {
                s += 1;
                out.push((id, false));
            }
            _ => {}
        }
    }
    out
}

fn row<'a>(r: &'a SkillHealthReport, name: &str) -> &'a SkillHealthRow {
    r.skills.iter().find(|s| s.name == name).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-4
}

#[tokio::test]
async fn corrected_skill_is_flagged_and_revised_helpful_one_is_not() {
    let clock = Arc::new(ManualClock::new(Utc::now()));
    let (h, _dir) = start(&[MILES, NOTES], clock.clone()).await;
    let api = h.core().api();

    // convert-miles-precisely: served in 8 conversations, 6 corrected; held out of 10,
    // 2 corrected.
    let miles = sessions("miles", "convert-miles-precisely", 8, 10);
    let (mut served, mut held) = (0, 0);
    for (i, (s, is_held)) in miles.iter().enumerate() {
        let n = if *is_held { &mut held } else { &mut served };
        *n += 1;
        let corrected = if *is_held { *n <= 2 } else { *n <= 6 };
        let ask = if i == 0 {
            format!("{MILES_ASK}; my key is {SECRET}")
        } else {
            MILES_ASK.to_owned()
        };
        converse(&h, s, &ask, if corrected { CORRECTION } else { FINE }).await;
    }
    // write-release-notes: served in 8, 1 corrected and 1 thumbs down; held out of 8,
    // 6 corrected.
    let notes = sessions("notes", "write-release-notes", 8, 8);
    let (mut served, mut held) = (0, 0);
    let mut thumbs_down_on = None;
    for (s, is_held) in &notes {
        let n = if *is_held { &mut held } else { &mut served };
        *n += 1;
        let corrected = if *is_held { *n <= 6 } else { *n == 1 };
        converse(&h, s, NOTES_ASK, if corrected { CORRECTION } else { FINE }).await;
        if !is_held && *n == 2 {
            thumbs_down_on = Some(s.clone());
        }
    }
    h.wait_turns(((miles.len() + notes.len()) * 2) as u64).await;
    let store = h.core().store();
    // Follow-ups are queued right after their turns: wait until the last one is counted.
    wait_for("every correction counted", || {
        store.flush().ok()?;
        let counts = store.skill_evidence().ok()?;
        let corrected: u64 = counts
            .values()
            .flat_map(|arms| arms.values())
            .map(|c| c.corrected)
            .sum();
        (corrected == 6 + 2 + 1 + 6).then_some(())
    })
    .await;
    let first = store.turn_ids_in_session(&thumbs_down_on.unwrap()).unwrap()[0].clone();
    store.set_feedback(&first, -1, None).unwrap();
    store.flush().unwrap();

    // Held-out conversations really went without the skill, and were recorded as controls.
    let (held_session, _) = miles.iter().find(|(_, held)| *held).unwrap();
    let turn = store
        .turn(&store.turn_ids_in_session(held_session).unwrap()[0])
        .unwrap()
        .unwrap();
    assert!(
        !turn.request.to_string().contains("Multiply miles by 1.6"),
        "a held-out skill reached the upstream"
    );
    assert!(
        turn.injected.as_array().unwrap().contains(
            &json!({"kind": "skill_control", "name": "convert-miles-precisely", "cause": "holdout"})
        ),
        "{}",
        turn.injected
    );

    let report = api
        .call::<GetSkillHealth>((), HealthQuery::default())
        .await
        .unwrap();
    assert_eq!(report.min_turns, 5);
    assert!(close(report.holdout_share, SHARE));

    // Hand computation, 6/8 with against 2/10 without: Wilson 6/8 = (0.4093, 0.9285),
    // 2/10 = (0.0567, 0.5098); d = 0.75 − 0.2 = 0.55;
    // low = 0.55 − √((0.75 − 0.4093)² + (0.5098 − 0.2)²) = 0.0895;
    // high = 0.55 + √((0.9285 − 0.75)² + (0.2 − 0.0567)²) = 0.7789.
    let bad = row(&report, "convert-miles-precisely");
    let e = &bad.evidence;
    assert_eq!(e.comparison, Comparison::CandidateNotInjected);
    assert_eq!(
        (e.with.turns, e.with.bad, e.with.corrected),
        (8, 6, 6),
        "{e:?}"
    );
    assert_eq!((e.without.turns, e.without.bad), (10, 2), "{e:?}");
    assert_eq!((e.held_out, e.below_cut), (10, 0));
    let est = e.estimate.unwrap();
    assert!(close(est.bad_rate_with, 0.75) && close(est.bad_rate_without, 0.2));
    assert!(close(est.difference, 0.55), "{est:?}");
    assert!(
        (est.low - 0.0895).abs() < 2e-4 && (est.high - 0.7789).abs() < 2e-4,
        "{est:?}"
    );
    assert_eq!(e.verdict, Verdict::SeemsToHurt);
    assert!(bad.flags.contains(&HealthFlag::Hurts), "{:?}", bad.flags);
    assert!(
        bad.flags.contains(&HealthFlag::Corrected),
        "{:?}",
        bad.flags
    );
    assert!(close(bad.correction_rate.unwrap(), 0.75));

    // Hand computation, 2/8 with against 6/8 without: Wilson 2/8 = (0.0715, 0.5907);
    // d = −0.5; low = −0.5 − √((0.25 − 0.0715)² + (0.9285 − 0.75)²) = −0.7525;
    // high = −0.5 + √((0.5907 − 0.25)² + (0.75 − 0.4093)²) = −0.0181.
    let good = row(&report, "write-release-notes");
    let e = &good.evidence;
    assert_eq!(
        (
            e.with.turns,
            e.with.bad,
            e.with.corrected,
            e.with.thumbs_down
        ),
        (8, 2, 1, 1),
        "{e:?}"
    );
    assert_eq!((e.without.turns, e.without.bad), (8, 6));
    let est = e.estimate.unwrap();
    assert!(
        close(est.difference, -0.5)
            && (est.low + 0.7525).abs() < 2e-4
            && (est.high + 0.0181).abs() < 2e-4,
        "{est:?}"
    );
    assert_eq!(e.verdict, Verdict::SeemsToHelp);
    assert!(good.flags.is_empty(), "{:?}", good.flags);
    assert_eq!(
        report.skills[0].name, "convert-miles-precisely",
        "flagged first"
    );

    // The same report over HTTP, as the dashboard reads it.
    let token = std::fs::read_to_string(h.home().join("dashboard.token")).unwrap();
    let get = |path: &str| {
        h.client
            .get(format!("{}{path}", h.base))
            .bearer_auth(token.trim())
            .send()
    };
    let body: Value = get("/api/skill-health")
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let first = &body["skills"][0];
    assert_eq!(first["name"], "convert-miles-precisely");
    assert_eq!(first["flags"], json!(["hurts", "corrected"]));
    assert_eq!(first["evidence"]["verdict"], "seems_to_hurt");
    assert_eq!(first["evidence"]["comparison"], "candidate_not_injected");
    assert_eq!(first["evidence"]["with"]["turns"], 8);
    assert!(first["evidence"]["estimate"]["low"].as_f64().unwrap() > 0.0);
    assert_eq!(body["duplicates"], json!([]));
    assert_eq!(
        get("/api/skill-health?idle_days=0").await.unwrap().status(),
        StatusCode::BAD_REQUEST
    );

    // A month later nothing was injected: both skills are idle.
    clock.advance(Duration::days(31));
    let later = api
        .call::<GetSkillHealth>(
            (),
            HealthQuery {
                idle_days: Some(30),
            },
        )
        .await
        .unwrap();
    for s in &later.skills {
        assert!(s.flags.contains(&HealthFlag::Idle), "{s:?}");
    }

    // Not enough data once more turns are required, set through the settings path.
    api.call::<PatchConfig>(
        (),
        serde_json::from_value(json!({"set": {"skills.evidence_min_turns": 9}})).unwrap(),
    )
    .await
    .unwrap();
    let strict = api
        .call::<GetSkillHealth>((), HealthQuery::default())
        .await
        .unwrap();
    let e = &row(&strict, "convert-miles-precisely").evidence;
    assert_eq!(e.verdict, Verdict::NotEnoughData);
    assert!(e.estimate.is_none());
    assert!(
        !row(&strict, "convert-miles-precisely")
            .flags
            .contains(&HealthFlag::Hurts)
    );

    // Ask the evolver for a revision: a pending update with a diff in the inbox.
    h.mock.push(Behaviour::Match {
        contains: Some("## The skill `convert-miles-precisely`".into()),
        path: None,
        then: Box::new(Behaviour::reply(
            json!({"proposals": [{
                "name": "convert-miles-precisely",
                "description": "Use when converting miles into kilometres or kilometres into miles.",
                "category": "productivity",
                "body": "# Convert miles precisely\n\n## Steps\n1. Multiply miles by 1.609344.\n2. Round kilometres to two decimals.\n\n## Anti-patterns\n- Rounding the factor to 1.6.",
                "reason": "Users corrected whole-kilometre answers.",
                "turns": []
            }]})
            .to_string(),
        )),
    });
    let r = h
        .client
        .post(format!(
            "{}/api/skills/convert-miles-precisely/revision",
            h.base
        ))
        .bearer_auth(token.trim())
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let made: Value = r.json().await.unwrap();
    assert_eq!(made["skill_name"], "convert-miles-precisely");
    assert_eq!(made["sessions"].as_array().unwrap().len(), 3);
    let evo = h.core().evolution().unwrap();
    let pending = evo.proposals(Some(ProposalStatus::Pending)).unwrap();
    assert_eq!(pending.len(), 1);
    let p = &pending[0];
    assert_eq!(p.id, made["proposal_id"].as_i64().unwrap());
    assert_eq!(p.kind, ProposalKind::Update);
    let diff = p.diff.as_deref().unwrap();
    assert!(
        diff.contains("-1. Multiply miles by 1.6.")
            && diff.contains("+1. Multiply miles by 1.609344."),
        "{diff}"
    );
    assert!(
        p.signals.to_string().contains("correction"),
        "{}",
        p.signals
    );
    // The evolver saw the corrected conversations, redacted.
    let sent = h
        .mock
        .requests()
        .into_iter()
        .find(|r| {
            r.body
                .to_string()
                .contains("## The skill `convert-miles-precisely`")
        })
        .unwrap()
        .body
        .to_string();
    assert!(
        sent.contains("misunderstood") && !sent.contains(SECRET),
        "{sent}"
    );
    // One pending proposal per skill: asking again is refused until it is decided.
    let again = h
        .client
        .post(format!(
            "{}/api/skills/convert-miles-precisely/revision",
            h.base
        ))
        .bearer_auth(token.trim())
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), StatusCode::CONFLICT);
    let none = h
        .client
        .post(format!("{}/api/skills/nope/revision", h.base))
        .bearer_auth(token.trim())
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(none.status(), StatusCode::NOT_FOUND);
    h.stop().await;
}

#[tokio::test]
async fn not_enough_data_live_holdout_and_near_duplicates_merge() {
    let clock = Arc::new(ManualClock::new(Utc::now()));
    let (h, _dir) = start(&[MILES, MILES_TWIN, NOTES], clock).await;
    let api = h.core().api();
    let (session, _) = sessions("one", "write-release-notes", 1, 0).remove(0);
    converse(&h, &session, NOTES_ASK, CORRECTION).await;
    h.wait_turns(2).await;
    // The follow-up is queued right after its turn: wait until it is counted.
    wait_for("the correction counted", || {
        h.core().store().flush().ok()?;
        let counts = h.core().store().skill_evidence().ok()?;
        let notes = counts
            .get("write-release-notes")?
            .get(&EvidenceArm::Injected)?;
        (notes.corrected == 1).then_some(())
    })
    .await;
    let report = api
        .call::<GetSkillHealth>((), HealthQuery::default())
        .await
        .unwrap();
    let notes = row(&report, "write-release-notes");
    assert_eq!(notes.evidence.verdict, Verdict::NotEnoughData);
    assert!(notes.evidence.estimate.is_none());
    // One corrected injection is not a pattern yet.
    assert_eq!(notes.evidence.with.corrected, 1);
    assert!(!notes.flags.contains(&HealthFlag::Corrected));
    assert_eq!(report.duplicates.len(), 1, "{:?}", report.duplicates);
    let d = &report.duplicates[0];
    assert_eq!(
        (d.a.as_str(), d.b.as_str()),
        ("convert-miles-exactly", "convert-miles-precisely")
    );
    assert!(d.similarity > 0.8, "{d:?}");
    assert!(
        row(&report, "convert-miles-exactly")
            .flags
            .contains(&HealthFlag::Duplicate)
    );
    assert!(!notes.flags.contains(&HealthFlag::Duplicate));

    // The holdout applies live through the settings path: a conversation that holds the
    // skill out gets it once the share is set to 0.
    let (held, _) = sessions("live", "convert-miles-precisely", 0, 1).remove(0);
    // The newest request that asked the miles question, as the upstream got it.
    let last_ask = || {
        h.mock
            .requests()
            .into_iter()
            .rev()
            .find(|r| r.body.to_string().contains(MILES_ASK))
            .unwrap()
            .body
            .to_string()
    };
    converse(&h, &held, MILES_ASK, FINE).await;
    let sent = last_ask();
    assert!(!sent.contains("### convert-miles-precisely"), "{sent}");
    api.call::<PatchConfig>(
        (),
        serde_json::from_value(json!({"set": {"skills.holdout_share": 0.0}})).unwrap(),
    )
    .await
    .unwrap();
    converse(&h, &held, MILES_ASK, FINE).await;
    let sent = last_ask();
    assert!(sent.contains("### convert-miles-precisely"), "{sent}");

    // Merge: the evolver writes one skill; approving it disables the other.
    h.mock.push(Behaviour::Match {
        contains: Some("## Second skill `convert-miles-exactly`".into()),
        path: None,
        then: Box::new(Behaviour::reply(
            json!({"proposals": [{
                "name": "convert-miles-precisely",
                "description": "Use when converting miles into kilometres or kilometres into miles, exactly.",
                "category": "productivity",
                "body": "# Convert miles\n\n## Steps\n1. Multiply miles by 1.609344.\n\n## Anti-patterns\n- Rounding early.",
                "reason": "The two skills said the same.",
                "turns": []
            }]})
            .to_string(),
        )),
    });
    let made = api
        .call::<MergeSkills>(
            "convert-miles-precisely".into(),
            MergeInput {
                absorb: "convert-miles-exactly".into(),
            },
        )
        .await
        .unwrap();
    let evo = h.core().evolution().unwrap();
    let p = evo
        .proposals(Some(ProposalStatus::Pending))
        .unwrap()
        .into_iter()
        .find(|p| p.id == made.proposal_id)
        .unwrap();
    assert_eq!(p.skill_name, "convert-miles-precisely");
    assert!(
        p.diff
            .as_deref()
            .unwrap()
            .contains("+1. Multiply miles by 1.609344.")
    );
    evo.approve(p.id, None).unwrap();
    let skills = h.core().skills().unwrap().list();
    let twin = skills
        .iter()
        .find(|s| s.name == "convert-miles-exactly")
        .unwrap();
    assert!(!twin.enabled, "the absorbed skill is switched off");
    let after = api
        .call::<GetSkillHealth>((), HealthQuery::default())
        .await
        .unwrap();
    assert!(after.duplicates.is_empty(), "{:?}", after.duplicates);
    // Merging a skill into itself is refused.
    assert!(
        api.call::<MergeSkills>(
            "write-release-notes".into(),
            MergeInput {
                absorb: "write-release-notes".into()
            }
        )
        .await
        .is_err()
    );
    h.stop().await;
}

/// Skills off against skills on, on the user's own tasks: one evaluation in both arms, and
/// the Skills page's comparison with the interval computed by hand.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evaluation_arms_compare_skills_off_and_on() {
    let skills = tempfile::tempdir().unwrap();
    write_skill(skills.path(), MILES);
    let tasks = tempfile::tempdir().unwrap();
    let lines: Vec<String> = (0..10)
        .map(|i| {
            json!({"task_id": format!("miles-{i}"),
                   "instruction": format!("{MILES_ASK} (case {i})"),
                   "answer": "42 km"})
            .to_string()
        })
        .collect();
    std::fs::write(tasks.path().join("test.jsonl"), lines.join("\n")).unwrap();
    let path = skills.path().display().to_string();
    let h = Harness::start_with(move |c| {
        c.skills.auto_evolve = false;
        c.skills.include_bundled = false;
        c.skills.dir = path;
        c.skills.min_score = 0.1;
        c.llm.timeout_seconds = 30;
    })
    .await;
    let api = h.api();
    assert!(api.get("/api/evals/skills").await["comparison"].is_null());

    // The right answer comes only with the skill in the request, and only 8 times: the
    // skills-on arm passes 8 of 10, the skills-off arm none.
    for _ in 0..8 {
        h.mock.push(Behaviour::when_contains(
            "### convert-miles-precisely",
            Behaviour::reply("42 km"),
        ));
    }
    api.post(
        "/api/evals",
        json!({"dir": tasks.path(), "split": "test", "arms": ["skills-off", "skills-on"]}),
    )
    .await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let job = api.get("/api/rollouts").await;
        if job["running"] == false && job["kind"] == "eval" {
            assert!(job["error"].is_null(), "{job}");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the evaluation did not finish: {job}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }

    let c = api.get("/api/evals/skills").await;
    assert_eq!(c["min_trials"], 10);
    let c = &c["comparison"];
    assert_eq!(
        (c["off"]["successes"].as_u64(), c["off"]["trials"].as_u64()),
        (Some(0), Some(10)),
        "{c}"
    );
    assert_eq!(
        (c["on"]["successes"].as_u64(), c["on"]["trials"].as_u64()),
        (Some(8), Some(10)),
        "{c}"
    );
    assert_eq!(c["split"], "test");
    // By hand: Wilson 8/10 is (0.4902, 0.9433) and 0/10 is (0, 0.2775); d = 0.8,
    // low = 0.8 − √((0.8 − 0.4902)² + 0.2775²) = 0.3841, high = 0.8 + (0.9433 − 0.8) = 0.9433.
    let d = &c["difference"];
    assert!(close(d["estimate"].as_f64().unwrap(), 0.8), "{d}");
    assert!((d["low"].as_f64().unwrap() - 0.3841).abs() < 2e-4, "{d}");
    assert!((d["high"].as_f64().unwrap() - 0.9433).abs() < 2e-4, "{d}");
    assert_eq!(c["verdict"], "skills_help");
    h.stop().await;
}
