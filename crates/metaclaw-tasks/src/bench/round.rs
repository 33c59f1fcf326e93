//! One round of a benchmark day: its question, how an answer is graded and the feedback
//! the next round is prefixed with.
//!
//! `file_check`: a shell command (the checker scripts) run in the day's workspace after the
//! agent answered; it passes when the exit code is the expected one (and the output holds
//! `expect_stdout`, when set). `multi_choice`: the letters in the reply's first `\bbox{…}`;
//! the score is 1 − (wrong + missed) / options (the benchmark's reported accuracy), while
//! the feedback treats only the exact set as correct (as the original runner does).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::command::{CONFINED_PATH, CommandLimits, run_confined};
use crate::verify::{Choices, bbox_letters};

/// Appended to feedback on a failed round.
pub const REMINDER: &str = "Keep this in mind as you continue with the next task.";

/// Sent when a multiple-choice reply has no `\bbox{…}`.
pub const FORMAT_ERROR: &str = "No answer in the required format was found: give the chosen \
     option letters inside \\bbox{}, for example \\bbox{A} for one option or \\bbox{A,B} for \
     several.";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RoundKind {
    FileCheck,
    MultiChoice,
}

impl std::fmt::Display for RoundKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RoundKind::FileCheck => "file_check",
            RoundKind::MultiChoice => "multi_choice",
        })
    }
}

#[derive(Debug, Clone)]
pub struct FileCheck {
    pub command: String,
    pub expect_exit: i32,
    pub expect_stdout: Option<String>,
    pub stdout_regex: Option<regex::Regex>,
    pub timeout: Duration,
    pub correct: String,
    pub incorrect: String,
}

#[derive(Debug, Clone)]
pub struct MultiChoice {
    pub choices: Choices,
    pub correct: String,
    /// Why each option is right or wrong.
    pub options: BTreeMap<char, String>,
}

#[derive(Debug, Clone)]
pub enum Check {
    File(FileCheck),
    Choice(MultiChoice),
}

#[derive(Debug, Clone)]
pub struct Round {
    pub id: String,
    pub question: String,
    /// Where the round starts in its `questions.json`.
    pub line: usize,
    pub check: Check,
}

/// How an answer did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Grade {
    pub passed: bool,
    /// In [0, 1]; partial credit for multiple choice.
    pub score: f64,
    pub detail: String,
    /// What the next message tells the agent about this round.
    pub feedback: String,
}

#[derive(Deserialize)]
struct RawRound {
    id: String,
    #[serde(rename = "type", default)]
    kind: Option<String>,
    question: String,
    #[serde(default)]
    feedback: Value,
    eval: Value,
}

#[derive(Deserialize)]
struct RawFileEval {
    command: String,
    #[serde(default)]
    expect_exit: i32,
    #[serde(default)]
    expect_stdout: Option<String>,
    #[serde(default)]
    expect_stdout_regex: bool,
    #[serde(default)]
    timeout: Option<f64>,
}

fn text_of(v: &Value, key: &str) -> Result<String, String> {
    match &v[key] {
        Value::String(s) if !s.trim().is_empty() => Ok(s.clone()),
        _ => Err(format!("`feedback.{key}` must be non-empty text")),
    }
}

impl Round {
    /// Parses one round from its JSON text, which starts on `line` of its file. The error
    /// names the line of the problem.
    pub fn parse(json: &str, line: usize) -> Result<Round, (usize, String)> {
        let raw: RawRound = serde_json::from_str(json).map_err(|e| {
            let msg = e.to_string();
            let msg = msg
                .rfind(" at line ")
                .map_or(msg.clone(), |i| msg[..i].to_owned());
            // A syntax error is where serde stopped; a missing or mistyped field is the
            // round's own problem, named where the round starts (serde points at its end).
            let at = if e.classify() == serde_json::error::Category::Syntax {
                line + e.line().saturating_sub(1)
            } else {
                line
            };
            (at, format!("not a round ({msg})"))
        })?;
        let fail = |m: String| (line, format!("round {:?}: {m}", raw.id));
        if raw.id.trim().is_empty() {
            return Err((line, "a round needs an `id`".into()));
        }
        if raw.question.trim().is_empty() {
            return Err(fail("`question` is empty".into()));
        }
        let check = match raw.kind.as_deref().unwrap_or("multi_choice") {
            "file_check" => {
                let eval: RawFileEval = serde_json::from_value(raw.eval.clone())
                    .map_err(|e| fail(format!("`eval` of a file_check: {e}")))?;
                if eval.command.trim().is_empty() {
                    return Err(fail("`eval.command` is empty".into()));
                }
                let stdout_regex =
                    match (&eval.expect_stdout, eval.expect_stdout_regex) {
                        (Some(p), true) => Some(regex::Regex::new(p).map_err(|e| {
                            fail(format!("`eval.expect_stdout` is not a regex: {e}"))
                        })?),
                        _ => None,
                    };
                let timeout = eval.timeout.unwrap_or(30.0);
                if !(timeout.is_finite() && timeout > 0.0) {
                    return Err(fail(
                        "`eval.timeout` must be a positive number of seconds".into(),
                    ));
                }
                Check::File(FileCheck {
                    command: eval.command,
                    expect_exit: eval.expect_exit,
                    expect_stdout: eval.expect_stdout,
                    stdout_regex,
                    timeout: Duration::from_secs_f64(timeout.min(3600.0)),
                    correct: text_of(&raw.feedback, "correct").map_err(fail)?,
                    incorrect: text_of(&raw.feedback, "incorrect").map_err(fail)?,
                })
            }
            "multi_choice" => {
                let choices = Choices::new(&raw.eval["options"], &raw.eval["answer"])
                    .map_err(|m| fail(format!("`eval`: {m}")))?;
                let options = raw.feedback["options"]
                    .as_object()
                    .map(|o| {
                        o.iter()
                            .filter_map(|(k, v)| {
                                let c = k.trim().chars().next()?.to_ascii_uppercase();
                                Some((c, v.as_str().unwrap_or_default().to_owned()))
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                Check::Choice(MultiChoice {
                    choices,
                    correct: text_of(&raw.feedback, "correct").map_err(fail)?,
                    options,
                })
            }
            other => {
                return Err(fail(format!(
                    "unknown `type` {other:?} (file_check or multi_choice)"
                )));
            }
        };
        Ok(Round {
            id: raw.id,
            question: raw.question,
            line,
            check,
        })
    }

    pub fn kind(&self) -> RoundKind {
        match self.check {
            Check::File(_) => RoundKind::FileCheck,
            Check::Choice(_) => RoundKind::MultiChoice,
        }
    }

    /// Grades `answer`; a file check runs in `workspace` with `env` (see [`python_env`]).
    pub async fn grade(
        &self,
        answer: &str,
        workspace: &Path,
        env: &BTreeMap<String, String>,
    ) -> Grade {
        match &self.check {
            Check::File(fc) => grade_file(fc, workspace, env).await,
            Check::Choice(mc) => grade_choice(mc, answer),
        }
    }
}

async fn grade_file(fc: &FileCheck, workspace: &Path, env: &BTreeMap<String, String>) -> Grade {
    let limits = CommandLimits {
        timeout: fc.timeout,
        ..CommandLimits::default()
    };
    let (passed, detail) = match run_confined(&fc.command, workspace, b"", &limits, env).await {
        Ok(out) if out.timed_out => (false, format!("timed out after {:?}", fc.timeout)),
        Ok(out) => {
            let exit_ok = out.exit_code == Some(fc.expect_exit);
            let stdout_ok = match (&fc.stdout_regex, &fc.expect_stdout) {
                (Some(re), _) => re.is_match(&out.output),
                (None, Some(s)) => out.output.contains(s.as_str()),
                (None, None) => true,
            };
            let shown: String = out.output.trim().chars().take(400).collect();
            (
                exit_ok && stdout_ok,
                format!(
                    "exit {}{}",
                    out.exit_code.map_or("by signal".into(), |c| c.to_string()),
                    if shown.is_empty() {
                        String::new()
                    } else {
                        format!(": {shown}")
                    }
                ),
            )
        }
        Err(e) => (false, e.to_string()),
    };
    Grade {
        passed,
        score: f64::from(u8::from(passed)),
        detail,
        feedback: if passed {
            fc.correct.clone()
        } else {
            format!("{}\n{REMINDER}", fc.incorrect)
        },
    }
}

fn grade_choice(mc: &MultiChoice, answer: &str) -> Grade {
    let (score, passed, detail) = mc.choices.score(answer);
    let feedback = match bbox_letters(answer) {
        None => format!("{FORMAT_ERROR}\n{REMINDER}"),
        Some(_) if passed => mc.correct.clone(),
        Some(chosen) => {
            let why = |c: &char| mc.options.get(c).cloned().unwrap_or_default();
            let mut lines: Vec<String> = mc
                .choices
                .correct
                .difference(&chosen)
                .map(|c| format!("You missed option {c}: {}", why(c)))
                .collect();
            let wrong: BTreeSet<&char> = chosen.difference(&mc.choices.correct).collect();
            lines.extend(
                wrong
                    .into_iter()
                    .map(|c| format!("You incorrectly selected option {c}: {}", why(c))),
            );
            lines.push(REMINDER.to_owned());
            lines.join("\n")
        }
    };
    Grade {
        passed,
        score,
        detail,
        feedback,
    }
}

/// The message of a round: the previous round's feedback, then the question.
pub fn message(previous_feedback: Option<&str>, question: &str) -> String {
    match previous_feedback.filter(|f| !f.trim().is_empty()) {
        Some(fb) => format!("[Previous Feedback] {fb}\n\n{question}"),
        None => question.to_owned(),
    }
}

/// The environment of checker commands. The scripts are run as `python`; where only
/// `python3` exists (Debian, Ubuntu), a `python` link to it is put in
/// `<workspace>/.metaclaw-bin`, which leads `PATH`. `None` when no Python 3 is found.
pub fn python_env(workspace: &Path) -> std::io::Result<Option<BTreeMap<String, String>>> {
    let dirs: Vec<&Path> = CONFINED_PATH.split(':').map(Path::new).collect();
    if dirs.iter().any(|d| d.join("python").is_file()) {
        return Ok(Some(BTreeMap::new()));
    }
    let Some(python3) = dirs.iter().map(|d| d.join("python3")).find(|p| p.is_file()) else {
        return Ok(None);
    };
    let bin = workspace.join(".metaclaw-bin");
    std::fs::create_dir_all(&bin)?;
    let link = bin.join("python");
    if !link.exists() {
        std::os::unix::fs::symlink(&python3, &link)?;
    }
    Ok(Some(BTreeMap::from([(
        "PATH".to_owned(),
        format!("{}:{CONFINED_PATH}", bin.canonicalize()?.display()),
    )])))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mc() -> Round {
        Round::parse(
            r#"{"id": "r2", "type": "multi_choice", "question": "Which? \\bbox{X}",
                "eval": {"options": {"A": "a", "B": "b", "C": "c", "D": "d"}, "answer": ["A", "C"]},
                "feedback": {"correct": "Right.", "options": {"A": "A is right", "B": "B is wrong",
                    "C": "C is right", "D": "D is wrong"}}}"#,
            10,
        )
        .unwrap()
    }

    #[tokio::test]
    async fn multiple_choice_feedback_names_missed_and_wrong_options() {
        let r = mc();
        let dir = tempfile::tempdir().unwrap();
        let env = BTreeMap::new();
        let exact = r.grade(r"\bbox{C, a}", dir.path(), &env).await;
        assert_eq!(
            (exact.passed, exact.score, exact.feedback.as_str()),
            (true, 1.0, "Right.")
        );
        let wrong = r.grade(r"\bbox{A,B}", dir.path(), &env).await;
        assert_eq!(wrong.score, 0.5);
        assert_eq!(
            wrong.feedback,
            format!(
                "You missed option C: C is right\nYou incorrectly selected option B: B is wrong\n{REMINDER}"
            )
        );
        let none = r.grade("A and C", dir.path(), &env).await;
        assert_eq!(none.score, 0.0);
        assert!(none.feedback.starts_with(FORMAT_ERROR));
    }

    #[tokio::test]
    async fn a_file_check_passes_on_the_expected_exit_code() {
        let r = Round::parse(
            r#"{"id": "r1", "type": "file_check", "question": "Write out.txt",
                "eval": {"command": "test -s day01/out.txt", "expect_exit": 0},
                "feedback": {"correct": "Good.", "incorrect": "Write day01/out.txt."}}"#,
            3,
        )
        .unwrap();
        assert_eq!(r.kind(), RoundKind::FileCheck);
        let dir = tempfile::tempdir().unwrap();
        let env = BTreeMap::new();
        let fail = r.grade("", dir.path(), &env).await;
        assert!(!fail.passed);
        assert_eq!(fail.feedback, format!("Write day01/out.txt.\n{REMINDER}"));
        std::fs::create_dir(dir.path().join("day01")).unwrap();
        std::fs::write(dir.path().join("day01/out.txt"), "x").unwrap();
        let pass = r.grade("", dir.path(), &env).await;
        assert!(pass.passed, "{pass:?}");
        assert_eq!(pass.feedback, "Good.");
    }

    #[test]
    fn a_bad_round_names_its_line() {
        // The problem (a missing field) is reported where the round starts.
        let (line, msg) = Round::parse(r#"{"id": "r1", "question": "q"}"#, 7).unwrap_err();
        assert_eq!(line, 7);
        assert!(msg.contains("eval"), "{msg}");
        // A syntax error inside the round is reported on its own line.
        let (line, _) = Round::parse("{\"id\": \"r1\",\n \"question\": q}", 7).unwrap_err();
        assert_eq!(line, 8);
        let (_, msg) = Round::parse(
            r#"{"id": "r1", "type": "essay", "question": "q", "eval": {}}"#,
            1,
        )
        .unwrap_err();
        assert!(msg.contains("unknown `type`"), "{msg}");
        assert_eq!(message(Some("fb"), "q"), "[Previous Feedback] fb\n\nq");
        assert_eq!(message(Some(""), "q"), "q");
    }
}
