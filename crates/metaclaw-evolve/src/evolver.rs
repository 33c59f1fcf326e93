//! The evolver: one OpenAI-compatible chat call that turns a session into skill proposals.
//! Asks for JSON with a schema, parses robustly, and retries once with the parse error.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use metaclaw_llm::{ChatMessage, ChatRequest, LlmClient, LlmError, ResponseFormat};
use serde_json::{Value, json};

use crate::proposal::RawProposal;
use crate::transcript::Signal;

#[derive(Debug, thiserror::Error)]
pub enum EvolveError {
    #[error("the evolver call failed: {0}")]
    Call(#[from] LlmError),
    #[error("the evolver's answer could not be parsed as proposals ({0})")]
    Parse(String),
}

#[derive(Debug, Clone)]
pub struct Evolver {
    client: LlmClient,
    pub model: String,
    /// Upstreams that reject `response_format` get a plain request after the first refusal.
    json_schema: Arc<AtomicBool>,
}

const SYSTEM: &str = "You maintain a library of skills for an AI agent. A skill is a short, reusable \
instruction file: a name, a one-sentence description that starts with \"Use when\" and says exactly \
which requests it applies to, a category, and a Markdown body with numbered steps and an \
\"Anti-patterns\" section.\n\nYou are given one conversation between a user and the agent, with \
signals: the user correcting the agent, tool errors, explicit thumbs up or down, judge scores. \
Propose at most 3 skills that would have made the agent do better, or that capture a pattern that \
clearly worked. Only propose a skill for a lesson that will recur; it must be general (no names, \
paths, secrets or one-off details from this conversation). If an existing skill covers the lesson, \
propose an improved version under that skill's exact name. Give each skill a few trigger \
phrases: short requests it is for, as users word them, in the language of the conversation and in \
English, so that it is found whatever language the next request is in. If nothing is worth keeping, \
return an empty list. Reply with JSON only.";

fn schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["proposals"],
        "properties": {"proposals": {"type": "array", "maxItems": 3, "items": {
            "type": "object",
            "additionalProperties": false,
            "required": ["name", "description", "category", "body", "reason", "turns", "triggers"],
            "properties": {
                "name": {"type": "string", "description": "lowercase-hyphenated, at most 64 characters"},
                "description": {"type": "string", "description": "one sentence starting with 'Use when'"},
                "category": {"type": "string", "enum": metaclaw_skills::KNOWN_CATEGORIES},
                "body": {"type": "string", "description": "Markdown: purpose, ## Steps, ## Anti-patterns"},
                "reason": {"type": "string", "description": "what in the conversation shows this is needed"},
                "turns": {"type": "array", "items": {"type": "string"}, "description": "ids of the turns it comes from"},
                "triggers": {"type": "array", "items": {"type": "string"}, "description": "3 to 8 short requests this skill is for, worded as users write them: in the conversation's language and in English"}
            }
        }}}
    })
}

/// The chat messages for one evolution run.
pub fn messages(
    transcript: &str,
    signals: &[Signal],
    existing: &[(String, String)],
    rejected: &[String],
) -> Vec<ChatMessage> {
    let mut user = String::from("## Conversation\n");
    user.push_str(transcript);
    user.push_str("\n\n## Signals\n");
    if signals.is_empty() {
        user.push_str("(none: judge the conversation on its own)\n");
    }
    for s in signals {
        user.push_str(&format!(
            "- turn {}: {:?}: {}\n",
            s.turn_id, s.kind, s.detail
        ));
    }
    user.push_str("\n## Existing skills (name: description)\n");
    for (name, description) in existing {
        user.push_str(&format!("- {name}: {description}\n"));
    }
    if !rejected.is_empty() {
        user.push_str("\n## Rejected by the user before (never propose these again)\n");
        for r in rejected {
            user.push_str(&format!("- {r}\n"));
        }
    }
    user.push_str("\nAnswer with {\"proposals\": [...]}.");
    vec![ChatMessage::system(SYSTEM), ChatMessage::user(user)]
}

/// Find the proposals in whatever the model wrote: bare JSON, fenced JSON, JSON inside prose,
/// an object with `proposals` or a bare list.
pub fn parse(text: &str) -> Result<Vec<RawProposal>, String> {
    let trimmed = text.trim();
    let candidates = [
        trimmed.to_owned(),
        strip_fence(trimmed),
        slice_between(trimmed, '{', '}'),
        slice_between(trimmed, '[', ']'),
    ];
    let mut last_err = String::from("no JSON found in the answer");
    for c in candidates.iter().filter(|c| !c.is_empty()) {
        match serde_json::from_str::<Value>(c) {
            Ok(v) => {
                let list = match &v {
                    Value::Array(_) => v.clone(),
                    Value::Object(o) => match o.get("proposals").or_else(|| o.get("skills")) {
                        Some(list) => list.clone(),
                        None if o.contains_key("name") => Value::Array(vec![v.clone()]),
                        None => {
                            last_err = "the JSON object has no `proposals` list".into();
                            continue;
                        }
                    },
                    _ => {
                        last_err = "the JSON is neither an object nor a list".into();
                        continue;
                    }
                };
                return serde_json::from_value::<Vec<RawProposal>>(list).map_err(|e| {
                    format!("a proposal is missing a field or has the wrong type: {e}")
                });
            }
            Err(e) => last_err = format!("invalid JSON: {e}"),
        }
    }
    Err(last_err)
}

fn strip_fence(text: &str) -> String {
    let Some(start) = text.find("```") else {
        return String::new();
    };
    let after = &text[start + 3..];
    let after = after.split_once('\n').map_or(after, |(_, rest)| rest);
    after
        .find("```")
        .map_or_else(String::new, |end| after[..end].trim().to_owned())
}

fn slice_between(text: &str, open: char, close: char) -> String {
    match (text.find(open), text.rfind(close)) {
        (Some(a), Some(b)) if b > a => text[a..=b].to_owned(),
        _ => String::new(),
    }
}

impl Evolver {
    pub fn new(
        api_base: &str,
        api_key: &str,
        model: &str,
        timeout: Duration,
    ) -> Result<Evolver, EvolveError> {
        Ok(Evolver {
            client: LlmClient::new(api_base, api_key, timeout)?,
            model: model.to_owned(),
            json_schema: Arc::new(AtomicBool::new(true)),
        })
    }

    async fn call(&self, messages: &[ChatMessage]) -> Result<String, EvolveError> {
        let mut request = ChatRequest::new(&self.model, messages.to_vec());
        request.temperature = Some(0.2);
        request.max_tokens = Some(3000);
        loop {
            let with_schema = self.json_schema.load(Ordering::Relaxed);
            request.response_format =
                with_schema.then(|| ResponseFormat::json_schema("skill_proposals", schema(), true));
            match self.client.chat(&request).await {
                Err(e)
                    if with_schema
                        && e.status() == Some(400)
                        && e.upstream_message()
                            .is_some_and(|m| m.contains("response_format")) =>
                {
                    // The provider does not support structured output: ask in plain JSON.
                    self.json_schema.store(false, Ordering::Relaxed);
                }
                Err(e) => return Err(e.into()),
                Ok(answer) => {
                    return answer.content().map(str::to_owned).ok_or_else(|| {
                        EvolveError::Parse("the response has no message content".into())
                    });
                }
            }
        }
    }

    /// Ask for proposals; a malformed answer gets one more try with the parse error.
    pub async fn propose(
        &self,
        messages: Vec<ChatMessage>,
    ) -> Result<Vec<RawProposal>, EvolveError> {
        let first = self.call(&messages).await?;
        match parse(&first) {
            Ok(p) => Ok(p),
            Err(err) => {
                tracing::info!("evolver answer did not parse ({err}); retrying once");
                let mut retry = messages;
                retry.push(ChatMessage::assistant(first));
                retry.push(ChatMessage::user(format!(
                    "That answer could not be used: {err}. Reply again with only the JSON object {{\"proposals\": [...]}}, no prose.")));
                let second = self.call(&retry).await?;
                parse(&second).map_err(EvolveError::Parse)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE: &str = r#"{"name": "a-b", "description": "Use when x", "category": "coding", "body": "b", "reason": "r", "turns": ["t1"]}"#;

    #[test]
    fn parses_the_usual_shapes() {
        for text in [
            format!("{{\"proposals\": [{ONE}]}}"),
            format!("```json\n{{\"proposals\": [{ONE}]}}\n```"),
            format!("Here you go:\n{{\"proposals\": [{ONE}]}}\nHope this helps."),
            format!("[{ONE}]"),
            ONE.to_owned(),
        ] {
            let p = parse(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(p[0].name, "a-b");
        }
        assert!(parse("{\"proposals\": []}").unwrap().is_empty());
    }

    #[test]
    fn prose_and_broken_json_are_errors_with_reasons() {
        assert!(parse("I think the user wanted metric units.").is_err());
        assert!(
            parse("{\"proposals\": [{\"name\": 1}]}")
                .unwrap_err()
                .contains("field")
        );
        assert!(parse("{\"proposals\": [").is_err());
    }
}
