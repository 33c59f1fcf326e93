//! The skill library: list, read, create, edit, delete, switches, versions, the bundled bank,
//! and trying retrieval on a request.

use metaclaw_skills::{Finding, Level, Retrieval};
use metaclaw_store::SkillVersionRow;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Ack;
use crate::SkillInfo;
use crate::api::{Api, ApiError, Method, NoInput, Operation};
use crate::error::SkillError;

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct SkillFilter {
    /// Words in the name or description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub q: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// The skills this agent's turns see: its own (marked with `agent`) over the shared ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

pub struct ListSkills;

impl Operation for ListSkills {
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/api/skills";
    const SUMMARY: &'static str =
        "Skills in effect, with switches and usage (filter: q, category, agent)";
    type Path = ();
    type Input = SkillFilter;
    type Output = Vec<SkillInfo>;

    async fn run(api: &Api, _: (), f: SkillFilter) -> Result<Vec<SkillInfo>, ApiError> {
        let mut skills = match f.agent.as_deref().filter(|a| !a.is_empty()) {
            Some(agent) => api.skills()?.list_for(agent),
            None => api.skills()?.list(),
        };
        if let Some(c) = f.category.filter(|c| !c.is_empty()) {
            skills.retain(|x| x.category == c);
        }
        if let Some(q) = f.q.map(|q| q.to_lowercase()).filter(|q| !q.is_empty()) {
            skills.retain(|x| x.name.contains(&q) || x.description.to_lowercase().contains(&q));
        }
        Ok(skills)
    }
}

/// One skill with its SKILL.md text and what lint says about it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SkillDetail {
    pub skill: SkillInfo,
    pub content: String,
    pub problems: Vec<Problem>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Problem {
    pub level: Level,
    pub message: String,
}

pub struct GetSkill;

impl Operation for GetSkill {
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/api/skills/{name}";
    const SUMMARY: &'static str = "One skill: info, SKILL.md text and lint problems";
    type Path = String;
    type Input = NoInput;
    type Output = SkillDetail;

    async fn run(api: &Api, name: String, _: NoInput) -> Result<SkillDetail, ApiError> {
        let svc = api.skills()?;
        let not_found = || SkillError::NotFound(name.clone());
        let info = svc
            .list()
            .into_iter()
            .find(|x| x.name == name)
            .ok_or_else(not_found)?;
        let lib = svc.library();
        let skill = lib.get(&name).ok_or_else(not_found)?;
        let problems = metaclaw_skills::check_skill(skill, &name)
            .into_iter()
            .map(|f| Problem {
                level: f.level,
                message: f.message,
            })
            .collect();
        Ok(SkillDetail {
            skill: info,
            content: skill.file_text(),
            problems,
        })
    }
}

/// A whole SKILL.md.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SkillText {
    pub content: String,
}

pub struct CreateSkill;

impl Operation for CreateSkill {
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/api/skills";
    const SUMMARY: &'static str = "Create a user skill from SKILL.md text";
    type Path = ();
    type Input = SkillText;
    type Output = SkillVersionRow;

    async fn run(api: &Api, _: (), b: SkillText) -> Result<SkillVersionRow, ApiError> {
        Ok(api.evolution()?.create_skill(&b.content)?)
    }
}

pub struct EditSkill;

impl Operation for EditSkill {
    const METHOD: Method = Method::Put;
    const PATH: &'static str = "/api/skills/{name}";
    const SUMMARY: &'static str = "Replace a skill's SKILL.md (a new version)";
    type Path = String;
    type Input = SkillText;
    type Output = SkillVersionRow;

    async fn run(api: &Api, name: String, b: SkillText) -> Result<SkillVersionRow, ApiError> {
        Ok(api.evolution()?.edit_skill(&name, &b.content)?)
    }
}

pub struct DeleteSkill;

impl Operation for DeleteSkill {
    const METHOD: Method = Method::Delete;
    const PATH: &'static str = "/api/skills/{name}";
    const SUMMARY: &'static str = "Remove the user's copy of a skill";
    type Path = String;
    type Input = NoInput;
    type Output = SkillVersionRow;

    async fn run(api: &Api, name: String, _: NoInput) -> Result<SkillVersionRow, ApiError> {
        Ok(api.evolution()?.delete_skill(&name)?)
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct SkillSwitches {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned: Option<bool>,
}

pub struct SetSkillState;

impl Operation for SetSkillState {
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/api/skills/{name}/state";
    const SUMMARY: &'static str = "Enable, disable, pin or unpin a skill";
    type Path = String;
    type Input = SkillSwitches;
    type Output = Ack;

    async fn run(api: &Api, name: String, b: SkillSwitches) -> Result<Ack, ApiError> {
        if b.enabled.is_none() && b.pinned.is_none() {
            return Err(ApiError::bad_request("send `enabled` and/or `pinned`"));
        }
        api.skills()?.set_state(&name, b.enabled, b.pinned)?;
        Ok(Ack::OK)
    }
}

pub struct SkillHistory;

impl Operation for SkillHistory {
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/api/skills/{name}/history";
    const SUMMARY: &'static str = "Every version of a skill";
    type Path = String;
    type Input = NoInput;
    type Output = Vec<SkillVersionRow>;

    async fn run(api: &Api, name: String, _: NoInput) -> Result<Vec<SkillVersionRow>, ApiError> {
        Ok(api.evolution()?.history(&name)?)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RollbackInput {
    pub version: u64,
}

pub struct RollbackSkill;

impl Operation for RollbackSkill {
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/api/skills/{name}/rollback";
    const SUMMARY: &'static str = "Restore a version of a skill";
    type Path = String;
    type Input = RollbackInput;
    type Output = SkillVersionRow;

    async fn run(api: &Api, name: String, b: RollbackInput) -> Result<SkillVersionRow, ApiError> {
        Ok(api.evolution()?.rollback(&name, b.version)?)
    }
}

/// The library as a whole: where user skills live, the bundled bank, and files that could
/// not be used.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LibraryInfo {
    pub user_dir: Option<String>,
    pub include_bundled: bool,
    /// Skills in the bundled bank.
    pub bundled: u64,
    /// Skills in effect (yours over the bank).
    pub skills: u64,
    /// SKILL.md files with problems; errors mean the file was skipped.
    pub problems: Vec<Finding>,
}

pub struct GetLibrary;

impl Operation for GetLibrary {
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/api/library";
    const SUMMARY: &'static str =
        "The skills folder, the bundled bank and SKILL.md files with problems";
    type Path = ();
    type Input = NoInput;
    type Output = LibraryInfo;

    async fn run(api: &Api, _: (), _: NoInput) -> Result<LibraryInfo, ApiError> {
        let svc = api.skills()?;
        let lib = svc.library();
        Ok(LibraryInfo {
            user_dir: svc.user_dir().map(|d| d.display().to_string()),
            include_bundled: api.config().skills.include_bundled,
            bundled: metaclaw_skills::bundled_files().len() as u64,
            skills: lib.len() as u64,
            problems: lib.problems().to_vec(),
        })
    }
}

/// What installing the bundled bank did.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Installed {
    /// Skills copied (existing ones are kept as they are).
    pub installed: Vec<String>,
    /// Skills in the bundled bank.
    pub bundled: u64,
    pub dir: String,
}

pub struct InstallBundled;

impl Operation for InstallBundled {
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/api/library/install-bundled";
    const SUMMARY: &'static str = "Copy the bundled skill bank into the user's skills folder";
    type Path = ();
    type Input = NoInput;
    type Output = Installed;

    async fn run(api: &Api, _: (), _: NoInput) -> Result<Installed, ApiError> {
        let (dir, installed) = api.evolution()?.install_bundled()?;
        Ok(Installed {
            installed,
            bundled: metaclaw_skills::bundled_files().len() as u64,
            dir: dir.display().to_string(),
        })
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RetrievalInput {
    pub query: String,
}

pub struct TryRetrieval;

impl Operation for TryRetrieval {
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/api/retrieval";
    const SUMMARY: &'static str = "Try retrieval: every candidate with its score and reason";
    type Path = ();
    type Input = RetrievalInput;
    type Output = Retrieval;

    async fn run(api: &Api, _: (), b: RetrievalInput) -> Result<Retrieval, ApiError> {
        if b.query.trim().is_empty() {
            return Err(ApiError::bad_request("`query` must not be empty"));
        }
        Ok(api.skills()?.retrieve(&b.query).await)
    }
}
