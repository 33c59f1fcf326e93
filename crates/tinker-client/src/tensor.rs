//! Tensors and training examples.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A dense tensor as it travels in `loss_fn_inputs` / `loss_fn_outputs`.
///
/// JSON form: `{"data":[…flat…],"dtype":"float32"|"int64","shape":[…]}`.
#[derive(Debug, Clone, PartialEq)]
pub enum TensorData {
    F32 { data: Vec<f32>, shape: Vec<i64> },
    I64 { data: Vec<i64>, shape: Vec<i64> },
}

impl TensorData {
    /// 1-D float tensor.
    pub fn f32(data: Vec<f32>) -> Self {
        let shape = vec![data.len() as i64];
        TensorData::F32 { data, shape }
    }

    /// 1-D integer tensor (e.g. `target_tokens`).
    pub fn i64(data: Vec<i64>) -> Self {
        let shape = vec![data.len() as i64];
        TensorData::I64 { data, shape }
    }

    /// The float data, if this is a float tensor.
    pub fn as_f32(&self) -> Option<&[f32]> {
        match self {
            TensorData::F32 { data, .. } => Some(data),
            TensorData::I64 { .. } => None,
        }
    }

    /// The integer data, if this is an integer tensor.
    pub fn as_i64(&self) -> Option<&[i64]> {
        match self {
            TensorData::I64 { data, .. } => Some(data),
            TensorData::F32 { .. } => None,
        }
    }

    /// Values widened/narrowed to f32 whatever the dtype.
    pub fn to_f32_vec(&self) -> Vec<f32> {
        match self {
            TensorData::F32 { data, .. } => data.clone(),
            TensorData::I64 { data, .. } => data.iter().map(|&v| v as f32).collect(),
        }
    }

    pub fn shape(&self) -> &[i64] {
        match self {
            TensorData::F32 { shape, .. } | TensorData::I64 { shape, .. } => shape,
        }
    }

    pub fn len(&self) -> usize {
        match self {
            TensorData::F32 { data, .. } => data.len(),
            TensorData::I64 { data, .. } => data.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[derive(Serialize)]
struct TensorJsonOut<'a, T: Serialize> {
    data: &'a [T],
    dtype: &'static str,
    shape: &'a [i64],
}

impl Serialize for TensorData {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            TensorData::F32 { data, shape } => TensorJsonOut {
                data,
                dtype: "float32",
                shape,
            }
            .serialize(s),
            TensorData::I64 { data, shape } => TensorJsonOut {
                data,
                dtype: "int64",
                shape,
            }
            .serialize(s),
        }
    }
}

#[derive(Deserialize)]
struct TensorJsonIn {
    #[serde(default)]
    data: Vec<serde_json::Value>,
    #[serde(default)]
    dtype: Option<String>,
    #[serde(default)]
    shape: Option<Vec<i64>>,
}

impl<'de> Deserialize<'de> for TensorData {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let raw = TensorJsonIn::deserialize(d)?;
        let shape = raw.shape.unwrap_or_else(|| vec![raw.data.len() as i64]);
        match raw.dtype.as_deref().unwrap_or("float32") {
            "int64" | "int32" => {
                let data = raw
                    .data
                    .iter()
                    .map(|v| {
                        v.as_i64()
                            .ok_or_else(|| D::Error::custom("non-integer in int tensor"))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(TensorData::I64 { data, shape })
            }
            "float32" | "bfloat16" | "float64" => {
                // null encodes a missing value (e.g. NaN) in some servers' JSON.
                let data = raw
                    .data
                    .iter()
                    .map(|v| match v {
                        serde_json::Value::Null => Ok(f32::NAN),
                        v => v
                            .as_f64()
                            .map(|x| x as f32)
                            .ok_or_else(|| D::Error::custom("non-number in float tensor")),
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(TensorData::F32 { data, shape })
            }
            other => Err(D::Error::custom(format!("unsupported dtype {other:?}"))),
        }
    }
}

/// One training example: input tokens plus per-token loss inputs (all aligned to
/// `target_tokens`, length = `model_input.len()`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Datum {
    pub model_input: Vec<u32>,
    pub loss_fn_inputs: BTreeMap<String, TensorData>,
}

impl Datum {
    pub fn new(model_input: Vec<u32>) -> Self {
        Self {
            model_input,
            loss_fn_inputs: BTreeMap::new(),
        }
    }

    /// Builder-style insert of one loss input.
    pub fn with(mut self, key: &str, tensor: TensorData) -> Self {
        self.loss_fn_inputs.insert(key.to_string(), tensor);
        self
    }

    /// An RL datum for `importance_sampling`/`ppo`/`cispo` from one full token
    /// sequence with per-token sampler logprobs and advantages (all length L).
    /// Shifts by one: input = all[..L-1], targets/logprobs/advantages = [1..].
    pub fn rl_from_sequence(tokens: &[u32], logprobs: &[f32], advantages: &[f32]) -> Self {
        let n = tokens.len().saturating_sub(1);
        let tail =
            |v: &[f32]| -> Vec<f32> { (1..=n).map(|i| v.get(i).copied().unwrap_or(0.0)).collect() };
        Datum::new(tokens[..n].to_vec())
            .with(
                "target_tokens",
                TensorData::i64(tokens[1..].iter().map(|&t| i64::from(t)).collect()),
            )
            .with("logprobs", TensorData::f32(tail(logprobs)))
            .with("advantages", TensorData::f32(tail(advantages)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tensor_json_roundtrip() {
        let t = TensorData::i64(vec![1, 2, 3]);
        let s = serde_json::to_string(&t).unwrap();
        assert_eq!(s, r#"{"data":[1,2,3],"dtype":"int64","shape":[3]}"#);
        assert_eq!(serde_json::from_str::<TensorData>(&s).unwrap(), t);
        let f: TensorData =
            serde_json::from_str(r#"{"data":[-0.0,1.5],"dtype":"float32"}"#).unwrap();
        assert_eq!(f.as_f32().unwrap(), &[0.0, 1.5]);
        assert_eq!(f.shape(), &[2]);
        assert!(serde_json::from_str::<TensorData>(r#"{"data":["x"],"dtype":"int64"}"#).is_err());
    }

    #[test]
    fn rl_datum_shifts_by_one() {
        let d = Datum::rl_from_sequence(
            &[1, 2, 3, 4],
            &[0.0, 0.0, -1.0, -2.0],
            &[0.0, 0.0, 1.0, 1.0],
        );
        assert_eq!(d.model_input, vec![1, 2, 3]);
        assert_eq!(
            d.loss_fn_inputs["target_tokens"].as_i64().unwrap(),
            &[2, 3, 4]
        );
        assert_eq!(
            d.loss_fn_inputs["logprobs"].as_f32().unwrap(),
            &[0.0, -1.0, -2.0]
        );
        assert_eq!(
            d.loss_fn_inputs["advantages"].as_f32().unwrap(),
            &[0.0, 1.0, 1.0]
        );
    }
}
