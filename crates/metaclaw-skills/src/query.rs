//! The retrieval query is what the user actually asked, not the last message of the request:
//! agents wrap it in scaffolding that would otherwise dominate retrieval.
//! - OpenClaw: a timestamp, a Runtime line, metadata blocks and a trailing internal-context
//!   message.
//! - Claude Code: `<system-reminder>` blocks (CLAUDE.md, the date, tool notes) in the user
//!   message, and title requests (`output_config.format`).
//! - Codex: user messages holding AGENTS.md (`# AGENTS.md instructions for …`) and
//!   `<environment_context>`, items in `input` (Responses API), title requests (`text.format`).
//! - Qwen Code: a setup message with the date, OS and folder tree, and memory-extraction
//!   requests after each turn.
//! - Hermes: `<memory-context>` appended after the request by memory plugins.

use serde_json::{Map, Value};

const INTERNAL_CONTEXT: &str = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>";
/// A text part that starts with one of these is the agent's context, not the user's words.
const SCAFFOLD_STARTS: &[&str] = &[
    "# AGENTS.md instructions for",
    "<environment_context>",
    "<user_instructions>",
    "<permissions instructions>",
    "<skills_instructions>",
    "This is the Qwen Code. We are setting up the context",
];
/// Spans removed wherever they appear.
const SCAFFOLD_SPANS: &[(&str, &str)] = &[("<system-reminder>", "</system-reminder>")];
/// Everything from here on was appended by the agent.
const SCAFFOLD_TAILS: &[&str] = &["<memory-context>"];
/// The last user text of an agent's own bookkeeping request (Qwen Code's memory extraction).
const SIDE_REQUEST_STARTS: &[&str] = &["Managed memory directory:"];
/// Below this many words a message ("yes, do it") borrows context from the previous ones.
const SHORT_QUERY_WORDS: usize = 8;

/// Words in `text`, counting two CJK characters as a word (they have no spaces; "好的，就这样"
/// is short, "帮我把这个函数重构一下，拆成几个小函数" is not).
fn word_count(text: &str) -> usize {
    text.split_whitespace()
        .map(|w| {
            let cjk = w.chars().filter(|c| crate::analyzer::is_cjk(*c)).count();
            if cjk == 0 { 1 } else { cjk.div_ceil(2) }
        })
        .sum()
}
const MAX_QUERY_CHARS: usize = 2000;

/// The text parts of a message's content, each with the agent's scaffolding removed.
fn text_parts(content: &Value) -> String {
    match content {
        Value::String(s) => strip_scaffolding(s),
        Value::Array(parts) => parts
            .iter()
            .filter(|p| {
                matches!(
                    p.get("type").and_then(Value::as_str),
                    Some("text" | "input_text") | None
                )
            })
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .map(strip_scaffolding)
            .filter(|t| !t.trim().is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// One text part without the agents' wrappers: empty when the whole part is context.
fn strip_scaffolding(text: &str) -> String {
    let mut text = text.to_owned();
    for (open, close) in SCAFFOLD_SPANS {
        while let Some(start) = text.find(open) {
            let end = text[start..]
                .find(close)
                .map_or(text.len(), |e| start + e + close.len());
            text.replace_range(start..end, "");
        }
    }
    for tail in SCAFFOLD_TAILS {
        if let Some(at) = text.find(tail) {
            text.truncate(at);
        }
    }
    let trimmed = text.trim_start();
    if SCAFFOLD_STARTS.iter().any(|s| trimmed.starts_with(s)) {
        return String::new();
    }
    text
}

/// Messages that carry the user's own words, oldest first.
fn user_texts(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("user"))
        .filter(|m| m.get("type").is_none_or(|t| t == "message"))
        .map(|m| m.get("content").map(text_parts).unwrap_or_default())
        .filter(|t| !t.contains(INTERNAL_CONTEXT))
        .map(|t| clean(&t))
        .filter(|t| !t.trim().is_empty())
        .collect()
}

/// The query for a whole request body: chat completions or Anthropic `messages`, or a
/// Responses API `input` (a string or items). Empty for an agent's side requests (titles
/// with a structured output format, memory extraction), which deserve no skills.
pub fn from_body(body: &Map<String, Value>) -> String {
    let structured = |key: &str| {
        body.get(key)
            .and_then(|v| v.get("format"))
            .is_some_and(|f| !f.is_null())
    };
    if structured("output_config") || structured("text") {
        return String::new();
    }
    // Borrowed: an agent's history can run to megabytes, and this runs on every request.
    let single;
    let items: &[Value] = match (body.get("messages"), body.get("input")) {
        (Some(Value::Array(m)), _) => m,
        (_, Some(Value::Array(items))) => items,
        (_, Some(Value::String(s))) => {
            single = [serde_json::json!({"role": "user", "content": s})];
            &single
        }
        _ => return String::new(),
    };
    let last_user = items
        .iter()
        .rev()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
        .and_then(|m| m.get("content"))
        .map(raw_text)
        .unwrap_or_default();
    if SIDE_REQUEST_STARTS
        .iter()
        .any(|s| last_user.trim_start().starts_with(s))
    {
        return String::new();
    }
    from_messages(items)
}

fn raw_text(content: &Value) -> String {
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

/// Strip agent scaffolding from one user message.
pub fn clean(text: &str) -> String {
    let text = strip_scaffolding(text);
    let mut out = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim();
        if trimmed.starts_with("Runtime: agent=") {
            continue;
        }
        // "Conversation info (untrusted metadata):" followed by a fenced JSON block.
        if trimmed.ends_with("(untrusted metadata):") {
            if lines
                .peek()
                .is_some_and(|l| l.trim_start().starts_with("```"))
            {
                lines.next();
                for l in lines.by_ref() {
                    if l.trim_start().starts_with("```") {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(strip_timestamp(line));
    }
    out.join("\n").trim().to_owned()
}

/// `[Sat 2026-11-21 15:37 UTC] text` → `text`.
fn strip_timestamp(line: &str) -> &str {
    let Some(rest) = line.strip_prefix('[') else {
        return line;
    };
    let Some(end) = rest.find(']') else {
        return line;
    };
    let inside = &rest[..end];
    let looks_like_time =
        end <= 40 && inside.contains(':') && inside.chars().any(|c| c.is_ascii_digit());
    if looks_like_time {
        rest[end + 1..].trim_start()
    } else {
        line
    }
}

/// The query for a request body (`messages` in OpenAI or Anthropic form).
pub fn from_messages(messages: &[Value]) -> String {
    let texts = user_texts(messages);
    let Some(last) = texts.last() else {
        return String::new();
    };
    let mut query = last.clone();
    let mut i = texts.len() - 1;
    while word_count(&query) < SHORT_QUERY_WORDS && i > 0 {
        i -= 1;
        query = format!("{}\n{query}", texts[i]);
    }
    if query.len() > MAX_QUERY_CHARS {
        let mut cut = MAX_QUERY_CHARS;
        while !query.is_char_boundary(cut) {
            cut -= 1;
        }
        query.truncate(cut);
    }
    query
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sees_through_openclaw_scaffolding() {
        let messages = json!([
            {"role": "system", "content": "You are an agent"},
            {"role": "user", "content": "[Sat 2026-11-21 15:37 UTC] My pytest suite fails randomly on CI\n\nRuntime: agent=main | session=agent:main:main | sessionId=42f2159a-3d88-4f8e-b22a-91dcbf41ac29 | host=vm"},
            {"role": "user", "content": [{"type": "text", "text": "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nConversation data (data, not instructions):\n\"Active exec sessions:\\nnone\"\n<<<END_OPENCLAW_INTERNAL_CONTEXT>>>"}]}
        ]);
        assert_eq!(
            from_messages(messages.as_array().unwrap()),
            "My pytest suite fails randomly on CI"
        );
    }

    #[test]
    fn sees_through_coding_agents_scaffolding() {
        let claude = json!({"messages": [{"role": "user", "content": [
            {"type": "text", "text": "<system-reminder>\n# claudeMd\nRun docker compose and npm test\n</system-reminder>\n"},
            {"type": "text", "text": "why does my cron job not run", "cache_control": {"type": "ephemeral"}}]}]});
        assert_eq!(
            from_body(claude.as_object().unwrap()),
            "why does my cron job not run"
        );
        let codex = json!({"input": [
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "You are Codex"}]},
            {"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "# AGENTS.md instructions for /src\n\n<INSTRUCTIONS>use pytest</INSTRUCTIONS>"},
                {"type": "input_text", "text": "<environment_context>\n  <cwd>/src</cwd>\n</environment_context>"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "write a sql migration adding an index"}]}]});
        assert_eq!(
            from_body(codex.as_object().unwrap()),
            "write a sql migration adding an index"
        );
        let hermes = json!({"messages": [{"role": "user",
            "content": "plot my expenses by month please\n\n<memory-context>\n[System note: recalled]\n- likes cron\n</memory-context>"}]});
        assert_eq!(
            from_body(hermes.as_object().unwrap()),
            "plot my expenses by month please"
        );
        let title = json!({"text": {"format": {"type": "json_schema"}}, "input": "Generate a concise title"});
        assert_eq!(from_body(title.as_object().unwrap()), "");
    }

    #[test]
    fn strips_metadata_blocks_and_keeps_text() {
        let text = "Conversation info (untrusted metadata):\n```json\n{\"channel\": \"telegram\", \"sender\": \"x\"}\n```\n\nplot monthly revenue as a bar chart";
        assert_eq!(clean(text), "plot monthly revenue as a bar chart");
        assert_eq!(clean("[not a timestamp] keep"), "[not a timestamp] keep");
    }

    #[test]
    fn short_follow_ups_borrow_the_earlier_request() {
        let messages = json!([
            {"role": "user", "content": "write a cron job that backs up the database every night"},
            {"role": "assistant", "content": "Done: 0 2 * * * …"},
            {"role": "user", "content": "yes, and for staging too"}
        ]);
        let q = from_messages(messages.as_array().unwrap());
        assert!(q.contains("cron job") && q.ends_with("staging too"), "{q}");
    }

    #[test]
    fn chinese_requests_are_long_enough_on_their_own() {
        let messages = json!([
            {"role": "user", "content": "每天晚上备份数据库"},
            {"role": "assistant", "content": "好的"},
            {"role": "user", "content": "帮我把这个函数重构一下，拆成几个小函数"}
        ]);
        assert_eq!(
            from_messages(messages.as_array().unwrap()),
            "帮我把这个函数重构一下，拆成几个小函数"
        );
        let messages = json!([
            {"role": "user", "content": "每天晚上备份数据库"},
            {"role": "user", "content": "好的，就这样"}
        ]);
        assert!(from_messages(messages.as_array().unwrap()).starts_with("每天晚上备份数据库"));
    }

    #[test]
    fn tool_results_and_empty_requests() {
        let messages = json!([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]}]);
        assert_eq!(from_messages(messages.as_array().unwrap()), "");
        assert_eq!(from_messages(&[]), "");
    }
}
