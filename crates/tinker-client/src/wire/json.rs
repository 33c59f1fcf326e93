//! JSON request/response bodies (pydantic `exclude_none` semantics: `None`
//! fields are omitted; most requests carry a `type` discriminator).

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::sampling::SamplingParams;
use crate::tensor::{Datum, TensorData};
use crate::training::{AdamParams, LoraConfig};

/// `{"chunks":[{"tokens":[…],"type":"encoded_text"}]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelInput {
    pub chunks: Vec<Chunk>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chunk {
    #[serde(default)]
    pub tokens: Vec<u32>,
    #[serde(rename = "type", default = "encoded_text")]
    pub kind: String,
}

fn encoded_text() -> String {
    "encoded_text".to_string()
}

impl ModelInput {
    pub fn from_tokens(tokens: &[u32]) -> Self {
        Self {
            chunks: vec![Chunk {
                tokens: tokens.to_vec(),
                kind: encoded_text(),
            }],
        }
    }

    /// All `encoded_text` tokens concatenated (other chunk kinds are not supported).
    pub fn tokens(&self) -> Vec<u32> {
        self.chunks
            .iter()
            .filter(|c| c.kind == "encoded_text")
            .flat_map(|c| c.tokens.iter().copied())
            .collect()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DatumJson {
    #[serde(default)]
    pub loss_fn_inputs: BTreeMap<String, TensorData>,
    pub model_input: ModelInput,
}

impl From<&Datum> for DatumJson {
    fn from(d: &Datum) -> Self {
        Self {
            loss_fn_inputs: d.loss_fn_inputs.clone(),
            model_input: ModelInput::from_tokens(&d.model_input),
        }
    }
}

impl From<DatumJson> for Datum {
    fn from(d: DatumJson) -> Self {
        Datum {
            model_input: d.model_input.tokens(),
            loss_fn_inputs: d.loss_fn_inputs,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForwardBackwardInput {
    pub data: Vec<DatumJson>,
    pub loss_fn: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_fn_config: Option<BTreeMap<String, f64>>,
}

/// Body of `POST /forward_backward` (JSON dialect).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForwardBackwardRequest {
    pub forward_backward_input: ForwardBackwardInput,
    pub model_id: String,
    pub seq_id: i64,
}

/// Body of `POST /forward` (JSON dialect, forward only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForwardRequest {
    pub forward_input: ForwardBackwardInput,
    pub model_id: String,
    pub seq_id: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CreateSessionRequest {
    pub tags: Vec<String>,
    pub user_metadata: BTreeMap<String, String>,
    pub sdk_version: String,
    #[serde(rename = "type")]
    pub kind: Tag,
}

/// A constant `type` discriminator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Tag(pub String);

impl Tag {
    pub fn new(s: &str) -> Self {
        Tag(s.to_string())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionHeartbeatRequest {
    pub session_id: String,
    #[serde(rename = "type")]
    pub kind: Tag,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CreateModelRequest {
    pub session_id: String,
    pub model_seq_id: u64,
    pub base_model: String,
    pub lora_config: LoraConfig,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optimizer_config: Option<Value>,
    #[serde(rename = "type")]
    pub kind: Tag,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetInfoRequest {
    pub model_id: String,
    #[serde(rename = "type")]
    pub kind: Tag,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OptimStepRequest {
    pub adam_params: AdamParams,
    pub model_id: String,
    pub seq_id: i64,
    #[serde(rename = "type")]
    pub kind: Tag,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SaveWeightsRequest {
    pub model_id: String,
    pub path: String,
    pub seq_id: i64,
    pub overwrite: bool,
    #[serde(rename = "type")]
    pub kind: Tag,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SaveWeightsForSamplerRequest {
    pub model_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling_session_seq_id: Option<u64>,
    /// `snapshot` (newer SDKs only; SkyRL 0.3.0 / SDK 0.21 omit it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    pub seq_id: i64,
    #[serde(rename = "type")]
    pub tag: Tag,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadWeightsRequest {
    pub model_id: String,
    pub seq_id: i64,
    pub path: String,
    pub optimizer: bool,
    #[serde(rename = "type")]
    pub kind: Tag,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CreateSamplingSessionRequest {
    pub session_id: String,
    pub sampling_session_seq_id: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_path: Option<String>,
    #[serde(rename = "type")]
    pub kind: Tag,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SampleRequest {
    pub num_samples: u32,
    pub prompt: ModelInput,
    pub sampling_params: SamplingParams,
    pub sampling_session_id: String,
    pub seq_id: u64,
    pub prompt_logprobs: bool,
    pub topk_prompt_logprobs: u32,
    #[serde(rename = "type")]
    pub kind: Tag,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RetrieveFutureRequest {
    pub request_id: String,
    pub allow_metadata_only: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FinishRequest {
    pub reason: FinishReasonJson,
    pub detail: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FinishReasonJson {
    #[serde(rename = "type")]
    pub kind: String,
}

// ---- responses (lenient: unknown fields ignored, everything defaulted) ----

/// What every future-returning endpoint answers.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct UntypedFuture {
    #[serde(deserialize_with = "string_or_number")]
    pub request_id: String,
    #[serde(default)]
    pub model_id: Option<String>,
    #[serde(default)]
    pub sample_sequence_ids: Option<Vec<String>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct CreateSessionResponse {
    pub session_id: String,
    #[serde(default)]
    pub info_message: Option<String>,
    #[serde(default)]
    pub warning_message: Option<String>,
    #[serde(default)]
    pub error_message: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct ModelIdResult {
    pub model_id: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct PathResult {
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub sampling_session_id: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct SamplingSessionResult {
    pub sampling_session_id: String,
}

/// Accepts `"7"` or `7` (servers differ).
pub fn string_or_number<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    use serde::de::Error as _;
    match Value::deserialize(d)? {
        Value::String(s) => Ok(s),
        Value::Number(n) => Ok(n.to_string()),
        other => Err(D::Error::custom(format!("expected string id, got {other}"))),
    }
}

/// Metrics map: non-numeric values (null, strings) are dropped, not fatal.
pub fn lenient_metrics<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, f64>, D::Error> {
    let raw: Option<BTreeMap<String, Value>> = Option::deserialize(d)?;
    Ok(raw
        .unwrap_or_default()
        .into_iter()
        .filter_map(|(k, v)| v.as_f64().map(|x| (k, x)))
        .collect())
}
