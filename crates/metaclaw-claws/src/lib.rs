//! Wire other agents ("claws") to the MetaClaw proxy.
//!
//! Each claw is a [`Recipe`]: data (TOML files under `recipes/`, embedded at
//! build time) naming the config file(s), their format, and the keys to set
//! from [`WireParams`]. The engine:
//!
//! - [`apply`] edits the files in place (TOML keeps comments via
//!   `toml_edit`; JSON keeps key order; `.env` is edited line by line; YAML
//!   is re-serialised and loses comments), keeps the original bytes once
//!   under `<state_dir>/<claw>/`, and is idempotent;
//! - [`restore`] puts the original bytes back when the file still holds what
//!   MetaClaw wrote, or differs only in layout or the claw's own bookkeeping;
//!   otherwise it takes MetaClaw's keys out and keeps the other changes
//!   (`merge`), and lists the keys to revert when even that cannot be done;
//! - [`restart`] runs the claw's restart command (30 s timeout unless the recipe
//!   bounds it, skipped when what it restarts is not running), reporting
//!   failures instead of failing;
//! - [`installed`] tells whether a claw is on this machine from its files.
//!
//! Paths are resolved from an injected [`PathEnv`] (home + variables); the
//! engine never reads the process environment.

mod detect;
mod doc;
mod engine;
mod error;
mod fsutil;
mod keypath;
mod merge;
mod params;
mod process;
mod recipe;
mod report;
mod restart;
mod state;

use std::sync::OnceLock;

pub use detect::installed;
pub use engine::{apply, config_paths, forget, restore};
pub use error::ClawError;
pub use params::{PathEnv, TEMPLATE_VARIABLES, WireParams};
pub use recipe::{Format, Protocol, Recipe, RestartSpec};
pub use report::{
    FileRestored, FileWired, KeyHint, OriginalValue, RestartOutcome, RestartReport, RestoreOutcome,
    RestoreReport, WireReport, WriteAction,
};
pub use restart::{RESTART_TIMEOUT, restart, restart_with_timeout};

/// The embedded recipe sources, by claw name.
pub const RECIPE_SOURCES: [(&str, &str); 9] = [
    ("copaw", include_str!("../recipes/copaw.toml")),
    ("ironclaw", include_str!("../recipes/ironclaw.toml")),
    ("zeroclaw", include_str!("../recipes/zeroclaw.toml")),
    ("picoclaw", include_str!("../recipes/picoclaw.toml")),
    ("nanoclaw", include_str!("../recipes/nanoclaw.toml")),
    ("hermes", include_str!("../recipes/hermes.toml")),
    ("claude-code", include_str!("../recipes/claude-code.toml")),
    ("codex", include_str!("../recipes/codex.toml")),
    ("qwen-code", include_str!("../recipes/qwen-code.toml")),
];

fn all() -> &'static [Recipe] {
    static RECIPES: OnceLock<Vec<Recipe>> = OnceLock::new();
    RECIPES.get_or_init(|| {
        RECIPE_SOURCES
            .iter()
            .map(|(name, text)| {
                let r = Recipe::from_toml_str(text)
                    .unwrap_or_else(|e| panic!("embedded recipe {name} is invalid: {e}"));
                assert_eq!(r.name(), *name, "embedded recipe name mismatch");
                r
            })
            .collect()
    })
}

/// Every built-in recipe (OpenClaw is wired through its own CLI elsewhere).
pub fn recipes() -> Vec<Recipe> {
    all().to_vec()
}

/// The built-in recipe for `name` (`copaw`, `ironclaw`, `zeroclaw`, `picoclaw`,
/// `nanoclaw`, `hermes`, `claude-code`, `codex`, `qwen-code`).
pub fn recipe(name: &str) -> Option<Recipe> {
    all().iter().find(|r| r.name() == name).cloned()
}
