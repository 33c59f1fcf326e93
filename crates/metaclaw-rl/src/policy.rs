//! Serving chat from the LoRA policy: render the request to tokens, sample through the
//! current sampler, parse the sampled tokens, answer in OpenAI shape, and keep the exact
//! tokens and logprobs of main turns for training.
//!
//! The sampler sits behind an atomic pointer: the trainer swaps a new one in once its
//! weights are saved, and requests in flight finish on the one they started with, so chat
//! never waits for training.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use arc_swap::ArcSwapOption;
use metaclaw_domain::TurnType;
use metaclaw_proxy::{LocalError, TurnContext};
use metaclaw_render::{Finish, ParsedResponse, Renderer};
use serde_json::{Map, Value, json};
use tinker_client::{SamplingClient, SamplingParams, Stop};

/// A sampler and the weights it serves.
pub struct Sampler {
    pub client: SamplingClient,
    /// Checkpoint path or sampling session id: what the dashboard and samples show.
    pub name: String,
    /// The training step whose weights these are (0 = before any training).
    pub step: u64,
}

/// One sampled response of a served turn, exactly as the sampler returned it.
#[derive(Debug, Clone)]
pub struct SampledResponse {
    /// The sequence's position in the sampler's answer: 0 is what the user got.
    pub idx: u32,
    pub tokens: Vec<u32>,
    pub logprobs: Vec<f32>,
    pub text: String,
}

/// What serving a main turn leaves for the sample recorder.
#[derive(Debug, Clone)]
pub struct Trace {
    pub prompt: Vec<u32>,
    pub sampler: String,
    /// The sequences that came with logprobs (untrainable ones are left out).
    pub responses: Vec<SampledResponse>,
}

#[derive(Debug, Clone, Copy)]
pub struct SamplingDefaults {
    pub temperature: f64,
    pub max_new_tokens: u32,
    pub group_size: u32,
}

pub struct Policy {
    renderer: Arc<Renderer>,
    model: String,
    defaults: SamplingDefaults,
    sampler: ArcSwapOption<Sampler>,
    active: AtomicBool,
    traces: std::sync::Mutex<HashMap<String, Trace>>,
}

impl Policy {
    pub fn new(renderer: Arc<Renderer>, model: String, defaults: SamplingDefaults) -> Self {
        Self {
            renderer,
            model,
            defaults,
            sampler: ArcSwapOption::empty(),
            active: AtomicBool::new(false),
            traces: Default::default(),
        }
    }

    pub fn renderer(&self) -> &Arc<Renderer> {
        &self.renderer
    }

    /// Makes `sampler` serve every request that starts from now on.
    pub fn swap(&self, sampler: Sampler) {
        tracing::info!(sampler = %sampler.name, step = sampler.step, "policy: sampler swapped in");
        self.sampler.store(Some(Arc::new(sampler)));
    }

    pub fn current(&self) -> Option<Arc<Sampler>> {
        self.sampler.load_full()
    }

    /// Whether chat goes to the policy (RL modes) or upstream (skills_only).
    pub fn set_active(&self, on: bool) {
        self.active.store(on, Ordering::Relaxed);
    }

    pub fn is_active(&self) -> bool {
        self.active.load(Ordering::Relaxed)
    }

    /// The trace a served main turn left, once (the recorder takes it).
    pub fn take_trace(&self, turn_id: &str) -> Option<Trace> {
        self.lock_traces().remove(turn_id)
    }

    fn lock_traces(&self) -> std::sync::MutexGuard<'_, HashMap<String, Trace>> {
        self.traces.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) async fn answer(
        &self,
        ctx: &TurnContext,
        request: Map<String, Value>,
    ) -> Result<Value, LocalError> {
        let messages = request
            .get("messages")
            .and_then(Value::as_array)
            .ok_or_else(|| LocalError::BadRequest("`messages` must be an array".into()))?;
        let messages = metaclaw_render::messages_from_openai(messages)
            .map_err(|e| LocalError::BadRequest(e.to_string()))?;
        let tools = request
            .get("tools")
            .map(metaclaw_render::tools_from_openai)
            .unwrap_or_default();
        let prompt = self
            .renderer
            .render_prompt(&messages, &tools)
            .map_err(|e| LocalError::BadRequest(e.to_string()))?;
        let sampler = self.current().ok_or_else(|| {
            LocalError::Unavailable("the RL policy is still starting (no sampler yet)".into())
        })?;
        let params = self.params(&request);
        let n = match ctx.turn_type {
            TurnType::Main => self.defaults.group_size.max(1),
            TurnType::Side => 1,
        };
        let out = sampler
            .client
            .sample(&prompt, n, &params)
            .await
            .map_err(|e| LocalError::Failed(format!("sampling failed: {e}")))?;
        // Each sequence is parsed once: the first answers the user, all of them are samples.
        let parsed: Vec<ParsedResponse> = out
            .sequences
            .iter()
            .map(|s| self.renderer.parse_response(&s.tokens))
            .collect();
        let (Some(first), Some(first_parsed)) = (out.sequences.first(), parsed.first()) else {
            return Err(LocalError::Failed(
                "the sampler returned no sequence".into(),
            ));
        };
        let completion = completion_json(
            first_parsed,
            request
                .get("model")
                .and_then(Value::as_str)
                .filter(|m| !m.is_empty())
                .unwrap_or(&self.model),
            prompt.len(),
            first.tokens.len(),
        );
        if ctx.turn_type == TurnType::Main {
            let responses: Vec<SampledResponse> = out
                .sequences
                .iter()
                .zip(&parsed)
                .enumerate()
                .filter_map(|(idx, (s, p))| {
                    let logprobs = s.logprobs.clone().filter(|l| l.len() == s.tokens.len());
                    if logprobs.is_none() {
                        tracing::warn!("sampler returned no per-token logprobs; not trainable");
                    }
                    Some(SampledResponse {
                        idx: u32::try_from(idx).unwrap_or(u32::MAX),
                        text: response_text(p),
                        tokens: s.tokens.clone(),
                        logprobs: logprobs?,
                    })
                })
                .collect();
            if !responses.is_empty() {
                self.lock_traces().insert(
                    ctx.turn_id.clone(),
                    Trace {
                        prompt,
                        sampler: sampler.name.clone(),
                        responses,
                    },
                );
            }
        }
        Ok(completion)
    }

    fn params(&self, request: &Map<String, Value>) -> SamplingParams {
        let num = |k: &str| request.get(k).and_then(Value::as_f64);
        let max_tokens = request
            .get("max_completion_tokens")
            .or_else(|| request.get("max_tokens"))
            .and_then(Value::as_u64)
            .map_or(self.defaults.max_new_tokens, |m| {
                u32::try_from(m).unwrap_or(u32::MAX)
            });
        SamplingParams {
            max_tokens: Some(max_tokens),
            seed: request.get("seed").and_then(Value::as_u64),
            temperature: num("temperature").unwrap_or(self.defaults.temperature),
            top_p: num("top_p").unwrap_or(1.0),
            top_k: -1,
            // Stop on the renderer's end-of-turn tokens: parsing needs them in the output.
            stop: Stop::Tokens(self.renderer.stop_tokens()),
        }
    }
}

/// The text the judge reads: content, with tool calls spelled out.
pub fn response_text(parsed: &ParsedResponse) -> String {
    let mut text = parsed.content.clone();
    for call in &parsed.tool_calls {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&format!("[tool call] {}({})", call.name, call.arguments));
    }
    text
}

fn completion_json(
    parsed: &ParsedResponse,
    model: &str,
    prompt: usize,
    completion: usize,
) -> Value {
    let mut message = json!({"role": "assistant", "content": parsed.content});
    if let Some(r) = parsed.reasoning.as_ref().filter(|r| !r.is_empty()) {
        message["reasoning_content"] = json!(r);
    }
    if !parsed.tool_calls.is_empty() {
        message["tool_calls"] = parsed
            .tool_calls
            .iter()
            .map(|c| {
                json!({"id": c.id, "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments}})
            })
            .collect();
    }
    let finish = if !parsed.tool_calls.is_empty() {
        "tool_calls"
    } else if parsed.finish == Finish::Length {
        "length"
    } else {
        "stop"
    };
    json!({
        "id": format!("chatcmpl-{}", uuid::Uuid::new_v4().simple()),
        "object": "chat.completion",
        "created": metaclaw_domain::Clock::now(&metaclaw_domain::SystemClock).timestamp(),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion},
    })
}
