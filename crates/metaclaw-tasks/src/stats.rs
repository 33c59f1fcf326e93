//! Success rates with a 95 % Wilson score interval (sound for small samples and for rates
//! near 0 or 1, where the normal approximation is not).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SuccessRate {
    pub successes: u64,
    pub trials: u64,
    pub rate: f64,
    pub low: f64,
    pub high: f64,
}

/// z for a two-sided 95 % interval.
const Z95: f64 = 1.959_963_984_540_054;

impl SuccessRate {
    pub fn new(successes: u64, trials: u64) -> SuccessRate {
        if trials == 0 {
            return SuccessRate {
                successes: 0,
                trials: 0,
                rate: 0.0,
                low: 0.0,
                high: 1.0,
            };
        }
        let p = successes.min(trials) as f64 / trials as f64;
        let (low, high) = wilson(p, trials);
        SuccessRate {
            successes,
            trials,
            rate: p,
            low,
            high,
        }
    }
}

/// The Wilson score interval of a proportion `p` over `n` trials.
fn wilson(p: f64, n: u64) -> (f64, f64) {
    let n = n as f64;
    let z2 = Z95 * Z95;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = Z95 / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// The mean of scores in [0, 1] (partial credit) with a 95 % interval. A variable bounded
/// by [0, 1] with mean p has a variance of at most p(1 − p), the Bernoulli case, so the
/// Wilson interval at p is a conservative interval for the mean.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MeanScore {
    /// Scores averaged.
    pub n: u64,
    /// Their sum.
    pub total: f64,
    pub mean: f64,
    pub low: f64,
    pub high: f64,
}

impl MeanScore {
    pub fn new(scores: &[f64]) -> MeanScore {
        let n = scores.len() as u64;
        if n == 0 {
            return MeanScore {
                n: 0,
                total: 0.0,
                mean: 0.0,
                low: 0.0,
                high: 1.0,
            };
        }
        let total: f64 = scores.iter().map(|s| s.clamp(0.0, 1.0)).sum();
        let mean = total / n as f64;
        let (low, high) = wilson(mean, n);
        MeanScore {
            n,
            total,
            mean,
            low,
            high,
        }
    }
}

impl std::fmt::Display for MeanScore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:.1} % ({:.2}/{}, 95 % CI {:.1}–{:.1} %)",
            self.mean * 100.0,
            self.total,
            self.n,
            self.low * 100.0,
            self.high * 100.0
        )
    }
}

impl std::fmt::Display for SuccessRate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:.1} % ({}/{}, 95 % CI {:.1}–{:.1} %)",
            self.rate * 100.0,
            self.successes,
            self.trials,
            self.low * 100.0,
            self.high * 100.0
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_interval_matches_reference_values() {
        // 8/10: the textbook Wilson interval is 0.490–0.943.
        let r = SuccessRate::new(8, 10);
        assert!(
            (r.low - 0.4902).abs() < 1e-3 && (r.high - 0.9433).abs() < 1e-3,
            "{r:?}"
        );
        // 0/20 still has a non-zero upper bound (0.161).
        let r = SuccessRate::new(0, 20);
        assert_eq!(r.low, 0.0);
        assert!((r.high - 0.1611).abs() < 1e-3, "{r:?}");
        assert_eq!(SuccessRate::new(0, 0).high, 1.0);
    }

    #[test]
    fn a_mean_of_binary_scores_has_the_wilson_interval() {
        let m = MeanScore::new(&[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0]);
        let r = SuccessRate::new(8, 10);
        assert_eq!((m.mean, m.low, m.high), (r.rate, r.low, r.high));
        let partial = MeanScore::new(&[0.75, 0.25]);
        assert_eq!((partial.n, partial.total, partial.mean), (2, 1.0, 0.5));
        assert!(partial.low < 0.5 && partial.high > 0.5);
        assert_eq!(MeanScore::new(&[]).high, 1.0);
    }
}
