//! Restart commands: success, missing binary, failure, timeout, none.

use std::time::{Duration, Instant};

use metaclaw_claws::{Recipe, RestartOutcome, recipe, restart, restart_with_timeout};

fn with_restart(restart_table: &str) -> Recipe {
    Recipe::from_toml_str(&format!(
        r#"
name = "demo"
display_name = "DemoClaw"
protocol = "openai"
[restart]
{restart_table}
[[files]]
id = "config"
format = "dotenv"
paths = [{{ path = "~/.demo/.env" }}]
edits = [{{ set = "URL", value = "{{base_url}}" }}]
"#
    ))
    .unwrap()
}

#[test]
fn successful_command() {
    let r = with_restart(r#"argv = ["sh", "-c", "exit 0"]"#);
    let rep = restart(&r);
    assert_eq!(rep.outcome, RestartOutcome::Restarted);
    assert_eq!(rep.to_string(), "DemoClaw: restarted (`sh -c exit 0`)");
}

#[test]
fn missing_binary_is_a_report_line() {
    let r = with_restart(
        r#"argv = ["metaclaw-no-such-binary-xyz", "daemon", "restart"]
hint = "restart `demo app`""#,
    );
    let rep = restart(&r);
    assert_eq!(
        rep.to_string(),
        "restart DemoClaw yourself: `metaclaw-no-such-binary-xyz daemon restart` was not found on PATH; restart `demo app`"
    );
}

#[test]
fn failing_command_shows_its_last_error_line() {
    let r = with_restart(
        r#"argv = ["sh", "-c", "echo first >&2; echo 'unit demo.service not found' >&2; exit 5"]"#,
    );
    let rep = restart(&r);
    assert_eq!(
        rep.outcome,
        RestartOutcome::Failed {
            reason: "failed (exit status 5): unit demo.service not found".into()
        }
    );
    assert!(
        rep.to_string()
            .starts_with("restart DemoClaw yourself: `sh -c")
    );
}

#[test]
fn hanging_command_times_out() {
    let r = with_restart(r#"argv = ["sleep", "30"]"#);
    let start = Instant::now();
    let rep = restart_with_timeout(&r, Duration::from_millis(300));
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!(
        matches!(&rep.outcome, RestartOutcome::Failed { reason } if reason.starts_with("timed out after")),
        "{rep}"
    );
}

#[test]
fn a_daemon_holding_stderr_does_not_block() {
    // The command exits at once but leaves a child holding the stderr pipe.
    let r = with_restart(r#"argv = ["sh", "-c", "sleep 3 & exit 0"]"#);
    let start = Instant::now();
    assert_eq!(restart(&r).outcome, RestartOutcome::Restarted);
    assert!(start.elapsed() < Duration::from_secs(5));
}

#[test]
fn no_command() {
    let r = with_restart("hot_reload = true");
    assert_eq!(
        restart(&r).to_string(),
        "DemoClaw: reloads its config by itself; no restart needed"
    );
    let r = with_restart(r#"hint = "restart `demo gateway`""#);
    assert_eq!(
        restart(&r).to_string(),
        "restart DemoClaw yourself: restart `demo gateway`"
    );
    // Built-in: PicoClaw has no restart subcommand.
    let rep = restart(&recipe("picoclaw").unwrap());
    assert_eq!(rep.outcome, RestartOutcome::Manual);
    assert!(
        rep.to_string()
            .starts_with("restart PicoClaw yourself: restart `picoclaw gateway`")
    );
}
