//! Native async client for the [Tinker](https://tinker-docs.thinkingmachines.ai)
//! training API: LoRA fine-tuning and RL with server-side forward/backward,
//! optimizer steps, checkpoints and sampling.
//!
//! ```no_run
//! # async fn demo() -> tinker_client::Result<()> {
//! use std::collections::BTreeMap;
//! use tinker_client::*;
//!
//! let service = ServiceClient::connect(ClientConfig::new(DEFAULT_BASE_URL, "tml-…")).await?;
//! let model = service.create_lora_model("Qwen/Qwen3-8B", LoraConfig::rank(32)).await?;
//! let sampler = model.save_weights_and_get_sampling_client().await?;
//! let out = sampler.sample(&[1, 2, 3], 4, &SamplingParams::max_tokens(64)).await?;
//! let seq = &out.sequences[0];
//! let mut full = vec![1, 2, 3];
//! full.extend(&seq.tokens);
//! let mut lps = vec![0.0; 3];
//! lps.extend(seq.logprobs.clone().unwrap_or_default());
//! let adv: Vec<f32> = (0..full.len()).map(|i| if i >= 3 { 1.0 } else { 0.0 }).collect();
//! let datum = Datum::rl_from_sequence(&full, &lps, &adv);
//! // Submit both, then await both: they share one server "clock cycle".
//! let fb = model.forward_backward(vec![datum], LossFn::ImportanceSampling, BTreeMap::new()).await?;
//! let step = model.optim_step(AdamParams::lr(1e-5)).await?;
//! let (_fb, _step) = (fb.result().await?, step.result().await?);
//! let ckpt = model.save_state("step-1").await?.result().await?;
//! # let _ = ckpt;
//! service.close().await;
//! # Ok(()) }
//! ```
//!
//! * Submission and result are separate: every training op returns a
//!   [`Pending`]; a failed training future poisons its [`TrainingClient`]
//!   ([`Error::Poisoned`]) — recover with a new model + `load_state`.
//! * Wire dialects: JSON everywhere, or protobuf `forward_backward` bodies
//!   ([`WireDialect`]); sample/forward_backward results are negotiated with
//!   `Accept` and decoded from JSON or protobuf by `Content-Type`.
//! * Feature `fake`: [`fake::FakeServer`], an in-process server with a tiny
//!   trainable policy and fault injection, for tests of code built on this crate.

mod config;
mod error;
mod future;
mod result_exercise;
mod retry;
mod sampling;
mod session;
mod tensor;
mod training;
mod transport;
pub mod wire;

#[cfg(feature = "fake")]
pub mod fake;

pub use config::{ClientConfig, DEFAULT_BASE_URL, RetryPolicy, WireDialect};
pub use error::{Error, Result};
pub use future::Pending;
#[doc(hidden)]
pub use result_exercise::{ResultExercise, exercise_result};
pub use sampling::{
    SampleOutput, SampledSequence, SamplerSource, SamplingClient, SamplingParams, Stop, StopReason,
};
pub use session::{
    Capabilities, Checkpoint, FinishReason, HeartbeatStatus, ServiceClient, SupportedModel,
};
pub use tensor::{Datum, TensorData};
pub use training::{
    AdamParams, ForwardBackwardOutput, LoraConfig, LossFn, OptimStepOutput, SamplerWeights,
    TrainingClient,
};
