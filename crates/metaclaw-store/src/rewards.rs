//! Rewards of turns: the process reward model's votes (`prm_votes`) and the reward each
//! turn was given (`turn_rewards`). Both go with their turn on retention.

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use crate::enums::{parse_text, text_enum};
use crate::error::{Result, StoreError};
use crate::timestamp;
use crate::turns::to_u64;

text_enum! {
    /// Where a turn's reward came from.
    pub enum RewardSource("reward source") {
        /// The process reward model's majority vote.
        Prm = "prm",
        /// The user's thumbs up or down.
        Feedback = "feedback",
        /// More than one part (judge or thumbs, and the implicit signals of live use); the
        /// turn's reward parts say which.
        Combined = "combined",
        /// A task's verifier (rollouts).
        Verifier = "verifier",
    }
}

/// One judge vote of the process reward model on a turn.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct PrmVote {
    /// 0, 1, ... within the turn's votes.
    pub vote: u32,
    /// -1 (bad), 0 (neutral) or 1 (good).
    pub score: i8,
    pub rationale: String,
    pub created_at: DateTime<Utc>,
}

/// The reward a turn was given.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct TurnReward {
    pub reward: f64,
    pub source: RewardSource,
    /// When this reward was (last) set.
    pub created_at: DateTime<Utc>,
}

fn check_score(score: i8) -> Result<()> {
    match score {
        -1..=1 => Ok(()),
        other => Err(StoreError::InvalidValue {
            what: "PRM score (expected -1, 0 or 1)",
            value: other.to_string(),
        }),
    }
}

pub(crate) fn check_votes(votes: &[PrmVote]) -> Result<()> {
    votes.iter().try_for_each(|v| check_score(v.score))
}

pub(crate) fn check_reward(reward: f64) -> Result<()> {
    if reward.is_finite() {
        Ok(())
    } else {
        Err(StoreError::InvalidValue {
            what: "turn reward (must be finite)",
            value: reward.to_string(),
        })
    }
}

fn require_turn(conn: &Connection, turn_id: &str) -> Result<()> {
    let exists = conn
        .prepare_cached("SELECT 1 FROM turns WHERE id = ?1")?
        .exists([turn_id])?;
    if exists {
        Ok(())
    } else {
        Err(StoreError::NotFound {
            what: "turn",
            id: turn_id.to_owned(),
        })
    }
}

/// Replaces the votes of `turn_id` with `votes`; `NotFound` if the turn is not stored.
/// Run it inside one transaction so a failure keeps the old votes.
pub(crate) fn record_votes(conn: &Connection, turn_id: &str, votes: &[PrmVote]) -> Result<()> {
    check_votes(votes)?;
    require_turn(conn, turn_id)?;
    conn.prepare_cached("DELETE FROM prm_votes WHERE turn_id = ?1")?
        .execute([turn_id])?;
    let mut insert = conn.prepare_cached(
        "INSERT INTO prm_votes (turn_id, vote, score, rationale, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for v in votes {
        insert.execute(params![
            turn_id,
            v.vote,
            v.score,
            v.rationale,
            timestamp::format(v.created_at),
        ])?;
    }
    Ok(())
}

/// Ordered by vote index.
pub(crate) fn votes(conn: &Connection, turn_id: &str) -> Result<Vec<PrmVote>> {
    let raws = conn
        .prepare_cached(
            "SELECT vote, score, rationale, created_at FROM prm_votes
             WHERE turn_id = ?1 ORDER BY vote",
        )?
        .query_map([turn_id], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    raws.into_iter()
        .map(|(vote, score, rationale, created_at)| {
            let invalid = |column, value: i64| StoreError::InvalidColumn {
                column,
                value: value.to_string(),
            };
            Ok(PrmVote {
                vote: u32::try_from(vote).map_err(|_| invalid("prm_votes.vote", vote))?,
                score: i8::try_from(score).map_err(|_| invalid("prm_votes.score", score))?,
                rationale,
                created_at: timestamp::parse("prm_votes.created_at", &created_at)?,
            })
        })
        .collect()
}

/// Sets or replaces the reward of `turn_id`; `NotFound` if the turn is not stored.
pub(crate) fn set_reward(
    conn: &Connection,
    turn_id: &str,
    reward: f64,
    source: RewardSource,
    at: &str,
) -> Result<()> {
    check_reward(reward)?;
    require_turn(conn, turn_id)?;
    conn.prepare_cached(
        "INSERT INTO turn_rewards (turn_id, reward, source, created_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (turn_id) DO UPDATE SET
             reward = excluded.reward, source = excluded.source, created_at = excluded.created_at",
    )?
    .execute(params![turn_id, reward, source.as_str(), at])?;
    Ok(())
}

pub(crate) fn reward(conn: &Connection, turn_id: &str) -> Result<Option<TurnReward>> {
    let raw = conn
        .prepare_cached("SELECT reward, source, created_at FROM turn_rewards WHERE turn_id = ?1")?
        .query_row([turn_id], |r| {
            Ok((
                r.get::<_, f64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
            ))
        })
        .optional()?;
    raw.map(|(reward, source, created_at)| {
        Ok(TurnReward {
            reward,
            source: parse_text("turn_rewards.source", &source)?,
            created_at: timestamp::parse("turn_rewards.created_at", &created_at)?,
        })
    })
    .transpose()
}

/// How many stored turns have each majority PRM score: always `[(-1, n), (0, n), (1, n)]`.
///
/// Computed from the votes (not from `turn_rewards`, whose `combined` rewards no longer
/// say what the PRM voted): a turn's score is the one most of its votes gave; a tie
/// between the most frequent scores counts as 0. Turns without votes are not counted.
/// `prm_verdicts` holds that verdict per turn, kept by triggers on the votes (0007).
pub(crate) fn score_distribution(conn: &Connection) -> Result<Vec<(i8, u64)>> {
    let rows = conn
        .prepare_cached("SELECT verdict, count(*) FROM prm_verdicts GROUP BY verdict")?
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut out = vec![(-1i8, 0u64), (0, 0), (1, 0)];
    for (score, n) in rows {
        let slot = out
            .iter_mut()
            .find(|(s, _)| i64::from(*s) == score)
            .ok_or_else(|| StoreError::InvalidColumn {
                column: "prm_verdicts.verdict",
                value: score.to_string(),
            })?;
        slot.1 = to_u64(n);
    }
    Ok(out)
}
