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
                say(&format!(
                    "{:<34} {:<16} {:<8}{flags}",
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
            // The file as written, not a re-rendering of it.
            let text = match skill.source {
                metaclaw_skills::SkillSource::User => {
                    std::fs::read_to_string(&skill.path).unwrap_or_else(|_| skill.render())
                }
                metaclaw_skills::SkillSource::Bundled => metaclaw_skills::bundled_files()
                    .into_iter()
                    .find(|(folder, _)| *folder == skill.name)
                    .map_or_else(|| skill.render(), |(_, text)| text.to_owned()),
            };
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
