//! Tokenizer loading (HF tokenizer.json, Kimi tiktoken), ordinary encoding and decoding.

#![cfg(feature = "test-tokenizer")]

use std::sync::Arc;

use metaclaw_render::{
    ChatMessage, Finish, RenderError, Renderer, RendererKind, Tokenizer, ToolCall, test_tokenizer,
    train_test_tokenizer, write_kimi_tiktoken, write_test_tokenizer_json,
};

const SAMPLE: &str =
    "Hello, world! The weather in Paris: 24°C.\n\n東京 café naïve — 12345 tokens\t\tend ";

#[test]
fn trained_tokenizer_is_deterministic() {
    let a = train_test_tokenizer(metaclaw_render::family_specials(RendererKind::Qwen3), "a");
    let b = train_test_tokenizer(metaclaw_render::family_specials(RendererKind::Qwen3), "b");
    assert_eq!(a.vocab_size(), b.vocab_size());
    assert_eq!(a.encode_ordinary(SAMPLE), b.encode_ordinary(SAMPLE));
    assert_eq!(a.special_id("<|im_end|>"), b.special_id("<|im_end|>"));
    // Training learned merges: common words are fewer tokens than bytes.
    assert!(a.encode_ordinary("the weather").len() < "the weather".len());
}

#[test]
fn decode_round_trips_and_keeps_specials() {
    for kind in RendererKind::ALL {
        let tok = test_tokenizer(kind);
        let ids = tok.encode_ordinary(SAMPLE);
        assert_eq!(tok.decode(&ids), SAMPLE, "{kind}");
        assert!(ids.iter().all(|t| !tok.is_special(*t)));
        for s in metaclaw_render::family_specials(kind) {
            let id = tok.special_id(s).unwrap();
            assert!(tok.is_special(id));
            let mixed = [ids.clone(), vec![id], ids.clone()].concat();
            assert_eq!(tok.decode(&mixed), format!("{SAMPLE}{s}{SAMPLE}"));
        }
        assert_eq!(tok.special_id("<|not_a_token|>"), None);
        // Out-of-range ids are skipped, not a panic.
        assert_eq!(tok.decode(&[u32::MAX]), "");
        assert!(tok.encode_ordinary("").is_empty());
    }
}

#[test]
fn loads_a_saved_tokenizer_json() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokenizer.json");
    write_test_tokenizer_json(RendererKind::Qwen3, &path);
    let loaded = Tokenizer::from_file(&path).unwrap();
    let trained = test_tokenizer(RendererKind::Qwen3);
    assert_eq!(
        loaded.encode_ordinary(SAMPLE),
        trained.encode_ordinary(SAMPLE)
    );
    assert_eq!(
        loaded.special_id("<|im_end|>"),
        trained.special_id("<|im_end|>")
    );
    assert_eq!(loaded.vocab_size(), trained.vocab_size());
    Renderer::new(RendererKind::Qwen3, Arc::new(loaded)).unwrap();
}

/// A hand-written tokenizer.json in the standard HF layout, with a BOS post-processor (as
/// Llama's has): ordinary encoding must not add BOS and must not match added tokens.
#[test]
fn loads_a_handwritten_hf_tokenizer_json() {
    let json = r#"{
      "version": "1.0",
      "truncation": null,
      "padding": null,
      "added_tokens": [
        {"id": 12, "content": "<|im_start|>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
        {"id": 13, "content": "<|im_end|>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}
      ],
      "normalizer": null,
      "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
      "post_processor": {
        "type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": "<|im_start|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
        "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {"<|im_start|>": {"id": "<|im_start|>", "ids": [12], "tokens": ["<|im_start|>"]}}
      },
      "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
      "model": {
        "type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
        "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
        "vocab": {"h": 0, "e": 1, "l": 2, "o": 3, "Ġ": 4, "w": 5, "r": 6, "d": 7, "he": 8, "ll": 9, "hell": 10, "hello": 11},
        "merges": [["h", "e"], ["l", "l"], ["he", "ll"], ["hell", "o"]]
      }
    }"#;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokenizer.json");
    std::fs::write(&path, json).unwrap();
    let tok = Tokenizer::from_file(&path).unwrap();
    assert_eq!(tok.encode_ordinary("hello world"), [11, 4, 5, 3, 6, 2, 7]);
    assert_eq!(
        tok.decode(&[12, 11, 4, 5, 3, 6, 2, 7, 13]),
        "<|im_start|>hello world<|im_end|>"
    );
    assert_eq!(tok.special_id("<|im_end|>"), Some(13));
    assert_eq!(tok.vocab_size(), 14);
    // Special-token text is plain text to encode_ordinary (prompt-injection guard).
    let ids = tok.encode_ordinary("hello<|im_end|>");
    assert!(!ids.contains(&13));
}

#[test]
fn tokenizer_file_errors() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.json");
    let err = Tokenizer::from_file(&missing).unwrap_err();
    assert!(matches!(err, RenderError::TokenizerMissing(_)), "{err}");
    assert!(err.to_string().contains("nope.json"));

    let corrupt = dir.path().join("tokenizer.json");
    std::fs::write(&corrupt, "{\"model\": 3}").unwrap();
    let err = Tokenizer::from_file(&corrupt).unwrap_err();
    assert!(matches!(err, RenderError::TokenizerCorrupt { .. }), "{err}");
}

#[test]
fn missing_special_token_is_a_readable_error() {
    let err = Renderer::new(RendererKind::Llama3, test_tokenizer(RendererKind::Qwen3)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tokenizer for test-qwen3 has no <|begin_of_text|> token; renderer llama3 needs it"
    );
}

#[test]
fn kimi_tiktoken_loads_encodes_and_renders() {
    let dir = tempfile::tempdir().unwrap();
    let (model, config) = write_kimi_tiktoken(dir.path());
    let tok = Tokenizer::from_tiktoken(&model, &config).unwrap();

    let ids = tok.encode_ordinary(SAMPLE);
    assert_eq!(tok.decode(&ids), SAMPLE);
    // Learned word tokens are used.
    assert!(tok.encode_ordinary(" weather").len() == 1);
    let end = tok.special_id("<|im_end|>").unwrap();
    assert!(tok.is_special(end));
    assert!(!tok.encode_ordinary("say <|im_end|> now").contains(&end));
    // Unnamed reserved ids exist, as in Kimi's tokenizer.
    let base = end - 2; // `<|im_end|>` is the third special after the ranks.
    assert_eq!(tok.vocab_size(), base as usize + 256);
    assert_eq!(
        tok.decode(&[base + 200]),
        format!("<|reserved_token_{}|>", base + 200)
    );
    assert_eq!(tok.decode(&[u32::MAX]), "");

    for kind in [RendererKind::KimiK2, RendererKind::KimiK25] {
        let r = Renderer::new(
            kind,
            Arc::new(Tokenizer::from_tiktoken(&model, &config).unwrap()),
        )
        .unwrap();
        let reply = ChatMessage::assistant("It is sunny.")
            .with_reasoning("Check the tool output.")
            .with_tool_calls(vec![ToolCall {
                id: "call_0".into(),
                name: "get_weather".into(),
                arguments: r#"{"city": "東京"}"#.into(),
            }]);
        let tokens = r.render_completion(&reply).unwrap();
        let parsed = r.parse_response(&tokens);
        assert_eq!(parsed.finish, Finish::Stop);
        assert_eq!(parsed.to_message(), reply, "{kind}");
        let prompt = r
            .render_prompt(&[ChatMessage::user("Weather in 東京?")], &[])
            .unwrap();
        assert!(r.tokenizer().decode(&prompt).starts_with(
            "<|im_system|>system<|im_middle|>You are Kimi, an AI assistant created by Moonshot AI.<|im_end|><|im_user|>user<|im_middle|>Weather in 東京?<|im_end|><|im_assistant|>assistant<|im_middle|>"
        ));
    }
}

#[test]
fn kimi_pattern_splits_like_kimi() {
    // Words keep a leading space and contractions, digits group by three, CJK runs stay whole.
    let re = fancy_regex::Regex::new(metaclaw_render::KIMI_PATTERN).unwrap();
    let pieces: Vec<&str> = re
        .find_iter("Hello World's 1234567 東京タワー!!\n\n  x")
        .map(|m| m.unwrap().as_str())
        .collect();
    assert_eq!(
        pieces,
        [
            "Hello",
            " World's",
            " ",
            "123",
            "456",
            "7",
            " ",
            "東京",
            "タワー",
            "!!\n\n",
            " ",
            " x"
        ]
    );
}

#[test]
fn corrupt_tiktoken_files_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let (model, config) = write_kimi_tiktoken(dir.path());
    let good = std::fs::read_to_string(&model).unwrap();

    let check = |contents: &str, needle: &str| {
        std::fs::write(&model, contents).unwrap();
        let err = Tokenizer::from_tiktoken(&model, &config).unwrap_err();
        assert!(matches!(err, RenderError::TokenizerCorrupt { .. }), "{err}");
        assert!(err.to_string().contains(needle), "{err}");
    };
    check(&good.replacen("IQ== 33", "!!! 33", 1), "bad base64");
    check(&good.replacen("IQ== 33\n", "", 1), "byte 0x21 has no rank");
    check(&format!("{good}IQ== 999999\n"), "duplicate");
    check("garbage", "expected `token rank`");

    std::fs::write(&model, &good).unwrap();
    std::fs::write(&config, "not json").unwrap();
    assert!(matches!(
        Tokenizer::from_tiktoken(&model, &config),
        Err(RenderError::TokenizerCorrupt { .. })
    ));
    let err = Tokenizer::from_tiktoken(&dir.path().join("x.model"), &config).unwrap_err();
    assert!(matches!(err, RenderError::TokenizerMissing(_)), "{err}");
}
