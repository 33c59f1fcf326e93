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
    // The hub's own variables, as its tools read them (`rl.tokenizer_hub_url` wins).
    let env = |name| std::env::var(name).ok().filter(|v: &String| !v.is_empty());
    let hub = HubConfig {
        token: env("HF_TOKEN"),
        base_url: env("HF_ENDPOINT").unwrap_or_else(|| HubConfig::default().base_url),
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
