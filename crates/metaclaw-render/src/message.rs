//! Chat messages and tool specs, and conversion from OpenAI-shaped JSON.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::RenderError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments as JSON text (OpenAI's `function.arguments`), kept verbatim.
    pub arguments: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: Role,
    pub content: String,
    pub reasoning: Option<String>,
    pub tool_calls: Vec<ToolCall>,
    pub tool_call_id: Option<String>,
    pub name: Option<String>,
}

impl ChatMessage {
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
            reasoning: None,
            tool_calls: Vec::new(),
            tool_call_id: None,
            name: None,
        }
    }
    pub fn system(content: impl Into<String>) -> Self {
        Self::new(Role::System, content)
    }
    pub fn user(content: impl Into<String>) -> Self {
        Self::new(Role::User, content)
    }
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::new(Role::Assistant, content)
    }
    pub fn tool(tool_call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            tool_call_id: Some(tool_call_id.into()),
            ..Self::new(Role::Tool, content)
        }
    }
    pub fn with_reasoning(mut self, reasoning: impl Into<String>) -> Self {
        self.reasoning = Some(reasoning.into());
        self
    }
    pub fn with_tool_calls(mut self, calls: Vec<ToolCall>) -> Self {
        self.tool_calls = calls;
        self
    }
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// OpenAI chat-completions shape of this message (used for responses and records).
    pub fn to_openai(&self) -> Value {
        let mut m = serde_json::Map::new();
        m.insert("role".into(), self.role.as_str().into());
        m.insert("content".into(), self.content.clone().into());
        if let Some(r) = &self.reasoning {
            m.insert("reasoning_content".into(), r.clone().into());
        }
        if !self.tool_calls.is_empty() {
            let calls = self
                .tool_calls
                .iter()
                .map(|c| {
                    serde_json::json!({
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": c.arguments},
                    })
                })
                .collect();
            m.insert("tool_calls".into(), Value::Array(calls));
        }
        if let Some(id) = &self.tool_call_id {
            m.insert("tool_call_id".into(), id.clone().into());
        }
        if let Some(n) = &self.name {
            m.insert("name".into(), n.clone().into());
        }
        Value::Object(m)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    /// Empty means "not given"; the key is then left out of rendered schemas.
    pub description: String,
    /// JSON Schema of the arguments.
    pub parameters: Value,
}

impl ToolSpec {
    /// OpenAI's `{"type": "function", "function": {...}}` shape, the one chat templates render.
    pub fn to_openai(&self) -> Value {
        let mut f = serde_json::Map::new();
        f.insert("name".into(), self.name.clone().into());
        if !self.description.is_empty() {
            f.insert("description".into(), self.description.clone().into());
        }
        f.insert("parameters".into(), self.parameters.clone());
        serde_json::json!({"type": "function", "function": Value::Object(f)})
    }
}

/// Converts OpenAI chat messages (plus the OpenClaw variants MetaClaw sees) into `ChatMessage`s.
///
/// Content may be a string, null or an array of parts; text parts are joined with `"\n"`,
/// image/audio/file parts are an error (the policy is text-only). `developer` becomes `system`;
/// `reasoning_content` or `reasoning` on assistant messages becomes `reasoning`.
pub fn messages_from_openai(messages: &[Value]) -> Result<Vec<ChatMessage>, RenderError> {
    let mut out = Vec::with_capacity(messages.len());
    let mut next_call = 0usize;
    for (index, msg) in messages.iter().enumerate() {
        let invalid = |reason: String| RenderError::InvalidMessage { index, reason };
        let obj = msg
            .as_object()
            .ok_or_else(|| invalid("not a JSON object".into()))?;
        let role_text = obj
            .get("role")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid("missing role".into()))?;
        let role = match role_text {
            "system" | "developer" => Role::System,
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "tool" | "function" | "toolResult" | "ipython" => Role::Tool,
            other => return Err(invalid(format!("unknown role {other:?}"))),
        };
        let mut message = ChatMessage::new(role, String::new());
        let mut part_calls = Vec::new();
        message.content = content_text(obj.get("content"), &mut part_calls, &mut next_call)?;

        if role == Role::Assistant {
            message.reasoning = ["reasoning_content", "reasoning"]
                .iter()
                .find_map(|k| obj.get(*k).and_then(Value::as_str))
                .map(str::to_owned);
            if let Some(calls) = obj.get("tool_calls").and_then(Value::as_array) {
                for call in calls {
                    let f = call.get("function").unwrap_or(call);
                    let name = f
                        .get("name")
                        .and_then(Value::as_str)
                        .ok_or_else(|| invalid("tool call without a function name".into()))?;
                    let id = call
                        .get("id")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                        .unwrap_or_else(|| format!("call_{next_call}"));
                    next_call += 1;
                    message.tool_calls.push(ToolCall {
                        id,
                        name: name.to_owned(),
                        arguments: arguments_text(f.get("arguments")),
                    });
                }
            }
            message.tool_calls.extend(part_calls);
        }
        if role == Role::Tool {
            message.tool_call_id = ["tool_call_id", "toolCallId"]
                .iter()
                .find_map(|k| obj.get(*k).and_then(Value::as_str))
                .map(str::to_owned);
        }
        message.name = ["name", "toolName"]
            .iter()
            .find_map(|k| obj.get(*k).and_then(Value::as_str))
            .map(str::to_owned);
        out.push(message);
    }
    Ok(out)
}

fn content_text(
    content: Option<&Value>,
    calls: &mut Vec<ToolCall>,
    next_call: &mut usize,
) -> Result<String, RenderError> {
    match content {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Array(parts)) => {
            let mut texts: Vec<&str> = Vec::new();
            for part in parts {
                if let Some(s) = part.as_str() {
                    texts.push(s);
                    continue;
                }
                let kind = part.get("type").and_then(Value::as_str).unwrap_or("");
                match kind {
                    "text" | "input_text" | "output_text" => {
                        texts.push(part.get("text").and_then(Value::as_str).unwrap_or(""));
                    }
                    // OpenClaw puts assistant tool calls in content parts.
                    "toolCall" | "tool_use" => {
                        let name = part.get("name").and_then(Value::as_str).unwrap_or("");
                        let id = part
                            .get("id")
                            .and_then(Value::as_str)
                            .map(str::to_owned)
                            .unwrap_or_else(|| format!("call_{next_call}"));
                        *next_call += 1;
                        let args = part.get("arguments").or_else(|| part.get("input"));
                        calls.push(ToolCall {
                            id,
                            name: name.to_owned(),
                            arguments: arguments_text(args),
                        });
                    }
                    other => {
                        let other = if other.is_empty() { "<untyped>" } else { other };
                        return Err(RenderError::UnsupportedContent(other.to_owned()));
                    }
                }
            }
            Ok(texts.join("\n"))
        }
        Some(other) => Ok(other.to_string()),
    }
}

/// OpenAI sends arguments as a JSON string; some clients send the object itself.
fn arguments_text(args: Option<&Value>) -> String {
    match args {
        None | Some(Value::Null) => "{}".to_owned(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// Reads `tools` from a request: OpenAI `{type: function, function: {...}}` entries, flat
/// `{name, description, parameters}` ones, or Anthropic `{name, description, input_schema}`.
/// Entries without a name are skipped.
pub fn tools_from_openai(tools: &Value) -> Vec<ToolSpec> {
    let Some(list) = tools.as_array() else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|t| {
            let f = t.get("function").unwrap_or(t);
            let name = f.get("name")?.as_str()?.to_owned();
            let description = f
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            let parameters = f
                .get("parameters")
                .or_else(|| f.get("input_schema"))
                .cloned()
                .unwrap_or_else(|| serde_json::json!({"type": "object", "properties": {}}));
            Some(ToolSpec {
                name,
                description,
                parameters,
            })
        })
        .collect()
}
