//! `max_context_tokens`: drop the oldest conversation messages until the prompt fits.
//!
//! One pass over the messages (O(n)); a tool result always leaves together with the assistant
//! message that called it, so no tool result is ever orphaned.

use metaclaw_domain::Dialect;
use serde_json::{Map, Value};

/// Counts tokens of text. The default estimates; a real tokenizer can be plugged in.
pub trait TokenCounter: Send + Sync {
    fn count(&self, text: &str) -> u64;
}

/// About four bytes of UTF-8 per token, the usual rule of thumb for BPE vocabularies.
#[derive(Debug, Default, Clone, Copy)]
pub struct EstimateCounter;

impl TokenCounter for EstimateCounter {
    fn count(&self, text: &str) -> u64 {
        (text.len() as u64).div_ceil(4)
    }
}

/// Per-message framing overhead (role markers, separators).
const MESSAGE_OVERHEAD: u64 = 4;
/// What providers reserve for the answer when the request does not say.
const DEFAULT_OUTPUT_RESERVE: u64 = 2048;

fn value_tokens(counter: &dyn TokenCounter, v: &Value) -> u64 {
    match v {
        Value::String(s) => counter.count(s),
        Value::Array(items) => items.iter().map(|i| value_tokens(counter, i)).sum(),
        Value::Object(map) => map.values().map(|i| value_tokens(counter, i)).sum(),
        _ => 0,
    }
}

/// The conversation list being truncated and how its entries group.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Shape {
    Chat,
    Messages,
    /// Responses `input` items: a user message opens an exchange; everything after it (answers,
    /// function calls and their outputs, reasoning) belongs to it.
    Input,
}

impl Shape {
    fn of(dialect: Dialect) -> Self {
        match dialect {
            Dialect::OpenAi => Self::Chat,
            Dialect::Anthropic => Self::Messages,
        }
    }

    fn key(self) -> &'static str {
        match self {
            Self::Chat | Self::Messages => "messages",
            Self::Input => "input",
        }
    }

    fn is_system(self, m: &Value) -> bool {
        self != Self::Messages
            && matches!(
                m.get("role").and_then(Value::as_str),
                Some("system" | "developer")
            )
    }

    /// Does this entry continue the previous one's exchange?
    fn continues(self, m: &Value) -> bool {
        match self {
            Self::Chat => m.get("role").and_then(Value::as_str) == Some("tool"),
            Self::Messages => m
                .get("content")
                .and_then(Value::as_array)
                .is_some_and(|blocks| {
                    blocks
                        .iter()
                        .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
                }),
            Self::Input => m.get("role").and_then(Value::as_str) != Some("user"),
        }
    }
}

/// Prompt parts that are never dropped: the system prompt (`system`, `instructions`) and tools.
fn fixed_tokens(body: &Map<String, Value>, counter: &dyn TokenCounter) -> u64 {
    ["system", "instructions", "tools"]
        .iter()
        .filter_map(|k| body.get(*k))
        .map(|v| value_tokens(counter, v))
        .sum()
}

fn entry_tokens(counter: &dyn TokenCounter, m: &Value) -> u64 {
    MESSAGE_OVERHEAD + value_tokens(counter, m)
}

/// The estimate truncation works with, of a whole request's prompt (system prompt, tools and
/// every message with its framing): also the answer of `/v1/messages/count_tokens` when the
/// upstream cannot count.
pub fn prompt_tokens(
    body: &Map<String, Value>,
    dialect: Dialect,
    counter: &dyn TokenCounter,
) -> u64 {
    let messages = match body.get(Shape::of(dialect).key()) {
        Some(Value::Array(list)) => list.iter().map(|m| entry_tokens(counter, m)).sum(),
        _ => 0,
    };
    fixed_tokens(body, counter) + messages
}

/// Truncate `body.messages` in place. Returns how many messages were dropped.
pub fn truncate(
    body: &mut Map<String, Value>,
    max_context_tokens: u64,
    dialect: Dialect,
    counter: &dyn TokenCounter,
) -> usize {
    truncate_list(body, max_context_tokens, Shape::of(dialect), counter)
}

/// Truncate a Responses request's `input` items in place (whole exchanges, oldest first).
/// Returns how many items were dropped.
pub fn truncate_input(
    body: &mut Map<String, Value>,
    max_context_tokens: u64,
    counter: &dyn TokenCounter,
) -> usize {
    truncate_list(body, max_context_tokens, Shape::Input, counter)
}

fn truncate_list(
    body: &mut Map<String, Value>,
    max_context_tokens: u64,
    shape: Shape,
    counter: &dyn TokenCounter,
) -> usize {
    if max_context_tokens == 0 {
        return 0;
    }
    let reserve = ["max_completion_tokens", "max_tokens", "max_output_tokens"]
        .iter()
        .find_map(|k| body.get(*k).and_then(Value::as_u64))
        .unwrap_or(DEFAULT_OUTPUT_RESERVE);
    let Some(budget) = max_context_tokens.checked_sub(reserve).filter(|b| *b > 0) else {
        return 0;
    };
    let fixed = fixed_tokens(body, counter);
    let Some(Value::Array(messages)) = body.get_mut(shape.key()) else {
        return 0;
    };

    let cost: Vec<u64> = messages.iter().map(|m| entry_tokens(counter, m)).collect();
    let total: u64 = fixed + cost.iter().sum::<u64>();
    if total <= budget {
        return 0;
    }

    // Units of non-system messages, as (start index, cost), oldest first.
    let mut units: Vec<(usize, u64)> = Vec::new();
    let mut system_cost = fixed;
    for (i, m) in messages.iter().enumerate() {
        if shape.is_system(m) {
            system_cost += cost[i];
        } else if shape.continues(m) && !units.is_empty() {
            if let Some(last) = units.last_mut() {
                last.1 += cost[i];
            }
        } else {
            units.push((i, cost[i]));
        }
    }
    if units.len() <= 1 {
        return 0;
    }

    // Keep the newest units that fit; always at least the newest one.
    let mut used = system_cost;
    let mut first_kept = units.len() - 1;
    used += units[first_kept].1;
    while first_kept > 0 && used + units[first_kept - 1].1 <= budget {
        first_kept -= 1;
        used += units[first_kept].1;
    }
    // Anthropic conversations must open with a user message.
    if shape == Shape::Messages {
        while first_kept + 1 < units.len()
            && messages[units[first_kept].0]
                .get("role")
                .and_then(Value::as_str)
                == Some("assistant")
        {
            first_kept += 1;
        }
    }
    let cut = units[first_kept].0;
    let before = messages.len();
    let mut index = 0;
    messages.retain(|m| {
        let keep = index >= cut || shape.is_system(m);
        index += 1;
        keep
    });
    before - messages.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn body(messages: Value, max_tokens: u64) -> Map<String, Value> {
        json!({"messages": messages, "max_tokens": max_tokens})
            .as_object()
            .unwrap()
            .clone()
    }

    fn roles(b: &Map<String, Value>) -> Vec<String> {
        b["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                let role = m["role"].as_str().unwrap();
                match m.get("content").and_then(Value::as_str) {
                    Some(c) => format!("{role}:{c}"),
                    None => role.to_owned(),
                }
            })
            .collect()
    }

    fn text(n: usize) -> String {
        "x".repeat(n * 4)
    }

    #[test]
    fn fits_unchanged_and_zero_disables() {
        let mut b = body(json!([{"role": "user", "content": "hi"}]), 10);
        assert_eq!(truncate(&mut b, 1000, Dialect::OpenAi, &EstimateCounter), 0);
        let mut big = body(
            json!([{"role": "user", "content": text(5000)}, {"role": "user", "content": "x"}]),
            10,
        );
        assert_eq!(truncate(&mut big, 0, Dialect::OpenAi, &EstimateCounter), 0);
    }

    #[test]
    fn drops_oldest_keeps_system_and_newest() {
        let mut b = body(
            json!([
                {"role": "system", "content": "sys"},
                {"role": "user", "content": text(100)},
                {"role": "assistant", "content": text(100)},
                {"role": "user", "content": "last"}
            ]),
            10,
        );
        let dropped = truncate(&mut b, 100, Dialect::OpenAi, &EstimateCounter);
        assert_eq!(dropped, 2);
        assert_eq!(roles(&b), ["system:sys", "user:last"]);
    }

    #[test]
    fn never_orphans_a_tool_result() {
        let mut b = body(
            json!([
                {"role": "system", "content": "s"},
                {"role": "user", "content": text(50)},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
                    "function": {"name": "read", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": text(40)},
                {"role": "user", "content": "q"}
            ]),
            10,
        );
        // Budget fits the last user message and the tool result alone, but not the call too.
        truncate(&mut b, 10 + 60, Dialect::OpenAi, &EstimateCounter);
        let r = roles(&b);
        assert!(
            !r.iter().any(|m| m.starts_with("tool")),
            "tool result kept without its call: {r:?}"
        );
        assert_eq!(r.last().unwrap(), "user:q");
        // A bigger budget keeps call and result together.
        let mut b2 = body(
            json!([
                {"role": "user", "content": text(500)},
                {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
                    "function": {"name": "read", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "ok"},
                {"role": "user", "content": "q"}
            ]),
            10,
        );
        truncate(&mut b2, 10 + 100, Dialect::OpenAi, &EstimateCounter);
        assert_eq!(roles(&b2), ["assistant", "tool:ok", "user:q"]);
    }

    #[test]
    fn responses_input_drops_whole_exchanges_and_keeps_developer_items() {
        let mut b = json!({"instructions": "sys", "max_output_tokens": 10, "input": [
            {"type": "message", "role": "developer", "content": "base"},
            {"type": "message", "role": "user", "content": text(100)},
            {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": text(100)},
            {"role": "user", "content": "last"}
        ]})
        .as_object()
        .unwrap()
        .clone();
        let dropped = truncate_input(&mut b, 100, &EstimateCounter);
        assert_eq!(
            dropped, 3,
            "the call and its output leave with their exchange"
        );
        let kept: Vec<&str> = b["input"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["content"].as_str().unwrap())
            .collect();
        assert_eq!(kept, ["base", "last"]);
    }

    #[test]
    fn prompt_tokens_counts_system_tools_and_messages() {
        let b = json!({"system": "abcd", "tools": [{"name": "abcdefgh"}],
            "messages": [{"role": "user", "content": "abcd"}]})
        .as_object()
        .unwrap()
        .clone();
        // system 1 + tools 2 + message (overhead 4 + "user" 1 + "abcd" 1)
        assert_eq!(prompt_tokens(&b, Dialect::Anthropic, &EstimateCounter), 9);
    }

    #[test]
    fn keeps_newest_even_if_too_big() {
        let mut b = body(
            json!([{"role": "user", "content": "a"}, {"role": "user", "content": text(1000)}]),
            10,
        );
        truncate(&mut b, 50, Dialect::OpenAi, &EstimateCounter);
        assert_eq!(b["messages"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn anthropic_starts_with_user_and_keeps_tool_pairs() {
        let mut b = body(
            json!([
                {"role": "user", "content": text(200)},
                {"role": "assistant", "content": [{"type": "text", "text": text(10)}]},
                {"role": "user", "content": "u2"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "read", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "r"}]}
            ]),
            10,
        );
        b.insert("system".into(), json!("sys"));
        truncate(&mut b, 10 + 40, Dialect::Anthropic, &EstimateCounter);
        let msgs = b["messages"].as_array().unwrap();
        assert_eq!(msgs[0]["role"], "user");
        assert_eq!(msgs.len(), 3);
    }
}
