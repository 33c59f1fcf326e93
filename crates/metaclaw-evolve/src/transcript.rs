//! A session as the evolver sees it: the user's words, tool results and the assistant's
//! answers turn by turn, with the signals that show what went wrong or right.

use std::sync::LazyLock;

use metaclaw_domain::{Dialect, TurnStatus, TurnType};
use regex::Regex;
use serde::Serialize;
use serde_json::Value;

use crate::redact::redact;

/// One stored turn, as the evolver needs it.
#[derive(Debug, Clone)]
pub struct TurnView {
    pub turn_id: String,
    pub seq: u64,
    pub turn_type: TurnType,
    pub api: Dialect,
    pub request: Value,
    pub response: Option<Value>,
    pub status: TurnStatus,
    /// Explicit thumbs (-1 / +1) and note.
    pub feedback: Option<(i8, Option<String>)>,
    /// Judge score when RL is on.
    pub reward: Option<f64>,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum SignalKind {
    /// The user's next message corrected the assistant.
    Correction,
    /// A tool call in the turn came back with an error.
    ToolError,
    NegativeFeedback,
    PositiveFeedback,
    LowReward,
    HighReward,
}

#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Signal {
    pub turn_id: String,
    pub kind: SignalKind,
    pub detail: String,
}

static CORRECTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?ix)^\s*(no\b|nope\b|wrong\b|incorrect\b|not\s+quite\b|actually\b|that'?s\s+not\b|that\s+is\s+not\b|i\s+(said|asked|meant|told\s+you)\b|stop\b)
         | \b(that'?s\s+wrong|that\s+is\s+wrong|not\s+what\s+i\s+(asked|wanted|meant)|you\s+(misunderstood|forgot|ignored|missed)|(didn'?t|doesn'?t|does\s+not|did\s+not)\s+work|still\s+(fails|failing|broken|wrong|doesn'?t)|i\s+already\s+(said|told))\b",
    )
    .expect("correction pattern compiles")
});

/// The user asks for the same thing again: the answer did not do.
static RETRY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?ix)^\s*(retry\b|redo\b|regenerate\b)
         | \b(try\s+(it\s+|that\s+)?again|one\s+more\s+time|give\s+it\s+another\s+(go|try)|do\s+it\s+again)\b",
    )
    .expect("retry pattern compiles")
});

static TOOL_ERROR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(traceback \(most recent call last\)|\berror\b|\bexception\b|command not found|no such file|permission denied|exit (code|status) [1-9]|\bfailed\b|\bpanicked\b|segmentation fault)",
    )
    .expect("tool error pattern compiles")
});

const PIECE_CHARS: usize = 1500;

fn truncate(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}… [{} more characters]", &text[..cut], text.len() - cut)
}

fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| match p.get("type").and_then(Value::as_str) {
                Some("text") | None => p.get("text").and_then(Value::as_str).map(str::to_owned),
                Some("tool_result") => p.get("content").map(text_of),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn messages(turn: &TurnView) -> &[Value] {
    turn.request
        .get("messages")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The user's own words in this turn (agent scaffolding removed).
pub fn user_text(turn: &TurnView) -> String {
    let users: Vec<Value> = messages(turn)
        .iter()
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("user"))
        .filter(|m| !is_tool_result_carrier(m))
        .cloned()
        .collect();
    let Some(last) = users
        .iter()
        .rev()
        .map(|m| m.get("content").map(text_of).unwrap_or_default())
        .find(|t| !t.contains("<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>"))
    else {
        return String::new();
    };
    metaclaw_skills::query::clean(&last)
}

fn is_tool_result_carrier(m: &Value) -> bool {
    m.get("content")
        .and_then(Value::as_array)
        .is_some_and(|blocks| {
            !blocks.is_empty()
                && blocks
                    .iter()
                    .all(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
        })
}

/// Tool results that arrived with this turn's request (those after the last assistant message).
pub fn new_tool_results(turn: &TurnView) -> Vec<(String, bool)> {
    tool_results_in(messages(turn))
}

fn tool_results_in(msgs: &[Value]) -> Vec<(String, bool)> {
    let start = msgs
        .iter()
        .rposition(|m| m.get("role").and_then(Value::as_str) == Some("assistant"))
        .map_or(0, |i| i + 1);
    let mut out = Vec::new();
    for m in &msgs[start..] {
        match m.get("role").and_then(Value::as_str) {
            Some("tool") => {
                let text = m.get("content").map(text_of).unwrap_or_default();
                out.push((text, false));
            }
            Some("user") if is_tool_result_carrier(m) => {
                for b in m["content"].as_array().into_iter().flatten() {
                    let flagged = b.get("is_error").and_then(Value::as_bool) == Some(true);
                    out.push((b.get("content").map(text_of).unwrap_or_default(), flagged));
                }
            }
            _ => {}
        }
    }
    out
}

/// What a main turn's request says about the answer before it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FollowUpSignals {
    /// The request ends with the user's own message, and it corrects the previous answer.
    pub correction: bool,
    /// The request ends with the user asking again: "try again", or the same message as
    /// their previous one.
    pub retry: bool,
    /// Results of the previous answer's tool calls came back with errors.
    pub tool_error: bool,
}

/// Reads a request body (`messages` in either dialect) for the signals [`signals`] pins on
/// the previous turn. A request that ends with tool results is the agent continuing, not
/// the user speaking, so only the tool results count then.
pub fn follow_up(request: &Value) -> FollowUpSignals {
    let msgs = request
        .get("messages")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    // The user's own words in a message (scaffolding and tool results are not).
    let words = |m: &Value| {
        (m.get("role").and_then(Value::as_str) == Some("user") && !is_tool_result_carrier(m))
            .then(|| m.get("content").map(text_of))
            .flatten()
            .filter(|t| !t.contains("<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>"))
            .map(|t| metaclaw_skills::query::clean(&t))
    };
    let said = msgs.last().and_then(words);
    let correction = said.as_deref().is_some_and(|t| CORRECTION.is_match(t));
    let asked_before = msgs
        .iter()
        .rev()
        .skip(1)
        .find_map(words)
        .is_some_and(|before| said.as_deref().is_some_and(|t| same_words(t, &before)));
    let retry = said
        .as_deref()
        .is_some_and(|t| asked_before || RETRY.is_match(t));
    let tool_error = tool_results_in(msgs)
        .iter()
        .any(|(text, flagged)| *flagged || TOOL_ERROR.is_match(text));
    FollowUpSignals {
        correction,
        retry,
        tool_error,
    }
}

/// The same message, give or take case and spacing.
fn same_words(a: &str, b: &str) -> bool {
    let norm = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    let a = norm(a);
    !a.is_empty() && a == norm(b)
}

/// What the assistant answered: text and tool calls, in either dialect.
pub fn assistant_text(turn: &TurnView) -> String {
    let Some(resp) = &turn.response else {
        return String::new();
    };
    let mut parts = Vec::new();
    if let Some(msg) = resp.pointer("/choices/0/message") {
        if let Some(t) = msg.get("content").map(text_of).filter(|t| !t.is_empty()) {
            parts.push(t);
        }
        for c in msg
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            parts.push(format!(
                "[tool call] {}({})",
                c.pointer("/function/name")
                    .and_then(Value::as_str)
                    .unwrap_or("?"),
                c.pointer("/function/arguments")
                    .and_then(Value::as_str)
                    .unwrap_or("")
            ));
        }
    } else if let Some(blocks) = resp.get("content").and_then(Value::as_array) {
        for b in blocks {
            match b.get("type").and_then(Value::as_str) {
                Some("text") => {
                    parts.extend(b.get("text").and_then(Value::as_str).map(str::to_owned))
                }
                Some("tool_use") => parts.push(format!(
                    "[tool call] {}({})",
                    b.get("name").and_then(Value::as_str).unwrap_or("?"),
                    b.get("input").map(Value::to_string).unwrap_or_default()
                )),
                _ => {}
            }
        }
    }
    parts.join("\n")
}

/// Signals in a session's main turns, oldest first.
pub fn signals(turns: &[TurnView]) -> Vec<Signal> {
    let main: Vec<&TurnView> = turns
        .iter()
        .filter(|t| t.turn_type == TurnType::Main)
        .collect();
    let mut out = Vec::new();
    for (i, turn) in main.iter().enumerate() {
        if i > 0 {
            let said = user_text(turn);
            if CORRECTION.is_match(&said) {
                out.push(Signal {
                    turn_id: main[i - 1].turn_id.clone(),
                    kind: SignalKind::Correction,
                    detail: truncate(&redact(&said), 300),
                });
            }
        }
        for (text, flagged) in new_tool_results(turn) {
            if flagged || TOOL_ERROR.is_match(&text) {
                out.push(Signal {
                    turn_id: turn.turn_id.clone(),
                    kind: SignalKind::ToolError,
                    detail: truncate(&redact(&text), 300),
                });
            }
        }
        if let Some((rating, note)) = &turn.feedback {
            let kind = if *rating < 0 {
                SignalKind::NegativeFeedback
            } else {
                SignalKind::PositiveFeedback
            };
            out.push(Signal {
                turn_id: turn.turn_id.clone(),
                kind,
                detail: redact(note.as_deref().unwrap_or("")),
            });
        }
        match turn.reward {
            Some(r) if r < 0.0 => out.push(Signal {
                turn_id: turn.turn_id.clone(),
                kind: SignalKind::LowReward,
                detail: format!("judge score {r}"),
            }),
            Some(r) if r > 0.0 => out.push(Signal {
                turn_id: turn.turn_id.clone(),
                kind: SignalKind::HighReward,
                detail: format!("judge score {r}"),
            }),
            _ => {}
        }
    }
    out
}

/// The redacted transcript sent to the evolver: most recent turns within `budget` characters.
pub fn render(turns: &[TurnView], budget: usize) -> String {
    let mut pieces: Vec<String> = Vec::new();
    for turn in turns
        .iter()
        .filter(|t| t.turn_type == TurnType::Main && t.status == TurnStatus::Ok)
    {
        let mut piece = format!("### Turn {} (id {})\n", turn.seq, turn.turn_id);
        let user = user_text(turn);
        if !user.is_empty() {
            piece.push_str(&format!("User: {}\n", truncate(&user, PIECE_CHARS)));
        }
        for (text, flagged) in new_tool_results(turn) {
            let label = if flagged || TOOL_ERROR.is_match(&text) {
                "Tool result (error)"
            } else {
                "Tool result"
            };
            piece.push_str(&format!("{label}: {}\n", truncate(&text, PIECE_CHARS / 2)));
        }
        let answer = assistant_text(turn);
        if !answer.is_empty() {
            piece.push_str(&format!("Assistant: {}\n", truncate(&answer, PIECE_CHARS)));
        }
        pieces.push(redact(&piece));
    }
    let mut kept = Vec::new();
    let mut used = 0;
    for p in pieces.into_iter().rev() {
        if used + p.len() > budget && !kept.is_empty() {
            break;
        }
        used += p.len();
        kept.push(p);
    }
    kept.reverse();
    kept.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn turn(seq: u64, messages: Value, answer: &str) -> TurnView {
        TurnView {
            turn_id: format!("t{seq}"),
            seq,
            turn_type: TurnType::Main,
            api: Dialect::OpenAi,
            request: json!({"messages": messages}),
            response: Some(
                json!({"choices": [{"message": {"role": "assistant", "content": answer}}]}),
            ),
            status: TurnStatus::Ok,
            feedback: None,
            reward: None,
        }
    }

    #[test]
    fn corrections_point_at_the_corrected_turn() {
        let t1 = turn(
            1,
            json!([{"role": "user", "content": "convert 10 miles to km"}]),
            "10 miles is 1.6 km",
        );
        let t2 = turn(
            2,
            json!([{"role": "user", "content": "convert 10 miles to km"}, {"role": "assistant", "content": "1.6"},
            {"role": "user", "content": "No, that's wrong, it is 16.09 km"}]),
            "Sorry, 16.09 km.",
        );
        let t3 = turn(
            3,
            json!([{"role": "user", "content": "great, now 5 miles"}]),
            "8.05 km",
        );
        let s = signals(&[t1, t2, t3]);
        assert_eq!(s.len(), 1, "{s:?}");
        assert_eq!(s[0].kind, SignalKind::Correction);
        assert_eq!(s[0].turn_id, "t1");
        for ok in [
            "Nothing else, thanks",
            "Now do the same for the billing service",
        ] {
            assert!(!CORRECTION.is_match(ok), "{ok}");
        }
        for bad in [
            "I said Celsius, not Fahrenheit",
            "that didn't work either",
            "you forgot the tests",
            "Actually, use tabs",
        ] {
            assert!(CORRECTION.is_match(bad), "{bad}");
        }
    }

    #[test]
    fn tool_errors_feedback_and_rewards() {
        let mut t = turn(
            1,
            json!([{"role": "user", "content": "run it"},
            {"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "exec", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c", "content": "bash: pytest: command not found"}]),
            "Installing pytest",
        );
        t.feedback = Some((-1, Some("too slow".into())));
        t.reward = Some(1.0);
        let kinds: Vec<SignalKind> = signals(&[t]).into_iter().map(|s| s.kind).collect();
        assert_eq!(
            kinds,
            [
                SignalKind::ToolError,
                SignalKind::NegativeFeedback,
                SignalKind::HighReward
            ]
        );
    }

    #[test]
    fn follow_up_reads_the_users_last_message_and_new_tool_results() {
        let corrected = json!({"messages": [
            {"role": "user", "content": "convert 10 miles"},
            {"role": "assistant", "content": "1.6 km"},
            {"role": "user", "content": "No, that's wrong"}]});
        assert_eq!(
            follow_up(&corrected),
            FollowUpSignals {
                correction: true,
                retry: false,
                tool_error: false
            }
        );
        // The agent continuing after a tool call: the user's old words are not a new
        // correction, but the failed tool result is an error of the previous answer.
        let tool_loop = json!({"messages": [
            {"role": "user", "content": "No, that's wrong, run the tests"},
            {"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "exec", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c", "content": "bash: pytest: command not found"}]});
        assert_eq!(
            follow_up(&tool_loop),
            FollowUpSignals {
                correction: false,
                retry: false,
                tool_error: true
            }
        );
        let anthropic = json!({"messages": [
            {"role": "assistant", "content": [{"type": "tool_use", "id": "u", "name": "x", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "u", "content": "fine", "is_error": true}]}]});
        assert!(follow_up(&anthropic).tool_error);
        let fine = json!({"messages": [{"role": "user", "content": "great, now 5 miles"}]});
        assert_eq!(follow_up(&fine), FollowUpSignals::default());
        assert_eq!(
            follow_up(&json!({"input": "x"})),
            FollowUpSignals::default()
        );
    }

    #[test]
    fn follow_up_sees_the_user_asking_again() {
        let again = json!({"messages": [
            {"role": "user", "content": "Write a haiku about rust"},
            {"role": "assistant", "content": "Metal turns to red"},
            {"role": "user", "content": "  write a haiku about  Rust"}]});
        assert!(follow_up(&again).retry);
        assert!(!follow_up(&again).correction);
        for asked in [
            "try again",
            "Please try that again",
            "Retry",
            "one more time, shorter",
        ] {
            let req = json!({"messages": [
                {"role": "user", "content": "a haiku"},
                {"role": "assistant", "content": "x"},
                {"role": "user", "content": asked}]});
            assert!(follow_up(&req).retry, "{asked}");
        }
        for fine in ["now a limerick", "again, thanks a lot for the first one"] {
            let req = json!({"messages": [
                {"role": "user", "content": "a haiku"},
                {"role": "assistant", "content": "x"},
                {"role": "user", "content": fine}]});
            assert!(!follow_up(&req).retry, "{fine}");
        }
        // The agent continuing after a tool call is not the user asking again.
        let tool_loop = json!({"messages": [
            {"role": "user", "content": "a haiku"},
            {"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "exec", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c", "content": "ok"}]});
        assert!(!follow_up(&tool_loop).retry);
    }

    #[test]
    fn transcript_is_redacted_and_bounded() {
        let t1 = turn(
            1,
            json!([{"role": "user", "content": "my key is sk-abcdefghijklmnopqrstu123, deploy please"}]),
            "ok",
        );
        let t2 = turn(
            2,
            json!([{"role": "user", "content": "x".repeat(5000)}]),
            "done",
        );
        let text = render(&[t1.clone(), t2], 100_000);
        assert!(!text.contains("sk-abcdefghijklmnopqrstu123"));
        assert!(text.contains("### Turn 1") && text.contains("more characters"));
        let small = render(
            &[
                t1,
                turn(3, json!([{"role": "user", "content": "last"}]), "a"),
            ],
            60,
        );
        assert!(
            !small.contains("### Turn 1") && small.contains("### Turn 3"),
            "{small}"
        );
    }
}
