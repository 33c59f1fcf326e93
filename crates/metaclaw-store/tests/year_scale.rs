//! What keeps the store usable after a year of turns: pages over the long lists, and
//! retention in bounded batches.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use chrono::{DateTime, TimeZone, Utc};
use metaclaw_domain::TurnRecord;
use metaclaw_store::{NewProposal, ProposalKind, ProposalStatus, SkillStats, Store};
use serde_json::{Value, json};
use tempfile::TempDir;

fn at(secs: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 1, 0, 0, 0).unwrap() + chrono::Duration::seconds(secs)
}

const SKILLS: &[&str] = &["git", "venv", "tests", "docs"];

/// Turn `n` of a session: one of a few system prompts, 0 to 2 injected skills.
fn turn(session: &str, id: &str, started_at: DateTime<Utc>, n: usize) -> TurnRecord {
    let injected: Vec<Value> = (0..n % 3)
        .map(|k| json!({"kind": "skill", "name": SKILLS[(n + k) % SKILLS.len()], "version": "1"}))
        .collect();
    TurnRecord {
        request: json!({"messages": [
            {"role": "system", "content": format!("prompt {}", n % 5)},
            {"role": "user", "content": id},
        ]}),
        injected: Value::Array(injected),
        ..TurnRecord::minimal(session, id, id, started_at)
    }
}

fn raw(path: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(path).unwrap()
}

/// Skill stats computed the slow way, straight from the turn log.
fn stats_from_log(path: &Path) -> HashMap<String, SkillStats> {
    let conn = raw(path);
    let mut stmt = conn
        .prepare(
            "SELECT ts.skill_name, count(*),
                    count(*) FILTER (WHERE f.rating = 1), count(*) FILTER (WHERE f.rating = -1),
                    max(t.started_at)
             FROM turn_skills ts JOIN turns t ON t.id = ts.turn_id
             LEFT JOIN feedback f ON f.turn_id = ts.turn_id
             GROUP BY ts.skill_name",
        )
        .unwrap();
    stmt.query_map([], |r| {
        let last: String = r.get(4)?;
        Ok((
            r.get::<_, String>(0)?,
            SkillStats {
                injected: r.get::<_, i64>(1)? as u64,
                thumbs_up: r.get::<_, i64>(2)? as u64,
                thumbs_down: r.get::<_, i64>(3)? as u64,
                last_injected_at: Some(DateTime::parse_from_rfc3339(&last).unwrap().into()),
            },
        ))
    })
    .unwrap()
    .collect::<rusqlite::Result<_>>()
    .unwrap()
}

#[test]
fn session_pages_cover_every_session_once_in_a_stable_order() {
    let dir = TempDir::new().unwrap();
    let store = Store::open(dir.path().join("db")).unwrap();
    let rec = store.recorder();
    // 57 sessions; groups of three share a last_seen_at, so ties are ordered by id.
    for s in 0..57 {
        let id = format!("s{s:02}");
        rec.record_turn(turn(&id, &format!("{id}-t"), at((s / 3) * 60), s as usize));
    }
    store.flush().unwrap();

    let all = store.sessions(1000).unwrap();
    assert_eq!(all.len(), 57);
    for page_size in [1, 10, 56, 57, 100] {
        let mut paged = Vec::new();
        let mut offset = 0;
        loop {
            let page = store.sessions_page(page_size, offset).unwrap();
            assert!(page.len() <= page_size);
            if page.is_empty() {
                break;
            }
            offset += page.len();
            paged.extend(page);
        }
        assert_eq!(paged, all, "page size {page_size}");
    }
    let ids: BTreeSet<&str> = all.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids.len(), 57);
    // Newest first, then by id.
    for pair in all.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        assert!(
            a.last_seen_at > b.last_seen_at || (a.last_seen_at == b.last_seen_at && a.id < b.id)
        );
    }
    assert_eq!(store.sessions_page(10, 57).unwrap(), []);
}

fn proposal(n: usize) -> NewProposal {
    NewProposal {
        kind: ProposalKind::New,
        skill_name: format!("skill-{n}"),
        content: format!("---\nname: skill-{n}\n---\nBody {n}.\n"),
        base_content: None,
        diff: None,
        reason: "seen twice".to_owned(),
        session_id: None,
        turn_ids: vec![],
        signals: json!({}),
        evolver_model: "m".to_owned(),
        fingerprint: format!("fp{n}"),
    }
}

#[test]
fn proposal_pages_cover_every_proposal_once_newest_first() {
    let dir = TempDir::new().unwrap();
    let store = Store::open(dir.path().join("db")).unwrap();
    for n in 0..23 {
        let id = store.insert_proposal(proposal(n)).unwrap();
        if n % 3 == 0 {
            store
                .set_proposal_status(id, ProposalStatus::Rejected, None)
                .unwrap();
        }
    }
    assert_eq!(store.proposal_count(ProposalStatus::Pending).unwrap(), 15);
    assert_eq!(store.proposal_count(ProposalStatus::Rejected).unwrap(), 8);
    assert_eq!(store.proposal_count(ProposalStatus::Approved).unwrap(), 0);
    for status in [
        None,
        Some(ProposalStatus::Pending),
        Some(ProposalStatus::Rejected),
    ] {
        let all = store.proposals(status).unwrap();
        let mut paged = Vec::new();
        let mut offset = 0;
        loop {
            let page = store.proposals_page(status, 4, offset).unwrap();
            if page.is_empty() {
                break;
            }
            offset += page.len();
            paged.extend(page);
        }
        assert_eq!(paged, all, "{status:?}");
        assert!(all.windows(2).all(|p| p[0].id > p[1].id));
        assert!(all.iter().all(|p| status.is_none_or(|s| p.status == s)));
    }
    assert_eq!(store.proposals(None).unwrap().len(), 23);
}

#[test]
fn batched_prune_deletes_exactly_what_retention_says_and_keeps_the_rest() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("db");
    let store = Store::open(&path).unwrap();
    let rec = store.recorder();
    let day = 86_400;
    // 30 sessions over 20 days, 1 to 9 turns an hour apart: some wholly before the cutoff,
    // some across it, some after.
    let mut started: BTreeMap<String, DateTime<Utc>> = BTreeMap::new();
    let mut sessions: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut n = 0;
    for s in 0..30i64 {
        let session = format!("s{s:02}");
        for k in 0..(s % 9 + 1) {
            let id = format!("{session}-t{k}");
            let when = at(s * 16 * 3600 + k * 3600);
            rec.record_turn(turn(&session, &id, when, n));
            started.insert(id.clone(), when);
            sessions.entry(session.clone()).or_default().push(id);
            n += 1;
        }
    }
    store.flush().unwrap();
    // Thumbs on some turns, on both sides of the cutoff.
    for (i, id) in started.keys().enumerate().filter(|(i, _)| i % 4 == 0) {
        store
            .set_feedback(id, if i % 8 == 0 { 1 } else { -1 }, None)
            .unwrap();
    }
    assert_eq!(store.skill_stats().unwrap(), stats_from_log(&path));
    let blobs_before: i64 = raw(&path)
        .query_row("SELECT count(*) FROM blobs", [], |r| r.get(0))
        .unwrap();
    assert_eq!(blobs_before, 5);

    let cutoff = at(10 * day + 1800);
    let old: BTreeSet<&String> = started
        .iter()
        .filter(|(_, t)| **t < cutoff)
        .map(|(id, _)| id)
        .collect();
    let gone_sessions = sessions
        .values()
        .filter(|turns| turns.iter().all(|t| old.contains(t)))
        .count();
    // A batch of 7 splits sessions across batches.
    let report = store.prune_in_batches(cutoff, 7).unwrap();
    assert_eq!(report.turns as usize, old.len());
    assert_eq!(report.sessions as usize, gone_sessions);

    for (session, turns) in &sessions {
        let kept: Vec<String> = turns.iter().filter(|t| !old.contains(t)).cloned().collect();
        match store.session(session).unwrap() {
            None => assert!(kept.is_empty(), "{session} lost turns it should keep"),
            Some(row) => {
                assert_eq!(row.turn_count as usize, kept.len(), "{session}");
                assert_eq!(store.turn_ids_in_session(session).unwrap(), kept);
            }
        }
    }
    assert_eq!(
        store.turn_count().unwrap() as usize,
        started.len() - old.len()
    );
    // Usage, thumbs included, still matches what the remaining turns say.
    assert_eq!(store.skill_stats().unwrap(), stats_from_log(&path));
    let conn = raw(&path);
    let dangling: i64 = conn
        .query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(dangling, 0);
    let unreferenced: i64 = conn
        .query_row(
            "SELECT count(*) FROM blobs WHERE hash NOT IN (SELECT hash FROM turn_blobs)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(unreferenced, 0);
    assert_eq!(
        report.blobs as i64,
        blobs_before
            - conn
                .query_row("SELECT count(*) FROM blobs", [], |r| r.get::<_, i64>(0))
                .unwrap()
    );
    // Nothing is left to prune.
    assert_eq!(
        store.prune_in_batches(cutoff, 7).unwrap(),
        Default::default()
    );
}
