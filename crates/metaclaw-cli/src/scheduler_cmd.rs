//! `metaclaw scheduler status | next-window`.

use anyhow::Result;
use chrono::{DateTime, Utc};
use metaclaw_config::Home;
use metaclaw_core::api::NoInput;
use metaclaw_core::api::ops::scheduler::GetScheduler;

use crate::cli::SchedulerCommand;
use crate::connection::Core;
use crate::output::say;

fn local(t: DateTime<Utc>) -> String {
    // The zone the scheduler computes its windows in, so both show the same wall-clock times.
    t.with_timezone(&metaclaw_domain::local_zone().tz)
        .format("%a %Y-%m-%d %H:%M")
        .to_string()
}

pub fn run(home: &Home, cmd: SchedulerCommand) -> Result<()> {
    // The running core's scheduler, or (when nothing runs) one built from config.yaml that
    // reads the state the daemon persisted and starts no background work.
    let view = Core::connect(home)?.call::<GetScheduler>((), NoInput {})?;
    match cmd {
        SchedulerCommand::Status { json } => {
            let status = view.status;
            if json {
                say(&serde_json::to_string_pretty(&status)?);
                return Ok(());
            }
            let gated = view.enabled;
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
            let idle = &status.sources.idle;
            let locked = if idle.screen_locked() {
                ", screen locked (away)"
            } else {
                ""
            };
            say(&format!(
                "idle       {}{locked}, {} s without input",
                idle.source, idle.idle_secs
            ));
            say(&format!(
                "sources    {}",
                serde_json::to_string(&status.sources)?
            ));
            Ok(())
        }
        SchedulerCommand::NextWindow { json } => {
            let next = view.next_window;
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
