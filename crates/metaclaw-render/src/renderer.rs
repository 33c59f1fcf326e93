//! Renderer selection and the common render/parse entry points; the per-family formats live in
//! `qwen3.rs`, `llama3.rs` and `kimi.rs`.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use crate::error::RenderError;
use crate::message::{ChatMessage, ToolCall, ToolSpec};
use crate::parse::{self, Finish};
use crate::tokenizer::Tokenizer;
use crate::{kimi, llama3, qwen3};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RendererKind {
    /// Qwen3 hybrid-thinking models (`<think>` blocks).
    Qwen3,
    /// Qwen3 `*-Instruct-2507`: same ChatML format, no think tags.
    Qwen3Instruct,
    /// Llama 3.x Instruct.
    Llama3,
    /// Kimi K2 / K2-Thinking: the model opens `<think>` itself.
    KimiK2,
    /// Kimi K2.5 (and K2.6): the generation prompt opens `<think>` in thinking mode.
    KimiK25,
}

impl RendererKind {
    pub const ALL: [RendererKind; 5] = [
        RendererKind::Qwen3,
        RendererKind::Qwen3Instruct,
        RendererKind::Llama3,
        RendererKind::KimiK2,
        RendererKind::KimiK25,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RendererKind::Qwen3 => "qwen3",
            RendererKind::Qwen3Instruct => "qwen3_instruct",
            RendererKind::Llama3 => "llama3",
            RendererKind::KimiK2 => "kimi_k2",
            RendererKind::KimiK25 => "kimi_k25",
        }
    }

    /// The recommended renderer for a model name (`org/name`, optional `:suffix`), following
    /// Tinker's `get_recommended_renderer_name`. `None` for families without a renderer here.
    pub fn for_model(model: &str) -> Option<RendererKind> {
        let base = crate::hub::strip_model_suffix(model);
        let name = base.rsplit('/').next().unwrap_or(base).to_ascii_lowercase();
        if name.starts_with("kimi-k2.5")
            || name.starts_with("kimi-k2p5")
            || name.starts_with("kimi-k2.6")
        {
            return Some(RendererKind::KimiK25);
        }
        if name.starts_with("kimi-k2") {
            return Some(RendererKind::KimiK2);
        }
        if name.starts_with("qwen3-") {
            // 2507 Instruct (and Coder Instruct) models have no thinking mode.
            return Some(if name.contains("-instruct") {
                RendererKind::Qwen3Instruct
            } else {
                RendererKind::Qwen3
            });
        }
        if name.starts_with("llama-3") || name.starts_with("meta-llama-3") {
            return Some(RendererKind::Llama3);
        }
        None
    }

    /// Special tokens the format cannot do without (markers like `<think>` fall back to text).
    fn required_specials(self) -> &'static [&'static str] {
        match self {
            RendererKind::Qwen3 | RendererKind::Qwen3Instruct => &["<|im_start|>", "<|im_end|>"],
            RendererKind::Llama3 => &[
                "<|begin_of_text|>",
                "<|start_header_id|>",
                "<|end_header_id|>",
                "<|eot_id|>",
            ],
            RendererKind::KimiK2 | RendererKind::KimiK25 => &[
                "<|im_system|>",
                "<|im_user|>",
                "<|im_assistant|>",
                "<|im_middle|>",
                "<|im_end|>",
            ],
        }
    }
}

impl fmt::Display for RendererKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for RendererKind {
    type Err = RenderError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let norm = s.trim().to_ascii_lowercase().replace(['-', '.'], "_");
        match norm.as_str() {
            "qwen3" => Ok(RendererKind::Qwen3),
            "qwen3_instruct" => Ok(RendererKind::Qwen3Instruct),
            "llama3" | "llama_3" => Ok(RendererKind::Llama3),
            "kimi_k2" => Ok(RendererKind::KimiK2),
            "kimi_k25" | "kimi_k2_5" | "kimi_k26" => Ok(RendererKind::KimiK25),
            _ => Err(RenderError::UnknownRenderer(s.to_owned())),
        }
    }
}

/// Knobs that change the rendered prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RenderOptions {
    /// Keep the reasoning of assistant turns before the last user message. Off by default for
    /// parity with the HF chat templates (what the model was trained on); on gives the
    /// prefix-extension property for multi-turn RL (each prompt extends the previous sample).
    pub keep_thinking_history: bool,
    /// Thinking mode for hybrid models. When off, Qwen3 appends `<think>\n\n</think>\n\n` and
    /// Kimi K2.5 appends `<think></think>` to the generation prompt.
    pub enable_thinking: bool,
}

impl Default for RenderOptions {
    fn default() -> Self {
        Self {
            keep_thinking_history: false,
            enable_thinking: true,
        }
    }
}

/// What the sampled tokens said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedResponse {
    pub content: String,
    pub reasoning: Option<String>,
    pub tool_calls: Vec<ToolCall>,
    pub finish: Finish,
}

impl ParsedResponse {
    /// The response as an assistant message (e.g. to append to the conversation).
    pub fn to_message(&self) -> ChatMessage {
        ChatMessage {
            reasoning: self.reasoning.clone(),
            tool_calls: self.tool_calls.clone(),
            ..ChatMessage::assistant(self.content.clone())
        }
    }
}

#[derive(Debug, Clone)]
pub struct Renderer {
    kind: RendererKind,
    tok: Arc<Tokenizer>,
    options: RenderOptions,
}

impl Renderer {
    /// Fails when the tokenizer lacks a special token the format needs.
    pub fn new(kind: RendererKind, tok: Arc<Tokenizer>) -> Result<Self, RenderError> {
        for token in kind.required_specials() {
            if tok.special_id(token).is_none() {
                return Err(RenderError::MissingSpecialToken {
                    tokenizer: tok.name().to_owned(),
                    token: (*token).to_owned(),
                    renderer: kind.as_str(),
                });
            }
        }
        Ok(Self {
            kind,
            tok,
            options: RenderOptions::default(),
        })
    }

    pub fn with_options(mut self, options: RenderOptions) -> Self {
        self.options = options;
        self
    }

    pub fn options(&self) -> RenderOptions {
        self.options
    }

    pub fn kind(&self) -> RendererKind {
        self.kind
    }

    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tok
    }

    pub fn tokenizer_arc(&self) -> Arc<Tokenizer> {
        Arc::clone(&self.tok)
    }

    /// Prompt tokens for sampling the next assistant message (generation prompt included).
    pub fn render_prompt(
        &self,
        messages: &[ChatMessage],
        tools: &[ToolSpec],
    ) -> Result<Vec<u32>, RenderError> {
        let mut buf = TokenBuf::new(&self.tok);
        match self.kind {
            RendererKind::Qwen3 | RendererKind::Qwen3Instruct => {
                qwen3::render_prompt(self, &mut buf, messages, tools)
            }
            RendererKind::Llama3 => llama3::render_prompt(self, &mut buf, messages, tools),
            RendererKind::KimiK2 | RendererKind::KimiK25 => {
                kimi::render_prompt(self, &mut buf, messages, tools)
            }
        }
        Ok(buf.finish())
    }

    /// The tokens the model emits for `response` after the generation prompt, stop token
    /// included — what `parse_response` reads back.
    pub fn render_completion(&self, response: &ChatMessage) -> Result<Vec<u32>, RenderError> {
        let mut buf = TokenBuf::new(&self.tok);
        match self.kind {
            RendererKind::Qwen3 | RendererKind::Qwen3Instruct => {
                qwen3::render_completion(self, &mut buf, response)
            }
            RendererKind::Llama3 => llama3::render_completion(self, &mut buf, response),
            RendererKind::KimiK2 | RendererKind::KimiK25 => {
                kimi::render_completion(self, &mut buf, response, tool_call_count(&[]))
            }
        }
        Ok(buf.finish())
    }

    /// `render_prompt(messages)` followed by `response` as the model would emit it. The prompt
    /// is an exact prefix, so this is the token sequence a training sample holds (and what a
    /// teacher is asked to score).
    pub fn render_conversation(
        &self,
        messages: &[ChatMessage],
        tools: &[ToolSpec],
        response: &ChatMessage,
    ) -> Result<Vec<u32>, RenderError> {
        let mut tokens = self.render_prompt(messages, tools)?;
        let mut buf = TokenBuf::new(&self.tok);
        match self.kind {
            RendererKind::KimiK2 | RendererKind::KimiK25 => {
                // Kimi tool-call ids count calls across the conversation.
                kimi::render_completion(self, &mut buf, response, tool_call_count(messages))
            }
            _ => return Ok([tokens, self.render_completion(response)?].concat()),
        }
        tokens.extend(buf.finish());
        Ok(tokens)
    }

    /// Token ids that end an assistant turn.
    pub fn stop_tokens(&self) -> Vec<u32> {
        let names: &[&str] = match self.kind {
            RendererKind::Llama3 => &["<|eot_id|>", "<|eom_id|>"],
            _ => &["<|im_end|>"],
        };
        names
            .iter()
            .filter_map(|n| self.tok.special_id(n))
            .collect()
    }

    /// Parses sampled tokens (without the prompt) into content, reasoning and tool calls.
    /// Works on ids: markers are matched as special ids when the vocabulary has them.
    pub fn parse_response(&self, tokens: &[u32]) -> ParsedResponse {
        let stops = self.stop_tokens();
        let (body, finish) = parse::cut_at_stop(tokens, &stops);
        let (content, reasoning, tool_calls) = match self.kind {
            RendererKind::Qwen3 | RendererKind::Qwen3Instruct => qwen3::parse(self, body),
            RendererKind::Llama3 => llama3::parse(self, body),
            RendererKind::KimiK2 | RendererKind::KimiK25 => kimi::parse(self, body),
        };
        ParsedResponse {
            content,
            reasoning,
            tool_calls,
            finish,
        }
    }
}

fn tool_call_count(messages: &[ChatMessage]) -> usize {
    messages.iter().map(|m| m.tool_calls.len()).sum()
}

/// Accumulates text between special tokens and encodes it in one piece, so the ids equal what
/// encoding the whole rendered string would give (BPE merges never cross a special token).
pub(crate) struct TokenBuf<'a> {
    tok: &'a Tokenizer,
    ids: Vec<u32>,
    pending: String,
}

impl<'a> TokenBuf<'a> {
    pub(crate) fn new(tok: &'a Tokenizer) -> Self {
        Self {
            tok,
            ids: Vec::new(),
            pending: String::new(),
        }
    }

    pub(crate) fn text(&mut self, s: &str) {
        self.pending.push_str(s);
    }

    /// A special token as its id; as text if this vocabulary does not have it (only optional
    /// markers reach that path — `Renderer::new` checks the required ones).
    pub(crate) fn special(&mut self, s: &str) {
        match self.tok.special_id(s) {
            Some(id) => {
                self.flush();
                self.ids.push(id);
            }
            None => self.pending.push_str(s),
        }
    }

    fn flush(&mut self) {
        if !self.pending.is_empty() {
            self.ids.extend(self.tok.encode_ordinary(&self.pending));
            self.pending.clear();
        }
    }

    pub(crate) fn finish(mut self) -> Vec<u32> {
        self.flush();
        self.ids
    }
}
