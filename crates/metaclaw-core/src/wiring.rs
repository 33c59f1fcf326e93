//! Pointing the user's agent ("claw") at the proxy on start, and putting it back on
//! `stop --unwire` / `uninstall`. Shared by the daemon's CLI and the tray app.

use std::path::PathBuf;

use metaclaw_config::{ClawType, Config, Home};
use metaclaw_openclaw::{OpenClawCli, OpenClawError, WireSpec};

/// What wiring did, line by line, for the terminal or a notification.
#[derive(
    Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct WiringReport {
    pub lines: Vec<String>,
    /// Something the user has to do by hand (wiring was impossible or partial).
    pub manual: Option<String>,
}

fn state_path(home: &Home, claw: &str) -> PathBuf {
    home.root().join("wiring").join(format!("{claw}.json"))
}

/// The agents MetaClaw has wiring state for (it changed their configuration and can restore
/// it), by the names their state files carry.
pub fn wired_agents(home: &Home) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(home.root().join("wiring")) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            // OpenClaw keeps a snapshot file, the recipe claws a folder of backups.
            match name.strip_suffix(".json") {
                Some(stem) => Some(stem.to_owned()),
                None => e.file_type().ok()?.is_dir().then_some(name),
            }
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// An agent found on this machine, for the onboarding's "connect your agent" step.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct DetectedAgent {
    /// The `claw_type` that wires it.
    pub claw: ClawType,
    pub name: String,
    /// What shows it is installed: its CLI on PATH or its configuration folder.
    pub found: String,
    /// MetaClaw changed its configuration and can restore it.
    pub wired: bool,
}

/// The agents installed for this user: OpenClaw when its CLI is on PATH, the recipe claws
/// when their configuration (or its folder) exists or their program is on PATH. Reads files
/// and PATH only.
pub fn detect_agents(home: &Home) -> Vec<DetectedAgent> {
    let wired = wired_agents(home);
    let mut found = Vec::new();
    if let Some(cli) = OpenClawCli::from_env() {
        found.push(DetectedAgent {
            claw: ClawType::Openclaw,
            name: "OpenClaw".into(),
            found: cli.program.display().to_string(),
            wired: wired.iter().any(|w| w == "openclaw"),
        });
    }
    let Some(env) = metaclaw_claws::PathEnv::from_process() else {
        return found;
    };
    for recipe in metaclaw_claws::recipes() {
        let Ok(claw) = recipe.name().parse::<ClawType>() else {
            continue;
        };
        if let Some(path) = metaclaw_claws::installed(&recipe, &env) {
            found.push(DetectedAgent {
                claw,
                name: recipe.display_name().to_owned(),
                found: path.display().to_string(),
                wired: wired.iter().any(|w| w == recipe.name()),
            });
        }
    }
    found
}

fn env(key: &str) -> Option<String> {
    std::env::var(key).ok()
}

/// The proxy's address and key as agents should see them.
pub fn wire_spec(config: &Config, port: u16) -> WireSpec {
    let key = if config.proxy.api_key.is_empty() {
        "metaclaw".to_owned()
    } else {
        config.proxy.api_key.clone()
    };
    let window = config.advertised_context_window();
    WireSpec {
        base_url: format!("http://127.0.0.1:{port}/v1"),
        api_key: key,
        model: config.served_model().to_owned(),
        context_window: window,
        max_tokens: (window / 4).clamp(1024, 8192),
    }
}

fn openclaw_state_dir() -> PathBuf {
    env("OPENCLAW_STATE_DIR")
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(".openclaw")))
        .unwrap_or_else(|| PathBuf::from(".openclaw"))
}

fn openclaw_error(e: OpenClawError, spec: &WireSpec, report: &mut WiringReport) {
    report.lines.push(format!("OpenClaw was not wired: {e}"));
    report.manual = Some(metaclaw_openclaw::manual_steps(spec));
}

/// Wire the configured agents, each in turn. Never fails the start: problems become report
/// lines.
pub fn wire(config: &Config, home: &Home, port: u16) -> WiringReport {
    let mut report = WiringReport::default();
    let spec = wire_spec(config, port);
    if config.claw_type.is_none() {
        report
            .lines
            .push("claw_type is none: no agent wired (point it at the proxy yourself)".into());
    }
    for claw in config.claw_type.agents() {
        // Each agent is wired with its own key, so the proxy knows who is calling.
        let spec = WireSpec {
            api_key: crate::agents::key_for(config, claw.as_str()),
            ..spec.clone()
        };
        match claw {
            ClawType::Openclaw => wire_openclaw(&spec, home, &mut report),
            other => crate::claws::wire(other, config, &spec, home, &mut report),
        }
    }
    report
}

fn wire_openclaw(spec: &WireSpec, home: &Home, report: &mut WiringReport) {
    match OpenClawCli::from_env() {
        None => openclaw_error(OpenClawError::NotInstalled, spec, report),
        Some(cli) => match metaclaw_openclaw::wire(
            &cli,
            spec,
            &state_path(home, "openclaw"),
            &openclaw_state_dir(),
            &env,
        ) {
            Ok(lines) => report.lines.extend(lines),
            Err(e) => openclaw_error(e, spec, report),
        },
    }
}

/// Restore the agents' own configuration where it is still ours: every configured agent
/// and every agent MetaClaw still holds wiring state for (one dropped from `claw_type`
/// since it was wired is put back too).
pub fn unwire(config: &Config, home: &Home) -> WiringReport {
    let mut report = WiringReport::default();
    let mut agents: Vec<ClawType> = config.claw_type.agents().collect();
    for name in wired_agents(home) {
        if let Ok(claw) = name.parse::<ClawType>()
            && claw != ClawType::None
            && !agents.contains(&claw)
        {
            agents.push(claw);
        }
    }
    if agents.is_empty() {
        report
            .lines
            .push("claw_type is none: nothing to unwire".into());
    }
    for claw in agents {
        match claw {
            ClawType::Openclaw => unwire_openclaw(home, &mut report),
            other => crate::claws::unwire(other, home, &mut report),
        }
    }
    report
}

fn unwire_openclaw(home: &Home, report: &mut WiringReport) {
    let path = state_path(home, "openclaw");
    if !path.exists() {
        report
            .lines
            .push("OpenClaw was not wired by MetaClaw; nothing to restore".into());
        return;
    }
    match OpenClawCli::from_env() {
        None => report.lines.push(format!(
            "openclaw is not on PATH, so its config was not restored; the saved values are in {}",
            path.display()
        )),
        Some(cli) => match metaclaw_openclaw::unwire(&cli, &path) {
            Ok(lines) => report.lines.extend(lines),
            Err(e) => report.lines.push(format!(
                "restoring OpenClaw failed: {e}; the saved values are in {}",
                path.display()
            )),
        },
    }
}
