//! The agents' scaffolding around a conversation, from the recorded-shape fixtures in
//! tests/fixtures/agents/ (Claude Code, Codex, Qwen Code, Hermes, OpenClaw): wrap any
//! chat-completions conversation the way each agent sends it, and build a multi-turn
//! session. Shared by the retrieval test, `skills-eval` and `cache-bench`.

use anyhow::{Context, Result};
use serde_json::{Map, Value, json};

/// The API an agent speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentApi {
    Anthropic,
    Chat,
    Responses,
}

/// One agent's recorded request shape.
#[derive(Debug, Clone)]
pub struct AgentFixture {
    pub agent: String,
    pub api: AgentApi,
    /// The first-turn request without the conversation (the agent's system prompt, tools,
    /// its own leading messages or input items).
    pub request: Map<String, Value>,
    pub scaffolding: Map<String, Value>,
    /// A multi-turn conversation (chat-completions form) for sessions.
    pub conversation: Vec<Value>,
    /// A side request of the agent's own (e.g. memory extraction), when it makes one.
    pub side_request: Option<Map<String, Value>>,
}

pub const AGENTS: [&str; 5] = ["claude-code", "codex", "qwen-code", "hermes", "openclaw"];

pub fn load(agent: &str) -> Result<AgentFixture> {
    let path = format!(
        "{}/fixtures/agents/{agent}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {path}"))?;
    let v: Value = serde_json::from_str(&text).with_context(|| format!("parsing {path}"))?;
    let obj = |k: &str| {
        v.get(k)
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    let api = match v["dialect"].as_str() {
        Some("anthropic") => AgentApi::Anthropic,
        Some("responses") => AgentApi::Responses,
        _ => AgentApi::Chat,
    };
    Ok(AgentFixture {
        agent: agent.to_owned(),
        api,
        request: obj("request"),
        scaffolding: obj("scaffolding"),
        conversation: v["conversation"].as_array().cloned().unwrap_or_default(),
        side_request: v.get("side_request").and_then(Value::as_object).cloned(),
    })
}

pub fn load_all() -> Result<Vec<AgentFixture>> {
    AGENTS.iter().map(|a| load(a)).collect()
}

fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn tool_calls(m: &Value) -> Vec<(String, String, String)> {
    m.get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| {
            (
                c["id"].as_str().unwrap_or("call_0").to_owned(),
                c["function"]["name"].as_str().unwrap_or("tool").to_owned(),
                c["function"]["arguments"]
                    .as_str()
                    .unwrap_or("{}")
                    .to_owned(),
            )
        })
        .collect()
}

impl AgentFixture {
    fn scaffold(&self, key: &str) -> String {
        self.scaffolding
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    }

    /// `conversation` (chat-completions messages; system messages are replaced by the
    /// agent's own) as this agent would send it.
    pub fn wrap(&self, conversation: &[Value]) -> Map<String, Value> {
        let turns: Vec<&Value> = conversation
            .iter()
            .filter(|m| m["role"] != "system")
            .collect();
        let mut body = self.request.clone();
        match (self.agent.as_str(), self.api) {
            (_, AgentApi::Anthropic) => {
                body.insert(
                    "messages".into(),
                    Value::Array(self.claude_messages(&turns)),
                );
            }
            (_, AgentApi::Responses) => {
                let mut input = body
                    .get("input")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                input.extend(responses_items(&turns));
                body.insert("input".into(), Value::Array(input));
            }
            (agent, AgentApi::Chat) => {
                let mut messages = body
                    .get("messages")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                messages.extend(self.chat_messages(agent, &turns));
                body.insert("messages".into(), Value::Array(messages));
            }
        }
        body
    }

    /// Claude Code: a `<system-reminder>` before the first prompt (CLAUDE.md, the date) and
    /// before later ones, the mid-conversation system message after the first user message,
    /// tool results as user messages, the breakpoint on the last block of the last message.
    fn claude_messages(&self, turns: &[&Value]) -> Vec<Value> {
        let mid = self.scaffolding.get("mid_conversation_system").cloned();
        let mut out: Vec<Value> = Vec::new();
        let mut first = true;
        for m in turns {
            match m["role"].as_str() {
                Some("user") => {
                    let reminder = if first {
                        self.scaffold("first_user_reminder")
                    } else {
                        self.scaffold("later_user_reminder")
                    };
                    out.push(json!({"role": "user", "content": [
                        {"type": "text", "text": reminder},
                        {"type": "text", "text": text_of(&m["content"])}]}));
                    if first && let Some(mid) = &mid {
                        out.push(mid.clone());
                    }
                    first = false;
                }
                Some("assistant") => {
                    let mut blocks = Vec::new();
                    let text = text_of(&m["content"]);
                    if !text.is_empty() {
                        blocks.push(json!({"type": "text", "text": text}));
                    }
                    for (id, name, args) in tool_calls(m) {
                        let input: Value = serde_json::from_str(&args).unwrap_or(json!({}));
                        blocks.push(
                            json!({"type": "tool_use", "id": id, "name": name, "input": input}),
                        );
                    }
                    out.push(json!({"role": "assistant", "content": blocks}));
                }
                Some("tool") => {
                    let block = json!({"type": "tool_result",
                        "tool_use_id": m["tool_call_id"], "content": text_of(&m["content"])});
                    let merge = out.last().is_some_and(|l| {
                        l["role"] == "user" && l["content"][0]["type"] == "tool_result"
                    });
                    if merge
                        && let Some(Value::Array(c)) = out.last_mut().map(|l| &mut l["content"])
                    {
                        c.push(block);
                    } else {
                        out.push(json!({"role": "user", "content": [block]}));
                    }
                }
                _ => {}
            }
        }
        if let Some(Value::Array(blocks)) = out.last_mut().map(|l| &mut l["content"])
            && let Some(Value::Object(last)) = blocks.last_mut()
        {
            last.insert("cache_control".into(), json!({"type": "ephemeral"}));
        }
        out
    }

    fn chat_messages(&self, agent: &str, turns: &[&Value]) -> Vec<Value> {
        let last_user = turns.iter().rposition(|m| m["role"] == "user");
        let mut out = Vec::new();
        for (i, m) in turns.iter().enumerate() {
            if m["role"] != "user" {
                out.push((*m).clone());
                continue;
            }
            let text = text_of(&m["content"]);
            out.push(match agent {
                // Qwen Code sends the prompt as text parts.
                "qwen-code" => json!({"role": "user", "content": [{"type": "text", "text": text}]}),
                // Hermes' memory plugins append recalled context after the newest prompt.
                "hermes" if Some(i) == last_user => json!({"role": "user",
                    "content": format!("{text}{}", self.scaffold("memory_context"))}),
                "openclaw" => json!({"role": "user", "content": format!(
                    "{} {text}\n\n{}", self.scaffold("timestamp"), self.scaffold("runtime"))}),
                _ => json!({"role": "user", "content": text}),
            });
        }
        if agent == "openclaw" {
            out.push(json!({"role": "user", "content": [
                {"type": "text", "text": self.scaffold("internal_context")}]}));
        }
        out
    }

    /// The agent's own multi-turn session: request `k` holds the conversation up to and
    /// including its `k`-th user message.
    pub fn session(&self) -> Vec<Map<String, Value>> {
        self.conversation
            .iter()
            .enumerate()
            .filter(|(_, m)| m["role"] == "user")
            .map(|(i, _)| self.wrap(&self.conversation[..=i]))
            .collect()
    }
}

/// Codex: messages as `message` items with input/output text parts, tool calls as
/// `function_call` / `function_call_output` items.
fn responses_items(turns: &[&Value]) -> Vec<Value> {
    let mut out = Vec::new();
    for m in turns {
        match m["role"].as_str() {
            Some("user") => out.push(json!({"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": text_of(&m["content"])}]})),
            Some("assistant") => {
                let text = text_of(&m["content"]);
                if !text.is_empty() {
                    out.push(json!({"type": "message", "role": "assistant",
                        "content": [{"type": "output_text", "text": text, "annotations": []}]}));
                }
                for (id, name, args) in tool_calls(m) {
                    out.push(json!({"type": "function_call", "call_id": id, "name": name,
                        "arguments": args, "status": "completed"}));
                }
            }
            Some("tool") => out.push(json!({"type": "function_call_output",
                "call_id": m["tool_call_id"], "output": text_of(&m["content"])})),
            _ => {}
        }
    }
    out
}

/// The bytes a provider's prompt cache sees, in rendering order (tools, system prompt,
/// conversation), without the cache markers themselves.
pub fn cache_view(body: &Map<String, Value>) -> Vec<u8> {
    fn strip(v: &Value) -> Value {
        match v {
            Value::Object(m) => Value::Object(
                m.iter()
                    .filter(|(k, _)| k.as_str() != "cache_control")
                    .map(|(k, v)| (k.clone(), strip(v)))
                    .collect(),
            ),
            Value::Array(a) => Value::Array(a.iter().map(strip).collect()),
            other => other.clone(),
        }
    }
    let mut out = Vec::new();
    for key in ["tools", "system", "instructions", "messages", "input"] {
        let Some(v) = body.get(key) else { continue };
        match strip(v) {
            // Items one by one, so a changed last item leaves the earlier ones intact.
            Value::Array(items) => {
                for item in items {
                    out.extend(serde_json::to_vec(&item).unwrap_or_default());
                }
            }
            other => out.extend(serde_json::to_vec(&other).unwrap_or_default()),
        }
    }
    out
}

/// The share of `current` that repeats `previous` byte for byte from the start: what a
/// prefix cache filled by the previous turn can serve.
pub fn prefix_share(previous: &[u8], current: &[u8]) -> f64 {
    let common = previous
        .iter()
        .zip(current)
        .take_while(|(a, b)| a == b)
        .count();
    common as f64 / current.len().max(1) as f64
}

/// Cases of the labelled set that are plain conversations (those already wrapped in
/// OpenClaw's scaffolding are left out: wrapping them again would test double wrapping).
pub fn plain_cases(cases: &[crate::eval::Case]) -> Vec<&crate::eval::Case> {
    cases
        .iter()
        .filter(|c| {
            !c.messages
                .iter()
                .any(|m| text_of(&m["content"]).contains("<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>"))
        })
        .collect()
}

/// Injected skill names for each request body, the way the proxy picks them.
pub fn injected_for_bodies(
    lib: &metaclaw_skills::Library,
    bodies: &[Map<String, Value>],
    cfg: &metaclaw_skills::RetrievalConfig,
) -> Vec<Vec<String>> {
    bodies
        .iter()
        .map(|b| {
            let q = metaclaw_skills::query::from_body(b);
            let r = metaclaw_skills::retrieve(lib, &metaclaw_skills::States::new(), &q, cfg, None);
            r.injected_names().into_iter().map(str::to_owned).collect()
        })
        .collect()
}

/// Recall of the labelled set bare and wrapped in `fixture`'s scaffolding, and how many
/// cases got exactly the same skills both ways.
pub struct ScaffoldRecall {
    pub agent: String,
    pub cases: usize,
    pub bare: crate::eval::Metrics,
    pub wrapped: crate::eval::Metrics,
    pub identical: usize,
}

pub fn scaffold_recall(
    lib: &metaclaw_skills::Library,
    cases: &[crate::eval::Case],
    fixture: &AgentFixture,
) -> ScaffoldRecall {
    let cfg = metaclaw_skills::RetrievalConfig::default();
    let plain: Vec<crate::eval::Case> = plain_cases(cases)
        .into_iter()
        .map(|c| crate::eval::Case {
            id: c.id.clone(),
            messages: c.messages.clone(),
            expected: c.expected.clone(),
            lang: c.lang.clone(),
            kind: c.kind.clone(),
        })
        .collect();
    let bare_bodies: Vec<Map<String, Value>> = plain
        .iter()
        .map(|c| {
            let mut m = Map::new();
            m.insert("messages".into(), Value::Array(c.messages.clone()));
            m
        })
        .collect();
    let wrapped_bodies: Vec<Map<String, Value>> =
        plain.iter().map(|c| fixture.wrap(&c.messages)).collect();
    let bare = injected_for_bodies(lib, &bare_bodies, &cfg);
    let wrapped = injected_for_bodies(lib, &wrapped_bodies, &cfg);
    ScaffoldRecall {
        agent: fixture.agent.clone(),
        cases: plain.len(),
        identical: bare.iter().zip(&wrapped).filter(|(a, b)| a == b).count(),
        bare: crate::eval::score(&plain, &bare),
        wrapped: crate::eval::score(&plain, &wrapped),
    }
}

/// For each request of `fixture`'s session after the first: the share of its cacheable bytes
/// that repeat the previous request's, once skills are placed with `placement`.
pub fn prefix_shares(
    lib: &metaclaw_skills::Library,
    fixture: &AgentFixture,
    placement: metaclaw_config::Placement,
) -> Vec<f64> {
    let cfg = metaclaw_skills::RetrievalConfig::default();
    let api = match fixture.api {
        AgentApi::Anthropic => metaclaw_proxy::ClientApi::Messages,
        AgentApi::Chat => metaclaw_proxy::ClientApi::ChatCompletions,
        AgentApi::Responses => metaclaw_proxy::ClientApi::Responses,
    };
    let mut previous: Option<Vec<u8>> = None;
    let mut shares = Vec::new();
    for body in fixture.session() {
        let mut request = metaclaw_proxy::PreparedRequest {
            api,
            body,
            injected: Vec::new(),
            skill_generation: None,
        };
        let q = metaclaw_skills::query::from_body(&request.body);
        let r = metaclaw_skills::retrieve(lib, &metaclaw_skills::States::new(), &q, &cfg, None);
        if let Some(block) = metaclaw_skills::render(lib, &r) {
            request.insert_skills(&block, placement);
        }
        let view = cache_view(&request.body);
        if let Some(p) = &previous {
            shares.push(prefix_share(p, &view));
        }
        previous = Some(view);
    }
    shares
}
