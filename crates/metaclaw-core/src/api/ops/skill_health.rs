//! The Skill health view: every skill's evidence and what needs a look, and the actions
//! that file proposals (a revision by the evolver, a merge of near-duplicates). Editing
//! and disabling use the skill operations.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::api::{Api, ApiError, Method, NoInput, Operation};
use crate::{RequestedProposal, SkillHealthReport};

/// Days without an injection after which an enabled skill counts as idle, by default.
pub const DEFAULT_IDLE_DAYS: u32 = 30;
/// Longest idle window asked for (about ten years).
const MAX_IDLE_DAYS: u32 = 3650;

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct HealthQuery {
    /// Idle: not injected in this many days (default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_days: Option<u32>,
}

pub struct GetSkillHealth;

impl Operation for GetSkillHealth {
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/api/skill-health";
    const SUMMARY: &'static str = "Evidence per skill (bad-outcome rate with and without it, \
         95% interval) and the skills that seem to hurt, are idle, overlap or get corrected";
    type Path = ();
    type Input = HealthQuery;
    type Output = SkillHealthReport;

    async fn run(api: &Api, _: (), q: HealthQuery) -> Result<SkillHealthReport, ApiError> {
        let idle_days = q.idle_days.unwrap_or(DEFAULT_IDLE_DAYS);
        if idle_days == 0 || idle_days > MAX_IDLE_DAYS {
            return Err(ApiError::bad_request(format!(
                "`idle_days` must be between 1 and {MAX_IDLE_DAYS}"
            )));
        }
        let config = api.config();
        let report = crate::skill_health::report(
            api.skills()?,
            u64::from(config.skills.evidence_min_turns),
            idle_days,
            config.skills.holdout_share,
            api.now(),
        )?;
        Ok(report)
    }
}

pub struct ReviseSkill;

impl Operation for ReviseSkill {
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/api/skills/{name}/revision";
    const SUMMARY: &'static str = "Ask the evolver to revise a skill from the conversations \
         where it was followed by corrections; files a pending proposal with a diff";
    type Path = String;
    type Input = NoInput;
    type Output = RequestedProposal;

    async fn run(api: &Api, name: String, _: NoInput) -> Result<RequestedProposal, ApiError> {
        let min_turns = u64::from(api.config().skills.evidence_min_turns);
        Ok(api.evolution()?.propose_revision(&name, min_turns).await?)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct MergeInput {
    /// The skill merged into this one; it is disabled when the proposal is approved.
    pub absorb: String,
}

pub struct MergeSkills;

impl Operation for MergeSkills {
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/api/skills/{name}/merge";
    const SUMMARY: &'static str = "Ask the evolver to merge another skill into this one; files \
         a pending proposal (approving it disables the other skill)";
    type Path = String;
    type Input = MergeInput;
    type Output = RequestedProposal;

    async fn run(api: &Api, name: String, b: MergeInput) -> Result<RequestedProposal, ApiError> {
        Ok(api.evolution()?.propose_merge(&name, &b.absorb).await?)
    }
}
