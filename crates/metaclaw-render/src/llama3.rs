//! Llama 3.x Instruct: `<|begin_of_text|>` then
//! `<|start_header_id|>{role}<|end_header_id|>\n\n{content}<|eot_id|>` per message.
//!
//! Like Tinker's cookbook renderer (and unlike the HF template) no "Cutting Knowledge Date"
//! preamble is added. Tools follow the Llama 3.1 HF template's default (`tools_in_user_message`):
//! the JSON-calling instructions and the schemas (`tojson(indent=4)`) open the first user
//! message; with no user message they go into the system message. Tool results use the
//! `ipython` role. Tool calls are `{"name": …, "parameters": {…}}`.

use serde_json::value::RawValue;

use crate::json::{python_dumps, python_dumps_indent4};
use crate::message::{ChatMessage, Role, ToolCall, ToolSpec};
use crate::parse::{self, Piece};
use crate::renderer::{Renderer, TokenBuf};

const BOS: &str = "<|begin_of_text|>";
const START_HEADER: &str = "<|start_header_id|>";
const END_HEADER: &str = "<|end_header_id|>";
const EOT: &str = "<|eot_id|>";
const PYTHON_TAG: &str = "<|python_tag|>";

const TOOLS_INTRO: &str = "Given the following functions, please respond with a JSON for a \
    function call with its proper arguments that best answers the given prompt.\n\n\
    Respond in the format {\"name\": function name, \"parameters\": dictionary of argument \
    name and its value}.Do not use variables.\n\n";

pub(crate) fn render_prompt(
    _r: &Renderer,
    buf: &mut TokenBuf<'_>,
    messages: &[ChatMessage],
    tools: &[ToolSpec],
) {
    buf.special(BOS);
    let (system, rest) = match messages.split_first() {
        Some((first, rest)) if first.role == Role::System => (Some(first.content.trim()), rest),
        _ => (None, messages),
    };
    let tools_block = (!tools.is_empty()).then(|| {
        let mut block = TOOLS_INTRO.to_owned();
        for tool in tools {
            block.push_str(&python_dumps_indent4(&tool.to_openai()));
            block.push_str("\n\n");
        }
        block
    });
    let first_user = rest.iter().position(|m| m.role == Role::User);

    let system = match (system, &tools_block, first_user) {
        (sys, Some(block), None) => Some(match sys {
            Some(s) if !s.is_empty() => format!("{s}\n\n{}", block.trim_end()),
            _ => block.trim_end().to_owned(),
        }),
        (sys, _, _) => sys.map(str::to_owned),
    };
    if let Some(sys) = system {
        message(buf, "system", &sys);
    }

    for (i, m) in rest.iter().enumerate() {
        match m.role {
            Role::User | Role::System => {
                let content = m.content.trim();
                match (&tools_block, first_user) {
                    (Some(block), Some(u)) if u == i => {
                        message(buf, m.role.as_str(), &format!("{block}{content}"))
                    }
                    _ => message(buf, m.role.as_str(), content),
                }
            }
            Role::Assistant => {
                header(buf, "assistant");
                assistant_body(buf, m);
                buf.special(EOT);
            }
            Role::Tool => message(buf, "ipython", &m.content),
        }
    }
    header(buf, "assistant");
}

pub(crate) fn render_completion(_r: &Renderer, buf: &mut TokenBuf<'_>, m: &ChatMessage) {
    assistant_body(buf, m);
    buf.special(EOT);
}

fn header(buf: &mut TokenBuf<'_>, role: &str) {
    buf.special(START_HEADER);
    buf.text(role);
    buf.special(END_HEADER);
    buf.text("\n\n");
}

fn message(buf: &mut TokenBuf<'_>, role: &str, content: &str) {
    header(buf, role);
    buf.text(content);
    buf.special(EOT);
}

/// Content, or — as in the HF template, which drops content next to tool calls — the calls,
/// one JSON object per line. Reasoning has no place in the Llama 3 format.
fn assistant_body(buf: &mut TokenBuf<'_>, m: &ChatMessage) {
    if m.tool_calls.is_empty() {
        buf.text(m.content.trim());
        return;
    }
    let calls: Vec<String> = m
        .tool_calls
        .iter()
        .map(|c| {
            // HF renders `arguments | tojson` of a dict; do the same when the string parses.
            let args = serde_json::from_str::<serde_json::Value>(&c.arguments)
                .map(|v| python_dumps(&v))
                .unwrap_or_else(|_| c.arguments.clone());
            format!(
                "{{\"name\": {}, \"parameters\": {args}}}",
                python_dumps(&c.name)
            )
        })
        .collect();
    buf.text(&calls.join("\n"));
}

pub(crate) fn parse(r: &Renderer, body: &[u32]) -> (String, Option<String>, Vec<ToolCall>) {
    let mut pieces = parse::segment(r.tokenizer(), body, &[PYTHON_TAG]);
    if let Some(i) = pieces
        .iter()
        .position(|p| !matches!(p, Piece::Text(t) if t.trim().is_empty()))
        && pieces[i] == Piece::Marker(PYTHON_TAG)
    {
        pieces.drain(..=i);
    }
    let text = parse::flatten(&pieces);
    let trimmed = text.trim();
    if trimmed.starts_with('{')
        && let Some(calls) = parse_calls(trimmed)
    {
        return (String::new(), None, calls);
    }
    (trimmed.to_owned(), None, Vec::new())
}

/// One or more call objects separated by whitespace or `;`; all of them must be calls.
fn parse_calls(text: &str) -> Option<Vec<ToolCall>> {
    let mut calls = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<&RawValue>();
        let raw = stream.next()?.ok()?;
        let consumed = stream.byte_offset();
        calls.push(parse::parse_call_json(raw.get(), calls.len())?);
        rest = rest[consumed..].trim_start_matches(|c: char| c.is_whitespace() || c == ';');
    }
    (!calls.is_empty()).then_some(calls)
}
