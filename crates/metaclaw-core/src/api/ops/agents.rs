//! Agents as identities: the list (keys masked), and sharing an agent's skill with all
//! agents.

use metaclaw_store::{ProposalRow, SkillVersionRow};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::agents::AgentInfo;
use crate::api::{Api, ApiError, Method, NoInput, Operation};

pub struct ListAgents;

impl Operation for ListAgents {
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/api/agents";
    const SUMMARY: &'static str =
        "Agents: configured, wired or heard from, with their switches (keys masked)";
    type Path = ();
    type Input = NoInput;
    type Output = Vec<AgentInfo>;

    async fn run(api: &Api, _: (), _: NoInput) -> Result<Vec<AgentInfo>, ApiError> {
        let seen: Vec<String> = api
            .store()
            .session_agents()?
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        Ok(crate::agents::list(&api.config(), &api.parts().home, &seen))
    }
}

pub struct ShareProposal;

impl Operation for ShareProposal {
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/api/proposals/{id}/share";
    const SUMMARY: &'static str = "Share an agent's proposal with all agents (an approved one's skill moves to the shared folder)";
    type Path = i64;
    type Input = NoInput;
    type Output = ProposalRow;

    async fn run(api: &Api, id: i64, _: NoInput) -> Result<ProposalRow, ApiError> {
        Ok(api.evolution()?.share(id)?)
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct ShareSkillInput {
    /// The agent whose own folder holds the skill.
    pub agent: String,
}

pub struct ShareSkill;

impl Operation for ShareSkill {
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/api/skills/{name}/share";
    const SUMMARY: &'static str =
        "Move a skill from an agent's own folder to the shared one, for all agents";
    type Path = String;
    type Input = ShareSkillInput;
    type Output = SkillVersionRow;

    async fn run(api: &Api, name: String, b: ShareSkillInput) -> Result<SkillVersionRow, ApiError> {
        Ok(api.evolution()?.share_skill(&b.agent, &name)?)
    }
}
