//! One skill: a `SKILL.md` file with YAML frontmatter and a Markdown body.
//!
//! Read leniently, write to the spec: every frontmatter key is kept verbatim (Agent Skills,
//! OpenClaw and unknown ones), so rewriting a skill never loses what other tools put there.

use std::path::PathBuf;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// Where a skill was loaded from. A user's copy always wins over the bundled one.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum SkillSource {
    User,
    Bundled,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Skill {
    pub name: String,
    pub description: String,
    /// MetaClaw's `category` (top level or `metadata.category`), `general` when absent.
    pub category: String,
    pub body: String,
    /// The whole frontmatter, unknown keys included, in file order.
    pub frontmatter: Map<String, Value>,
    pub source: SkillSource,
    /// File path, or `bundled:<name>/SKILL.md` for the embedded bank.
    pub path: PathBuf,
    /// sha256 of the file's bytes: identifies this exact version.
    pub content_hash: String,
}

pub const DEFAULT_CATEGORY: &str = "general";

/// Split `---\n<yaml>\n---\n<body>`, tolerating a BOM and CRLF line ends.
fn split_frontmatter(text: &str) -> Result<(&str, &str), String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
        .ok_or("the file must start with a `---` frontmatter line")?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end_matches(['\r', '\n']) == "---" {
            return Ok((&rest[..offset], &rest[offset + line.len()..]));
        }
        offset += line.len();
    }
    if rest[offset..].trim_end() == "---" {
        return Ok((&rest[..offset], ""));
    }
    Err("the frontmatter has no closing `---` line".into())
}

impl Skill {
    /// Parse a SKILL.md. Only a missing/unparseable frontmatter or a missing name or
    /// description is an error; everything else is a lint warning.
    pub fn parse(text: &str, path: PathBuf, source: SkillSource) -> Result<Skill, String> {
        let (yaml, body) = split_frontmatter(text)?;
        let yaml = unix_newlines(yaml);
        let frontmatter: Map<String, Value> = if yaml.trim().is_empty() {
            Map::new()
        } else {
            match serde_saphyr::from_str::<Value>(&yaml) {
                Ok(Value::Object(map)) => map,
                Ok(_) => return Err("the frontmatter must be a YAML mapping".into()),
                Err(e) => return Err(format!("invalid YAML frontmatter: {e}")),
            }
        };
        let text_field = |key: &str| -> Result<String, String> {
            match frontmatter.get(key) {
                Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
                Some(Value::String(_)) | None | Some(Value::Null) => {
                    Err(format!("the required field `{key}` is missing or empty"))
                }
                Some(other) => Err(format!("`{key}` must be text, not {other}")),
            }
        };
        let name = text_field("name")?.trim().to_owned();
        // Folded whitespace: block scalars keep newlines that mean nothing to retrieval.
        let description = text_field("description")?
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let category = frontmatter
            .get("category")
            .or_else(|| frontmatter.get("metadata").and_then(|m| m.get("category")))
            .and_then(Value::as_str)
            .filter(|c| !c.trim().is_empty())
            .unwrap_or(DEFAULT_CATEGORY)
            .to_owned();
        Ok(Skill {
            name,
            description,
            category,
            body: unix_newlines(body).trim().to_owned(),
            frontmatter,
            source,
            path,
            content_hash: hex::encode(Sha256::digest(text.as_bytes())),
        })
    }

    /// Serialize back to SKILL.md, keeping every frontmatter key.
    pub fn render(&self) -> String {
        let mut fm = self.frontmatter.clone();
        fm.insert("name".into(), Value::String(self.name.clone()));
        fm.insert(
            "description".into(),
            Value::String(self.description.clone()),
        );
        if self.category != DEFAULT_CATEGORY || fm.contains_key("category") {
            fm.insert("category".into(), Value::String(self.category.clone()));
        }
        // name and description first, as the spec's examples do; the rest in file order
        // (`shift_remove`: the map's plain `remove` swaps the last key into the gap).
        let mut ordered = Map::new();
        for key in ["name", "description"] {
            if let Some(v) = fm.shift_remove(key) {
                ordered.insert(key.into(), v);
            }
        }
        ordered.extend(fm);
        // One-line scalars keep diffs between versions small and match hand-written files.
        let options = serde_saphyr::ser_options! { prefer_block_scalars: false };
        let yaml = serde_saphyr::to_string_with_options(&Value::Object(ordered), options)
            .unwrap_or_default();
        format!(
            "---\n{}---\n\n{}\n",
            ensure_newline(&yaml),
            self.body.trim()
        )
    }

    /// The SKILL.md text as written (the user's file, or the bundled file), not a
    /// re-rendering; falls back to rendering when the file cannot be read.
    pub fn file_text(&self) -> String {
        match self.source {
            SkillSource::User => {
                std::fs::read_to_string(&self.path).unwrap_or_else(|_| self.render())
            }
            SkillSource::Bundled => crate::bundled::files()
                .into_iter()
                .find(|(folder, _)| *folder == self.name)
                .map_or_else(|| self.render(), |(_, text)| text.to_owned()),
        }
    }

    /// `metadata.<namespace>.<key>`. Read on every request, so plain lookups: a JSON pointer
    /// would allocate each of its segments.
    fn metadata(&self, namespace: &str, key: &str) -> Option<&Value> {
        self.frontmatter.get("metadata")?.get(namespace)?.get(key)
    }

    /// `metadata.openclaw.always` or `always: true`: eligible on every turn.
    pub fn always(&self) -> bool {
        [
            self.frontmatter.get("always"),
            self.metadata("openclaw", "always"),
            self.metadata("metaclaw", "always"),
        ]
        .into_iter()
        .flatten()
        .any(|v| v.as_bool() == Some(true))
    }

    /// Trigger phrases: requests this skill is for, in the words and languages users write
    /// them in. `metadata.metaclaw.triggers` is a list of phrases or a map from a language
    /// code to a list (or one phrase). They live under `metadata` so the file stays valid
    /// for Agent Skills validators, and one phrase a line so upstream's line parser ignores
    /// them. Anything else there is ignored, not an error.
    pub fn triggers(&self) -> Vec<String> {
        fn phrases(v: &Value, out: &mut Vec<String>) {
            match v {
                Value::String(s) if !s.trim().is_empty() => out.push(s.trim().to_owned()),
                Value::Array(items) => items.iter().for_each(|i| phrases(i, out)),
                Value::Object(by_language) => by_language.values().for_each(|i| phrases(i, out)),
                _ => {}
            }
        }
        let mut out = Vec::new();
        if let Some(v) = self.metadata("metaclaw", "triggers") {
            phrases(v, &mut out);
        }
        out
    }

    /// `disable-model-invocation: true` hides a skill from automatic injection.
    pub fn auto_invocation_disabled(&self) -> bool {
        self.frontmatter
            .get("disable-model-invocation")
            .and_then(Value::as_bool)
            == Some(true)
    }

    /// `metadata.metaclaw.version` when set, else the content hash prefix.
    pub fn version(&self) -> String {
        self.metadata("metaclaw", "version")
            .map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .unwrap_or_else(|| self.content_hash[..12].to_owned())
    }

    /// Rough token count of the injected text (four bytes a token).
    pub fn token_estimate(&self) -> usize {
        (self.name.len() + self.description.len() + self.body.len()).div_ceil(4) + 8
    }
}

/// CRLF to LF, also for runs such as `\r\r\n`: a plain `replace("\r\n", "\n")` leaves a CRLF
/// there, which the next parse of the rewritten file would change again.
fn unix_newlines(s: &str) -> String {
    s.split_inclusive('\n')
        .map(|line| match line.strip_suffix('\n') {
            Some(content) => format!("{}\n", content.trim_end_matches('\r')),
            None => line.to_owned(),
        })
        .collect()
}

fn ensure_newline(s: &str) -> String {
    if s.ends_with('\n') {
        s.to_owned()
    } else {
        format!("{s}\n")
    }
}

/// Spec names: lowercase letters, digits, single hyphens inside, 1–64 characters.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    const FULL: &str = "\u{feff}---\r\nname: pdf-tools\r\ndescription: |-\r\n  Use when working\r\n  with PDF files.\r\nlicense: Apache-2.0\r\ncompatibility: needs python3\r\nallowed-tools: Read Bash(pdftotext *)\r\nmetadata:\r\n  category: research\r\n  openclaw:\r\n    always: true\r\n    requires:\r\n      bins: [pdftotext]\r\n  x-custom: 1\r\nhomepage: https://example.org\r\n---\r\n# PDF\r\n\r\nSteps here.\r\n";

    #[test]
    fn parses_block_scalars_nested_metadata_and_crlf() {
        let s = Skill::parse(FULL, "x/SKILL.md".into(), SkillSource::User).unwrap();
        assert_eq!(s.name, "pdf-tools");
        assert_eq!(s.description, "Use when working with PDF files.");
        assert_eq!(s.category, "research");
        assert_eq!(s.body, "# PDF\n\nSteps here.");
        assert!(s.always());
        assert_eq!(s.frontmatter["allowed-tools"], "Read Bash(pdftotext *)");
        assert_eq!(
            s.frontmatter["metadata"]["openclaw"]["requires"]["bins"][0],
            "pdftotext"
        );
    }

    #[test]
    fn rewriting_preserves_every_field() {
        let s = Skill::parse(FULL, "x/SKILL.md".into(), SkillSource::User).unwrap();
        let mut edited = s.clone();
        edited.body = "New body.".into();
        let text = edited.render();
        let again = Skill::parse(&text, "x/SKILL.md".into(), SkillSource::User).unwrap();
        assert_eq!(again.body, "New body.");
        for key in [
            "license",
            "compatibility",
            "allowed-tools",
            "metadata",
            "homepage",
        ] {
            assert_eq!(again.frontmatter[key], s.frontmatter[key], "{key} changed");
        }
        assert!(text.starts_with("---\nname: pdf-tools\n"), "{text}");
    }

    #[test]
    fn rendering_keeps_file_order_and_is_a_fixed_point() {
        // Found by the skill_md fuzz target: removing `name` swapped the last key into its
        // place, so every rewrite reshuffled the frontmatter.
        let text = "---\nname: \"007\"\ndescription: 'yes: no # not a comment'\ncategory: null\nalways: true\ndisable-model-invocation: false\nx-list: [1, 2.5, -3, \"4\"]\n---\n\n---\nbody with a rule\n";
        let s = Skill::parse(text, "p".into(), SkillSource::User).unwrap();
        let rendered = s.render();
        let keys: Vec<&str> = rendered
            .lines()
            .skip(1)
            .take_while(|l| *l != "---")
            .filter(|l| !l.starts_with('-'))
            .filter_map(|l| l.split_once(':').map(|(k, _)| k))
            .collect();
        assert_eq!(
            keys,
            [
                "name",
                "description",
                "category",
                "always",
                "disable-model-invocation",
                "x-list"
            ]
        );
        let again = Skill::parse(&rendered, "p".into(), SkillSource::User).unwrap();
        assert_eq!(again.body, "---\nbody with a rule");
        assert_eq!(again.render(), rendered);
    }

    #[test]
    fn carriage_returns_before_a_newline_all_go() {
        // Found by the skill_md fuzz target: `\r\r\n` became `\r\n`, so the body changed
        // again when the rewritten skill was parsed.
        let text = "---\r\nname: a\r\r\ndescription: d\r\n---\r\nx *)\r\r\n  y\r\nz\rw\n";
        let s = Skill::parse(text, "p".into(), SkillSource::User).unwrap();
        assert_eq!(s.body, "x *)\n  y\nz\rw");
        let again = Skill::parse(&s.render(), "p".into(), SkillSource::User).unwrap();
        assert_eq!(again.body, s.body);
    }

    #[test]
    fn errors_are_reasons_not_panics() {
        for (text, needle) in [
            ("no frontmatter", "must start"),
            ("---\nname: a\n", "no closing"),
            ("---\n- a\n---\n", "mapping"),
            ("---\nname: a\n---\nbody", "description"),
            ("---\ndescription: d\n---\n", "name"),
            ("---\nname: [\n---\n", "invalid YAML"),
            ("---\nname: {a: 1}\ndescription: d\n---\n", "must be text"),
        ] {
            let err = Skill::parse(text, "p".into(), SkillSource::User).unwrap_err();
            assert!(err.contains(needle), "{text:?}: {err}");
        }
    }

    #[test]
    fn names() {
        assert!(valid_name("fix-flaky-tests"));
        assert!(valid_name("a1"));
        for bad in [
            "",
            "A",
            "a_b",
            "-a",
            "a-",
            "a--b",
            "../x",
            "a/b",
            &"a".repeat(65),
        ] {
            assert!(!valid_name(bad), "{bad}");
        }
    }
}
