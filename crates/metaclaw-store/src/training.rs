//! The trainer's log: `training_steps` (one row per step, replaced as the step progresses)
//! and `checkpoints`.

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::{Deserialize, Serialize};

use crate::enums::{parse_text, text_enum};
use crate::error::{Result, StoreError};
use crate::timestamp;
use crate::turns::{to_i64, to_u64};

text_enum! {
    /// Where a training step is.
    pub enum TrainingStatus("training step status") {
        Running = "running",
        Ok = "ok",
        Failed = "failed",
        Paused = "paused",
    }
}

text_enum! {
    /// What a checkpoint holds.
    pub enum CheckpointKind("checkpoint kind") {
        /// Full trainer state (weights and optimizer), to resume training.
        State = "state",
        /// Weights for the sampler, to serve the trained policy.
        Sampler = "sampler",
    }
}

/// One training step, as written by the trainer and as stored.
///
/// Times are stored with millisecond precision; non-finite numbers (NaN, ±∞) are stored
/// as `None`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TrainingStep {
    /// The trainer's step number (the key: writing a step again replaces it).
    pub step: u64,
    pub started_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    pub status: TrainingStatus,
    pub loss: Option<f64>,
    pub mean_reward: Option<f64>,
    /// Fraction of samples judged successful, 0..=1.
    pub success_rate: Option<f64>,
    pub tokens: Option<u64>,
    /// KL divergence to the reference policy (on-policy distillation).
    pub kl: Option<f64>,
    pub samples: Option<u64>,
    /// The skill generation the step's samples were served with.
    pub skill_generation: Option<u64>,
    pub error: Option<String>,
    /// Name of the checkpoint saved after this step, if any.
    pub checkpoint: Option<String>,
    /// Progress of a running step, 0..=1.
    pub progress: Option<f64>,
}

/// A saved checkpoint. Recording one with an existing name replaces it.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Checkpoint {
    pub name: String,
    /// The training step it was saved after.
    pub step: u64,
    pub path: String,
    pub kind: CheckpointKind,
    pub created_at: DateTime<Utc>,
}

/// `None` for NaN and ±∞, which SQLite would store as NULL or as a value JSON cannot hold.
fn finite(v: Option<f64>) -> Option<f64> {
    v.filter(|v| v.is_finite())
}

/// A u64 that must fit SQLite's signed integers exactly (keys are not clamped).
pub(crate) fn checked_i64(what: &'static str, n: u64) -> Result<i64> {
    i64::try_from(n).map_err(|_| StoreError::InvalidValue {
        what,
        value: n.to_string(),
    })
}

/// Inserts the step or replaces every column of the stored one.
pub(crate) fn upsert_step(conn: &Connection, s: &TrainingStep) -> Result<()> {
    let step = checked_i64("training step number", s.step)?;
    conn.prepare_cached(
        "INSERT INTO training_steps (
             step, started_at, finished_at, status, loss, mean_reward, success_rate, tokens,
             kl, samples, skill_generation, error, checkpoint, progress)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
         ON CONFLICT (step) DO UPDATE SET
             started_at = excluded.started_at,
             finished_at = excluded.finished_at,
             status = excluded.status,
             loss = excluded.loss,
             mean_reward = excluded.mean_reward,
             success_rate = excluded.success_rate,
             tokens = excluded.tokens,
             kl = excluded.kl,
             samples = excluded.samples,
             skill_generation = excluded.skill_generation,
             error = excluded.error,
             checkpoint = excluded.checkpoint,
             progress = excluded.progress",
    )?
    .execute(params![
        step,
        timestamp::format(s.started_at),
        s.finished_at.map(timestamp::format),
        s.status.as_str(),
        finite(s.loss),
        finite(s.mean_reward),
        finite(s.success_rate),
        s.tokens.map(to_i64),
        finite(s.kl),
        s.samples.map(to_i64),
        s.skill_generation.map(to_i64),
        s.error,
        s.checkpoint,
        finite(s.progress),
    ])?;
    Ok(())
}

const STEP_COLUMNS: &str = "step, started_at, finished_at, status, loss, mean_reward, \
     success_rate, tokens, kl, samples, skill_generation, error, checkpoint, progress";

/// Columns as SQLite returns them; converted outside the row callback.
struct RawStep {
    step: i64,
    started_at: String,
    finished_at: Option<String>,
    status: String,
    loss: Option<f64>,
    mean_reward: Option<f64>,
    success_rate: Option<f64>,
    tokens: Option<i64>,
    kl: Option<f64>,
    samples: Option<i64>,
    skill_generation: Option<i64>,
    error: Option<String>,
    checkpoint: Option<String>,
    progress: Option<f64>,
}

impl RawStep {
    fn from_row(r: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            step: r.get(0)?,
            started_at: r.get(1)?,
            finished_at: r.get(2)?,
            status: r.get(3)?,
            loss: r.get(4)?,
            mean_reward: r.get(5)?,
            success_rate: r.get(6)?,
            tokens: r.get(7)?,
            kl: r.get(8)?,
            samples: r.get(9)?,
            skill_generation: r.get(10)?,
            error: r.get(11)?,
            checkpoint: r.get(12)?,
            progress: r.get(13)?,
        })
    }

    fn into_step(self) -> Result<TrainingStep> {
        Ok(TrainingStep {
            step: to_u64(self.step),
            started_at: timestamp::parse("training_steps.started_at", &self.started_at)?,
            finished_at: self
                .finished_at
                .map(|t| timestamp::parse("training_steps.finished_at", &t))
                .transpose()?,
            status: parse_text("training_steps.status", &self.status)?,
            loss: self.loss,
            mean_reward: self.mean_reward,
            success_rate: self.success_rate,
            tokens: self.tokens.map(to_u64),
            kl: self.kl,
            samples: self.samples.map(to_u64),
            skill_generation: self.skill_generation.map(to_u64),
            error: self.error,
            checkpoint: self.checkpoint,
            progress: self.progress,
        })
    }
}

/// The last `limit` steps (highest numbers), in ascending step order.
pub(crate) fn steps(conn: &Connection, limit: usize) -> Result<Vec<TrainingStep>> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let raws = conn
        .prepare_cached(&format!(
            "SELECT {STEP_COLUMNS} FROM (
                 SELECT {STEP_COLUMNS} FROM training_steps ORDER BY step DESC LIMIT ?1)
             ORDER BY step ASC"
        ))?
        .query_map([limit], RawStep::from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    raws.into_iter().map(RawStep::into_step).collect()
}

/// The running step with the highest number, if any step is running.
pub(crate) fn current_step(conn: &Connection) -> Result<Option<TrainingStep>> {
    conn.prepare_cached(&format!(
        "SELECT {STEP_COLUMNS} FROM training_steps WHERE status = 'running'
         ORDER BY step DESC LIMIT 1"
    ))?
    .query_row([], RawStep::from_row)
    .optional()?
    .map(RawStep::into_step)
    .transpose()
}

/// Inserts the checkpoint or replaces the one with the same name.
pub(crate) fn record_checkpoint(conn: &Connection, c: &Checkpoint) -> Result<()> {
    let step = checked_i64("checkpoint step", c.step)?;
    conn.prepare_cached(
        "INSERT INTO checkpoints (name, step, path, kind, created_at) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (name) DO UPDATE SET
             step = excluded.step, path = excluded.path, kind = excluded.kind,
             created_at = excluded.created_at",
    )?
    .execute(params![
        c.name,
        step,
        c.path,
        c.kind.as_str(),
        timestamp::format(c.created_at),
    ])?;
    Ok(())
}

/// Newest first (by creation time, then step, then name).
pub(crate) fn checkpoints(conn: &Connection) -> Result<Vec<Checkpoint>> {
    let raws = conn
        .prepare_cached(
            "SELECT name, step, path, kind, created_at FROM checkpoints
             ORDER BY created_at DESC, step DESC, name DESC",
        )?
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    raws.into_iter()
        .map(|(name, step, path, kind, created_at)| {
            Ok(Checkpoint {
                name,
                step: to_u64(step),
                path,
                kind: parse_text("checkpoints.kind", &kind)?,
                created_at: timestamp::parse("checkpoints.created_at", &created_at)?,
            })
        })
        .collect()
}
