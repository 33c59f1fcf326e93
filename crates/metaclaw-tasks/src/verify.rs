//! Verifiers: how a task's final answer is checked. Every verifier of a task must pass for
//! the episode to succeed; the reward is the mean of the verifiers' scores (a
//! multiple-choice answer earns partial credit, the others 0 or 1).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::command::{CommandLimits, run_confined};

#[derive(Debug, Clone)]
pub enum Verifier {
    /// Normalised exact match.
    Answer(String),
    /// The answer matches this regular expression somewhere.
    Pattern(Regex),
    /// MetaClaw-Bench multiple choice: the first `\bbox{…}` (or `\boxed{…}`) names the set.
    Choices(Choices),
    /// A shell command run in the episode's scratch folder with the answer on stdin and in
    /// `answer.txt`; exit 0 passes.
    Check(String),
}

/// A JSON list's strings; anything else in it is an empty string, which `letters` refuses.
fn texts(items: &[Value]) -> Vec<String> {
    items
        .iter()
        .map(|v| v.as_str().unwrap_or_default().to_owned())
        .collect()
}

#[derive(Debug, Clone)]
pub struct Choices {
    /// The option letters the task offers.
    pub options: BTreeSet<char>,
    pub correct: BTreeSet<char>,
}

impl Choices {
    /// `options`: `{"A": "...", …}` or `["A", "B", …]`; `correct`: `["A","C"]` or `"A,C"`.
    pub fn new(options: &Value, correct: &Value) -> Result<Choices, String> {
        let letters = |keys: Vec<String>| -> Result<BTreeSet<char>, String> {
            keys.iter()
                .map(|k| {
                    let mut chars = k.trim().chars();
                    match (chars.next(), chars.next()) {
                        (Some(c), None) if c.is_ascii_alphabetic() => Ok(c.to_ascii_uppercase()),
                        _ => Err(format!("choice {k:?} is not a single letter")),
                    }
                })
                .collect()
        };
        let options = match options {
            Value::Object(map) => letters(map.keys().cloned().collect())?,
            Value::Array(items) => letters(texts(items))?,
            _ => {
                return Err(
                    "`choices` must be an object of letter: text, or a list of letters".into(),
                );
            }
        };
        let correct = match correct {
            Value::String(s) => letters(s.split(',').map(str::to_owned).collect())?,
            Value::Array(items) => letters(texts(items))?,
            _ => return Err("`correct` must be a letter list or \"A,C\"".into()),
        };
        if options.is_empty() || correct.is_empty() {
            return Err("`choices` and `correct` must not be empty".into());
        }
        if let Some(c) = correct.iter().find(|c| !options.contains(c)) {
            return Err(format!("correct letter {c} is not among the choices"));
        }
        Ok(Choices { options, correct })
    }

    /// Score 1 − (false positives + false negatives) / options, and whether the set is exact.
    pub fn score(&self, answer: &str) -> (f64, bool, String) {
        let Some(chosen) = bbox_letters(answer) else {
            return (0.0, false, "no \\bbox{…} answer found".into());
        };
        let wrong = chosen.symmetric_difference(&self.correct).count();
        let n = self.options.len().max(1);
        let score = (1.0 - wrong as f64 / n as f64).max(0.0);
        let picked: String = chosen.iter().collect();
        (score, wrong == 0, format!("chose {{{picked}}}"))
    }
}

static BBOX: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\\(?:bbox|boxed)\{([^}]*)\}").expect("static regex"));

/// The letters in the first `\bbox{…}` or `\boxed{…}`, upper-cased.
pub fn bbox_letters(answer: &str) -> Option<BTreeSet<char>> {
    let inner = BBOX.captures(answer)?.get(1)?.as_str();
    Some(
        inner
            .chars()
            .filter(char::is_ascii_alphabetic)
            .map(|c| c.to_ascii_uppercase())
            .collect(),
    )
}

/// Case-folded, whitespace collapsed, surrounding quotes and trailing punctuation removed.
pub fn normalise(s: &str) -> String {
    let collapsed = s.split_whitespace().collect::<Vec<_>>().join(" ");
    collapsed
        .trim_matches(|c: char| matches!(c, '"' | '\'' | '`' | '.' | '!' | ',' | ';' | ':'))
        .trim()
        .to_lowercase()
}

/// One verifier's finding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Check {
    pub kind: String,
    pub passed: bool,
    pub score: f64,
    pub detail: String,
}

/// All verifiers of a task on one answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Verdict {
    pub passed: bool,
    /// Mean of the checks' scores, in [0, 1].
    pub score: f64,
    pub checks: Vec<Check>,
}

impl Verdict {
    fn of(checks: Vec<Check>) -> Verdict {
        let passed = checks.iter().all(|c| c.passed);
        let score = checks.iter().map(|c| c.score).sum::<f64>() / checks.len().max(1) as f64;
        Verdict {
            passed,
            score,
            checks,
        }
    }
}

/// Runs every verifier on `answer`. `scratch` is the episode's folder (for `check`).
/// Returns `None` when the task has no verifier.
pub async fn verify(
    verifiers: &[Verifier],
    answer: &str,
    scratch: &Path,
    limits: &CommandLimits,
) -> Option<Verdict> {
    if verifiers.is_empty() {
        return None;
    }
    let mut checks = Vec::with_capacity(verifiers.len());
    for v in verifiers {
        checks.push(match v {
            Verifier::Answer(expected) => {
                let passed = normalise(answer) == normalise(expected);
                Check {
                    kind: "answer".into(),
                    passed,
                    score: f64::from(u8::from(passed)),
                    detail: if passed {
                        "matches".into()
                    } else {
                        format!("expected {expected:?}")
                    },
                }
            }
            Verifier::Pattern(re) => {
                let passed = re.is_match(answer);
                Check {
                    kind: "pattern".into(),
                    passed,
                    score: f64::from(u8::from(passed)),
                    detail: format!(
                        "/{}/ {}",
                        re.as_str(),
                        if passed { "matched" } else { "did not match" }
                    ),
                }
            }
            Verifier::Choices(c) => {
                let (score, passed, detail) = c.score(answer);
                Check {
                    kind: "choices".into(),
                    passed,
                    score,
                    detail,
                }
            }
            Verifier::Check(cmd) => check_command(cmd, answer, scratch, limits).await,
        });
    }
    Some(Verdict::of(checks))
}

async fn check_command(cmd: &str, answer: &str, scratch: &Path, limits: &CommandLimits) -> Check {
    let fail = |detail: String| Check {
        kind: "check".into(),
        passed: false,
        score: 0.0,
        detail,
    };
    if let Err(e) = std::fs::write(scratch.join("answer.txt"), answer) {
        return fail(format!("could not write answer.txt: {e}"));
    }
    match run_confined(cmd, scratch, answer.as_bytes(), limits, &BTreeMap::new()).await {
        Ok(out) if out.timed_out => fail(format!("timed out after {:?}", limits.timeout)),
        Ok(out) => {
            let passed = out.exit_code == Some(0);
            Check {
                kind: "check".into(),
                passed,
                score: f64::from(u8::from(passed)),
                detail: format!(
                    "exit {}{}",
                    out.exit_code
                        .map_or("by signal".to_owned(), |c| c.to_string()),
                    if out.output.trim().is_empty() {
                        String::new()
                    } else {
                        format!(": {}", out.output.trim())
                    }
                ),
            }
        }
        Err(e) => fail(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn limits() -> CommandLimits {
        CommandLimits::default()
    }

    async fn run(v: Verifier, answer: &str) -> Verdict {
        let dir = tempfile::tempdir().unwrap();
        verify(&[v], answer, dir.path(), &limits()).await.unwrap()
    }

    #[tokio::test]
    async fn answer_is_a_normalised_exact_match() {
        assert!(
            run(Verifier::Answer("Paris".into()), "  \"paris.\" ")
                .await
                .passed
        );
        assert!(
            run(Verifier::Answer("New  York".into()), "new york")
                .await
                .passed
        );
        let v = run(Verifier::Answer("Paris".into()), "Paris, France").await;
        assert!(!v.passed);
        assert_eq!(v.score, 0.0);
    }

    #[tokio::test]
    async fn pattern_matches_anywhere() {
        let re = Regex::new(r"^\d{4}-\d{2}-\d{2}$").unwrap();
        assert!(
            run(Verifier::Pattern(re.clone()), "2026-11-26")
                .await
                .passed
        );
        assert!(!run(Verifier::Pattern(re), "26/11/2026").await.passed);
    }

    #[tokio::test]
    async fn choices_take_the_first_bbox_with_partial_credit() {
        let c = Choices::new(
            &json!({"A": "a", "B": "b", "C": "c", "D": "d"}),
            &json!(["A", "C"]),
        )
        .unwrap();
        let exact = run(
            Verifier::Choices(c.clone()),
            r"I think \bbox{c, a}. Not \bbox{B}",
        )
        .await;
        assert!(exact.passed);
        assert_eq!(exact.score, 1.0);
        let partial = run(Verifier::Choices(c.clone()), r"\boxed{A}").await;
        assert!(!partial.passed);
        assert_eq!(partial.score, 0.75);
        let none = run(Verifier::Choices(c), "A and C").await;
        assert_eq!((none.passed, none.score), (false, 0.0));
        assert!(Choices::new(&json!(["A", "B"]), &json!("C")).is_err());
        assert!(Choices::new(&json!(["AB"]), &json!("A")).is_err());
    }

    #[tokio::test]
    async fn check_gets_the_answer_on_stdin_and_in_answer_txt() {
        let cmd = r#"read line; test "$line" = 42 && grep -qx 42 answer.txt"#;
        assert!(run(Verifier::Check(cmd.into()), "42").await.passed);
        let v = run(Verifier::Check(cmd.into()), "41").await;
        assert!(!v.passed);
        assert!(v.checks[0].detail.starts_with("exit 1"), "{:?}", v.checks);
    }

    #[tokio::test]
    async fn all_verifiers_must_pass_and_none_means_no_verdict() {
        let dir = tempfile::tempdir().unwrap();
        let vs = [
            Verifier::Answer("42".into()),
            Verifier::Pattern(Regex::new("^4").unwrap()),
        ];
        let v = verify(&vs, "43", dir.path(), &limits()).await.unwrap();
        assert!(!v.passed);
        assert_eq!(v.score, 0.5);
        assert!(verify(&[], "x", dir.path(), &limits()).await.is_none());
    }
}
