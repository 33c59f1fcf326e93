//! The `turns` table: one row per request/response exchange.

use chrono::{DateTime, Days, Duration, NaiveDate, NaiveTime, Utc};
use metaclaw_domain::{Dialect, TurnRecord, TurnStatus, TurnType};
use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::Serialize;
use serde_json::Value;

use crate::blob::{self, Blob, BlobCache};
use crate::error::{Result, StoreError};
use crate::evidence::{self, ControlCause};
use crate::{enums, sessions, timestamp};

/// A turn as stored, with its request reinflated to exactly what was recorded.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct TurnRow {
    pub id: String,
    pub session_id: String,
    /// 1-based position within the session, in the order the store received turns.
    pub seq: u64,
    pub turn_type: TurnType,
    pub api: Dialect,
    pub stream: bool,
    pub model: Option<String>,
    pub request: Value,
    /// Hash of the first system prompt blob, for grouping turns by prompt.
    pub system_blob: Option<String>,
    pub tools_blob: Option<String>,
    pub response: Option<Value>,
    pub status: TurnStatus,
    pub http_status: u16,
    pub error: Option<String>,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub started_at: DateTime<Utc>,
    pub latency_ms: f64,
    pub ttfb_ms: Option<f64>,
    pub injected: Value,
    /// The skill generation the turn was served with, if the proxy knew it.
    pub skill_generation: Option<u64>,
    /// The agent that sent it.
    pub agent: String,
}

/// A [`TurnRecord`] serialized and split into blobs, done before the write transaction so
/// the CPU work does not hold the database lock, and done once even if the write is retried.
#[derive(Debug)]
pub(crate) struct PreparedTurn {
    pub(crate) record: TurnRecord,
    request_json: String,
    response_json: Option<String>,
    injected_json: String,
    started_at: String,
    blobs: Vec<Blob>,
    system_blob: Option<String>,
    tools_blob: Option<String>,
    /// `turn_skills` rows: (name, version).
    skills: Vec<(String, Option<String>)>,
    /// `turn_skill_controls` rows: skills retrieved but not injected.
    controls: Vec<(String, ControlCause)>,
}

impl PreparedTurn {
    pub(crate) fn new(mut record: TurnRecord) -> Result<Self> {
        // Taken out (not cloned): request bodies can be megabytes.
        let mut request = std::mem::take(&mut record.request);
        let extracted = blob::extract(record.api, &mut request)?;
        Ok(Self {
            request_json: serde_json::to_string(&request)?,
            response_json: record
                .response
                .as_ref()
                .map(serde_json::to_string)
                .transpose()?,
            injected_json: serde_json::to_string(&record.injected)?,
            started_at: timestamp::format(record.started_at),
            blobs: extracted.blobs,
            system_blob: extracted.system_hash,
            tools_blob: extracted.tools_hash,
            skills: injected_skills(&record.injected),
            controls: evidence::controls(&record.injected),
            record,
        })
    }
}

/// The skills in a turn's `injected` list: entries `{"kind": "skill", "name": .., "version": ..}`.
/// A version that is not a string (a number, say) is kept as its JSON text.
pub(crate) fn injected_skills(injected: &Value) -> Vec<(String, Option<String>)> {
    let Some(entries) = injected.as_array() else {
        return Vec::new();
    };
    entries
        .iter()
        .filter(|e| e.get("kind").and_then(Value::as_str) == Some("skill"))
        .filter_map(|e| {
            let name = e.get("name")?.as_str()?.to_owned();
            let version = match e.get("version") {
                None | Some(Value::Null) => None,
                Some(Value::String(v)) => Some(v.clone()),
                Some(other) => Some(other.to_string()),
            };
            Some((name, version))
        })
        .collect()
}

pub(crate) fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

pub(crate) fn to_u64(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// Writes one turn: session upsert, blobs, the row with the next `seq`, blob references,
/// injected skills.
pub(crate) fn insert(conn: &Connection, turn: &PreparedTurn) -> Result<()> {
    let r = &turn.record;
    sessions::touch(conn, &r.session_id, r.session_source, &turn.started_at)?;
    sessions::set_agent(conn, &r.session_id, &r.agent)?;
    for b in &turn.blobs {
        blob::insert(conn, b, &turn.started_at)?;
    }
    let seq: i64 = conn
        .prepare_cached("SELECT coalesce(max(seq), 0) + 1 FROM turns WHERE session_id = ?1")?
        .query_row([&r.session_id], |row| row.get(0))?;
    conn.prepare_cached(
        "INSERT INTO turns (
             id, session_id, seq, turn_type, api, stream, model, request_json,
             system_blob, tools_blob, response_json, status, http_status, error,
             input_tokens, output_tokens, started_at, latency_ms, ttfb_ms, injected_json,
             skill_generation, agent)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10,
                 ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22)",
    )?
    .execute(params![
        r.turn_id,
        r.session_id,
        seq,
        r.turn_type.as_str(),
        r.api.as_str(),
        r.stream,
        r.model,
        turn.request_json,
        turn.system_blob,
        turn.tools_blob,
        turn.response_json,
        r.status.as_str(),
        r.http_status,
        r.error,
        r.usage.input_tokens.map(to_i64),
        r.usage.output_tokens.map(to_i64),
        turn.started_at,
        r.latency_ms,
        r.ttfb_ms,
        turn.injected_json,
        r.skill_generation.map(to_i64),
        r.agent,
    ])?;
    let mut link =
        conn.prepare_cached("INSERT OR IGNORE INTO turn_blobs (turn_id, hash) VALUES (?1, ?2)")?;
    for b in &turn.blobs {
        link.execute(params![r.turn_id, b.hash])?;
    }
    // A skill listed twice keeps its first version.
    let mut skill = conn.prepare_cached(
        "INSERT OR IGNORE INTO turn_skills (turn_id, skill_name, version) VALUES (?1, ?2, ?3)",
    )?;
    for (name, version) in &turn.skills {
        skill.execute(params![r.turn_id, name, version])?;
    }
    evidence::insert_controls(conn, &r.turn_id, &turn.controls)?;
    sessions::count_turn(conn, &r.session_id)?;
    Ok(())
}

const COLUMNS: &str = "id, session_id, seq, turn_type, api, stream, model, request_json, \
     system_blob, tools_blob, response_json, status, http_status, error, input_tokens, \
     output_tokens, started_at, latency_ms, ttfb_ms, injected_json, skill_generation, agent";

/// Columns as SQLite returns them; see `RawSession`.
struct RawTurn {
    id: String,
    session_id: String,
    seq: i64,
    turn_type: String,
    api: String,
    stream: bool,
    model: Option<String>,
    request_json: String,
    system_blob: Option<String>,
    tools_blob: Option<String>,
    response_json: Option<String>,
    status: String,
    http_status: u16,
    error: Option<String>,
    input_tokens: Option<i64>,
    output_tokens: Option<i64>,
    started_at: String,
    latency_ms: f64,
    ttfb_ms: Option<f64>,
    injected_json: String,
    skill_generation: Option<i64>,
    agent: String,
}

impl RawTurn {
    fn from_row(r: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            id: r.get(0)?,
            session_id: r.get(1)?,
            seq: r.get(2)?,
            turn_type: r.get(3)?,
            api: r.get(4)?,
            stream: r.get(5)?,
            model: r.get(6)?,
            request_json: r.get(7)?,
            system_blob: r.get(8)?,
            tools_blob: r.get(9)?,
            response_json: r.get(10)?,
            status: r.get(11)?,
            http_status: r.get(12)?,
            error: r.get(13)?,
            input_tokens: r.get(14)?,
            output_tokens: r.get(15)?,
            started_at: r.get(16)?,
            latency_ms: r.get(17)?,
            ttfb_ms: r.get(18)?,
            injected_json: r.get(19)?,
            skill_generation: r.get(20)?,
            agent: r.get(21)?,
        })
    }

    /// Without `blobs`, the request keeps its blob refs.
    fn into_row(self, blobs: Option<&mut BlobCache<'_>>) -> Result<TurnRow> {
        let api = enums::parse_dialect("turns.api", &self.api)?;
        let mut request: Value = serde_json::from_str(&self.request_json)?;
        if let Some(blobs) = blobs {
            blobs.reinflate(&self.id, api, &mut request)?;
        }
        Ok(TurnRow {
            seq: to_u64(self.seq),
            turn_type: enums::parse("turns.turn_type", &self.turn_type)?,
            api,
            stream: self.stream,
            model: self.model,
            request,
            system_blob: self.system_blob,
            tools_blob: self.tools_blob,
            response: self
                .response_json
                .as_deref()
                .map(serde_json::from_str)
                .transpose()?,
            status: enums::parse("turns.status", &self.status)?,
            http_status: self.http_status,
            error: self.error,
            input_tokens: self.input_tokens.map(to_u64),
            output_tokens: self.output_tokens.map(to_u64),
            started_at: timestamp::parse("turns.started_at", &self.started_at)?,
            latency_ms: self.latency_ms,
            ttfb_ms: self.ttfb_ms,
            injected: serde_json::from_str(&self.injected_json)?,
            skill_generation: self.skill_generation.map(to_u64),
            agent: self.agent,
            id: self.id,
            session_id: self.session_id,
        })
    }
}

pub(crate) fn get(conn: &Connection, id: &str) -> Result<Option<TurnRow>> {
    let raw = conn
        .prepare_cached(&format!("SELECT {COLUMNS} FROM turns WHERE id = ?1"))?
        .query_row([id], RawTurn::from_row)
        .optional()?;
    raw.map(|raw| raw.into_row(Some(&mut BlobCache::new(conn))))
        .transpose()
}

/// A session's turns by `seq`, `limit` of them from the `offset`-th; with `reinflate`
/// false the requests keep their blob refs.
pub(crate) fn in_session(
    conn: &Connection,
    session_id: &str,
    limit: usize,
    offset: usize,
    reinflate: bool,
) -> Result<Vec<TurnRow>> {
    let raws = conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM turns WHERE session_id = ?1 ORDER BY seq LIMIT ?2 OFFSET ?3"
        ))?
        .query_map(
            params![session_id, to_i64(limit as u64), to_i64(offset as u64)],
            RawTurn::from_row,
        )?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut blobs = BlobCache::new(conn);
    raws.into_iter()
        .map(|raw| raw.into_row(reinflate.then_some(&mut blobs)))
        .collect()
}

/// The turns of a session around `turn_id`: up to `before` turns before it, itself and up
/// to `after` after it, by `seq`, requests as stored (blob refs in place).
pub(crate) fn around(
    conn: &Connection,
    turn_id: &str,
    before: usize,
    after: usize,
) -> Result<Vec<TurnRow>> {
    let raws = conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM turns
             WHERE (session_id, seq) IN (
                 SELECT * FROM (SELECT p.session_id, p.seq FROM turns p, turns t
                                WHERE t.id = ?1 AND p.session_id = t.session_id
                                  AND p.seq <= t.seq
                                ORDER BY p.seq DESC LIMIT ?2)
                 UNION ALL
                 SELECT * FROM (SELECT n.session_id, n.seq FROM turns n, turns t
                                WHERE t.id = ?1 AND n.session_id = t.session_id
                                  AND n.seq > t.seq
                                ORDER BY n.seq LIMIT ?3))
             ORDER BY seq"
        ))?
        .query_map(
            params![turn_id, to_i64(before as u64 + 1), to_i64(after as u64)],
            RawTurn::from_row,
        )?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    raws.into_iter().map(|raw| raw.into_row(None)).collect()
}

/// The last `n` turns of a session, oldest first, requests reinflated.
pub(crate) fn tail_of_session(
    conn: &Connection,
    session_id: &str,
    n: usize,
) -> Result<Vec<TurnRow>> {
    let raws = conn
        .prepare_cached(&format!(
            "SELECT * FROM (SELECT {COLUMNS} FROM turns WHERE session_id = ?1 \
             ORDER BY seq DESC LIMIT ?2) ORDER BY seq"
        ))?
        .query_map(params![session_id, to_i64(n as u64)], RawTurn::from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut blobs = BlobCache::new(conn);
    raws.into_iter()
        .map(|raw| raw.into_row(Some(&mut blobs)))
        .collect()
}

pub(crate) fn ids_in_session(conn: &Connection, session_id: &str) -> Result<Vec<String>> {
    let ids = conn
        .prepare_cached("SELECT id FROM turns WHERE session_id = ?1 ORDER BY seq")?
        .query_map([session_id], |r| r.get(0))?
        .collect::<rusqlite::Result<Vec<String>>>()?;
    Ok(ids)
}

pub(crate) fn count_since(conn: &Connection, since: DateTime<Utc>) -> Result<u64> {
    let n: i64 = conn
        .prepare_cached("SELECT count(*) FROM turns WHERE started_at >= ?1")?
        .query_row([timestamp::format(since)], |r| r.get(0))?;
    Ok(to_u64(n))
}

/// Longest span [`crate::Store::turns_per_day`] answers for (about ten years).
pub const MAX_DAYS: u32 = 3660;

/// Turns per local day (UTC plus `tz_offset_minutes`) for the `days` local days ending on
/// the local date of `now`, oldest first, every day present (0 for days without turns).
/// Turns started after the end of that day (clock skew) are not counted.
pub(crate) fn per_day(
    conn: &Connection,
    now: DateTime<Utc>,
    days: u32,
    tz_offset_minutes: i32,
    agent: Option<&str>,
) -> Result<Vec<(NaiveDate, u64)>> {
    // Real offsets are within -12:00..=+14:00; anything beyond a day is a unit mix-up.
    if tz_offset_minutes.unsigned_abs() >= 24 * 60 {
        return Err(StoreError::InvalidValue {
            what: "time zone offset in minutes (must be within ±1439)",
            value: tz_offset_minutes.to_string(),
        });
    }
    if days > MAX_DAYS {
        return Err(StoreError::InvalidValue {
            what: "number of days (at most 3660)",
            value: days.to_string(),
        });
    }
    if days == 0 {
        return Ok(Vec::new());
    }
    let offset = Duration::minutes(i64::from(tz_offset_minutes));
    let out_of_range = || StoreError::InvalidValue {
        what: "date range",
        value: format!("{days} days up to {now}"),
    };
    let today = (now + offset).date_naive();
    let first = today
        .checked_sub_days(Days::new(u64::from(days - 1)))
        .ok_or_else(out_of_range)?;
    // Local midnight as a UTC instant.
    let utc_midnight = |d: NaiveDate| d.and_time(NaiveTime::MIN).and_utc() - offset;
    // One index range count per day: no per-row date arithmetic, so a busy fortnight
    // (tens of thousands of turns) costs an index walk.
    let mut count = conn.prepare_cached(
        "SELECT count(*) FROM turns WHERE started_at >= ?1 AND started_at < ?2
             AND (?3 IS NULL OR agent = ?3)",
    )?;
    first
        .iter_days()
        .take(days as usize)
        .map(|day| {
            let next = day.succ_opt().ok_or_else(out_of_range)?;
            let n: i64 = count.query_row(
                params![
                    timestamp::format(utc_midnight(day)),
                    timestamp::format(utc_midnight(next)),
                    agent
                ],
                |r| r.get(0),
            )?;
            Ok((day, to_u64(n)))
        })
        .collect()
}
