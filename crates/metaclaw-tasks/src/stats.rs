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
        let n = trials as f64;
        let p = successes.min(trials) as f64 / n;
        let z2 = Z95 * Z95;
        let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
        let half = Z95 / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
        SuccessRate {
            successes,
            trials,
            rate: p,
            low: (centre - half).max(0.0),
            high: (centre + half).min(1.0),
        }
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
}
