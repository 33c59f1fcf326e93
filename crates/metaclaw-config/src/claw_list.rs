//! `claw_type`: one agent, several (a YAML list or a comma-separated string), or `none`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::choices::ClawType;
use crate::error::ConfigError;

/// The agents MetaClaw wires on start, in the order given, without repeats. `none` stands
/// alone; a single agent keeps the old one-value spelling when written back.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClawTypes(Vec<ClawType>);

impl Default for ClawTypes {
    fn default() -> Self {
        ClawTypes(vec![ClawType::default()])
    }
}

impl From<ClawType> for ClawTypes {
    fn from(claw: ClawType) -> Self {
        ClawTypes(vec![claw])
    }
}

impl ClawTypes {
    /// No agent is wired.
    pub fn none() -> Self {
        ClawTypes(vec![ClawType::None])
    }

    /// Several agents; `none` entries are dropped, and an empty list is `none`.
    pub fn from_agents(agents: impl IntoIterator<Item = ClawType>) -> Self {
        let mut list: Vec<ClawType> = Vec::new();
        for a in agents {
            if a != ClawType::None && !list.contains(&a) {
                list.push(a);
            }
        }
        if list.is_empty() {
            ClawTypes::none()
        } else {
            ClawTypes(list)
        }
    }

    /// The agents to wire (`none` yields nothing).
    pub fn agents(&self) -> impl Iterator<Item = ClawType> + '_ {
        self.0.iter().copied().filter(|c| *c != ClawType::None)
    }

    pub fn is_none(&self) -> bool {
        self.agents().next().is_none()
    }

    pub fn contains(&self, claw: ClawType) -> bool {
        self.0.contains(&claw)
    }

    /// The single agent, when exactly one is configured (the old `claw_type` meaning).
    pub fn single(&self) -> Option<ClawType> {
        match self.0.as_slice() {
            [one] => Some(*one),
            _ => None,
        }
    }

    /// This list plus `claw` (onboarding's "connect" adds an agent to those already wired).
    pub fn with(&self, claw: ClawType) -> Self {
        ClawTypes::from_agents(self.agents().chain(std::iter::once(claw)))
    }
}

impl fmt::Display for ClawTypes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.0.iter().map(|c| c.as_str()).collect();
        f.write_str(&names.join(", "))
    }
}

impl FromStr for ClawTypes {
    type Err = ConfigError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_items(s.split(','))
    }
}

fn parse_items<'a>(items: impl IntoIterator<Item = &'a str>) -> Result<ClawTypes, ConfigError> {
    let mut parsed = Vec::new();
    for item in items.into_iter().map(str::trim).filter(|i| !i.is_empty()) {
        parsed.push(item.parse::<ClawType>()?);
    }
    if parsed.contains(&ClawType::None) && parsed.iter().any(|c| *c != ClawType::None) {
        return Err(ConfigError::InvalidValue {
            key: ClawType::KEY.to_owned(),
            value: serde_json::Value::from(parsed.iter().map(|c| c.as_str()).collect::<Vec<_>>())
                .to_string(),
            allowed: format!(
                "allowed: {}; `none` cannot be listed with an agent",
                ClawType::NAMES.join(", ")
            ),
        });
    }
    Ok(ClawTypes::from_agents(parsed))
}

impl Serialize for ClawTypes {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ClawTypes {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            One(String),
            Many(Vec<String>),
        }
        let parsed = match Raw::deserialize(deserializer)? {
            Raw::One(s) => s.parse(),
            Raw::Many(items) => parse_items(items.iter().map(String::as_str)),
        };
        parsed.map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_many_and_none() {
        let one: ClawTypes = serde_json::from_value(serde_json::json!("hermes")).unwrap();
        assert_eq!(one.single(), Some(ClawType::Hermes));
        assert_eq!(serde_json::to_value(&one).unwrap(), "hermes");
        let many: ClawTypes =
            serde_json::from_value(serde_json::json!("claude-code, codex,codex")).unwrap();
        assert_eq!(
            many.agents().collect::<Vec<_>>(),
            [ClawType::ClaudeCode, ClawType::Codex]
        );
        assert_eq!(serde_json::to_value(&many).unwrap(), "claude-code, codex");
        let list: ClawTypes =
            serde_json::from_value(serde_json::json!(["qwen-code", "hermes"])).unwrap();
        assert_eq!(list.to_string(), "qwen-code, hermes");
        assert!("none".parse::<ClawTypes>().unwrap().is_none());
        assert!("".parse::<ClawTypes>().unwrap().is_none());
        assert_eq!(ClawTypes::none().with(ClawType::Codex).to_string(), "codex");
    }

    #[test]
    fn bad_entries_name_the_allowed_values() {
        let e = "codex, clawdbot"
            .parse::<ClawTypes>()
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("\"clawdbot\"") && e.contains("allowed: openclaw"),
            "{e}"
        );
        let e = "none,codex".parse::<ClawTypes>().unwrap_err().to_string();
        assert!(e.contains("cannot be listed"), "{e}");
    }
}
