//! The Skill health report: every skill's evidence, and the skills that need a look (seem
//! to hurt, idle, near-duplicates, followed by corrections). Reads only per-skill aggregates
//! the store keeps by trigger, so its cost follows the library, not the turn log.

use std::collections::HashSet;

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::SkillError;
use crate::evidence::{self, DuplicatePair, SkillEvidence, Verdict};
use crate::skills::SkillService;

/// Why a skill is listed for attention.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HealthFlag {
    /// The interval of the bad-outcome difference is entirely on the harmful side.
    Hurts,
    /// Not injected in `idle_days` days.
    Idle,
    /// Overlaps another skill (see `duplicates`).
    Duplicate,
    /// The user corrected the agent after many of its injections.
    Corrected,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SkillHealthRow {
    pub name: String,
    pub category: String,
    pub enabled: bool,
    pub evidence: SkillEvidence,
    pub last_injected_at: Option<DateTime<Utc>>,
    /// Corrections after its injections, as a share of them; `None` when never injected.
    pub correction_rate: Option<f64>,
    pub flags: Vec<HealthFlag>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SkillHealthReport {
    /// Turns each side of a comparison needs (`skills.evidence_min_turns`).
    pub min_turns: u64,
    pub idle_days: u32,
    /// The oldest stored turn: nothing older can be judged.
    pub log_since: Option<DateTime<Utc>>,
    /// Share of eligible conversations a retrieved skill is withheld from.
    pub holdout_share: f64,
    /// Every skill in effect; flagged ones first, then by name.
    pub skills: Vec<SkillHealthRow>,
    pub duplicates: Vec<DuplicatePair>,
}

/// Builds the report for the skills in effect.
pub fn report(
    service: &SkillService,
    min_turns: u64,
    idle_days: u32,
    holdout_share: f64,
    now: DateTime<Utc>,
) -> Result<SkillHealthReport, SkillError> {
    let store = service.store();
    let counts = store.skill_evidence()?;
    let totals = store.outcome_totals()?;
    let usage = store.skill_stats()?;
    let created = store.skill_first_versions()?;
    let log_since = store.first_turn_at()?;
    let infos = service.list();
    let on: HashSet<&str> = infos
        .iter()
        .filter(|s| s.enabled)
        .map(|s| s.name.as_str())
        .collect();
    let duplicates: Vec<DuplicatePair> = service
        .duplicates()
        .iter()
        .filter(|d| on.contains(d.a.as_str()) && on.contains(d.b.as_str()))
        .cloned()
        .collect();
    let mut skills: Vec<SkillHealthRow> = infos
        .iter()
        .map(|info| {
            let evidence = evidence::assess(counts.get(&info.name), totals, min_turns);
            let last = usage.get(&info.name).and_then(|u| u.last_injected_at);
            let with = evidence.with;
            let correction_rate =
                (with.turns > 0).then(|| with.corrected as f64 / with.turns as f64);
            let mut flags = Vec::new();
            if evidence.verdict == Verdict::SeemsToHurt {
                flags.push(HealthFlag::Hurts);
            }
            if info.enabled
                && evidence::is_idle(
                    last,
                    created.get(&info.name).copied(),
                    log_since,
                    now,
                    idle_days,
                )
            {
                flags.push(HealthFlag::Idle);
            }
            if duplicates
                .iter()
                .any(|d| d.a == info.name || d.b == info.name)
            {
                flags.push(HealthFlag::Duplicate);
            }
            if with.corrected >= evidence::MIN_CORRECTIONS
                && correction_rate.is_some_and(|r| r >= evidence::CORRECTION_RATE)
            {
                flags.push(HealthFlag::Corrected);
            }
            SkillHealthRow {
                name: info.name.clone(),
                category: info.category.clone(),
                enabled: info.enabled,
                evidence,
                last_injected_at: last,
                correction_rate,
                flags,
            }
        })
        .collect();
    skills.sort_by(|a, b| {
        a.flags
            .is_empty()
            .cmp(&b.flags.is_empty())
            .then_with(|| a.name.cmp(&b.name))
    });
    Ok(SkillHealthReport {
        min_turns,
        idle_days,
        log_since,
        holdout_share,
        skills,
        duplicates,
    })
}
