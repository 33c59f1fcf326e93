//! `metaclaw setup`: the first-run wizard, or the same answers given as flags.

use std::io::IsTerminal;

use anyhow::{Context, Result, bail};
use dialoguer::{Input, MultiSelect, Password, Select};
use metaclaw_config::{ClawTypes, Document, Home};
use serde_json::{Value, json};

use crate::cli::{ModeArg, SetupArgs};
use crate::output::say;
use metaclaw_config::preset::{self, PRESETS, Preset, find};
use metaclaw_core::wiring::DetectedAgent;

const MODES: [ModeArg; 3] = [ModeArg::SkillsOnly, ModeArg::Rl, ModeArg::Auto];

pub fn run(home: &Home, args: SetupArgs) -> Result<()> {
    home.ensure()?;
    let path = home.config_path();
    let loaded = metaclaw_config::load(&path).with_context(|| {
        format!(
            "the existing {} is invalid; fix or remove it first",
            path.display()
        )
    })?;
    let mut doc = loaded.document;
    let interactive = !args.non_interactive && std::io::stdin().is_terminal();
    let args_install = args.install_skills;
    // The agents installed here, and whether the user ever chose which ones `start` wires.
    let detected = metaclaw_core::wiring::detect_agents(home);
    let agents_given = args.agents.is_some();
    let agents_chosen = doc.get("claw_type").is_some() || agents_given;
    let answers = if interactive {
        ask(&doc, args, &detected, &loaded.config.claw_type)?
    } else {
        from_flags(&doc, args)?
    };

    doc.set("mode", json!(answers.mode.as_str()))?;
    // The same keys the dashboard's onboarding saves through the settings path.
    for (key, value) in preset::endpoint_changes(
        answers.provider.provider,
        &answers.api_base,
        &answers.model,
        answers.api_key.as_deref(),
    ) {
        doc.set(&key, value)?;
    }
    if let Some(own) = answers.own_sign_in {
        let method = if own {
            metaclaw_config::AuthMethod::Passthrough
        } else {
            metaclaw_config::AuthMethod::ApiKey
        };
        let (key, value) = preset::sign_in_change(method);
        doc.set(&key, value)?;
    }
    if let Some(port) = answers.port {
        doc.set("proxy.port", json!(port))?;
    }
    if let Some(agents) = &answers.agents {
        doc.set("claw_type", json!(agents.trim()))?;
    }
    if doc.get("proxy.host").is_none() {
        doc.set("proxy.host", json!("127.0.0.1"))?;
    }
    let has_proxy_key = doc
        .get("proxy.api_key")
        .and_then(Value::as_str)
        .is_some_and(|k| !k.is_empty());
    if !has_proxy_key {
        doc.set("proxy.api_key", json!(generate_key()))?;
    }
    if doc.get("skills.retrieval_mode").is_none() {
        doc.set("skills.retrieval_mode", json!("bm25"))?;
    }
    let (config, warnings) = metaclaw_config::validate(&doc)?;
    metaclaw_config::save(&path, &doc)?;
    let skills_dir = config.skills_dir(home);
    std::fs::create_dir_all(&skills_dir).with_context(|| {
        format!(
            "could not create the skills directory {}",
            skills_dir.display()
        )
    })?;
    let install = args_install
        || (interactive
            && dialoguer::Confirm::new()
                .with_prompt(format!(
                    "Copy the {} built-in skills into {} so you can edit them?",
                    metaclaw_skills::bundled_files().len(),
                    skills_dir.display()
                ))
                .default(true)
                .interact()?);
    if install {
        let n = metaclaw_skills::install_bundled(&skills_dir)
            .with_context(|| format!("could not write to {}", skills_dir.display()))?
            .len();
        say(&format!(
            "Installed {n} built-in skills into {} (existing ones kept).",
            skills_dir.display()
        ));
    }

    for w in warnings {
        crate::output::warn(&w.to_string());
    }
    if let Some(w) = metaclaw_core::onboarding::own_endpoint_warning(&config) {
        crate::output::warn(&w);
    }
    say(&format!("Wrote {} (mode 0600).", path.display()));
    say(&format!(
        "  provider  {}  ({})",
        answers.provider.name, config.llm.api_base
    ));
    say(&format!("  model     {}", config.served_model()));
    if config.llm.auth_method == metaclaw_config::AuthMethod::Passthrough {
        say("  sign-in   your agent's own (pass-through)");
    }
    say(&format!("  mode      {}", answers.mode.as_str()));
    say(&format!(
        "  proxy     http://127.0.0.1:{}/v1",
        config.proxy.port
    ));
    say(&format!("  skills    {}", skills_dir.display()));
    say(&format!("  agents    {}", config.claw_type));
    let unwired: Vec<&DetectedAgent> = detected
        .iter()
        .filter(|a| !config.claw_type.contains(a.claw))
        .collect();
    // Said once the choice is left to defaults or earlier runs, never right after one.
    if !interactive && !agents_given && !unwired.is_empty() {
        // The default (OpenClaw) counts only when it is installed; a choice always counts.
        let mut wanted: Vec<String> = config
            .claw_type
            .agents()
            .filter(|c| agents_chosen || detected.iter().any(|a| a.claw == *c))
            .map(|c| c.to_string())
            .collect();
        wanted.extend(unwired.iter().map(|a| a.claw.to_string()));
        let names: Vec<&str> = unwired.iter().map(|a| a.name.as_str()).collect();
        say(&format!(
            "Found here but not wired by `metaclaw start`: {}. To wire: `metaclaw setup --agents {}`.",
            names.join(", "),
            wanted.join(",")
        ));
    }
    say("Next: `metaclaw start`.");
    Ok(())
}

struct Answers {
    provider: &'static Preset,
    api_base: String,
    model: String,
    /// `None` keeps the stored key.
    api_key: Option<String>,
    /// "Use my agent's own sign-in"; `None` keeps the stored choice.
    own_sign_in: Option<bool>,
    /// The new `claw_type`; `None` keeps the stored one.
    agents: Option<String>,
    mode: ModeArg,
    port: Option<u16>,
}

fn current(doc: &Document, key: &str) -> Option<String> {
    doc.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

fn preset_arg(name: &str) -> Result<&'static Preset> {
    find(name).with_context(|| {
        format!(
            "unknown provider `{name}` (allowed: {})",
            preset::names().join(", ")
        )
    })
}

fn from_flags(doc: &Document, args: SetupArgs) -> Result<Answers> {
    let provider_name = args
        .provider
        .or_else(|| current(doc, "llm.provider"))
        .unwrap_or_else(|| "custom".into());
    let provider = preset_arg(&provider_name)?;
    let api_base = args
        .api_base
        .or_else(|| (!provider.api_base.is_empty()).then(|| provider.api_base.to_owned()))
        .or_else(|| current(doc, "llm.api_base"));
    let Some(api_base) = api_base else {
        bail!(
            "provider `{}` needs --api-base (the OpenAI-compatible base URL, e.g. http://localhost:8000/v1)",
            provider.name
        );
    };
    let model = args
        .model
        .or_else(|| current(doc, "llm.model_id"))
        .or_else(|| (!provider.model.is_empty()).then(|| provider.model.to_owned()))
        .unwrap_or_default();
    let mode = args
        .mode
        .or_else(|| current(doc, "mode").and_then(|m| mode_from_str(&m)))
        .unwrap_or(ModeArg::SkillsOnly);
    Ok(Answers {
        provider,
        api_base,
        model,
        api_key: args.api_key,
        own_sign_in: args.own_sign_in.then_some(true),
        mode,
        port: args.port,
        agents: args.agents,
    })
}

fn mode_from_str(s: &str) -> Option<ModeArg> {
    MODES.into_iter().find(|m| m.as_str() == s)
}

fn ask(
    doc: &Document,
    args: SetupArgs,
    detected: &[DetectedAgent],
    configured: &ClawTypes,
) -> Result<Answers> {
    say("MetaClaw setup. Press Enter to keep the value in brackets.");
    let provider = match args.provider {
        Some(p) => preset_arg(&p)?,
        None => {
            let labels: Vec<&str> = PRESETS.iter().map(|p| p.label).collect();
            let stored = current(doc, "llm.provider")
                .and_then(|p| p.parse::<metaclaw_config::LlmProvider>().ok())
                .map(|p| preset::matching(p, &current(doc, "llm.api_base").unwrap_or_default()));
            let default = stored
                .and_then(|s| PRESETS.iter().position(|x| x.name == s.name))
                .unwrap_or(0);
            let i = Select::new()
                .with_prompt("LLM provider")
                .items(&labels)
                .default(default)
                .interact()?;
            &PRESETS[i]
        }
    };
    let base_default = match current(doc, "llm.api_base") {
        Some(b) if current(doc, "llm.provider").as_deref() == Some(provider.provider.as_str()) => b,
        _ => provider.api_base.to_owned(),
    };
    let api_base = match args.api_base {
        Some(b) => b,
        None => Input::new()
            .with_prompt("API base URL")
            .with_initial_text(base_default)
            .validate_with(|s: &String| {
                if s.starts_with("http://") || s.starts_with("https://") {
                    Ok(())
                } else {
                    Err("must start with http:// or https://")
                }
            })
            .interact_text()?,
    };
    let model = match args.model {
        Some(m) => m,
        None => Input::new()
            .with_prompt("Model id")
            .with_initial_text(
                current(doc, "llm.model_id").unwrap_or_else(|| provider.model.to_owned()),
            )
            .interact_text()?,
    };
    let own_sign_in = args.own_sign_in
        || dialoguer::Confirm::new()
            .with_prompt(
                "Use your agent's own sign-in (e.g. a Claude Pro/Max subscription) for its requests?",
            )
            .default(current(doc, "llm.auth_method").as_deref() == Some("passthrough"))
            .interact()?;
    let api_key = match args.api_key {
        Some(k) => Some(k),
        None => {
            let has = current(doc, "llm.api_key").is_some();
            let prompt = match (own_sign_in, has) {
                (true, true) => {
                    "MetaClaw's own API key, for learning skills, the judge and status checks (Enter keeps the stored one)"
                }
                (true, false) => {
                    "MetaClaw's own API key, for learning skills, the judge and status checks (Enter for none)"
                }
                (false, true) => "API key (Enter keeps the stored one)",
                (false, false) => "API key (Enter for none)",
            };
            let k = Password::new()
                .with_prompt(prompt)
                .allow_empty_password(true)
                .interact()?;
            (!k.is_empty() || !has).then_some(k)
        }
    };
    let mode = match args.mode {
        Some(m) => m,
        None => {
            let labels = [
                "skills_only: skills injected, no training",
                "rl: + live RL training",
                "auto: RL only while you are away",
            ];
            let default = current(doc, "mode")
                .and_then(|m| MODES.iter().position(|x| x.as_str() == m))
                .unwrap_or(0);
            MODES[Select::new()
                .with_prompt("Mode")
                .items(labels)
                .default(default)
                .interact()?]
        }
    };
    let port = match args.port {
        Some(p) => Some(p),
        None => {
            let current_port = doc
                .get("proxy.port")
                .and_then(Value::as_u64)
                .unwrap_or(30000);
            Some(
                Input::<u16>::new()
                    .with_prompt("Proxy port")
                    .default(current_port as u16)
                    .interact_text()?,
            )
        }
    };
    let agents = match args.agents {
        Some(a) => Some(a),
        None => ask_agents(doc, detected, configured)?,
    };
    Ok(Answers {
        provider,
        api_base,
        model,
        api_key,
        own_sign_in: Some(own_sign_in),
        mode,
        port,
        agents,
    })
}

/// Which of the agents found on this machine `start` should wire: those already configured
/// stay ticked, and on a first setup every one found is. Nothing to ask when none is found.
fn ask_agents(
    doc: &Document,
    detected: &[DetectedAgent],
    configured: &ClawTypes,
) -> Result<Option<String>> {
    if detected.is_empty() {
        return Ok(None);
    }
    let stored = doc.get("claw_type").is_some();
    let labels: Vec<String> = detected
        .iter()
        .map(|a| format!("{} ({})", a.name, a.found))
        .collect();
    let ticked: Vec<bool> = detected
        .iter()
        .map(|a| !stored || configured.contains(a.claw))
        .collect();
    let chosen = MultiSelect::new()
        .with_prompt("Agents that use MetaClaw (space toggles, Enter accepts)")
        .items(&labels)
        .defaults(&ticked)
        .interact()?;
    // Agents the user configured that are not installed now stay; the default does not.
    let mut agents: Vec<String> = configured
        .agents()
        .filter(|c| stored && !detected.iter().any(|a| a.claw == *c))
        .map(|c| c.to_string())
        .collect();
    agents.extend(chosen.into_iter().map(|i| detected[i].claw.to_string()));
    Ok(Some(if agents.is_empty() {
        "none".to_owned()
    } else {
        agents.join(", ")
    }))
}

fn generate_key() -> String {
    let bytes: [u8; 24] = rand::random();
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("mc-{hex}")
}
