//! Recipes: per-claw data saying which file to edit and how.

use std::path::PathBuf;

use serde::Deserialize;
use serde_json::Value;

use crate::error::ClawError;
use crate::keypath::KeyPath;
use crate::params::{PathEnv, unknown_placeholders};

/// File formats the engine can edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Json,
    Toml,
    Yaml,
    Dotenv,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Json => "JSON",
            Format::Toml => "TOML",
            Format::Yaml => "YAML",
            Format::Dotenv => "dotenv",
        }
    }

    /// Whether rewriting the file keeps comments and layout.
    pub fn preserves_comments(self) -> bool {
        !matches!(self, Format::Yaml)
    }
}

/// Which API the claw speaks to the proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    Openai,
    Anthropic,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRecipe {
    name: String,
    display_name: String,
    protocol: Protocol,
    /// Programs whose presence on `PATH` shows the claw is installed before it has written
    /// any file (installed, never run).
    #[serde(default)]
    commands: Vec<String>,
    #[serde(default)]
    verified: bool,
    #[serde(default)]
    sources: Vec<String>,
    #[serde(default)]
    notes: Vec<String>,
    #[serde(default)]
    restart: RawRestart,
    files: Vec<RawFile>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRestart {
    #[serde(default)]
    argv: Vec<String>,
    /// Run `argv` only while a process whose command line contains one of these is running
    /// (a restart command may hang when there is nothing to restart).
    #[serde(default)]
    only_if_running: Vec<String>,
    /// Seconds `argv` may take before it is stopped (default: `RESTART_TIMEOUT`).
    #[serde(default)]
    timeout_secs: Option<u64>,
    #[serde(default)]
    hot_reload: bool,
    #[serde(default)]
    hint: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    id: String,
    format: Format,
    #[serde(default)]
    owned: bool,
    #[serde(default)]
    agent_keys: Vec<String>,
    #[serde(default)]
    agent_copies: Vec<String>,
    paths: Vec<RawCandidate>,
    #[serde(default)]
    edits: Vec<RawEdit>,
    #[serde(default)]
    variants: Vec<RawVariant>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCandidate {
    path: String,
    #[serde(default)]
    if_exists: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVariant {
    name: String,
    #[serde(default)]
    when: Option<RawWhen>,
    edits: Vec<RawEdit>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWhen {
    key: String,
    #[serde(default)]
    at_least: Option<i64>,
    #[serde(default)]
    exists: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEdit {
    set: String,
    value: Value,
    #[serde(default)]
    if_absent: bool,
    /// Only when the proxy is (true) or is not (false) in subscription pass-through, where
    /// the agent keeps its own sign-in and sends MetaClaw's key in a separate header.
    #[serde(default)]
    passthrough: Option<bool>,
}

/// One claw's wiring, as data.
#[derive(Debug, Clone, PartialEq)]
pub struct Recipe {
    pub(crate) name: String,
    pub(crate) display_name: String,
    pub(crate) protocol: Protocol,
    pub(crate) commands: Vec<String>,
    pub(crate) verified: bool,
    pub(crate) sources: Vec<String>,
    pub(crate) notes: Vec<String>,
    pub(crate) restart: RestartSpec,
    pub(crate) files: Vec<FileSpec>,
}

/// How to make the claw pick up a changed config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestartSpec {
    /// Command to run (argv); empty when there is none.
    pub argv: Vec<String>,
    /// The claw reloads its config file by itself.
    pub hot_reload: bool,
    /// What to tell the user when there is no command or it fails.
    pub hint: Option<String>,
    /// Command-line fragments of the process `argv` restarts; empty: always run it.
    pub only_if_running: Vec<String>,
    /// How long `argv` may run.
    pub timeout: std::time::Duration,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FileSpec {
    pub(crate) id: String,
    pub(crate) format: Format,
    /// MetaClaw's own file (e.g. a provider entry file): when it did not
    /// exist before, unwiring deletes it even if the claw rewrote it.
    pub(crate) owned: bool,
    /// Keys the claw writes into the file for its own bookkeeping (e.g. a format version):
    /// when they are all it added after wiring, unwiring still puts the original bytes back.
    pub(crate) agent_keys: Vec<KeyPath>,
    /// Suffixes of copies the claw makes of the file (e.g. `.orig` before a migration);
    /// unwiring deletes a copy that holds exactly what MetaClaw wrote (it has the proxy key).
    pub(crate) agent_copies: Vec<String>,
    pub(crate) paths: Vec<Candidate>,
    pub(crate) variants: Vec<Variant>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Candidate {
    pub(crate) path: String,
    pub(crate) if_exists: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Variant {
    pub(crate) name: String,
    pub(crate) when: Option<When>,
    pub(crate) edits: Vec<Edit>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct When {
    pub(crate) key: KeyPath,
    pub(crate) at_least: Option<i64>,
    pub(crate) exists: Option<bool>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Edit {
    pub(crate) key: KeyPath,
    pub(crate) value: Value,
    /// Only set the key when the file does not have it yet.
    pub(crate) if_absent: bool,
    /// Only in (true) or out of (false) subscription pass-through.
    pub(crate) passthrough: Option<bool>,
}

impl Edit {
    pub(crate) fn applies(&self, passthrough: bool) -> bool {
        self.passthrough.is_none_or(|p| p == passthrough)
    }
}

impl Recipe {
    /// Parse and check a recipe written in TOML.
    pub fn from_toml_str(text: &str) -> Result<Recipe, ClawError> {
        let raw: RawRecipe = toml_edit::de::from_str(text)
            .map_err(|e| ClawError::recipe("<unnamed>", e.to_string()))?;
        Recipe::from_raw(raw)
    }

    fn from_raw(raw: RawRecipe) -> Result<Recipe, ClawError> {
        let name = raw.name.clone();
        let err = |m: String| ClawError::recipe(&name, m);
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(err(format!("name `{name}` must be a plain identifier")));
        }
        if raw.files.is_empty() {
            return Err(err("no files".into()));
        }
        let mut files = Vec::new();
        for f in raw.files {
            if f.id.is_empty()
                || !f
                    .id
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            {
                return Err(err(format!(
                    "file id `{}` must be a plain identifier",
                    f.id
                )));
            }
            if files.iter().any(|g: &FileSpec| g.id == f.id) {
                return Err(err(format!("duplicate file id `{}`", f.id)));
            }
            if f.paths.is_empty() {
                return Err(err(format!("file `{}` has no paths", f.id)));
            }
            let mut variants = Vec::new();
            if !f.edits.is_empty() {
                variants.push(RawVariant {
                    name: "default".into(),
                    when: None,
                    edits: f.edits,
                });
            }
            variants.extend(f.variants);
            if variants.is_empty() {
                return Err(err(format!("file `{}` has no edits", f.id)));
            }
            let mut parsed = Vec::new();
            for v in variants {
                let when = match v.when {
                    None => None,
                    Some(w) => Some(When {
                        key: KeyPath::parse(&w.key).map_err(&err)?,
                        at_least: w.at_least,
                        exists: w.exists,
                    }),
                };
                let mut edits = Vec::new();
                for e in v.edits {
                    let key = KeyPath::parse(&e.set).map_err(&err)?;
                    if f.format == Format::Dotenv && !key.is_single_key() {
                        return Err(err(format!("dotenv key `{key}` cannot be nested")));
                    }
                    let unknown = unknown_placeholders(&e.value);
                    if !unknown.is_empty() {
                        return Err(err(format!(
                            "`{key}` uses unknown template variables: {}",
                            unknown.join(", ")
                        )));
                    }
                    edits.push(Edit {
                        key,
                        value: e.value,
                        if_absent: e.if_absent,
                        passthrough: e.passthrough,
                    });
                }
                if edits.is_empty() {
                    return Err(err(format!("variant `{}` has no edits", v.name)));
                }
                parsed.push(Variant {
                    name: v.name,
                    when,
                    edits,
                });
            }
            let agent_keys = f
                .agent_keys
                .iter()
                .map(|k| KeyPath::parse(k).map_err(&err))
                .collect::<Result<Vec<_>, _>>()?;
            if let Some(bad) = f
                .agent_copies
                .iter()
                .find(|s| s.is_empty() || s.contains('/'))
            {
                return Err(err(format!(
                    "agent_copies entry `{bad}` must be a file-name suffix such as `.orig`"
                )));
            }
            files.push(FileSpec {
                id: f.id,
                format: f.format,
                owned: f.owned,
                agent_keys,
                agent_copies: f.agent_copies,
                paths: f
                    .paths
                    .into_iter()
                    .map(|c| Candidate {
                        path: c.path,
                        if_exists: c.if_exists,
                    })
                    .collect(),
                variants: parsed,
            });
        }
        Ok(Recipe {
            name: raw.name,
            display_name: raw.display_name,
            protocol: raw.protocol,
            commands: raw.commands,
            verified: raw.verified,
            sources: raw.sources,
            notes: raw.notes,
            restart: RestartSpec {
                argv: raw.restart.argv,
                hot_reload: raw.restart.hot_reload,
                hint: raw.restart.hint,
                only_if_running: raw.restart.only_if_running,
                timeout: raw.restart.timeout_secs.map_or(
                    crate::restart::RESTART_TIMEOUT,
                    std::time::Duration::from_secs,
                ),
            },
            files,
        })
    }

    /// Short id (`zeroclaw`), also the state sub-directory.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Human name (`ZeroClaw`).
    pub fn display_name(&self) -> &str {
        &self.display_name
    }

    pub fn protocol(&self) -> Protocol {
        self.protocol
    }

    /// Whether the keys were checked against the claw's current source.
    pub fn verified(&self) -> bool {
        self.verified
    }

    /// Where the keys come from (repository, commit, path).
    pub fn sources(&self) -> &[String] {
        &self.sources
    }

    /// Caveats shown after wiring.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    pub fn restart_spec(&self) -> &RestartSpec {
        &self.restart
    }

    /// The config file each recipe file resolves to under `env`
    /// (file id, path), or why none does.
    pub fn resolve_paths(&self, env: &PathEnv) -> Result<Vec<(String, PathBuf)>, ClawError> {
        self.files
            .iter()
            .map(|f| Ok((f.id.clone(), f.resolve(&self.name, env)?)))
            .collect()
    }
}

impl FileSpec {
    /// The first candidate whose variables are all set and whose
    /// `if_exists` path (when given) exists.
    pub(crate) fn resolve(&self, claw: &str, env: &PathEnv) -> Result<PathBuf, ClawError> {
        let mut tried = Vec::new();
        for c in &self.paths {
            let Some(path) = env.expand(&c.path) else {
                continue;
            };
            if let Some(cond) = &c.if_exists {
                match env.expand(cond) {
                    Some(p) if p.exists() => {}
                    Some(p) => {
                        tried.push(env.display(&p));
                        continue;
                    }
                    None => continue,
                }
            }
            return Ok(path);
        }
        Err(ClawError::ConfigNotFound {
            claw: claw.to_string(),
            tried,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"
name = "demo"
display_name = "Demo"
protocol = "openai"
[[files]]
id = "config"
format = "json"
paths = [{ path = "${DEMO_HOME}/c.json" }, { path = "~/.demo/c.json", if_exists = "~/.demo" }]
edits = [{ set = "a.b", value = "{model}" }]
"#;

    #[test]
    fn parses_and_resolves_candidates() {
        let r = Recipe::from_toml_str(MINIMAL).unwrap();
        let home = tempfile::tempdir().unwrap();
        let env = PathEnv::new(home.path());
        // Neither candidate applies: variable unset, ~/.demo missing.
        let e = r.resolve_paths(&env).unwrap_err();
        assert!(matches!(e, ClawError::ConfigNotFound { .. }), "{e}");
        assert!(e.to_string().contains("~/.demo"), "{e}");
        std::fs::create_dir(home.path().join(".demo")).unwrap();
        assert_eq!(
            r.resolve_paths(&env).unwrap()[0].1,
            home.path().join(".demo/c.json")
        );
        let env = env.with_var("DEMO_HOME", "/elsewhere");
        assert_eq!(
            r.resolve_paths(&env).unwrap()[0].1,
            PathBuf::from("/elsewhere/c.json")
        );
    }

    #[test]
    fn rejects_bad_recipes() {
        let bad_var = MINIMAL.replace("{model}", "{modle}");
        assert!(
            Recipe::from_toml_str(&bad_var)
                .unwrap_err()
                .to_string()
                .contains("modle")
        );
        let nested_env = MINIMAL.replace("\"json\"", "\"dotenv\"");
        assert!(Recipe::from_toml_str(&nested_env).is_err());
        let unknown_field =
            MINIMAL.replace("protocol = \"openai\"", "protocol = \"openai\"\ncolour = 1");
        assert!(Recipe::from_toml_str(&unknown_field).is_err());
        let no_edits = MINIMAL.replace("edits = [{ set = \"a.b\", value = \"{model}\" }]", "");
        assert!(Recipe::from_toml_str(&no_edits).is_err());
    }
}
