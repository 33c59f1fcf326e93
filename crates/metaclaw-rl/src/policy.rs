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

/// Which weights answer a pinned session (evaluation arms, the adapter gate).
#[derive(Debug, Clone, PartialEq)]
pub enum AdapterChoice {
    /// Whatever serves live chat.
    Serving,
    /// The freshly trained adapter waiting for the gate's verdict.
    Candidate,
    /// A trained version (its training step) kept in memory.
    Version(u64),
    /// The base model without any adapter.
    Base,
}

/// How the policy treats one session's requests.
#[derive(Debug, Clone)]
pub struct SessionPin {
    pub adapter: AdapterChoice,
    /// Sequences sampled per main turn (a rollout's group), instead of `rl.group_size`.
    pub samples: Option<u32>,
    /// Keep the samples for training; evaluations keep none.
    pub record: bool,
}

/// Sessions pinned by rollouts and evaluations, shared by every policy the service builds.
#[derive(Default)]
pub struct Pins(std::sync::Mutex<HashMap<String, SessionPin>>);

impl Pins {
    pub fn set(&self, session_id: &str, pin: SessionPin) {
        self.lock().insert(session_id.to_owned(), pin);
    }
    pub fn remove(&self, session_id: &str) {
        self.lock().remove(session_id);
    }
    pub fn get(&self, session_id: &str) -> Option<SessionPin> {
        self.lock().get(session_id).cloned()
    }
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, SessionPin>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Samplers besides the serving one: trained versions, the candidate, the base model.
#[derive(Default)]
struct Versions {
    by_step: std::collections::BTreeMap<u64, Arc<Sampler>>,
    candidate: Option<Arc<Sampler>>,
    base: Option<Arc<Sampler>>,
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
    versions: std::sync::Mutex<Versions>,
    pins: Arc<Pins>,
}

impl Policy {
    pub fn new(
        renderer: Arc<Renderer>,
        model: String,
        defaults: SamplingDefaults,
        pins: Arc<Pins>,
    ) -> Self {
        Self {
            renderer,
            model,
            defaults,
            sampler: ArcSwapOption::empty(),
            active: AtomicBool::new(false),
            traces: Default::default(),
            versions: Default::default(),
            pins,
        }
    }

    fn lock_versions(&self) -> std::sync::MutexGuard<'_, Versions> {
        self.versions.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Holds a freshly trained sampler back from live chat until the gate decides.
    pub fn offer(&self, sampler: Sampler) {
        tracing::info!(sampler = %sampler.name, step = sampler.step, "policy: candidate waits for the gate");
        let sampler = Arc::new(sampler);
        let mut v = self.lock_versions();
        v.by_step.insert(sampler.step, sampler.clone());
        v.candidate = Some(sampler);
    }

    /// The candidate serves from now on; returns its step.
    pub fn promote(&self) -> Option<u64> {
        let candidate = self.lock_versions().candidate.take()?;
        let step = candidate.step;
        tracing::info!(step, "policy: candidate promoted");
        self.sampler.store(Some(candidate));
        Some(step)
    }

    /// Drops the candidate (refused by the gate); the serving sampler stays.
    pub fn discard(&self) -> Option<u64> {
        let mut v = self.lock_versions();
        let candidate = v.candidate.take()?;
        v.by_step.remove(&candidate.step);
        Some(candidate.step)
    }

    pub fn candidate(&self) -> Option<Arc<Sampler>> {
        self.lock_versions().candidate.clone()
    }

    /// Serves a version still held in memory; false when it is not.
    pub fn serve_version(&self, step: u64) -> bool {
        let Some(s) = self.lock_versions().by_step.get(&step).cloned() else {
            return false;
        };
        tracing::info!(step, "policy: serving an earlier version");
        self.sampler.store(Some(s));
        true
    }

    pub fn set_base(&self, sampler: Sampler) {
        self.lock_versions().base = Some(Arc::new(sampler));
    }

    pub fn has_base(&self) -> bool {
        self.lock_versions().base.is_some()
    }

    /// The sampler that answers a request of `session_id`.
    fn sampler_for(&self, pin: Option<&SessionPin>) -> Result<Arc<Sampler>, LocalError> {
        let missing = |what: &str| LocalError::Unavailable(format!("the policy holds no {what}"));
        match pin.map(|p| &p.adapter) {
            None | Some(AdapterChoice::Serving) => self.current().ok_or_else(|| {
                LocalError::Unavailable("the RL policy is still starting (no sampler yet)".into())
            }),
            Some(AdapterChoice::Candidate) => {
                self.candidate().ok_or_else(|| missing("candidate adapter"))
            }
            Some(AdapterChoice::Version(step)) => self
                .lock_versions()
                .by_step
                .get(step)
                .cloned()
                .ok_or_else(|| missing(&format!("adapter version {step}"))),
            Some(AdapterChoice::Base) => self
                .lock_versions()
                .base
                .clone()
                .ok_or_else(|| missing("base-model sampler")),
        }
    }

    pub fn renderer(&self) -> &Arc<Renderer> {
        &self.renderer
    }

    /// Makes `sampler` serve every request that starts from now on.
    pub fn swap(&self, sampler: Sampler) {
        tracing::info!(sampler = %sampler.name, step = sampler.step, "policy: sampler swapped in");
        let sampler = Arc::new(sampler);
        self.lock_versions()
            .by_step
            .insert(sampler.step, sampler.clone());
        self.sampler.store(Some(sampler));
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
        let pin = self.pins.get(&ctx.session_id);
        let sampler = self.sampler_for(pin.as_ref())?;
        let params = self.params(&request);
        let record = pin.as_ref().is_none_or(|p| p.record);
        let n = match ctx.turn_type {
            TurnType::Main if record => pin
                .as_ref()
                .and_then(|p| p.samples)
                .unwrap_or(self.defaults.group_size)
                .max(1),
            _ => 1,
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
        if ctx.turn_type == TurnType::Main && record {
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
