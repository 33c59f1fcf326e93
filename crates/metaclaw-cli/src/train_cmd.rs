//! `metaclaw train-step`: one RL training step now, on the running core.

use std::time::Duration;

use anyhow::Result;
use metaclaw_config::Home;
use metaclaw_core::api::NoInput;
use metaclaw_core::api::ops::training::TrainStep;
use metaclaw_rl::StepOutcome;

use crate::connection::Core;
use crate::output::say;

pub fn run(home: &Home, timeout: u64) -> Result<()> {
    let core = Core::running(
        home,
        "metaclaw start --mode rl",
        Duration::from_secs(timeout),
    )?;
    let outcome = core.call::<TrainStep>((), NoInput {}).map_err(|mut e| {
        e.message = format!("training step failed: {}", e.message);
        e
    })?;
    say(&describe(&outcome));
    Ok(())
}

fn describe(outcome: &StepOutcome) -> String {
    match outcome {
        StepOutcome::Trained {
            step,
            samples,
            mean_reward,
            loss,
            sampler,
        } => format!(
            "Step {step} trained on {samples} samples (mean reward {}, loss {}); now serving {sampler}",
            mean_reward.map_or("-".into(), |v| format!("{v:.3}")),
            loss.map_or("-".into(), |v| format!("{v:.4}")),
        ),
        StepOutcome::Paused { step } => {
            format!("Step {step} paused: the training window closed; it resumes in the next one")
        }
        StepOutcome::Skipped { reason } => format!("Nothing trained: {reason}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_read_as_sentences() {
        let t = describe(&StepOutcome::Trained {
            step: 3,
            samples: 4,
            mean_reward: Some(0.25),
            loss: Some(-1.5),
            sampler: "tinker://m/sampler_weights/step-000003".into(),
        });
        assert_eq!(
            t,
            "Step 3 trained on 4 samples (mean reward 0.250, loss -1.5000); now serving tinker://m/sampler_weights/step-000003"
        );
        let s = describe(&StepOutcome::Skipped {
            reason: "no rewarded samples are waiting".into(),
        });
        assert_eq!(s, "Nothing trained: no rewarded samples are waiting");
    }
}
