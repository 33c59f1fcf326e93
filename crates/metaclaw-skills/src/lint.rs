//! Spec checks for skills. Limits are warnings; only what makes a skill unusable is an error.

use std::path::{Path, PathBuf};

use crate::skill::{Skill, SkillSource, valid_name};

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    Warning,
    Error,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Finding {
    pub path: PathBuf,
    pub level: Level,
    pub message: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let level = match self.level {
            Level::Warning => "warning",
            Level::Error => "error",
        };
        write!(f, "{level}: {}: {}", self.path.display(), self.message)
    }
}

pub const KNOWN_CATEGORIES: &[&str] = &[
    "general",
    "coding",
    "debugging",
    "research",
    "data_analysis",
    "communication",
    "security",
    "automation",
    "agentic",
    "productivity",
    "common_mistakes",
];

const DESCRIPTION_LIMIT: usize = 1024;
const BODY_TOKEN_LIMIT: usize = 5000;

/// Problems with a parsed skill found in folder `folder`.
pub fn check(skill: &Skill, folder: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut push = |level, message: String| {
        out.push(Finding {
            path: skill.path.clone(),
            level,
            message,
        })
    };
    if !valid_name(&skill.name) {
        push(
            Level::Error,
            format!(
                "name `{}` must be lowercase letters, digits and single hyphens, at most 64 characters",
                skill.name
            ),
        );
    } else if skill.name != folder {
        push(
            Level::Error,
            format!(
                "name `{}` must equal its folder name `{folder}`",
                skill.name
            ),
        );
    }
    if skill.description.chars().count() > DESCRIPTION_LIMIT {
        push(
            Level::Warning,
            format!(
                "description is {} characters; the spec allows {DESCRIPTION_LIMIT}",
                skill.description.chars().count()
            ),
        );
    }
    if skill.description.contains(['<', '>']) {
        push(
            Level::Warning,
            "description contains `<` or `>`, which some agents reject".into(),
        );
    }
    if skill.body.trim().is_empty() {
        push(
            Level::Warning,
            "the body is empty: nothing useful to inject".into(),
        );
    }
    if skill.body.len() / 4 > BODY_TOKEN_LIMIT {
        push(
            Level::Warning,
            format!(
                "the body is about {} tokens; keep skills under {BODY_TOKEN_LIMIT}",
                skill.body.len() / 4
            ),
        );
    }
    if !KNOWN_CATEGORIES.contains(&skill.category.as_str()) {
        push(
            Level::Warning,
            format!(
                "unknown category `{}` (known: {})",
                skill.category,
                KNOWN_CATEGORIES.join(", ")
            ),
        );
    }
    out
}

/// Lint every `<dir>/<name>/SKILL.md`.
pub fn lint_dir(dir: &Path) -> Vec<Finding> {
    let mut out = Vec::new();
    crate::library::read_dir_skills(dir, SkillSource::User, &mut |result| match result {
        Ok((skill, folder)) => out.extend(check(&skill, &folder)),
        Err(finding) => out.push(finding),
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(name: &str, description: &str, category: &str) -> Skill {
        let text = format!(
            "---\nname: {name}\ndescription: \"{description}\"\ncategory: {category}\n---\nbody\n"
        );
        Skill::parse(&text, "p/SKILL.md".into(), SkillSource::User).unwrap()
    }

    #[test]
    fn folder_mismatch_and_bad_names_are_errors() {
        let f = check(&skill("a-b", "d", "coding"), "other");
        assert_eq!(f[0].level, Level::Error);
        assert!(f[0].message.contains("folder"));
        let f = check(&skill("Bad_Name", "d", "coding"), "Bad_Name");
        assert_eq!(f[0].level, Level::Error);
    }

    #[test]
    fn limits_are_warnings() {
        let long = "x".repeat(1100);
        let f = check(&skill("a", &format!("{long} <b>"), "weird"), "a");
        assert!(f.iter().all(|x| x.level == Level::Warning));
        assert_eq!(f.len(), 3, "{f:?}");
    }
}
