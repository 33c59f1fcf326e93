//! `metaclaw rollout`, `metaclaw eval`, `metaclaw adapters` and `metaclaw rollback`: task
//! rollouts and evaluations run by the running core (through its proxy); this command starts
//! them and follows their progress.

use std::path::Path;
use std::time::Duration;

use anyhow::Result;
use metaclaw_config::Home;
use metaclaw_core::api::NoInput;
use metaclaw_core::api::ops::tasks::{ListAdapters, RollbackAdapter, StartEval, StartRollout};
use metaclaw_core::rollout::{CurvePoint, EvalReport, EvalRequest, JobStatus, RolloutRequest};

use crate::cli::{EvalArgs, RolloutArgs};
use crate::connection::Core;
use crate::job;
use crate::output::{say, warn};

/// The daemon runs the tasks, with its own working folder: hand it an absolute path.
fn absolute(dir: Option<&Path>) -> Result<Option<String>> {
    Ok(match dir {
        Some(d) => Some(std::path::absolute(d)?.display().to_string()),
        None => None,
    })
}

fn core(home: &Home) -> Result<Core> {
    Core::running(home, "metaclaw start --mode rl", Duration::from_secs(600))
}

pub fn rollout(home: &Home, args: RolloutArgs) -> Result<()> {
    let core = core(home)?;
    let req = RolloutRequest {
        dir: absolute(args.dir.as_deref())?,
        split: args.split,
        group: args.group,
        concurrency: args.concurrency,
        max_steps: args.max_steps,
        steps: args.steps,
        eval: args.eval,
        allow_commands: args.allow_commands.then_some(true),
    };
    core.call::<StartRollout>((), req)?;
    let mut news = News::default();
    let done = job::follow(&core, "rollout", false, |s| news.lines(s))?;
    if done.curve.is_empty() {
        say("Rollout done: the episodes are rewarded and the trainer takes them from here.");
    }
    Ok(())
}

pub fn eval(home: &Home, args: EvalArgs) -> Result<()> {
    let core = core(home)?;
    let req = EvalRequest {
        dir: absolute(args.dir.as_deref())?,
        split: args.split,
        arms: job::arms(&args.arms),
        concurrency: args.concurrency,
        max_steps: args.max_steps,
    };
    core.call::<StartEval>((), req)?;
    let mut news = News::default();
    let done = job::follow(&core, "evaluation", args.json, |s| news.lines(s))?;
    job::print_report(
        done.report,
        "the evaluation ended without a report",
        args.json,
        describe_report,
    )
}

/// The lines a rollout or evaluation shows as it runs: skipped tasks and warnings once
/// (as soon as there are any), then each new curve point.
#[derive(Default)]
struct News {
    shown_notes: bool,
    shown_points: usize,
}

impl News {
    fn lines(&mut self, s: &JobStatus) -> Vec<String> {
        if !self.shown_notes && (!s.problems.is_empty() || !s.warnings.is_empty()) {
            for p in &s.problems {
                warn(&format!("task {p}: skipped"));
            }
            for w in &s.warnings {
                warn(w);
            }
            self.shown_notes = true;
        }
        let lines = s
            .curve
            .iter()
            .skip(self.shown_points)
            .map(describe_point)
            .collect();
        self.shown_points = s.curve.len();
        lines
    }
}

fn describe_point(p: &CurvePoint) -> String {
    let mut line = format!(
        "step {:>3}  adapter {:>5}  success {}",
        p.round,
        p.adapter_step.map_or("-".into(), |s| format!("v{s}")),
        p.success
    );
    if let Some(s) = p.step_seconds {
        line.push_str(&format!("  {s:.2} s/step"));
    }
    if let Some(r) = p.train_reward {
        line.push_str(&format!("  train reward {r:.2}"));
    }
    if let Some(g) = &p.gate {
        line.push_str(&format!("  [{g}]"));
    }
    line
}

fn describe_report(r: &EvalReport) -> String {
    let mut out = format!("Evaluation of {} ({} split)\n", r.dir, r.split);
    for arm in &r.arms {
        out.push_str(&format!(
            "  {:<12} {}{}\n",
            arm.arm,
            arm.success,
            arm.adapter_step
                .map_or(String::new(), |s| format!("  (adapter v{s})"))
        ));
    }
    for arm in &r.arms {
        let failed: Vec<&str> = arm
            .outcomes
            .iter()
            .filter(|o| !o.passed)
            .map(|o| o.task_id.as_str())
            .collect();
        if !failed.is_empty() {
            out.push_str(&format!("  {} failed: {}\n", arm.arm, failed.join(", ")));
        }
    }
    out.trim_end().to_owned()
}

pub fn adapters(home: &Home) -> Result<()> {
    let core = core(home)?;
    for v in core.call::<ListAdapters>((), NoInput {})? {
        say(&format!(
            "v{:<5} {:<8} {:>6}  {}",
            v.step,
            v.status.to_string(),
            v.eval_success
                .map_or("-".into(), |s| format!("{:.0} %", s * 100.0)),
            v.reason.unwrap_or_default()
        ));
    }
    Ok(())
}

pub fn rollback(home: &Home, step: u64) -> Result<()> {
    let core = core(home)?;
    let step = i64::try_from(step)?;
    let v = core.call::<RollbackAdapter>(step, NoInput {})?;
    say(&format!(
        "Adapter v{} serves again. {}",
        v.step,
        v.reason.unwrap_or_default()
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use metaclaw_tasks::SuccessRate;

    #[test]
    fn curve_points_read_as_one_line() {
        let p = CurvePoint {
            round: 2,
            adapter_step: Some(2),
            success: SuccessRate::new(8, 10),
            train_reward: Some(0.5),
            loss: None,
            step_seconds: Some(1.25),
            gate: Some("serving: promoted".into()),
        };
        assert_eq!(
            describe_point(&p),
            "step   2  adapter    v2  success 80.0 % (8/10, 95 % CI 49.0–94.3 %)  1.25 s/step  train reward 0.50  [serving: promoted]"
        );
    }
}
