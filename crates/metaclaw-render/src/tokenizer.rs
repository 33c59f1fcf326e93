//! A tokenizer over either a HuggingFace `tokenizer.json` or Kimi's tiktoken rank file.
//!
//! Renderers need three things a plain `encode` does not give: text is encoded *without*
//! turning special-token text into special ids (content that says `<|im_end|>` must not end
//! the turn — a prompt-injection guard), special tokens are addressed by id, and decode keeps
//! special tokens so nothing is lost when parsing.

use std::collections::HashMap;
use std::path::Path;

use base64::Engine as _;
use tokenizers::{Model as _, Normalizer as _, OffsetType, PreTokenizedString, PreTokenizer as _};

use crate::error::RenderError;

/// Kimi K2's pre-tokenisation pattern (from its `tokenization_kimi.py`): CJK runs, words with
/// case-aware splitting and English contractions, 1–3 digit groups, punctuation runs, newlines
/// and whitespace. Class intersections (`&&`) are supported by the regex engine behind
/// `fancy-regex`.
pub const KIMI_PATTERN: &str = concat!(
    r"[\p{Han}]+",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*",
    r"|\s*[\r\n]+",
    r"|\s+(?!\S)",
    r"|\s+",
);

/// Kimi reserves this many ids after the BPE ranks for special tokens; the ones not named in
/// `added_tokens_decoder` are `<|reserved_token_{id}|>`, as in the Python tokenizer.
const KIMI_RESERVED_SPECIALS: u32 = 256;

enum Backend {
    Hf(Box<tokenizers::Tokenizer>),
    Tiktoken(Box<tiktoken_rs::CoreBPE>),
}

pub struct Tokenizer {
    name: String,
    backend: Backend,
    /// Added/special tokens (HF `added_tokens`, Kimi specials) by text and by id.
    specials: HashMap<String, u32>,
    special_text: HashMap<u32, String>,
    vocab_size: usize,
}

impl std::fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokenizer")
            .field("name", &self.name)
            .field("vocab_size", &self.vocab_size)
            .field("specials", &self.specials.len())
            .finish()
    }
}

impl Tokenizer {
    /// Loads a HuggingFace `tokenizer.json`.
    pub fn from_file(path: &Path) -> Result<Self, RenderError> {
        let bytes = std::fs::read(path).map_err(|e| read_error(path, e))?;
        let hf = tokenizers::Tokenizer::from_bytes(&bytes).map_err(|e| {
            RenderError::TokenizerCorrupt {
                path: path.to_path_buf(),
                reason: e.to_string(),
            }
        })?;
        Ok(Self::from_hf(hf, path.display().to_string()))
    }

    /// Wraps an in-memory HuggingFace tokenizer (e.g. one trained in a test).
    pub fn from_hf(hf: tokenizers::Tokenizer, name: impl Into<String>) -> Self {
        let mut specials = HashMap::new();
        let mut special_text = HashMap::new();
        for (id, added) in hf.get_added_tokens_decoder() {
            specials.insert(added.content.clone(), id);
            special_text.insert(id, added.content);
        }
        let vocab_size = hf.get_vocab_size(true);
        Self {
            name: name.into(),
            backend: Backend::Hf(Box::new(hf)),
            specials,
            special_text,
            vocab_size,
        }
    }

    /// Loads Kimi's tiktoken BPE: `tiktoken.model` (lines `base64(bytes) rank`) plus the special
    /// tokens listed in `tokenizer_config.json`'s `added_tokens_decoder`.
    pub fn from_tiktoken(model_file: &Path, tokenizer_config: &Path) -> Result<Self, RenderError> {
        let corrupt = |path: &Path, reason: String| RenderError::TokenizerCorrupt {
            path: path.to_path_buf(),
            reason,
        };
        let ranks_text =
            std::fs::read_to_string(model_file).map_err(|e| read_error(model_file, e))?;
        let mut encoder: HashMap<Vec<u8>, u32> = HashMap::new();
        let mut seen_ranks = std::collections::HashSet::new();
        for (lineno, line) in ranks_text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let bad = |what: &str| corrupt(model_file, format!("line {}: {what}", lineno + 1));
            let (b64, rank) = line
                .split_once(' ')
                .ok_or_else(|| bad("expected `token rank`"))?;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(b64.trim())
                .map_err(|e| bad(&format!("bad base64: {e}")))?;
            let rank: u32 = rank.trim().parse().map_err(|_| bad("bad rank"))?;
            // CoreBPE asserts on duplicates; report them instead of panicking.
            if !seen_ranks.insert(rank) || encoder.insert(bytes, rank).is_some() {
                return Err(bad("duplicate token or rank"));
            }
        }
        // Byte-pair merging indexes single bytes unchecked; every byte must be a token.
        if let Some(b) = (0u8..=255).find(|b| !encoder.contains_key(&vec![*b])) {
            return Err(corrupt(
                model_file,
                format!("byte 0x{b:02x} has no rank; not a byte-level BPE rank file"),
            ));
        }
        let base = encoder.values().max().map_or(0, |m| m + 1);

        let config_text = std::fs::read_to_string(tokenizer_config)
            .map_err(|e| read_error(tokenizer_config, e))?;
        let config: serde_json::Value = serde_json::from_str(&config_text)
            .map_err(|e| corrupt(tokenizer_config, e.to_string()))?;
        let mut specials: HashMap<String, u32> = HashMap::new();
        if let Some(decoder) = config
            .get("added_tokens_decoder")
            .and_then(|d| d.as_object())
        {
            for (id, entry) in decoder {
                let id: u32 = id
                    .parse()
                    .map_err(|_| corrupt(tokenizer_config, format!("bad token id {id:?}")))?;
                let content = entry
                    .get("content")
                    .and_then(|c| c.as_str())
                    .ok_or_else(|| {
                        corrupt(tokenizer_config, format!("token {id} has no content"))
                    })?;
                specials.insert(content.to_owned(), id);
            }
        }
        let named: std::collections::HashSet<u32> = specials.values().copied().collect();
        for id in base..base + KIMI_RESERVED_SPECIALS {
            if !named.contains(&id) {
                specials.insert(format!("<|reserved_token_{id}|>"), id);
            }
        }
        if let Some((text, id)) = specials.iter().find(|(_, id)| **id < base) {
            return Err(corrupt(
                tokenizer_config,
                format!("special token {text} has id {id}, which collides with a BPE rank"),
            ));
        }
        let vocab_size = specials
            .values()
            .map(|id| *id as usize + 1)
            .max()
            .unwrap_or(0)
            .max(base as usize);
        let special_text = specials.iter().map(|(t, id)| (*id, t.clone())).collect();
        let bpe = tiktoken_rs::CoreBPE::new(
            encoder.into_iter().collect(),
            specials.clone().into_iter().collect(),
            KIMI_PATTERN,
        )
        .map_err(|e| corrupt(model_file, e.to_string()))?;
        Ok(Self {
            name: model_file.display().to_string(),
            backend: Backend::Tiktoken(Box::new(bpe)),
            specials,
            special_text,
            vocab_size,
        })
    }

    /// Where this tokenizer came from (a path or a hub repo); used in error messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Encodes text as plain text: special-token text stays ordinary tokens.
    pub fn encode_ordinary(&self, s: &str) -> Vec<u32> {
        if s.is_empty() {
            return Vec::new();
        }
        match &self.backend {
            Backend::Tiktoken(bpe) => bpe.encode_ordinary(s),
            Backend::Hf(hf) => match hf_encode_ordinary(hf, s) {
                Ok(ids) => ids,
                Err(e) => {
                    // Byte-level BPE cannot fail; other models may lack an `unk` token.
                    tracing::warn!(tokenizer = %self.name, error = %e, "encoding failed; text dropped");
                    Vec::new()
                }
            },
        }
    }

    /// The id of a special (or added) token, e.g. `<|im_end|>`.
    pub fn special_id(&self, s: &str) -> Option<u32> {
        self.specials.get(s).copied()
    }

    pub fn is_special(&self, id: u32) -> bool {
        self.special_text.contains_key(&id)
    }

    /// Text of a special token id.
    pub fn special_text(&self, id: u32) -> Option<&str> {
        self.special_text.get(&id).map(String::as_str)
    }

    /// Decodes ids, keeping special tokens as their text. Unknown ids are skipped; bytes that
    /// are not valid UTF-8 (a character split across a cut) become U+FFFD.
    pub fn decode(&self, ids: &[u32]) -> String {
        let mut out = String::new();
        let mut run: Vec<u32> = Vec::new();
        for &id in ids {
            if let Some(text) = self.special_text.get(&id) {
                self.decode_ordinary_into(&run, &mut out);
                run.clear();
                out.push_str(text);
            } else {
                run.push(id);
            }
        }
        self.decode_ordinary_into(&run, &mut out);
        out
    }

    fn decode_ordinary_into(&self, ids: &[u32], out: &mut String) {
        if ids.is_empty() {
            return;
        }
        match &self.backend {
            Backend::Hf(hf) => match hf.decode(ids, false) {
                Ok(s) => out.push_str(&s),
                Err(e) => tracing::warn!(tokenizer = %self.name, error = %e, "decode failed"),
            },
            Backend::Tiktoken(bpe) => {
                let mut bytes = Vec::new();
                for &id in ids {
                    // decode_bytes errors on unknown ids; skip them one by one.
                    if let Ok(b) = bpe.decode_bytes(&[id]) {
                        bytes.extend_from_slice(&b);
                    }
                }
                out.push_str(&String::from_utf8_lossy(&bytes));
            }
        }
    }

    /// Vocabulary size including special tokens.
    pub fn vocab_size(&self) -> usize {
        self.vocab_size
    }
}

fn read_error(path: &Path, e: std::io::Error) -> RenderError {
    if e.kind() == std::io::ErrorKind::NotFound {
        RenderError::TokenizerMissing(path.to_path_buf())
    } else {
        RenderError::Io {
            path: path.to_path_buf(),
            source: e,
        }
    }
}

/// HF's pipeline minus the added-vocabulary extraction step (normalise, pre-tokenise, model);
/// also no post-processor, i.e. `add_special_tokens=False`.
fn hf_encode_ordinary(hf: &tokenizers::Tokenizer, s: &str) -> tokenizers::Result<Vec<u32>> {
    let mut pts = PreTokenizedString::from(s);
    if let Some(normalizer) = hf.get_normalizer() {
        pts.normalize(|n| normalizer.normalize(n))?;
    }
    if let Some(pre) = hf.get_pre_tokenizer() {
        pre.pre_tokenize(&mut pts)?;
    }
    let model = hf.get_model();
    pts.tokenize(|n| model.tokenize(n.get()))?;
    let encoding = pts.into_encoding(None, 0, OffsetType::None)?;
    Ok(encoding.get_ids().to_vec())
}
