//! The table a benchmark run prints, one row per arm. The columns follow the benchmark's
//! own scoring: overall accuracy is the mean round score (multiple choice with partial
//! credit, a file check 1 or 0), file checks are a pass rate, multiple choice is its mean
//! score and its exact-match rate. Each figure has a 95 % interval and its counts.

use serde::{Deserialize, Serialize};

use super::round::RoundKind;
use crate::stats::{MeanScore, SuccessRate};

/// One graded round of one arm.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RoundOutcome {
    pub day: String,
    pub round: String,
    pub kind: RoundKind,
    pub session_id: String,
    pub passed: bool,
    pub score: f64,
    pub detail: String,
}

/// One day's mean score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DayScore {
    pub day: String,
    pub arc: Option<String>,
    pub accuracy: MeanScore,
}

/// One arm's row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ArmTable {
    pub arm: String,
    /// Why the arm did not run (RL off, say); the figures are then empty.
    pub not_run: Option<String>,
    /// Mean score over every round.
    pub accuracy: MeanScore,
    /// file_check rounds passed.
    pub file_check: SuccessRate,
    /// multi_choice mean score (partial credit).
    pub multi_choice: MeanScore,
    /// multi_choice rounds answered with exactly the right set.
    pub multi_choice_exact: SuccessRate,
    /// multi_choice replies without a `\bbox{…}`.
    pub format_errors: u64,
    /// Rounds whose request to the agent failed (scored 0).
    pub errors: u64,
    /// Training steps taken between days (the skills + RL arm).
    pub training_steps: u32,
    pub days: Vec<DayScore>,
    /// The stored evaluation run holding the round outcomes.
    pub run_id: Option<i64>,
}

impl ArmTable {
    /// The row of an arm that did not run.
    pub fn not_run(arm: &str, reason: String) -> ArmTable {
        let mut t = ArmTable::from_outcomes(arm, &[], &[]);
        t.not_run = Some(reason);
        t
    }

    /// `days` gives the order and arc of each day.
    pub fn from_outcomes(
        arm: &str,
        outcomes: &[RoundOutcome],
        days: &[(String, Option<String>)],
    ) -> ArmTable {
        let scores = |kind: Option<RoundKind>| -> Vec<f64> {
            outcomes
                .iter()
                .filter(|o| kind.is_none_or(|k| o.kind == k))
                .map(|o| o.score)
                .collect()
        };
        let count = |kind: RoundKind, pass: bool| {
            outcomes
                .iter()
                .filter(|o| o.kind == kind && (!pass || o.passed))
                .count() as u64
        };
        let per_day = days
            .iter()
            .filter_map(|(day, arc)| {
                let s: Vec<f64> = outcomes
                    .iter()
                    .filter(|o| &o.day == day)
                    .map(|o| o.score)
                    .collect();
                (!s.is_empty()).then(|| DayScore {
                    day: day.clone(),
                    arc: arc.clone(),
                    accuracy: MeanScore::new(&s),
                })
            })
            .collect();
        ArmTable {
            arm: arm.to_owned(),
            not_run: None,
            accuracy: MeanScore::new(&scores(None)),
            file_check: SuccessRate::new(
                count(RoundKind::FileCheck, true),
                count(RoundKind::FileCheck, false),
            ),
            multi_choice: MeanScore::new(&scores(Some(RoundKind::MultiChoice))),
            multi_choice_exact: SuccessRate::new(
                count(RoundKind::MultiChoice, true),
                count(RoundKind::MultiChoice, false),
            ),
            format_errors: outcomes
                .iter()
                .filter(|o| o.kind == RoundKind::MultiChoice && o.detail.starts_with("no \\bbox"))
                .count() as u64,
            errors: outcomes
                .iter()
                .filter(|o| o.detail.starts_with("error: "))
                .count() as u64,
            training_steps: 0,
            days: per_day,
            run_id: None,
        }
    }
}

fn pct(x: f64) -> String {
    format!("{:.1}", x * 100.0)
}

/// One column's cell: the figure in percent, its 95 % interval and the counts it rests on.
fn cell(figure: f64, low: f64, high: f64, counts: String) -> String {
    format!("{} [{}–{}] ({counts})", pct(figure), pct(low), pct(high))
}

fn mean_cell(m: &MeanScore) -> String {
    cell(m.mean, m.low, m.high, format!("{:.2}/{}", m.total, m.n))
}

fn rate_cell(r: &SuccessRate) -> String {
    cell(
        r.rate,
        r.low,
        r.high,
        format!("{}/{}", r.successes, r.trials),
    )
}

/// The table as text: one row per arm, figures in percent with their 95 % interval and
/// counts underneath.
pub fn render(arms: &[ArmTable]) -> String {
    let header = [
        "arm",
        "accuracy %",
        "file_check passed %",
        "multi_choice score %",
        "multi_choice exact %",
    ];
    let mut rows: Vec<[String; 5]> = vec![header.map(str::to_owned)];
    let mut notes = Vec::new();
    for a in arms {
        if let Some(why) = &a.not_run {
            notes.push(format!("{}: not run: {why}", a.arm));
            rows.push([
                a.arm.clone(),
                "not run".into(),
                "-".into(),
                "-".into(),
                "-".into(),
            ]);
            continue;
        }
        rows.push([
            a.arm.clone(),
            mean_cell(&a.accuracy),
            rate_cell(&a.file_check),
            mean_cell(&a.multi_choice),
            rate_cell(&a.multi_choice_exact),
        ]);
        let mut extra = Vec::new();
        if a.format_errors > 0 {
            extra.push(format!("{} reply(ies) without \\bbox", a.format_errors));
        }
        if a.errors > 0 {
            extra.push(format!("{} failed request(s), scored 0", a.errors));
        }
        if a.training_steps > 0 {
            extra.push(format!(
                "{} training step(s) between days",
                a.training_steps
            ));
        }
        if !extra.is_empty() {
            notes.push(format!("{}: {}", a.arm, extra.join(", ")));
        }
    }
    let rows: Vec<Vec<String>> = rows.into_iter().map(Vec::from).collect();
    let mut out = columns(&rows);
    for n in notes {
        out.push_str(&n);
        out.push('\n');
    }
    let per_day = days_table(arms);
    if !per_day.is_empty() {
        out.push_str("\nper day, accuracy %:\n");
        out.push_str(&per_day);
    }
    out.trim_end().to_owned()
}

/// Each day's accuracy per arm that ran (the arc of a day, when the data names one, beside
/// it): where on the week the arms part.
fn days_table(arms: &[ArmTable]) -> String {
    let ran: Vec<&ArmTable> = arms.iter().filter(|a| a.not_run.is_none()).collect();
    let mut days: Vec<(&str, Option<&str>)> = Vec::new();
    for d in ran.iter().flat_map(|a| &a.days) {
        if !days.iter().any(|(day, _)| *day == d.day) {
            days.push((&d.day, d.arc.as_deref()));
        }
    }
    if days.is_empty() {
        return String::new();
    }
    let mut rows = vec![
        ["day", "arc"]
            .into_iter()
            .map(str::to_owned)
            .chain(ran.iter().map(|a| a.arm.clone()))
            .collect::<Vec<_>>(),
    ];
    for (day, arc) in days {
        let mut row = vec![day.to_owned(), arc.unwrap_or("-").to_owned()];
        for a in &ran {
            row.push(a.days.iter().find(|d| d.day == day).map_or_else(
                || "-".to_owned(),
                |d| {
                    format!(
                        "{} ({:.2}/{})",
                        pct(d.accuracy.mean),
                        d.accuracy.total,
                        d.accuracy.n
                    )
                },
            ));
        }
        rows.push(row);
    }
    columns(&rows)
}

/// Rows as left-aligned columns, two spaces apart.
fn columns(rows: &[Vec<String>]) -> String {
    let n = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..n)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in rows {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(day: &str, kind: RoundKind, passed: bool, score: f64) -> RoundOutcome {
        RoundOutcome {
            day: day.into(),
            round: "r".into(),
            kind,
            session_id: "s".into(),
            passed,
            score,
            detail: String::new(),
        }
    }

    #[test]
    fn the_row_is_the_benchmarks_scoring() {
        let days = [("day01".to_owned(), Some("A".to_owned()))];
        let t = ArmTable::from_outcomes(
            "skills",
            &[
                o("day01", RoundKind::FileCheck, true, 1.0),
                o("day01", RoundKind::FileCheck, false, 0.0),
                o("day01", RoundKind::MultiChoice, true, 1.0),
                o("day01", RoundKind::MultiChoice, false, 0.5),
            ],
            &days,
        );
        assert_eq!(t.accuracy.mean, 2.5 / 4.0);
        assert_eq!((t.file_check.successes, t.file_check.trials), (1, 2));
        assert_eq!(t.multi_choice.mean, 0.75);
        assert_eq!(t.multi_choice_exact.successes, 1);
        assert_eq!(t.days[0].accuracy.n, 4);
        let text = render(&[t, ArmTable::not_run("skills-rl", "RL is off".into())]);
        // Each column: the figure, its 95 % interval and its counts (a score total to 2 places).
        assert!(text.contains("62.5 [21.9–90.8] (2.50/4)"), "{text}");
        assert!(text.contains("50.0 [9.5–90.5] (1/2)"), "{text}");
        assert!(text.contains("75.0 [19.8–97.3] (1.50/2)"), "{text}");
        assert!(text.contains("skills-rl: not run: RL is off"), "{text}");
        // Day by day, for the arms that ran.
        let per_day = text.split("per day, accuracy %:\n").nth(1).unwrap();
        let lines: Vec<&str> = per_day.lines().collect();
        assert_eq!(lines.len(), 2, "{per_day}");
        assert!(
            lines[0].starts_with("day") && lines[0].ends_with("skills"),
            "{per_day}"
        );
        assert!(!lines[0].contains("skills-rl"), "{per_day}");
        assert!(lines[1].starts_with("day01  A"), "{per_day}");
        assert!(lines[1].ends_with("62.5 (2.50/4)"), "{per_day}");
    }
}
