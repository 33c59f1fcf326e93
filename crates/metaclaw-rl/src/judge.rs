//! The process reward model: an OpenAI-compatible LLM asked m times, in parallel, whether a
//! response followed the user's instruction. Scores are -1/0/+1; the majority wins and a
//! tie (or no valid vote) scores 0.

use std::sync::LazyLock;
use std::time::Duration;

use futures_util::future::join_all;
use metaclaw_llm::{ChatMessage, ChatRequest, LlmClient};
use regex::Regex;

use crate::error::RlError;

/// Where and how to ask the judge.
#[derive(Debug, Clone)]
pub struct JudgeSettings {
    /// OpenAI-compatible base URL (`…/v1`).
    pub url: String,
    pub model: String,
    pub api_key: String,
    pub votes: u32,
    pub temperature: f64,
    pub max_tokens: u32,
    pub timeout: Duration,
}

/// One vote: the score it gave (`None` when the call failed or gave no valid score) and
/// what the judge wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct Vote {
    pub score: Option<i8>,
    pub rationale: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub score: i8,
    pub votes: Vec<Vote>,
}

impl Verdict {
    /// The rationale of a vote that agrees with the verdict, for the dashboard.
    pub fn rationale(&self) -> &str {
        self.votes
            .iter()
            .find(|v| v.score == Some(self.score))
            .or(self.votes.first())
            .map_or("", |v| v.rationale.as_str())
    }
}

const SYSTEM: &str = "You review one reply of an AI assistant. Given the user's instruction \
and the assistant's reply, judge only whether the reply follows the instruction and \
completes it; ignore anything that might come later in the conversation.\n\
Score 1 when the reply clearly follows the instruction and substantially completes it.\n\
Score -1 when it is off-task, wrong, or misses what the instruction required.\n\
Score 0 when it is ambiguous or you cannot tell.\n\
Reason briefly, then end with exactly one line: `Score: 1`, `Score: -1` or `Score: 0`.";

/// The judge's messages for one turn.
pub fn messages(instruction: &str, response: &str) -> Vec<ChatMessage> {
    let user = format!(
        "## Instruction\n{}\n\n## Reply\n{}\n\nEnd with `Score: 1`, `Score: -1` or `Score: 0`.",
        neutralise(instruction),
        neutralise(response)
    );
    vec![ChatMessage::system(SYSTEM), ChatMessage::user(user)]
}

/// Markup in agent transcripts (XML-ish tags) trips some providers' content filters and
/// can be mistaken for instructions; the judge sees neutral brackets instead.
fn neutralise(text: &str) -> String {
    static TAG: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"</?([A-Za-z_][A-Za-z0-9_:-]*)[^<>]*>").expect("tag regex"));
    TAG.replace_all(text, "[$1]").into_owned()
}

/// The last `Score: n` in the text, or else the last `\boxed{n}`; only -1, 0, 1 count.
pub fn parse_score(text: &str) -> Option<i8> {
    static SCORE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?i)score\s*[:=]\s*\**\s*([+-]?\d+)").expect("score regex"));
    static BOXED: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\\boxed\{\s*([+-]?\d+)\s*\}").expect("boxed regex"));
    let last = |re: &Regex| {
        re.captures_iter(text)
            .last()
            .and_then(|c| c[1].parse::<i8>().ok())
    };
    last(&SCORE)
        .or_else(|| last(&BOXED))
        .filter(|s| (-1..=1).contains(s))
}

/// Majority over valid votes; a tie between the most frequent scores, or no valid vote, is 0.
pub fn majority(scores: &[Option<i8>]) -> i8 {
    let mut counts = [0usize; 3];
    for s in scores.iter().flatten() {
        counts[usize::try_from(s + 1).unwrap_or(1)] += 1;
    }
    let best = counts.iter().copied().max().unwrap_or(0);
    if best == 0 {
        return 0;
    }
    let winners: Vec<usize> = (0..3).filter(|&i| counts[i] == best).collect();
    match winners.as_slice() {
        [only] => *only as i8 - 1,
        _ => 0,
    }
}

#[derive(Clone)]
pub struct Judge {
    client: LlmClient,
    settings: JudgeSettings,
}

impl Judge {
    pub fn new(settings: JudgeSettings) -> Result<Self, RlError> {
        let client = LlmClient::new(&settings.url, &settings.api_key, settings.timeout)?;
        Ok(Self { client, settings })
    }

    pub fn settings(&self) -> &JudgeSettings {
        &self.settings
    }

    /// Asks for `votes` verdicts in parallel. Failed calls count as invalid votes, so a
    /// flaky judge lowers confidence (towards 0) rather than failing the turn.
    pub async fn score(&self, instruction: &str, response: &str) -> Verdict {
        let msgs = messages(instruction, response);
        let calls = (0..self.settings.votes.max(1)).map(|_| self.vote(&msgs));
        let votes: Vec<Vote> = join_all(calls).await;
        let scores: Vec<Option<i8>> = votes.iter().map(|v| v.score).collect();
        Verdict {
            score: majority(&scores),
            votes,
        }
    }

    async fn vote(&self, msgs: &[ChatMessage]) -> Vote {
        match self.call(msgs).await {
            Ok(text) => Vote {
                score: parse_score(&text),
                rationale: text,
            },
            Err(e) => {
                tracing::warn!(error = %e, "PRM judge call failed");
                Vote {
                    score: None,
                    rationale: format!("judge call failed: {e}"),
                }
            }
        }
    }

    async fn call(&self, msgs: &[ChatMessage]) -> Result<String, RlError> {
        let mut request = ChatRequest::new(&self.settings.model, msgs.to_vec());
        request.temperature = Some(self.settings.temperature);
        request.max_completion_tokens = Some(self.settings.max_tokens);
        Ok(self.client.chat_text(&request).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_are_the_last_valid_marker() {
        assert_eq!(parse_score("Looks fine.\nScore: 1"), Some(1));
        assert_eq!(
            parse_score("Score: 1 at first... actually\nScore: -1"),
            Some(-1)
        );
        assert_eq!(parse_score("**Score:** 0"), Some(0));
        assert_eq!(parse_score("score = 0"), Some(0));
        assert_eq!(parse_score("The answer is \\boxed{-1}."), Some(-1));
        assert_eq!(parse_score("Score: 5"), None);
        assert_eq!(parse_score("no verdict"), None);
    }

    #[test]
    fn majority_ties_and_failures_score_zero() {
        assert_eq!(majority(&[Some(1), Some(1), Some(-1)]), 1);
        assert_eq!(majority(&[Some(-1), None, Some(-1)]), -1);
        assert_eq!(majority(&[Some(1), Some(-1)]), 0);
        assert_eq!(majority(&[Some(1), Some(-1), Some(0)]), 0);
        assert_eq!(majority(&[None, None, None]), 0);
        assert_eq!(majority(&[Some(1), None, None]), 1);
    }

    #[test]
    fn markup_is_neutralised_for_the_judge() {
        let m = messages("do <b>it</b>", "<tool_call>{\"name\":\"x\"}</tool_call>");
        let user = &m[1].content;
        assert!(user.contains("do [b]it[b]"));
        assert!(user.contains("[tool_call]{\"name\":\"x\"}[tool_call]"));
        assert!(!user.contains('<'));
    }
}
