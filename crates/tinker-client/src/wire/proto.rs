//! Protobuf conversions (spec §5.3, §5.5, §6.3, §7).
//!
//! Rules that are easy to get wrong: token bytes are int32 LE; BatchedTensor
//! offsets are *byte* offsets in the wire dtype; BF16 widens via `bits << 16`;
//! NaN prompt logprobs mean "none".

use std::collections::BTreeMap;

use prost::Message;

use super::pb;
use crate::error::{Error, Result};
use crate::sampling::{SampleOutput, SampledSequence, StopReason};
use crate::tensor::{Datum, TensorData};
use crate::training::ForwardBackwardOutput;

fn chunks<const N: usize>(bytes: &[u8], what: &str) -> Result<impl Iterator<Item = [u8; N]>> {
    if !bytes.len().is_multiple_of(N) {
        return Err(Error::Decode(format!(
            "{what}: {} bytes is not a multiple of {N}",
            bytes.len()
        )));
    }
    Ok(bytes.chunks_exact(N).map(|c| {
        let mut a = [0u8; N];
        a.copy_from_slice(c);
        a
    }))
}

pub(crate) fn f32s(bytes: &[u8], what: &str) -> Result<Vec<f32>> {
    Ok(chunks::<4>(bytes, what)?.map(f32::from_le_bytes).collect())
}

fn i32s(bytes: &[u8], what: &str) -> Result<Vec<i32>> {
    Ok(chunks::<4>(bytes, what)?.map(i32::from_le_bytes).collect())
}

fn i64s(bytes: &[u8], what: &str) -> Result<Vec<i64>> {
    Ok(chunks::<8>(bytes, what)?.map(i64::from_le_bytes).collect())
}

fn bf16s(bytes: &[u8], what: &str) -> Result<Vec<f32>> {
    Ok(chunks::<2>(bytes, what)?
        .map(|b| f32::from_bits(u32::from(u16::from_le_bytes(b)) << 16))
        .collect())
}

fn tokens_to_bytes(tokens: &[u32]) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(tokens.len() * 4);
    for &t in tokens {
        let t = i32::try_from(t)
            .map_err(|_| Error::InvalidArgument(format!("token id {t} exceeds int32")))?;
        out.extend_from_slice(&t.to_le_bytes());
    }
    Ok(out)
}

fn tokens_from_bytes(bytes: &[u8]) -> Result<Vec<u32>> {
    i32s(bytes, "tokens")?
        .into_iter()
        .map(|t| u32::try_from(t).map_err(|_| Error::Decode(format!("negative token id {t}"))))
        .collect()
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn i64_bytes(v: &[i64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Raw element bytes + wire dtype of a tensor.
fn tensor_raw(t: &TensorData) -> (Vec<u8>, pb::DType) {
    match t {
        TensorData::F32 { data, .. } => (f32_bytes(data), pb::DType::DtypeFloat32),
        TensorData::I64 { data, .. } => (i64_bytes(data), pb::DType::DtypeInt64),
    }
}

/// Elements of `bytes` in `dtype`, widened to this crate's two tensor kinds.
fn tensor_values(bytes: &[u8], dtype: i32, shape: Vec<i64>) -> Result<TensorData> {
    Ok(match pb::DType::try_from(dtype) {
        Ok(pb::DType::DtypeFloat32) => TensorData::F32 {
            data: f32s(bytes, "float32")?,
            shape,
        },
        Ok(pb::DType::DtypeBfloat16) => TensorData::F32 {
            data: bf16s(bytes, "bfloat16")?,
            shape,
        },
        Ok(pb::DType::DtypeInt64) => TensorData::I64 {
            data: i64s(bytes, "int64")?,
            shape,
        },
        Ok(pb::DType::DtypeInt32) => TensorData::I64 {
            data: i32s(bytes, "int32")?.into_iter().map(i64::from).collect(),
            shape,
        },
        _ => return Err(Error::Decode(format!("unsupported tensor dtype {dtype}"))),
    })
}

pub fn tensor_to_pb(t: &TensorData) -> pb::Tensor {
    let (bytes, dtype) = tensor_raw(t);
    pb::Tensor {
        encoding: Some(pb::tensor::Encoding::Dense(bytes)),
        dtype: dtype as i32,
        shape: t.shape().to_vec(),
    }
}

pub fn tensor_from_pb(t: &pb::Tensor) -> Result<TensorData> {
    match &t.encoding {
        Some(pb::tensor::Encoding::Dense(b)) => tensor_values(b, t.dtype, t.shape.clone()),
        Some(pb::tensor::Encoding::SparseCsr(_)) => {
            Err(Error::Decode("sparse tensors are not supported".into()))
        }
        None => tensor_values(&[], t.dtype, t.shape.clone()),
    }
}

pub fn datum_to_pb(d: &Datum) -> Result<pb::Datum> {
    Ok(pb::Datum {
        model_input: vec![pb::Chunk {
            chunk: Some(pb::chunk::Chunk::EncodedText(pb::EncodedTextChunk {
                tokens: tokens_to_bytes(&d.model_input)?,
            })),
        }],
        loss_fn_inputs: d
            .loss_fn_inputs
            .iter()
            .map(|(k, v)| (k.clone(), tensor_to_pb(v)))
            .collect(),
        model_input_spans: vec![],
        loss_fn_input_spans: vec![],
    })
}

pub fn datum_from_pb(d: &pb::Datum) -> Result<Datum> {
    let mut model_input = Vec::new();
    for c in &d.model_input {
        match &c.chunk {
            Some(pb::chunk::Chunk::EncodedText(t)) => {
                model_input.extend(tokens_from_bytes(&t.tokens)?)
            }
            _ => {
                return Err(Error::Decode(
                    "only encoded_text chunks are supported".into(),
                ));
            }
        }
    }
    let loss_fn_inputs = d
        .loss_fn_inputs
        .iter()
        .map(|(k, v)| Ok((k.clone(), tensor_from_pb(v)?)))
        .collect::<Result<_>>()?;
    Ok(Datum {
        model_input,
        loss_fn_inputs,
    })
}

/// The proto `forward_backward` request, loss config dual-written into the
/// legacy float map and `loss_fn_config_v2` (as the SDK does).
pub fn forward_backward_request(
    model_id: &str,
    seq_id: i64,
    data: &[Datum],
    loss_fn: &str,
    config: &BTreeMap<String, f64>,
    forward_only: bool,
) -> Result<pb::ForwardBackwardRequest> {
    let seq_id = i32::try_from(seq_id)
        .map_err(|_| Error::InvalidArgument(format!("seq_id {seq_id} exceeds int32")))?;
    Ok(pb::ForwardBackwardRequest {
        model_id: model_id.to_string(),
        seq_id,
        data: data.iter().map(datum_to_pb).collect::<Result<_>>()?,
        loss_fn: loss_fn.to_string(),
        loss_fn_config: config.clone(),
        forward_only,
        loss_fn_config_v2: config
            .iter()
            .map(|(k, &v)| {
                (
                    k.clone(),
                    pb::LossConfigValue {
                        value: Some(pb::loss_config_value::Value::Number(v)),
                    },
                )
            })
            .collect(),
    })
}

pub fn encode_forward_backward(
    model_id: &str,
    seq_id: i64,
    data: &[Datum],
    loss_fn: &str,
    config: &BTreeMap<String, f64>,
    forward_only: bool,
) -> Result<Vec<u8>> {
    Ok(
        forward_backward_request(model_id, seq_id, data, loss_fn, config, forward_only)?
            .encode_to_vec(),
    )
}

/// A decoded proto `forward_backward` request (used by the fake server).
#[derive(Debug, Clone, PartialEq)]
pub struct ForwardBackwardParts {
    pub model_id: String,
    pub seq_id: i64,
    pub data: Vec<Datum>,
    pub loss_fn: String,
    pub loss_fn_config: BTreeMap<String, f64>,
    pub forward_only: bool,
}

pub fn decode_forward_backward_request(bytes: &[u8]) -> Result<ForwardBackwardParts> {
    let r = pb::ForwardBackwardRequest::decode(bytes).map_err(Error::decode)?;
    let mut cfg = r.loss_fn_config.clone();
    for (k, v) in &r.loss_fn_config_v2 {
        if let Some(pb::loss_config_value::Value::Number(x)) = v.value {
            cfg.insert(k.clone(), x);
        }
    }
    Ok(ForwardBackwardParts {
        model_id: r.model_id,
        seq_id: i64::from(r.seq_id),
        data: r.data.iter().map(datum_from_pb).collect::<Result<_>>()?,
        loss_fn: r.loss_fn,
        loss_fn_config: cfg,
        forward_only: r.forward_only,
    })
}

pub fn decode_forward_backward_output(bytes: &[u8]) -> Result<ForwardBackwardOutput> {
    let o = pb::ForwardBackwardOutput::decode(bytes).map_err(Error::decode)?;
    let mut outputs: Vec<BTreeMap<String, TensorData>> = Vec::new();
    for rec in &o.loss_fn_outputs {
        let mut n = usize::try_from(rec.num_datums).unwrap_or(0);
        if n == 0 {
            n = rec
                .fields
                .values()
                .next()
                .map(|f| (f.offsets.len() / 8).saturating_sub(1))
                .unwrap_or(0);
        }
        let mut per_datum = vec![BTreeMap::new(); n];
        for (name, bt) in &rec.fields {
            let offsets = i64s(&bt.offsets, "offsets")?;
            if offsets.len() < n + 1 {
                return Err(Error::Decode(format!(
                    "field {name}: {} offsets for {n} datums",
                    offsets.len()
                )));
            }
            for (i, slot) in per_datum.iter_mut().enumerate() {
                let (a, b) = (offsets[i], offsets[i + 1]);
                let range = usize::try_from(a)
                    .ok()
                    .zip(usize::try_from(b).ok())
                    .filter(|(a, b)| a <= b && *b <= bt.data.len())
                    .ok_or_else(|| Error::Decode(format!("field {name}: bad offsets {a}..{b}")))?;
                let mut t = tensor_values(&bt.data[range.0..range.1], bt.dtype, vec![])?;
                let elems = t.len() as i64;
                let inner: i64 = bt.trailing_shape.iter().product();
                let lead = if inner > 0 { elems / inner } else { elems };
                let mut shape = vec![lead];
                shape.extend_from_slice(&bt.trailing_shape);
                match &mut t {
                    TensorData::F32 { shape: s, .. } | TensorData::I64 { shape: s, .. } => {
                        *s = shape
                    }
                }
                slot.insert(name.clone(), t);
            }
        }
        outputs.extend(per_datum);
    }
    let ty = o.loss_fn_output_type;
    Ok(ForwardBackwardOutput {
        loss_fn_output_type: ty.rsplit(':').next().unwrap_or_default().to_string(),
        loss_fn_outputs: outputs,
        metrics: o.metrics,
    })
}

/// One ArrayRecord holding every datum (fake server side).
pub fn encode_forward_backward_output(o: &ForwardBackwardOutput) -> Vec<u8> {
    let mut names: Vec<&String> = o.loss_fn_outputs.iter().flat_map(|m| m.keys()).collect();
    names.sort();
    names.dedup();
    let mut fields = BTreeMap::new();
    for name in names {
        let mut data = Vec::new();
        let mut offsets = vec![0i64];
        let mut dtype = pb::DType::DtypeFloat32;
        let mut trailing = vec![];
        for m in &o.loss_fn_outputs {
            if let Some(t) = m.get(name) {
                let (b, d) = tensor_raw(t);
                dtype = d;
                trailing = t.shape().get(1..).map(<[i64]>::to_vec).unwrap_or_default();
                data.extend(b);
            }
            offsets.push(data.len() as i64);
        }
        fields.insert(
            name.clone(),
            pb::BatchedTensor {
                data,
                offsets: i64_bytes(&offsets),
                dtype: dtype as i32,
                trailing_shape: trailing,
            },
        );
    }
    pb::ForwardBackwardOutput {
        loss_fn_output_type: o.loss_fn_output_type.clone(),
        loss_fn_outputs: vec![pb::ArrayRecord {
            type_tag: String::new(),
            fields,
            num_datums: o.loss_fn_outputs.len() as i64,
        }],
        metrics: o.metrics.clone(),
    }
    .encode_to_vec()
}

pub fn decode_sample_response(bytes: &[u8]) -> Result<SampleOutput> {
    let r = pb::SampleResponse::decode(bytes).map_err(Error::decode)?;
    let sequences = r
        .sequences
        .iter()
        .map(|s| {
            let tokens = tokens_from_bytes(&s.tokens)?;
            let logprobs = s
                .logprobs
                .as_deref()
                .map(|b| f32s(b, "logprobs"))
                .transpose()?;
            let stop_reason = match pb::StopReason::try_from(s.stop_reason) {
                Ok(pb::StopReason::Length) => StopReason::Length,
                _ => StopReason::Stop,
            };
            Ok(SampledSequence {
                tokens,
                logprobs,
                stop_reason,
                sequence_id: None,
            })
        })
        .collect::<Result<_>>()?;
    let prompt_logprobs = r
        .prompt_logprobs
        .as_deref()
        .map(|b| {
            f32s(b, "prompt_logprobs")
                .map(|v| v.into_iter().map(|x| (!x.is_nan()).then_some(x)).collect())
        })
        .transpose()?;
    Ok(SampleOutput {
        sequences,
        prompt_logprobs,
    })
}

/// Fake server side; `None` prompt logprobs become NaN.
pub fn encode_sample_response(o: &SampleOutput) -> Result<Vec<u8>> {
    let sequences = o
        .sequences
        .iter()
        .map(|s| {
            Ok(pb::SampledSequence {
                stop_reason: match s.stop_reason {
                    StopReason::Stop => pb::StopReason::Stop as i32,
                    StopReason::Length => pb::StopReason::Length as i32,
                },
                tokens: tokens_to_bytes(&s.tokens)?,
                logprobs: s.logprobs.as_deref().map(f32_bytes),
                topk_sampled_logprobs: None,
            })
        })
        .collect::<Result<_>>()?;
    let prompt_logprobs = o
        .prompt_logprobs
        .as_ref()
        .map(|v| f32_bytes(&v.iter().map(|x| x.unwrap_or(f32::NAN)).collect::<Vec<_>>()));
    Ok(pb::SampleResponse {
        sequences,
        prompt_logprobs,
        ..Default::default()
    }
    .encode_to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_widening_and_int32_tokens() {
        // 1.0 in bf16 is 0x3F80.
        assert_eq!(bf16s(&[0x80, 0x3F], "x").unwrap(), vec![1.0]);
        assert!(tokens_from_bytes(&[1, 0, 0]).is_err());
        assert!(tokens_from_bytes(&(-1i32).to_le_bytes()).is_err());
        assert_eq!(tokens_to_bytes(&[258]).unwrap(), vec![2, 1, 0, 0]);
    }

    #[test]
    fn fwdbwd_output_roundtrip_and_bad_offsets() {
        let mut m = BTreeMap::new();
        m.insert("logprobs".to_string(), TensorData::f32(vec![-1.0, -2.0]));
        let mut m2 = BTreeMap::new();
        m2.insert("logprobs".to_string(), TensorData::f32(vec![-3.0]));
        let o = ForwardBackwardOutput {
            loss_fn_output_type: "scalar".into(),
            loss_fn_outputs: vec![m, m2],
            metrics: [("loss:sum".to_string(), 1.5)].into(),
        };
        let back = decode_forward_backward_output(&encode_forward_backward_output(&o)).unwrap();
        assert_eq!(back, o);

        let bad = pb::ForwardBackwardOutput {
            loss_fn_outputs: vec![pb::ArrayRecord {
                fields: [(
                    "x".to_string(),
                    pb::BatchedTensor {
                        data: vec![0; 4],
                        offsets: i64_bytes(&[0, 400]),
                        dtype: pb::DType::DtypeFloat32 as i32,
                        trailing_shape: vec![],
                    },
                )]
                .into(),
                num_datums: 1,
                ..Default::default()
            }],
            ..Default::default()
        };
        assert!(decode_forward_backward_output(&bad.encode_to_vec()).is_err());
        assert!(decode_forward_backward_output(b"\xff\xff\xff").is_err());
    }
}
