//! What the proxy offers, and the `{placeholders}` recipes use to say so.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// Where MetaClaw's proxy listens and what it serves; the values recipe
/// templates are filled from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireParams {
    /// OpenAI-compatible base URL, ending in `/v1` (`{base_url}`).
    pub base_url: String,
    /// Anthropic Messages base URL, without `/v1`; clients append
    /// `/v1/messages` (`{anthropic_base_url}`).
    pub anthropic_base_url: String,
    /// `{api_key}`
    pub api_key: String,
    /// `{model}`
    pub model: String,
    /// `{context_window}` (inserted as a number when it is a whole value).
    pub context_window: u64,
    /// `{max_tokens}` (inserted as a number when it is a whole value).
    pub max_tokens: u64,
    /// Subscription pass-through: the agent keeps its own upstream sign-in, so recipes set
    /// no credential of MetaClaw's in its place (edits marked `passthrough`).
    pub passthrough: bool,
}

/// The template variable names recipes may use.
pub const TEMPLATE_VARIABLES: [&str; 6] = [
    "base_url",
    "anthropic_base_url",
    "api_key",
    "model",
    "context_window",
    "max_tokens",
];

enum Var<'a> {
    Text(&'a str),
    Number(u64),
}

impl WireParams {
    fn var(&self, name: &str) -> Option<Var<'_>> {
        Some(match name {
            "base_url" => Var::Text(&self.base_url),
            "anthropic_base_url" => Var::Text(&self.anthropic_base_url),
            "api_key" => Var::Text(&self.api_key),
            "model" => Var::Text(&self.model),
            "context_window" => Var::Number(self.context_window),
            "max_tokens" => Var::Number(self.max_tokens),
            _ => return None,
        })
    }

    /// Fill every `{name}` in the strings of `template`. A string that is
    /// exactly one numeric placeholder becomes a JSON number.
    pub(crate) fn expand(&self, template: &Value) -> Value {
        match template {
            Value::String(s) => self.expand_str(s),
            Value::Array(items) => Value::Array(items.iter().map(|v| self.expand(v)).collect()),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), self.expand(v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    fn expand_str(&self, s: &str) -> Value {
        if let Some(name) = whole_placeholder(s)
            && let Some(Var::Number(n)) = self.var(name)
        {
            return Value::from(n);
        }
        let mut out = String::with_capacity(s.len());
        let mut rest = s;
        while let Some(start) = rest.find('{') {
            out.push_str(&rest[..start]);
            let after = &rest[start + 1..];
            match after.find('}') {
                Some(end) if is_var_name(&after[..end]) => {
                    match self.var(&after[..end]) {
                        Some(Var::Text(t)) => out.push_str(t),
                        Some(Var::Number(n)) => out.push_str(&n.to_string()),
                        None => out.push_str(&rest[start..start + end + 2]),
                    }
                    rest = &after[end + 1..];
                }
                _ => {
                    out.push('{');
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        Value::String(out)
    }
}

fn whole_placeholder(s: &str) -> Option<&str> {
    let inner = s.strip_prefix('{')?.strip_suffix('}')?;
    is_var_name(inner).then_some(inner)
}

fn is_var_name(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
}

/// Placeholder names used in `template` that are not template variables.
pub(crate) fn unknown_placeholders(template: &Value) -> Vec<String> {
    let mut found = Vec::new();
    collect_placeholders(template, &mut found);
    found.retain(|name| !TEMPLATE_VARIABLES.contains(&name.as_str()));
    found
}

fn collect_placeholders(template: &Value, found: &mut Vec<String>) {
    match template {
        Value::String(s) => {
            let mut rest = s.as_str();
            while let Some(start) = rest.find('{') {
                let after = &rest[start + 1..];
                match after.find('}') {
                    Some(end) if is_var_name(&after[..end]) => {
                        found.push(after[..end].to_string());
                        rest = &after[end + 1..];
                    }
                    _ => rest = after,
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_placeholders(v, found)),
        Value::Object(map) => map.values().for_each(|v| collect_placeholders(v, found)),
        _ => {}
    }
}

/// The home directory and environment variables used to find config files.
/// Passed in (never read from the process inside the engine) so tests and
/// callers decide what `~` and `$HERMES_HOME` mean.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathEnv {
    pub home: PathBuf,
    pub vars: BTreeMap<String, String>,
}

impl PathEnv {
    pub fn new(home: impl Into<PathBuf>) -> PathEnv {
        PathEnv {
            home: home.into(),
            vars: BTreeMap::new(),
        }
    }

    pub fn with_var(mut self, name: &str, value: impl Into<String>) -> PathEnv {
        self.vars.insert(name.to_string(), value.into());
        self
    }

    /// `$HOME` and the whole process environment; `None` without a home.
    pub fn from_process() -> Option<PathEnv> {
        let vars: BTreeMap<String, String> = std::env::vars().collect();
        let home = vars
            .get("HOME")
            .or_else(|| vars.get("USERPROFILE"))
            .filter(|h| !h.is_empty())?;
        Some(PathEnv {
            home: PathBuf::from(home),
            vars,
        })
    }

    /// A non-empty variable.
    pub(crate) fn var(&self, name: &str) -> Option<&str> {
        self.vars
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.trim().is_empty())
    }

    /// Expand `~/` and `${VAR}`; `None` when a variable is unset or empty.
    pub(crate) fn expand(&self, pattern: &str) -> Option<PathBuf> {
        let mut text = String::new();
        let mut rest = pattern;
        if pattern == "~" {
            return Some(self.home.clone());
        }
        if let Some(stripped) = pattern.strip_prefix("~/") {
            text.push_str(&self.home.to_string_lossy());
            text.push('/');
            rest = stripped;
        }
        while let Some(start) = rest.find("${") {
            text.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let end = after.find('}')?;
            let value = self.var(&after[..end])?;
            let value = match value.strip_prefix("~/") {
                Some(v) => format!("{}/{v}", self.home.to_string_lossy()),
                None => value.to_string(),
            };
            text.push_str(&value);
            rest = &after[end + 1..];
        }
        text.push_str(rest);
        Some(PathBuf::from(text))
    }

    /// `path` with the home directory shown as `~`.
    pub(crate) fn display(&self, path: &Path) -> String {
        match path.strip_prefix(&self.home) {
            Ok(rel) if !self.home.as_os_str().is_empty() => {
                format!("~/{}", rel.to_string_lossy())
            }
            _ => path.to_string_lossy().into_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params() -> WireParams {
        WireParams {
            base_url: "http://127.0.0.1:30000/v1".into(),
            anthropic_base_url: "http://127.0.0.1:30000".into(),
            api_key: "mc-key".into(),
            model: "qwen3".into(),
            context_window: 32768,
            max_tokens: 8192,
            passthrough: false,
        }
    }

    #[test]
    fn expands_text_and_numbers() {
        let p = params();
        let out = p.expand(&json!({
            "a": "custom:{base_url}",
            "n": "{context_window}",
            "mixed": "{max_tokens} tokens",
            "list": ["{api_key}", 3, true],
            "braces": "{not a var} {unknown_var}",
        }));
        assert_eq!(
            out,
            json!({
                "a": "custom:http://127.0.0.1:30000/v1",
                "n": 32768,
                "mixed": "8192 tokens",
                "list": ["mc-key", 3, true],
                "braces": "{not a var} {unknown_var}",
            })
        );
        assert_eq!(
            unknown_placeholders(&json!(["{model}", "{modle}"])),
            vec!["modle".to_string()]
        );
    }

    #[test]
    fn expands_paths() {
        let env = PathEnv::new("/home/u")
            .with_var("HERMES_HOME", "/srv/hermes")
            .with_var("EMPTY", " ")
            .with_var("TILDE", "~/x");
        assert_eq!(
            env.expand("~/.hermes/config.yaml").unwrap(),
            PathBuf::from("/home/u/.hermes/config.yaml")
        );
        assert_eq!(
            env.expand("${HERMES_HOME}/config.yaml").unwrap(),
            PathBuf::from("/srv/hermes/config.yaml")
        );
        assert_eq!(
            env.expand("${TILDE}.secret").unwrap(),
            PathBuf::from("/home/u/x.secret")
        );
        assert!(env.expand("${EMPTY}/config.yaml").is_none());
        assert!(env.expand("${UNSET}/config.yaml").is_none());
        assert_eq!(env.display(Path::new("/home/u/.a/b")), "~/.a/b");
        assert_eq!(env.display(Path::new("/srv/b")), "/srv/b");
    }
}
