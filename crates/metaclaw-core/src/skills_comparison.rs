//! Skills off against skills on, from stored evaluations: do the injected skills make the
//! agent succeed more often on the user's own tasks?
//!
//! The pair compared is the newest finished `skills-on` run and the newest finished
//! `skills-off` run of the same task folder and split (one `metaclaw eval --arms
//! skills-off,skills-on` makes both). The difference carries Newcombe's 95 % interval, and
//! the verdict follows the interval, never the point estimate alone.

use chrono::{DateTime, Utc};
use metaclaw_store::EvalRun;
use metaclaw_tasks::{SuccessRate, newcombe};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Below this many tasks in either arm, the verdict is "not enough data" whatever the
/// interval says.
pub const MIN_TRIALS: u64 = 10;

const ON: &str = "skills-on";
const OFF: &str = "skills-off";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ComparisonVerdict {
    NotEnoughData,
    /// The whole interval of (on − off) is above zero.
    SkillsHelp,
    /// The whole interval is below zero.
    SkillsHurt,
    NoClearDifference,
}

/// Success with skills on minus success with skills off.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Difference {
    pub estimate: f64,
    /// 95 % interval (Newcombe's hybrid score method).
    pub low: f64,
    pub high: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SkillsComparison {
    pub task_dir: String,
    pub split: String,
    pub off: SuccessRate,
    pub on: SuccessRate,
    /// The stored runs compared (`GET /api/evals`).
    pub off_run: i64,
    pub on_run: i64,
    /// When the later of the two finished.
    pub finished_at: DateTime<Utc>,
    pub difference: Option<Difference>,
    pub verdict: ComparisonVerdict,
}

/// The newest comparison `runs` allow, `None` when no finished skills-on run has a finished
/// skills-off run of the same split beside it.
pub fn skills_comparison(runs: &[EvalRun]) -> Option<SkillsComparison> {
    let finished = |arm: &'static str| {
        runs.iter()
            .filter(move |r| r.arm == arm && r.trials > 0 && r.finished_at.is_some())
    };
    let on = finished(ON).max_by_key(|r| (r.finished_at, r.id))?;
    let off = finished(OFF)
        .filter(|r| r.task_dir == on.task_dir && r.split == on.split)
        .max_by_key(|r| (r.finished_at, r.id))?;
    let difference = newcombe(on.successes, on.trials, off.successes, off.trials).map(
        |(estimate, low, high)| Difference {
            estimate,
            low,
            high,
        },
    );
    let verdict = match difference {
        _ if on.trials.min(off.trials) < MIN_TRIALS => ComparisonVerdict::NotEnoughData,
        None => ComparisonVerdict::NotEnoughData,
        Some(d) if d.low > 0.0 => ComparisonVerdict::SkillsHelp,
        Some(d) if d.high < 0.0 => ComparisonVerdict::SkillsHurt,
        Some(_) => ComparisonVerdict::NoClearDifference,
    };
    Some(SkillsComparison {
        task_dir: on.task_dir.clone(),
        split: on.split.clone(),
        off: SuccessRate::new(off.successes, off.trials),
        on: SuccessRate::new(on.successes, on.trials),
        off_run: off.id,
        on_run: on.id,
        finished_at: on.finished_at.max(off.finished_at)?,
        difference,
        verdict,
    })
}

#[cfg(test)]
mod tests {
    use metaclaw_store::EvalPurpose;

    use super::*;

    fn run(id: i64, arm: &str, split: &str, k: u64, n: u64, finished_min: Option<i64>) -> EvalRun {
        let t0 = DateTime::parse_from_rfc3339("2026-11-01T10:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        EvalRun {
            id,
            started_at: t0,
            finished_at: finished_min.map(|m| t0 + chrono::Duration::minutes(m)),
            task_dir: "/tasks".into(),
            split: split.into(),
            purpose: EvalPurpose::Eval,
            arm: arm.into(),
            adapter_step: None,
            successes: k,
            trials: n,
            mean_score: None,
        }
    }

    #[test]
    fn newest_pair_of_the_same_split_with_a_hand_computed_interval() {
        let runs = [
            run(1, OFF, "test", 1, 20, Some(1)),
            run(2, ON, "test", 2, 20, Some(2)),
            // The newest pair: 6/8 against 2/10 (interval 0.0895–0.7789 by hand).
            run(3, OFF, "test", 2, 10, Some(3)),
            run(4, ON, "test", 6, 8, Some(4)),
            // Another split's off arm and an unfinished run are not paired.
            run(5, OFF, "train", 0, 10, Some(5)),
            run(6, OFF, "test", 0, 10, None),
        ];
        let c = skills_comparison(&runs).unwrap();
        assert_eq!((c.on_run, c.off_run), (4, 3));
        assert_eq!((c.on.successes, c.on.trials), (6, 8));
        let d = c.difference.unwrap();
        assert!((d.estimate - 0.55).abs() < 1e-9);
        assert!((d.low - 0.0895).abs() < 2e-4 && (d.high - 0.7789).abs() < 2e-4);
        // 8 tasks in the on arm is fewer than MIN_TRIALS: the interval is shown, no verdict.
        assert_eq!(c.verdict, ComparisonVerdict::NotEnoughData);
    }

    #[test]
    fn verdict_follows_the_interval() {
        let help = [
            run(1, OFF, "t", 3, 30, Some(1)),
            run(2, ON, "t", 24, 30, Some(2)),
        ];
        assert_eq!(
            skills_comparison(&help).unwrap().verdict,
            ComparisonVerdict::SkillsHelp
        );
        let hurt = [
            run(1, OFF, "t", 24, 30, Some(1)),
            run(2, ON, "t", 3, 30, Some(2)),
        ];
        assert_eq!(
            skills_comparison(&hurt).unwrap().verdict,
            ComparisonVerdict::SkillsHurt
        );
        let unclear = [
            run(1, OFF, "t", 15, 30, Some(1)),
            run(2, ON, "t", 17, 30, Some(2)),
        ];
        assert_eq!(
            skills_comparison(&unclear).unwrap().verdict,
            ComparisonVerdict::NoClearDifference
        );
    }

    #[test]
    fn nothing_to_compare_without_both_arms() {
        assert_eq!(skills_comparison(&[]), None);
        assert_eq!(skills_comparison(&[run(1, ON, "t", 3, 30, Some(1))]), None);
        assert_eq!(
            skills_comparison(&[
                run(1, OFF, "t", 3, 30, Some(1)),
                run(2, ON, "u", 3, 30, Some(2))
            ]),
            None
        );
    }
}
