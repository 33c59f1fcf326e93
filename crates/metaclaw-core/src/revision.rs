//! Proposals the user asks for from the Skill health view: a revision of a skill the user
//! keeps correcting the agent after, and the merge of two near-duplicates. Both end as normal
//! pending update proposals with a diff in the review inbox.

use std::collections::{BTreeMap, HashSet};

use metaclaw_domain::Event;
use metaclaw_evolve::{Episode, RawProposal, TurnView};
use metaclaw_store::{NewProposal, ProposalKind, ProposalStatus};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::SkillError;
use crate::evidence;
use crate::evolution::Evolution;

/// Corrected injections read for a revision, newest first…
const CORRECTED_TURNS: usize = 30;
/// …from at most this many conversations…
const EPISODES: usize = 3;
/// …each shown as the corrected turn with this many turns before and after it.
const CONTEXT_TURNS: usize = 2;
const EPISODE_BUDGET: usize = 8_000;

/// The key a merge proposal's signals carry: the skill it absorbs, disabled on approval.
pub(crate) const MERGE_ABSORBS: &str = "merge_absorbs";

/// A proposal made on request.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RequestedProposal {
    pub proposal_id: i64,
    pub skill_name: String,
    /// Conversations the evolver was shown (revisions only).
    pub sessions: Vec<String>,
}

impl Evolution {
    /// Ask the evolver for a revised `name`, from the conversations where its injection was
    /// followed by a correction (redacted), and file it as a pending update proposal.
    /// `min_turns` is `skills.evidence_min_turns`, for the evidence summary.
    pub async fn propose_revision(
        &self,
        name: &str,
        min_turns: u64,
    ) -> Result<RequestedProposal, SkillError> {
        let library = self.skills().library();
        let skill = library
            .get(name)
            .cloned()
            .ok_or_else(|| SkillError::NotFound(name.to_owned()))?;
        self.no_pending_proposal(name)?;
        let store = self.store();
        let corrected = store.corrected_turns(name, CORRECTED_TURNS)?;
        let mut by_session: BTreeMap<String, String> = BTreeMap::new();
        let mut order = Vec::new();
        for (session, turn) in corrected {
            if !by_session.contains_key(&session) && order.len() < EPISODES {
                order.push(session.clone());
                by_session.insert(session, turn);
            }
        }
        if order.is_empty() {
            return Err(SkillError::NothingToRevise(name.to_owned()));
        }
        let evolver = self.evolver().ok_or(SkillError::NoEvolver)?;
        let mut episodes = Vec::new();
        for session in &order {
            let turn = &by_session[session];
            let rows = store.turns_around(turn, CONTEXT_TURNS, CONTEXT_TURNS)?;
            let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
            let feedback = store.feedback_on_turns(&ids)?;
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
            episodes.push(Episode {
                session_id: session.clone(),
                transcript: metaclaw_evolve::render(&turns, EPISODE_BUDGET),
                signals: metaclaw_evolve::signals(&turns),
            });
        }
        let counts = store.skill_evidence()?;
        let e = evidence::assess(counts.get(name), store.outcome_totals()?, min_turns);
        let summary = format!(
            "Injected into {} turns: {} had a bad outcome, {} were corrected by the user on the \
             next turn, {} got a thumbs down, {} had tool errors.",
            e.with.turns, e.with.bad, e.with.corrected, e.with.thumbs_down, e.with.tool_error
        );
        let messages =
            metaclaw_evolve::revision_messages(name, &skill.file_text(), &summary, &episodes);
        let raw = evolver
            .propose(messages)
            .await
            .map_err(|e| SkillError::Evolver(e.to_string()))?;
        let signals: Vec<Value> = episodes
            .iter()
            .flat_map(|e| e.signals.iter())
            .map(|s| json!(s))
            .chain([json!({"kind": "revision_request", "evidence": summary})])
            .collect();
        let id = self.file_requested(name, raw, Value::Array(signals), &evolver.model)?;
        Ok(RequestedProposal {
            proposal_id: id,
            skill_name: name.to_owned(),
            sessions: order,
        })
    }

    /// Ask the evolver for one skill named `keep` that also covers `absorb`, filed as a
    /// pending update of `keep`; approving it also disables `absorb`.
    pub async fn propose_merge(
        &self,
        keep: &str,
        absorb: &str,
    ) -> Result<RequestedProposal, SkillError> {
        if keep == absorb {
            return Err(SkillError::Invalid(
                "a skill cannot be merged into itself".into(),
            ));
        }
        let library = self.skills().library();
        let found = |n: &str| {
            library
                .get(n)
                .cloned()
                .ok_or_else(|| SkillError::NotFound(n.to_owned()))
        };
        let (a, b) = (found(keep)?, found(absorb)?);
        self.no_pending_proposal(keep)?;
        let evolver = self.evolver().ok_or(SkillError::NoEvolver)?;
        let messages =
            metaclaw_evolve::merge_messages(keep, &a.file_text(), absorb, &b.file_text());
        let raw = evolver
            .propose(messages)
            .await
            .map_err(|e| SkillError::Evolver(e.to_string()))?;
        let id =
            self.file_requested(keep, raw, json!({ MERGE_ABSORBS: absorb }), &evolver.model)?;
        Ok(RequestedProposal {
            proposal_id: id,
            skill_name: keep.to_owned(),
            sessions: Vec::new(),
        })
    }

    /// One pending proposal per skill at a time: a second would fight the first in review.
    fn no_pending_proposal(&self, name: &str) -> Result<(), SkillError> {
        match self
            .store()
            .proposals(Some(ProposalStatus::Pending))?
            .into_iter()
            .find(|p| p.skill_name == name)
        {
            Some(p) => Err(SkillError::PendingProposal {
                name: name.to_owned(),
                id: p.id,
            }),
            None => Ok(()),
        }
    }

    /// Turns the evolver's answer into a pending update of `name`: the proposal named
    /// `name` (or the first one, which was asked to be), checked and diffed like any other.
    fn file_requested(
        &self,
        name: &str,
        raw: Vec<RawProposal>,
        signals: Value,
        model: &str,
    ) -> Result<i64, SkillError> {
        let Some(mut proposal) = raw
            .iter()
            .find(|p| metaclaw_evolve::slug(&p.name) == name)
            .or_else(|| raw.first())
            .cloned()
        else {
            return Err(SkillError::Evolver(
                "the evolver proposed nothing".to_owned(),
            ));
        };
        proposal.name = name.to_owned();
        let store = self.store();
        // Asked for by the user: past rejections do not block it.
        let library = self.skills().library();
        let none = HashSet::new();
        let (candidates, dropped) =
            metaclaw_evolve::prepare(&[proposal], &library, &none, &none, None);
        let Some(c) = candidates.into_iter().next() else {
            let why = dropped
                .first()
                .map_or("no usable proposal", |d| d.reason.as_str())
                .to_owned();
            return Err(SkillError::Evolver(format!(
                "the evolver's proposal was not kept: {why}"
            )));
        };
        let id = store.insert_proposal(NewProposal {
            kind: ProposalKind::Update,
            skill_name: c.name.clone(),
            content: c.content,
            base_content: c.base_content,
            diff: c.diff,
            reason: c.reason,
            session_id: None,
            turn_ids: c.turns,
            signals,
            evolver_model: model.to_owned(),
            fingerprint: c.fingerprint,
        })?;
        let _ = self.events().send(Event::ProposalsCreated {
            session_id: None,
            proposal_ids: vec![id],
        });
        Ok(id)
    }
}
