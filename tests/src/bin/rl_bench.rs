//! What RL serving adds on the request path besides sampling: rendering a real OpenClaw
//! request (53 KB, 20+ tools, a tool-call follow-up) to tokens, and parsing a sampled
//! response with a tool call back out of the token stream. Uses the tiny Qwen tokenizer
//! from the fixtures (byte-level BPE, so token counts are higher than a real vocabulary's).
//!
//!   cargo run --release -p metaclaw-tests --bin rl-bench

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use metaclaw_render::{
    ChatMessage, Renderer, RendererKind, Tokenizer, ToolCall, messages_from_openai,
    tools_from_openai,
};
use serde_json::Value;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn time(n: usize, mut f: impl FnMut()) -> Vec<Duration> {
    let mut out: Vec<Duration> = (0..n)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    out.sort();
    out
}

fn report(what: &str, d: &[Duration]) {
    println!(
        "{what:<44} p50 {:>8.3} ms   p99 {:>8.3} ms",
        percentile(d, 0.5).as_secs_f64() * 1e3,
        percentile(d, 0.99).as_secs_f64() * 1e3
    );
}

fn main() -> anyhow::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tok = Arc::new(Tokenizer::from_file(
        &root.join("fixtures/rl/tiny-qwen3-tokenizer.json"),
    )?);
    let request: Value = serde_json::from_str(&std::fs::read_to_string(
        root.join("python/fixtures/openclaw_openai_toolcall_followup.json"),
    )?)?;
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    let tools_json = request["tools"].clone();

    for kind in [RendererKind::Qwen3Instruct, RendererKind::Qwen3] {
        let renderer = match Renderer::new(kind, tok.clone()) {
            Ok(r) => r,
            Err(e) => {
                println!("{}: skipped ({e})", kind.as_str());
                continue;
            }
        };
        let parsed = messages_from_openai(&messages)?;
        let tools = tools_from_openai(&tools_json);
        let prompt = renderer.render_prompt(&parsed, &tools)?;
        println!(
            "{}: {} messages, {} tools -> {} prompt tokens",
            kind.as_str(),
            parsed.len(),
            tools.len(),
            prompt.len()
        );
        report(
            "  convert OpenAI JSON + render prompt",
            &time(200, || {
                let m = messages_from_openai(&messages).expect("messages");
                let t = tools_from_openai(&tools_json);
                std::hint::black_box(renderer.render_prompt(&m, &t).expect("render"));
            }),
        );
        let reply =
            ChatMessage::assistant("Let me look at that file first.").with_tool_calls(vec![
                ToolCall {
                    id: "call_0".into(),
                    name: "read".into(),
                    arguments: r#"{"path": "src/main.rs", "offset": 0, "limit": 200}"#.into(),
                },
            ]);
        let response = renderer.render_completion(&reply)?;
        report(
            &format!("  parse a {}-token tool-call response", response.len()),
            &time(2000, || {
                std::hint::black_box(renderer.parse_response(&response));
            }),
        );
    }
    Ok(())
}
