//! The skills in effect: the user's folder over the bundled bank, plus the index over them.
//! A `Library` is immutable; reloading builds a new one and swaps it in whole.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::analyzer::Analyzer;
use crate::bundled;
use crate::index::Index;
use crate::lint::{self, Finding, Level};
use crate::skill::{Skill, SkillSource};

/// Where skills come from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sources {
    /// `skills.dir`; skills here win over bundled ones with the same name.
    pub user_dir: Option<PathBuf>,
    /// Include the bank embedded in the binary.
    pub bundled: bool,
}

#[derive(Debug)]
pub struct Library {
    skills: Vec<Arc<Skill>>,
    by_name: HashMap<String, usize>,
    /// Skills with `always` set, so retrieval need not look at every skill per request.
    always_on: Vec<usize>,
    /// Each skill's version, by position: retrieval names it for every candidate.
    versions: Vec<String>,
    problems: Vec<Finding>,
    index: Index,
}

/// Read `<dir>/<folder>/SKILL.md` files, reporting each skill or why it was skipped.
pub(crate) fn read_dir_skills(
    dir: &Path,
    source: SkillSource,
    each: &mut dyn FnMut(Result<(Skill, String), Finding>),
) {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
        Err(e) => {
            each(Err(Finding {
                path: dir.to_owned(),
                level: Level::Error,
                message: format!("cannot read the folder: {e}"),
            }));
            return;
        }
    };
    let mut folders: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    folders.sort();
    for folder in folders {
        let file = folder.join("SKILL.md");
        if !file.is_file() {
            continue;
        }
        let name = folder
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_owned();
        let result = std::fs::read_to_string(&file)
            .map_err(|e| format!("cannot read: {e}"))
            .and_then(|text| Skill::parse(&text, file.clone(), source));
        each(result.map(|s| (s, name)).map_err(|message| Finding {
            path: file,
            level: Level::Error,
            message,
        }));
    }
}

impl Library {
    pub fn load(sources: &Sources) -> Library {
        let mut skills: Vec<Skill> = Vec::new();
        let mut problems = Vec::new();
        let mut accept = |skill: Skill, folder: &str, problems: &mut Vec<Finding>| {
            let findings = lint::check(&skill, folder);
            let fatal = findings.iter().any(|f| f.level == Level::Error);
            problems.extend(findings);
            if !fatal {
                skills.push(skill);
            }
        };
        if let Some(dir) = &sources.user_dir {
            read_dir_skills(dir, SkillSource::User, &mut |r| match r {
                Ok((skill, folder)) => accept(skill, &folder, &mut problems),
                Err(f) => problems.push(f),
            });
        }
        if sources.bundled {
            for (folder, text) in bundled::files() {
                let path = PathBuf::from(format!("bundled:{folder}/SKILL.md"));
                match Skill::parse(text, path.clone(), SkillSource::Bundled) {
                    Ok(skill) => accept(skill, folder, &mut problems),
                    Err(message) => problems.push(Finding {
                        path,
                        level: Level::Error,
                        message,
                    }),
                }
            }
        }
        Library::from_skills(skills, problems)
    }

    /// Build from parsed skills; the first of two with the same name wins.
    pub fn from_skills(skills: Vec<Skill>, problems: Vec<Finding>) -> Library {
        Library::from_skills_with(skills, problems, Analyzer::new())
    }

    /// Same, with a non-default analyzer (for measuring alternatives).
    pub fn from_skills_with(
        skills: Vec<Skill>,
        problems: Vec<Finding>,
        analyzer: Analyzer,
    ) -> Library {
        let mut by_name = HashMap::new();
        let mut kept: Vec<Arc<Skill>> = Vec::new();
        for skill in skills {
            if by_name.contains_key(&skill.name) {
                continue;
            }
            by_name.insert(skill.name.clone(), kept.len());
            kept.push(Arc::new(skill));
        }
        let index = Index::build_with(&kept, analyzer);
        let always_on = (0..kept.len()).filter(|i| kept[*i].always()).collect();
        let versions = kept.iter().map(|s| s.version()).collect();
        Library {
            skills: kept,
            by_name,
            always_on,
            versions,
            problems,
            index,
        }
    }

    pub fn empty() -> Library {
        Library::from_skills(Vec::new(), Vec::new())
    }

    /// [`Skill::version`] of the skill at `position`, computed once.
    pub fn version(&self, position: usize) -> &str {
        &self.versions[position]
    }

    pub fn get(&self, name: &str) -> Option<&Arc<Skill>> {
        self.by_name.get(name).map(|i| &self.skills[*i])
    }

    /// Position of a skill in `skills()`.
    pub fn position(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// Positions of the skills marked always-on in their metadata.
    pub fn always_on(&self) -> &[usize] {
        &self.always_on
    }

    pub fn skills(&self) -> &[Arc<Skill>] {
        &self.skills
    }

    /// Files that were skipped or have warnings, with the reason.
    pub fn problems(&self) -> &[Finding] {
        &self.problems
    }

    pub fn index(&self) -> &Index {
        &self.index
    }

    pub fn len(&self) -> usize {
        self.skills.len()
    }

    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, folder: &str, text: &str) {
        std::fs::create_dir_all(dir.join(folder)).unwrap();
        std::fs::write(dir.join(folder).join("SKILL.md"), text).unwrap();
    }

    #[test]
    fn versions_are_each_skills_own() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "pinned-version",
            "---\nname: pinned-version\ndescription: Use when x\nmetadata:\n  metaclaw:\n    version: 3\n---\nBody.\n",
        );
        write(
            dir.path(),
            "hashed",
            "---\nname: hashed\ndescription: Use when y\n---\nBody.\n",
        );
        let lib = Library::load(&Sources {
            user_dir: Some(dir.path().to_owned()),
            bundled: true,
        });
        for (i, skill) in lib.skills().iter().enumerate() {
            assert_eq!(lib.version(i), skill.version(), "{}", skill.name);
        }
        let at = |name: &str| lib.version(lib.position(name).unwrap()).to_owned();
        assert_eq!(at("pinned-version"), "3");
        assert_eq!(at("hashed").len(), 12);
    }

    #[test]
    fn bundled_bank_is_valid_and_large_enough() {
        let lib = Library::load(&Sources {
            user_dir: None,
            bundled: true,
        });
        let errors: Vec<_> = lib
            .problems()
            .iter()
            .filter(|f| f.level == Level::Error)
            .collect();
        assert!(errors.is_empty(), "{errors:?}");
        assert!(lib.len() >= 40, "{} skills", lib.len());
        let categories: std::collections::HashSet<&str> =
            lib.skills().iter().map(|s| s.category.as_str()).collect();
        assert!(categories.len() >= 8, "{categories:?}");
    }

    #[test]
    fn a_users_chinese_skill_is_found_by_chinese_and_english_requests() {
        use crate::retrieve::{RetrievalConfig, States, retrieve};
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "brew-oolong-tea",
            "---\nname: brew-oolong-tea\ndescription: 冲泡乌龙茶的方法：水温、投茶量和出汤时间。\nmetadata:\n  metaclaw:\n    triggers:\n      en:\n        - \"how hot should the water be for oolong\"\n        - \"steeping time for oolong tea leaves\"\n---\n# 冲泡乌龙茶\n\n1. 水温九十五度，先温杯。\n2. 投茶量七克，第一泡洗茶。\n3. 出汤时间从十秒开始，每泡增加五秒。\n",
        );
        let lib = Library::load(&Sources {
            user_dir: Some(dir.path().to_owned()),
            bundled: true,
        });
        assert!(lib.get("brew-oolong-tea").is_some(), "{:?}", lib.problems());
        let cfg = RetrievalConfig::default();
        for request in [
            "乌龙茶的水温应该是多少度？",
            "泡乌龙茶每一泡出汤要多久",
            "what water temperature and steeping time for oolong tea?",
        ] {
            let r = retrieve(&lib, &States::new(), request, &cfg, None);
            assert_eq!(
                r.injected_names().first(),
                Some(&"brew-oolong-tea"),
                "{request}: {:#?}",
                r.candidates
            );
        }
        let r = retrieve(&lib, &States::new(), "今天天气不错", &cfg, None);
        assert!(r.injected_names().is_empty(), "{:?}", r.injected_names());
    }

    #[test]
    fn user_copy_wins_and_broken_files_are_reported_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "fix-flaky-tests",
            "---\nname: fix-flaky-tests\ndescription: my own version\ncategory: debugging\n---\nMine.\n",
        );
        write(dir.path(), "broken", "---\nname: [oops\n---\n");
        write(
            dir.path(),
            "wrong-folder",
            "---\nname: something-else\ndescription: d\n---\nx\n",
        );
        let lib = Library::load(&Sources {
            user_dir: Some(dir.path().to_owned()),
            bundled: true,
        });
        let mine = lib.get("fix-flaky-tests").unwrap();
        assert_eq!(mine.description, "my own version");
        assert_eq!(mine.source, SkillSource::User);
        assert!(lib.get("something-else").is_none());
        let messages: Vec<String> = lib.problems().iter().map(|f| f.to_string()).collect();
        assert!(
            messages
                .iter()
                .any(|m| m.contains("broken") && m.contains("invalid YAML")),
            "{messages:?}"
        );
        assert!(
            messages.iter().any(|m| m.contains("folder name")),
            "{messages:?}"
        );
    }
}
