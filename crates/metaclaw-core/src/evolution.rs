//! Skill evolution as the app runs it: when to distil, the review inbox (approve with
//! edits, reject, undo), and versioned skills with rollback. Nothing an evolver proposes is
//! injected before the user approves it, unless `skills.auto_approve` says otherwise.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arc_swap::ArcSwapOption;

use metaclaw_config::Config;
use metaclaw_domain::{Clock, DEFAULT_AGENT, Event, TurnType};
use metaclaw_evolve::{Evolver, TurnView};
use metaclaw_skills::{Level, Skill, SkillSource};
use metaclaw_store::{
    Author, EvolutionRunStatus, EvolutionTrigger, NewEvolutionRun, NewProposal, NewSkillVersion,
    ProposalKind, ProposalRow, ProposalStatus, SkillVersionRow, Store, VersionAction,
};
use serde::Serialize;
use serde_json::json;
use tokio::sync::broadcast;

use crate::error::SkillError;
use crate::skills::SkillService;

/// What one distillation did.
#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct RunReport {
    pub session_id: String,
    pub status: EvolutionRunStatus,
    pub proposals: Vec<i64>,
    pub dropped: Vec<metaclaw_evolve::Dropped>,
    pub signals: Vec<metaclaw_evolve::Signal>,
    pub error: Option<String>,
}

/// Transcript size sent to the evolver.
const TRANSCRIPT_BUDGET: usize = 24_000;
/// A session without any signal is only worth a look once it has this many main turns.
const MIN_TURNS_WITHOUT_SIGNALS: usize = 3;

pub struct Evolution {
    store: Arc<Store>,
    skills: Arc<SkillService>,
    /// Rebuilt when the settings change ([`Evolution::reconfigure`]); a run keeps the one it
    /// started with.
    evolver: ArcSwapOption<Evolver>,
    auto_approve: std::sync::atomic::AtomicBool,
    events: broadcast::Sender<Event>,
    /// Sessions being distilled now, so triggers arriving together run once.
    running: Mutex<HashSet<String>>,
    clock: Arc<dyn Clock>,
}

/// The most recent turns of a session a run reads: the evolver learns from what just
/// happened, and a session of thousands of turns must not be loaded whole.
const DISTIL_TURNS: usize = 60;

/// Evolver endpoint: `rl.evolver_*` when its base is set, otherwise the user's own LLM.
/// (Upstream paired the default `gpt-5.2` with any base URL and failed silently, #48.)
fn evolver_for(config: &Config) -> Option<Evolver> {
    let rl = &config.rl;
    let (base, key, model) = if rl.evolver_api_base.is_empty() {
        let model = if config.llm.model_id.is_empty() {
            &rl.evolver_model
        } else {
            &config.llm.model_id
        };
        (
            &config.llm.api_base,
            if rl.evolver_api_key.is_empty() {
                &config.llm.api_key
            } else {
                &rl.evolver_api_key
            },
            model,
        )
    } else {
        let model = if rl.evolver_model.is_empty() {
            &config.llm.model_id
        } else {
            &rl.evolver_model
        };
        (&rl.evolver_api_base, &rl.evolver_api_key, model)
    };
    if base.is_empty() || model.is_empty() {
        return None;
    }
    Evolver::new(base, key, model, Duration::from_secs(180)).ok()
}

impl Evolution {
    pub fn new(
        config: &Config,
        store: Arc<Store>,
        skills: Arc<SkillService>,
        events: broadcast::Sender<Event>,
        clock: Arc<dyn Clock>,
    ) -> Arc<Evolution> {
        Arc::new(Evolution {
            store,
            skills,
            evolver: ArcSwapOption::from(evolver_for(config).map(Arc::new)),
            auto_approve: config.skills.auto_approve.into(),
            events,
            running: Mutex::default(),
            clock,
        })
    }

    pub(crate) fn store(&self) -> &Arc<Store> {
        &self.store
    }

    pub(crate) fn skills(&self) -> &Arc<SkillService> {
        &self.skills
    }

    pub(crate) fn evolver(&self) -> Option<Arc<Evolver>> {
        self.evolver.load_full()
    }

    pub(crate) fn events(&self) -> &broadcast::Sender<Event> {
        &self.events
    }

    pub fn evolver_model(&self) -> Option<String> {
        self.evolver.load().as_ref().map(|e| e.model.clone())
    }

    fn is_running(&self, session_id: &str) -> bool {
        self.running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(session_id)
    }

    /// Use the evolver endpoint the new settings name (`rl.evolver_*`, else `llm.*`).
    pub fn reconfigure(&self, config: &Config) {
        self.evolver.store(evolver_for(config).map(Arc::new));
        self.auto_approve.store(
            config.skills.auto_approve,
            std::sync::atomic::Ordering::Relaxed,
        );
    }

    fn record_run(
        &self,
        session: &str,
        trigger: EvolutionTrigger,
        status: EvolutionRunStatus,
        error: Option<String>,
        proposals: usize,
        started: chrono::DateTime<chrono::Utc>,
    ) {
        let run = NewEvolutionRun {
            session_id: Some(session.to_owned()),
            trigger,
            status,
            error: error.clone(),
            proposals: proposals as u64,
            model: self.evolver_model().unwrap_or_default(),
            started_at: started,
            finished_at: self.clock.now(),
        };
        if let Err(e) = self.store.record_evolution_run(run) {
            tracing::warn!("could not record the evolution run: {e}");
        }
        if let Some(error) = error.filter(|_| status == EvolutionRunStatus::Failed) {
            tracing::warn!(%session, "skill evolution failed: {error}");
            let _ = self.events.send(Event::EvolutionFailed {
                session_id: Some(session.to_owned()),
                error,
            });
        }
    }

    /// Record a finished run from its report.
    fn close(
        &self,
        report: RunReport,
        trigger: EvolutionTrigger,
        started: chrono::DateTime<chrono::Utc>,
    ) -> RunReport {
        self.record_run(
            &report.session_id,
            trigger,
            report.status,
            report.error.clone(),
            report.proposals.len(),
            started,
        );
        report
    }

    /// Distil a session into proposals. Failures are recorded and returned in the report,
    /// never swallowed.
    pub async fn distil(
        &self,
        session_id: &str,
        trigger: EvolutionTrigger,
    ) -> Result<RunReport, SkillError> {
        let started = self.clock.now();
        if !self
            .running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(session_id.to_owned())
        {
            return Ok(RunReport {
                session_id: session_id.to_owned(),
                status: EvolutionRunStatus::Skipped,
                proposals: vec![],
                dropped: vec![],
                signals: vec![],
                error: Some("already running for this session".into()),
            });
        }
        let result = self.distil_inner(session_id, trigger, started).await;
        self.running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(session_id);
        result
    }

    async fn distil_inner(
        &self,
        session_id: &str,
        trigger: EvolutionTrigger,
        started: chrono::DateTime<chrono::Utc>,
    ) -> Result<RunReport, SkillError> {
        // Reading 60 turns with their blobs takes milliseconds of disk and CPU: never on the
        // async workers that serve requests.
        let store = self.store.clone();
        let session = session_id.to_owned();
        let (rows, agent, feedback) = tokio::task::spawn_blocking(move || {
            let rows = store.last_turns_in_session(&session, DISTIL_TURNS)?;
            let agent = store
                .session(&session)?
                .map_or_else(|| DEFAULT_AGENT.to_owned(), |s| s.agent);
            let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
            let feedback = store.feedback_on_turns(&ids)?;
            Ok::<_, metaclaw_store::StoreError>((rows, agent, feedback))
        })
        .await
        .map_err(|e| SkillError::Task(format!("reading the session failed: {e}")))??;
        if rows.is_empty() {
            return Err(SkillError::EmptySession(session_id.to_owned()));
        }
        let turns: Vec<TurnView> = rows
            .into_iter()
            .map(|r| TurnView {
                feedback: feedback.get(&r.id).map(|f| (f.rating, f.note.clone())),
                turn_id: r.id,
                seq: r.seq,
                turn_type: r.turn_type,
                api: r.api,
                request: r.request,
                response: r.response,
                status: r.status,
                reward: None,
            })
            .collect();
        let signals = metaclaw_evolve::signals(&turns);
        let main = turns
            .iter()
            .filter(|t| t.turn_type == TurnType::Main)
            .count();
        let mut report = RunReport {
            session_id: session_id.to_owned(),
            status: EvolutionRunStatus::Ok,
            proposals: vec![],
            dropped: vec![],
            signals: signals.clone(),
            error: None,
        };
        if !self.skills.agent_settings(&agent).learning {
            report.status = EvolutionRunStatus::Skipped;
            report.error = Some(format!(
                "learning is off for the agent `{agent}` (agents.{agent}.learning)"
            ));
            return Ok(self.close(report, trigger, started));
        }
        if signals.is_empty() && main < MIN_TURNS_WITHOUT_SIGNALS {
            report.status = EvolutionRunStatus::Skipped;
            report.error = Some(format!(
                "nothing to learn: no signals and {main} main turns"
            ));
            return Ok(self.close(report, trigger, started));
        }
        let Some(evolver) = self.evolver.load_full() else {
            report.status = EvolutionRunStatus::Failed;
            report.error = Some("no evolver endpoint: set llm.api_base and llm.model_id, or rl.evolver_api_base and rl.evolver_model".into());
            return Ok(self.close(report, trigger, started));
        };
        // Deduplicated against what this agent sees; the store files the proposal under
        // the session's agent.
        let library = self.skills.library_for(&agent);
        let existing: Vec<(String, String)> = library
            .skills()
            .iter()
            .map(|s| (s.name.clone(), s.description.clone()))
            .collect();
        let rejected = self.store.rejected_names()?;
        let rejected_names: HashSet<String> = rejected.iter().cloned().collect();
        let transcript = metaclaw_evolve::render(&turns, TRANSCRIPT_BUDGET);
        let messages = metaclaw_evolve::messages(&transcript, &signals, &existing, &rejected);
        let raw = match evolver.propose(messages).await {
            Ok(raw) => raw,
            Err(e) => {
                report.status = EvolutionRunStatus::Failed;
                report.error = Some(e.to_string());
                return Ok(self.close(report, trigger, started));
            }
        };
        let mut fingerprints = self.store.rejected_fingerprints()?;
        // A proposal already waiting in the inbox is not proposed twice.
        fingerprints.extend(
            self.store
                .proposals(Some(ProposalStatus::Pending))?
                .into_iter()
                .map(|p| p.fingerprint),
        );
        let (candidates, dropped) = metaclaw_evolve::prepare(
            &raw,
            &library,
            &fingerprints,
            &rejected_names,
            Some(session_id),
        );
        report.dropped = dropped;
        let session_turns: HashSet<&str> = turns.iter().map(|t| t.turn_id.as_str()).collect();
        for c in candidates {
            let mut from: Vec<String> = c
                .turns
                .iter()
                .filter(|t| session_turns.contains(t.as_str()))
                .cloned()
                .collect();
            if from.is_empty() {
                from = signals.iter().map(|s| s.turn_id.clone()).collect();
                from.dedup();
            }
            let related: Vec<&metaclaw_evolve::Signal> = signals
                .iter()
                .filter(|s| from.contains(&s.turn_id))
                .collect();
            let id = self.store.insert_proposal(NewProposal {
                kind: if c.base_content.is_some() {
                    ProposalKind::Update
                } else {
                    ProposalKind::New
                },
                skill_name: c.name.clone(),
                content: c.content,
                base_content: c.base_content,
                diff: c.diff,
                reason: c.reason,
                session_id: Some(session_id.to_owned()),
                turn_ids: from,
                signals: json!(related),
                evolver_model: evolver.model.clone(),
                fingerprint: c.fingerprint,
            })?;
            report.proposals.push(id);
        }
        let report = self.close(report, trigger, started);
        if !report.proposals.is_empty() {
            let _ = self.events.send(Event::ProposalsCreated {
                session_id: Some(session_id.to_owned()),
                proposal_ids: report.proposals.clone(),
            });
            if self.auto_approve.load(std::sync::atomic::Ordering::Relaxed) {
                for id in &report.proposals {
                    if let Err(e) = self.approve(*id, None) {
                        tracing::warn!(proposal = id, "auto-approve failed: {e}");
                    }
                }
            }
        }
        Ok(report)
    }

    pub fn proposals(
        &self,
        status: Option<ProposalStatus>,
    ) -> Result<Vec<ProposalRow>, SkillError> {
        Ok(self.store.proposals(status)?)
    }

    /// Newest first, `limit` of them after the first `offset`.
    pub fn proposals_page(
        &self,
        status: Option<ProposalStatus>,
        agent: Option<&str>,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<ProposalRow>, SkillError> {
        Ok(self
            .store
            .agent_proposals_page(status, agent, limit, offset)?)
    }

    fn proposal(&self, id: i64) -> Result<ProposalRow, SkillError> {
        self.store.proposal(id)?.ok_or(SkillError::NoProposal(id))
    }

    fn skills_dir(&self) -> Result<PathBuf, SkillError> {
        self.skills.user_dir().ok_or(SkillError::NoFolder)
    }

    /// The file a skill lives in, in an agent's own folder or the shared one; names are
    /// checked so they can never leave the folder.
    fn skill_file(&self, name: &str, agent: Option<&str>) -> Result<PathBuf, SkillError> {
        if !metaclaw_skills::valid_name(name) {
            return Err(SkillError::InvalidName(name.to_owned()));
        }
        let dir = match agent {
            Some(a) => self
                .skills
                .agent_dir(a)
                .ok_or_else(|| SkillError::NoAgent(a.to_owned()))?,
            None => self.skills_dir()?,
        };
        Ok(dir.join(name).join("SKILL.md"))
    }

    /// Write (or, for empty content, remove) a skill's file in the shared folder, then
    /// record the version.
    fn apply(
        &self,
        name: &str,
        content: &str,
        author: Author,
        action: VersionAction,
        proposal_id: Option<i64>,
    ) -> Result<SkillVersionRow, SkillError> {
        self.apply_in(None, name, content, author, action, proposal_id)
    }

    /// [`Evolution::apply`] in `agent`'s own folder (`None`: the shared one).
    fn apply_in(
        &self,
        agent: Option<&str>,
        name: &str,
        content: &str,
        author: Author,
        action: VersionAction,
        proposal_id: Option<i64>,
    ) -> Result<SkillVersionRow, SkillError> {
        let path = self.skill_file(name, agent)?;
        // Keep a skill's earlier text restorable: its first recorded version is what was there.
        // (empty when the skill did not exist, so rolling back to it removes the skill).
        if self.store.skill_versions(name)?.is_empty() {
            let before = self.current_text(name, agent).unwrap_or_default();
            self.store.record_skill_version(NewSkillVersion {
                skill_name: name.to_owned(),
                content: before,
                author: Author::User,
                action: VersionAction::Create,
                proposal_id: None,
            })?;
        }
        if content.is_empty() {
            remove_skill(&path)?;
        } else {
            write_atomically(&path, content)?;
        }
        let row = self.store.record_skill_version(NewSkillVersion {
            skill_name: name.to_owned(),
            content: content.to_owned(),
            author,
            action,
            proposal_id,
        })?;
        self.skills.reload();
        self.skills.set_generation(row.generation);
        let _ = self.events.send(Event::SkillChanged {
            name: name.to_owned(),
            version: row.version,
            generation: row.generation,
        });
        Ok(row)
    }

    fn current_text(&self, name: &str, agent: Option<&str>) -> Option<String> {
        let lib = match agent {
            Some(a) => self.skills.library_for(a),
            None => self.skills.library(),
        };
        let skill = lib.get(name)?;
        Some(skill.file_text())
    }

    /// Check a SKILL.md before it goes live: it must parse, keep its name and lint clean.
    fn validate(name: &str, content: &str) -> Result<(), SkillError> {
        let skill = Skill::parse(
            content,
            PathBuf::from(format!("{name}/SKILL.md")),
            SkillSource::User,
        )
        .map_err(|e| SkillError::Invalid(format!("the edited skill is invalid: {e}")))?;
        if skill.name != name {
            return Err(SkillError::Invalid(format!(
                "the skill's name must stay `{name}` (it is `{}`)",
                skill.name
            )));
        }
        if let Some(err) = metaclaw_skills::check_skill(&skill, name)
            .into_iter()
            .find(|f| f.level == Level::Error)
        {
            return Err(SkillError::Invalid(err.message));
        }
        Ok(())
    }

    /// Approve a pending proposal, optionally with the user's edited SKILL.md.
    pub fn approve(&self, id: i64, edited: Option<String>) -> Result<SkillVersionRow, SkillError> {
        let p = self.proposal(id)?;
        if p.status != ProposalStatus::Pending {
            return Err(SkillError::WrongState {
                id,
                status: p.status.as_str().to_owned(),
                expected: "pending",
            });
        }
        let (content, author, action) = match edited {
            Some(text) => (text, Author::User, VersionAction::Edit),
            None => (p.content.clone(), Author::Evolver, VersionAction::Approve),
        };
        Self::validate(&p.skill_name, &content)?;
        // An agent's proposal goes to that agent's own folder until it is shared.
        let row = self.apply_in(
            p.agent.as_deref(),
            &p.skill_name,
            &content,
            author,
            action,
            Some(id),
        )?;
        self.store
            .set_proposal_status(id, ProposalStatus::Approved, None)?;
        // A merge: the skill it absorbed is switched off (not deleted, so undo is easy).
        if let Some(absorbed) = p
            .signals
            .get(crate::revision::MERGE_ABSORBS)
            .and_then(serde_json::Value::as_str)
            && let Err(e) = self.skills.set_state(absorbed, Some(false), None)
        {
            tracing::warn!(
                proposal = id,
                "could not disable the merged skill {absorbed}: {e}"
            );
        }
        Ok(row)
    }

    /// Reject a proposal; the reason is kept and the same proposal is not made again.
    pub fn reject(&self, id: i64, reason: Option<String>) -> Result<(), SkillError> {
        let p = self.proposal(id)?;
        if p.status != ProposalStatus::Pending {
            return Err(SkillError::WrongState {
                id,
                status: p.status.as_str().to_owned(),
                expected: "pending",
            });
        }
        Ok(self
            .store
            .set_proposal_status(id, ProposalStatus::Rejected, reason)?)
    }

    /// Take back an approval: the skill returns to what it was before (or goes away if new).
    pub fn undo(&self, id: i64) -> Result<SkillVersionRow, SkillError> {
        let p = self.proposal(id)?;
        if p.status != ProposalStatus::Approved {
            return Err(SkillError::WrongState {
                id,
                status: p.status.as_str().to_owned(),
                expected: "approved",
            });
        }
        let before = p.base_content.clone().unwrap_or_default();
        let row = self.apply_in(
            p.agent.as_deref(),
            &p.skill_name,
            &before,
            Author::User,
            VersionAction::Undo,
            Some(id),
        )?;
        self.store
            .set_proposal_status(id, ProposalStatus::Undone, None)?;
        Ok(row)
    }

    /// "Share with all agents": a pending proposal of an agent will be written to the
    /// shared folder when approved; an approved one moves there now.
    pub fn share(&self, id: i64) -> Result<ProposalRow, SkillError> {
        let p = self.proposal(id)?;
        let Some(agent) = p.agent.as_deref() else {
            return Ok(p);
        };
        if p.status == ProposalStatus::Approved {
            self.share_skill(agent, &p.skill_name)?;
        }
        self.store.set_proposal_agent(id, None)?;
        self.proposal(id)
    }

    /// Move a skill from `agent`'s own folder to the shared one, for every agent (a shared
    /// skill of the same name is replaced; its earlier text stays in the history).
    pub fn share_skill(&self, agent: &str, name: &str) -> Result<SkillVersionRow, SkillError> {
        let own = self.skill_file(name, Some(agent))?;
        let content = match std::fs::read_to_string(&own) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(SkillError::NotFound(format!("{agent}/{name}")));
            }
            Err(source) => return Err(SkillError::Io { path: own, source }),
        };
        let row = self.apply_in(
            None,
            name,
            &content,
            Author::User,
            VersionAction::Edit,
            None,
        )?;
        remove_skill(&own)?;
        self.skills.reload();
        Ok(row)
    }

    pub fn history(&self, name: &str) -> Result<Vec<SkillVersionRow>, SkillError> {
        Ok(self.store.skill_versions(name)?)
    }

    /// Restore any recorded version of a skill (a version with no content removes it).
    pub fn rollback(&self, name: &str, version: u64) -> Result<SkillVersionRow, SkillError> {
        let v = self
            .store
            .skill_version(name, version)?
            .ok_or_else(|| SkillError::NoVersion {
                name: name.to_owned(),
                version,
            })?;
        self.apply(
            name,
            &v.content,
            Author::User,
            VersionAction::Rollback,
            None,
        )
    }

    /// Create a user skill from SKILL.md text (the dashboard's "new skill").
    pub fn create_skill(&self, content: &str) -> Result<SkillVersionRow, SkillError> {
        let skill = Skill::parse(content, PathBuf::from("SKILL.md"), SkillSource::User)
            .map_err(|e| SkillError::Invalid(format!("the skill is invalid: {e}")))?;
        if self
            .skills
            .library()
            .get(&skill.name)
            .is_some_and(|s| s.source == SkillSource::User)
        {
            return Err(SkillError::Exists(skill.name));
        }
        Self::validate(&skill.name, content)?;
        self.apply(
            &skill.name,
            content,
            Author::User,
            VersionAction::Create,
            None,
        )
    }

    /// Replace a skill's SKILL.md (a bundled skill gets a user copy, which then wins).
    pub fn edit_skill(&self, name: &str, content: &str) -> Result<SkillVersionRow, SkillError> {
        if self.skills.library().get(name).is_none() {
            return Err(SkillError::NotFound(name.to_owned()));
        }
        Self::validate(name, content)?;
        self.apply(name, content, Author::User, VersionAction::Edit, None)
    }

    /// Remove the user's copy of a skill (a bundled skill of the same name shows again).
    pub fn delete_skill(&self, name: &str) -> Result<SkillVersionRow, SkillError> {
        let lib = self.skills.library();
        match lib.get(name) {
            Some(s) if s.source == SkillSource::User => {
                self.apply(name, "", Author::User, VersionAction::Delete, None)
            }
            Some(_) => Err(SkillError::Bundled(name.to_owned())),
            None => Err(SkillError::NotFound(name.to_owned())),
        }
    }

    /// Copy the bundled bank into the user's skills folder (skills already there are kept)
    /// and reload the library. Returns the folder and the names installed.
    pub fn install_bundled(&self) -> Result<(PathBuf, Vec<String>), SkillError> {
        let dir = self.skills_dir()?;
        let installed =
            metaclaw_skills::install_bundled(&dir).map_err(|source| SkillError::Io {
                path: dir.clone(),
                source,
            })?;
        self.skills.reload();
        Ok((dir, installed))
    }

    /// Thumbs up (+1) or down (-1) on a turn, with an optional note.
    pub fn feedback(
        &self,
        turn_id: &str,
        rating: i8,
        note: Option<String>,
    ) -> Result<(), SkillError> {
        Ok(self.store.set_feedback(turn_id, rating, note)?)
    }
}

fn write_atomically(path: &Path, content: &str) -> Result<(), SkillError> {
    let io = |source| SkillError::Io {
        path: path.to_owned(),
        source,
    };
    let dir = path
        .parent()
        .ok_or_else(|| SkillError::InvalidName(path.display().to_string()))?;
    std::fs::create_dir_all(dir).map_err(io)?;
    let tmp = dir.join(".SKILL.md.tmp");
    std::fs::write(&tmp, content).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)
}

fn remove_skill(path: &Path) -> Result<(), SkillError> {
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(source) => {
            return Err(SkillError::Io {
                path: path.to_owned(),
                source,
            });
        }
    }
    if let Some(dir) = path.parent() {
        let _ = std::fs::remove_dir(dir);
    }
    Ok(())
}

/// Runs distillation when sessions end and every `every_n` main turns; never on the request path.
pub(crate) async fn triggers(
    evolution: Arc<Evolution>,
    mut rx: broadcast::Receiver<Event>,
    live: Arc<crate::live::LiveConfig>,
) {
    let mut main_turns: HashMap<String, u32> = HashMap::new();
    loop {
        let event = match rx.recv().await {
            Ok(e) => e,
            Err(broadcast::error::RecvError::Lagged(n)) => {
                tracing::warn!(missed = n, "evolution trigger lagged");
                continue;
            }
            Err(broadcast::error::RecvError::Closed) => return,
        };
        let (session, trigger) = match event {
            Event::SessionEnded { session_id, .. } => {
                main_turns.remove(&session_id);
                (session_id, EvolutionTrigger::SessionEnd)
            }
            Event::TurnCompleted {
                session_id,
                turn_type: TurnType::Main,
                ..
            } if live.get().skills.evolution_every_n_turns > 0 => {
                let every_n = live.get().skills.evolution_every_n_turns;
                let n = main_turns.entry(session_id.clone()).or_default();
                *n += 1;
                if !n.is_multiple_of(every_n) {
                    continue;
                }
                (session_id, EvolutionTrigger::EveryNTurns)
            }
            _ => continue,
        };
        let config = live.get();
        if !config.skills.enabled || !config.skills.auto_evolve || config.learning_paused {
            continue;
        }
        // A run for this session is under way: it will see these turns or the next trigger
        // will (a burst must not queue a run per turn).
        if evolution.is_running(&session) {
            continue;
        }
        let evo = evolution.clone();
        tokio::spawn(async move {
            // Recording is asynchronous: let the session's last turn reach the database.
            tokio::time::sleep(Duration::from_millis(200)).await;
            let store = evo.store.clone();
            // Waits for the writer: never on the async workers that serve requests.
            let _ = tokio::task::spawn_blocking(move || store.flush()).await;
            // Evaluations are never distilled: they measure the skills, not teach them.
            if evo.store.is_eval_session(&session).unwrap_or(false) {
                return;
            }
            if let Err(e) = evo.distil(&session, trigger).await {
                tracing::warn!(%session, "skill evolution could not run: {e}");
            }
        });
    }
}
