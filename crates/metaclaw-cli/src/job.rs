//! What `metaclaw eval`, `metaclaw rollout` and `metaclaw bench` share once the core runs
//! their job: the `--arms` list, following the job with a progress bar, and printing its
//! report as JSON or text.

use std::time::Duration;

use anyhow::Result;
use metaclaw_core::api::NoInput;
use metaclaw_core::api::ops::tasks::GetJob;
use metaclaw_core::rollout::JobStatus;
use serde::Serialize;

use crate::connection::Core;
use crate::output::{progress_bar, say, say_above};

/// The arms named in a comma-separated `--arms` value; blanks are dropped.
pub fn arms(list: &str) -> Vec<String> {
    list.split(',')
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Follows the running job until it ends and returns its last status; a job that ended in
/// error is "the {what} failed: …". On each status `news` gives the new lines to show above
/// the bar (not shown when `quiet`, where stdout is kept for the JSON report).
pub fn follow(
    core: &Core,
    what: &str,
    quiet: bool,
    mut news: impl FnMut(&JobStatus) -> Vec<String>,
) -> Result<JobStatus> {
    let bar = progress_bar();
    if quiet {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    loop {
        let s = core.call::<GetJob>((), NoInput {})?;
        for line in news(&s) {
            if !quiet {
                say_above(&bar, &line);
            }
        }
        bar.set_length(s.episodes_total);
        bar.set_position(s.episodes_done);
        bar.set_message(s.phase.clone());
        if !s.running {
            bar.finish_and_clear();
            if let Some(e) = &s.error {
                anyhow::bail!("the {what} failed: {e}");
            }
            return Ok(s);
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// Prints a finished job's report: as JSON with `json`, else as `text` gives it. `missing`
/// is the error when the job ended without one.
pub fn print_report<R: Serialize>(
    report: Option<R>,
    missing: &str,
    json: bool,
    text: impl FnOnce(&R) -> String,
) -> Result<()> {
    let Some(report) = report else {
        anyhow::bail!("{missing}");
    };
    if json {
        say(&serde_json::to_string_pretty(&report)?);
    } else {
        say(&text(&report));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arms_are_trimmed_and_blanks_dropped() {
        assert_eq!(
            arms(" base, skills ,,skills-rl,"),
            ["base", "skills", "skills-rl"]
        );
        assert!(arms(" , ").is_empty());
    }
}
