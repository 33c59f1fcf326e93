//! `metaclaw config show | KEY | KEY VALUE`, with upstream MetaClaw's semantics.

use anyhow::{Result, bail};
use metaclaw_config::Home;
use serde_json::Value;

use crate::daemon::is_running;
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
            let loaded = metaclaw_config::set_and_save(&path, key, &raw)?;
            for w in &loaded.warnings {
                warn(&w.to_string());
            }
            let shown = if is_secret(key) {
                "(hidden)".to_owned()
            } else {
                render(loaded.document.get(key).unwrap_or(&Value::Null))
            };
            say(&format!("{key} = {shown}"));
            if is_running(home) {
                say(
                    "MetaClaw is running: restart it (`metaclaw stop && metaclaw start`) to apply the change.",
                );
            }
            Ok(())
        }
    }
}
