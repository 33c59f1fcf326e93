//! `metaclaw scheduler status | next-window`.

use std::sync::Arc;

use anyhow::Result;
use chrono::{DateTime, Local, Utc};
use metaclaw_config::Home;
use metaclaw_domain::SystemClock;

use crate::cli::SchedulerCommand;
use crate::output::say;

fn local(t: DateTime<Utc>) -> String {
    t.with_timezone(&Local)
        .format("%a %Y-%m-%d %H:%M")
        .to_string()
}

pub fn run(home: &Home, cmd: SchedulerCommand) -> Result<()> {
    let config = metaclaw_config::load(&home.config_path())?.config;
    home.ensure()?;
    // Reads the state the daemon persisted; this process starts no background work.
    let scheduler = metaclaw_core::scheduling::build(&config, home, Arc::new(SystemClock));
    match cmd {
        SchedulerCommand::Status { json } => {
            let status = scheduler.status();
            if json {
                say(&serde_json::to_string_pretty(&status)?);
                return Ok(());
            }
            let gated = config.scheduler.enabled || config.mode == metaclaw_config::Mode::Auto;
            say(&format!(
                "state      {:?} since {}",
                status.state,
                local(status.since)
            ));
            say(&format!(
                "gating     {}",
                if gated {
                    "on (training only in windows)"
                } else {
                    "off (mode rl trains whenever a batch is ready)"
                }
            ));
            if let Some(w) = status.window {
                say(&format!(
                    "window     {:?} until {}",
                    w.source,
                    w.end.map_or("the user returns".into(), local)
                ));
            }
            say(&format!(
                "sources    {}",
                serde_json::to_string(&status.sources)?
            ));
            Ok(())
        }
        SchedulerCommand::NextWindow { json } => {
            let next = scheduler.next_window(Utc::now());
            if json {
                say(&serde_json::to_string_pretty(&next)?);
                return Ok(());
            }
            match next {
                Some(w) => say(&format!(
                    "next window: {:?} from {} to {}",
                    w.source,
                    local(w.start),
                    w.end.map_or("(open-ended)".into(), local)
                )),
                None => say(
                    "no window in the next days: enable sleep hours, idle detection or a calendar (metaclaw config scheduler.…)",
                ),
            }
            Ok(())
        }
    }
}
