//! Extension points around the request path, so features (skill injection, recording,
//! training samples) plug in without adding branches to the handlers.

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use metaclaw_config::Placement;
use metaclaw_domain::{Dialect, TurnRecord, TurnType};
use serde_json::{Map, Value};

/// What a hook knows about the turn being served.
#[derive(Debug, Clone)]
pub struct TurnContext {
    pub turn_id: String,
    pub session_id: String,
    pub turn_type: TurnType,
    pub dialect: Dialect,
    /// The agent that sent the request (`metaclaw_domain::DEFAULT_AGENT` when unnamed).
    pub agent: String,
}

/// The `/v1` endpoint a request came in on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientApi {
    /// `/v1/chat/completions`
    ChatCompletions,
    /// `/v1/messages`
    Messages,
    /// `/v1/responses`
    Responses,
}

impl ClientApi {
    /// The wire family: errors, session keys and the turn log follow it (a Responses turn is
    /// logged in its chat-completions form, see `turn`).
    pub fn dialect(self) -> Dialect {
        match self {
            Self::ChatCompletions | Self::Responses => Dialect::OpenAi,
            Self::Messages => Dialect::Anthropic,
        }
    }
}

/// A request body in the client's API shape, about to be forwarded.
#[derive(Debug)]
pub struct PreparedRequest {
    pub api: ClientApi,
    pub body: Map<String, Value>,
    /// What hooks added to the request, kept in the turn log (`TurnRecord::injected`).
    pub injected: Vec<Value>,
    /// The skill library generation the turn ran under (support/query separation).
    pub skill_generation: Option<u64>,
}

impl PreparedRequest {
    pub fn dialect(&self) -> Dialect {
        self.api.dialect()
    }

    /// The conversation as a list of messages: `messages` as sent for chat completions and
    /// Anthropic Messages, the chat-completions form of `instructions` + `input` for the
    /// Responses API (what query extraction reads).
    pub fn messages(&self) -> Cow<'_, [Value]> {
        match self.api {
            ClientApi::Responses => {
                Cow::Owned(crate::responses::translate::chat_messages(&self.body))
            }
            _ => match self.body.get("messages") {
                Some(Value::Array(m)) => Cow::Borrowed(m.as_slice()),
                _ => Cow::Owned(Vec::new()),
            },
        }
    }

    /// Add the skills block where `placement` says. `User`: as the last part of the newest
    /// user message, after any `cache_control` breakpoint there, so every byte the provider
    /// cached for the previous turn is sent again unchanged (the block is not part of the
    /// agent's own history, so next turn it is simply gone from that message). `System`: at
    /// the end of the system prompt. A request without a user message gets it in the system
    /// prompt either way.
    pub fn insert_skills(&mut self, text: &str, placement: Placement) {
        if placement == Placement::User && self.append_to_last_user(text) {
            return;
        }
        self.append_system(text);
    }

    fn append_to_last_user(&mut self, text: &str) -> bool {
        // Chat completions and Anthropic `messages`, or a Responses API `input` item list.
        let (messages, part_type) = match self.body.get_mut("messages") {
            Some(Value::Array(m)) => (m, "text"),
            _ => match self.body.get_mut("input") {
                Some(Value::Array(items)) => (items, "input_text"),
                _ => return false,
            },
        };
        let Some(last) = messages
            .iter_mut()
            .rev()
            .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
        else {
            return false;
        };
        match last.get_mut("content") {
            // Appending keeps the agent's text where it was, byte for byte.
            Some(Value::String(s)) => {
                s.push_str("\n\n");
                s.push_str(text);
                true
            }
            Some(Value::Array(parts)) => {
                parts.push(serde_json::json!({"type": part_type, "text": text}));
                true
            }
            _ => false,
        }
    }

    /// Append a block of text to the system prompt at a stable position (the end), so the
    /// agent's own prefix stays byte-identical and provider prompt caches keep working.
    /// For the Responses API that is `instructions`.
    pub fn append_system(&mut self, text: &str) {
        match self.api {
            ClientApi::Responses => match self.body.get_mut("instructions") {
                Some(Value::String(s)) if !s.is_empty() => {
                    s.push_str("\n\n");
                    s.push_str(text);
                }
                _ => {
                    self.body
                        .insert("instructions".into(), Value::String(text.to_owned()));
                }
            },
            ClientApi::ChatCompletions => {
                let Some(Value::Array(messages)) = self.body.get_mut("messages") else {
                    return;
                };
                let last_system = messages.iter().rposition(|m| {
                    matches!(
                        m.get("role").and_then(Value::as_str),
                        Some("system" | "developer")
                    )
                });
                match last_system {
                    Some(i) => append_to_content(&mut messages[i], text),
                    None => {
                        messages.insert(0, serde_json::json!({"role": "system", "content": text}))
                    }
                }
            }
            ClientApi::Messages => {
                let block = serde_json::json!({"type": "text", "text": text});
                match self.body.get_mut("system") {
                    Some(Value::Array(blocks)) => blocks.push(block),
                    Some(Value::String(s)) if !s.is_empty() => {
                        let first = serde_json::json!({"type": "text", "text": s.clone()});
                        self.body
                            .insert("system".into(), Value::Array(vec![first, block]));
                    }
                    _ => {
                        self.body
                            .insert("system".into(), Value::String(text.to_owned()));
                    }
                }
            }
        }
    }
}

/// Blocks MetaClaw injects start with this (the skills block's `<!-- metaclaw:skills -->`).
const INJECTED_MARK: &str = "<!-- metaclaw:";

/// The request as the agent sent it, for the turn log: a block `insert_skills` added to the
/// newest user message is taken out again, so recorded user text (the dashboard, skill
/// distillation) holds the user's words only; what was injected is kept in `injected`.
pub(crate) fn strip_user_injection(body: &mut Map<String, Value>) {
    let items = match body.get_mut("messages") {
        Some(Value::Array(m)) => m,
        _ => match body.get_mut("input") {
            Some(Value::Array(items)) => items,
            _ => return,
        },
    };
    let Some(last) = items
        .iter_mut()
        .rev()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
    else {
        return;
    };
    match last.get_mut("content") {
        Some(Value::String(s)) => {
            if let Some(at) = s.rfind(&format!("\n\n{INJECTED_MARK}")) {
                s.truncate(at);
            }
        }
        Some(Value::Array(parts)) => {
            let injected = |p: &Value| {
                p.get("text")
                    .and_then(Value::as_str)
                    .is_some_and(|t| t.starts_with(INJECTED_MARK))
            };
            if parts.last().is_some_and(injected) {
                parts.pop();
            }
        }
        _ => {}
    }
}

fn append_to_content(message: &mut Value, text: &str) {
    match message.get_mut("content") {
        Some(Value::String(s)) => {
            s.push_str("\n\n");
            s.push_str(text);
        }
        Some(Value::Array(parts)) => parts.push(serde_json::json!({"type": "text", "text": text})),
        _ => {
            message["content"] = Value::String(text.to_owned());
        }
    }
}

pub type HookFuture<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// A feature that wants to see or change turns.
pub trait TurnHook: Send + Sync + 'static {
    /// On the request path, before forwarding: must be quick and bound any waiting it does
    /// (an embedding lookup has a timeout and a fallback).
    fn before_forward<'a>(
        &'a self,
        _ctx: &'a TurnContext,
        _request: &'a mut PreparedRequest,
    ) -> HookFuture<'a> {
        Box::pin(std::future::ready(()))
    }

    /// Off the request path, once the response has ended (or failed) and been assembled.
    fn after_response(&self, _turn: &Arc<TurnRecord>) {}
}

/// The ordered list of hooks, fixed at start-up.
#[derive(Clone, Default)]
pub struct Hooks(Arc<[Arc<dyn TurnHook>]>);

impl Hooks {
    pub fn new(hooks: Vec<Arc<dyn TurnHook>>) -> Self {
        Self(hooks.into())
    }

    pub(crate) async fn before_forward(&self, ctx: &TurnContext, request: &mut PreparedRequest) {
        for h in self.0.iter() {
            h.before_forward(ctx, request).await;
        }
    }

    pub(crate) fn after_response(&self, turn: &Arc<TurnRecord>) {
        for h in self.0.iter() {
            h.after_response(turn);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn req(api: ClientApi, body: Value) -> PreparedRequest {
        PreparedRequest {
            api,
            body: body.as_object().unwrap().clone(),
            injected: vec![],
            skill_generation: None,
        }
    }

    #[test]
    fn appends_after_the_last_system_message() {
        let mut r = req(
            ClientApi::ChatCompletions,
            json!({"messages": [
            {"role": "system", "content": "agent prompt"}, {"role": "user", "content": "hi"}]}),
        );
        r.append_system("SKILLS");
        assert_eq!(r.body["messages"][0]["content"], "agent prompt\n\nSKILLS");
        let mut r = req(
            ClientApi::ChatCompletions,
            json!({"messages": [{"role": "user", "content": "hi"}]}),
        );
        r.append_system("SKILLS");
        assert_eq!(
            r.body["messages"][0],
            json!({"role": "system", "content": "SKILLS"})
        );
    }

    #[test]
    fn responses_skills_go_to_instructions() {
        let mut r = req(
            ClientApi::Responses,
            json!({"instructions": "Be brief.", "input": "hi"}),
        );
        r.append_system("SKILLS");
        assert_eq!(r.body["instructions"], "Be brief.\n\nSKILLS");
        let mut r = req(ClientApi::Responses, json!({"input": "hi"}));
        r.append_system("SKILLS");
        assert_eq!(r.body["instructions"], "SKILLS");
        assert_eq!(r.body["input"], "hi", "the input is left as sent");
        assert_eq!(
            r.messages().to_vec(),
            vec![
                json!({"role": "system", "content": "SKILLS"}),
                json!({"role": "user", "content": "hi"})
            ]
        );
    }

    #[test]
    fn user_placement_goes_after_the_breakpoint_of_the_newest_user_turn() {
        let prompt = json!({"type": "text", "text": "fix my script",
            "cache_control": {"type": "ephemeral"}});
        let body = json!({"system": [{"type": "text", "text": "agent"}], "messages": [
            {"role": "user", "content": "earlier"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": [prompt.clone()]}]});
        let mut r = req(ClientApi::Messages, body.clone());
        r.insert_skills("<!-- metaclaw:skills -->S", Placement::User);
        assert_eq!(r.body["system"], body["system"]);
        assert_eq!(r.body["messages"][0], body["messages"][0]);
        assert_eq!(
            r.body["messages"][2]["content"],
            json!([prompt, {"type": "text", "text": "<!-- metaclaw:skills -->S"}])
        );
        strip_user_injection(&mut r.body);
        assert_eq!(
            Value::Object(r.body.clone()),
            body,
            "recorded as sent by the agent"
        );
        let mut r = req(
            ClientApi::ChatCompletions,
            json!({"messages": [{"role": "system", "content": "agent"},
                {"role": "user", "content": "hi there"},
                {"role": "assistant", "content": null, "tool_calls": []},
                {"role": "tool", "tool_call_id": "c", "content": "out"}]}),
        );
        r.insert_skills("<!-- metaclaw:skills -->S", Placement::User);
        assert_eq!(r.body["messages"][0]["content"], "agent");
        assert_eq!(
            r.body["messages"][1]["content"],
            "hi there\n\n<!-- metaclaw:skills -->S"
        );
        strip_user_injection(&mut r.body);
        assert_eq!(r.body["messages"][1]["content"], "hi there");
        let mut r = req(
            ClientApi::ChatCompletions,
            json!({"messages": [{"role": "system", "content": "a"}]}),
        );
        r.insert_skills("SKILLS", Placement::User);
        assert_eq!(r.body["messages"][0]["content"], "a\n\nSKILLS");
        let mut r = req(
            ClientApi::ChatCompletions,
            json!({"messages": [{"role": "system", "content": "a"}, {"role": "user", "content": "q"}]}),
        );
        r.insert_skills("SKILLS", Placement::System);
        assert_eq!(r.body["messages"][0]["content"], "a\n\nSKILLS");
    }

    #[test]
    fn anthropic_system_gets_an_extra_block_and_keeps_cached_ones() {
        let stable =
            json!({"type": "text", "text": "stable", "cache_control": {"type": "ephemeral"}});
        let mut r = req(
            ClientApi::Messages,
            json!({"system": [stable.clone()], "messages": []}),
        );
        r.append_system("SKILLS");
        assert_eq!(
            r.body["system"],
            json!([stable, {"type": "text", "text": "SKILLS"}])
        );
        let mut r = req(
            ClientApi::Messages,
            json!({"system": "plain", "messages": []}),
        );
        r.append_system("SKILLS");
        assert_eq!(r.body["system"][1]["text"], "SKILLS");
        assert_eq!(r.body["system"][0]["text"], "plain");
    }
}
