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

/// A proportion's 95 % Wilson score interval, `None` for an empty sample.
pub fn wilson(successes: u64, n: u64) -> Option<(f64, f64)> {
    if n == 0 || successes > n {
        return None;
    }
    Some(wilson_at(successes as f64 / n as f64, n))
}

/// The Wilson score interval of a proportion `p` over `n > 0` trials.
fn wilson_at(p: f64, n: u64) -> (f64, f64) {
    let n = n as f64;
    let z2 = Z95 * Z95;
    let denominator = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denominator;
    let half = Z95 / denominator * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// Newcombe's hybrid score interval (his method 10) for p1 - p2, from each proportion's
/// Wilson interval: 95 % coverage stays close to nominal for small samples and rates near
/// 0 or 1, where the usual normal interval fails. `(difference, low, high)`.
pub fn newcombe(k1: u64, n1: u64, k2: u64, n2: u64) -> Option<(f64, f64, f64)> {
    let (l1, u1) = wilson(k1, n1)?;
    let (l2, u2) = wilson(k2, n2)?;
    let p1 = k1 as f64 / n1 as f64;
    let p2 = k2 as f64 / n2 as f64;
    let d = p1 - p2;
    let low = d - ((p1 - l1).powi(2) + (u2 - p2).powi(2)).sqrt();
    let high = d + ((u1 - p1).powi(2) + (p2 - l2).powi(2)).sqrt();
    Some((d, low, high))
}

impl SuccessRate {
    /// The rate with its Wilson interval; no trials is the whole range `0–1`.
    pub fn new(successes: u64, trials: u64) -> SuccessRate {
        let successes = successes.min(trials);
        let (low, high) = wilson(successes, trials).unwrap_or((0.0, 1.0));
        SuccessRate {
            successes,
            trials,
            rate: if trials == 0 {
                0.0
            } else {
                successes as f64 / trials as f64
            },
            low,
            high,
        }
    }
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
        let (low, high) = wilson_at(mean, n);
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

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 5e-5
    }

    /// Newcombe (1998), "Two-sided confidence intervals for the single proportion", table
    /// I: 81/263 gives the Wilson interval 0.2553 to 0.3662; 0/20 gives 0 to 0.1611.
    #[test]
    fn wilson_matches_published_values() {
        let (l, u) = wilson(81, 263).unwrap();
        assert!(close(l, 0.2553) && close(u, 0.3662), "{l} {u}");
        let (l, u) = wilson(0, 20).unwrap();
        assert!(l == 0.0 && close(u, 0.1611), "{l} {u}");
        assert_eq!(wilson(1, 0), None);
        assert_eq!(wilson(3, 2), None);
    }

    /// By hand for 6/8 against 2/10: Wilson 6/8 is (0.4093, 0.9285) and 2/10 is
    /// (0.0567, 0.5098); d = 0.55,
    /// low = 0.55 − √((0.75 − 0.4093)² + (0.5098 − 0.2)²) = 0.0895,
    /// high = 0.55 + √((0.9285 − 0.75)² + (0.2 − 0.0567)²) = 0.7789.
    #[test]
    fn newcombe_matches_a_hand_computation() {
        let (l1, u1) = wilson(6, 8).unwrap();
        assert!(close(l1, 0.4093) && close(u1, 0.9285), "{l1} {u1}");
        let (l2, u2) = wilson(2, 10).unwrap();
        assert!(close(l2, 0.0567) && close(u2, 0.5098), "{l2} {u2}");
        let (d, low, high) = newcombe(6, 8, 2, 10).unwrap();
        assert!(close(d, 0.55), "{d}");
        assert!(
            (low - 0.0895).abs() < 2e-4 && (high - 0.7789).abs() < 2e-4,
            "{low} {high}"
        );
        assert_eq!(newcombe(1, 0, 1, 2), None);
    }
}
