//! Tokenizers for tests, built in-process so no test needs the hub: a small byte-level BPE
//! trained on a built-in corpus with each family's special tokens, and a tiny Kimi-style
//! tiktoken rank file.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine as _;
use tokenizers::AddedToken;
use tokenizers::models::TrainerWrapper;
use tokenizers::models::bpe::{BPE, BpeTrainerBuilder};
use tokenizers::pre_tokenizers::byte_level::ByteLevel;

use crate::renderer::RendererKind;
use crate::tokenizer::Tokenizer;

const CORPUS: &[&str] = &[
    "You are a helpful assistant. Answer the user's question briefly and accurately.",
    "What is the weather like in Paris today? Let me check the forecast for you.",
    "The weather in Paris is sunny with a high of 24 degrees Celsius.",
    "I will call the get_weather function with the city argument.",
    "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"celsius\"}}",
    "{\"type\": \"function\", \"function\": {\"name\": \"search\", \"description\": \"Search the web\", \"parameters\": {\"type\": \"object\", \"properties\": {\"query\": {\"type\": \"string\"}}, \"required\": [\"query\"]}}}",
    "# Tools\n\nYou may call one or more functions to assist with the user query.",
    "You are provided with function signatures within XML tags.",
    "For each function call, return a json object with function name and arguments.",
    "Given the following functions, please respond with a JSON for a function call.",
    "Respond in the format {\"name\": function name, \"parameters\": dictionary of argument name and its value}.",
    "The user wants to know the temperature. I should think step by step before answering.",
    "First, I need to find the file. Then I will read its content and summarise it.",
    "def main():\n    print(\"hello world\")\n    return 0\n",
    "fn main() {\n    println!(\"hello, world\");\n}\n",
    "The quick brown fox jumps over the lazy dog. 0123456789",
    "## Return of functions.get_weather:0\nsunny, 24 degrees",
    "Thanks! Can you also tell me about the weather in Berlin and Tokyo?",
    "Sure, here is a short summary of the results you asked for.",
    "Error: the command failed with exit code 1. Let me try again.",
    "système, naïve, café, 東京, 北京 — unicode text should round-trip exactly.",
];

/// Special tokens each family's vocabulary must provide.
pub fn family_specials(family: RendererKind) -> &'static [&'static str] {
    match family {
        RendererKind::Qwen3 | RendererKind::Qwen3Instruct => &[
            "<|endoftext|>",
            "<|im_start|>",
            "<|im_end|>",
            "<think>",
            "</think>",
            "<tool_call>",
            "</tool_call>",
            "<tool_response>",
            "</tool_response>",
        ],
        RendererKind::Llama3 => &[
            "<|begin_of_text|>",
            "<|end_of_text|>",
            "<|start_header_id|>",
            "<|end_header_id|>",
            "<|eot_id|>",
            "<|eom_id|>",
            "<|python_tag|>",
        ],
        RendererKind::KimiK2 | RendererKind::KimiK25 => &[
            "[BOS]",
            "[EOS]",
            "<|im_end|>",
            "<|im_user|>",
            "<|im_assistant|>",
            "<|im_system|>",
            "<|im_middle|>",
            "<think>",
            "</think>",
            "<|tool_calls_section_begin|>",
            "<|tool_calls_section_end|>",
            "<|tool_call_begin|>",
            "<|tool_call_argument_begin|>",
            "<|tool_call_end|>",
        ],
    }
}

/// Trains a byte-level BPE (vocab ~600) with `family`'s special tokens. Training is
/// deterministic, so token ids are stable across runs and golden files can hold them.
pub fn test_tokenizer(family: RendererKind) -> Arc<Tokenizer> {
    Arc::new(train(
        family_specials(family),
        &format!("test-{}", family.as_str()),
    ))
}

/// A byte-level BPE with exactly `specials` as special tokens.
pub fn train(specials: &[&str], name: &str) -> Tokenizer {
    Tokenizer::from_hf(train_hf(specials), name)
}

/// Saves `family`'s test tokenizer as a standard HF `tokenizer.json` at `path`.
pub fn write_test_tokenizer_json(family: RendererKind, path: &Path) {
    if let Err(e) = train_hf(family_specials(family)).save(path, true) {
        panic!("saving {}: {e}", path.display());
    }
}

fn train_hf(specials: &[&str]) -> tokenizers::Tokenizer {
    let mut hf = tokenizers::Tokenizer::new(BPE::default());
    // Qwen/Llama style: no prefix space, GPT-2 regex split, byte-level decode.
    hf.with_pre_tokenizer(Some(ByteLevel::new(false, true, true)));
    hf.with_decoder(Some(ByteLevel::new(false, true, true)));
    let trainer = BpeTrainerBuilder::new()
        .vocab_size(600)
        .min_frequency(1)
        .show_progress(false)
        .initial_alphabet(ByteLevel::alphabet().into_iter().collect())
        .special_tokens(
            specials
                .iter()
                .map(|s| AddedToken::from((*s).to_owned(), true))
                .collect(),
        )
        .build();
    let mut trainer = TrainerWrapper::BpeTrainer(trainer);
    // Training on an in-memory corpus with a fixed config cannot fail.
    if let Err(e) = hf.train(&mut trainer, CORPUS.iter()) {
        panic!("training the test tokenizer failed: {e}");
    }
    hf
}

/// Writes a tiny Kimi-style tokenizer (`tiktoken.model` + `tokenizer_config.json`) into `dir`
/// and returns both paths. Ranks: the 256 bytes, then the prefixes of common corpus words (each
/// prefix is reachable by one merge); Kimi's special tokens follow the ranks.
pub fn write_kimi_tiktoken(dir: &Path) -> (PathBuf, PathBuf) {
    let mut tokens: Vec<Vec<u8>> = (0u8..=255).map(|b| vec![b]).collect();
    let mut words: Vec<String> = Vec::new();
    for line in CORPUS {
        for w in line.split(|c: char| !c.is_ascii_alphanumeric() && c != '_') {
            if w.len() >= 2 && !words.iter().any(|x| x == w) {
                words.push(w.to_owned());
            }
        }
    }
    for w in &words {
        for variant in [w.clone(), format!(" {w}")] {
            let bytes = variant.as_bytes();
            for k in 2..=bytes.len() {
                if !tokens.iter().any(|t| t == &bytes[..k]) {
                    tokens.push(bytes[..k].to_vec());
                }
            }
        }
    }
    let b64 = base64::engine::general_purpose::STANDARD;
    let model: String = tokens
        .iter()
        .enumerate()
        .map(|(rank, t)| format!("{} {rank}\n", b64.encode(t)))
        .collect();
    let base = tokens.len();
    let decoder: serde_json::Map<String, serde_json::Value> = family_specials(RendererKind::KimiK2)
        .iter()
        .enumerate()
        .map(|(i, s)| {
            (
                (base + i).to_string(),
                serde_json::json!({"content": s, "special": true}),
            )
        })
        .collect();
    let config = serde_json::json!({"added_tokens_decoder": decoder});
    let model_path = dir.join("tiktoken.model");
    let config_path = dir.join("tokenizer_config.json");
    let write = |p: &Path, s: String| {
        if let Err(e) = std::fs::write(p, s) {
            panic!("writing {}: {e}", p.display());
        }
    };
    write(&model_path, model);
    write(&config_path, config.to_string());
    (model_path, config_path)
}
