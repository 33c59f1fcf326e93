//! Evidence per skill: the turns a skill was a candidate in but not injected (controls), the
//! bad outcomes of turns, and the per-skill counts the triggers of migration 0008 keep.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use rusqlite::{Connection, params};
use serde::Serialize;
use serde_json::Value;

use crate::enums::{parse_text, text_enum};
use crate::error::Result;
use crate::timestamp;
use crate::turns::to_u64;

text_enum! {
    /// Why a retrieved skill was not injected into a turn that counts as its control.
    pub enum ControlCause ("control cause") {
        /// Ranked just below the cut (top-k, threshold or budget).
        BelowCut = "below_cut",
        /// Retrieved, then withheld by `skills.holdout_share`.
        Holdout = "holdout",
    }
}

text_enum! {
    /// The arm of a skill's comparison a turn counts in.
    pub enum EvidenceArm ("evidence arm") {
        Injected = "injected",
        BelowCut = "below_cut",
        Holdout = "holdout",
    }
}

/// Turns of one arm of one skill, and their bad outcomes by kind. A turn with several bad
/// signals counts once in `bad` and once in each kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct OutcomeCounts {
    pub turns: u64,
    pub bad: u64,
    pub thumbs_down: u64,
    pub judged_bad: u64,
    pub corrected: u64,
    pub tool_error: u64,
}

/// What a turn's request says about the main turn before it in the same session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowUp {
    /// The turn whose request carried the signals (already sent to the recorder).
    pub turn_id: String,
    pub session_id: String,
    /// The user's message corrected the previous answer.
    pub correction: bool,
    /// The user's message asked for the same thing again.
    pub retry: bool,
    /// Tool results of the previous answer's tool calls came back with errors.
    pub tool_error: bool,
}

/// Control entries in a turn's `injected` list: `{"kind": "skill_control", "name": ..,
/// "cause": "below_cut" | "holdout"}`. Entries with an unknown cause are skipped.
pub(crate) fn controls(injected: &Value) -> Vec<(String, ControlCause)> {
    let Some(entries) = injected.as_array() else {
        return Vec::new();
    };
    entries
        .iter()
        .filter(|e| e.get("kind").and_then(Value::as_str) == Some("skill_control"))
        .filter_map(|e| {
            let name = e.get("name")?.as_str()?.to_owned();
            let cause = e.get("cause")?.as_str()?.parse().ok()?;
            Some((name, cause))
        })
        .collect()
}

pub(crate) fn insert_controls(
    conn: &Connection,
    turn_id: &str,
    controls: &[(String, ControlCause)],
) -> Result<()> {
    let mut stmt = conn.prepare_cached(
        "INSERT OR IGNORE INTO turn_skill_controls (turn_id, skill_name, cause)
         VALUES (?1, ?2, ?3)",
    )?;
    for (name, cause) in controls {
        stmt.execute(params![turn_id, name, cause.as_str()])?;
    }
    Ok(())
}

/// Marks the main turn before `f.turn_id` in its session. Nothing happens when the turn is
/// not stored or is the session's first main turn.
pub(crate) fn apply_follow_up(conn: &Connection, f: &FollowUp) -> Result<()> {
    if !f.correction && !f.retry && !f.tool_error {
        return Ok(());
    }
    let previous: Option<String> = conn
        .prepare_cached(
            "SELECT p.id FROM turns p
             WHERE p.session_id = ?1
               AND p.seq < (SELECT seq FROM turns WHERE id = ?2 AND session_id = ?1)
               AND p.turn_type = 'main'
             ORDER BY p.seq DESC LIMIT 1",
        )?
        .query_row(params![f.session_id, f.turn_id], |r| r.get(0))
        .map(Some)
        .or_else(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => Ok(None),
            e => Err(e),
        })?;
    let Some(previous) = previous else {
        return Ok(());
    };
    conn.prepare_cached(
        "UPDATE turn_outcomes SET
             corrected = corrected OR ?2,
             tool_error = tool_error OR ?3,
             retried = retried OR ?4
         WHERE turn_id = ?1",
    )?
    .execute(params![previous, f.correction, f.tool_error, f.retry])?;
    conn.prepare_cached(
        "INSERT OR IGNORE INTO turn_outcomes (turn_id, main, corrected, tool_error, retried)
         VALUES (?1, 1, ?2, ?3, ?4)",
    )?
    .execute(params![previous, f.correction, f.tool_error, f.retry])?;
    Ok(())
}

/// Every skill's counts per arm (skills with no stored turn in an arm have no entry there).
pub(crate) fn counts(
    conn: &Connection,
) -> Result<HashMap<String, HashMap<EvidenceArm, OutcomeCounts>>> {
    let mut stmt = conn.prepare_cached(
        "SELECT skill_name, arm, turns, bad, thumbs_down, judged_bad, corrected, tool_error
         FROM skill_evidence WHERE turns > 0",
    )?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                [
                    r.get::<_, i64>(2)?,
                    r.get::<_, i64>(3)?,
                    r.get::<_, i64>(4)?,
                    r.get::<_, i64>(5)?,
                    r.get::<_, i64>(6)?,
                    r.get::<_, i64>(7)?,
                ],
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut out: HashMap<String, HashMap<EvidenceArm, OutcomeCounts>> = HashMap::new();
    for (name, arm, n) in rows {
        let arm: EvidenceArm = parse_text("skill_evidence.arm", &arm)?;
        out.entry(name).or_default().insert(
            arm,
            OutcomeCounts {
                turns: to_u64(n[0]),
                bad: to_u64(n[1]),
                thumbs_down: to_u64(n[2]),
                judged_bad: to_u64(n[3]),
                corrected: to_u64(n[4]),
                tool_error: to_u64(n[5]),
            },
        );
    }
    Ok(out)
}

/// All stored main turns and how many had a bad outcome.
pub(crate) fn totals(conn: &Connection) -> Result<(u64, u64)> {
    let (turns, bad): (i64, i64) = conn
        .prepare_cached("SELECT turns, bad FROM outcome_totals WHERE id = 1")?
        .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok((to_u64(turns), to_u64(bad)))
}

/// The newest turns `skill` was injected into whose next message corrected them, as
/// (session id, turn id), newest first. Walks the corrected turns (a partial index), so the
/// cost follows the number of corrections, not of injections.
pub(crate) fn corrected_turns(
    conn: &Connection,
    skill: &str,
    limit: usize,
) -> Result<Vec<(String, String)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT t.session_id, t.id
         FROM turn_outcomes o
         JOIN turn_skills ts ON ts.turn_id = o.turn_id AND ts.skill_name = ?1
         JOIN turns t ON t.id = o.turn_id
         WHERE o.corrected = 1
         ORDER BY t.started_at DESC
         LIMIT ?2",
    )?;
    let rows = stmt
        .query_map(
            params![skill, i64::try_from(limit).unwrap_or(i64::MAX)],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

/// When the oldest stored turn started (the index on `started_at` answers it).
pub(crate) fn first_turn_at(conn: &Connection) -> Result<Option<DateTime<Utc>>> {
    let first: Option<String> = conn
        .prepare_cached("SELECT min(started_at) FROM turns")?
        .query_row([], |r| r.get(0))?;
    first
        .map(|t| timestamp::parse("turns.started_at", &t))
        .transpose()
}

/// When each skill with a recorded version got its first one.
pub(crate) fn skill_first_versions(conn: &Connection) -> Result<HashMap<String, DateTime<Utc>>> {
    let mut stmt = conn.prepare_cached(
        "SELECT skill_name, min(created_at) FROM skill_versions GROUP BY skill_name",
    )?;
    let rows = stmt
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    rows.into_iter()
        .map(|(name, at)| Ok((name, timestamp::parse("skill_versions.created_at", &at)?)))
        .collect()
}
