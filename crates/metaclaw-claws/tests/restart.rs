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

#[test]
fn a_restart_of_something_not_running_is_skipped_at_once() {
    // A command that would hang, guarded by a process that does not exist.
    let r = with_restart(
        r#"argv = ["sh", "-c", "sleep 30"]
only_if_running = ["metaclaw-test-no-such-gateway-4711 run"]"#,
    );
    let t = Instant::now();
    let rep = restart(&r);
    assert_eq!(rep.outcome, RestartOutcome::NotRunning);
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert_eq!(
        rep.to_string(),
        "DemoClaw: not running, so not restarted; it reads the new config when it starts"
    );
}

#[test]
fn the_recipe_bounds_how_long_a_restart_may_take() {
    let r = with_restart(
        r#"argv = ["sh", "-c", "sleep 30"]
timeout_secs = 1"#,
    );
    let t = Instant::now();
    let rep = restart(&r);
    assert_eq!(
        rep.outcome,
        RestartOutcome::Failed {
            reason: "timed out after 1 s".into()
        }
    );
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    let hermes = recipe("hermes").unwrap();
    assert!(hermes.restart_spec().timeout <= Duration::from_secs(10));
    assert!(!hermes.restart_spec().only_if_running.is_empty());
}
