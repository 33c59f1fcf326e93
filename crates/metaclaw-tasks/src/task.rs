//! Task sets: `<dir>/<split>.jsonl`, one task per line (`task_id`, `instruction`, and
//! optional verifiers). A malformed line is reported with its number and skipped, so one
//! bad line never stops a run.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::TaskError;
use crate::verify::{Choices, Verifier};

/// One task: what the agent is asked and how its final answer is checked.
#[derive(Debug, Clone)]
pub struct Task {
    pub id: String,
    pub instruction: String,
    /// Every verifier must pass; none means the episode has no verdict of its own (the
    /// judge, if on, rewards it).
    pub verifiers: Vec<Verifier>,
    /// Files copied into each episode's fresh scratch folder (a file or folder, resolved
    /// inside the task set's folder).
    pub workspace: Option<PathBuf>,
}

/// A line that was skipped, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LineProblem {
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for LineProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// The tasks of one split, with the lines that were skipped.
#[derive(Debug, Clone)]
pub struct TaskSet {
    pub dir: PathBuf,
    pub split: String,
    pub tasks: Vec<Task>,
    pub problems: Vec<LineProblem>,
}

/// A task line as written (unknown keys are tolerated: the original's files carry extra
/// metadata).
#[derive(Deserialize)]
struct Line {
    task_id: Value,
    instruction: String,
    #[serde(default)]
    answer: Option<Value>,
    #[serde(default)]
    pattern: Option<String>,
    #[serde(default)]
    choices: Option<Value>,
    #[serde(default)]
    correct: Option<Value>,
    #[serde(default)]
    check: Option<String>,
    #[serde(default)]
    workspace: Option<String>,
}

impl TaskSet {
    /// Reads `<dir>/<split>.jsonl`. Fails only when the file is missing or unreadable or no
    /// line is a valid task.
    pub fn load(dir: &Path, split: &str) -> Result<TaskSet, TaskError> {
        if split.is_empty() || split.contains(['/', '\\']) || split.starts_with('.') {
            return Err(TaskError::MissingSplit {
                path: dir.join(format!("{split}.jsonl")),
            });
        }
        let path = dir.join(format!("{split}.jsonl"));
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(TaskError::MissingSplit { path });
            }
            Err(source) => return Err(TaskError::Read { path, source }),
        };
        let set = Self::parse(dir, split, &text);
        if set.tasks.is_empty() {
            return Err(TaskError::Empty {
                path,
                problems: set.problems.len(),
            });
        }
        for p in &set.problems {
            tracing::warn!(file = %path.display(), "task set: {p}; skipped");
        }
        Ok(set)
    }

    /// Parses the lines of a split (blank lines are allowed).
    pub fn parse(dir: &Path, split: &str, text: &str) -> TaskSet {
        let mut tasks = Vec::new();
        let mut problems = Vec::new();
        let mut seen = BTreeSet::new();
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            if raw.trim().is_empty() {
                continue;
            }
            match parse_line(dir, raw) {
                Ok(task) if !seen.insert(task.id.clone()) => problems.push(LineProblem {
                    line,
                    message: format!("duplicate task_id {:?}", task.id),
                }),
                Ok(task) => tasks.push(task),
                Err(message) => problems.push(LineProblem { line, message }),
            }
        }
        TaskSet {
            dir: dir.to_owned(),
            split: split.to_owned(),
            tasks,
            problems,
        }
    }
}

fn parse_line(dir: &Path, raw: &str) -> Result<Task, String> {
    let line: Line = serde_json::from_str(raw).map_err(|e| {
        // serde's column is useful, its line is always 1 here.
        format!("not a task ({e})").replace(" at line 1", "")
    })?;
    let id = match &line.task_id {
        Value::String(s) if !s.trim().is_empty() => s.trim().to_owned(),
        Value::Number(n) => n.to_string(),
        _ => return Err("`task_id` must be a non-empty string or a number".into()),
    };
    if line.instruction.trim().is_empty() {
        return Err("`instruction` is empty".into());
    }
    let mut verifiers = Vec::new();
    if let Some(answer) = &line.answer {
        let text = match answer {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            _ => return Err("`answer` must be a string or a number".into()),
        };
        verifiers.push(Verifier::Answer(text));
    }
    if let Some(pattern) = &line.pattern {
        let re =
            regex::Regex::new(pattern).map_err(|e| format!("`pattern` is not a regex: {e}"))?;
        verifiers.push(Verifier::Pattern(re));
    }
    match (&line.choices, &line.correct) {
        (Some(options), Some(correct)) => {
            verifiers.push(Verifier::Choices(Choices::new(options, correct)?));
        }
        (Some(_), None) => return Err("`choices` needs `correct` (the right letters)".into()),
        (None, Some(_)) => return Err("`correct` needs `choices`".into()),
        (None, None) => {}
    }
    if let Some(check) = &line.check {
        if check.trim().is_empty() {
            return Err("`check` is empty".into());
        }
        verifiers.push(Verifier::Check(check.clone()));
    }
    let workspace = line
        .workspace
        .as_deref()
        .map(|w| inside(dir, w))
        .transpose()?;
    Ok(Task {
        id,
        instruction: line.instruction,
        verifiers,
        workspace,
    })
}

/// A relative path that stays inside the task set's folder.
fn inside(dir: &Path, rel: &str) -> Result<PathBuf, String> {
    let p = Path::new(rel);
    if rel.is_empty()
        || p.components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(format!(
            "`workspace` must be a relative path inside the task folder, not {rel:?}"
        ));
    }
    let full = dir.join(p);
    if !full.exists() {
        return Err(format!("`workspace` {} does not exist", full.display()));
    }
    Ok(full)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_lines_are_reported_with_their_number_and_skipped() {
        let text = r#"{"task_id": "a", "instruction": "say 1", "answer": "1"}

not json
{"task_id": "b"}
{"task_id": "c", "instruction": "x", "pattern": "("}
{"task_id": "a", "instruction": "again"}
{"task_id": 7, "instruction": "pick", "choices": {"A": "x", "B": "y"}, "correct": "B"}
{"task_id": "w", "instruction": "x", "workspace": "../etc"}
"#;
        let set = TaskSet::parse(Path::new("/nonexistent"), "train", text);
        let ids: Vec<&str> = set.tasks.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["a", "7"]);
        let lines: Vec<usize> = set.problems.iter().map(|p| p.line).collect();
        assert_eq!(lines, [3, 4, 5, 6, 8]);
        assert!(
            set.problems[1].message.contains("instruction"),
            "{:?}",
            set.problems
        );
        assert!(set.problems[2].message.contains("regex"));
        assert!(set.problems[3].message.contains("duplicate"));
        assert!(set.problems[4].message.contains("inside the task folder"));
    }

    #[test]
    fn a_missing_split_and_an_all_bad_file_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let err = TaskSet::load(dir.path(), "train").unwrap_err();
        assert!(err.to_string().contains("train.jsonl"), "{err}");
        std::fs::write(dir.path().join("train.jsonl"), "{}\n").unwrap();
        let err = TaskSet::load(dir.path(), "train").unwrap_err();
        assert!(err.to_string().contains("1 line(s) skipped"), "{err}");
        assert!(TaskSet::load(dir.path(), "../x").is_err());
    }
}
