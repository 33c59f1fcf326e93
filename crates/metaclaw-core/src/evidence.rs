//! Evidence per skill: whether turns that got a skill went worse than comparable turns that
//! did not, with an honest interval, and the Skill health report built on it.
//!
//! A turn's outcome is bad when it got a thumbs down, the judge's verdict -1, a correction
//! in the user's next message, or tool errors from its tool calls. The comparison group is,
//! best first: turns where retrieval had the skill as a candidate but did not inject it
//! (ranked just below the cut, or held out by `skills.holdout_share`); when those are too
//! few, all other main turns (a weaker comparison: those turns asked for other things).

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Duration, Utc};
use metaclaw_skills::Library;
use metaclaw_store::{EvidenceArm, OutcomeCounts};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub use metaclaw_tasks::{newcombe, wilson};

/// What a skill's turns are compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Comparison {
    /// Turns where the skill was retrieved but not injected (below the cut or held out).
    CandidateNotInjected,
    /// All other main turns (too few candidate turns without it).
    OtherTurns,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    NotEnoughData,
    /// The whole interval is on the harmful side: more bad outcomes with it.
    SeemsToHurt,
    /// The whole interval is on the helpful side.
    SeemsToHelp,
    NoClearDifference,
}

/// The bad-outcome rates with and without a skill and their difference (with − without),
/// with its 95 % Newcombe interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Estimate {
    pub bad_rate_with: f64,
    pub bad_rate_without: f64,
    pub difference: f64,
    pub low: f64,
    pub high: f64,
}

/// One skill's evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SkillEvidence {
    /// Turns it was injected into, and their bad outcomes.
    pub with: Counts,
    /// The comparison turns (see `comparison`) and their bad outcomes.
    pub without: Counts,
    pub comparison: Comparison,
    /// Of `without` when the comparison is the candidate turns: how many were held out
    /// (the unbiased part) and how many ranked below the cut.
    pub held_out: u64,
    pub below_cut: u64,
    /// `None` when either side has fewer than the minimum turns.
    pub estimate: Option<Estimate>,
    pub verdict: Verdict,
}

/// [`OutcomeCounts`] as the API shows them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Counts {
    pub turns: u64,
    pub bad: u64,
    pub thumbs_down: u64,
    pub judged_bad: u64,
    pub corrected: u64,
    pub tool_error: u64,
}

impl From<OutcomeCounts> for Counts {
    fn from(c: OutcomeCounts) -> Counts {
        Counts {
            turns: c.turns,
            bad: c.bad,
            thumbs_down: c.thumbs_down,
            judged_bad: c.judged_bad,
            corrected: c.corrected,
            tool_error: c.tool_error,
        }
    }
}

impl Counts {
    fn plus(self, o: Counts) -> Counts {
        Counts {
            turns: self.turns + o.turns,
            bad: self.bad + o.bad,
            thumbs_down: self.thumbs_down + o.thumbs_down,
            judged_bad: self.judged_bad + o.judged_bad,
            corrected: self.corrected + o.corrected,
            tool_error: self.tool_error + o.tool_error,
        }
    }
}

/// A skill's evidence from its per-arm counts and the store's totals over main turns
/// (`total_turns`, `total_bad`). `min_turns` applies to each side.
pub fn assess(
    arms: Option<&HashMap<EvidenceArm, OutcomeCounts>>,
    (total_turns, total_bad): (u64, u64),
    min_turns: u64,
) -> SkillEvidence {
    let arm = |a| {
        arms.and_then(|m| m.get(&a))
            .copied()
            .map(Counts::from)
            .unwrap_or_default()
    };
    let with = arm(EvidenceArm::Injected);
    let held = arm(EvidenceArm::Holdout);
    let below = arm(EvidenceArm::BelowCut);
    let candidates = held.plus(below);
    let (without, comparison) = if candidates.turns >= min_turns {
        (candidates, Comparison::CandidateNotInjected)
    } else {
        let other = Counts {
            turns: total_turns.saturating_sub(with.turns),
            bad: total_bad.saturating_sub(with.bad),
            ..Counts::default()
        };
        (other, Comparison::OtherTurns)
    };
    let estimate = (with.turns >= min_turns.max(1) && without.turns >= min_turns.max(1))
        .then(|| newcombe(with.bad, with.turns, without.bad, without.turns))
        .flatten()
        .map(|(difference, low, high)| Estimate {
            bad_rate_with: with.bad as f64 / with.turns as f64,
            bad_rate_without: without.bad as f64 / without.turns as f64,
            difference,
            low,
            high,
        });
    let verdict = match estimate {
        None => Verdict::NotEnoughData,
        Some(e) if e.low > 0.0 => Verdict::SeemsToHurt,
        Some(e) if e.high < 0.0 => Verdict::SeemsToHelp,
        Some(_) => Verdict::NoClearDifference,
    };
    SkillEvidence {
        with,
        without,
        comparison,
        held_out: held.turns,
        below_cut: below.turns,
        estimate,
        verdict,
    }
}

/// Whether `skill` is withheld throughout `session` under `share` (0..=0.5): the first 8
/// bytes of SHA-256 of the pair, as a fraction of 2^64, below the share. Stable across
/// restarts and builds, so a conversation sees the skill always or never.
pub fn held_out(session_id: &str, skill: &str, share: f64) -> bool {
    if share <= 0.0 {
        return false;
    }
    let mut h = Sha256::new();
    h.update(session_id.as_bytes());
    h.update([0]);
    h.update(skill.as_bytes());
    let digest = h.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    (u64::from_be_bytes(first) as f64 / 2f64.powi(64)) < share
}

/// Corrections after this share of a skill's injections flag it…
pub const CORRECTION_RATE: f64 = 0.2;
/// …once there are at least this many.
pub const MIN_CORRECTIONS: u64 = 3;
/// Token overlap (Jaccard of the description and body vocabularies) from which two skills
/// are near-duplicates.
pub const DUPLICATE_JACCARD: f64 = 0.5;
/// Other skills BM25 ranks first for a skill's own name and description: the candidates
/// checked for overlap, so the check stays linear in the library size.
const DUPLICATE_CANDIDATES: usize = 5;

/// Two skills whose texts overlap so much that retrieval cannot tell them apart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DuplicatePair {
    pub a: String,
    pub b: String,
    /// Jaccard overlap of their vocabularies, 0..1.
    pub similarity: f64,
}

/// Near-duplicate skill pairs, most similar first. Uses the library's BM25 index to find
/// candidates and its tokenizer for the overlap.
pub fn duplicates(library: &Library) -> Vec<DuplicatePair> {
    let index = library.index();
    let skills = library.skills();
    let vocab: Vec<HashSet<String>> = skills
        .iter()
        .map(|s| {
            index
                .analyzer()
                .terms(&format!("{} {}", s.description, s.body))
                .into_iter()
                .collect()
        })
        .collect();
    let mut pairs: Vec<DuplicatePair> = Vec::new();
    let mut seen: HashSet<(usize, usize)> = HashSet::new();
    for (i, s) in skills.iter().enumerate() {
        let query = format!("{} {}", s.name.replace('-', " "), s.description);
        for (j, _) in index.search_top(&query, DUPLICATE_CANDIDATES + 1) {
            if j == i || !seen.insert((i.min(j), i.max(j))) {
                continue;
            }
            let union = vocab[i].union(&vocab[j]).count();
            if union == 0 {
                continue;
            }
            let similarity = vocab[i].intersection(&vocab[j]).count() as f64 / union as f64;
            if similarity >= DUPLICATE_JACCARD {
                let (a, b) = if skills[i].name <= skills[j].name {
                    (i, j)
                } else {
                    (j, i)
                };
                pairs.push(DuplicatePair {
                    a: skills[a].name.clone(),
                    b: skills[b].name.clone(),
                    similarity,
                });
            }
        }
    }
    pairs.sort_by(|x, y| {
        y.similarity
            .total_cmp(&x.similarity)
            .then_with(|| x.a.cmp(&y.a))
    });
    pairs
}

/// Whether a skill counts as idle: enabled, not injected since `cutoff`, while the turn log
/// goes back at least that far and the skill existed then.
pub fn is_idle(
    last_injected: Option<DateTime<Utc>>,
    created: Option<DateTime<Utc>>,
    log_since: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
    idle_days: u32,
) -> bool {
    let cutoff = now - Duration::days(i64::from(idle_days));
    let log_long_enough = log_since.is_some_and(|t| t <= cutoff);
    let old_enough = created.is_none_or(|t| t <= cutoff);
    log_long_enough && old_enough && last_injected.is_none_or(|t| t < cutoff)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arms(list: &[(EvidenceArm, u64, u64)]) -> HashMap<EvidenceArm, OutcomeCounts> {
        list.iter()
            .map(|&(a, turns, bad)| {
                (
                    a,
                    OutcomeCounts {
                        turns,
                        bad,
                        ..Default::default()
                    },
                )
            })
            .collect()
    }

    #[test]
    fn candidates_first_then_other_turns_then_not_enough_data() {
        let a = arms(&[
            (EvidenceArm::Injected, 8, 6),
            (EvidenceArm::BelowCut, 6, 1),
            (EvidenceArm::Holdout, 4, 1),
        ]);
        let e = assess(Some(&a), (1000, 100), 8);
        assert_eq!(e.comparison, Comparison::CandidateNotInjected);
        assert_eq!((e.without.turns, e.without.bad), (10, 2));
        assert_eq!((e.held_out, e.below_cut), (4, 6));
        assert_eq!(e.verdict, Verdict::SeemsToHurt);
        // Too few candidate turns: all other main turns.
        let e = assess(Some(&a), (1000, 100), 11);
        assert_eq!(e.comparison, Comparison::OtherTurns);
        assert_eq!((e.without.turns, e.without.bad), (992, 94));
        assert_eq!(e.verdict, Verdict::NotEnoughData);
        let none = assess(None, (0, 0), 20);
        assert_eq!(none.verdict, Verdict::NotEnoughData);
        assert!(none.estimate.is_none());
        let helps = arms(&[
            (EvidenceArm::Injected, 50, 2),
            (EvidenceArm::Holdout, 50, 20),
        ]);
        assert_eq!(
            assess(Some(&helps), (0, 0), 20).verdict,
            Verdict::SeemsToHelp
        );
        let even = arms(&[
            (EvidenceArm::Injected, 50, 10),
            (EvidenceArm::Holdout, 50, 11),
        ]);
        assert_eq!(
            assess(Some(&even), (0, 0), 20).verdict,
            Verdict::NoClearDifference
        );
    }

    #[test]
    fn holdout_is_deterministic_and_near_its_share() {
        assert!(!held_out("s", "k", 0.0));
        let n = 4000;
        let held = (0..n)
            .filter(|i| held_out(&format!("session-{i}"), "fix-flaky-tests", 0.2))
            .count();
        let share = held as f64 / n as f64;
        assert!((share - 0.2).abs() < 0.02, "{share}");
        for i in 0..50 {
            let s = format!("session-{i}");
            assert_eq!(held_out(&s, "x", 0.3), held_out(&s, "x", 0.3));
        }
    }

    #[test]
    fn idle_needs_a_long_enough_log() {
        let now = DateTime::parse_from_rfc3339("2026-06-30T00:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let days = |d| now - Duration::days(d);
        assert!(is_idle(None, None, Some(days(40)), now, 30));
        assert!(is_idle(Some(days(31)), None, Some(days(40)), now, 30));
        assert!(!is_idle(Some(days(29)), None, Some(days(40)), now, 30));
        assert!(!is_idle(None, None, Some(days(20)), now, 30));
        assert!(!is_idle(None, Some(days(10)), Some(days(40)), now, 30));
        assert!(!is_idle(None, None, None, now, 30));
    }
}
