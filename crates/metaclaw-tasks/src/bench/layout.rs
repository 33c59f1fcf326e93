//! A benchmark variant folder (`benchmark/data/metaclaw-bench` or `…-small` in the public
//! repository): `all_tests.json` lists the days; each day has `eval/<day>/questions.json`,
//! a seeded transcript under `openclaw_state/agents/<agent>/sessions/<session>.jsonl` and
//! its input files in `workspaces/shared/<day>/`. Paths inside `all_tests.json` are relative
//! to the original repository's root, so the folder's fixed layout is used instead.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use super::round::Round;
use crate::error::TaskError;
use crate::scratch::Scratch;

/// The persona files OpenClaw puts in front of every conversation, in its order.
const PERSONA: [&str; 5] = ["AGENTS.md", "IDENTITY.md", "SOUL.md", "TOOLS.md", "USER.md"];

/// A file (or part of one) that was skipped, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FileProblem {
    /// Relative to the benchmark folder.
    pub file: String,
    pub line: Option<usize>,
    pub message: String,
}

impl std::fmt::Display for FileProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "{} line {}: {}", self.file, line, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

/// One simulated workday.
#[derive(Debug, Clone)]
pub struct Day {
    pub id: String,
    pub desc: String,
    /// The phase (`A`–`F`) that introduced the day's newest hidden rule.
    pub arc: Option<String>,
    /// The seeded conversation the day continues (chat-completions messages).
    pub seed: Vec<Value>,
    pub rounds: Vec<Round>,
}

/// The days of a benchmark folder that can run, with what was skipped.
#[derive(Debug, Clone)]
pub struct Bench {
    pub dir: PathBuf,
    pub name: String,
    pub days: Vec<Day>,
    pub problems: Vec<FileProblem>,
}

#[derive(Deserialize)]
struct Index<'a> {
    #[serde(default)]
    name: String,
    #[serde(borrow)]
    test: Vec<&'a RawValue>,
}

#[derive(Deserialize)]
struct TestEntry {
    id: String,
    #[serde(default)]
    desc: String,
    #[serde(default)]
    agent: Option<String>,
    session: String,
    #[serde(default)]
    eval: Option<String>,
    #[serde(default)]
    arc: Option<String>,
}

#[derive(Deserialize)]
struct Group<'a> {
    #[serde(borrow)]
    rounds: Vec<&'a RawValue>,
}

fn layout_error(message: String) -> TaskError {
    TaskError::Bench(message)
}

/// The 1-based line of `part` (a slice of `text`) in `text`.
fn line_of(text: &str, part: &str) -> usize {
    let offset = (part.as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// A day id is used in paths: it must be one plain name.
fn plain_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        && !s.starts_with('.')
}

impl Bench {
    /// Reads the variant folder `dir`, keeping the first `days` days when given. Fails only
    /// when there is no readable index of days or no day can run.
    pub fn load(dir: &Path, days: Option<usize>) -> Result<Bench, TaskError> {
        let index_path = ["all_tests.json", "all_tests_metaclaw.json"]
            .iter()
            .map(|n| dir.join(n))
            .find(|p| p.is_file())
            .ok_or_else(|| layout_error(missing_index(dir)))?;
        let index_name = index_path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = std::fs::read_to_string(&index_path).map_err(|source| TaskError::Read {
            path: index_path.clone(),
            source,
        })?;
        let index: Index<'_> = serde_json::from_str(&text).map_err(|e| {
            layout_error(format!(
                "{} line {}: not a benchmark index ({})",
                index_path.display(),
                e.line(),
                strip_position(&e)
            ))
        })?;
        let mut problems = Vec::new();
        let mut out = Vec::new();
        let mut seen = BTreeSet::new();
        for raw in index.test {
            if days.is_some_and(|n| out.len() >= n) {
                break;
            }
            let line = line_of(&text, raw.get());
            let problem = |message: String| FileProblem {
                file: index_name.clone(),
                line: Some(line),
                message,
            };
            let entry: TestEntry = match serde_json::from_str(raw.get()) {
                Ok(e) => e,
                Err(e) => {
                    problems.push(problem(format!("not a day ({})", strip_position(&e))));
                    continue;
                }
            };
            let eval = entry.eval.clone().unwrap_or_else(|| entry.id.clone());
            let agent = entry
                .agent
                .clone()
                .unwrap_or_else(|| "metaclaw_agent".into());
            if let Some(bad) = [&entry.id, &eval, &agent, &entry.session]
                .into_iter()
                .find(|s| !plain_name(s))
            {
                problems.push(problem(format!(
                    "{bad:?} is not a plain name (a day, agent or session id)"
                )));
                continue;
            }
            if !seen.insert(entry.id.clone()) {
                problems.push(problem(format!("day {:?} is listed twice", entry.id)));
                continue;
            }
            match load_day(dir, &entry, &eval, &agent, &mut problems) {
                Some(day) => out.push(day),
                None => continue,
            }
        }
        for p in &problems {
            tracing::warn!(bench = %dir.display(), "MetaClaw-Bench: {p}; skipped");
        }
        if out.is_empty() {
            return Err(layout_error(format!(
                "{} has no day that can run ({} problem(s): {})",
                dir.display(),
                problems.len(),
                problems
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; ")
            )));
        }
        Ok(Bench {
            dir: dir.to_owned(),
            name: index.name,
            days: out,
            problems,
        })
    }

    /// The day's fresh workspace, as the original runner builds it: the shared root files
    /// and folders other than days, only this day's folder, and the checker scripts as
    /// `scripts/`.
    pub fn workspace(&self, day: &Day) -> Result<Scratch, TaskError> {
        let scratch = Scratch::empty()?;
        let shared = self.dir.join("workspaces/shared");
        if let Ok(entries) = std::fs::read_dir(&shared) {
            for entry in entries.flatten() {
                let name = entry.file_name();
                let name_str = name.to_string_lossy();
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                let other_day = kind.is_dir() && is_day_folder(&name_str) && name_str != day.id;
                if kind.is_symlink() || other_day {
                    continue;
                }
                scratch.add(&entry.path(), Path::new(&name))?;
            }
        }
        let scripts = self.dir.join("eval/scripts");
        if scripts.is_dir() {
            scratch.add(&scripts, Path::new("scripts"))?;
        }
        Ok(scratch)
    }

    /// The persona files of the shared workspace, as one system message (OpenClaw puts them
    /// in front of every conversation); `None` when there are none.
    pub fn persona(&self) -> Option<String> {
        let shared = self.dir.join("workspaces/shared");
        let parts: Vec<String> = PERSONA
            .iter()
            .filter_map(|name| {
                let text = std::fs::read_to_string(shared.join(name)).ok()?;
                Some(format!("## {name}\n{}", text.trim()))
            })
            .collect();
        (!parts.is_empty()).then(|| parts.join("\n\n"))
    }
}

fn is_day_folder(name: &str) -> bool {
    name.strip_prefix("day")
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

/// serde's message without its "at line L column C" (the caller names the line itself).
fn strip_position(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_owned(),
        None => s,
    }
}

fn missing_index(dir: &Path) -> String {
    let data = dir.join("benchmark/data");
    let variants: Vec<String> = std::fs::read_dir(&data)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().join("all_tests.json").is_file())
        .map(|e| e.path().display().to_string())
        .collect();
    if variants.is_empty() {
        format!(
            "{} is not a MetaClaw-Bench folder: it has no all_tests.json (point at \
             benchmark/data/metaclaw-bench or benchmark/data/metaclaw-bench-small in a \
             checkout of the MetaClaw repository)",
            dir.display()
        )
    } else {
        format!(
            "{} holds several benchmark variants; point at one of: {}",
            dir.display(),
            variants.join(", ")
        )
    }
}

fn load_day(
    dir: &Path,
    entry: &TestEntry,
    eval: &str,
    agent: &str,
    problems: &mut Vec<FileProblem>,
) -> Option<Day> {
    let seed_rel = format!(
        "openclaw_state/agents/{agent}/sessions/{}.jsonl",
        entry.session
    );
    let seed = match read_seed(&dir.join(&seed_rel)) {
        Ok(seed) => seed,
        Err((line, message)) => {
            problems.push(FileProblem {
                file: seed_rel,
                line,
                message,
            });
            return None;
        }
    };
    let questions_rel = format!("eval/{eval}/questions.json");
    let text = match std::fs::read_to_string(dir.join(&questions_rel)) {
        Ok(t) => t,
        Err(e) => {
            problems.push(FileProblem {
                file: questions_rel,
                line: None,
                message: format!("cannot be read ({e})"),
            });
            return None;
        }
    };
    let rounds = read_rounds(&text, &questions_rel, problems)?;
    Some(Day {
        id: entry.id.clone(),
        desc: entry.desc.clone(),
        arc: entry.arc.clone(),
        seed,
        rounds,
    })
}

/// The user and assistant messages of a seeded OpenClaw transcript.
fn read_seed(path: &Path) -> Result<Vec<Value>, (Option<usize>, String)> {
    let text =
        std::fs::read_to_string(path).map_err(|e| (None, format!("cannot be read ({e})")))?;
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        if raw.trim().is_empty() {
            continue;
        }
        let event: Value = serde_json::from_str(raw).map_err(|e| {
            (
                Some(i + 1),
                format!("not a JSON line ({})", strip_position(&e)),
            )
        })?;
        if event["type"] != "message" {
            continue;
        }
        let role = event["message"]["role"].as_str().unwrap_or_default();
        if !matches!(role, "user" | "assistant") {
            continue;
        }
        let content = match &event["message"]["content"] {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts
                .iter()
                .filter(|p| p["type"] == "text")
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            _ => {
                return Err((
                    Some(i + 1),
                    "a message's content is neither text nor a list of parts".into(),
                ));
            }
        };
        out.push(serde_json::json!({"role": role, "content": content}));
    }
    Ok(out)
}

/// The rounds of `questions.json` (one day object, or a list of them whose rounds run in
/// order); a bad round is reported with its line and skipped, a bad file skips the day.
fn read_rounds(text: &str, file: &str, problems: &mut Vec<FileProblem>) -> Option<Vec<Round>> {
    let problem = |line: Option<usize>, message: String| FileProblem {
        file: file.to_owned(),
        line,
        message,
    };
    let groups: Vec<Group<'_>> = match text.trim_start().chars().next() {
        Some('[') => serde_json::from_str(text),
        _ => serde_json::from_str(text).map(|g| vec![g]),
    }
    .map_err(|e| {
        problems.push(problem(
            Some(e.line()),
            format!("not a questions file ({})", strip_position(&e)),
        ))
    })
    .ok()?;
    let mut rounds = Vec::new();
    let mut ids = BTreeMap::new();
    for raw in groups.into_iter().flat_map(|g| g.rounds) {
        let line = line_of(text, raw.get());
        match Round::parse(raw.get(), line) {
            Ok(round) => {
                if let Some(first) = ids.insert(round.id.clone(), line) {
                    problems.push(problem(
                        Some(line),
                        format!("round {:?} already appears on line {first}", round.id),
                    ));
                    continue;
                }
                rounds.push(round);
            }
            Err((at, message)) => problems.push(problem(Some(at), message)),
        }
    }
    if rounds.is_empty() {
        problems.push(problem(None, "has no round that can run".into()));
        return None;
    }
    Some(rounds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_found_from_a_slice() {
        let text = "{\n  \"a\": [\n    {\"x\": 1}\n  ]\n}";
        let v: BTreeMap<String, Vec<&RawValue>> = serde_json::from_str(text).unwrap();
        assert_eq!(line_of(text, v["a"][0].get()), 3);
    }

    #[test]
    fn day_folders_are_told_from_others() {
        assert!(is_day_folder("day07"));
        assert!(!is_day_folder("daily"));
        assert!(!is_day_folder("day"));
        assert!(plain_name("day01_0f9a"));
        assert!(!plain_name("../x"));
    }
}
