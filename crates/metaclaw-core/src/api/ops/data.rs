//! The data MetaClaw keeps: how big the database is, how long turns are kept, exporting
//! sessions as JSON Lines and deleting one.

use metaclaw_store::{SessionRow, TurnRow};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Ack;
use crate::api::{Api, ApiError, Method, NoInput, Operation};

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DataInfo {
    pub database_path: String,
    /// The database file and its write-ahead log.
    pub database_bytes: u64,
    pub sessions: u64,
    /// `records.retention_days`: turns older than this are deleted (0 = kept forever).
    pub retention_days: u32,
}

pub struct GetData;

impl Operation for GetData {
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/api/data";
    const SUMMARY: &'static str = "Database size, session count and retention";
    type Path = ();
    type Input = NoInput;
    type Output = DataInfo;

    async fn run(api: &Api, _: (), _: NoInput) -> Result<DataInfo, ApiError> {
        let store = api.store();
        Ok(DataInfo {
            database_path: store.path().display().to_string(),
            database_bytes: store.size_bytes(),
            sessions: store.session_count()?,
            retention_days: api.config().records.retention_days,
        })
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct ExportQuery {
    /// Only this session (default: every session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}

/// One line of an export.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ExportedSession {
    pub session: SessionRow,
    /// Every turn as recorded, requests and responses in full.
    pub turns: Vec<TurnRow>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SessionsExport {
    /// A file name to save it as.
    pub filename: String,
    pub sessions: u64,
    /// One `ExportedSession` as JSON per line.
    pub jsonl: String,
}

/// Sessions read per page while exporting.
const PAGE: usize = 500;

pub struct ExportSessions;

impl Operation for ExportSessions {
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/api/data/export";
    const SUMMARY: &'static str = "Sessions with their turns as JSON Lines (one session a line)";
    type Path = ();
    type Input = ExportQuery;
    type Output = SessionsExport;

    async fn run(api: &Api, _: (), q: ExportQuery) -> Result<SessionsExport, ApiError> {
        let store = api.store();
        let sessions: Vec<SessionRow> = match &q.session {
            Some(id) => vec![
                store
                    .session(id)?
                    .ok_or_else(|| ApiError::not_found(format!("no session `{id}`")))?,
            ],
            None => {
                let mut all = Vec::new();
                loop {
                    let page = store.sessions_page(PAGE, all.len())?;
                    let done = page.len() < PAGE;
                    all.extend(page);
                    if done {
                        break all;
                    }
                }
            }
        };
        let mut jsonl = String::new();
        for session in &sessions {
            let line = ExportedSession {
                turns: store.turns_in_session(&session.id)?,
                session: session.clone(),
            };
            let text =
                serde_json::to_string(&line).map_err(|e| ApiError::internal(e.to_string()))?;
            jsonl.push_str(&text);
            jsonl.push('\n');
        }
        let stamp = api.now().format("%Y%m%d-%H%M%S");
        Ok(SessionsExport {
            filename: match &q.session {
                Some(id) => format!("metaclaw-session-{id}.jsonl"),
                None => format!("metaclaw-sessions-{stamp}.jsonl"),
            },
            sessions: sessions.len() as u64,
            jsonl,
        })
    }
}

pub struct DeleteSession;

impl Operation for DeleteSession {
    const METHOD: Method = Method::Delete;
    const PATH: &'static str = "/api/sessions/{id}";
    const SUMMARY: &'static str = "Delete a session with its turns, ratings and samples";
    type Path = String;
    type Input = NoInput;
    type Output = Ack;

    async fn run(api: &Api, id: String, _: NoInput) -> Result<Ack, ApiError> {
        let report = api.store().delete_session(&id)?;
        tracing::info!(session = %id, turns = report.turns, "session deleted");
        Ok(Ack::OK)
    }
}
