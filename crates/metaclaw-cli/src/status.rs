//! `metaclaw status`.

use std::time::Duration;

use anyhow::Result;
use chrono::{TimeZone, Utc};
use metaclaw_config::Home;
use metaclaw_domain::{Clock, SystemClock};
use metaclaw_llm::{ErrorKind, LlmClient, Probe};
use serde_json::{Value, json};

use metaclaw_core::api::NoInput;
use metaclaw_core::api::ops::status::{GetStatus, Status};

use crate::cli::StatusArgs;
use crate::connection::Core;
use crate::daemon::{is_running, read_state};
use crate::output::say;

pub fn run(home: &Home, args: &StatusArgs) -> Result<()> {
    let loaded = metaclaw_config::load(&home.config_path())?;
    let config = loaded.config;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;

    let running = is_running(home);
    let state = read_state(home).filter(|_| running);
    // The running core answers for itself; a stopped one is summarised from its database,
    // opened read-only (status never writes to a home).
    let live: Option<Status> = state.as_ref().and_then(|_| {
        Core::running(home, "metaclaw start", Duration::from_secs(5))
            .ok()?
            .call::<GetStatus>((), NoInput {})
            .ok()
    });
    let upstream = runtime.block_on(probe_upstream(&config));
    // Keys are masked by the listing itself: status never prints one whole.
    let agent_list = metaclaw_core::agents::list(&config, home, &[]);
    let (turns_today, evolution, rl) = match &live {
        Some(s) => (
            Some(s.counts.turns_today),
            json!({"pending_proposals": s.counts.pending_proposals, "last_evolution_failure": s.last_evolution_failure}),
            Some(serde_json::to_value(&s.rl)?),
        ),
        None => (turns_today(home), evolution_summary(home), None),
    };

    let report = json!({
        "running": running,
        "healthy": live.is_some(),
        "pid": state.as_ref().map(|s| s.pid),
        "port": state.as_ref().map_or(config.proxy.port, |s| s.port),
        "mode": live.as_ref().map(|s| s.mode).unwrap_or(config.mode),
        "uptime_s": live.as_ref().map(|s| s.uptime_s),
        "upstream": {"url": config.llm.api_base, "reachable": upstream.0, "detail": upstream.1},
        "turns_today": turns_today,
        "log": {"path": home.log_path(), "bytes": std::fs::metadata(home.log_path()).ok().map(|m| m.len())},
        "skills": evolution,
        "agents": {
            "configured": config.claw_type.agents().map(|c| c.as_str()).collect::<Vec<_>>(),
            "wired": metaclaw_core::wiring::wired_agents(home),
            "list": agent_list,
        },
        "warnings": metaclaw_core::api::ops::status::config_warnings(&config),
        "rl": rl.clone().unwrap_or_else(|| json!({
            "phase": "off",
            "missing": metaclaw_rl::readiness::missing(&config)
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            "warnings": metaclaw_rl::readiness::warnings(&config),
        })),
    });
    if args.json {
        say(&serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    let status_line = match (running, report["healthy"].as_bool() == Some(true)) {
        (true, true) => "running".to_owned(),
        (true, false) => "starting (or not answering /healthz)".to_owned(),
        (false, _) => "stopped".to_owned(),
    };
    say(&format!("MetaClaw   {status_line}"));
    if let Some(s) = &state {
        say(&format!("pid        {}", s.pid));
        say(&format!("proxy      http://{}:{}/v1", s.host, s.port));
    } else {
        say(&format!("port       {} (configured)", config.proxy.port));
    }
    say(&format!(
        "mode       {}",
        report["mode"].as_str().unwrap_or("?")
    ));
    if let Some(up) = report["uptime_s"].as_f64() {
        say(&format!("uptime     {}", human_duration(up)));
    }
    say(&format!(
        "upstream   {} — {}",
        if config.llm.api_base.is_empty() {
            "(not set)"
        } else {
            &config.llm.api_base
        },
        upstream.1
    ));
    let wired = metaclaw_core::wiring::wired_agents(home);
    say(&format!(
        "agents     {}{}",
        config.claw_type,
        if wired.is_empty() {
            String::new()
        } else {
            format!(" (wired now: {})", wired.join(", "))
        }
    ));
    for a in &agent_list {
        say(&format!("  {}", agent_line(a)));
    }
    for warning in metaclaw_core::api::ops::status::config_warnings(&config) {
        say(&format!("warning    {warning}"));
    }
    if config.mode.is_rl() || rl.as_ref().is_some_and(|r| r["phase"] != "off") {
        say(&format!("rl         {}", rl_line(&report["rl"])));
    }
    match turns_today {
        Some(n) => say(&format!("turns today {n}")),
        None => say("turns today 0 (no database yet)"),
    }
    if let Some(bytes) = report["log"]["bytes"].as_u64() {
        say(&format!(
            "log        {} ({:.1} MB; rotated at {} MB)",
            home.log_path().display(),
            bytes as f64 / 1_048_576.0,
            metaclaw_core::logging::MAX_BYTES / 1_048_576
        ));
    }
    if let Some(pending) = report["skills"]["pending_proposals"].as_u64() {
        say(&format!(
            "proposals  {pending} waiting for review (metaclaw skills pending)"
        ));
    }
    if let Some(fail) = report["skills"]["last_evolution_failure"].as_object() {
        say(&format!(
            "evolution  last failure {}: {}",
            fail.get("finished_at")
                .and_then(Value::as_str)
                .unwrap_or("?"),
            fail.get("error").and_then(Value::as_str).unwrap_or("?")
        ));
    }
    Ok(())
}

/// Whether `llm.api_base` answers, from its model list (3 s).
async fn probe_upstream(config: &metaclaw_config::Config) -> (bool, String) {
    if config.llm.api_base.trim().is_empty() {
        return (
            false,
            "llm.api_base is not set; run `metaclaw setup`".into(),
        );
    }
    let client = match LlmClient::new(
        &config.llm.api_base,
        &config.llm.api_key,
        Duration::from_secs(3),
    ) {
        Ok(client) => client,
        Err(e) => return (false, e.to_string()),
    };
    match client.probe().await {
        Probe::Reachable { status } => (true, format!("reachable (HTTP {status})")),
        Probe::KeyRefused { status } => (
            true,
            format!("reachable, but HTTP {status}: check llm.api_key"),
        ),
        Probe::Unreachable(e) if e.kind() == ErrorKind::Timeout => {
            (false, "unreachable: timed out after 3 s".into())
        }
        Probe::Unreachable(e) => (false, format!("unreachable: {e}")),
    }
}

/// RL in one line: what serves, what waits, or what is missing.
fn rl_line(rl: &Value) -> String {
    let missing: Vec<&str> = rl["missing"]
        .as_array()
        .map(|m| m.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    match rl["phase"].as_str() {
        Some("serving") => {
            let ready = rl["samples"]["ready"].as_u64().unwrap_or(0);
            let trained = rl["samples"]["trained"].as_u64().unwrap_or(0);
            format!(
                "serving {} (step {}); samples: {ready} ready, {trained} trained",
                rl["sampler"].as_str().unwrap_or("?"),
                rl["sampler_step"].as_u64().unwrap_or(0)
            )
        }
        Some("starting") => "starting (creating the LoRA model)".into(),
        Some("failed") => rl["message"].as_str().unwrap_or("failed").to_owned(),
        _ if !missing.is_empty() => format!("needs {}", missing.join("; ")),
        _ => "off".into(),
    }
}

fn turns_today(home: &Home) -> Option<u64> {
    let path = home.db_path();
    if !path.exists() {
        return None;
    }
    let store = metaclaw_store::Store::open_read_only(&path).ok()?;
    let tz = metaclaw_domain::local_zone().tz;
    let midnight = SystemClock
        .now()
        .with_timezone(&tz)
        .date_naive()
        .and_hms_opt(0, 0, 0)?;
    let since = tz
        .from_local_datetime(&midnight)
        .earliest()?
        .with_timezone(&Utc);
    store.turns_since(since).ok()
}

/// Pending proposals and the last failed evolution run, read from the database.
fn evolution_summary(home: &Home) -> Value {
    let path = home.db_path();
    let Ok(store) = metaclaw_store::Store::open_read_only(&path) else {
        return Value::Null;
    };
    let pending = store
        .proposal_count(metaclaw_store::ProposalStatus::Pending)
        .ok();
    let failure = store.last_evolution_failure().ok().flatten();
    json!({"pending_proposals": pending, "last_evolution_failure": failure})
}

fn human_duration(secs: f64) -> String {
    let s = secs as u64;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m {}s", s / 60, s % 60),
        _ => format!("{}h {}m", s / 3600, (s % 3600) / 60),
    }
}

/// One agent as `metaclaw status` lists it: name, its key masked, wiring and switches.
fn agent_line(a: &metaclaw_core::agents::AgentInfo) -> String {
    let on = |b: bool| if b { "on" } else { "off" };
    format!(
        "{:<12} key {:<10} {:<9} skills {:<3} learning {:<3} shared policy {}",
        a.name,
        a.key.as_deref().unwrap_or("(shared)"),
        if a.wired { "wired" } else { "not wired" },
        on(a.skills),
        on(a.learning),
        if a.train_shared_policy && a.learning {
            "yes"
        } else {
            "no"
        },
    )
}
