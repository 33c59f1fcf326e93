//! `metaclaw bench`: MetaClaw-Bench on a checkout of the public benchmark, run by the
//! running core through its proxy (days serially, in the paper's arms); this command starts
//! it, shows progress and prints the table.

use std::time::Duration;

use anyhow::Result;
use metaclaw_config::Home;
use metaclaw_core::api::ops::tasks::StartBench;
use metaclaw_core::rollout::JobStatus;
use metaclaw_core::rollout::bench::BenchRequest;

use crate::cli::BenchArgs;
use crate::connection::Core;
use crate::job;
use crate::output::warn;

pub fn run(home: &Home, args: BenchArgs) -> Result<()> {
    // The daemon reads the folder with its own working folder: hand it an absolute path.
    let dir = std::path::absolute(&args.dir)?.display().to_string();
    let core = Core::running(home, "metaclaw start", Duration::from_secs(600))?;
    let req = BenchRequest {
        dir,
        arms: job::arms(&args.arms),
        days: args.days,
        max_steps: args.max_steps,
        allow_commands: args.allow_commands.then_some(true),
        train_every: args.train_every,
    };
    core.call::<StartBench>((), req)?;
    let mut news = News::default();
    let done = job::follow(&core, "benchmark run", args.json, |s| news.lines(s))?;
    job::print_report(
        done.bench,
        "the benchmark run ended without a table",
        args.json,
        |report| {
            format!(
                "MetaClaw-Bench {} ({}): {} day(s), {} rounds ({} file_check, {} multi_choice)\n\n{}",
                report.name,
                report.dir,
                report.days,
                report.rounds,
                report.file_check_rounds,
                report.multi_choice_rounds,
                report.table
            )
        },
    )
}

/// What of a running benchmark is already shown: skipped files and warnings once, then a
/// line per arm as each one ends.
#[derive(Default)]
struct News {
    shown_notes: bool,
    shown_arms: usize,
}

impl News {
    fn lines(&mut self, s: &JobStatus) -> Vec<String> {
        let Some(b) = &s.bench else {
            return Vec::new();
        };
        if !self.shown_notes {
            for p in &b.problems {
                warn(&format!("{p}; skipped"));
            }
            for w in &b.warnings {
                warn(w);
            }
            self.shown_notes = true;
        }
        let lines = b
            .arms
            .iter()
            .skip(self.shown_arms)
            .map(|arm| match &arm.not_run {
                Some(why) => format!("{}: not run: {why}", arm.arm),
                None => format!("{}: accuracy {}", arm.arm, arm.accuracy),
            })
            .collect();
        self.shown_arms = b.arms.len();
        lines
    }
}
