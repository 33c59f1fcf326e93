//! `metaclaw skills …`: the same operations the dashboard calls, on the same core functions.

use std::sync::Arc;

use anyhow::{Context, Result, bail};
use metaclaw_config::Home;
use metaclaw_core::SkillService;
use metaclaw_skills::{Level, Sources};

use crate::cli::SkillsCommand;
use crate::output::say;

fn service(home: &Home) -> Result<(metaclaw_config::Config, Arc<SkillService>)> {
    let loaded = metaclaw_config::load(&home.config_path())?;
    home.ensure()?;
    let store = metaclaw_store::Store::open(home.db_path())
        .with_context(|| format!("could not open {}", home.db_path().display()))?;
    let service = SkillService::new(&loaded.config, home, Arc::new(store))?;
    Ok((loaded.config, service))
}

pub fn run(home: &Home, cmd: SkillsCommand) -> Result<()> {
    match cmd {
        SkillsCommand::List { category, json } => {
            let (_, svc) = service(home)?;
            let mut skills = svc.list();
            if let Some(c) = &category {
                skills.retain(|s| &s.category == c);
            }
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
            for p in svc
                .library()
                .problems()
                .iter()
                .filter(|p| p.level == Level::Error)
            {
                crate::output::warn(&format!("skipped {p}"));
            }
            Ok(())
        }
        SkillsCommand::Show { name } => {
            let (_, svc) = service(home)?;
            let lib = svc.library();
            let skill = lib
                .get(&name)
                .with_context(|| format!("no skill named `{name}` (see `metaclaw skills list`)"))?;
            say(&format!("# {}", skill.path.display()));
            let text = skill.file_text();
            say(text.trim_end());
            Ok(())
        }
        SkillsCommand::Search { query, json } => {
            let (config, svc) = service(home)?;
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let retrieval = runtime.block_on(svc.retrieve(&query));
            if json {
                say(&serde_json::to_string_pretty(&retrieval)?);
                return Ok(());
            }
            say(&format!(
                "mode {:?}, min_score {}, top_k {}",
                retrieval.mode, config.skills.min_score, config.skills.top_k
            ));
            if retrieval.candidates.is_empty() {
                say("no skill matches this request: nothing would be injected");
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
        SkillsCommand::Enable { name } => switch(home, &name, Some(true), None, "enabled"),
        SkillsCommand::Disable { name } => switch(home, &name, Some(false), None, "disabled"),
        SkillsCommand::Pin { name } => switch(home, &name, None, Some(true), "pinned"),
        SkillsCommand::Unpin { name } => switch(home, &name, None, Some(false), "unpinned"),
        SkillsCommand::Lint { dir } => lint(home, dir),
        cmd @ (SkillsCommand::Distil { .. }
        | SkillsCommand::Pending { .. }
        | SkillsCommand::Approve { .. }
        | SkillsCommand::Reject { .. }
        | SkillsCommand::Undo { .. }
        | SkillsCommand::History { .. }
        | SkillsCommand::Rollback { .. }) => run_evolution(home, cmd),
        SkillsCommand::Install => {
            let loaded = metaclaw_config::load(&home.config_path())?;
            let dir = loaded.config.skills_dir(home);
            let installed = metaclaw_skills::install_bundled(&dir)
                .with_context(|| format!("could not write to {}", dir.display()))?;
            say(&format!(
                "Installed {} skills into {} (existing ones kept).",
                installed.len(),
                dir.display()
            ));
            Ok(())
        }
    }
}

fn switch(
    home: &Home,
    name: &str,
    enabled: Option<bool>,
    pinned: Option<bool>,
    what: &str,
) -> Result<()> {
    let (_, svc) = service(home)?;
    svc.set_state(name, enabled, pinned)?;
    say(&format!("{name}: {what}"));
    Ok(())
}

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

fn evolution(
    home: &Home,
) -> Result<(
    Arc<SkillService>,
    Arc<metaclaw_core::Evolution>,
    Arc<metaclaw_store::Store>,
)> {
    let loaded = metaclaw_config::load(&home.config_path())?;
    home.ensure()?;
    let store = Arc::new(
        metaclaw_store::Store::open(home.db_path())
            .with_context(|| format!("could not open {}", home.db_path().display()))?,
    );
    let skills = SkillService::new(&loaded.config, home, store.clone())?;
    let (events, _) = tokio::sync::broadcast::channel(16);
    let evo = metaclaw_core::Evolution::new(&loaded.config, store.clone(), skills.clone(), events);
    Ok((skills, evo, store))
}

pub fn run_evolution(home: &Home, cmd: SkillsCommand) -> Result<()> {
    let (_, evo, store) = evolution(home)?;
    match cmd {
        SkillsCommand::Distil { session } => {
            let session = match session {
                Some(s) => s,
                None => store
                    .sessions(1)?
                    .into_iter()
                    .next()
                    .map(|s| s.id)
                    .context("no sessions recorded yet")?,
            };
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let report =
                runtime.block_on(evo.distil(&session, metaclaw_core::EvolutionTrigger::Manual))?;
            say(&format!(
                "session {session}: {} signals, run {}",
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
            let pending = evo.proposals(Some(metaclaw_store::ProposalStatus::Pending))?;
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
                if let Some(diff) = &p.diff {
                    say(diff.trim_end());
                } else {
                    say(p.content.trim_end());
                }
                say("");
            }
            Ok(())
        }
        SkillsCommand::Approve { id, edit, file } => {
            let edited = match (edit, file) {
                (_, Some(path)) => Some(
                    std::fs::read_to_string(&path)
                        .with_context(|| format!("could not read {}", path.display()))?,
                ),
                (true, None) => Some(edit_in_editor(&evo, id)?),
                (false, None) => None,
            };
            let v = evo.approve(id, edited)?;
            say(&format!(
                "Approved #{id}: `{}` is now version {} (generation {}).",
                v.skill_name, v.version, v.generation
            ));
            Ok(())
        }
        SkillsCommand::Reject { id, reason } => {
            evo.reject(id, reason)?;
            say(&format!("Rejected #{id}; it will not be proposed again."));
            Ok(())
        }
        SkillsCommand::Undo { id } => {
            let v = evo.undo(id)?;
            say(&format!(
                "Undid #{id}: `{}` is back as before (version {}).",
                v.skill_name, v.version
            ));
            Ok(())
        }
        SkillsCommand::History { name } => {
            let versions = evo.history(&name)?;
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
            let v = evo.rollback(&name, version)?;
            say(&format!(
                "`{name}` restored to v{version} (recorded as v{}).",
                v.version
            ));
            Ok(())
        }
        _ => unreachable!("not an evolution command"),
    }
}

fn edit_in_editor(evo: &metaclaw_core::Evolution, id: i64) -> Result<String> {
    let p = evo
        .proposals(None)?
        .into_iter()
        .find(|p| p.id == id)
        .with_context(|| format!("no proposal #{id}"))?;
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
    let (_, evo, _) = evolution(home)?;
    let value = if rating == "up" { 1 } else { -1 };
    evo.feedback(turn_id, value, note)?;
    say(&format!("Recorded thumbs {rating} on turn {turn_id}."));
    Ok(())
}
