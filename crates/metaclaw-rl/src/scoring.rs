//! Rewards for samples: the judge scores a main turn once the next turn of its session
//! arrives or the session ends, and the user's feedback (the evolution issue's thumbs up
//! or down) is applied by the rule in [`crate::reward`].

use std::sync::Arc;

use metaclaw_store::{PrmVote, RewardSource, SampleRow, SampleState, Store};
use serde_json::Value;

use crate::error::RlError;
use crate::judge::Judge;
use crate::reward;

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
    /// Without a judge there is nothing to do here: ratings arrive through
    /// [`Scorer::apply_late_feedback`].
    pub async fn score_due(&self) -> Result<usize, RlError> {
        if self.judge.is_none() {
            return Ok(0);
        }
        let mut scored = 0;
        for turn in self.store.turns_due_for_judging()? {
            if self.score_turn(&turn).await? {
                scored += 1;
            }
        }
        Ok(scored)
    }

    /// Scores every sample of a turn; returns whether a reward was set.
    pub async fn score_turn(&self, turn_id: &str) -> Result<bool, RlError> {
        let samples: Vec<SampleRow> = self
            .store
            .samples_for_turn(turn_id)?
            .into_iter()
            .filter(|s| s.state == SampleState::Pending)
            .collect();
        if samples.is_empty() {
            return Ok(false);
        }
        let feedback = self.store.feedback(turn_id)?.map(|f| f.rating);
        let Some(judge) = &self.judge else {
            // Feedback only: the served response gets the user's rating, if any.
            return self.apply(turn_id, 0, None, feedback);
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
                any |= self.apply(turn_id, 0, Some(verdict.score), feedback)?;
            } else {
                // Extra samples were never shown to the user: only the judge can score them.
                any |= self.apply(turn_id, s.idx, Some(verdict.score), None)?;
            }
        }
        Ok(any)
    }

    /// Applies ratings to served samples not trained yet (feedback overrides the judge).
    pub fn apply_late_feedback(&self) -> Result<usize, RlError> {
        let mut changed = 0;
        for s in self.store.rated_samples_without_feedback()? {
            // A pending sample waits for the judge's verdict when there is a judge; scoring
            // then combines both.
            if s.state == SampleState::Pending && self.judge.is_some() {
                continue;
            }
            let judge = (s.reward_source == Some(RewardSource::Prm))
                .then_some(s.reward)
                .flatten()
                .map(|r| r as i8);
            if self.apply(&s.turn_id, 0, judge, Some(s.rating))? {
                changed += 1;
            }
        }
        Ok(changed)
    }

    fn apply(
        &self,
        turn_id: &str,
        idx: u32,
        judge: Option<i8>,
        feedback: Option<i8>,
    ) -> Result<bool, RlError> {
        let Some((reward, source)) = reward::decide(judge, feedback) else {
            return Ok(false);
        };
        let set = self.store.set_sample_reward(turn_id, idx, reward, source)?;
        if set && idx == 0 {
            self.store.set_turn_reward(turn_id, reward, source)?;
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
