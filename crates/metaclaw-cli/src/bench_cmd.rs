//! `metaclaw bench`: MetaClaw-Bench on a checkout of the public benchmark, run by the
//! running core through its proxy (days serially, in the paper's arms); this command starts
//! it, shows progress and prints the table.

use std::time::Duration;

use anyhow::Result;
use metaclaw_config::Home;
use metaclaw_core::api::NoInput;
use metaclaw_core::api::ops::tasks::{GetJob, StartBench};
use metaclaw_core::rollout::JobStatus;
use metaclaw_core::rollout::bench::BenchRequest;

use crate::cli::BenchArgs;
use crate::connection::Core;
use crate::output::{progress_bar, say, say_above, warn};

pub fn run(home: &Home, args: BenchArgs) -> Result<()> {
    // The daemon reads the folder with its own working folder: hand it an absolute path.
    let dir = std::path::absolute(&args.dir)?.display().to_string();
    let core = Core::running(home, "metaclaw start", Duration::from_secs(600))?;
    let req = BenchRequest {
        dir,
        arms: args
            .arms
            .split(',')
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .map(str::to_owned)
            .collect(),
        days: args.days,
        max_steps: args.max_steps,
        allow_commands: args.allow_commands.then_some(true),
        train_every: args.train_every,
    };
    core.call::<StartBench>((), req)?;
    let done = follow(&core, args.json)?;
    if let Some(e) = &done.error {
        anyhow::bail!("the benchmark run failed: {e}");
    }
    let Some(report) = done.bench else {
        anyhow::bail!("the benchmark run ended without a table");
    };
    if args.json {
        say(&serde_json::to_string_pretty(&report)?);
    } else {
        say(&format!(
            "MetaClaw-Bench {} ({}): {} day(s), {} rounds ({} file_check, {} multi_choice)\n",
            report.name,
            report.dir,
            report.days,
            report.rounds,
            report.file_check_rounds,
            report.multi_choice_rounds
        ));
        say(&report.table);
    }
    Ok(())
}

/// Follows the run until it ends: skipped files and warnings once, then a line per arm.
fn follow(core: &Core, quiet: bool) -> Result<JobStatus> {
    let bar = progress_bar();
    if quiet {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let mut shown_notes = false;
    let mut shown_arms = 0;
    loop {
        let s = core.call::<GetJob>((), NoInput {})?;
        if let Some(b) = &s.bench {
            if !shown_notes {
                for p in &b.problems {
                    warn(&format!("{p}; skipped"));
                }
                for w in &b.warnings {
                    warn(w);
                }
                shown_notes = true;
            }
            for arm in &b.arms[shown_arms..] {
                if !quiet {
                    let line = match &arm.not_run {
                        Some(why) => format!("{}: not run: {why}", arm.arm),
                        None => format!("{}: accuracy {}", arm.arm, arm.accuracy),
                    };
                    say_above(&bar, &line);
                }
            }
            shown_arms = b.arms.len();
        }
        bar.set_length(s.episodes_total);
        bar.set_position(s.episodes_done);
        bar.set_message(s.phase.clone());
        if !s.running {
            bar.finish_and_clear();
            return Ok(s);
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}
