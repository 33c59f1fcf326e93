//! The `samples` table: what the RL policy produced for a main turn, token for token, and
//! where each sample is on its way to training (pending a reward, ready, in a batch,
//! trained, or left out).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use rusqlite::{Connection, Row, params};
use serde::Serialize;

use crate::enums::{parse_text, text_enum};
use crate::error::{Result, StoreError};
use crate::rewards::RewardSource;
use crate::timestamp;
use crate::training::checked_i64;
use crate::turns::{to_i64, to_u64};

text_enum! {
    /// Where a sample is on its way to training.
    pub enum SampleState("sample state") {
        /// Waiting for a reward (judge or user feedback).
        Pending = "pending",
        /// Has a reward; waits for a batch.
        Ready = "ready",
        /// Taken into a training step that has not finished yet (resumed after a restart).
        Batched = "batched",
        Trained = "trained",
        /// Served under an older skill generation than the trainer's: never trained on.
        Stale = "stale",
        /// Left out of training (constant-reward group, nothing to learn).
        Skipped = "skipped",
    }
}

/// A sample as the serving path records it.
#[derive(Debug, Clone, PartialEq)]
pub struct NewSample {
    pub turn_id: String,
    /// 0 for the response the user got, 1.. for extra samples of the same prompt.
    pub idx: u32,
    pub session_id: String,
    pub created_at: DateTime<Utc>,
    pub skill_generation: u64,
    pub sampler: String,
    pub renderer: String,
    pub prompt_tokens: Vec<u32>,
    pub response_tokens: Vec<u32>,
    pub response_logprobs: Vec<f32>,
    pub response_text: String,
}

/// A stored sample.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SampleRow {
    pub id: i64,
    pub turn_id: String,
    pub idx: u32,
    pub session_id: String,
    pub created_at: DateTime<Utc>,
    pub skill_generation: u64,
    pub sampler: String,
    pub renderer: String,
    pub prompt_tokens: Vec<u32>,
    pub response_tokens: Vec<u32>,
    pub response_logprobs: Vec<f32>,
    pub response_text: String,
    pub teacher_logprobs: Option<Vec<f32>>,
    pub reward: Option<f64>,
    pub reward_source: Option<RewardSource>,
    pub state: SampleState,
    pub step: Option<u64>,
}

pub(crate) fn check_new(s: &NewSample) -> Result<()> {
    if s.response_tokens.len() != s.response_logprobs.len() {
        return Err(StoreError::InvalidValue {
            what: "sample logprobs (one per response token)",
            value: format!(
                "{} logprobs for {} tokens",
                s.response_logprobs.len(),
                s.response_tokens.len()
            ),
        });
    }
    Ok(())
}

fn u32_bytes(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn bytes_u32(column: &'static str, b: &[u8]) -> Result<Vec<u32>> {
    if !b.len().is_multiple_of(4) {
        return Err(StoreError::InvalidColumn {
            column,
            value: format!("{} bytes", b.len()),
        });
    }
    Ok(b.chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

fn bytes_f32(column: &'static str, b: &[u8]) -> Result<Vec<f32>> {
    Ok(bytes_u32(column, b)?
        .into_iter()
        .map(f32::from_bits)
        .collect())
}

pub(crate) fn insert(conn: &Connection, s: &NewSample) -> Result<i64> {
    let exists = conn
        .prepare_cached("SELECT 1 FROM turns WHERE id = ?1")?
        .exists([&s.turn_id])?;
    if !exists {
        return Err(StoreError::NotFound {
            what: "turn",
            id: s.turn_id.clone(),
        });
    }
    conn.prepare_cached(
        "INSERT INTO samples (turn_id, idx, session_id, created_at, skill_generation, sampler,
             renderer, prompt_tokens, response_tokens, response_logprobs, response_text, state,
             agent)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, 'pending',
                 (SELECT agent FROM turns WHERE id = ?1))",
    )?
    .execute(params![
        s.turn_id,
        s.idx,
        s.session_id,
        timestamp::format(s.created_at),
        checked_i64("skill generation", s.skill_generation)?,
        s.sampler,
        s.renderer,
        u32_bytes(&s.prompt_tokens),
        u32_bytes(&s.response_tokens),
        f32_bytes(&s.response_logprobs),
        s.response_text,
    ])?;
    Ok(conn.last_insert_rowid())
}

const COLUMNS: &str = "id, turn_id, idx, session_id, created_at, skill_generation, sampler, \
     renderer, prompt_tokens, response_tokens, response_logprobs, response_text, \
     teacher_logprobs, reward, reward_source, state, step";

/// Columns as SQLite returns them; converted outside the row callback.
struct RawSample {
    id: i64,
    turn_id: String,
    idx: i64,
    session_id: String,
    created_at: String,
    skill_generation: i64,
    sampler: String,
    renderer: String,
    prompt_tokens: Vec<u8>,
    response_tokens: Vec<u8>,
    response_logprobs: Vec<u8>,
    response_text: String,
    teacher_logprobs: Option<Vec<u8>>,
    reward: Option<f64>,
    reward_source: Option<String>,
    state: String,
    step: Option<i64>,
}

impl RawSample {
    fn from_row(r: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            id: r.get(0)?,
            turn_id: r.get(1)?,
            idx: r.get(2)?,
            session_id: r.get(3)?,
            created_at: r.get(4)?,
            skill_generation: r.get(5)?,
            sampler: r.get(6)?,
            renderer: r.get(7)?,
            prompt_tokens: r.get(8)?,
            response_tokens: r.get(9)?,
            response_logprobs: r.get(10)?,
            response_text: r.get(11)?,
            teacher_logprobs: r.get(12)?,
            reward: r.get(13)?,
            reward_source: r.get(14)?,
            state: r.get(15)?,
            step: r.get(16)?,
        })
    }

    fn into_row(self) -> Result<SampleRow> {
        Ok(SampleRow {
            id: self.id,
            turn_id: self.turn_id,
            idx: u32::try_from(self.idx).unwrap_or(0),
            session_id: self.session_id,
            created_at: timestamp::parse("samples.created_at", &self.created_at)?,
            skill_generation: to_u64(self.skill_generation),
            sampler: self.sampler,
            renderer: self.renderer,
            prompt_tokens: bytes_u32("samples.prompt_tokens", &self.prompt_tokens)?,
            response_tokens: bytes_u32("samples.response_tokens", &self.response_tokens)?,
            response_logprobs: bytes_f32("samples.response_logprobs", &self.response_logprobs)?,
            response_text: self.response_text,
            teacher_logprobs: self
                .teacher_logprobs
                .map(|b| bytes_f32("samples.teacher_logprobs", &b))
                .transpose()?,
            reward: self.reward,
            reward_source: self
                .reward_source
                .map(|s| parse_text("samples.reward_source", &s))
                .transpose()?,
            state: parse_text("samples.state", &self.state)?,
            step: self.step.map(to_u64),
        })
    }
}

fn query(conn: &Connection, sql: &str, args: impl rusqlite::Params) -> Result<Vec<SampleRow>> {
    let raws = conn
        .prepare_cached(sql)?
        .query_map(args, RawSample::from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    raws.into_iter().map(RawSample::into_row).collect()
}

pub(crate) fn for_turn(conn: &Connection, turn_id: &str) -> Result<Vec<SampleRow>> {
    query(
        conn,
        &format!("SELECT {COLUMNS} FROM samples WHERE turn_id = ?1 ORDER BY idx"),
        [turn_id],
    )
}

pub(crate) fn in_state(
    conn: &Connection,
    state: SampleState,
    limit: usize,
) -> Result<Vec<SampleRow>> {
    query(
        conn,
        &format!("SELECT {COLUMNS} FROM samples WHERE state = ?1 ORDER BY id LIMIT ?2"),
        params![state.as_str(), i64::try_from(limit).unwrap_or(i64::MAX)],
    )
}

/// Turns whose samples are all scored (some ready, none pending), oldest first: the groups
/// a training batch can take. Reads no token data.
pub(crate) fn ready_groups(conn: &Connection, limit: usize) -> Result<Vec<String>> {
    let ids = conn
        .prepare_cached(
            "SELECT turn_id FROM samples GROUP BY turn_id
             HAVING sum(state = 'ready') > 0 AND sum(state = 'pending') = 0
             ORDER BY min(id) LIMIT ?1",
        )?
        .query_map([i64::try_from(limit).unwrap_or(i64::MAX)], |r| r.get(0))?
        .collect::<rusqlite::Result<Vec<String>>>()?;
    Ok(ids)
}

/// Turns with samples waiting for a reward that are due for judging: a later main turn of
/// their session is stored, or the session ended. Oldest first; reads no token data.
pub(crate) fn due_for_judging(conn: &Connection) -> Result<Vec<String>> {
    let ids = conn
        .prepare_cached(
            "SELECT s.turn_id FROM samples s
             JOIN turns t ON t.id = s.turn_id
             JOIN sessions se ON se.id = t.session_id
             WHERE s.state = 'pending'
               AND (se.ended_at IS NOT NULL OR EXISTS (
                    SELECT 1 FROM turns later
                    WHERE later.session_id = t.session_id AND later.turn_type = 'main'
                      AND later.seq > t.seq))
             GROUP BY s.turn_id ORDER BY min(s.id)",
        )?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<Vec<String>>>()?;
    Ok(ids)
}

/// A served response (idx 0) not trained yet whose turn the user rated, with what decided
/// its reward so far.
#[derive(Debug, Clone, PartialEq)]
pub struct RatedSample {
    pub turn_id: String,
    pub rating: i8,
    pub reward: Option<f64>,
    pub reward_source: Option<RewardSource>,
    pub state: SampleState,
}

/// Rated served samples whose reward does not include the rating yet.
pub(crate) fn rated_without_feedback(conn: &Connection) -> Result<Vec<RatedSample>> {
    let raws = conn
        .prepare_cached(
            "SELECT s.turn_id, f.rating, s.reward, s.reward_source, s.state
             FROM samples s JOIN feedback f ON f.turn_id = s.turn_id
             WHERE s.idx = 0 AND s.state IN ('pending', 'ready')
               AND (s.reward_source IS NULL OR s.reward_source = 'prm')
             ORDER BY s.id",
        )?
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, Option<f64>>(2)?,
                r.get::<_, Option<String>>(3)?,
                r.get::<_, String>(4)?,
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    raws.into_iter()
        .map(|(turn_id, rating, reward, source, state)| {
            Ok(RatedSample {
                turn_id,
                rating: i8::try_from(rating).unwrap_or(0),
                reward,
                reward_source: source
                    .map(|s| parse_text("samples.reward_source", &s))
                    .transpose()?,
                state: parse_text("samples.state", &state)?,
            })
        })
        .collect()
}

/// Sets the reward of one sample; a pending sample becomes ready. Samples already in a
/// batch or trained keep their reward: what was trained on stays as it was.
pub(crate) fn set_reward(
    conn: &Connection,
    turn_id: &str,
    idx: u32,
    reward: f64,
    source: RewardSource,
) -> Result<bool> {
    let n = conn
        .prepare_cached(
            "UPDATE samples SET reward = ?3, reward_source = ?4,
                 state = CASE state WHEN 'pending' THEN 'ready' ELSE state END
             WHERE turn_id = ?1 AND idx = ?2 AND state IN ('pending', 'ready')",
        )?
        .execute(params![turn_id, idx, reward, source.as_str()])?;
    Ok(n > 0)
}

pub(crate) fn set_teacher_logprobs(conn: &Connection, id: i64, logprobs: &[f32]) -> Result<()> {
    conn.prepare_cached("UPDATE samples SET teacher_logprobs = ?2 WHERE id = ?1")?
        .execute(params![id, f32_bytes(logprobs)])?;
    Ok(())
}

pub(crate) fn set_state(
    conn: &Connection,
    ids: &[i64],
    state: SampleState,
    step: Option<u64>,
) -> Result<()> {
    let step = step.map(to_i64);
    let mut stmt = conn.prepare_cached("UPDATE samples SET state = ?2, step = ?3 WHERE id = ?1")?;
    for id in ids {
        stmt.execute(params![id, state.as_str(), step])?;
    }
    Ok(())
}

/// Takes an agent's untrained samples out of training (it opted out of the shared policy);
/// returns how many.
pub(crate) fn skip_agent(conn: &Connection, agent: &str) -> Result<usize> {
    Ok(conn
        .prepare_cached(
            "UPDATE samples SET state = 'skipped' WHERE agent = ?1 AND state IN ('pending', 'ready')",
        )?
        .execute([agent])?)
}

/// Marks every not-yet-trained sample from before `generation` stale; returns how many.
pub(crate) fn mark_stale(conn: &Connection, generation: u64) -> Result<usize> {
    Ok(conn
        .prepare_cached(
            "UPDATE samples SET state = 'stale'
             WHERE state IN ('pending', 'ready', 'batched') AND skill_generation < ?1",
        )?
        .execute([to_i64(generation)])?)
}

pub(crate) fn counts(conn: &Connection) -> Result<BTreeMap<String, u64>> {
    let rows = conn
        .prepare_cached("SELECT state, count(*) FROM samples GROUP BY state")?
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut out: BTreeMap<String, u64> = SampleState::ALL
        .iter()
        .map(|s| (s.as_str().to_owned(), 0))
        .collect();
    for (state, n) in rows {
        out.insert(state, to_u64(n));
    }
    Ok(out)
}
