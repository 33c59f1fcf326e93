//! Evidence per skill: controls from a turn's `injected` list, outcomes from thumbs, judge
//! verdicts and follow-ups, and the per-skill counts the triggers keep, checked against a
//! recount from the log after every change (including retention).

use std::collections::HashMap;
use std::path::Path;

use chrono::{DateTime, TimeZone, Utc};
use metaclaw_domain::{TurnRecord, TurnType};
use metaclaw_store::{EvidenceArm, FollowUp, OutcomeCounts, PrmVote, Store};
use serde_json::{Value, json};
use tempfile::TempDir;

fn at(secs: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap() + chrono::Duration::seconds(secs)
}

/// A main turn with `skills` injected and `controls` (name, cause) recorded.
fn turn(
    session: &str,
    id: &str,
    secs: i64,
    skills: &[&str],
    controls: &[(&str, &str)],
) -> TurnRecord {
    let mut t = TurnRecord::minimal(session, id, "hello", at(secs));
    let mut injected: Vec<Value> = skills
        .iter()
        .map(|n| json!({"kind": "skill", "name": n, "version": "1", "score": 3.0}))
        .collect();
    injected.extend(
        controls
            .iter()
            .map(|(n, c)| json!({"kind": "skill_control", "name": n, "cause": c})),
    );
    // Unknown causes are not controls.
    injected.push(json!({"kind": "skill_control", "name": "x", "cause": "whim"}));
    t.injected = Value::Array(injected);
    t
}

fn follow(store: &Store, session: &str, turn: &str, correction: bool, tool_error: bool) {
    store.recorder().record_follow_up(FollowUp {
        turn_id: turn.into(),
        session_id: session.into(),
        correction,
        retry: false,
        tool_error,
    });
    store.flush().unwrap();
}

/// (skill, arm) → turns, bad, thumbs down, judged bad, corrected, tool errors.
type Recount = HashMap<(String, String), [i64; 6]>;

/// The same counts computed from the log, ignoring the triggers' tables.
fn recount(path: &Path) -> (Recount, (i64, i64)) {
    let c = rusqlite::Connection::open(path).unwrap();
    let bad = "(coalesce(f.rating = -1, 0) OR coalesce(v.verdict = -1, 0)
                OR coalesce(o.corrected, 0) OR coalesce(o.tool_error, 0))";
    let sql = format!(
        "SELECT a.skill_name, a.arm, count(*), sum({bad}), sum(coalesce(f.rating = -1, 0)),
                sum(coalesce(v.verdict = -1, 0)), sum(coalesce(o.corrected, 0)),
                sum(coalesce(o.tool_error, 0))
         FROM (SELECT turn_id, skill_name, 'injected' AS arm FROM turn_skills
               UNION ALL SELECT turn_id, skill_name, cause FROM turn_skill_controls) a
         LEFT JOIN feedback f ON f.turn_id = a.turn_id
         LEFT JOIN prm_verdicts v ON v.turn_id = a.turn_id
         LEFT JOIN turn_outcomes o ON o.turn_id = a.turn_id
         GROUP BY a.skill_name, a.arm"
    );
    let mut stmt = c.prepare(&sql).unwrap();
    let rows = stmt
        .query_map([], |r| {
            Ok((
                (r.get(0)?, r.get(1)?),
                [
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                    r.get(7)?,
                ],
            ))
        })
        .unwrap()
        .collect::<rusqlite::Result<HashMap<_, _>>>()
        .unwrap();
    let totals = c
        .query_row(
            &format!(
                "SELECT count(*), coalesce(sum({bad}), 0) FROM turns t
                 LEFT JOIN feedback f ON f.turn_id = t.id
                 LEFT JOIN prm_verdicts v ON v.turn_id = t.id
                 LEFT JOIN turn_outcomes o ON o.turn_id = t.id
                 WHERE t.turn_type = 'main'"
            ),
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    (rows, totals)
}

fn check(store: &Store, path: &Path) {
    let (expected, (turns, bad)) = recount(path);
    let kept = store.skill_evidence().unwrap();
    let mut got = HashMap::new();
    for (name, arms) in &kept {
        for (arm, c) in arms {
            let n = |x: u64| i64::try_from(x).unwrap();
            got.insert(
                (name.clone(), arm.as_str().to_owned()),
                [
                    n(c.turns),
                    n(c.bad),
                    n(c.thumbs_down),
                    n(c.judged_bad),
                    n(c.corrected),
                    n(c.tool_error),
                ],
            );
        }
    }
    assert_eq!(got, expected);
    let totals = store.outcome_totals().unwrap();
    assert_eq!(
        (
            i64::try_from(totals.0).unwrap(),
            i64::try_from(totals.1).unwrap()
        ),
        (turns, bad)
    );
}

fn vote(score: i8) -> PrmVote {
    PrmVote {
        vote: 0,
        score,
        rationale: "r".into(),
        created_at: at(0),
    }
}

#[test]
fn counts_follow_every_outcome_and_retention() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("m.db");
    let store = Store::open(&path).unwrap();
    let rec = store.recorder();
    rec.record_turn(turn("s", "t1", 0, &["git"], &[("docker", "below_cut")]));
    rec.record_turn(turn("s", "t2", 10, &["docker"], &[("git", "holdout")]));
    let mut side = turn("s", "t3", 20, &[], &[]);
    side.turn_type = TurnType::Side;
    rec.record_turn(side);
    rec.record_turn(turn("s", "t4", 30, &["git"], &[("docker", "below_cut")]));
    rec.record_turn(turn("s", "t5", 40, &["git", "docker"], &[]));
    rec.record_turn(turn("o", "u1", 50, &[], &[("git", "below_cut")]));
    store.flush().unwrap();
    check(&store, &path);

    // t2's request corrected t1; t4's reported tool errors of t2's calls (the side turn t3
    // in between is skipped); u1 is the first turn of its session: nothing to mark.
    follow(&store, "s", "t2", true, false);
    follow(&store, "s", "t4", false, true);
    follow(&store, "o", "u1", true, true);
    // A second correction of the same turn changes nothing.
    follow(&store, "s", "t2", true, false);
    check(&store, &path);
    let git = store.skill_evidence().unwrap()["git"][&EvidenceArm::Injected];
    assert_eq!(
        git,
        OutcomeCounts {
            turns: 3,
            bad: 1,
            thumbs_down: 0,
            judged_bad: 0,
            corrected: 1,
            tool_error: 0,
        }
    );
    assert_eq!(
        store.skill_evidence().unwrap()["git"][&EvidenceArm::Holdout],
        OutcomeCounts {
            turns: 1,
            bad: 1,
            tool_error: 1,
            ..Default::default()
        }
    );
    assert_eq!(store.outcome_totals().unwrap(), (5, 2));
    assert_eq!(
        store.corrected_turns("git", 10).unwrap(),
        [("s".to_owned(), "t1".to_owned())]
    );
    assert!(store.corrected_turns("docker", 10).unwrap().is_empty());

    // Thumbs and verdicts set, changed and taken back.
    store.set_feedback("t1", -1, None).unwrap();
    store.set_feedback("t4", -1, None).unwrap();
    store.set_feedback("t5", 1, None).unwrap();
    check(&store, &path);
    store.set_feedback("t4", 1, None).unwrap();
    check(&store, &path);
    store.record_prm_votes("t5", &[vote(-1)]).unwrap();
    store.record_prm_votes("u1", &[vote(-1)]).unwrap();
    check(&store, &path);
    store.record_prm_votes("t5", &[vote(1)]).unwrap();
    check(&store, &path);
    assert_eq!(store.outcome_totals().unwrap(), (5, 3));

    // Retention takes turns and their outcomes off in whatever order the cascade runs.
    store.prune(at(35)).unwrap();
    check(&store, &path);
    assert_eq!(store.outcome_totals().unwrap(), (2, 1));
    let kept = store.skill_evidence().unwrap();
    assert_eq!(kept["git"][&EvidenceArm::Injected].turns, 1);
    assert!(!kept["git"].contains_key(&EvidenceArm::Holdout));
    store.prune(at(1000)).unwrap();
    check(&store, &path);
    assert!(store.skill_evidence().unwrap().is_empty());
    assert_eq!(store.outcome_totals().unwrap(), (0, 0));
}

/// The reads the Skill health view makes use an index or a one-row table, whatever the size
/// of the log.
#[test]
fn health_reads_use_indexes() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("m.db");
    drop(Store::open(&path).unwrap());
    let c = rusqlite::Connection::open(&path).unwrap();
    let plan = |sql: &str| -> String {
        let mut stmt = c.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        stmt.query_map([], |r| r.get::<_, String>(3))
            .unwrap()
            .collect::<rusqlite::Result<Vec<_>>>()
            .unwrap()
            .join("\n")
    };
    let corrected = plan(
        "SELECT t.session_id, t.id FROM turn_outcomes o
         JOIN turn_skills ts ON ts.turn_id = o.turn_id AND ts.skill_name = 'x'
         JOIN turns t ON t.id = o.turn_id
         WHERE o.corrected = 1 ORDER BY t.started_at DESC LIMIT 30",
    );
    assert!(
        !corrected.contains("SCAN t") && !corrected.contains("SCAN ts"),
        "{corrected}"
    );
    let first = plan("SELECT min(started_at) FROM turns");
    assert!(first.contains("turns_started_at"), "{first}");
    let previous = plan(
        "SELECT p.id FROM turns p WHERE p.session_id = 's'
           AND p.seq < (SELECT seq FROM turns WHERE id = 't' AND session_id = 's')
           AND p.turn_type = 'main' ORDER BY p.seq DESC LIMIT 1",
    );
    assert!(previous.contains("turns_session_seq"), "{previous}");
}
