//! The `feedback` table: the user's thumbs up or down (and note) on a turn.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::Serialize;

use crate::error::{Result, StoreError};
use crate::timestamp;

/// A rating of one turn. Goes with its turn on retention.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Feedback {
    /// 1 (thumbs up) or -1 (thumbs down).
    pub rating: i8,
    pub note: Option<String>,
    /// When this rating was (last) given.
    pub created_at: DateTime<Utc>,
}

pub(crate) fn check_rating(rating: i8) -> Result<()> {
    match rating {
        -1 | 1 => Ok(()),
        other => Err(StoreError::InvalidRating(other)),
    }
}

/// Sets or replaces the rating of `turn_id`; `NotFound` if the turn is not stored.
pub(crate) fn set(
    conn: &Connection,
    turn_id: &str,
    rating: i8,
    note: Option<&str>,
    at: &str,
) -> Result<()> {
    check_rating(rating)?;
    let exists = conn
        .prepare_cached("SELECT 1 FROM turns WHERE id = ?1")?
        .exists([turn_id])?;
    if !exists {
        return Err(StoreError::NotFound {
            what: "turn",
            id: turn_id.to_owned(),
        });
    }
    conn.prepare_cached(
        "INSERT INTO feedback (turn_id, rating, note, created_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (turn_id) DO UPDATE SET
             rating = excluded.rating, note = excluded.note, created_at = excluded.created_at",
    )?
    .execute(params![turn_id, rating, note, at])?;
    Ok(())
}

/// Columns as SQLite returns them; converted outside the row callback.
struct RawFeedback {
    rating: i64,
    note: Option<String>,
    created_at: String,
}

impl RawFeedback {
    /// Reads columns `rating, note, created_at` starting at `first`.
    fn from_row(r: &Row<'_>, first: usize) -> rusqlite::Result<Self> {
        Ok(Self {
            rating: r.get(first)?,
            note: r.get(first + 1)?,
            created_at: r.get(first + 2)?,
        })
    }

    fn into_feedback(self) -> Result<Feedback> {
        let rating = i8::try_from(self.rating)
            .ok()
            .filter(|r| check_rating(*r).is_ok())
            .ok_or_else(|| StoreError::InvalidColumn {
                column: "feedback.rating",
                value: self.rating.to_string(),
            })?;
        Ok(Feedback {
            rating,
            note: self.note,
            created_at: timestamp::parse("feedback.created_at", &self.created_at)?,
        })
    }
}

pub(crate) fn get(conn: &Connection, turn_id: &str) -> Result<Option<Feedback>> {
    conn.prepare_cached("SELECT rating, note, created_at FROM feedback WHERE turn_id = ?1")?
        .query_row([turn_id], |r| RawFeedback::from_row(r, 0))
        .optional()?
        .map(RawFeedback::into_feedback)
        .transpose()
}

/// Ratings of the turns of one session, by turn id. Ratings are few and a session can hold
/// thousands of turns, so the join starts from `feedback` (CROSS JOIN fixes that order).
pub(crate) fn in_session(conn: &Connection, session_id: &str) -> Result<HashMap<String, Feedback>> {
    let raws = conn
        .prepare_cached(
            "SELECT f.turn_id, f.rating, f.note, f.created_at
             FROM feedback f CROSS JOIN turns t ON t.id = f.turn_id
             WHERE t.session_id = ?1",
        )?
        .query_map([session_id], |r| {
            Ok((r.get::<_, String>(0)?, RawFeedback::from_row(r, 1)?))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    raws.into_iter()
        .map(|(id, raw)| Ok((id, raw.into_feedback()?)))
        .collect()
}

/// Ratings of the given turns, by turn id: one key lookup per turn.
pub(crate) fn on_turns(conn: &Connection, turn_ids: &[&str]) -> Result<HashMap<String, Feedback>> {
    let mut out = HashMap::new();
    for id in turn_ids {
        if let Some(f) = get(conn, id)? {
            out.insert((*id).to_owned(), f);
        }
    }
    Ok(out)
}
