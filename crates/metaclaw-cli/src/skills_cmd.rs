//! `metaclaw skills …` and `metaclaw feedback`: the dashboard's operations, on the running core
//! (or on the home directory when nothing runs).

use anyhow::{Context, Result, bail};
use metaclaw_config::Home;
use metaclaw_core::api::NoInput;
use metaclaw_core::api::ops::config::GetConfig;
use metaclaw_core::api::ops::proposals::{
    Approve, ApproveInput, Distil, DistilInput, GetProposal, ListProposals, ProposalFilter, Reject,
    RejectInput, Undo,
};
use metaclaw_core::api::ops::sessions::{FeedbackInput, SetFeedback};
use metaclaw_core::api::ops::skills::{
    GetLibrary, GetSkill, InstallBundled, ListSkills, RetrievalInput, RollbackInput, RollbackSkill,
    SetSkillState, SkillFilter, SkillHistory, SkillSwitches, TryRetrieval,
};
use metaclaw_skills::{Level, Sources};

use crate::cli::SkillsCommand;
use crate::connection::Core;
use crate::output::say;

pub fn run(home: &Home, cmd: SkillsCommand) -> Result<()> {
    match cmd {
        SkillsCommand::Lint { dir } => lint(home, dir),
        cmd => {
            let core = Core::connect(home)?;
            run_on(&core, cmd)
        }
    }
}

fn run_on(core: &Core, cmd: SkillsCommand) -> Result<()> {
    match cmd {
        SkillsCommand::List { category, json } => {
            let skills = core.call::<ListSkills>(
                (),
                SkillFilter {
                    q: None,
                    category,
                    agent: None,
                },
            )?;
            if json {
                say(&serde_json::to_string_pretty(&skills)?);
                return Ok(());
            }
            for s in &skills {
                let flags = match (s.enabled, s.pinned) {
                    (false, _) => " [disabled]",
                    (true, true) => " [pinned]",
                    _ => "",
                };
                let source = match s.source {
                    metaclaw_skills::SkillSource::User => "user",
                    metaclaw_skills::SkillSource::Bundled => "bundled",
                };
                let usage = if s.injected > 0 {
                    format!(
                        "  injected {}x, up {} down {}",
                        s.injected, s.thumbs_up, s.thumbs_down
                    )
                } else {
                    String::new()
                };
                say(&format!(
                    "{:<34} {:<16} {:<8}{flags}{usage}",
                    s.name, s.category, source
                ));
            }
            say(&format!("{} skills", skills.len()));
            let library = core.call::<GetLibrary>((), NoInput {})?;
            for p in library.problems.iter().filter(|p| p.level == Level::Error) {
                crate::output::warn(&format!("skipped {p}"));
            }
            Ok(())
        }
        SkillsCommand::Show { name } => {
            let detail = core.call::<GetSkill>(name, NoInput {})?;
            say(&format!("# {}", detail.skill.path));
            say(detail.content.trim_end());
            Ok(())
        }
        SkillsCommand::Search { query, json } => {
            let retrieval = core.call::<TryRetrieval>((), RetrievalInput { query })?;
            if json {
                say(&serde_json::to_string_pretty(&retrieval)?);
                return Ok(());
            }
            let c = core.call::<GetConfig>((), NoInput {})?;
            say(&format!(
                "mode {:?}, min_score {}, top_k {}",
                retrieval.mode, c.skills.min_score, c.skills.top_k
            ));
            if retrieval.candidates.is_empty() {
                say("no skill matches this request: nothing would be injected");
            } else if !retrieval.candidates.iter().any(|c| c.injected) {
                say("no skill is relevant enough: nothing would be injected");
            }
            for c in retrieval.candidates.iter().take(15) {
                let mark = if c.injected { "inject" } else { "skip  " };
                say(&format!(
                    "{mark} {:>7.2}  {:<34} {}",
                    c.score, c.name, c.reason
                ));
            }
            Ok(())
        }
        SkillsCommand::Enable { name } => switch(core, name, Some(true), None, "enabled"),
        SkillsCommand::Disable { name } => switch(core, name, Some(false), None, "disabled"),
        SkillsCommand::Pin { name } => switch(core, name, None, Some(true), "pinned"),
        SkillsCommand::Unpin { name } => switch(core, name, None, Some(false), "unpinned"),
        SkillsCommand::Install => {
            let installed = core.call::<InstallBundled>((), NoInput {})?;
            say(&format!(
                "Installed {} skills into {} (existing ones kept).",
                installed.installed.len(),
                installed.dir
            ));
            Ok(())
        }
        SkillsCommand::Distil { session } => {
            let report = core.call::<Distil>(
                (),
                DistilInput {
                    session_id: session,
                },
            )?;
            say(&format!(
                "session {}: {} signals, run {}",
                report.session_id,
                report.signals.len(),
                report.status.as_str()
            ));
            for s in &report.signals {
                say(&format!(
                    "  signal {:?} on turn {}: {}",
                    s.kind, s.turn_id, s.detail
                ));
            }
            for d in &report.dropped {
                say(&format!("  dropped `{}`: {}", d.name, d.reason));
            }
            if let Some(e) = &report.error {
                say(&format!("  {e}"));
            }
            if !report.proposals.is_empty() {
                say(&format!(
                    "{} proposal(s) waiting: `metaclaw skills pending`",
                    report.proposals.len()
                ));
            }
            if report.status == metaclaw_store::EvolutionRunStatus::Failed {
                bail!(
                    "skill evolution failed: {}",
                    report.error.unwrap_or_default()
                );
            }
            Ok(())
        }
        SkillsCommand::Pending { json } => {
            let pending = core.call::<ListProposals>(
                (),
                ProposalFilter {
                    status: Some("pending".into()),
                    // A review inbox larger than one page is read in full.
                    limit: Some(metaclaw_core::api::ops::proposals::MAX_PROPOSALS_PAGE),
                    offset: None,
                    agent: None,
                },
            )?;
            if json {
                say(&serde_json::to_string_pretty(&pending)?);
                return Ok(());
            }
            if pending.is_empty() {
                say("No proposals waiting for review.");
            }
            for p in &pending {
                say(&format!(
                    "#{} {} `{}` from session {} — {}",
                    p.id,
                    p.kind.as_str(),
                    p.skill_name,
                    p.session_id.as_deref().unwrap_or("-"),
                    p.reason
                ));
                say(p.diff.as_deref().unwrap_or(&p.content).trim_end());
                say("");
            }
            Ok(())
        }
        SkillsCommand::Approve { id, edit, file } => {
            let content = match (edit, file) {
                (_, Some(path)) => Some(
                    std::fs::read_to_string(&path)
                        .with_context(|| format!("could not read {}", path.display()))?,
                ),
                (true, None) => Some(edit_in_editor(core, id)?),
                (false, None) => None,
            };
            let v = core.call::<Approve>(id, ApproveInput { content })?;
            say(&format!(
                "Approved #{id}: `{}` is now version {} (generation {}).",
                v.skill_name, v.version, v.generation
            ));
            Ok(())
        }
        SkillsCommand::Reject { id, reason } => {
            core.call::<Reject>(id, RejectInput { reason })?;
            say(&format!("Rejected #{id}; it will not be proposed again."));
            Ok(())
        }
        SkillsCommand::Undo { id } => {
            let v = core.call::<Undo>(id, NoInput {})?;
            say(&format!(
                "Undid #{id}: `{}` is back as before (version {}).",
                v.skill_name, v.version
            ));
            Ok(())
        }
        SkillsCommand::History { name } => {
            let versions = core.call::<SkillHistory>(name.clone(), NoInput {})?;
            if versions.is_empty() {
                say(&format!(
                    "`{name}` has no recorded versions (it was never changed through MetaClaw)."
                ));
            }
            for v in versions {
                let state = if v.content.is_empty() {
                    " (absent)"
                } else {
                    ""
                };
                say(&format!(
                    "v{}  {}  {:<8} {:<8} generation {}{state}",
                    v.version,
                    v.created_at.format("%Y-%m-%d %H:%M"),
                    v.author.as_str(),
                    v.action.as_str(),
                    v.generation
                ));
            }
            Ok(())
        }
        SkillsCommand::Rollback { name, version } => {
            let v = core.call::<RollbackSkill>(name.clone(), RollbackInput { version })?;
            say(&format!(
                "`{name}` restored to v{version} (recorded as v{}).",
                v.version
            ));
            Ok(())
        }
        SkillsCommand::Lint { .. } => unreachable!("lint reads files and runs without a core"),
    }
}

fn switch(
    core: &Core,
    name: String,
    enabled: Option<bool>,
    pinned: Option<bool>,
    what: &str,
) -> Result<()> {
    core.call::<SetSkillState>(name.clone(), SkillSwitches { enabled, pinned })?;
    say(&format!("{name}: {what}"));
    Ok(())
}

/// Lint reads SKILL.md files only; it needs no running core.
fn lint(home: &Home, dir: Option<std::path::PathBuf>) -> Result<()> {
    let findings = match dir {
        Some(dir) => {
            if !dir.is_dir() {
                bail!("{} is not a folder", dir.display());
            }
            metaclaw_skills::lint_dir(&dir)
        }
        None => {
            let loaded = metaclaw_config::load(&home.config_path())?;
            let sources = Sources {
                user_dir: Some(loaded.config.skills_dir(home)),
                bundled: true,
            };
            metaclaw_skills::Library::load(&sources).problems().to_vec()
        }
    };
    for f in &findings {
        say(&f.to_string());
    }
    let errors = findings.iter().filter(|f| f.level == Level::Error).count();
    let warnings = findings.len() - errors;
    say(&format!("{errors} errors, {warnings} warnings"));
    if errors > 0 {
        bail!("{errors} skill(s) have errors");
    }
    Ok(())
}

fn edit_in_editor(core: &Core, id: i64) -> Result<String> {
    let p = core.call::<GetProposal>(id, NoInput {})?;
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("SKILL.md");
    std::fs::write(&path, &p.content)?;
    let editor = std::env::var("VISUAL")
        .or_else(|_| std::env::var("EDITOR"))
        .unwrap_or_else(|_| "vi".into());
    let status = std::process::Command::new(&editor)
        .arg(&path)
        .status()
        .with_context(|| format!("could not run the editor `{editor}`"))?;
    if !status.success() {
        bail!("the editor exited with {status}; nothing approved");
    }
    Ok(std::fs::read_to_string(&path)?)
}

pub fn feedback(home: &Home, turn_id: &str, rating: &str, note: Option<String>) -> Result<()> {
    let core = Core::connect(home)?;
    let value = if rating == "up" { 1 } else { -1 };
    core.call::<SetFeedback>(
        turn_id.to_owned(),
        FeedbackInput {
            rating: value,
            note,
        },
    )?;
    say(&format!("Recorded thumbs {rating} on turn {turn_id}."));
    Ok(())
}
