//! `metaclaw config show | KEY | KEY VALUE`, with upstream MetaClaw's semantics.

use anyhow::{Result, bail};
use metaclaw_config::Home;
use serde_json::Value;

use std::time::Duration;

use metaclaw_core::api::ops::config::{ConfigPatch, PatchConfig};
use metaclaw_core::live::LiveConfig;

use crate::connection::Core;
use crate::output::{say, warn};

fn is_secret(key: &str) -> bool {
    let last = key.rsplit('.').next().unwrap_or(key);
    ["api_key", "token", "secret", "password"]
        .iter()
        .any(|s| last.contains(s))
}

fn render(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => serde_saphyr::to_string(other)
            .map_or_else(|_| other.to_string(), |s| s.trim_end().to_owned()),
    }
}

pub fn run(home: &Home, key: String, value: Option<String>) -> Result<()> {
    let path = home.config_path();
    match (key.as_str(), value) {
        ("show", None) => {
            let loaded = metaclaw_config::load(&path)?;
            for w in &loaded.warnings {
                warn(&w.to_string());
            }
            // The effective configuration: defaults merged with the file, secrets masked.
            let effective = loaded.config.to_document();
            say(&format!("# {}", path.display()));
            say(serde_saphyr::to_string(&metaclaw_config::masked(&effective))?.trim_end());
            Ok(())
        }
        (key, None) => {
            let loaded = metaclaw_config::load(&path)?;
            let effective = serde_json::to_value(&loaded.config)?;
            let pointer = format!("/{}", key.replace('.', "/"));
            let found = effective
                .pointer(&pointer)
                .cloned()
                .or_else(|| loaded.document.get(key).cloned());
            match found {
                Some(v) => {
                    say(&render(&v));
                    Ok(())
                }
                None => bail!("`{key}` is not set and is not a known configuration key"),
            }
        }
        (key, Some(raw)) => {
            let value = metaclaw_config::coerce(&raw);
            let change = set(home, key, value)?;
            for w in &change.config_warnings {
                warn(w);
            }
            let shown = if is_secret(key) {
                "(hidden)".to_owned()
            } else {
                let effective = serde_json::to_value(&change.config)?;
                let pointer = format!("/{}", key.replace('.', "/"));
                render(
                    effective
                        .pointer(&pointer)
                        .unwrap_or(&metaclaw_config::coerce(&raw)),
                )
            };
            say(&format!("{key} = {shown}"));
            for w in &change.warnings {
                warn(w);
            }
            if change.restart_required && change.running {
                say(&format!(
                    "MetaClaw is running: restart it (`metaclaw stop && metaclaw start`) to apply {}.",
                    change.restart_keys.join(", ")
                ));
            }
            Ok(())
        }
    }
}

/// What a change did, from the running core or from this process.
struct Changed {
    config: metaclaw_config::Config,
    warnings: Vec<String>,
    config_warnings: Vec<String>,
    restart_required: bool,
    restart_keys: Vec<String>,
    running: bool,
}

/// One change through the settings path: the running core's (over its API), or this
/// process's with the home directory locked when nothing runs. A config.yaml that does not
/// load is repaired this way too: the file is changed key by key and validated as a whole.
fn set(home: &Home, key: &str, value: Value) -> Result<Changed> {
    let patch = ConfigPatch {
        set: Some([(key.to_owned(), value)].into_iter().collect()),
        ..ConfigPatch::default()
    };
    if metaclaw_core::instance::is_running(home) {
        let core = Core::running(home, "metaclaw start", Duration::from_secs(30))?;
        let c = core.call::<PatchConfig>((), patch)?;
        return Ok(Changed {
            config: c.config,
            warnings: c.warnings,
            config_warnings: c.config_warnings,
            restart_required: c.restart_required,
            restart_keys: c.restart_keys,
            running: true,
        });
    }
    home.ensure()?;
    let _lock = metaclaw_core::instance::InstanceLock::acquire(home)?;
    let current = metaclaw_config::load(&home.config_path())
        .map(|l| l.config)
        .unwrap_or_default();
    let (events, _) = tokio::sync::broadcast::channel(1);
    let live = LiveConfig::new(current, home.config_path(), events);
    let applied = metaclaw_core::settings::apply(&live, patch.changes())?;
    Ok(Changed {
        config: (*applied.config).clone(),
        warnings: applied.warnings,
        config_warnings: applied.config_warnings,
        restart_required: !applied.restart_keys.is_empty(),
        restart_keys: applied.restart_keys,
        running: false,
    })
}
