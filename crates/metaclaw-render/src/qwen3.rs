//! Qwen3 ChatML: `<|im_start|>{role}\n{content}<|im_end|>` joined by `\n`, following the HF
//! chat template of Qwen3 (hybrid thinking) and Qwen3-*-Instruct-2507 (no think tags).

use crate::json::python_dumps;
use crate::message::{ChatMessage, Role, ToolCall, ToolSpec};
use crate::parse::{self, Piece};
use crate::renderer::{Renderer, RendererKind, TokenBuf};

const IM_START: &str = "<|im_start|>";
const IM_END: &str = "<|im_end|>";
const THINK: &str = "<think>";
const THINK_END: &str = "</think>";
const TOOL_CALL: &str = "<tool_call>";
const TOOL_CALL_END: &str = "</tool_call>";
const TOOL_RESPONSE: &str = "<tool_response>";
const TOOL_RESPONSE_END: &str = "</tool_response>";

fn thinks(r: &Renderer) -> bool {
    r.kind() == RendererKind::Qwen3
}

pub(crate) fn render_prompt(
    r: &Renderer,
    buf: &mut TokenBuf<'_>,
    messages: &[ChatMessage],
    tools: &[ToolSpec],
) {
    let system = messages.first().filter(|m| m.role == Role::System);
    if !tools.is_empty() {
        buf.special(IM_START);
        buf.text("system\n");
        if let Some(sys) = system {
            buf.text(&sys.content);
            buf.text("\n\n");
        }
        tools_section(buf, tools);
        buf.special(IM_END);
        buf.text("\n");
    } else if let Some(sys) = system {
        header(buf, "system");
        buf.text(&sys.content);
        buf.special(IM_END);
        buf.text("\n");
    }

    // HF keeps reasoning only for assistant turns after the last real user query (the current
    // agentic turn); earlier turns lose it unless `keep_thinking_history`.
    let last_query = messages
        .iter()
        .rposition(|m| {
            m.role == Role::User
                && !(m.content.starts_with(TOOL_RESPONSE) && m.content.ends_with(TOOL_RESPONSE_END))
        })
        .unwrap_or(messages.len().saturating_sub(1));
    let keep_all = r.options().keep_thinking_history;

    for (i, m) in messages.iter().enumerate() {
        let last = i + 1 == messages.len();
        match m.role {
            Role::System if i == 0 => {}
            Role::User | Role::System => {
                header(buf, m.role.as_str());
                buf.text(&m.content);
                buf.special(IM_END);
                buf.text("\n");
            }
            Role::Assistant => {
                let (reasoning, content) = split_reasoning(m);
                header(buf, "assistant");
                let show =
                    thinks(r) && (i > last_query || keep_all) && (last || !reasoning.is_empty());
                assistant_body(buf, &reasoning, &content, m, show);
                buf.text("\n");
            }
            Role::Tool => {
                // Consecutive tool results share one user message.
                if i == 0 || messages[i - 1].role != Role::Tool {
                    buf.special(IM_START);
                    buf.text("user");
                }
                buf.text("\n");
                buf.special(TOOL_RESPONSE);
                buf.text("\n");
                buf.text(&m.content);
                buf.text("\n");
                buf.special(TOOL_RESPONSE_END);
                if last || messages[i + 1].role != Role::Tool {
                    buf.special(IM_END);
                    buf.text("\n");
                }
            }
        }
    }

    header(buf, "assistant");
    if thinks(r) && !r.options().enable_thinking {
        buf.special(THINK);
        buf.text("\n\n");
        buf.special(THINK_END);
        buf.text("\n\n");
    }
}

pub(crate) fn render_completion(r: &Renderer, buf: &mut TokenBuf<'_>, m: &ChatMessage) {
    let (reasoning, content) = split_reasoning(m);
    assistant_body(
        buf,
        &reasoning,
        &content,
        m,
        thinks(r) && m.reasoning.is_some(),
    );
}

/// An assistant message after its header, through its end token: the think block when
/// shown, the content, the tool calls. The same in history and in a completion, so a
/// rendered conversation always extends its prompt.
fn assistant_body(
    buf: &mut TokenBuf<'_>,
    reasoning: &str,
    content: &str,
    m: &ChatMessage,
    show_thinking: bool,
) {
    if show_thinking {
        think_block(buf, reasoning);
        buf.text(content.trim_start_matches('\n'));
    } else {
        buf.text(content);
    }
    tool_calls(buf, content, &m.tool_calls);
    buf.special(IM_END);
}

fn header(buf: &mut TokenBuf<'_>, role: &str) {
    buf.special(IM_START);
    buf.text(role);
    buf.text("\n");
}

fn think_block(buf: &mut TokenBuf<'_>, reasoning: &str) {
    buf.special(THINK);
    buf.text("\n");
    buf.text(reasoning.trim_matches('\n'));
    buf.text("\n");
    buf.special(THINK_END);
    buf.text("\n\n");
}

/// Reasoning from the field, or (as the HF template does) from a `<think>` block left inside
/// the content by a client that echoed raw output back.
fn split_reasoning(m: &ChatMessage) -> (String, String) {
    if let Some(r) = &m.reasoning {
        return (r.clone(), m.content.clone());
    }
    if let Some((before, after)) = m.content.split_once(THINK_END) {
        let reasoning = before.trim_end_matches('\n');
        let reasoning = reasoning.rsplit(THINK).next().unwrap_or(reasoning);
        let content = after.rsplit(THINK_END).next().unwrap_or(after);
        return (
            reasoning.trim_start_matches('\n').to_owned(),
            content.trim_start_matches('\n').to_owned(),
        );
    }
    (String::new(), m.content.clone())
}

fn tool_calls(buf: &mut TokenBuf<'_>, content: &str, calls: &[ToolCall]) {
    for (j, call) in calls.iter().enumerate() {
        if j > 0 || !content.is_empty() {
            buf.text("\n");
        }
        buf.special(TOOL_CALL);
        // Arguments are a JSON string in OpenAI messages; HF renders such strings verbatim.
        buf.text(&format!(
            "\n{{\"name\": \"{}\", \"arguments\": {}}}\n",
            call.name, call.arguments
        ));
        buf.special(TOOL_CALL_END);
    }
}

/// The `# Tools` system section of the Qwen3 template. Its literal `<tool_call>` tags are
/// special ids, as they are when HF tokenises the rendered template.
fn tools_section(buf: &mut TokenBuf<'_>, tools: &[ToolSpec]) {
    buf.text(
        "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n\
         You are provided with function signatures within <tools></tools> XML tags:\n<tools>",
    );
    for tool in tools {
        buf.text("\n");
        buf.text(&python_dumps(&tool.to_openai()));
    }
    buf.text(
        "\n</tools>\n\nFor each function call, return a json object with function name and \
         arguments within ",
    );
    buf.special(TOOL_CALL);
    buf.special(TOOL_CALL_END);
    buf.text(" XML tags:\n");
    buf.special(TOOL_CALL);
    buf.text("\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n");
    buf.special(TOOL_CALL_END);
}

pub(crate) fn parse(r: &Renderer, body: &[u32]) -> (String, Option<String>, Vec<ToolCall>) {
    let markers: &[&'static str] = if thinks(r) {
        &[THINK, THINK_END, TOOL_CALL, TOOL_CALL_END]
    } else {
        &[TOOL_CALL, TOOL_CALL_END]
    };
    let pieces = parse::segment(r.tokenizer(), body, markers);
    let (reasoning, pieces) = if thinks(r) {
        parse::take_think(pieces, THINK, THINK_END, false)
    } else {
        (None, pieces)
    };

    let mut content = String::new();
    let mut calls = Vec::new();
    let mut i = 0;
    while i < pieces.len() {
        match &pieces[i] {
            Piece::Marker(TOOL_CALL) => {
                let close = pieces[i + 1..]
                    .iter()
                    .position(|p| *p == Piece::Marker(TOOL_CALL_END))
                    .map(|k| i + 1 + k);
                let Some(close) = close else {
                    // Cut off mid-call: keep the text.
                    content.push_str(&parse::flatten(&pieces[i..]));
                    break;
                };
                let inner = &pieces[i + 1..close];
                let call = match inner {
                    [Piece::Text(json)] => parse::parse_call_json(json, calls.len()),
                    _ => None,
                };
                match call {
                    Some(call) => calls.push(call),
                    None => content.push_str(&parse::flatten(&pieces[i..=close])),
                }
                i = close + 1;
                continue;
            }
            other => content.push_str(&parse::flatten(std::slice::from_ref(other))),
        }
        i += 1;
    }
    let content = if calls.is_empty() {
        content.trim_start_matches('\n').to_owned()
    } else {
        content.trim_matches('\n').to_owned()
    };
    (content, reasoning, calls)
}
