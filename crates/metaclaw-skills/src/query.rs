//! The retrieval query is what the user actually asked, not the last message of the request:
//! agents wrap it in scaffolding (OpenClaw adds a timestamp, a Runtime line, metadata blocks
//! and a trailing internal-context message) that would otherwise dominate retrieval.

use serde_json::Value;

const INTERNAL_CONTEXT: &str = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>";
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

fn text_parts(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter(|p| matches!(p.get("type").and_then(Value::as_str), Some("text") | None))
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Messages that carry the user's own words, oldest first.
fn user_texts(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("user"))
        .map(|m| m.get("content").map(text_parts).unwrap_or_default())
        .filter(|t| !t.contains(INTERNAL_CONTEXT))
        .map(|t| clean(&t))
        .filter(|t| !t.trim().is_empty())
        .collect()
}

/// Strip agent scaffolding from one user message.
pub fn clean(text: &str) -> String {
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
