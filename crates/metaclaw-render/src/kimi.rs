//! Kimi K2 / K2.5: `<|im_system|>`, `<|im_user|>`, `<|im_assistant|>` role tokens, the role
//! name, `<|im_middle|>`, the content, `<|im_end|>`.
//!
//! Tool declarations are a `tool_declare` system message before the system prompt, holding
//! the tools with their keys sorted: K2 as compact JSON (as Tinker's `kimi_k2` renderer
//! writes them), K2.5 as TypeScript types ([`crate::typescript`], as its tokenizer's
//! `apply_chat_template` does), falling back to compact JSON for schemas that format cannot
//! express, as that tokenizer does too.
//!
//! Tool-call ids follow Kimi's `functions.{name}:{index}` convention (index counts calls across
//! the conversation); other ids (e.g. OpenAI's `call_…`) are rewritten to it when rendering and
//! tool results are matched through the same mapping, so the prompt shows the model the ids it
//! would have produced.

use std::collections::HashMap;

use crate::json::{compact, sorted_keys};
use crate::message::{ChatMessage, Role, ToolCall, ToolSpec};
use crate::parse::{self, Piece};
use crate::renderer::{Renderer, RendererKind, TokenBuf};
use crate::typescript;

const IM_SYSTEM: &str = "<|im_system|>";
const IM_USER: &str = "<|im_user|>";
const IM_ASSISTANT: &str = "<|im_assistant|>";
const IM_MIDDLE: &str = "<|im_middle|>";
const IM_END: &str = "<|im_end|>";
const THINK: &str = "<think>";
const THINK_END: &str = "</think>";
const SECTION_BEGIN: &str = "<|tool_calls_section_begin|>";
const SECTION_END: &str = "<|tool_calls_section_end|>";
const CALL_BEGIN: &str = "<|tool_call_begin|>";
const ARG_BEGIN: &str = "<|tool_call_argument_begin|>";
const CALL_END: &str = "<|tool_call_end|>";

pub const DEFAULT_SYSTEM_PROMPT: &str = "You are Kimi, an AI assistant created by Moonshot AI.";

/// K2.5 opens the think block in the generation prompt; K2 lets the model open it.
fn prompt_opens_think(r: &Renderer) -> bool {
    r.kind() == RendererKind::KimiK25 && r.options().enable_thinking
}

pub(crate) fn render_prompt(
    r: &Renderer,
    buf: &mut TokenBuf<'_>,
    messages: &[ChatMessage],
    tools: &[ToolSpec],
) {
    if !tools.is_empty() {
        block(
            buf,
            IM_SYSTEM,
            "tool_declare",
            &declarations(r.kind(), tools),
        );
    }
    if messages.first().is_none_or(|m| m.role != Role::System) {
        block(buf, IM_SYSTEM, "system", DEFAULT_SYSTEM_PROMPT);
    }
    let last_query = messages.iter().rposition(|m| m.role == Role::User);
    let keep_all = r.options().keep_thinking_history;
    let mut ids: HashMap<&str, String> = HashMap::new();
    let mut call_index = 0usize;

    for (i, m) in messages.iter().enumerate() {
        match m.role {
            Role::System => block(buf, IM_SYSTEM, "system", &m.content),
            Role::User => block(buf, IM_USER, "user", &m.content),
            Role::Assistant => {
                open(buf, IM_ASSISTANT, "assistant");
                // Earlier turns keep an empty think block, as the K2-Thinking template does.
                let current = last_query.is_none_or(|q| i > q);
                let reasoning = if current || keep_all {
                    m.reasoning.as_deref().unwrap_or("")
                } else {
                    ""
                };
                buf.special(THINK);
                buf.text(reasoning);
                buf.special(THINK_END);
                buf.text(&m.content);
                let kimi_ids = kimi_ids(&m.tool_calls, call_index);
                for (call, kimi_id) in m.tool_calls.iter().zip(&kimi_ids) {
                    ids.insert(call.id.as_str(), kimi_id.clone());
                }
                call_index += m.tool_calls.len();
                tool_calls(buf, &m.tool_calls, &kimi_ids);
                buf.special(IM_END);
            }
            Role::Tool => {
                let raw_id = m.tool_call_id.as_deref().unwrap_or("");
                let id = ids.get(raw_id).map_or(raw_id, String::as_str);
                block(
                    buf,
                    IM_SYSTEM,
                    "tool",
                    &format!("## Return of {id}\n{}", m.content),
                );
            }
        }
    }
    open(buf, IM_ASSISTANT, "assistant");
    if r.kind() == RendererKind::KimiK25 {
        buf.special(THINK);
        if !r.options().enable_thinking {
            buf.special(THINK_END);
        }
    }
}

/// `first_call_index` is the number of tool calls earlier in the conversation.
pub(crate) fn render_completion(
    r: &Renderer,
    buf: &mut TokenBuf<'_>,
    m: &ChatMessage,
    first_call_index: usize,
) {
    let thinking_off = r.kind() == RendererKind::KimiK25 && !r.options().enable_thinking;
    if !thinking_off {
        if !prompt_opens_think(r) {
            buf.special(THINK);
        }
        buf.text(m.reasoning.as_deref().unwrap_or(""));
        buf.special(THINK_END);
    }
    buf.text(&m.content);
    let kimi_ids = kimi_ids(&m.tool_calls, first_call_index);
    tool_calls(buf, &m.tool_calls, &kimi_ids);
    buf.special(IM_END);
}

/// The `tool_declare` text for this model.
fn declarations(kind: RendererKind, tools: &[ToolSpec]) -> String {
    let declared: Vec<serde_json::Value> =
        tools.iter().map(|t| sorted_keys(&t.to_openai())).collect();
    let typescript = match kind {
        RendererKind::KimiK25 => typescript::declare(&declared),
        _ => None,
    };
    typescript.unwrap_or_else(|| compact(&declared))
}

fn open(buf: &mut TokenBuf<'_>, role_token: &str, role: &str) {
    buf.special(role_token);
    buf.text(role);
    buf.special(IM_MIDDLE);
}

fn block(buf: &mut TokenBuf<'_>, role_token: &str, role: &str, content: &str) {
    open(buf, role_token, role);
    buf.text(content);
    buf.special(IM_END);
}

fn kimi_ids(calls: &[ToolCall], first_index: usize) -> Vec<String> {
    calls
        .iter()
        .enumerate()
        .map(|(j, c)| {
            if parse_header(&c.id).is_some() && c.id.starts_with("functions.") {
                c.id.clone()
            } else {
                format!("functions.{}:{}", c.name, first_index + j)
            }
        })
        .collect()
}

fn tool_calls(buf: &mut TokenBuf<'_>, calls: &[ToolCall], ids: &[String]) {
    if calls.is_empty() {
        return;
    }
    buf.special(SECTION_BEGIN);
    for (call, id) in calls.iter().zip(ids) {
        buf.special(CALL_BEGIN);
        buf.text(id);
        buf.special(ARG_BEGIN);
        buf.text(&call.arguments);
        buf.special(CALL_END);
    }
    buf.special(SECTION_END);
}

/// `functions.NAME:IDX` (or a bare `NAME`/`NAME:IDX`) → `NAME`.
fn parse_header(header: &str) -> Option<String> {
    let h = header.trim();
    let h = h.strip_prefix("functions.").unwrap_or(h);
    let name = match h.rsplit_once(':') {
        Some((name, idx)) if !idx.is_empty() && idx.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => h,
    };
    (!name.is_empty() && !name.contains(char::is_whitespace)).then(|| name.to_owned())
}

pub(crate) fn parse(r: &Renderer, body: &[u32]) -> (String, Option<String>, Vec<ToolCall>) {
    let markers = [
        THINK,
        THINK_END,
        SECTION_BEGIN,
        SECTION_END,
        CALL_BEGIN,
        ARG_BEGIN,
        CALL_END,
    ];
    let pieces = parse::segment(r.tokenizer(), body, &markers);
    let thinking_off = r.kind() == RendererKind::KimiK25 && !r.options().enable_thinking;
    let (reasoning, pieces) = if thinking_off {
        (None, pieces)
    } else {
        parse::take_think(pieces, THINK, THINK_END, prompt_opens_think(r))
    };

    let mut content = String::new();
    let mut calls = Vec::new();
    let mut i = 0;
    while i < pieces.len() {
        match &pieces[i] {
            Piece::Marker(SECTION_BEGIN | SECTION_END) => i += 1,
            Piece::Marker(CALL_BEGIN) => {
                let end = pieces[i + 1..]
                    .iter()
                    .position(|p| *p == Piece::Marker(CALL_END))
                    .map_or(pieces.len(), |k| i + 2 + k);
                let call = match &pieces[i + 1..end] {
                    [
                        Piece::Text(header),
                        Piece::Marker(ARG_BEGIN),
                        Piece::Text(args),
                        Piece::Marker(CALL_END),
                    ] => parse_call(header, args, calls.len()),
                    _ => None,
                };
                match call {
                    Some(call) => calls.push(call),
                    // Malformed or cut off: the text stays visible as content.
                    None => content.push_str(&parse::flatten(&pieces[i..end])),
                }
                i = end;
            }
            other => {
                content.push_str(&parse::flatten(std::slice::from_ref(other)));
                i += 1;
            }
        }
    }
    (content, reasoning, calls)
}

fn parse_call(header: &str, args: &str, index: usize) -> Option<ToolCall> {
    let name = parse_header(header)?;
    let args = args.trim();
    let value: serde_json::Value = serde_json::from_str(args).ok()?;
    value.is_object().then(|| ToolCall {
        id: parse::call_id(index),
        name,
        arguments: args.to_owned(),
    })
}
