//! Golden renderings: the decoded prompt (and prompt + response) of one conversation with a
//! system prompt, tools, reasoning, parallel tool calls and tool results, per renderer.
//! `UPDATE_GOLDEN=1 cargo test -p metaclaw-render --all-features --test golden` rewrites them.

#![cfg(feature = "test-tokenizer")]

use std::path::PathBuf;

use metaclaw_render::{ChatMessage, Renderer, RendererKind, ToolCall, ToolSpec, test_tokenizer};

pub fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "get_weather".into(),
            description: "Get the current weather for a city".into(),
            parameters: serde_json::json!({
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "City name"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}
                },
                "required": ["city"]
            }),
        },
        ToolSpec {
            name: "search".into(),
            description: String::new(),
            parameters: serde_json::json!({"type": "object", "properties": {"query": {"type": "string"}}}),
        },
    ]
}

pub fn conversation() -> Vec<ChatMessage> {
    vec![
        ChatMessage::system("You are a helpful assistant."),
        ChatMessage::user("Hi! Who are you?"),
        ChatMessage::assistant("I am an assistant.").with_reasoning("The user greets me."),
        ChatMessage::user("What is the weather in Paris and Tokyo?"),
        ChatMessage::assistant("Let me check.")
            .with_reasoning("I need the weather tool for both cities.")
            .with_tool_calls(vec![
                ToolCall {
                    id: "call_a".into(),
                    name: "get_weather".into(),
                    arguments: r#"{"city": "Paris"}"#.into(),
                },
                ToolCall {
                    id: "call_b".into(),
                    name: "get_weather".into(),
                    arguments: r#"{"city": "Tokyo", "unit": "celsius"}"#.into(),
                },
            ]),
        ChatMessage::tool("call_a", "sunny, 24 degrees"),
        ChatMessage::tool("call_b", "rain, 18 degrees"),
    ]
}

pub fn response() -> ChatMessage {
    ChatMessage::assistant("Paris is sunny (24 °C); Tokyo has rain (18 °C).")
        .with_reasoning("Both results are in; summarise them.")
}

fn check(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.txt"));
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (run with UPDATE_GOLDEN=1)", path.display()));
    assert_eq!(actual, expected, "golden mismatch for {name}");
}

fn golden(kind: RendererKind) {
    let tok = test_tokenizer(kind);
    let renderer = Renderer::new(kind, tok.clone()).unwrap();
    let prompt = renderer.render_prompt(&conversation(), &tools()).unwrap();
    check(&format!("{}_prompt", kind.as_str()), &tok.decode(&prompt));

    let full = renderer
        .render_conversation(&conversation(), &tools(), &response())
        .unwrap();
    assert_eq!(
        &full[..prompt.len()],
        &prompt[..],
        "prompt must be a prefix"
    );
    let text = tok.decode(&full);
    check(&format!("{}_conversation", kind.as_str()), &text);

    // Every special token in the text came from an id (none was re-tokenised text).
    for special in metaclaw_render::family_specials(kind) {
        let id = tok.special_id(special).unwrap();
        assert_eq!(
            full.iter().filter(|t| **t == id).count(),
            text.matches(special).count(),
            "{special} in {}",
            kind.as_str()
        );
    }

    // Without tools and system prompt (Kimi inserts its default system prompt).
    let plain = renderer.render_prompt(&conversation()[1..4], &[]).unwrap();
    check(&format!("{}_plain", kind.as_str()), &tok.decode(&plain));

    // Rendering is deterministic and re-encoding the decoded text's plain parts is stable.
    assert_eq!(
        prompt,
        renderer.render_prompt(&conversation(), &tools()).unwrap()
    );
}

#[test]
fn golden_qwen3() {
    golden(RendererKind::Qwen3);
}

#[test]
fn golden_qwen3_instruct() {
    golden(RendererKind::Qwen3Instruct);
}

#[test]
fn golden_llama3() {
    golden(RendererKind::Llama3);
}

#[test]
fn golden_kimi_k2() {
    golden(RendererKind::KimiK2);
}

#[test]
fn golden_kimi_k25() {
    golden(RendererKind::KimiK25);
}

/// With `keep_thinking_history` the earlier turn's reasoning stays in the prompt.
#[test]
fn golden_qwen3_keep_thinking() {
    let kind = RendererKind::Qwen3;
    let tok = test_tokenizer(kind);
    let renderer =
        Renderer::new(kind, tok.clone())
            .unwrap()
            .with_options(metaclaw_render::RenderOptions {
                keep_thinking_history: true,
                enable_thinking: true,
            });
    let prompt = renderer.render_prompt(&conversation(), &[]).unwrap();
    check("qwen3_keep_thinking_prompt", &tok.decode(&prompt));
}

/// Token exactness: the rendered ids equal what HF `tokenizers` gives for the rendered text
/// (`encode(text, add_special_tokens=False)`), i.e. what `apply_chat_template(tokenize=True)`
/// would produce for the same string.
#[test]
fn rendered_ids_match_hf_encoding_of_the_text() {
    for kind in RendererKind::ALL {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokenizer.json");
        metaclaw_render::write_test_tokenizer_json(kind, &path);
        let hf = tokenizers::Tokenizer::from_file(&path).unwrap();
        let renderer = Renderer::new(kind, test_tokenizer(kind)).unwrap();
        let ids = renderer
            .render_conversation(&conversation(), &tools(), &response())
            .unwrap();
        let text = renderer.tokenizer().decode(&ids);
        assert_eq!(
            hf.encode(text, false).unwrap().get_ids(),
            &ids[..],
            "{kind}"
        );
    }
}

/// The SkyRL test server's tiny model tokenizer (a real HF tokenizer.json with only
/// `<|endoftext|>`, `<|im_start|>`, `<|im_end|>`): the Qwen3 renderer works with `<think>` and
/// `<tool_call>` as text, and its ids equal those Python `tokenizers` 0.22.2 produced for the
/// golden text (`*.hf_ids.json`, generated once, checked in; to regenerate:
/// `Tokenizer.from_file(fixture).encode(open(golden_txt).read(), add_special_tokens=False).ids`).
#[test]
fn skyrl_tiny_tokenizer_matches_python_hf_ids() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests");
    let tok = metaclaw_render::Tokenizer::from_file(
        &dir.join("fixtures/skyrl-tiny-qwen3-tokenizer.json"),
    )
    .unwrap();
    assert_eq!(tok.vocab_size(), 362);
    let renderer = Renderer::new(RendererKind::Qwen3, std::sync::Arc::new(tok)).unwrap();
    let ids = renderer
        .render_conversation(&conversation(), &tools(), &response())
        .unwrap();
    check(
        "skyrl_tiny_qwen3_conversation",
        &renderer.tokenizer().decode(&ids),
    );
    let expected: Vec<u32> = serde_json::from_str(
        &std::fs::read_to_string(dir.join("golden/skyrl_tiny_qwen3_conversation.hf_ids.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(ids, expected);

    // Parsing works with text markers too.
    let reply = renderer.render_completion(&response()).unwrap();
    let parsed = renderer.parse_response(&reply);
    assert_eq!(parsed.to_message(), response());
    assert_eq!(renderer.stop_tokens(), [2]);
}

/// The `tool_declare` text a renderer writes for the tools in a fixture file.
fn tool_declaration(kind: RendererKind, fixture: &str) -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests");
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("fixtures").join(fixture)).unwrap(),
    )
    .unwrap();
    let tools = metaclaw_render::tools_from_openai(&json);
    let tok = test_tokenizer(kind);
    let renderer = Renderer::new(kind, tok.clone()).unwrap();
    let text = tok.decode(
        &renderer
            .render_prompt(&[ChatMessage::user("hi")], &tools)
            .unwrap(),
    );
    let start = "<|im_system|>tool_declare<|im_middle|>";
    let body = &text[text.find(start).unwrap() + start.len()..];
    body[..body.find("<|im_end|>").unwrap()].to_owned()
}

/// Expected texts written once by Kimi K2.5's own tool converter (its tokenizer's
/// `apply_chat_template` path: keys sorted, TypeScript, compact JSON when a schema does not
/// fit), so they are compared, never regenerated: OpenClaw's twelve real tools plus schemas
/// with `$defs`, self references, unions, enums with null, constraints, defaults and
/// additionalProperties.
#[test]
fn kimi_k25_declares_tools_like_its_tokenizer() {
    let golden = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    for (fixture, expected) in [
        ("kimi_tools.json", "kimi_k25_tools.txt"),
        ("kimi_tools_fallback.json", "kimi_k25_tools_fallback.txt"),
    ] {
        let want = std::fs::read_to_string(golden.join(expected)).unwrap();
        let got = tool_declaration(RendererKind::KimiK25, fixture);
        if got != want {
            let line = got
                .lines()
                .zip(want.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            panic!(
                "{expected}: first difference at line {}:\n ours: {:?}\n want: {:?}",
                line + 1,
                got.lines().nth(line),
                want.lines().nth(line)
            );
        }
    }
    // K2 (Thinking) declares the same tools as compact JSON with sorted keys.
    let k2 = tool_declaration(RendererKind::KimiK2, "kimi_tools_fallback.json");
    assert_eq!(
        k2,
        std::fs::read_to_string(golden.join("kimi_k25_tools_fallback.txt")).unwrap()
    );
}
