//! Training-step duration estimate: the median of the last [`STEP_HISTORY`] measured steps.
//! The median ignores the odd slow step (cold start, network hiccup) that a mean would not.

use std::collections::VecDeque;
use std::time::Duration;

use crate::persist::STEP_HISTORY;

#[derive(Debug, Clone, Default)]
pub struct StepEstimator {
    durations: VecDeque<Duration>,
}

impl StepEstimator {
    pub fn from_secs(secs: &[f64]) -> Self {
        let mut e = Self::default();
        for s in secs {
            if let Ok(d) = Duration::try_from_secs_f64(*s) {
                e.record(d);
            }
        }
        e
    }

    pub fn record(&mut self, d: Duration) {
        self.durations.push_back(d);
        while self.durations.len() > STEP_HISTORY {
            self.durations.pop_front();
        }
    }

    pub fn len(&self) -> usize {
        self.durations.len()
    }

    pub fn is_empty(&self) -> bool {
        self.durations.is_empty()
    }

    /// The median (the upper middle value for an even count — the cautious choice).
    pub fn estimate(&self) -> Option<Duration> {
        let mut v: Vec<Duration> = self.durations.iter().copied().collect();
        v.sort();
        v.get(v.len() / 2).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_recent_steps() {
        let mut e = StepEstimator::default();
        assert_eq!(e.estimate(), None);
        for s in [300, 10, 20] {
            e.record(Duration::from_secs(s));
        }
        assert_eq!(e.estimate(), Some(Duration::from_secs(20)));
        e.record(Duration::from_secs(30));
        assert_eq!(e.estimate(), Some(Duration::from_secs(30)));
        for _ in 0..STEP_HISTORY {
            e.record(Duration::from_secs(60));
        }
        assert_eq!(e.len(), STEP_HISTORY);
        assert_eq!(e.estimate(), Some(Duration::from_secs(60)));
        let r = StepEstimator::from_secs(&[1.0, f64::NAN, -3.0, 5.0, 3.0]);
        assert_eq!(r.len(), 3);
        assert_eq!(r.estimate(), Some(Duration::from_secs(3)));
    }
}
