//! What the evolver proposes, checked and turned into SKILL.md text, a diff and a decision
//! about whether it is new, an update of an existing skill, or a repeat of a rejected one.

use std::collections::HashSet;

use metaclaw_skills::{KNOWN_CATEGORIES, Library, Skill, SkillSource, valid_name};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

/// One proposal as the evolver returns it (after parsing and normalization).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RawProposal {
    pub name: String,
    pub description: String,
    #[serde(default)]
    pub category: String,
    pub body: String,
    #[serde(default)]
    pub reason: String,
    /// Turn ids the lesson came from.
    #[serde(default)]
    pub turns: Vec<String>,
    /// Requests the skill is for, in the user's language and in English; they become
    /// `metadata.metaclaw.triggers`, so retrieval finds the skill across languages.
    #[serde(default)]
    pub triggers: Vec<String>,
}

/// A proposal ready for the inbox.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub name: String,
    /// Full SKILL.md text.
    pub content: String,
    /// For an update: the skill's current SKILL.md.
    pub base_content: Option<String>,
    pub diff: Option<String>,
    pub reason: String,
    pub turns: Vec<String>,
    pub fingerprint: String,
}

/// Turn anything into a spec name: lowercase, digits, single hyphens, ≤ 64 characters.
pub fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.trim().to_lowercase().chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let mut out: String = out.trim_end_matches('-').chars().take(64).collect();
    while out.ends_with('-') {
        out.pop();
    }
    out
}

/// Identifies "the same proposal" across runs: its name and the gist of its description.
pub fn fingerprint(name: &str, description: &str) -> String {
    let words: Vec<String> = description
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 3)
        .map(str::to_owned)
        .collect();
    let mut sorted = words;
    sorted.sort();
    sorted.dedup();
    let digest = Sha256::digest(sorted.join(" ").as_bytes());
    format!("{}:{}", slug(name), &hex::encode(digest)[..16])
}

fn clean(p: &RawProposal) -> Result<RawProposal, String> {
    let name = slug(&p.name);
    if !valid_name(&name) {
        return Err(format!("unusable skill name `{}`", p.name));
    }
    let description = p
        .description
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace(['<', '>'], "");
    if description.is_empty() || p.body.trim().is_empty() {
        return Err(format!(
            "proposal `{name}` has an empty description or body"
        ));
    }
    let category = if KNOWN_CATEGORIES.contains(&p.category.as_str()) {
        p.category.clone()
    } else {
        "general".to_owned()
    };
    Ok(RawProposal {
        name,
        description,
        category,
        body: p.body.trim().to_owned(),
        reason: p.reason.trim().to_owned(),
        turns: p.turns.clone(),
        triggers: clean_triggers(&p.triggers),
    })
}

/// At most 12 distinct one-line phrases of at most 200 characters.
fn clean_triggers(triggers: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in triggers {
        let t: String = t.split_whitespace().collect::<Vec<_>>().join(" ");
        let t: String = t.chars().take(200).collect();
        if !t.is_empty() && !out.contains(&t) && out.len() < 12 {
            out.push(t);
        }
    }
    out
}

/// Add trigger phrases to `metadata.metaclaw.triggers`, keeping those already there (a list,
/// or a map by language, where new ones go under `learned`).
fn add_triggers(metaclaw: &mut Map<String, Value>, new: &[String]) {
    if new.is_empty() {
        return;
    }
    let list = match metaclaw.entry("triggers").or_insert_with(|| json!([])) {
        Value::Object(by_language) => by_language.entry("learned").or_insert_with(|| json!([])),
        other => other,
    };
    if !list.is_array() {
        *list = json!([]);
    }
    if let Value::Array(items) = list {
        for t in new {
            if !items.iter().any(|i| i.as_str() == Some(t)) {
                items.push(json!(t));
            }
        }
    }
}

fn new_skill_md(p: &RawProposal, session: Option<&str>) -> String {
    let mut metaclaw = Map::new();
    metaclaw.insert("version".into(), json!(1));
    metaclaw.insert("created_by".into(), json!("evolver"));
    if let Some(s) = session {
        metaclaw.insert("source_session".into(), json!(s));
    }
    add_triggers(&mut metaclaw, &p.triggers);
    let mut fm = Map::new();
    fm.insert("name".into(), json!(p.name));
    fm.insert("description".into(), json!(p.description));
    fm.insert("category".into(), json!(p.category));
    fm.insert("metadata".into(), json!({"metaclaw": metaclaw}));
    let skill = Skill {
        name: p.name.clone(),
        description: p.description.clone(),
        category: p.category.clone(),
        body: p.body.clone(),
        frontmatter: fm,
        source: SkillSource::User,
        path: Default::default(),
        content_hash: String::new(),
    };
    skill.render()
}

/// The existing skill with the proposal's description and body; every other field is kept
/// and `metadata.metaclaw.version` goes up by one.
fn updated_skill_md(existing: &Skill, p: &RawProposal) -> String {
    let mut skill = existing.clone();
    skill.description = p.description.clone();
    skill.body = p.body.clone();
    let meta = skill
        .frontmatter
        .entry("metadata")
        .or_insert_with(|| json!({}));
    if let Value::Object(m) = meta {
        let mc = m.entry("metaclaw").or_insert_with(|| json!({}));
        if let Value::Object(mc) = mc {
            let v = mc.get("version").and_then(Value::as_u64).unwrap_or(1);
            mc.insert("version".into(), json!(v + 1));
            add_triggers(mc, &p.triggers);
        }
    }
    skill.render()
}

pub fn unified_diff(old: &str, new: &str, name: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{name}/SKILL.md"), &format!("b/{name}/SKILL.md"))
        .to_string()
}

/// BM25 score of the library's best match for a proposal, above which it is a near duplicate.
pub const DUPLICATE_SCORE: f32 = 25.0;

/// Why a proposal was dropped instead of reaching the inbox.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Dropped {
    pub name: String,
    pub reason: String,
}

/// Check proposals against the library and past rejections.
pub fn prepare(
    raw: &[RawProposal],
    library: &Library,
    rejected: &HashSet<String>,
    rejected_names: &HashSet<String>,
    session: Option<&str>,
) -> (Vec<Candidate>, Vec<Dropped>) {
    let mut out = Vec::new();
    let mut dropped = Vec::new();
    let mut seen = HashSet::new();
    for p in raw {
        let p = match clean(p) {
            Ok(p) => p,
            Err(reason) => {
                dropped.push(Dropped {
                    name: p.name.clone(),
                    reason,
                });
                continue;
            }
        };
        let fp = fingerprint(&p.name, &p.description);
        if rejected.contains(&fp) || rejected_names.contains(&p.name) {
            dropped.push(Dropped {
                name: p.name.clone(),
                reason: "the user rejected this proposal before".into(),
            });
            continue;
        }
        // A near duplicate of an existing skill becomes an update of it.
        let target = library.get(&p.name).cloned().or_else(|| {
            let query = format!("{} {}", p.name.replace('-', " "), p.description);
            library
                .index()
                .search_top(&query, 1)
                .first()
                .filter(|(_, score)| *score >= DUPLICATE_SCORE)
                .map(|(doc, _)| library.skills()[*doc].clone())
        });
        let candidate = match target {
            Some(existing) => {
                let base = existing.file_text();
                let content = updated_skill_md(&existing, &p);
                if Skill::parse(&content, Default::default(), SkillSource::User)
                    .is_ok_and(|s| s.body == existing.body && s.description == existing.description)
                {
                    dropped.push(Dropped {
                        name: existing.name.clone(),
                        reason: "identical to the existing skill".into(),
                    });
                    continue;
                }
                Candidate {
                    name: existing.name.clone(),
                    diff: Some(unified_diff(&base, &content, &existing.name)),
                    base_content: Some(base),
                    content,
                    reason: p.reason.clone(),
                    turns: p.turns.clone(),
                    fingerprint: fp,
                }
            }
            None => Candidate {
                name: p.name.clone(),
                content: new_skill_md(&p, session),
                base_content: None,
                diff: None,
                reason: p.reason.clone(),
                turns: p.turns.clone(),
                fingerprint: fp,
            },
        };
        if seen.insert(candidate.name.clone()) {
            out.push(candidate);
        } else {
            dropped.push(Dropped {
                name: candidate.name,
                reason: "proposed twice in one run".into(),
            });
        }
    }
    (out, dropped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use metaclaw_skills::Sources;

    fn raw(name: &str, description: &str) -> RawProposal {
        RawProposal {
            name: name.into(),
            description: description.into(),
            category: "debugging".into(),
            body: "## Steps\n1. Do the thing.".into(),
            reason: "the user corrected this twice".into(),
            turns: vec!["t1".into()],
            triggers: Vec::new(),
        }
    }

    /// A lesson learnt in a Chinese conversation: the skill it becomes is found by later
    /// Chinese and English requests, with no step besides writing the file.
    #[test]
    fn a_chinese_lesson_becomes_a_skill_found_in_both_languages() {
        let mut p = raw(
            "cite-chinese-regulations",
            "Use when answering questions about Chinese tax rules: cite the regulation number.",
        );
        p.body = "## Steps\n1. 先查找相关法规的编号和条款。\n2. 在回答中注明出处。".into();
        p.triggers = vec![
            "个人所得税怎么计算".into(),
            "专项附加扣除有哪些".into(),
            "how is individual income tax calculated in China".into(),
            " 个人所得税怎么计算 ".into(),
        ];
        let lib = Library::load(&Sources {
            user_dir: None,
            bundled: true,
        });
        let (cands, _) = prepare(&[p], &lib, &HashSet::new(), &HashSet::new(), None);
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join(&cands[0].name);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("SKILL.md"), &cands[0].content).unwrap();
        let lib = Library::load(&Sources {
            user_dir: Some(dir.path().to_owned()),
            bundled: true,
        });
        let skill = lib.get("cite-chinese-regulations").expect("valid skill");
        assert_eq!(skill.triggers().len(), 3, "trimmed and deduplicated");
        for request in [
            "我的个人所得税应该怎么计算？",
            "有哪些专项附加扣除可以申报",
            "how do I calculate my individual income tax in China?",
        ] {
            let r = metaclaw_skills::retrieve(
                &lib,
                &Default::default(),
                request,
                &Default::default(),
                None,
            );
            assert_eq!(
                r.injected_names().first(),
                Some(&"cite-chinese-regulations"),
                "{request}: {:?}",
                r.injected_names()
            );
        }
    }

    #[test]
    fn slugs_and_fingerprints() {
        assert_eq!(slug("Convert Units Carefully!"), "convert-units-carefully");
        assert_eq!(slug("../../etc/passwd"), "etc-passwd");
        assert_eq!(
            fingerprint("A b", "Use when converting miles"),
            fingerprint("a-b", "use WHEN converting miles!")
        );
    }

    #[test]
    fn new_update_and_rejected() {
        let lib = Library::load(&Sources {
            user_dir: None,
            bundled: true,
        });
        let proposals = vec![
            raw(
                "convert-units-carefully",
                "Use when converting between metric and imperial units such as miles and kilometres",
            ),
            raw(
                "fix-flaky-tests",
                "Use when a test passes and fails intermittently on CI; always check for shared temp directories first",
            ),
            raw("Rejected Thing", "Use when something the user did not want"),
            raw("", "no name"),
        ];
        let rejected_names: HashSet<String> = ["rejected-thing".to_owned()].into();
        let (cands, dropped) = prepare(
            &proposals,
            &lib,
            &HashSet::new(),
            &rejected_names,
            Some("s1"),
        );
        assert_eq!(cands.len(), 2, "{dropped:?}");
        let new = &cands[0];
        assert!(new.base_content.is_none());
        let parsed = Skill::parse(&new.content, Default::default(), SkillSource::User).unwrap();
        assert_eq!(parsed.name, "convert-units-carefully");
        assert_eq!(
            parsed.frontmatter["metadata"]["metaclaw"]["source_session"],
            "s1"
        );
        let update = &cands[1];
        assert_eq!(update.name, "fix-flaky-tests");
        let diff = update.diff.as_ref().unwrap();
        assert!(
            diff.contains("-description") || diff.contains("+description"),
            "{diff}"
        );
        assert!(diff.contains("+1. Do the thing."), "{diff}");
        assert!(
            diff.lines()
                .filter(|l| l.starts_with('-') && !l.starts_with("---"))
                .count()
                < 40,
            "{diff}"
        );
        assert_eq!(dropped.len(), 2);
    }

    #[test]
    fn near_duplicate_under_another_name_becomes_an_update() {
        let lib = Library::load(&Sources {
            user_dir: None,
            bundled: true,
        });
        let p = raw(
            "handle-intermittent-test-failures",
            "Use when a test passes and fails intermittently, fails randomly on CI but passes locally, depends on test order or timing",
        );
        let (cands, _) = prepare(&[p], &lib, &HashSet::new(), &HashSet::new(), None);
        assert_eq!(
            cands[0].name, "fix-flaky-tests",
            "should update the existing skill"
        );
        assert!(cands[0].diff.is_some());
    }
}
