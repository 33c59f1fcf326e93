//! Training: `TrainingClient` and its request/result types.
//!
//! Every operation reserves the next `seq_id` of the model (1, 2, 3, …), submits,
//! and returns a [`Pending`] as soon as the server accepted it; the server runs a
//! model's requests strictly in `seq_id` order.
//!
//! **Poisoning**: if any training submission or result fails, later submissions
//! fail fast with [`Error::Poisoned`] — the server-side model may be stalled or
//! have skipped a step. Recover by creating a new model
//! ([`ServiceClient::create_model_from_state`](crate::ServiceClient::create_model_from_state)
//! or `create_lora_model` + [`TrainingClient::load_state`]) from the last
//! `save_state` checkpoint.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::future::{Decoder, Pending, ResultBody, from_json};
use crate::sampling::{SamplerSource, SamplingClient};
use crate::session::Shared;
use crate::tensor::{Datum, TensorData};
use crate::transport::{Body, Request};
use crate::wire::json::{
    self, DatumJson, ForwardBackwardInput, LoadWeightsRequest, OptimStepRequest, PathResult,
    SaveWeightsForSamplerRequest, SaveWeightsRequest, Tag, lenient_metrics,
};
use crate::wire::proto;

/// LoRA adapter settings for `create_model`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoraConfig {
    pub rank: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    pub train_unembed: bool,
    pub train_mlp: bool,
    pub train_attn: bool,
}

impl Default for LoraConfig {
    fn default() -> Self {
        Self {
            rank: 32,
            seed: None,
            train_unembed: true,
            train_mlp: true,
            train_attn: true,
        }
    }
}

impl LoraConfig {
    pub fn rank(rank: u32) -> Self {
        Self {
            rank,
            ..Self::default()
        }
    }
}

/// Server-side loss function name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LossFn {
    /// Needs `target_tokens` and `weights`.
    CrossEntropy,
    /// Needs `target_tokens`, `logprobs` (sampler), `advantages`.
    ImportanceSampling,
    /// As IS; config `clip_low_threshold` / `clip_high_threshold`.
    Ppo,
    /// As PPO.
    Cispo,
    Other(String),
}

impl LossFn {
    pub fn as_str(&self) -> &str {
        match self {
            LossFn::CrossEntropy => "cross_entropy",
            LossFn::ImportanceSampling => "importance_sampling",
            LossFn::Ppo => "ppo",
            LossFn::Cispo => "cispo",
            LossFn::Other(s) => s,
        }
    }

    pub fn parse(s: &str) -> Self {
        match s {
            "cross_entropy" => LossFn::CrossEntropy,
            "importance_sampling" => LossFn::ImportanceSampling,
            "ppo" => LossFn::Ppo,
            "cispo" => LossFn::Cispo,
            other => LossFn::Other(other.to_string()),
        }
    }
}

impl std::fmt::Display for LossFn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Adam hyper-parameters (spec §5.6 defaults; `grad_clip_norm` 0 = off).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AdamParams {
    pub learning_rate: f64,
    pub beta1: f64,
    pub beta2: f64,
    pub eps: f64,
    pub weight_decay: f64,
    pub grad_clip_norm: f64,
}

impl Default for AdamParams {
    fn default() -> Self {
        Self {
            learning_rate: 1e-4,
            beta1: 0.9,
            beta2: 0.95,
            eps: 1e-12,
            weight_decay: 0.0,
            grad_clip_norm: 0.0,
        }
    }
}

impl AdamParams {
    pub fn lr(learning_rate: f64) -> Self {
        Self {
            learning_rate,
            ..Self::default()
        }
    }
}

/// Result of `forward_backward` / `forward`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ForwardBackwardOutput {
    #[serde(default)]
    pub loss_fn_output_type: String,
    /// Per datum: `logprobs` (learner logprobs of `target_tokens`), and e.g.
    /// `elementwise_loss`.
    #[serde(default)]
    pub loss_fn_outputs: Vec<BTreeMap<String, TensorData>>,
    #[serde(default, deserialize_with = "lenient_metrics")]
    pub metrics: BTreeMap<String, f64>,
}

impl ForwardBackwardOutput {
    /// `loss_fn_outputs[i]["logprobs"]` as floats.
    pub fn logprobs(&self, i: usize) -> Option<Vec<f32>> {
        self.loss_fn_outputs
            .get(i)?
            .get("logprobs")
            .map(TensorData::to_f32_vec)
    }
}

/// Result of `optim_step`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OptimStepOutput {
    #[serde(default, deserialize_with = "lenient_metrics")]
    pub metrics: BTreeMap<String, f64>,
}

/// Result of `save_weights_for_sampler`: a named save yields `path`; an
/// ephemeral one yields `sampling_session_id` (ready to sample from).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SamplerWeights {
    pub path: Option<String>,
    pub sampling_session_id: Option<String>,
}

/// Handle to one training model. Cheap to clone (clones share the seq_id
/// counter and the poison flag).
#[derive(Clone)]
pub struct TrainingClient {
    shared: Arc<Shared>,
    model_id: String,
    base_model: String,
    counter: Arc<AtomicI64>,
    poisoned: Arc<AtomicBool>,
}

impl std::fmt::Debug for TrainingClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrainingClient")
            .field("model_id", &self.model_id)
            .field("poisoned", &self.is_poisoned())
            .finish()
    }
}

impl TrainingClient {
    pub(crate) fn new(shared: Arc<Shared>, model_id: String, base_model: String) -> Self {
        Self {
            shared,
            model_id,
            base_model,
            counter: Arc::new(AtomicI64::new(0)),
            poisoned: Arc::new(AtomicBool::new(false)),
        }
    }

    pub fn model_id(&self) -> &str {
        &self.model_id
    }

    pub fn base_model(&self) -> &str {
        &self.base_model
    }

    pub fn is_poisoned(&self) -> bool {
        self.poisoned.load(Ordering::SeqCst)
    }

    /// The `seq_id` the most recent submission used (0 before any).
    pub fn last_seq_id(&self) -> i64 {
        self.counter.load(Ordering::SeqCst)
    }

    /// Reserve the next seq_id, then submit. A failed submission leaves a gap the
    /// server would wait on forever, so it poisons the client too.
    async fn submit<T>(
        &self,
        build: impl FnOnce(i64) -> Result<Request>,
        request_type: &'static str,
        decode: Decoder<T>,
    ) -> Result<Pending<T>> {
        if self.is_poisoned() {
            return Err(Error::Poisoned);
        }
        self.shared.ensure_open()?;
        let seq_id = self.counter.fetch_add(1, Ordering::SeqCst) + 1;
        let req = build(seq_id)?;
        match self.shared.submit_future(req, request_type, decode).await {
            Ok(p) => Ok(p.poisoning(self.poisoned.clone())),
            Err(e) => {
                self.poisoned.store(true, Ordering::SeqCst);
                Err(e)
            }
        }
    }

    /// Forward + backward pass; gradients accumulate until `optim_step`.
    pub async fn forward_backward(
        &self,
        data: Vec<Datum>,
        loss: LossFn,
        config: BTreeMap<String, f64>,
    ) -> Result<Pending<ForwardBackwardOutput>> {
        self.fwd(data, loss, config, false).await
    }

    /// Forward only (logprobs of `target_tokens`, no gradient). Uses the
    /// `cross_entropy` loss so only `target_tokens` (+ optional `weights`) matter.
    pub async fn forward(&self, data: Vec<Datum>) -> Result<Pending<ForwardBackwardOutput>> {
        self.fwd(data, LossFn::CrossEntropy, BTreeMap::new(), true)
            .await
    }

    async fn fwd(
        &self,
        data: Vec<Datum>,
        loss: LossFn,
        config: BTreeMap<String, f64>,
        forward_only: bool,
    ) -> Result<Pending<ForwardBackwardOutput>> {
        let model_id = self.model_id.clone();
        let proto_body = self.shared.proto_fwdbwd;
        let build = move |seq_id: i64| -> Result<Request> {
            if proto_body {
                let bytes = proto::encode_forward_backward(
                    &model_id,
                    seq_id,
                    &data,
                    loss.as_str(),
                    &config,
                    forward_only,
                )?;
                return Ok(Request {
                    method: reqwest::Method::POST,
                    path: "/api/v1/forward_backward".into(),
                    body: Body::Proto(bytes.into()),
                    sdk_method: if forward_only {
                        "TrainingClient.forward"
                    } else {
                        "TrainingClient.forward_backward"
                    },
                    sample_prompt_bytes: None,
                });
            }
            let input = ForwardBackwardInput {
                data: data.iter().map(DatumJson::from).collect(),
                loss_fn: loss.as_str().to_string(),
                loss_fn_config: (!config.is_empty()).then_some(config),
            };
            if forward_only {
                let body = json::ForwardRequest {
                    forward_input: input,
                    model_id,
                    seq_id,
                };
                Request::post_json("/api/v1/forward", &body, "TrainingClient.forward")
            } else {
                let body = json::ForwardBackwardRequest {
                    forward_backward_input: input,
                    model_id,
                    seq_id,
                };
                Request::post_json(
                    "/api/v1/forward_backward",
                    &body,
                    "TrainingClient.forward_backward",
                )
            }
        };
        let rtype = if forward_only {
            "Forward"
        } else {
            "ForwardBackward"
        };
        self.submit(build, rtype, Box::new(|b, _| decode_fwdbwd(b)))
            .await
    }

    pub async fn optim_step(&self, p: AdamParams) -> Result<Pending<OptimStepOutput>> {
        let model_id = self.model_id.clone();
        let build = move |seq_id| {
            let body = OptimStepRequest {
                adam_params: p,
                model_id,
                seq_id,
                kind: Tag::new("optim_step"),
            };
            Request::post_json("/api/v1/optim_step", &body, "TrainingClient.optim_step")
        };
        self.submit(build, "OptimStep", Box::new(|b, _| decode_optim(b)))
            .await
    }

    /// Named → persistent `tinker://…/sampler_weights/<name>` path; `None` →
    /// ephemeral weights addressed by a new `sampling_session_id`.
    pub async fn save_weights_for_sampler(
        &self,
        name: Option<&str>,
    ) -> Result<Pending<SamplerWeights>> {
        let model_id = self.model_id.clone();
        let name = name.map(str::to_string);
        let sampler_seq = name.is_none().then(|| self.shared.next_sampler_seq());
        let modern = self.shared.proto_fwdbwd;
        let build = move |seq_id| {
            let body = SaveWeightsForSamplerRequest {
                model_id,
                path: name,
                sampling_session_seq_id: sampler_seq,
                kind: modern.then(|| "snapshot".to_string()),
                seq_id,
                tag: Tag::new("save_weights_for_sampler"),
            };
            Request::post_json(
                "/api/v1/save_weights_for_sampler",
                &body,
                "TrainingClient.save_weights_for_sampler",
            )
        };
        self.submit(
            build,
            "SaveWeightsForSampler",
            Box::new(|b, _| {
                let r: PathResult = from_json(b)?;
                Ok(SamplerWeights {
                    path: r.path,
                    sampling_session_id: r.sampling_session_id,
                })
            }),
        )
        .await
    }

    /// Ephemeral save + a sampler on those weights.
    pub async fn save_weights_and_get_sampling_client(&self) -> Result<SamplingClient> {
        let w = self.save_weights_for_sampler(None).await?.result().await?;
        self.sampling_client(&w).await
    }

    /// Sampler for saved weights: direct for ephemeral saves, otherwise a new
    /// sampling session on the path.
    pub async fn sampling_client(&self, w: &SamplerWeights) -> Result<SamplingClient> {
        if let Some(id) = &w.sampling_session_id {
            return Ok(SamplingClient::new(self.shared.clone(), id.clone()));
        }
        let Some(path) = &w.path else {
            return Err(Error::Decode(
                "save_weights_for_sampler returned neither path nor session".into(),
            ));
        };
        crate::ServiceClient::from_shared(self.shared.clone())
            .create_sampling_session(SamplerSource::ModelPath(path.clone()))
            .await
    }

    /// Full training state (weights + optimizer) → `tinker://<run>/weights/<name>`.
    pub async fn save_state(&self, name: &str) -> Result<Pending<String>> {
        let model_id = self.model_id.clone();
        let name = name.to_string();
        let build = move |seq_id| {
            let body = SaveWeightsRequest {
                model_id,
                path: name,
                seq_id,
                overwrite: false,
                kind: Tag::new("save_weights"),
            };
            Request::post_json("/api/v1/save_weights", &body, "TrainingClient.save_state")
        };
        self.submit(
            build,
            "SaveWeights",
            Box::new(|b, _| {
                let r: PathResult = from_json(b)?;
                r.path
                    .ok_or_else(|| Error::Decode("save_weights result has no path".into()))
            }),
        )
        .await
    }

    /// Loads a `save_state` checkpoint into this model (optionally with Adam state).
    pub async fn load_state(&self, path: &str, optimizer: bool) -> Result<Pending<()>> {
        let model_id = self.model_id.clone();
        let path = path.to_string();
        let build = move |seq_id| {
            let body = LoadWeightsRequest {
                model_id,
                seq_id,
                path,
                optimizer,
                kind: Tag::new("load_weights"),
            };
            Request::post_json("/api/v1/load_weights", &body, "TrainingClient.load_state")
        };
        self.submit(build, "LoadWeights", Box::new(|_, _| Ok(())))
            .await
    }
}

pub(crate) fn decode_fwdbwd(b: ResultBody) -> Result<ForwardBackwardOutput> {
    match b {
        ResultBody::Proto(bytes) => proto::decode_forward_backward_output(&bytes),
        json => from_json(json),
    }
}

pub(crate) fn decode_optim(b: ResultBody) -> Result<OptimStepOutput> {
    match b {
        // `{"metrics": null}` and `null` both mean "no metrics".
        ResultBody::Json(serde_json::Value::Null) => Ok(OptimStepOutput::default()),
        other => from_json(other),
    }
}
