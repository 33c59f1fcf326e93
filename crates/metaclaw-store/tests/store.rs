//! Behaviour of the store through its public API, on real database files.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeZone, Utc};
use metaclaw_domain::{
    Dialect, SessionEndReason, SessionSource, TurnRecord, TurnStatus, TurnType, Usage,
};
use metaclaw_store::{
    Author, EvolutionRunStatus, EvolutionTrigger, NewEvolutionRun, NewProposal, NewSkillVersion,
    ProposalKind, ProposalStatus, PruneReport, Recorder, SCHEMA_VERSION, SkillStats, Store,
    StoreError, VersionAction,
};
use serde_json::{Value, json};
use tempfile::TempDir;

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 1, 12, 0, 0).unwrap()
}

fn at(secs: i64) -> DateTime<Utc> {
    t0() + chrono::Duration::seconds(secs)
}

fn db(dir: &TempDir) -> PathBuf {
    dir.path().join("nested").join("metaclaw.db")
}

const SYSTEM: &str = "You are a very long system prompt that every turn repeats.";

fn tools() -> Value {
    json!([{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}])
}

fn openai_request(system: &str, user: &str) -> Value {
    json!({
        "model": "gpt-4o",
        "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": user},
        ],
        "tools": tools(),
        "stream": true,
        "temperature": 0.7,
    })
}

fn anthropic_request(system: &str, user: &str) -> Value {
    json!({
        "model": "claude-sonnet",
        "max_tokens": 1024,
        "system": [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": user}]}],
        "tools": [{"name": "bash", "description": "run", "input_schema": {"type": "object"}}],
    })
}

fn turn(session: &str, id: &str, started_at: DateTime<Utc>, request: Value) -> TurnRecord {
    TurnRecord {
        stream: true,
        model: Some("gpt-4o".to_owned()),
        request,
        response: Some(json!({"choices": [{"message": {"role": "assistant", "content": "ok"}}]})),
        usage: Usage {
            input_tokens: Some(120),
            output_tokens: Some(7),
        },
        latency_ms: 812.5,
        ttfb_ms: Some(95.25),
        injected: json!({"skills": [{"id": "s1", "version": 3}]}),
        ..TurnRecord::minimal(session, id, id, started_at)
    }
}

fn simple(session: &str, id: &str, started_at: DateTime<Utc>) -> TurnRecord {
    turn(session, id, started_at, openai_request(SYSTEM, id))
}

fn raw(path: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(path).unwrap()
}

fn count(path: &Path, sql: &str) -> i64 {
    raw(path).query_row(sql, [], |r| r.get(0)).unwrap()
}

#[test]
fn recorder_is_cheap_to_share() {
    fn assert_traits<T: Clone + Send + Sync + 'static>() {}
    assert_traits::<Recorder>();
    fn assert_store<T: Send + Sync>() {}
    assert_store::<Store>();
}

#[test]
fn turns_across_two_sessions_get_ordered_seqs_and_counts() {
    let dir = TempDir::new().unwrap();
    let store = Store::open(db(&dir)).unwrap();
    let rec = store.recorder();
    let plan = [
        ("a", "a1"),
        ("b", "b1"),
        ("a", "a2"),
        ("a", "a3"),
        ("b", "b2"),
        ("a", "a4"),
        ("b", "b3"),
    ];
    for (i, (s, id)) in plan.iter().enumerate() {
        rec.record_turn(simple(s, id, at(i as i64)));
    }
    store.flush().unwrap();

    assert_eq!(store.turn_count().unwrap(), 7);
    assert_eq!(
        store.turn_ids_in_session("a").unwrap(),
        ["a1", "a2", "a3", "a4"]
    );
    assert_eq!(store.turn_ids_in_session("b").unwrap(), ["b1", "b2", "b3"]);
    let a = store.turns_in_session("a").unwrap();
    assert_eq!(a.iter().map(|t| t.seq).collect::<Vec<_>>(), [1, 2, 3, 4]);
    assert!(a.iter().all(|t| t.session_id == "a"));
    let b = store.turns_in_session("b").unwrap();
    assert_eq!(b.iter().map(|t| t.seq).collect::<Vec<_>>(), [1, 2, 3]);

    let sa = store.session("a").unwrap().unwrap();
    assert_eq!(sa.turn_count, 4);
    assert_eq!(sa.source, SessionSource::Header);
    assert_eq!(sa.started_at, at(0));
    assert_eq!(sa.last_seen_at, at(5));
    assert_eq!(sa.ended_at, None);
    assert_eq!(store.session("b").unwrap().unwrap().turn_count, 3);
    assert!(store.session("c").unwrap().is_none());

    // Most recently active first.
    let all = store.sessions(10).unwrap();
    assert_eq!(
        all.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        ["b", "a"]
    );
    assert_eq!(store.sessions(1).unwrap().len(), 1);
    assert_eq!(store.turns_in_session("c").unwrap(), []);
}

#[test]
fn every_field_round_trips_and_broken_turns_are_stored_as_such() {
    let dir = TempDir::new().unwrap();
    let store = Store::open(db(&dir)).unwrap();
    let rec = store.recorder();

    let ok = simple("s", "ok", at(0));
    let mut broken = simple("s", "broken", at(1));
    broken.status = TurnStatus::StreamBroken;
    broken.response = Some(json!({"partial": true}));
    broken.error = Some("upstream closed mid-stream".to_owned());
    let mut aborted = simple("s", "aborted", at(2));
    aborted.status = TurnStatus::ClientAborted;
    aborted.turn_type = TurnType::Side;
    aborted.stream = false;
    aborted.model = None;
    aborted.response = None;
    aborted.http_status = 499;
    aborted.usage = Usage::default();
    aborted.ttfb_ms = None;
    aborted.injected = Value::Null;
    // Floats that only survive an exact parser.
    aborted.request["temperature"] = json!(0.30000000000000004);
    aborted.request["top_p"] = json!(5e-324);
    aborted.latency_ms = 0.1 + 0.2;

    for t in [&ok, &broken, &aborted] {
        rec.record_turn(t.clone());
    }
    store.flush().unwrap();

    for (t, seq) in [(&ok, 1), (&broken, 2), (&aborted, 3)] {
        let row = store.turn(&t.turn_id).unwrap().unwrap();
        assert_eq!(row.id, t.turn_id);
        assert_eq!(row.session_id, t.session_id);
        assert_eq!(row.seq, seq);
        assert_eq!(row.turn_type, t.turn_type);
        assert_eq!(row.api, t.api);
        assert_eq!(row.stream, t.stream);
        assert_eq!(row.model, t.model);
        assert_eq!(row.request, t.request);
        assert_eq!(row.request.to_string(), t.request.to_string());
        assert_eq!(row.response, t.response);
        assert_eq!(row.status, t.status);
        assert_eq!(row.http_status, t.http_status);
        assert_eq!(row.error, t.error);
        assert_eq!(row.input_tokens, t.usage.input_tokens);
        assert_eq!(row.output_tokens, t.usage.output_tokens);
        assert_eq!(row.started_at, t.started_at);
        assert_eq!(row.latency_ms.to_bits(), t.latency_ms.to_bits());
        assert_eq!(row.ttfb_ms, t.ttfb_ms);
        assert_eq!(row.injected, t.injected);
    }
    assert!(store.turn("missing").unwrap().is_none());

    // Rows serialize with the domain's snake_case names.
    let v = serde_json::to_value(store.turn("broken").unwrap().unwrap()).unwrap();
    assert_eq!(v["status"], "stream_broken");
    assert_eq!(v["api"], "open_ai");
    let s = serde_json::to_value(store.session("s").unwrap().unwrap()).unwrap();
    assert_eq!(s["source"], "header");
    assert_eq!(s["turn_count"], 3);
}

#[test]
fn shared_system_prompt_and_tools_are_stored_once_openai() {
    let dir = TempDir::new().unwrap();
    let path = db(&dir);
    let store = Store::open(&path).unwrap();
    let rec = store.recorder();
    let turns: Vec<_> = (0..10)
        .map(|i| simple("s", &format!("t{i}"), at(i)))
        .collect();
    for t in &turns {
        rec.record_turn(t.clone());
    }
    store.flush().unwrap();

    assert_eq!(
        count(&path, "SELECT count(*) FROM blobs WHERE kind = 'system'"),
        1
    );
    assert_eq!(
        count(&path, "SELECT count(*) FROM blobs WHERE kind = 'tools'"),
        1
    );
    assert_eq!(count(&path, "SELECT count(*) FROM blobs"), 2);
    // The big parts are not inline in the stored request.
    assert_eq!(
        count(
            &path,
            &format!("SELECT count(*) FROM turns WHERE instr(request_json, '{SYSTEM}') > 0")
        ),
        0
    );
    assert_eq!(
        count(
            &path,
            "SELECT count(*) FROM turns WHERE instr(request_json, '\"$blob\"') > 0"
        ),
        10
    );

    let rows = store.turns_in_session("s").unwrap();
    let system_hash = rows[0].system_blob.clone().unwrap();
    let tools_hash = rows[0].tools_blob.clone().unwrap();
    assert_ne!(system_hash, tools_hash);
    for (row, t) in rows.iter().zip(&turns) {
        assert_eq!(row.system_blob.as_deref(), Some(system_hash.as_str()));
        assert_eq!(row.tools_blob.as_deref(), Some(tools_hash.as_str()));
        assert_eq!(row.request, t.request);
        assert_eq!(store.turn(&t.turn_id).unwrap().unwrap().request, t.request);
    }
}

#[test]
fn shared_system_prompt_and_tools_are_stored_once_anthropic() {
    let dir = TempDir::new().unwrap();
    let path = db(&dir);
    let store = Store::open(&path).unwrap();
    let rec = store.recorder();
    let turns: Vec<_> = (0..10)
        .map(|i| {
            let mut t = turn(
                "s",
                &format!("t{i}"),
                at(i),
                anthropic_request(SYSTEM, &format!("q{i}")),
            );
            t.api = Dialect::Anthropic;
            t
        })
        .collect();
    for t in &turns {
        rec.record_turn(t.clone());
    }
    // A plain-string system prompt is a different blob.
    let mut plain = turn(
        "s",
        "plain",
        at(20),
        json!({"system": SYSTEM, "messages": []}),
    );
    plain.api = Dialect::Anthropic;
    rec.record_turn(plain.clone());
    store.flush().unwrap();

    assert_eq!(
        count(&path, "SELECT count(*) FROM blobs WHERE kind = 'system'"),
        2
    );
    assert_eq!(
        count(&path, "SELECT count(*) FROM blobs WHERE kind = 'tools'"),
        1
    );
    for t in turns.iter().chain([&plain]) {
        let row = store.turn(&t.turn_id).unwrap().unwrap();
        assert_eq!(row.request, t.request);
        assert_eq!(row.request.to_string(), t.request.to_string());
    }
    assert!(store.turn("plain").unwrap().unwrap().tools_blob.is_none());
}

#[test]
fn several_system_messages_each_get_a_ref() {
    let dir = TempDir::new().unwrap();
    let path = db(&dir);
    let store = Store::open(&path).unwrap();
    let request = json!({
        "messages": [
            {"role": "system", "content": "first"},
            {"role": "developer", "content": "second"},
            {"role": "user", "content": "hi"},
            {"role": "system", "content": "first"},
        ]
    });
    store
        .recorder()
        .record_turn(turn("s", "t", at(0), request.clone()));
    store.flush().unwrap();
    let row = store.turn("t").unwrap().unwrap();
    assert_eq!(row.request, request);
    assert_eq!(count(&path, "SELECT count(*) FROM blobs"), 2);
    assert_eq!(
        count(&path, "SELECT count(*) FROM turn_blobs WHERE turn_id = 't'"),
        2
    );
    let first: String = raw(&path)
        .query_row(
            "SELECT hash FROM blobs WHERE content = '\"first\"'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(row.system_blob, Some(first));
    assert_eq!(row.tools_blob, None);
}

#[test]
fn session_events_set_end_and_activity() {
    let dir = TempDir::new().unwrap();
    let store = Store::open(db(&dir)).unwrap();
    let rec = store.recorder();
    rec.record_turn(simple("s", "t1", at(0)));
    rec.session_seen("s", SessionSource::Header, at(30));
    rec.session_ended("s", SessionEndReason::IdleTimeout, at(90));
    // Ending an unknown session is harmless and creates nothing.
    rec.session_ended("ghost", SessionEndReason::Shutdown, at(90));
    rec.session_seen("fresh", SessionSource::Heuristic, at(40));
    store.flush().unwrap();

    let s = store.session("s").unwrap().unwrap();
    assert_eq!(s.ended_at, Some(at(90)));
    assert_eq!(s.end_reason, Some(SessionEndReason::IdleTimeout));
    assert_eq!(s.last_seen_at, at(30));
    assert_eq!(s.started_at, at(0));
    assert_eq!(s.turn_count, 1);
    assert!(store.session("ghost").unwrap().is_none());
    let fresh = store.session("fresh").unwrap().unwrap();
    assert_eq!(
        (fresh.turn_count, fresh.source, fresh.ended_at),
        (0, SessionSource::Heuristic, None)
    );

    // A turn that finishes out of order does not move last_seen_at backwards.
    rec.record_turn(simple("s", "t2", at(10)));
    store.flush().unwrap();
    let s = store.session("s").unwrap().unwrap();
    assert_eq!((s.last_seen_at, s.turn_count), (at(30), 2));
    assert_eq!(store.turn("t2").unwrap().unwrap().seq, 2);
}

#[test]
fn prune_removes_old_data_and_keeps_what_is_referenced() {
    let dir = TempDir::new().unwrap();
    let path = db(&dir);
    let store = Store::open(&path).unwrap();
    let rec = store.recorder();
    let day = 86_400;
    let old_only = "prompt used only by old turns";
    let shared = "prompt used by old and new turns";
    // Session "old": everything old. Session "mixed": two old turns, two new.
    rec.record_turn(turn("old", "o1", at(0), openai_request(old_only, "x")));
    rec.record_turn(turn("old", "o2", at(1), openai_request(old_only, "y")));
    rec.record_turn(turn("mixed", "m1", at(2), openai_request(shared, "x")));
    rec.record_turn(turn("mixed", "m2", at(3), openai_request(old_only, "x")));
    rec.record_turn(turn(
        "mixed",
        "m3",
        at(10 * day),
        openai_request(shared, "y"),
    ));
    rec.record_turn(turn(
        "mixed",
        "m4",
        at(10 * day + 1),
        openai_request("new prompt", "z"),
    ));
    // A session seen recently without turns survives.
    rec.session_seen("idle", SessionSource::Body, at(10 * day));
    store.flush().unwrap();
    assert_eq!(count(&path, "SELECT count(*) FROM blobs"), 4); // 3 prompts + tools

    let report = store.prune(at(5 * day)).unwrap();
    assert_eq!(
        report,
        PruneReport {
            turns: 4,
            sessions: 1,
            blobs: 1
        }
    );

    assert_eq!(store.turn_count().unwrap(), 2);
    assert!(store.session("old").unwrap().is_none());
    assert!(store.session("idle").unwrap().is_some());
    let mixed = store.session("mixed").unwrap().unwrap();
    assert_eq!(mixed.turn_count, 2);
    assert_eq!(store.turn_ids_in_session("mixed").unwrap(), ["m3", "m4"]);
    // Referenced blobs survive and still reinflate.
    assert_eq!(
        store.turn("m3").unwrap().unwrap().request,
        openai_request(shared, "y")
    );
    assert_eq!(
        store.turn("m4").unwrap().unwrap().request,
        openai_request("new prompt", "z")
    );
    assert_eq!(count(&path, "SELECT count(*) FROM blobs"), 3);
    assert_eq!(
        count(
            &path,
            &format!("SELECT count(*) FROM blobs WHERE content = '\"{old_only}\"'")
        ),
        0
    );
    assert_eq!(count(&path, "SELECT count(*) FROM turn_blobs"), 4);
    assert_eq!(
        count(&path, "SELECT count(*) FROM pragma_foreign_key_check"),
        0
    );

    // seq keeps counting after the prune; nothing else to remove the second time.
    rec.record_turn(simple("mixed", "m5", at(11 * day)));
    store.flush().unwrap();
    assert_eq!(store.turn("m5").unwrap().unwrap().seq, 5);
    assert_eq!(store.session("mixed").unwrap().unwrap().turn_count, 3);
    assert_eq!(store.prune(at(5 * day)).unwrap(), PruneReport::default());
}

#[test]
fn reopening_keeps_data_and_schema_version() {
    let dir = TempDir::new().unwrap();
    let path = db(&dir);
    let store = Store::open(&path).unwrap();
    store.recorder().record_turn(simple("s", "t1", at(0)));
    store.close().unwrap();
    assert_eq!(count(&path, "PRAGMA user_version"), SCHEMA_VERSION as i64);

    let store = Store::open(&path).unwrap();
    assert_eq!(store.turn_count().unwrap(), 1);
    store.recorder().record_turn(simple("s", "t2", at(1)));
    store.flush().unwrap();
    assert_eq!(store.turn("t2").unwrap().unwrap().seq, 2);
    drop(store);
    assert_eq!(count(&path, "PRAGMA user_version"), SCHEMA_VERSION as i64);
    let mode: String = raw(&path)
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn dropping_the_store_commits_pending_turns() {
    let dir = TempDir::new().unwrap();
    let path = db(&dir);
    let store = Store::open(&path).unwrap();
    let rec = store.recorder();
    for i in 0..200 {
        rec.record_turn(simple("s", &format!("t{i}"), at(i)));
    }
    drop(store);
    // The recorder outlives the writer: sending is logged, never panics.
    rec.record_turn(simple("s", "late", at(999)));
    rec.session_ended("s", SessionEndReason::Shutdown, at(999));

    let ro = Store::open_read_only(&path).unwrap();
    assert_eq!(ro.turn_count().unwrap(), 200);
    assert_eq!(ro.session("s").unwrap().unwrap().turn_count, 200);
}

#[test]
fn duplicate_turn_id_fails_alone_and_the_writer_keeps_going() {
    let dir = TempDir::new().unwrap();
    let store = Store::open(db(&dir)).unwrap();
    let rec = store.recorder();
    rec.record_turn(simple("s", "a", at(0)));
    let mut dup = simple("other", "a", at(1));
    dup.status = TurnStatus::UpstreamError;
    rec.record_turn(dup);
    rec.record_turn(simple("s", "b", at(2)));
    store.flush().unwrap();
    rec.record_turn(simple("s", "c", at(3)));
    store.flush().unwrap();

    assert_eq!(store.turn_count().unwrap(), 3);
    assert_eq!(store.turn("a").unwrap().unwrap().status, TurnStatus::Ok);
    assert_eq!(store.turn_ids_in_session("s").unwrap(), ["a", "b", "c"]);
    // The failed turn's session upsert was rolled back with it.
    assert!(store.session("other").unwrap().is_none());
}

#[test]
fn concurrent_recorders_get_gapless_seqs() {
    let dir = TempDir::new().unwrap();
    let store = Store::open(db(&dir)).unwrap();
    std::thread::scope(|scope| {
        for th in 0..8 {
            let rec = store.recorder();
            scope.spawn(move || {
                for i in 0..50 {
                    rec.record_turn(simple("s", &format!("t{th}-{i}"), at(i)));
                }
            });
        }
    });
    store.flush().unwrap();
    let seqs: Vec<u64> = store
        .turns_in_session("s")
        .unwrap()
        .iter()
        .map(|t| t.seq)
        .collect();
    assert_eq!(seqs, (1..=400).collect::<Vec<_>>());
    assert_eq!(store.session("s").unwrap().unwrap().turn_count, 400);
}

#[test]
fn a_turn_is_committed_within_a_second_without_flush() {
    let dir = TempDir::new().unwrap();
    let path = db(&dir);
    let store = Store::open(&path).unwrap();
    let reader = Store::open_read_only(&path).unwrap();
    let sent = Instant::now();
    store.recorder().record_turn(simple("s", "t", at(0)));
    while reader.turn_count().unwrap() == 0 {
        assert!(
            sent.elapsed() < Duration::from_secs(1),
            "turn not committed within 1 s"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn read_only_store_sees_commits_of_the_running_writer() {
    let dir = TempDir::new().unwrap();
    let path = db(&dir);
    let store = Store::open(&path).unwrap();
    let rec = store.recorder();
    rec.record_turn(simple("s", "t1", at(0)));
    rec.record_turn(simple("s", "t2", at(3600)));
    store.flush().unwrap();

    let ro = Store::open_read_only(&path).unwrap();
    assert!(ro.is_read_only() && !store.is_read_only());
    assert_eq!(ro.turn_count().unwrap(), 2);
    assert_eq!(ro.turns_since(at(1)).unwrap(), 1);
    assert_eq!(ro.turns_since(at(0)).unwrap(), 2);
    assert_eq!(ro.turns_since(at(7200)).unwrap(), 0);
    assert_eq!(
        ro.turn("t2").unwrap().unwrap().request,
        simple("s", "t2", at(0)).request
    );

    // Later commits are visible to the already-open reader.
    rec.record_turn(simple("s", "t3", at(7200)));
    store.flush().unwrap();
    assert_eq!(ro.turn_count().unwrap(), 3);

    // A read-only store cannot write.
    ro.recorder().record_turn(simple("s", "nope", at(0)));
    ro.flush().unwrap();
    assert!(matches!(ro.prune(at(0)), Err(StoreError::ReadOnly)));
    store.flush().unwrap();
    assert_eq!(store.turn_count().unwrap(), 3);
    ro.close().unwrap();
    store.close().unwrap();
}

#[test]
fn read_only_open_reports_missing_or_mismatched_databases() {
    let dir = TempDir::new().unwrap();
    let missing = dir.path().join("missing.db");
    assert!(matches!(
        Store::open_read_only(&missing),
        Err(StoreError::DatabaseNotFound(_))
    ));
    assert!(!missing.exists(), "read-only open must not create the file");

    let empty = dir.path().join("empty.db");
    raw(&empty).execute_batch("CREATE TABLE x (y)").unwrap();
    let err = Store::open_read_only(&empty).unwrap_err();
    assert!(
        matches!(err, StoreError::SchemaTooOld { found: 0, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("older"));

    let newer = dir.path().join("newer.db");
    drop(Store::open(&newer).unwrap());
    raw(&newer)
        .pragma_update(None, "user_version", SCHEMA_VERSION as i64 + 1)
        .unwrap();
    assert!(matches!(
        Store::open_read_only(&newer),
        Err(StoreError::SchemaTooNew { .. })
    ));
    assert!(matches!(
        Store::open(&newer),
        Err(StoreError::SchemaTooNew { .. })
    ));
}

#[test]
fn skill_switches_and_embedding_cache_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let store = metaclaw_store::Store::open(dir.path().join("s.db")).unwrap();
    assert!(store.skill_states().unwrap().is_empty());
    let change = |name: &str, enabled, pinned| metaclaw_store::StateChange {
        name: name.into(),
        enabled,
        pinned,
    };
    store
        .set_skill_state(change("a", Some(false), None))
        .unwrap();
    store
        .set_skill_state(change("a", None, Some(true)))
        .unwrap();
    store
        .set_skill_state(change("b", None, Some(true)))
        .unwrap();
    let states = store.skill_states().unwrap();
    assert_eq!(
        states["a"],
        metaclaw_store::SkillSwitches {
            enabled: false,
            pinned: true
        }
    );
    assert_eq!(
        states["b"],
        metaclaw_store::SkillSwitches {
            enabled: true,
            pinned: true
        }
    );
    store.put_skill_embedding("m", "h1", &[0.5, -1.25, 3.0]);
    store.flush().unwrap();
    assert_eq!(
        store.skill_embedding("m", "h1").unwrap(),
        Some(vec![0.5, -1.25, 3.0])
    );
    assert_eq!(store.skill_embedding("other", "h1").unwrap(), None);
}

// --- Skill evolution -------------------------------------------------------------------

fn with_skills(session: &str, id: &str, started_at: DateTime<Utc>, skills: &[&str]) -> TurnRecord {
    let mut t = simple(session, id, started_at);
    t.injected = Value::Array(
        skills
            .iter()
            .map(|name| json!({"kind": "skill", "name": name, "version": "1.0", "score": 2.5}))
            .collect(),
    );
    t
}

fn skill_rows(path: &Path, turn_id: &str) -> Vec<(String, Option<String>)> {
    raw(path)
        .prepare(
            "SELECT skill_name, version FROM turn_skills WHERE turn_id = ?1 ORDER BY skill_name",
        )
        .unwrap()
        .query_map([turn_id], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
}

#[test]
fn skill_generation_round_trips_on_turns() {
    let dir = TempDir::new().unwrap();
    let path = db(&dir);
    let store = Store::open(&path).unwrap();
    let mut with = simple("s", "with", at(0));
    with.skill_generation = Some(42);
    let without = simple("s", "without", at(1));
    store.recorder().record_turn(with);
    store.recorder().record_turn(without);
    store.close().unwrap();

    let ro = Store::open_read_only(&path).unwrap();
    assert_eq!(ro.turn("with").unwrap().unwrap().skill_generation, Some(42));
    assert_eq!(ro.turn("without").unwrap().unwrap().skill_generation, None);
    let gens: Vec<_> = ro
        .turns_in_session("s")
        .unwrap()
        .iter()
        .map(|t| t.skill_generation)
        .collect();
    assert_eq!(gens, [Some(42), None]);
    let v = serde_json::to_value(ro.turn("with").unwrap().unwrap()).unwrap();
    assert_eq!(v["skill_generation"], 42);

    // Turn records serialized before the field existed still deserialize.
    let mut old = serde_json::to_value(simple("s", "old", at(0))).unwrap();
    old.as_object_mut()
        .unwrap()
        .remove("skill_generation")
        .unwrap();
    let parsed: TurnRecord = serde_json::from_value(old).unwrap();
    assert_eq!(parsed.skill_generation, None);
}

#[test]
fn turn_skills_come_from_injected_skill_entries_and_go_with_pruned_turns() {
    let dir = TempDir::new().unwrap();
    let path = db(&dir);
    let store = Store::open(&path).unwrap();
    let rec = store.recorder();
    let mut mixed = simple("s", "mixed", at(0));
    mixed.injected = json!([
        {"kind": "skill", "name": "git-rebase", "version": "1.2", "score": 3.1},
        {"kind": "memory", "name": "not-a-skill"},
        {"kind": "skill", "name": "py-venv", "version": 3},
        {"kind": "skill", "name": "no-version"},
        {"kind": "skill", "version": "1"},
        {"kind": "skill", "name": "git-rebase", "version": "9.9"},
        "skill",
    ]);
    rec.record_turn(mixed);
    rec.record_turn(with_skills("s", "new", at(10 * 86_400), &["git-rebase"]));
    // Injected as an object (older shape) or null: no skills, and no error.
    rec.record_turn(simple("s", "object", at(1)));
    let mut null = simple("s", "null", at(2));
    null.injected = Value::Null;
    rec.record_turn(null);
    store.flush().unwrap();

    assert_eq!(store.turn_count().unwrap(), 4);
    assert_eq!(
        skill_rows(&path, "mixed"),
        [
            ("git-rebase".to_owned(), Some("1.2".to_owned())),
            ("no-version".to_owned(), None),
            ("py-venv".to_owned(), Some("3".to_owned())),
        ]
    );
    assert_eq!(skill_rows(&path, "object"), []);
    assert_eq!(skill_rows(&path, "null"), []);
    assert_eq!(count(&path, "SELECT count(*) FROM turn_skills"), 4);

    store.set_feedback("mixed", 1, None).unwrap();
    let report = store.prune(at(5 * 86_400)).unwrap();
    assert_eq!(report.turns, 3);
    assert_eq!(skill_rows(&path, "mixed"), []);
    assert_eq!(
        skill_rows(&path, "new"),
        [("git-rebase".to_owned(), Some("1.0".to_owned()))]
    );
    assert_eq!(count(&path, "SELECT count(*) FROM turn_skills"), 1);
    assert_eq!(count(&path, "SELECT count(*) FROM feedback"), 0);
    assert_eq!(
        count(&path, "SELECT count(*) FROM pragma_foreign_key_check"),
        0
    );
    let stats = store.skill_stats().unwrap();
    assert_eq!(stats.keys().collect::<Vec<_>>(), ["git-rebase"]);
    assert_eq!(stats["git-rebase"].injected, 1);
}

#[test]
fn feedback_is_set_replaced_validated_and_scoped_to_stored_turns() {
    let dir = TempDir::new().unwrap();
    let path = db(&dir);
    let store = Store::open(&path).unwrap();
    let rec = store.recorder();
    for (s, id, t) in [
        ("a", "a1", 0),
        ("a", "a2", 1),
        ("a", "a3", 2),
        ("b", "b1", 3),
    ] {
        rec.record_turn(simple(s, id, at(t)));
    }
    // No flush: set_feedback runs after the turns queued before it.
    let before = Utc::now() - chrono::Duration::seconds(1);
    store.set_feedback("a1", 1, Some("great".into())).unwrap();
    store.set_feedback("a2", -1, None).unwrap();
    store
        .set_feedback("b1", -1, Some("wrong tool".into()))
        .unwrap();

    let a1 = store.feedback("a1").unwrap().unwrap();
    assert_eq!((a1.rating, a1.note.as_deref()), (1, Some("great")));
    assert!(a1.created_at >= before && a1.created_at <= Utc::now());
    assert_eq!(store.feedback("a3").unwrap(), None);
    assert_eq!(store.feedback("missing").unwrap(), None);

    // Setting again replaces rating and note.
    store.set_feedback("a1", -1, None).unwrap();
    let a1 = store.feedback("a1").unwrap().unwrap();
    assert_eq!((a1.rating, a1.note), (-1, None));
    assert_eq!(count(&path, "SELECT count(*) FROM feedback"), 3);

    for bad in [0, 2, -2, i8::MIN] {
        let err = store.set_feedback("a3", bad, None).unwrap_err();
        assert!(
            matches!(err, StoreError::InvalidRating(r) if r == bad),
            "{err}"
        );
        assert!(err.to_string().contains("-1"), "{err}");
    }
    assert_eq!(store.feedback("a3").unwrap(), None);

    let err = store.set_feedback("ghost", 1, None).unwrap_err();
    assert!(
        matches!(&err, StoreError::NotFound { what: "turn", id } if id == "ghost"),
        "{err}"
    );
    assert_eq!(err.to_string(), "turn ghost does not exist");
    assert_eq!(count(&path, "SELECT count(*) FROM feedback"), 3);

    let in_a = store.feedback_in_session("a").unwrap();
    let mut ids: Vec<_> = in_a.keys().cloned().collect();
    ids.sort();
    assert_eq!(ids, ["a1", "a2"]);
    assert_eq!(in_a["a2"].rating, -1);
    let in_b = store.feedback_in_session("b").unwrap();
    assert_eq!(in_b["b1"].note.as_deref(), Some("wrong tool"));
    assert!(store.feedback_in_session("nope").unwrap().is_empty());
    // By turn: only the rated ones among those asked for, across sessions.
    let on = store
        .feedback_on_turns(&["a2", "a3", "b1", "ghost"])
        .unwrap();
    let mut ids: Vec<_> = on.keys().cloned().collect();
    ids.sort();
    assert_eq!(ids, ["a2", "b1"]);
    assert_eq!(on["a2"], store.feedback("a2").unwrap().unwrap());
    assert!(store.feedback_on_turns(&[]).unwrap().is_empty());

    let v = serde_json::to_value(store.feedback("b1").unwrap().unwrap()).unwrap();
    assert_eq!(v["rating"], -1);

    let ro = Store::open_read_only(&path).unwrap();
    assert!(matches!(
        ro.set_feedback("a3", 1, None),
        Err(StoreError::ReadOnly)
    ));
    assert_eq!(ro.feedback("b1").unwrap().unwrap().rating, -1);
}

fn proposal(kind: ProposalKind, name: &str, fingerprint: &str) -> NewProposal {
    NewProposal {
        kind,
        skill_name: name.to_owned(),
        content: format!("---\nname: {name}\n---\nDo the thing.\n"),
        base_content: (kind == ProposalKind::Update).then(|| "old body".to_owned()),
        diff: (kind == ProposalKind::Update).then(|| "-old\n+new".to_owned()),
        reason: "user corrected the agent twice".to_owned(),
        session_id: Some("s".to_owned()),
        turn_ids: vec!["t1".to_owned(), "t2".to_owned()],
        signals: json!({"thumbs_down": 2, "corrections": ["use rebase"]}),
        evolver_model: "gpt-4o-mini".to_owned(),
        fingerprint: fingerprint.to_owned(),
    }
}

#[test]
fn proposals_are_listed_by_status_and_decided() {
    let dir = TempDir::new().unwrap();
    let path = db(&dir);
    let store = Store::open(&path).unwrap();
    let new = proposal(ProposalKind::New, "git-rebase", "fp-1");
    let id1 = store.insert_proposal(new.clone()).unwrap();
    let id2 = store
        .insert_proposal(proposal(ProposalKind::Update, "py-venv", "fp-2"))
        .unwrap();
    let id3 = store
        .insert_proposal(proposal(ProposalKind::New, "docker", "fp-3"))
        .unwrap();
    assert!(id1 < id2 && id2 < id3);

    let row = store.proposal(id1).unwrap().unwrap();
    assert_eq!(row.id, id1);
    assert_eq!(row.kind, ProposalKind::New);
    assert_eq!(row.skill_name, new.skill_name);
    assert_eq!(row.content, new.content);
    assert_eq!(row.base_content, None);
    assert_eq!(row.diff, None);
    assert_eq!(row.reason, new.reason);
    assert_eq!(row.session_id, new.session_id);
    assert_eq!(row.turn_ids, new.turn_ids);
    assert_eq!(row.signals, new.signals);
    assert_eq!(row.evolver_model, new.evolver_model);
    assert_eq!(row.status, ProposalStatus::Pending);
    assert_eq!(row.reject_reason, None);
    assert_eq!(row.fingerprint, "fp-1");
    assert_eq!(row.decided_at, None);
    let update = store.proposal(id2).unwrap().unwrap();
    assert_eq!(update.base_content.as_deref(), Some("old body"));
    assert_eq!(update.diff.as_deref(), Some("-old\n+new"));
    assert_eq!(store.proposal(999).unwrap(), None);

    let ids = |status| -> Vec<i64> {
        store
            .proposals(status)
            .unwrap()
            .iter()
            .map(|p| p.id)
            .collect()
    };
    assert_eq!(ids(None), [id3, id2, id1]);
    assert_eq!(ids(Some(ProposalStatus::Pending)), [id3, id2, id1]);
    assert!(store.rejected_fingerprints().unwrap().is_empty());

    store
        .set_proposal_status(id1, ProposalStatus::Rejected, Some("too vague".into()))
        .unwrap();
    store
        .set_proposal_status(id2, ProposalStatus::Approved, None)
        .unwrap();
    store
        .set_proposal_status(id3, ProposalStatus::Rejected, None)
        .unwrap();
    let rejected = store.proposal(id1).unwrap().unwrap();
    assert_eq!(rejected.status, ProposalStatus::Rejected);
    assert_eq!(rejected.reject_reason.as_deref(), Some("too vague"));
    let decided = rejected.decided_at.unwrap();
    assert!(decided >= rejected.created_at && decided <= Utc::now());

    assert_eq!(ids(Some(ProposalStatus::Pending)), Vec::<i64>::new());
    assert_eq!(ids(Some(ProposalStatus::Rejected)), [id3, id1]);
    assert_eq!(ids(Some(ProposalStatus::Approved)), [id2]);
    assert_eq!(
        store.rejected_fingerprints().unwrap(),
        ["fp-1", "fp-3"].map(String::from).into()
    );
    assert_eq!(store.rejected_names().unwrap(), ["docker", "git-rebase"]);

    // Undo an approval; back to pending clears the decision time.
    store
        .set_proposal_status(id2, ProposalStatus::Undone, None)
        .unwrap();
    assert_eq!(ids(Some(ProposalStatus::Undone)), [id2]);
    store
        .set_proposal_status(id1, ProposalStatus::Pending, None)
        .unwrap();
    let reopened = store.proposal(id1).unwrap().unwrap();
    assert_eq!((reopened.decided_at, reopened.reject_reason), (None, None));
    assert_eq!(store.rejected_names().unwrap(), ["docker"]);

    let err = store
        .set_proposal_status(999, ProposalStatus::Approved, None)
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::NotFound { what: "proposal", id } if id == "999"),
        "{err}"
    );

    let v = serde_json::to_value(store.proposal(id2).unwrap().unwrap()).unwrap();
    assert_eq!(v["kind"], "update");
    assert_eq!(v["status"], "undone");
    assert_eq!(v["turn_ids"], json!(["t1", "t2"]));
    assert_eq!(v["signals"]["thumbs_down"], 2);
    assert_eq!(
        "rejected".parse::<ProposalStatus>().unwrap(),
        ProposalStatus::Rejected
    );
    assert!("maybe".parse::<ProposalStatus>().is_err());
}

fn version(name: &str, content: &str, action: VersionAction) -> NewSkillVersion {
    NewSkillVersion {
        skill_name: name.to_owned(),
        content: content.to_owned(),
        author: Author::User,
        action,
        proposal_id: None,
    }
}

#[test]
fn skill_versions_are_numbered_per_skill_and_generations_persist() {
    let dir = TempDir::new().unwrap();
    let path = db(&dir);
    let store = Store::open(&path).unwrap();
    assert_eq!(store.skill_generation().unwrap(), 0);
    assert!(store.skill_versions("a").unwrap().is_empty());

    let pid = store
        .insert_proposal(proposal(ProposalKind::Update, "a", "fp"))
        .unwrap();
    let plan = [
        ("a", "a v1", VersionAction::Create),
        ("b", "b v1", VersionAction::Create),
        ("a", "a v2", VersionAction::Edit),
        ("a", "a v3", VersionAction::Approve),
        ("b", "b v2", VersionAction::Delete),
    ];
    let mut rows = Vec::new();
    for (name, content, action) in plan {
        let mut v = version(name, content, action);
        if action == VersionAction::Approve {
            v.author = Author::Evolver;
            v.proposal_id = Some(pid);
        }
        rows.push(store.record_skill_version(v).unwrap());
    }
    assert_eq!(
        rows.iter()
            .map(|r| (r.skill_name.as_str(), r.version, r.generation))
            .collect::<Vec<_>>(),
        [
            ("a", 1, 1),
            ("b", 1, 2),
            ("a", 2, 3),
            ("a", 3, 4),
            ("b", 2, 5)
        ]
    );
    assert_eq!(store.skill_generation().unwrap(), 5);

    let a = store.skill_versions("a").unwrap();
    assert_eq!(
        a,
        rows.iter()
            .filter(|r| r.skill_name == "a")
            .cloned()
            .collect::<Vec<_>>()
    );
    assert_eq!(
        a.iter().map(|r| r.content.as_str()).collect::<Vec<_>>(),
        ["a v1", "a v2", "a v3"]
    );
    let v3 = store.skill_version("a", 3).unwrap().unwrap();
    assert_eq!(
        (v3.author, v3.action, v3.proposal_id),
        (Author::Evolver, VersionAction::Approve, Some(pid))
    );
    assert_eq!(store.skill_version("a", 4).unwrap(), None);
    assert_eq!(store.skill_version("zzz", 1).unwrap(), None);
    let v = serde_json::to_value(&v3).unwrap();
    assert_eq!(
        (v["author"].as_str(), v["action"].as_str()),
        (Some("evolver"), Some("approve"))
    );

    // A version must cite a stored proposal; a failed record changes nothing.
    let mut bad = version("a", "a v4", VersionAction::Approve);
    bad.proposal_id = Some(12345);
    assert!(store.record_skill_version(bad).is_err());
    assert_eq!(store.skill_generation().unwrap(), 5);
    assert_eq!(store.skill_versions("a").unwrap().len(), 3);
    store.close().unwrap();

    // Reopened: the counter and numbering carry on.
    let ro = Store::open_read_only(&path).unwrap();
    assert_eq!(ro.skill_generation().unwrap(), 5);
    assert!(matches!(
        ro.record_skill_version(version("a", "x", VersionAction::Edit)),
        Err(StoreError::ReadOnly)
    ));
    drop(ro);
    let store = Store::open(&path).unwrap();
    assert_eq!(store.skill_generation().unwrap(), 5);
    let next = store
        .record_skill_version(version("a", "a v4", VersionAction::Rollback))
        .unwrap();
    assert_eq!((next.version, next.generation), (4, 6));
    assert_eq!(store.skill_version("a", 4).unwrap().unwrap(), next);
}

#[test]
fn concurrent_skill_versions_get_gapless_numbers_and_generations() {
    let dir = TempDir::new().unwrap();
    let store = Store::open(db(&dir)).unwrap();
    std::thread::scope(|scope| {
        for th in 0..4 {
            let store = &store;
            scope.spawn(move || {
                for i in 0..10 {
                    let name = if th % 2 == 0 { "even" } else { "odd" };
                    store
                        .record_skill_version(version(
                            name,
                            &format!("{th}-{i}"),
                            VersionAction::Edit,
                        ))
                        .unwrap();
                }
            });
        }
    });
    assert_eq!(store.skill_generation().unwrap(), 40);
    let mut generations = Vec::new();
    for name in ["even", "odd"] {
        let rows = store.skill_versions(name).unwrap();
        assert_eq!(
            rows.iter().map(|r| r.version).collect::<Vec<_>>(),
            (1..=20).collect::<Vec<_>>()
        );
        generations.extend(rows.iter().map(|r| r.generation));
    }
    generations.sort_unstable();
    assert_eq!(generations, (1..=40).collect::<Vec<_>>());
}

fn run(status: EvolutionRunStatus, started: i64, error: Option<&str>) -> NewEvolutionRun {
    NewEvolutionRun {
        session_id: Some("s".to_owned()),
        trigger: EvolutionTrigger::SessionEnd,
        status,
        error: error.map(str::to_owned),
        proposals: 0,
        model: "gpt-4o-mini".to_owned(),
        started_at: at(started),
        finished_at: at(started + 5),
    }
}

#[test]
fn evolution_runs_are_listed_newest_first_with_the_last_failure() {
    let dir = TempDir::new().unwrap();
    let path = db(&dir);
    let store = Store::open(&path).unwrap();
    assert!(store.evolution_runs(10).unwrap().is_empty());
    assert_eq!(store.last_evolution_failure().unwrap(), None);

    let ok = NewEvolutionRun {
        trigger: EvolutionTrigger::EveryNTurns,
        proposals: 2,
        ..run(EvolutionRunStatus::Ok, 100, None)
    };
    let old_fail = run(EvolutionRunStatus::Failed, 10, Some("timeout"));
    let new_fail = NewEvolutionRun {
        session_id: None,
        trigger: EvolutionTrigger::Manual,
        ..run(EvolutionRunStatus::Failed, 50, Some("401 from upstream"))
    };
    let skipped = run(EvolutionRunStatus::Skipped, 200, None);
    let mut ids = Vec::new();
    for r in [&ok, &old_fail, &new_fail, &skipped] {
        ids.push(store.record_evolution_run(r.clone()).unwrap());
    }

    let runs = store.evolution_runs(10).unwrap();
    assert_eq!(
        runs.iter().map(|r| r.id).collect::<Vec<_>>(),
        [ids[3], ids[0], ids[2], ids[1]]
    );
    let first_ok = &runs[1];
    assert_eq!(first_ok.trigger, EvolutionTrigger::EveryNTurns);
    assert_eq!(first_ok.status, EvolutionRunStatus::Ok);
    assert_eq!(first_ok.proposals, 2);
    assert_eq!(first_ok.session_id.as_deref(), Some("s"));
    assert_eq!(first_ok.model, "gpt-4o-mini");
    assert_eq!(
        (first_ok.started_at, first_ok.finished_at),
        (at(100), at(105))
    );
    assert_eq!(store.evolution_runs(2).unwrap(), runs[..2]);

    let failure = store.last_evolution_failure().unwrap().unwrap();
    assert_eq!(failure.id, ids[2]);
    assert_eq!(failure.error.as_deref(), Some("401 from upstream"));
    assert_eq!(failure.session_id, None);
    assert_eq!(failure.trigger, EvolutionTrigger::Manual);
    let v = serde_json::to_value(&failure).unwrap();
    assert_eq!(
        (v["trigger"].as_str(), v["status"].as_str()),
        (Some("manual"), Some("failed"))
    );
    assert_eq!(
        serde_json::to_value(EvolutionTrigger::EveryNTurns).unwrap(),
        "every_n_turns"
    );
    assert_eq!(count(&path, "SELECT count(*) FROM evolution_runs"), 4);
}

#[test]
fn skill_stats_count_injections_and_feedback() {
    let dir = TempDir::new().unwrap();
    let store = Store::open(db(&dir)).unwrap();
    assert!(store.skill_stats().unwrap().is_empty());
    let rec = store.recorder();
    rec.record_turn(with_skills("s", "t1", at(0), &["git", "docker"]));
    rec.record_turn(with_skills("s", "t2", at(60), &["git"]));
    rec.record_turn(with_skills("s", "t3", at(30), &["git", "docker"]));
    rec.record_turn(with_skills("other", "t4", at(90), &["docker"]));
    rec.record_turn(with_skills("s", "t5", at(120), &[]));
    store.set_feedback("t1", 1, None).unwrap();
    store.set_feedback("t2", 1, None).unwrap();
    store.set_feedback("t3", -1, Some("wrong".into())).unwrap();
    store.set_feedback("t5", -1, None).unwrap();

    let stats = store.skill_stats().unwrap();
    assert_eq!(stats.len(), 2);
    assert_eq!(
        stats["git"],
        SkillStats {
            injected: 3,
            thumbs_up: 2,
            thumbs_down: 1,
            last_injected_at: Some(at(60)),
        }
    );
    assert_eq!(
        stats["docker"],
        SkillStats {
            injected: 3,
            thumbs_up: 1,
            thumbs_down: 1,
            last_injected_at: Some(at(90)),
        }
    );

    // Changing a rating moves the counts.
    store.set_feedback("t3", 1, None).unwrap();
    let git = store.skill_stats().unwrap()["git"];
    assert_eq!((git.thumbs_up, git.thumbs_down), (3, 0));
}

/// Turns carry their agent; the session takes the first named agent, lists and charts filter
/// by it, and a proposal from an agent's session belongs to that agent until it is shared.
#[test]
fn agents_tag_sessions_turns_charts_and_proposals() {
    let dir = TempDir::new().unwrap();
    let store = Store::open(db(&dir)).unwrap();
    let rec = store.recorder();
    let of = |session: &str, id: &str, secs: i64, agent: &str| TurnRecord {
        agent: agent.to_owned(),
        ..simple(session, id, at(secs))
    };
    // A session's unnamed first request (a side call) does not decide its agent.
    rec.record_turn(of("a1", "t1", 0, "default"));
    rec.record_turn(of("a1", "t2", 1, "claude-code"));
    rec.record_turn(of("b1", "t3", 2, "codex"));
    rec.record_turn(of("d1", "t4", 3, "default"));
    store.flush().unwrap();

    let agent_of = |id: &str| store.session(id).unwrap().unwrap().agent;
    assert_eq!(agent_of("a1"), "claude-code");
    assert_eq!(agent_of("b1"), "codex");
    assert_eq!(agent_of("d1"), "default");
    let ids = |agent: Option<&str>| -> Vec<String> {
        store
            .agent_sessions_page(agent, 50, 0)
            .unwrap()
            .into_iter()
            .map(|s| s.id)
            .collect()
    };
    assert_eq!(ids(Some("codex")), ["b1"]);
    assert_eq!(ids(Some("claude-code")), ["a1"]);
    assert_eq!(ids(None).len(), 3);
    assert!(ids(Some("nobody")).is_empty());
    assert_eq!(
        store.session_agents().unwrap(),
        [
            ("claude-code".to_owned(), 1),
            ("codex".to_owned(), 1),
            ("default".to_owned(), 1)
        ]
    );
    assert_eq!(store.turn("t3").unwrap().unwrap().agent, "codex");

    let day = |agent: Option<&str>| -> u64 {
        store
            .agent_turns_per_day(agent, 3660, 0)
            .unwrap()
            .iter()
            .map(|(_, n)| n)
            .sum()
    };
    assert_eq!(day(None), 4);
    // Charts count turns by their own agent: the unnamed first request stays `default`.
    assert_eq!(day(Some("claude-code")), 1);
    assert_eq!(day(Some("default")), 2);
    assert_eq!(day(Some("codex")), 1);

    let id = store
        .insert_proposal(NewProposal {
            session_id: Some("a1".into()),
            ..proposal(ProposalKind::New, "quoting", "fp-a")
        })
        .unwrap();
    let shared = store
        .insert_proposal(NewProposal {
            session_id: Some("d1".into()),
            ..proposal(ProposalKind::New, "other", "fp-d")
        })
        .unwrap();
    assert_eq!(
        store.proposal(id).unwrap().unwrap().agent.as_deref(),
        Some("claude-code")
    );
    assert_eq!(store.proposal(shared).unwrap().unwrap().agent, None);
    let mine = store
        .agent_proposals_page(None, Some("claude-code"), 50, 0)
        .unwrap();
    assert_eq!(mine.iter().map(|p| p.id).collect::<Vec<_>>(), [id]);
    store.set_proposal_agent(id, None).unwrap();
    assert_eq!(store.proposal(id).unwrap().unwrap().agent, None);
    assert!(matches!(
        store.set_proposal_agent(999, None),
        Err(StoreError::NotFound { .. })
    ));
}
