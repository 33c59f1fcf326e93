//! Sampling: `SamplingClient` and its parameter/result types.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize, Serializer};

use crate::error::{Error, Result};
use crate::future::{Pending, ResultBody, from_json};
use crate::session::Shared;
use crate::transport::Request;
use crate::wire::json::{ModelInput, SampleRequest, Tag, UntypedFuture};
use crate::wire::proto;

/// Where a sampling session gets its weights.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SamplerSource {
    /// `tinker://<run>/sampler_weights/<name>`.
    ModelPath(String),
    BaseModel(String),
}

/// Stop condition. JSON: `Default` → field omitted (null: implicit EOS stop),
/// `None` → `[]` (no stop at all, not even EOS), otherwise a list.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Stop {
    #[default]
    Default,
    None,
    Tokens(Vec<u32>),
    Strings(Vec<String>),
}

impl Stop {
    fn is_default(&self) -> bool {
        matches!(self, Stop::Default)
    }
}

impl Serialize for Stop {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Stop::Default => s.serialize_none(),
            Stop::None => Vec::<u32>::new().serialize(s),
            Stop::Tokens(t) => t.serialize(s),
            Stop::Strings(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Stop {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        use serde::de::Error as _;
        use serde_json::Value;
        Ok(match Option::<Value>::deserialize(d)? {
            None | Some(Value::Null) => Stop::Default,
            Some(Value::String(s)) => Stop::Strings(vec![s]),
            Some(Value::Array(a)) if a.is_empty() => Stop::None,
            Some(Value::Array(a)) if a.iter().all(Value::is_string) => Stop::Strings(
                a.into_iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect(),
            ),
            Some(Value::Array(a)) => Stop::Tokens(
                a.iter()
                    .map(|v| v.as_u64().and_then(|x| u32::try_from(x).ok()))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| {
                        D::Error::custom("stop list must be all strings or all token ids")
                    })?,
            ),
            Some(other) => return Err(D::Error::custom(format!("bad stop {other}"))),
        })
    }
}

/// `sampling_params` of `asample`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplingParams {
    /// Required by SkyRL; the cloud has a default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    #[serde(default, skip_serializing_if = "Stop::is_default")]
    pub stop: Stop,
    #[serde(default = "one")]
    pub temperature: f64,
    #[serde(default = "minus_one")]
    pub top_k: i64,
    #[serde(default = "one")]
    pub top_p: f64,
}

fn one() -> f64 {
    1.0
}
fn minus_one() -> i64 {
    -1
}

impl Default for SamplingParams {
    fn default() -> Self {
        Self {
            max_tokens: None,
            seed: None,
            stop: Stop::Default,
            temperature: 1.0,
            top_k: -1,
            top_p: 1.0,
        }
    }
}

impl SamplingParams {
    pub fn max_tokens(n: u32) -> Self {
        Self {
            max_tokens: Some(n),
            ..Self::default()
        }
    }
}

/// Why a sequence ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum StopReason {
    #[default]
    Stop,
    Length,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct SampledSequence {
    #[serde(default)]
    pub tokens: Vec<u32>,
    /// Sampler log-probs of `tokens` (same length).
    #[serde(default)]
    pub logprobs: Option<Vec<f32>>,
    #[serde(default)]
    pub stop_reason: StopReason,
    /// Provenance id from the submission's `sample_sequence_ids` (cloud only).
    #[serde(default)]
    pub sequence_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct SampleOutput {
    #[serde(default)]
    pub sequences: Vec<SampledSequence>,
    /// Per prompt token (first is always `None`), when requested.
    #[serde(default)]
    pub prompt_logprobs: Option<Vec<Option<f32>>>,
}

/// Handle to one sampling session. Cheap to clone (clones share the seq_id counter).
#[derive(Clone)]
pub struct SamplingClient {
    shared: Arc<Shared>,
    id: String,
    counter: Arc<AtomicU64>,
}

impl std::fmt::Debug for SamplingClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SamplingClient")
            .field("id", &self.id)
            .finish()
    }
}

impl SamplingClient {
    pub(crate) fn new(shared: Arc<Shared>, id: String) -> Self {
        Self {
            shared,
            id,
            counter: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The `sampling_session_id`.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Samples `num_samples` continuations of `prompt` and waits for them.
    pub async fn sample(
        &self,
        prompt: &[u32],
        num_samples: u32,
        params: &SamplingParams,
    ) -> Result<SampleOutput> {
        self.submit_sample(prompt, num_samples, params, false)
            .await?
            .result()
            .await
    }

    /// Submit only; await the returned [`Pending`] later (many can be in flight).
    /// A 429 answer makes every sampler of the session back off, then the
    /// request is resubmitted with the same `seq_id`.
    pub async fn submit_sample(
        &self,
        prompt: &[u32],
        num_samples: u32,
        params: &SamplingParams,
        prompt_logprobs: bool,
    ) -> Result<Pending<SampleOutput>> {
        if prompt.is_empty() {
            return Err(Error::InvalidArgument("empty prompt".into()));
        }
        let body = SampleRequest {
            num_samples,
            prompt: ModelInput::from_tokens(prompt),
            sampling_params: params.clone(),
            sampling_session_id: self.id.clone(),
            seq_id: self.counter.fetch_add(1, Ordering::SeqCst),
            prompt_logprobs,
            topk_prompt_logprobs: 0,
            kind: Tag::new("sample"),
        };
        let mut req = Request::post_json("/api/v1/asample", &body, "SamplingClient.sample")?;
        req.sample_prompt_bytes = Some(prompt.len() * 4);
        self.shared
            .submit_future(req, "Sample", Box::new(decode_sample))
            .await
    }

    /// Log-probs of every prompt token under this sampler's weights (first is `None`).
    pub async fn compute_logprobs(&self, prompt: &[u32]) -> Result<Vec<Option<f32>>> {
        let params = SamplingParams::max_tokens(1);
        let out = self
            .submit_sample(prompt, 1, &params, true)
            .await?
            .result()
            .await?;
        out.prompt_logprobs
            .ok_or_else(|| Error::Decode("server returned no prompt_logprobs".into()))
    }
}

pub(crate) fn decode_sample(b: ResultBody, fut: &UntypedFuture) -> Result<SampleOutput> {
    let mut out = match b {
        ResultBody::Proto(bytes) => proto::decode_sample_response(&bytes)?,
        json => from_json::<SampleOutput>(json)?,
    };
    if let Some(ids) = &fut.sample_sequence_ids {
        for (seq, id) in out.sequences.iter_mut().zip(ids) {
            seq.sequence_id = Some(id.clone());
        }
    }
    Ok(out)
}
