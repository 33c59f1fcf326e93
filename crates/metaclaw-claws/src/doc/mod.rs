//! A config file parsed in one of the supported formats, with get/set by
//! key path and rendering back to text.

mod dotenv;
mod toml;
pub(crate) mod tree;

use serde_json::Value;

use crate::keypath::KeyPath;
use crate::recipe::Format;

pub(crate) enum Doc {
    Json(tree::JsonDoc),
    Yaml(Value),
    Toml(toml_edit::DocumentMut),
    Dotenv(dotenv::DotenvDoc),
}

impl Doc {
    /// Parse `text`; an empty (or whitespace-only) file is an empty document.
    pub(crate) fn parse(format: Format, text: &str) -> Result<Doc, String> {
        match format {
            Format::Json => tree::JsonDoc::parse(text).map(Doc::Json),
            Format::Yaml => tree::parse_yaml(text).map(Doc::Yaml),
            Format::Toml => text
                .parse::<toml_edit::DocumentMut>()
                .map(Doc::Toml)
                .map_err(|e| e.to_string()),
            Format::Dotenv => Ok(Doc::Dotenv(dotenv::DotenvDoc::parse(text))),
        }
    }

    /// The value at `key`, as JSON (TOML tables become objects).
    pub(crate) fn get(&self, key: &KeyPath) -> Option<Value> {
        match self {
            Doc::Json(d) => tree::get(&d.root, key).cloned(),
            Doc::Yaml(root) => tree::get(root, key).cloned(),
            Doc::Toml(d) => toml::get(d, key),
            Doc::Dotenv(d) => d.get(key.as_str()).map(Value::String),
        }
    }

    pub(crate) fn set(&mut self, key: &KeyPath, value: &Value) -> Result<(), String> {
        match self {
            Doc::Json(d) => tree::set(&mut d.root, key, value),
            Doc::Yaml(root) => tree::set(root, key, value),
            Doc::Toml(d) => toml::set(d, key, value),
            Doc::Dotenv(d) => {
                d.set(key.as_str(), &dotenv::scalar_text(value)?);
                Ok(())
            }
        }
    }

    /// The whole document as JSON (TOML tables become objects); `None` for `.env` files,
    /// which are edited line by line and never merged.
    pub(crate) fn to_value(&self) -> Option<Value> {
        match self {
            Doc::Json(d) => Some(d.root.clone()),
            Doc::Yaml(root) => Some(root.clone()),
            Doc::Toml(d) => Some(toml::item_to_json(d.as_item())),
            Doc::Dotenv(_) => None,
        }
    }

    pub(crate) fn render(&self) -> Result<String, String> {
        match self {
            Doc::Json(d) => d.render(),
            Doc::Yaml(root) => serde_saphyr::to_string(root).map_err(|e| e.to_string()),
            Doc::Toml(d) => Ok(d.to_string()),
            Doc::Dotenv(d) => Ok(d.render()),
        }
    }
}
