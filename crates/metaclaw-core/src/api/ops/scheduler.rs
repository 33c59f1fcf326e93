//! The OMLS scheduler: its state, sources, next window and a 24 h timeline.

use metaclaw_scheduler::{Band, SchedulerStatus, Window};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::api::{Api, ApiError, Method, NoInput, Operation};

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SchedulerView {
    /// The scheduler gates training (scheduler.enabled, or mode auto).
    pub enabled: bool,
    pub status: SchedulerStatus,
    pub next_window: Option<Window>,
    /// Sleep, calendar and training bands from 24 h ago to 24 h ahead.
    pub timeline: Vec<Band>,
}

pub struct GetScheduler;

impl Operation for GetScheduler {
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/api/scheduler";
    const SUMMARY: &'static str = "Scheduler state, sources, next window and 24 h timeline";
    type Path = ();
    type Input = NoInput;
    type Output = SchedulerView;

    async fn run(api: &Api, _: (), _: NoInput) -> Result<SchedulerView, ApiError> {
        let sched = &api.parts().scheduler;
        let now = api.now();
        Ok(SchedulerView {
            enabled: sched.settings().enabled || sched.settings().mode_auto,
            status: sched.status(),
            next_window: sched.next_window(now),
            timeline: sched.timeline(now, std::time::Duration::from_secs(24 * 3600)),
        })
    }
}
