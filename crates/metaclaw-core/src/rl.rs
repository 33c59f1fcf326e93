//! RL mode in the daemon: builds the one [`RlService`] that serves chat from the policy,
//! records samples and trains (it stays idle in skills_only).

use std::sync::Arc;
use std::time::Duration;

use metaclaw_config::Home;
use metaclaw_domain::Event;
use metaclaw_render::HubConfig;
use metaclaw_rl::{RlParts, RlService};
use metaclaw_scheduler::Scheduler;
use metaclaw_store::Store;
use tokio::sync::broadcast;

use crate::live::LiveConfig;

pub(crate) fn service(
    home: &Home,
    store: Arc<Store>,
    events: broadcast::Sender<Event>,
    scheduler: Arc<Scheduler>,
    live: &Arc<LiveConfig>,
) -> Arc<RlService> {
    let live = live.clone();
    let hub = HubConfig {
        token: std::env::var("HF_TOKEN").ok().filter(|t| !t.is_empty()),
        ..HubConfig::default()
    };
    RlService::new(RlParts {
        store,
        events,
        scheduler,
        config: Arc::new(move || live.get()),
        tokenizer_cache: home.root().join("tokenizers"),
        hub,
        poll: Duration::from_secs(2),
    })
}
