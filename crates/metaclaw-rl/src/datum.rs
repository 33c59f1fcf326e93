//! A sample as a training example: the cookbook's shifted layout, where the model reads
//! `all[..n-1]` and is scored on predicting `all[1..]`. Prompt positions carry zero
//! advantage, which is how masking is expressed (Tinker takes no mask tensor).

#[derive(Debug, Clone, PartialEq)]
pub struct Example {
    pub input: Vec<u32>,
    pub targets: Vec<i64>,
    /// Sampler logprobs aligned with `targets` (0 on prompt positions).
    pub logprobs: Vec<f32>,
    pub advantages: Vec<f32>,
}

impl Example {
    /// `None` when there is nothing to predict (empty response) or the per-token vectors do
    /// not match the response.
    pub fn new(
        prompt: &[u32],
        response: &[u32],
        response_logprobs: &[f32],
        advantages: &[f32],
    ) -> Option<Self> {
        if prompt.is_empty()
            || response.is_empty()
            || response_logprobs.len() != response.len()
            || advantages.len() != response.len()
        {
            return None;
        }
        let all: Vec<u32> = prompt.iter().chain(response).copied().collect();
        let pad = prompt.len() - 1;
        let clean = |v: &[f32]| -> Vec<f32> {
            std::iter::repeat_n(0.0, pad)
                .chain(v.iter().map(|x| if x.is_finite() { *x } else { 0.0 }))
                .collect()
        };
        Some(Self {
            input: all[..all.len() - 1].to_vec(),
            targets: all[1..].iter().map(|&t| i64::from(t)).collect(),
            logprobs: clean(response_logprobs),
            advantages: clean(advantages),
        })
    }

    pub fn response_tokens(&self) -> usize {
        self.advantages.iter().filter(|a| **a != 0.0).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shifted_layout_with_prompt_masked_by_zero_advantage() {
        let e = Example::new(&[1, 2, 3], &[4, 5], &[-0.1, -0.2], &[1.0, 1.0]).unwrap();
        assert_eq!(e.input, [1, 2, 3, 4]);
        assert_eq!(e.targets, [2, 3, 4, 5]);
        assert_eq!(e.logprobs, [0.0, 0.0, -0.1, -0.2]);
        assert_eq!(e.advantages, [0.0, 0.0, 1.0, 1.0]);
        assert_eq!(e.response_tokens(), 2);
    }

    #[test]
    fn mismatched_or_empty_samples_are_refused() {
        assert!(Example::new(&[1], &[], &[], &[]).is_none());
        assert!(Example::new(&[1], &[2, 3], &[-0.1], &[1.0, 1.0]).is_none());
        assert!(Example::new(&[], &[2], &[-0.1], &[1.0]).is_none());
        let e = Example::new(&[1], &[2], &[f32::NAN], &[f32::INFINITY]).unwrap();
        assert_eq!((e.logprobs[0], e.advantages[0]), (0.0, 0.0));
    }
}
