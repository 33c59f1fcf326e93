//! The fake server's tiny deterministic "policy": a bigram table of logits
//! `w[prev][next]` over a small vocabulary, trained with Adam.

use std::collections::BTreeMap;

use crate::sampling::{SampleOutput, SampledSequence, SamplingParams, Stop, StopReason};
use crate::tensor::{Datum, TensorData};
use crate::training::{AdamParams, ForwardBackwardOutput};

/// SplitMix64: tiny, deterministic, good enough for a test policy.
pub(crate) struct SplitMix(u64);

impl SplitMix {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

pub(crate) fn hash_str(s: &str) -> u64 {
    // FNV-1a: stable across runs and platforms.
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Weights plus Adam state.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Weights {
    pub vocab: usize,
    pub w: Vec<f32>,
    pub m: Vec<f32>,
    pub v: Vec<f32>,
    pub step: u32,
}

impl Weights {
    /// Deterministic base weights for a base-model name.
    pub fn base(name: &str, vocab: usize, scale: f32) -> Self {
        let mut rng = SplitMix::new(hash_str(name));
        let w = (0..vocab * vocab)
            .map(|_| ((rng.next_f64() * 2.0 - 1.0) as f32) * scale)
            .collect();
        Self {
            vocab,
            w,
            m: vec![0.0; vocab * vocab],
            v: vec![0.0; vocab * vocab],
            step: 0,
        }
    }

    fn row(&self, prev: u32) -> &[f32] {
        let p = prev as usize % self.vocab;
        &self.w[p * self.vocab..(p + 1) * self.vocab]
    }

    /// log-softmax of the row for `prev` (temperature 1).
    pub fn log_probs(&self, prev: u32) -> Vec<f32> {
        let row = self.row(prev);
        let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let lse = max + row.iter().map(|x| (x - max).exp()).sum::<f32>().ln();
        row.iter().map(|x| x - lse).collect()
    }

    pub fn logprob(&self, prev: u32, next: u32) -> f32 {
        self.log_probs(prev)[next as usize % self.vocab]
    }

    pub fn sample(
        &self,
        prompt: &[u32],
        n: u32,
        p: &SamplingParams,
        seed: u64,
        prompt_lp: bool,
    ) -> SampleOutput {
        let max_tokens = p.max_tokens.unwrap_or(16);
        let stops: Vec<u32> = match &p.stop {
            Stop::Tokens(t) => t.clone(),
            _ => vec![],
        };
        let temp = if p.temperature > 0.0 {
            p.temperature as f32
        } else {
            1e-4
        };
        let sequences = (0..n)
            .map(|i| {
                let mut rng =
                    SplitMix::new(seed ^ (u64::from(i) + 1).wrapping_mul(0x1234_5678_9ABC_DEF1));
                let mut prev = *prompt.last().unwrap_or(&0);
                let (mut tokens, mut logprobs) = (Vec::new(), Vec::new());
                let mut reason = StopReason::Length;
                for _ in 0..max_tokens {
                    let lp = self.log_probs(prev);
                    let scaled: Vec<f64> = lp.iter().map(|x| f64::from(x / temp).exp()).collect();
                    let total: f64 = scaled.iter().sum();
                    let mut u = rng.next_f64() * total;
                    let mut tok = self.vocab - 1;
                    for (k, s) in scaled.iter().enumerate() {
                        if u < *s {
                            tok = k;
                            break;
                        }
                        u -= s;
                    }
                    tokens.push(tok as u32);
                    logprobs.push(lp[tok]);
                    prev = tok as u32;
                    if stops.contains(&(tok as u32)) {
                        reason = StopReason::Stop;
                        break;
                    }
                }
                SampledSequence {
                    tokens,
                    logprobs: Some(logprobs),
                    stop_reason: reason,
                    sequence_id: None,
                }
            })
            .collect();
        let prompt_logprobs = prompt_lp.then(|| {
            std::iter::once(None)
                .chain(prompt.windows(2).map(|w| Some(self.logprob(w[0], w[1]))))
                .collect()
        });
        SampleOutput {
            sequences,
            prompt_logprobs,
        }
    }

    /// Runs the loss on every datum, returns outputs and (unless forward-only)
    /// the gradient w.r.t. the logits table. Errors are "user" failures.
    pub fn forward_backward(
        &self,
        data: &[Datum],
        loss_fn: &str,
        cfg: &BTreeMap<String, f64>,
    ) -> Result<(ForwardBackwardOutput, Vec<f32>), String> {
        let v = self.vocab;
        let mut grad = vec![0.0f32; v * v];
        let mut outputs = Vec::new();
        let mut total = 0.0f64;
        let lo = cfg.get("clip_low_threshold").copied().unwrap_or(0.8) as f32;
        let hi = cfg.get("clip_high_threshold").copied().unwrap_or(1.2) as f32;
        for (di, d) in data.iter().enumerate() {
            let n = d.model_input.len();
            let get = |k: &str| -> Result<Vec<f32>, String> {
                match d.loss_fn_inputs.get(k) {
                    Some(t) if t.len() == n => Ok(t.to_f32_vec()),
                    Some(t) => Err(format!(
                        "datum {di}: {k} has length {} but model_input has {n}",
                        t.len()
                    )),
                    None => Err(format!("datum {di}: missing loss input {k:?}")),
                }
            };
            let targets: Vec<u32> = match d.loss_fn_inputs.get("target_tokens") {
                Some(TensorData::I64 { data, .. }) if data.len() == n => data
                    .iter()
                    .map(|&t| u32::try_from(t).unwrap_or(0))
                    .collect(),
                Some(_) => {
                    return Err(format!(
                        "datum {di}: target_tokens must be int64 of length {n}"
                    ));
                }
                None => return Err(format!("datum {di}: missing loss input \"target_tokens\"")),
            };
            let (mut lps, mut losses) = (Vec::with_capacity(n), Vec::with_capacity(n));
            // Per-token dLoss/dlogprob.
            let mut coef = vec![0.0f32; n];
            match loss_fn {
                "cross_entropy" => {
                    let w = d.loss_fn_inputs.get("weights").map(TensorData::to_f32_vec);
                    for i in 0..n {
                        let lp = self.logprob(d.model_input[i], targets[i]);
                        let wi = w.as_ref().and_then(|w| w.get(i)).copied().unwrap_or(0.0);
                        lps.push(lp);
                        losses.push(-wi * lp);
                        coef[i] = -wi;
                    }
                }
                "importance_sampling" | "ppo" | "cispo" => {
                    let q = get("logprobs")?;
                    let a = get("advantages")?;
                    for i in 0..n {
                        let lp = self.logprob(d.model_input[i], targets[i]);
                        let r = (lp - q[i]).exp();
                        let (loss, c) = match loss_fn {
                            "importance_sampling" => (-r * a[i], -r * a[i]),
                            "ppo" => {
                                let clipped = r.clamp(lo, hi);
                                if r * a[i] <= clipped * a[i] {
                                    (-r * a[i], -r * a[i])
                                } else {
                                    (-clipped * a[i], 0.0)
                                }
                            }
                            _ => {
                                let clipped = r.clamp(lo, hi);
                                (-clipped * lp * a[i], -clipped * a[i])
                            }
                        };
                        lps.push(lp);
                        losses.push(loss);
                        coef[i] = c;
                    }
                }
                other => return Err(format!("unsupported loss_fn {other:?}")),
            }
            for i in 0..n {
                if coef[i] == 0.0 {
                    continue;
                }
                // d logp(t)/d logit_k = 1[k=t] - p_k
                let prev = d.model_input[i] as usize % v;
                let t = targets[i] as usize % v;
                for (k, lpk) in self.log_probs(d.model_input[i]).iter().enumerate() {
                    let dk = if k == t { 1.0 } else { 0.0 } - lpk.exp();
                    grad[prev * v + k] += coef[i] * dk;
                }
            }
            total += losses.iter().map(|&x| f64::from(x)).sum::<f64>();
            let mut m = BTreeMap::new();
            m.insert("logprobs".to_string(), TensorData::f32(lps));
            m.insert("elementwise_loss".to_string(), TensorData::f32(losses));
            outputs.push(m);
        }
        let out = ForwardBackwardOutput {
            loss_fn_output_type: "scalar".into(),
            loss_fn_outputs: outputs,
            metrics: [("loss:sum".to_string(), total)].into(),
        };
        Ok((out, grad))
    }

    /// Adam step with bias correction; returns the gradient norm.
    pub fn adam(&mut self, grad: &[f32], p: &AdamParams) -> f64 {
        let norm = grad
            .iter()
            .map(|g| f64::from(*g) * f64::from(*g))
            .sum::<f64>()
            .sqrt();
        let scale = if p.grad_clip_norm > 0.0 && norm > p.grad_clip_norm {
            (p.grad_clip_norm / norm) as f32
        } else {
            1.0
        };
        self.step += 1;
        let (b1, b2) = (p.beta1 as f32, p.beta2 as f32);
        let c1 = 1.0 - b1.powi(self.step as i32);
        let c2 = 1.0 - b2.powi(self.step as i32);
        let (lr, eps, wd) = (p.learning_rate as f32, p.eps as f32, p.weight_decay as f32);
        for (i, g) in grad.iter().enumerate() {
            let g = g * scale;
            self.m[i] = b1 * self.m[i] + (1.0 - b1) * g;
            self.v[i] = b2 * self.v[i] + (1.0 - b2) * g * g;
            let mhat = self.m[i] / c1;
            let vhat = self.v[i] / c2;
            self.w[i] -= lr * (mhat / (vhat.sqrt() + eps) + wd * self.w[i]);
        }
        norm
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_step_raises_advantaged_tokens() {
        let mut w = Weights::base("m", 8, 0.5);
        let out = w.sample(&[1, 2], 1, &SamplingParams::max_tokens(4), 7, false);
        let seq = &out.sequences[0];
        let mut full = vec![1, 2];
        full.extend(&seq.tokens);
        let mut lp = vec![0.0, 0.0];
        lp.extend(seq.logprobs.as_ref().unwrap());
        let adv: Vec<f32> = full
            .iter()
            .enumerate()
            .map(|(i, _)| if i >= 2 { 1.0 } else { 0.0 })
            .collect();
        let d = Datum::rl_from_sequence(&full, &lp, &adv);
        let (o, g) = w
            .forward_backward(
                std::slice::from_ref(&d),
                "importance_sampling",
                &BTreeMap::new(),
            )
            .unwrap();
        // Learner logprobs equal sampler logprobs before any update.
        let learner = o.loss_fn_outputs[0]["logprobs"].to_f32_vec();
        assert!((learner[1] - lp[2]).abs() < 1e-6);
        let before: f32 = (2..full.len())
            .map(|i| w.logprob(full[i - 1], full[i]))
            .sum();
        w.adam(&g, &AdamParams::lr(0.05));
        let after: f32 = (2..full.len())
            .map(|i| w.logprob(full[i - 1], full[i]))
            .sum();
        assert!(after > before, "{after} <= {before}");
    }
}
