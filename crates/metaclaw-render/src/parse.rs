//! Token-stream parsing shared by the families: cut at the stop token, split the ids into
//! marker tokens and decoded text, and pull out `<think>` blocks.
//!
//! Markers are matched by id when the vocabulary has them as (added) tokens, so text the model
//! writes that merely *looks like* a marker is content; a marker the vocabulary lacks is matched
//! in the decoded text instead.

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::message::ToolCall;
use crate::tokenizer::Tokenizer;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finish {
    /// The response ended with a stop token.
    Stop,
    /// No stop token: the sampler hit `max_tokens`.
    Length,
}

impl Finish {
    /// OpenAI `finish_reason` (tool calls are reported by the caller).
    pub fn as_str(self) -> &'static str {
        match self {
            Finish::Stop => "stop",
            Finish::Length => "length",
        }
    }
}

/// The tokens before the first stop token, and whether there was one.
pub(crate) fn cut_at_stop<'t>(tokens: &'t [u32], stops: &[u32]) -> (&'t [u32], Finish) {
    match tokens.iter().position(|t| stops.contains(t)) {
        Some(i) => (&tokens[..i], Finish::Stop),
        None => (tokens, Finish::Length),
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    Marker(&'static str),
    Text(String),
}

/// Splits `tokens` into markers (from `markers`) and decoded text between them.
pub(crate) fn segment(tok: &Tokenizer, tokens: &[u32], markers: &[&'static str]) -> Vec<Piece> {
    let by_id: Vec<(u32, &'static str)> = markers
        .iter()
        .filter_map(|m| tok.special_id(m).map(|id| (id, *m)))
        .collect();
    let textual: Vec<&'static str> = markers
        .iter()
        .copied()
        .filter(|m| tok.special_id(m).is_none())
        .collect();

    let mut pieces = Vec::new();
    let mut run: Vec<u32> = Vec::new();
    for &id in tokens {
        if let Some((_, m)) = by_id.iter().find(|(mid, _)| *mid == id) {
            push_text(&mut pieces, &tok.decode(&run), &textual);
            run.clear();
            pieces.push(Piece::Marker(m));
        } else {
            run.push(id);
        }
    }
    push_text(&mut pieces, &tok.decode(&run), &textual);
    pieces
}

fn push_text(pieces: &mut Vec<Piece>, mut text: &str, textual: &[&'static str]) {
    loop {
        let next = textual
            .iter()
            .filter_map(|m| text.find(m).map(|at| (at, *m)))
            .min_by_key(|(at, m)| (*at, std::cmp::Reverse(m.len())));
        let Some((at, marker)) = next else { break };
        append_text(pieces, &text[..at]);
        pieces.push(Piece::Marker(marker));
        text = &text[at + marker.len()..];
    }
    append_text(pieces, text);
}

fn append_text(pieces: &mut Vec<Piece>, text: &str) {
    if text.is_empty() {
        return;
    }
    if let Some(Piece::Text(prev)) = pieces.last_mut() {
        prev.push_str(text);
    } else {
        pieces.push(Piece::Text(text.to_owned()));
    }
}

/// Text of pieces with markers written out verbatim.
pub(crate) fn flatten(pieces: &[Piece]) -> String {
    pieces
        .iter()
        .map(|p| match p {
            Piece::Marker(m) => *m,
            Piece::Text(t) => t.as_str(),
        })
        .collect()
}

/// Takes a leading `<think>…</think>` block off `pieces`.
///
/// * `<think>r</think>c` → reasoning `r`;
/// * `r</think>c` → reasoning `r` (the think block was opened by the prompt, or the model
///   skipped the opening tag);
/// * `<think>r` with no close (or `opened` and no close) → everything is reasoning — the
///   response was cut off while thinking.
///
/// A `<think>` after non-whitespace content is left alone. Reasoning is trimmed of newlines;
/// empty reasoning is `None`.
pub(crate) fn take_think(
    pieces: Vec<Piece>,
    open: &'static str,
    close: &'static str,
    opened: bool,
) -> (Option<String>, Vec<Piece>) {
    let close_at = pieces.iter().position(|p| *p == Piece::Marker(close));
    let open_at = pieces
        .iter()
        .position(|p| *p == Piece::Marker(open))
        .filter(|&i| {
            pieces[..i]
                .iter()
                .all(|p| matches!(p, Piece::Text(t) if t.trim().is_empty()))
        });
    let (start, end) = match (open_at, close_at) {
        (Some(o), Some(c)) if o < c => (o + 1, Some(c)),
        (Some(o), None) => (o + 1, None),
        (None, Some(c)) if !pieces[..c].iter().any(|p| matches!(p, Piece::Marker(_))) => {
            (0, Some(c))
        }
        (None, None) if opened => (0, None),
        _ => return (None, pieces),
    };
    let reasoning_end = end.unwrap_or(pieces.len());
    let reasoning = flatten(&pieces[start..reasoning_end]);
    let rest = match end {
        Some(c) => pieces[c + 1..].to_vec(),
        None => Vec::new(),
    };
    let reasoning = reasoning.trim_matches('\n');
    let reasoning = (!reasoning.is_empty()).then(|| reasoning.to_owned());
    (reasoning, rest)
}

/// A `{"name": …, "arguments"|"parameters": …}` object; arguments come back as their exact
/// JSON text (a string holding JSON is unwrapped, as some models quote their arguments).
pub(crate) fn parse_call_json(text: &str, index: usize) -> Option<ToolCall> {
    #[derive(Deserialize)]
    struct Call<'a> {
        name: Option<String>,
        #[serde(borrow)]
        arguments: Option<&'a RawValue>,
        #[serde(borrow)]
        parameters: Option<&'a RawValue>,
        function: Option<Function<'a>>,
    }
    #[derive(Deserialize)]
    struct Function<'a> {
        name: String,
        #[serde(borrow)]
        arguments: Option<&'a RawValue>,
    }
    let call: Call<'_> = serde_json::from_str(text.trim()).ok()?;
    let (name, args) = match call.function {
        Some(f) => (f.name, f.arguments),
        None => (call.name?, call.arguments.or(call.parameters)),
    };
    if name.is_empty() {
        return None;
    }
    Some(ToolCall {
        id: call_id(index),
        name,
        arguments: arguments_json(args)?,
    })
}

/// Exact JSON text of an arguments value; `None` when it is neither an object nor a string
/// holding one.
pub(crate) fn arguments_json(args: Option<&RawValue>) -> Option<String> {
    let Some(raw) = args else {
        return Some("{}".to_owned());
    };
    let text = raw.get();
    if text.starts_with('{') {
        return Some(text.to_owned());
    }
    let inner: String = serde_json::from_str(text).ok()?;
    let value: serde_json::Value = serde_json::from_str(&inner).ok()?;
    value.is_object().then_some(inner)
}

/// Deterministic ids: the n-th call of a response is `call_<n>`.
pub(crate) fn call_id(index: usize) -> String {
    format!("call_{index}")
}
