//! The configuration as the running app sees it: changed at runtime through the settings path
//! (`crate::settings`), saved to config.yaml, and announced on the event bus.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use metaclaw_config::{Config, ConfigError, ConfigWarning, Document};
use metaclaw_domain::Event;
use serde_json::Value;
use tokio::sync::broadcast;

pub struct LiveConfig {
    current: ArcSwap<Config>,
    path: PathBuf,
    events: broadcast::Sender<Event>,
    /// One change at a time: each reads the file, changes it and writes it back.
    writing: Mutex<()>,
}

impl LiveConfig {
    pub fn new(config: Config, path: PathBuf, events: broadcast::Sender<Event>) -> Arc<LiveConfig> {
        Arc::new(LiveConfig {
            current: ArcSwap::from_pointee(config),
            path,
            events,
            writing: Mutex::new(()),
        })
    }

    pub fn get(&self) -> Arc<Config> {
        self.current.load_full()
    }

    /// config.yaml and the running configuration (which may carry session-only overrides
    /// such as `start --port`) with `changes` applied, both validated, and the file's
    /// warnings (unknown keys). The file is read without validating it first, so a broken
    /// file can be repaired key by key.
    fn changed(
        &self,
        changes: &[(&str, Value)],
    ) -> Result<(Document, Config, Vec<ConfigWarning>), ConfigError> {
        let mut file = metaclaw_config::load_document(&self.path)?;
        let mut running = self.get().to_document();
        for (key, value) in changes {
            file.set(key, value.clone())?;
            running.set(key, value.clone())?;
        }
        let (_, warnings) = metaclaw_config::validate(&file)?;
        let (config, _) = metaclaw_config::validate(&running)?;
        Ok((file, config, warnings))
    }

    /// What the running configuration would be after `changes`, without changing anything.
    pub fn preview(&self, changes: &[(&str, Value)]) -> Result<Config, ConfigError> {
        Ok(self.changed(changes)?.1)
    }

    /// Set dotted keys in config.yaml and in the running configuration. Nothing changes when
    /// any value is invalid. Returns the new configuration and the file's warnings.
    pub fn update(
        &self,
        changes: &[(&str, Value)],
    ) -> Result<(Arc<Config>, Vec<ConfigWarning>), ConfigError> {
        let _one_at_a_time = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        let (file, config, warnings) = self.changed(changes)?;
        metaclaw_config::save(&self.path, &file)?;
        let config = Arc::new(config);
        self.current.store(config.clone());
        let _ = self.events.send(Event::ConfigChanged);
        Ok((config, warnings))
    }
}
