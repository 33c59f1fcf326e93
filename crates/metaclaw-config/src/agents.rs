//! `agents:`: the agents that reach the proxy, each a first-class identity with its own proxy
//! key, skills folder (layered over the shared one) and learning switches.
//!
//! ```yaml
//! agents:
//!   claude-code:
//!     api_key: mc-…          # written when MetaClaw wires the agent
//!     skills_dir: ""         # empty: <home>/agents/claude-code/skills
//!     skills: true           # inject skills into its turns
//!     learning: true         # distil skills from its sessions, keep its RL samples
//!     train_shared_policy: true
//! ```

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::home::{Home, expand_tilde, user_home};

/// One agent's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct AgentConfig {
    /// Its own proxy key: requests carrying it are this agent's. Empty: the agent is known
    /// only by the `x-metaclaw-agent` header.
    pub api_key: String,
    /// Its own skills, layered over the shared folder (same name: this one wins). Empty: the
    /// folder under the MetaClaw home.
    pub skills_dir: String,
    /// Inject skills into its turns.
    pub skills: bool,
    /// Learn from its turns: distil skills from its sessions and keep its RL samples.
    pub learning: bool,
    /// Its RL samples may train the one shared policy.
    pub train_shared_policy: bool,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            api_key: String::new(),
            skills_dir: String::new(),
            skills: true,
            learning: true,
            train_shared_policy: true,
        }
    }
}

impl AgentConfig {
    /// Whether its turns may become RL samples of the shared policy.
    pub fn trains_policy(&self) -> bool {
        self.learning && self.train_shared_policy
    }

    /// The agent's own skills folder. Relative paths are taken relative to the home root.
    pub fn skills_dir(&self, name: &str, home: &Home) -> PathBuf {
        self.skills_dir_with(name, home, user_home().as_deref())
    }

    fn skills_dir_with(&self, name: &str, home: &Home, user_home: Option<&Path>) -> PathBuf {
        let dir = self.skills_dir.trim();
        if dir.is_empty() {
            return home.root().join("agents").join(name).join("skills");
        }
        let path = expand_tilde(dir, user_home);
        if path.is_relative() {
            home.root().join(path)
        } else {
            path
        }
    }
}

/// Whether `name` can name an agent: lowercase letters, digits and `-`/`_`, 1 to 32
/// characters, starting with a letter or digit (it becomes a folder name and a key segment).
pub fn valid_agent_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase() || c.is_ascii_digit())
        && name.len() <= 32
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

/// The settings of one agent's key, as `agents.<name>.<field>`.
pub const AGENT_FIELDS: &[&str] = &[
    "api_key",
    "skills_dir",
    "skills",
    "learning",
    "train_shared_policy",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for ok in ["claude-code", "codex", "qwen_code", "a1"] {
            assert!(valid_agent_name(ok), "{ok}");
        }
        for bad in ["", "-x", "Claude", "a b", "../x", &"a".repeat(33)] {
            assert!(!valid_agent_name(bad), "{bad}");
        }
    }

    #[test]
    fn folder_defaults_under_the_home() {
        let home = Home::at("/m");
        let a = AgentConfig::default();
        assert_eq!(
            a.skills_dir_with("codex", &home, None),
            PathBuf::from("/m/agents/codex/skills")
        );
        let rel = AgentConfig {
            skills_dir: "mine".into(),
            ..a.clone()
        };
        assert_eq!(
            rel.skills_dir_with("codex", &home, None),
            PathBuf::from("/m/mine")
        );
        let tilde = AgentConfig {
            skills_dir: "~/s".into(),
            ..a
        };
        assert_eq!(
            tilde.skills_dir_with("codex", &home, Some(Path::new("/u"))),
            PathBuf::from("/u/s")
        );
    }
}
