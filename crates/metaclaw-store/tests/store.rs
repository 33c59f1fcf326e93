//! Behaviour of the store through its public API, on real database files.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeZone, Utc};
use metaclaw_domain::{
    Dialect, SessionEndReason, SessionSource, TurnRecord, TurnStatus, TurnType, Usage,
};
use metaclaw_store::{PruneReport, Recorder, SCHEMA_VERSION, Store, StoreError};
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
        turn_id: id.to_owned(),
        session_id: session.to_owned(),
        session_source: SessionSource::Header,
        turn_type: TurnType::Main,
        api: Dialect::OpenAi,
        stream: true,
        model: Some("gpt-4o".to_owned()),
        request,
        response: Some(json!({"choices": [{"message": {"role": "assistant", "content": "ok"}}]})),
        status: TurnStatus::Ok,
        http_status: 200,
        error: None,
        usage: Usage {
            input_tokens: Some(120),
            output_tokens: Some(7),
        },
        started_at,
        latency_ms: 812.5,
        ttfb_ms: Some(95.25),
        injected: json!({"skills": [{"id": "s1", "version": 3}]}),
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
        Err(StoreError::NotFound(_))
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
