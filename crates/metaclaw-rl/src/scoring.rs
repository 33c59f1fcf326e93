//! Rewards for samples: the judge scores a main turn once the next turn of its session
//! arrives or the session ends; the user's thumbs and the implicit signals of live use
//! (correction, retry, tool errors) join it by the rule in [`crate::reward`], also when
//! they arrive later, until the sample is trained.

use std::sync::Arc;

use metaclaw_store::{PrmVote, RewardSource, SampleRow, SampleState, Store};
use serde_json::Value;

use crate::error::RlError;
use crate::judge::Judge;
use crate::reward::{self, Weights};

pub struct Scorer {
    store: Arc<Store>,
    judge: Option<Judge>,
}

impl Scorer {
    pub fn new(store: Arc<Store>, judge: Option<Judge>) -> Self {
        Self { store, judge }
    }

    pub fn has_judge(&self) -> bool {
        self.judge.is_some()
    }

    /// Scores turns that are due: a later main turn of their session exists, or the session
    /// ended. Polled, so it also catches turns whose samples were stored after the event.
    /// Without a judge there is nothing to do here: ratings and implicit signals arrive
    /// through [`Scorer::refresh`].
    pub async fn score_due(&self, weights: &Weights) -> Result<usize, RlError> {
        if self.judge.is_none() {
            return Ok(0);
        }
        let mut scored = 0;
        for turn in self.store.turns_due_for_judging()? {
            if self.score_turn(&turn, weights).await? {
                scored += 1;
            }
        }
        Ok(scored)
    }

    /// Scores every sample of a turn; returns whether a reward was set.
    pub async fn score_turn(&self, turn_id: &str, weights: &Weights) -> Result<bool, RlError> {
        let samples: Vec<SampleRow> = self
            .store
            .samples_for_turn(turn_id)?
            .into_iter()
            .filter(|s| s.state == SampleState::Pending)
            .collect();
        if samples.is_empty() {
            return Ok(false);
        }
        let Some(judge) = &self.judge else {
            // No judge: the served response gets what the user said, if anything.
            let signals = self.store.turn_signals(turn_id)?;
            return self.apply_served(turn_id, &signals, weights);
        };
        let instruction = self
            .store
            .turn(turn_id)?
            .map(|t| last_user_text(&t.request))
            .unwrap_or_default();
        let mut any = false;
        for s in samples {
            let verdict = judge.score(&instruction, &s.response_text).await;
            if s.idx == 0 {
                let now = self.store.now();
                let votes: Vec<PrmVote> = verdict
                    .votes
                    .iter()
                    .enumerate()
                    .map(|(i, v)| PrmVote {
                        vote: u32::try_from(i).unwrap_or(u32::MAX),
                        score: v.score.unwrap_or(0),
                        rationale: v.rationale.clone(),
                        created_at: now,
                    })
                    .collect();
                self.store.record_prm_votes(turn_id, &votes)?;
                let mut signals = self.store.turn_signals(turn_id)?;
                signals.judge = Some(verdict.score);
                any |= self.apply_served(turn_id, &signals, weights)?;
            } else {
                // Extra samples were never shown to the user: only the judge can score them.
                any |= self.store.set_sample_reward(
                    turn_id,
                    s.idx,
                    f64::from(verdict.score),
                    RewardSource::Prm,
                )?;
            }
        }
        Ok(any)
    }

    /// Brings served samples not trained yet up to date with ratings and implicit signals
    /// that arrived after their reward was set (or that are their only reward). Returns how
    /// many changed.
    pub fn refresh(&self, weights: &Weights) -> Result<usize, RlError> {
        let mut changed = 0;
        for s in self.store.signalled_samples()? {
            // A pending sample waits for the judge's verdict when there is a judge; scoring
            // then combines everything.
            if s.state == SampleState::Pending && self.judge.is_some() && s.signals.judge.is_none()
            {
                continue;
            }
            // Rollout episodes are rewarded by their task's verifier.
            if self
                .store
                .turn_reward(&s.turn_id)?
                .is_some_and(|r| r.source == RewardSource::Verifier)
            {
                continue;
            }
            let Some(composed) = reward::compose(&s.signals, weights) else {
                continue;
            };
            if s.reward == Some(composed.reward)
                && self.store.reward_parts(&s.turn_id)? == composed.parts
            {
                continue;
            }
            if self.apply_served(&s.turn_id, &s.signals, weights)? {
                changed += 1;
            }
        }
        Ok(changed)
    }

    /// Sets the served sample's reward (and the turn's, with its parts) from `signals`.
    fn apply_served(
        &self,
        turn_id: &str,
        signals: &metaclaw_store::TurnSignals,
        weights: &Weights,
    ) -> Result<bool, RlError> {
        let Some(c) = reward::compose(signals, weights) else {
            return Ok(false);
        };
        let set = self
            .store
            .set_sample_reward(turn_id, 0, c.reward, c.source)?;
        if set {
            self.store.set_turn_reward(turn_id, c.reward, c.source)?;
            self.store.set_reward_parts(turn_id, c.parts)?;
        }
        Ok(set)
    }
}

/// The text of the last user message (OpenAI or Anthropic request), which is what the
/// judge is asked about.
pub fn last_user_text(request: &Value) -> String {
    let Some(messages) = request.get("messages").and_then(Value::as_array) else {
        return String::new();
    };
    messages
        .iter()
        .rev()
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("user"))
        .map(|m| content_text(m.get("content")))
        .find(|t| !t.trim().is_empty())
        .unwrap_or_default()
}

fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn instruction_is_the_last_user_text() {
        let req = json!({"messages": [
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": [{"type": "text", "text": "second"}, {"type": "image_url"}]},
            {"role": "user", "content": [{"type": "tool_result", "content": "x"}]},
        ]});
        assert_eq!(last_user_text(&req), "second");
        assert_eq!(last_user_text(&json!({})), "");
    }
}
