//! The parts of a served answer's RL reward (migration 0013): what the judge and the user
//! said about it, explicitly (thumbs) and implicitly (the next turn corrects it or asks
//! again, its tool calls failed), each with its weight. The rule that makes a reward of
//! them lives with the trainer; this keeps the signals it reads and the parts it wrote.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use crate::enums::{parse_text, text_enum};
use crate::error::Result;
use crate::samples::SampleState;

text_enum! {
    /// One part of a turn's reward.
    pub enum RewardComponent ("reward component") {
        /// The judge's score (-1, 0, 1).
        Judge = "judge",
        /// The user's thumbs (+1 up, -1 down).
        Thumbs = "thumbs",
        /// The next user turn corrected the answer.
        Correction = "correction",
        /// The next user turn asked for the same thing again.
        Retry = "retry",
        /// The answer's tool calls came back with errors.
        ToolError = "tool_error",
    }
}

/// A part as it went into the reward: `value` = `signal` × `weight`.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct RewardPart {
    pub component: RewardComponent,
    pub signal: f64,
    pub weight: f64,
    pub value: f64,
}

/// What is known about a served answer so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TurnSignals {
    /// The judge's verdict, once judged.
    pub judge: Option<i8>,
    pub thumbs: Option<i8>,
    pub corrected: bool,
    pub retried: bool,
    pub tool_error: bool,
}

/// A served answer (sample 0) not trained yet whose turn has a rating or an implicit
/// signal, with what decided its reward so far.
#[derive(Debug, Clone, PartialEq)]
pub struct SignalledSample {
    pub turn_id: String,
    pub state: SampleState,
    pub reward: Option<f64>,
    pub signals: TurnSignals,
}

const SIGNALS: &str = "(SELECT verdict FROM prm_verdicts WHERE turn_id = t.id),
       (SELECT rating FROM feedback WHERE turn_id = t.id),
       coalesce(o.corrected, 0), coalesce(o.retried, 0), coalesce(o.tool_error, 0)";

/// Joins a turn's implicit outcomes, except in rollout episodes: their task's verifier
/// rewards them, and a tool error or a repeated request there is part of the task.
const OUTCOMES: &str = "LEFT JOIN turn_outcomes o ON o.turn_id = t.id
       AND NOT EXISTS (SELECT 1 FROM rollout_sessions r WHERE r.session_id = t.session_id)";

fn signals_at(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<TurnSignals> {
    let small = |v: Option<i64>| v.map(|v| i8::try_from(v.clamp(-1, 1)).unwrap_or(0));
    Ok(TurnSignals {
        judge: small(r.get(at)?),
        thumbs: small(r.get(at + 1)?),
        corrected: r.get::<_, i64>(at + 2)? != 0,
        retried: r.get::<_, i64>(at + 3)? != 0,
        tool_error: r.get::<_, i64>(at + 4)? != 0,
    })
}

pub(crate) fn signals(conn: &Connection, turn_id: &str) -> Result<TurnSignals> {
    let sql = format!("SELECT {SIGNALS} FROM turns t {OUTCOMES} WHERE t.id = ?1");
    Ok(conn
        .prepare_cached(&sql)?
        .query_row([turn_id], |r| signals_at(r, 0))
        .optional()?
        .unwrap_or_default())
}

/// Served answers not trained yet with a rating, or with an implicit signal once their
/// turn is over (a later main turn, or the session ended).
pub(crate) fn signalled(conn: &Connection) -> Result<Vec<SignalledSample>> {
    let sql = format!(
        "SELECT s.turn_id, s.state, s.reward, {SIGNALS}
         FROM samples s
         JOIN turns t ON t.id = s.turn_id
         {OUTCOMES}
         WHERE s.idx = 0 AND s.state IN ('pending', 'ready')
           AND coalesce(s.reward_source, '') != 'verifier'
           AND NOT EXISTS (SELECT 1 FROM rollout_sessions r WHERE r.session_id = s.session_id)
           AND (EXISTS (SELECT 1 FROM feedback f WHERE f.turn_id = t.id)
                OR coalesce(o.corrected OR o.retried OR o.tool_error, 0))
         ORDER BY s.id"
    );
    let rows = conn
        .prepare_cached(&sql)?
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Option<f64>>(2)?,
                signals_at(r, 3)?,
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    rows.into_iter()
        .map(|(turn_id, state, reward, signals)| {
            Ok(SignalledSample {
                turn_id,
                state: parse_text("samples.state", &state)?,
                reward,
                signals,
            })
        })
        .collect()
}

pub(crate) fn mark_rollout(conn: &Connection, session_id: &str) -> Result<()> {
    conn.prepare_cached("INSERT OR IGNORE INTO rollout_sessions (session_id) VALUES (?1)")?
        .execute([session_id])?;
    Ok(())
}

pub(crate) fn set(conn: &Connection, turn_id: &str, parts: &[RewardPart]) -> Result<()> {
    conn.prepare_cached("DELETE FROM turn_reward_components WHERE turn_id = ?1")?
        .execute([turn_id])?;
    let mut insert = conn.prepare_cached(
        "INSERT INTO turn_reward_components (turn_id, component, signal, weight, value)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for p in parts {
        insert.execute(params![
            turn_id,
            p.component.as_str(),
            p.signal,
            p.weight,
            p.value
        ])?;
    }
    Ok(())
}

fn part(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<(String, f64, f64, f64)> {
    Ok((r.get(at)?, r.get(at + 1)?, r.get(at + 2)?, r.get(at + 3)?))
}

fn to_part((component, signal, weight, value): (String, f64, f64, f64)) -> Result<RewardPart> {
    Ok(RewardPart {
        component: parse_text("turn_reward_components.component", &component)?,
        signal,
        weight,
        value,
    })
}

pub(crate) fn for_turn(conn: &Connection, turn_id: &str) -> Result<Vec<RewardPart>> {
    let rows = conn
        .prepare_cached(
            "SELECT component, signal, weight, value FROM turn_reward_components
             WHERE turn_id = ?1",
        )?
        .query_map([turn_id], |r| part(r, 0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut parts = rows.into_iter().map(to_part).collect::<Result<Vec<_>>>()?;
    sort(&mut parts);
    Ok(parts)
}

pub(crate) fn in_session(
    conn: &Connection,
    session_id: &str,
) -> Result<HashMap<String, Vec<RewardPart>>> {
    let rows = conn
        .prepare_cached(
            "SELECT c.turn_id, c.component, c.signal, c.weight, c.value
             FROM turn_reward_components c JOIN turns t ON t.id = c.turn_id
             WHERE t.session_id = ?1",
        )?
        .query_map([session_id], |r| Ok((r.get::<_, String>(0)?, part(r, 1)?)))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut out: HashMap<String, Vec<RewardPart>> = HashMap::new();
    for (turn, raw) in rows {
        out.entry(turn).or_default().push(to_part(raw)?);
    }
    out.values_mut().for_each(|p| sort(p));
    Ok(out)
}

/// The order the parts are listed in: the explicit ones first.
fn sort(parts: &mut [RewardPart]) {
    parts.sort_by_key(|p| {
        RewardComponent::ALL
            .iter()
            .position(|c| *c == p.component)
            .unwrap_or(usize::MAX)
    });
}
