//! Evaluations and adapter versions: `eval_runs` (one arm over a task split) with their
//! `eval_outcomes`, the `eval_sessions` those runs used (never trained on or distilled), and
//! `adapter_versions` (every trained adapter, its gate figure and whether it serves).

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, Params, Row, params};
use serde::{Deserialize, Serialize};

use crate::enums::{parse_text, text_enum};
use crate::error::Result;
use crate::timestamp;
use crate::turns::{to_i64, to_u64};

text_enum! {
    /// Why an evaluation ran.
    pub enum EvalPurpose("evaluation purpose") {
        /// Asked for (`metaclaw eval`, the Evaluate button).
        Eval = "eval",
        /// After a rollout's training step: a point of the learning curve.
        Curve = "curve",
        /// A candidate adapter on the gate split.
        Gate = "gate",
    }
}

text_enum! {
    /// Where an adapter version stands.
    pub enum AdapterStatus("adapter status") {
        /// The policy serves it.
        Serving = "serving",
        /// Passed the gate (or was served) and was replaced by a later one or a rollback.
        Kept = "kept",
        /// Regressed on the gate split: never served.
        Refused = "refused",
    }
}

/// One arm of an evaluation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EvalRun {
    pub id: i64,
    pub started_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    pub task_dir: String,
    pub split: String,
    pub purpose: EvalPurpose,
    pub arm: String,
    pub adapter_step: Option<u64>,
    pub successes: u64,
    pub trials: u64,
    pub mean_score: Option<f64>,
}

/// One task's outcome in an evaluation run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EvalOutcome {
    pub task_id: String,
    pub session_id: String,
    pub passed: bool,
    pub score: f64,
    pub answer: String,
    pub detail: String,
}

/// One graded round of a MetaClaw-Bench arm (`kind`: `file_check` or `multi_choice`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BenchRound {
    pub day: String,
    pub round: String,
    pub kind: String,
    pub session_id: String,
    pub passed: bool,
    pub score: f64,
    pub detail: String,
}

pub(crate) fn add_bench_round(conn: &Connection, run_id: i64, r: &BenchRound) -> Result<()> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO bench_rounds
             (run_id, day, round, kind, session_id, passed, score, detail)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        run_id,
        r.day,
        r.round,
        r.kind,
        r.session_id,
        r.passed,
        r.score,
        r.detail
    ])?;
    Ok(())
}

/// Closes a bench arm's run with the totals of its rounds.
pub(crate) fn finish_bench_run(conn: &Connection, run_id: i64, at: &str) -> Result<()> {
    close_run(conn, run_id, at, "bench_rounds")
}

pub(crate) fn bench_rounds(conn: &Connection, run_id: i64) -> Result<Vec<BenchRound>> {
    read(
        conn,
        "SELECT day, round, kind, session_id, passed, score, detail FROM bench_rounds
         WHERE run_id = ?1 ORDER BY day, round",
        [run_id],
        |(day, round, kind, session_id, passed, score, detail)| {
            Ok(BenchRound {
                day,
                round,
                kind,
                session_id,
                passed,
                score,
                detail,
            })
        },
    )
}

/// A trained adapter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AdapterVersion {
    /// The training step that made it (0 = the weights before any step).
    pub step: u64,
    pub created_at: DateTime<Utc>,
    pub sampler_path: Option<String>,
    pub state_path: Option<String>,
    pub status: AdapterStatus,
    /// Success on the gate split, when it was evaluated.
    pub eval_success: Option<f64>,
    pub eval_trials: Option<u64>,
    /// Why it was refused, rolled back or promoted.
    pub reason: Option<String>,
}

pub(crate) fn mark_session(conn: &Connection, session_id: &str, run_id: i64) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO eval_sessions (session_id, run_id) VALUES (?1, ?2)
         ON CONFLICT (session_id) DO UPDATE SET run_id = excluded.run_id",
    )?
    .execute(params![session_id, run_id])?;
    Ok(())
}

pub(crate) fn is_eval_session(conn: &Connection, session_id: &str) -> Result<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM eval_sessions WHERE session_id = ?1")?
        .query_row([session_id], |_| Ok(()))
        .optional()?
        .is_some())
}

pub(crate) fn start_run(
    conn: &Connection,
    at: &str,
    task_dir: &str,
    split: &str,
    purpose: EvalPurpose,
    arm: &str,
    adapter_step: Option<u64>,
) -> Result<i64> {
    conn.prepare_cached(
        "INSERT INTO eval_runs (started_at, task_dir, split, purpose, arm, adapter_step)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        at,
        task_dir,
        split,
        purpose.as_str(),
        arm,
        adapter_step.map(to_i64)
    ])?;
    Ok(conn.last_insert_rowid())
}

pub(crate) fn add_outcome(conn: &Connection, run_id: i64, o: &EvalOutcome) -> Result<()> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO eval_outcomes (run_id, task_id, session_id, passed, score, answer, detail)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![run_id, o.task_id, o.session_id, o.passed, o.score, o.answer, o.detail])?;
    Ok(())
}

/// Closes a run with the totals of its outcomes.
pub(crate) fn finish_run(conn: &Connection, run_id: i64, at: &str) -> Result<()> {
    close_run(conn, run_id, at, "eval_outcomes")
}

/// Sets a run's end time and its totals, counted from its graded rows in `graded` (a
/// table with `run_id`, `passed` and `score`; always one of ours, never input).
fn close_run(conn: &Connection, run_id: i64, at: &str, graded: &'static str) -> Result<()> {
    conn.prepare_cached(&format!(
        "UPDATE eval_runs SET finished_at = ?2,
             successes = (SELECT count(*) FROM {graded} WHERE run_id = ?1 AND passed = 1),
             trials = (SELECT count(*) FROM {graded} WHERE run_id = ?1),
             mean_score = (SELECT avg(score) FROM {graded} WHERE run_id = ?1)
         WHERE id = ?1"
    ))?
    .execute(params![run_id, at])?;
    Ok(())
}

type RawRun = (
    i64,
    String,
    Option<String>,
    String,
    String,
    String,
    String,
    Option<i64>,
    i64,
    i64,
    Option<f64>,
);

fn run_from(r: RawRun) -> Result<EvalRun> {
    Ok(EvalRun {
        id: r.0,
        started_at: timestamp::parse("eval_runs.started_at", &r.1)?,
        finished_at: r
            .2
            .map(|t| timestamp::parse("eval_runs.finished_at", &t))
            .transpose()?,
        task_dir: r.3,
        split: r.4,
        purpose: parse_text("eval_runs.purpose", &r.5)?,
        arm: r.6,
        adapter_step: r.7.map(to_u64),
        successes: to_u64(r.8),
        trials: to_u64(r.9),
        mean_score: r.10,
    })
}

const RUN_COLUMNS: &str = "id, started_at, finished_at, task_dir, split, purpose, arm, \
     adapter_step, successes, trials, mean_score";

/// The last `limit` runs, oldest first.
pub(crate) fn runs(conn: &Connection, limit: usize) -> Result<Vec<EvalRun>> {
    read(
        conn,
        &format!(
            "SELECT {RUN_COLUMNS} FROM (SELECT * FROM eval_runs ORDER BY id DESC LIMIT ?1) ORDER BY id"
        ),
        [to_i64(limit as u64)],
        run_from,
    )
}

pub(crate) fn outcomes(conn: &Connection, run_id: i64) -> Result<Vec<EvalOutcome>> {
    read(
        conn,
        "SELECT task_id, session_id, passed, score, answer, detail FROM eval_outcomes
         WHERE run_id = ?1 ORDER BY task_id, session_id",
        [run_id],
        |(task_id, session_id, passed, score, answer, detail)| {
            Ok(EvalOutcome {
                task_id,
                session_id,
                passed,
                score,
                answer,
                detail,
            })
        },
    )
}

pub(crate) fn upsert_adapter(conn: &Connection, v: &AdapterVersion) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO adapter_versions
             (step, created_at, sampler_path, state_path, status, eval_success, eval_trials, reason)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT (step) DO UPDATE SET
             sampler_path = coalesce(excluded.sampler_path, sampler_path),
             state_path = coalesce(excluded.state_path, state_path),
             status = excluded.status,
             eval_success = coalesce(excluded.eval_success, eval_success),
             eval_trials = coalesce(excluded.eval_trials, eval_trials),
             reason = excluded.reason",
    )?
    .execute(params![
        to_i64(v.step),
        timestamp::format(v.created_at),
        v.sampler_path,
        v.state_path,
        v.status.as_str(),
        v.eval_success.filter(|x| x.is_finite()),
        v.eval_trials.map(to_i64),
        v.reason,
    ])?;
    if v.status == AdapterStatus::Serving {
        // One version serves at a time.
        conn.prepare_cached(
            "UPDATE adapter_versions SET status = 'kept' WHERE status = 'serving' AND step != ?1",
        )?
        .execute([to_i64(v.step)])?;
    }
    Ok(())
}

type RawAdapter = (
    i64,
    String,
    Option<String>,
    Option<String>,
    String,
    Option<f64>,
    Option<i64>,
    Option<String>,
);

/// Every version, oldest first.
pub(crate) fn adapters(conn: &Connection) -> Result<Vec<AdapterVersion>> {
    read(
        conn,
        "SELECT step, created_at, sampler_path, state_path, status, eval_success, eval_trials, reason
         FROM adapter_versions ORDER BY step",
        [],
        |r: RawAdapter| {
            Ok(AdapterVersion {
                step: to_u64(r.0),
                created_at: timestamp::parse("adapter_versions.created_at", &r.1)?,
                sampler_path: r.2,
                state_path: r.3,
                status: parse_text("adapter_versions.status", &r.4)?,
                eval_success: r.5,
                eval_trials: r.6.map(to_u64),
                reason: r.7,
            })
        },
    )
}

/// Every row `sql` gives, read as the tuple `R` of its columns, then made into `T` by
/// `from`: apart so that a stored value that does not parse (a timestamp, an enum's text) is
/// the store's own error rather than SQLite's.
fn read<R, T>(
    conn: &Connection,
    sql: &str,
    params: impl Params,
    from: impl FnMut(R) -> Result<T>,
) -> Result<Vec<T>>
where
    R: for<'a> TryFrom<&'a Row<'a>, Error = rusqlite::Error>,
{
    let raw: Vec<R> = conn
        .prepare_cached(sql)?
        .query_map(params, |r| R::try_from(r))?
        .collect::<rusqlite::Result<_>>()?;
    raw.into_iter().map(from).collect()
}
