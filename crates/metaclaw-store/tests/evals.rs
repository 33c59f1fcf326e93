//! What the existing round trip in store.rs leaves out: every field of the evaluation rows
//! reads back as written, in the documented order, and a stored value that does not parse
//! is an error naming its column.

use chrono::{TimeZone, Utc};
use metaclaw_store::{
    AdapterStatus, AdapterVersion, BenchRound, EvalOutcome, EvalPurpose, Store, StoreError,
};
use tempfile::TempDir;

#[test]
fn evaluation_rows_read_back_field_for_field_in_order() {
    let dir = TempDir::new().unwrap();
    let store = Store::open(dir.path().join("metaclaw.db")).unwrap();
    let run = store
        .start_eval_run("/tasks", "test", EvalPurpose::Curve, "base", None)
        .unwrap();
    let outcome = |task: &str, passed: bool| EvalOutcome {
        task_id: task.into(),
        session_id: format!("s-{task}"),
        passed,
        score: if passed { 1.0 } else { 0.25 },
        answer: "42".into(),
        detail: "checked".into(),
    };
    store.add_eval_outcome(run, outcome("b", false)).unwrap();
    store.add_eval_outcome(run, outcome("a", true)).unwrap();
    assert_eq!(
        store.eval_outcomes(run).unwrap(),
        [outcome("a", true), outcome("b", false)]
    );
    let stored = &store.eval_runs(1).unwrap()[0];
    assert_eq!(
        (stored.task_dir.as_str(), stored.split.as_str()),
        ("/tasks", "test")
    );
    assert_eq!(
        (stored.purpose, stored.arm.as_str()),
        (EvalPurpose::Curve, "base")
    );
    assert_eq!((stored.adapter_step, stored.finished_at), (None, None));

    let bench = store
        .start_eval_run(
            "/bench",
            "metaclaw-bench",
            EvalPurpose::Eval,
            "skills",
            None,
        )
        .unwrap();
    let round = |day: &str, round: &str| BenchRound {
        day: day.into(),
        round: round.into(),
        kind: "multi_choice".into(),
        session_id: format!("{day}-{round}"),
        passed: false,
        score: 0.5,
        detail: "no \\bbox".into(),
    };
    for (day, r) in [("day02", "r1"), ("day01", "r2"), ("day01", "r1")] {
        store.add_bench_round(bench, round(day, r)).unwrap();
    }
    assert_eq!(
        store.bench_rounds(bench).unwrap(),
        [
            round("day01", "r1"),
            round("day01", "r2"),
            round("day02", "r1"),
        ]
    );

    let version = AdapterVersion {
        step: 2,
        created_at: Utc.with_ymd_and_hms(2025, 3, 1, 12, 0, 0).unwrap(),
        sampler_path: Some("tinker://sampler/2".into()),
        state_path: Some("tinker://state/2".into()),
        status: AdapterStatus::Refused,
        eval_success: Some(0.75),
        eval_trials: Some(8),
        reason: Some("regressed".into()),
    };
    store.upsert_adapter_version(version.clone()).unwrap();
    assert_eq!(store.adapter_versions().unwrap(), [version]);
}

#[test]
fn a_stored_status_that_does_not_parse_is_an_error_naming_its_column() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("metaclaw.db");
    let store = Store::open(&path).unwrap();
    store
        .upsert_adapter_version(AdapterVersion {
            step: 1,
            created_at: Utc.with_ymd_and_hms(2025, 3, 1, 12, 0, 0).unwrap(),
            sampler_path: None,
            state_path: None,
            status: AdapterStatus::Kept,
            eval_success: None,
            eval_trials: None,
            reason: None,
        })
        .unwrap();
    store.close().unwrap();

    // A value no version of MetaClaw writes, as a damaged or hand-edited file could hold
    // (past the table's CHECK, as an older SQLite or a careless tool would let it).
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.pragma_update(None, "ignore_check_constraints", true)
        .unwrap();
    conn.execute("UPDATE adapter_versions SET status = 'lost'", [])
        .unwrap();
    drop(conn);
    let store = Store::open(&path).unwrap();
    let err = store.adapter_versions().unwrap_err();
    assert!(
        matches!(&err, StoreError::InvalidColumn { column, value }
            if *column == "adapter_versions.status" && value == "lost"),
        "{err:?}"
    );
}
