//! How a served answer's reward is made of what the judge and the user said about it.
//!
//! Rule: the explicit part is the user's thumbs (rating × `rl.thumbs_weight`) when they
//! rated it, because the user knows what they wanted; otherwise the judge's score. Live use
//! then adds its implicit parts, each a weight from the settings times -1 when it happened:
//! the next user turn corrects the answer (`rl.correction_weight`) or asks again
//! (`rl.retry_weight`), its tool calls failed (`rl.tool_error_weight`). The reward is the
//! sum of the parts; a weight of 0 removes its part. With no part at all the sample has no
//! reward and never trains. Extra samples (never shown to the user) get the judge only.

use metaclaw_config::RlConfig;
use metaclaw_store::{RewardComponent, RewardPart, RewardSource, TurnSignals};

/// The settings' weights of the reward's parts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights {
    pub thumbs: f64,
    pub correction: f64,
    pub retry: f64,
    pub tool_error: f64,
}

impl Weights {
    pub fn of(rl: &RlConfig) -> Self {
        Self {
            thumbs: rl.thumbs_weight,
            correction: rl.correction_weight,
            retry: rl.retry_weight,
            tool_error: rl.tool_error_weight,
        }
    }
}

/// A reward and the parts it is the sum of.
#[derive(Debug, Clone, PartialEq)]
pub struct Composed {
    pub reward: f64,
    pub source: RewardSource,
    pub parts: Vec<RewardPart>,
}

/// The reward of a served answer, `None` while nothing has spoken about it.
pub fn compose(s: &TurnSignals, w: &Weights) -> Option<Composed> {
    let mut parts = Vec::new();
    let mut add = |component, signal: f64, weight: f64| {
        if weight > 0.0 {
            parts.push(RewardPart {
                component,
                signal,
                weight,
                value: signal * weight,
            });
        }
    };
    match (s.thumbs, s.judge) {
        (Some(t), _) if w.thumbs > 0.0 => add(RewardComponent::Thumbs, f64::from(t), w.thumbs),
        (_, Some(j)) => add(RewardComponent::Judge, f64::from(j), 1.0),
        _ => {}
    }
    for (happened, component, weight) in [
        (s.corrected, RewardComponent::Correction, w.correction),
        (s.retried, RewardComponent::Retry, w.retry),
        (s.tool_error, RewardComponent::ToolError, w.tool_error),
    ] {
        if happened {
            add(component, -1.0, weight);
        }
    }
    let source = match parts.as_slice() {
        [] => return None,
        [only] if only.component == RewardComponent::Judge => RewardSource::Prm,
        [only] if only.component == RewardComponent::Thumbs => RewardSource::Feedback,
        // Implicit parts: the stored parts say which.
        _ => RewardSource::Combined,
    };
    Some(Composed {
        reward: parts.iter().map(|p| p.value).sum(),
        source,
        parts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: Weights = Weights {
        thumbs: 1.0,
        correction: 0.5,
        retry: 0.3,
        tool_error: 0.25,
    };

    fn signals(judge: Option<i8>, thumbs: Option<i8>) -> TurnSignals {
        TurnSignals {
            judge,
            thumbs,
            ..TurnSignals::default()
        }
    }

    #[test]
    fn thumbs_replace_the_judge() {
        let c = compose(&signals(Some(1), Some(-1)), &W).unwrap();
        assert_eq!((c.reward, c.source), (-1.0, RewardSource::Feedback));
        let c = compose(&signals(Some(0), None), &W).unwrap();
        assert_eq!((c.reward, c.source), (0.0, RewardSource::Prm));
        assert_eq!(compose(&signals(None, None), &W), None);
        // Thumbs weighted 0 do not count: the judge's score stands.
        let off = Weights { thumbs: 0.0, ..W };
        let c = compose(&signals(Some(1), Some(-1)), &off).unwrap();
        assert_eq!((c.reward, c.source), (1.0, RewardSource::Prm));
        assert_eq!(compose(&signals(None, Some(1)), &off), None);
    }

    #[test]
    fn implicit_parts_add_their_weights() {
        let all = TurnSignals {
            judge: Some(1),
            thumbs: None,
            corrected: true,
            retried: true,
            tool_error: true,
        };
        let c = compose(&all, &W).unwrap();
        assert_eq!(c.source, RewardSource::Combined);
        assert!((c.reward - (1.0 - 0.5 - 0.3 - 0.25)).abs() < 1e-12, "{c:?}");
        let names: Vec<&str> = c.parts.iter().map(|p| p.component.as_str()).collect();
        assert_eq!(names, ["judge", "correction", "retry", "tool_error"]);
        // Without a judge or thumbs the implicit parts alone are the reward.
        let corrected = TurnSignals {
            corrected: true,
            ..TurnSignals::default()
        };
        let c = compose(&corrected, &W).unwrap();
        assert_eq!((c.reward, c.source), (-0.5, RewardSource::Combined));
        // A zero weight removes the part.
        let off = Weights {
            correction: 0.0,
            ..W
        };
        assert_eq!(compose(&corrected, &off), None);
    }
}
