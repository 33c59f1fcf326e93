//! How a sample's reward is decided when both the judge and the user have spoken.
//!
//! Rule: explicit user feedback overrides the judge (thumbs up = +1, down = -1), because
//! the user knows what they wanted; the judge's votes stay recorded beside it and the
//! reward is marked `combined`. Without feedback the judge's majority score is the reward;
//! with neither, the sample has no reward and never trains.

use metaclaw_store::RewardSource;

pub fn decide(judge: Option<i8>, feedback: Option<i8>) -> Option<(f64, RewardSource)> {
    match (judge, feedback) {
        (Some(_), Some(f)) => Some((f64::from(f), RewardSource::Combined)),
        (None, Some(f)) => Some((f64::from(f), RewardSource::Feedback)),
        (Some(j), None) => Some((f64::from(j), RewardSource::Prm)),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feedback_overrides_the_judge() {
        assert_eq!(
            decide(Some(1), Some(-1)),
            Some((-1.0, RewardSource::Combined))
        );
        assert_eq!(decide(None, Some(1)), Some((1.0, RewardSource::Feedback)));
        assert_eq!(decide(Some(0), None), Some((0.0, RewardSource::Prm)));
        assert_eq!(decide(None, None), None);
    }
}
