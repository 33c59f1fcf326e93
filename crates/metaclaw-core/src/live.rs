//! The configuration as the running app sees it: changed at runtime by the dashboard or the
//! tray (mode, toggles, endpoints), saved to config.yaml, and announced on the event bus.

use std::path::PathBuf;
use std::sync::Arc;

use arc_swap::ArcSwap;
use metaclaw_config::{Config, ConfigError};
use metaclaw_domain::Event;
use serde_json::Value;
use tokio::sync::broadcast;

pub struct LiveConfig {
    current: ArcSwap<Config>,
    path: PathBuf,
    events: broadcast::Sender<Event>,
}

impl LiveConfig {
    pub fn new(config: Config, path: PathBuf, events: broadcast::Sender<Event>) -> Arc<LiveConfig> {
        Arc::new(LiveConfig {
            current: ArcSwap::from_pointee(config),
            path,
            events,
        })
    }

    pub fn get(&self) -> Arc<Config> {
        self.current.load_full()
    }

    /// Set dotted keys in config.yaml and in the running configuration (which may carry
    /// session-only overrides such as `start --port`), validating both. Nothing changes when
    /// any value is invalid.
    pub fn update(&self, changes: &[(&str, Value)]) -> Result<Arc<Config>, ConfigError> {
        let mut file = metaclaw_config::load(&self.path)?.document;
        let mut running = self.get().to_document();
        for (key, value) in changes {
            file.set(key, value.clone())?;
            running.set(key, value.clone())?;
        }
        metaclaw_config::validate(&file)?;
        let (config, _warnings) = metaclaw_config::validate(&running)?;
        metaclaw_config::save(&self.path, &file)?;
        let config = Arc::new(config);
        self.current.store(config.clone());
        let _ = self.events.send(Event::ConfigChanged);
        Ok(config)
    }
}
