//! The review inbox: proposals from skill distillation, approve (with edits), reject, undo,
//! and distilling a session on demand.

use metaclaw_store::{EvolutionTrigger, ProposalRow, ProposalStatus, SkillVersionRow};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Ack;
use crate::api::{Api, ApiError, Method, NoInput, Operation};
use crate::error::SkillError;
use crate::evolution::RunReport;

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct ProposalFilter {
    /// pending, approved, rejected or undone; all when absent (or "all").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// At most this many, newest first (default 100, at most 500).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
    /// Skip this many of the newest first (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<usize>,
    /// Only the proposals for this agent's own folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

/// Most proposals one call returns: each carries a whole SKILL.md (twice for updates).
pub const MAX_PROPOSALS_PAGE: usize = 500;

pub struct ListProposals;

impl Operation for ListProposals {
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/api/proposals";
    const SUMMARY: &'static str =
        "Skill proposals, newest first (filter: status, agent; pages: limit, offset)";
    type Path = ();
    type Input = ProposalFilter;
    type Output = Vec<ProposalRow>;

    async fn run(api: &Api, _: (), f: ProposalFilter) -> Result<Vec<ProposalRow>, ApiError> {
        let status = match f.status.as_deref().filter(|s| !s.is_empty() && *s != "all") {
            Some(text) => Some(
                text.parse::<ProposalStatus>()
                    .map_err(|e| ApiError::bad_request(e.to_string()))?,
            ),
            None => None,
        };
        let limit = f.limit.unwrap_or(100).min(MAX_PROPOSALS_PAGE);
        let agent = f.agent.as_deref().filter(|a| !a.is_empty());
        Ok(api
            .evolution()?
            .proposals_page(status, agent, limit, f.offset.unwrap_or(0))?)
    }
}

pub struct GetProposal;

impl Operation for GetProposal {
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/api/proposals/{id}";
    const SUMMARY: &'static str = "One proposal with provenance and diff";
    type Path = i64;
    type Input = NoInput;
    type Output = ProposalRow;

    async fn run(api: &Api, id: i64, _: NoInput) -> Result<ProposalRow, ApiError> {
        Ok(api
            .store()
            .proposal(id)?
            .ok_or(SkillError::NoProposal(id))?)
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct ApproveInput {
    /// The user's edited SKILL.md; the proposal's own text when absent or blank.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
}

pub struct Approve;

impl Operation for Approve {
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/api/proposals/{id}/approve";
    const SUMMARY: &'static str = "Approve, optionally with edited content";
    type Path = i64;
    type Input = ApproveInput;
    type Output = SkillVersionRow;

    async fn run(api: &Api, id: i64, b: ApproveInput) -> Result<SkillVersionRow, ApiError> {
        let content = b.content.filter(|c| !c.trim().is_empty());
        Ok(api.evolution()?.approve(id, content)?)
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct RejectInput {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

pub struct Reject;

impl Operation for Reject {
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/api/proposals/{id}/reject";
    const SUMMARY: &'static str = "Reject, with an optional reason";
    type Path = i64;
    type Input = RejectInput;
    type Output = Ack;

    async fn run(api: &Api, id: i64, b: RejectInput) -> Result<Ack, ApiError> {
        let reason = b.reason.filter(|r| !r.trim().is_empty());
        api.evolution()?.reject(id, reason)?;
        Ok(Ack::OK)
    }
}

pub struct Undo;

impl Operation for Undo {
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/api/proposals/{id}/undo";
    const SUMMARY: &'static str = "Take back an approval";
    type Path = i64;
    type Input = NoInput;
    type Output = SkillVersionRow;

    async fn run(api: &Api, id: i64, _: NoInput) -> Result<SkillVersionRow, ApiError> {
        Ok(api.evolution()?.undo(id)?)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Approve,
    Reject,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct BulkInput {
    pub action: Decision,
    pub ids: Vec<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct BulkResult {
    pub results: Vec<BulkItem>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct BulkItem {
    pub id: i64,
    pub ok: bool,
    pub error: Option<String>,
}

pub struct BulkDecide;

impl Operation for BulkDecide {
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/api/proposals/bulk";
    const SUMMARY: &'static str = "Approve or reject several proposals";
    type Path = ();
    type Input = BulkInput;
    type Output = BulkResult;

    async fn run(api: &Api, _: (), b: BulkInput) -> Result<BulkResult, ApiError> {
        let evo = api.evolution()?;
        let results = b
            .ids
            .iter()
            .map(|&id| {
                let r = match b.action {
                    Decision::Approve => evo.approve(id, None).map(|_| ()),
                    Decision::Reject => evo.reject(id, b.reason.clone()),
                };
                BulkItem {
                    id,
                    ok: r.is_ok(),
                    error: r.err().map(|e| e.to_string()),
                }
            })
            .collect();
        Ok(BulkResult { results })
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct DistilInput {
    /// The session to distil; the most recent one when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

pub struct Distil;

impl Operation for Distil {
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/api/distil";
    const SUMMARY: &'static str = "Distil skills from a session now";
    type Path = ();
    type Input = DistilInput;
    type Output = RunReport;

    async fn run(api: &Api, _: (), b: DistilInput) -> Result<RunReport, ApiError> {
        let session = match b.session_id {
            Some(id) => id,
            None => api
                .store()
                .sessions(1)?
                .into_iter()
                .next()
                .map(|x| x.id)
                .ok_or(SkillError::NoSessions)?,
        };
        Ok(api
            .evolution()?
            .distil(&session, EvolutionTrigger::Manual)
            .await?)
    }
}
