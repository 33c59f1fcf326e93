//! Per-skill switches (enabled, pinned), the skill-embedding cache and per-skill usage stats.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, params};

use crate::error::Result;
use crate::timestamp;
use crate::turns::to_u64;

/// A change to one skill's switches; `None` leaves a switch as it is.
#[derive(Debug, Clone, PartialEq)]
pub struct StateChange {
    pub name: String,
    pub enabled: Option<bool>,
    pub pinned: Option<bool>,
}

/// Stored switches of a skill. Skills without a row are enabled and not pinned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct SkillSwitches {
    pub enabled: bool,
    pub pinned: bool,
}

pub(crate) fn apply_state(conn: &Connection, c: &StateChange, at: &str) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO skill_state (name, enabled, pinned, updated_at)
         VALUES (?1, COALESCE(?2, 1), COALESCE(?3, 0), ?4)
         ON CONFLICT (name) DO UPDATE SET
           enabled = COALESCE(?2, enabled),
           pinned = COALESCE(?3, pinned),
           updated_at = ?4",
    )?
    .execute(params![c.name, c.enabled, c.pinned, at])?;
    Ok(())
}

pub(crate) fn states(conn: &Connection) -> Result<HashMap<String, SkillSwitches>> {
    let mut stmt = conn.prepare_cached("SELECT name, enabled, pinned FROM skill_state")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            SkillSwitches {
                enabled: r.get(1)?,
                pinned: r.get(2)?,
            },
        ))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub(crate) fn put_embedding(
    conn: &Connection,
    model: &str,
    hash: &str,
    vector: &[f32],
    at: &str,
) -> Result<()> {
    let bytes: Vec<u8> = vector.iter().flat_map(|x| x.to_le_bytes()).collect();
    conn.prepare_cached(
        "INSERT OR REPLACE INTO skill_embeddings (model, hash, vector, created_at) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![model, hash, bytes, at])?;
    Ok(())
}

pub(crate) fn embedding(conn: &Connection, model: &str, hash: &str) -> Result<Option<Vec<f32>>> {
    let bytes: Option<Vec<u8>> = conn
        .prepare_cached("SELECT vector FROM skill_embeddings WHERE model = ?1 AND hash = ?2")?
        .query_row(params![model, hash], |r| r.get(0))
        .optional()?;
    Ok(bytes.map(|b| {
        b.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }))
}

/// How a skill fared in the stored turns (retention forgets pruned turns).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct SkillStats {
    /// Stored turns the skill was injected into.
    pub injected: u64,
    /// Of those, turns rated thumbs up / thumbs down.
    pub thumbs_up: u64,
    pub thumbs_down: u64,
    pub last_injected_at: Option<DateTime<Utc>>,
}

/// Stats of every skill injected into at least one stored turn, from `skill_usage` (kept by
/// triggers, see migration 0006), so the cost does not grow with the turn log.
pub(crate) fn stats(conn: &Connection) -> Result<HashMap<String, SkillStats>> {
    let mut stmt = conn.prepare_cached(
        "SELECT skill_name, injected, thumbs_up, thumbs_down, last_injected_at
         FROM skill_usage WHERE injected > 0",
    )?;
    let raws = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, Option<String>>(4)?,
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    raws.into_iter()
        .map(|(name, injected, up, down, last)| {
            let stats = SkillStats {
                injected: to_u64(injected),
                thumbs_up: to_u64(up),
                thumbs_down: to_u64(down),
                last_injected_at: last
                    .map(|t| timestamp::parse("turns.started_at", &t))
                    .transpose()?,
            };
            Ok((name, stats))
        })
        .collect()
}
