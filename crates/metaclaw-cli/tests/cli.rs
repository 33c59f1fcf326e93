//! The `metaclaw` command line, run as a user would, against a temporary METACLAW_HOME.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use assert_cmd::Command;
use metaclaw_tests::mock_upstream::MockUpstream;
use metaclaw_tests::wait::free_port;
use predicates::prelude::*;

fn metaclaw(home: &Path) -> Command {
    let mut cmd = Command::cargo_bin("metaclaw").unwrap();
    // Never touch a real OpenClaw on the test machine.
    cmd.env("METACLAW_HOME", home)
        .env("METACLAW_OPENCLAW_BIN", "/nonexistent/openclaw")
        .env_remove("METACLAW_LOG")
        .timeout(Duration::from_secs(30));
    cmd
}

/// What a command that must succeed printed.
fn stdout_of(assert: assert_cmd::assert::Assert) -> String {
    String::from_utf8(assert.success().get_output().stdout.clone()).unwrap()
}

/// A command that succeeds and prints JSON, parsed.
fn json_of(home: &Path, args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&stdout_of(metaclaw(home).args(args).assert())).unwrap()
}

#[test]
fn version_prints_the_crate_version() {
    let home = tempfile::tempdir().unwrap();
    metaclaw(home.path())
        .arg("version")
        .assert()
        .success()
        .stdout(predicate::str::contains(env!("CARGO_PKG_VERSION")));
}

#[test]
fn non_interactive_setup_writes_a_private_config() {
    let home = tempfile::tempdir().unwrap();
    metaclaw(home.path())
        .args([
            "setup",
            "--non-interactive",
            "--provider",
            "kimi",
            "--api-key",
            "sk-secret-123456789",
            "--port",
            "31555",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("Wrote"));
    let path = home.path().join("config.yaml");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("https://api.moonshot.cn/v1"), "{text}");
    assert!(text.contains("moonshotai/Kimi-K2.5"));
    assert!(text.contains("sk-secret-123456789"));
    assert!(home.path().join("skills").is_dir());
    // A proxy key was generated, and `config` reads it back.
    let out = stdout_of(
        metaclaw(home.path())
            .args(["config", "proxy.api_key"])
            .assert(),
    );
    assert!(out.trim().starts_with("mc-"));
    metaclaw(home.path())
        .args(["config", "proxy.port"])
        .assert()
        .success()
        .stdout("31555\n");
}

/// A first setup on a machine with Claude Code and no OpenClaw says how to wire Claude Code,
/// and `--agents` is the same `claw_type` the config command and the dashboard set.
#[test]
fn setup_names_the_agents_found_and_takes_the_ones_to_wire() {
    let home = tempfile::tempdir().unwrap();
    let user = tempfile::tempdir().unwrap();
    let bin = user.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::fs::write(bin.join("claude"), "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(bin.join("claude"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let setup = |extra: &[&str]| {
        let mut cmd = metaclaw(home.path());
        cmd.env("HOME", user.path())
            .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
            .env_remove("CLAUDE_CONFIG_DIR")
            .args(["setup", "--non-interactive", "--provider", "kimi"])
            .args(extra);
        cmd.assert()
    };
    let out = stdout_of(setup(&[]));
    assert!(
        out.contains("Found here but not wired by `metaclaw start`: Claude Code. To wire: `metaclaw setup --agents claude-code`."),
        "{out}"
    );
    let config = || std::fs::read_to_string(home.path().join("config.yaml")).unwrap();
    assert!(
        !config().contains("claw_type"),
        "the default stays implicit"
    );

    let out = stdout_of(setup(&["--agents", "claude-code"]));
    assert!(
        out.contains("agents    claude-code") && !out.contains("Found here"),
        "{out}"
    );
    assert!(config().contains("claw_type: claude-code"), "{}", config());
    // Choosing none is a choice too: no reminder right after it.
    assert!(!stdout_of(setup(&["--agents", "none"])).contains("Found here"));
    setup(&["--agents", "claude-code"]).success();

    // A name that is no agent is refused, readably, and the saved choice stays.
    setup(&["--agents", "claude-code, clawdbot"])
        .failure()
        .stderr(predicate::str::contains("claw_type").and(predicate::str::contains("clawdbot")));
    assert!(config().contains("claw_type: claude-code"), "{}", config());
}

#[test]
fn a_local_server_preset_is_saved_as_custom_with_its_url() {
    let home = tempfile::tempdir().unwrap();
    metaclaw(home.path())
        .args([
            "setup",
            "--non-interactive",
            "--provider",
            "ollama",
            "--model",
            "qwen3:8b",
        ])
        .assert()
        .success();
    for (key, want) in [
        ("llm.provider", "custom"),
        ("llm.api_base", "http://127.0.0.1:11434/v1"),
        ("llm.model_id", "qwen3:8b"),
    ] {
        metaclaw(home.path())
            .args(["config", key])
            .assert()
            .success()
            .stdout(format!("{want}\n"));
    }
}

#[test]
fn setup_with_the_agents_own_sign_in_says_what_needs_a_key_of_metaclaws() {
    let home = tempfile::tempdir().unwrap();
    let out = metaclaw(home.path())
        .args([
            "setup",
            "--non-interactive",
            "--provider",
            "anthropic",
            "--own-sign-in",
        ])
        .assert()
        .success()
        .get_output()
        .clone();
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("sign-in   your agent's own"), "{said}");
    assert!(
        said.contains("skill distillation, the judge and connection checks cannot run"),
        "{said}"
    );
    metaclaw(home.path())
        .args(["config", "llm.auth_method"])
        .assert()
        .success()
        .stdout("passthrough\n");
    // With a key of MetaClaw's own, nothing is missing.
    let out = metaclaw(home.path())
        .args([
            "setup",
            "--non-interactive",
            "--own-sign-in",
            "--api-key",
            "sk-ant-api-metaclaws-own",
        ])
        .assert()
        .success()
        .get_output()
        .clone();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("cannot run"));
    metaclaw(home.path())
        .args(["config", "llm.auth_method"])
        .assert()
        .success()
        .stdout("passthrough\n");
}

#[test]
fn custom_provider_needs_an_api_base() {
    let home = tempfile::tempdir().unwrap();
    metaclaw(home.path())
        .args(["setup", "--non-interactive", "--provider", "custom"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("--api-base"));
    metaclaw(home.path())
        .args(["setup", "--non-interactive", "--provider", "nope"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("unknown provider `nope`"));
}

#[test]
fn config_show_get_set_and_validation() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("config.yaml");
    std::fs::write(
        &path,
        "mode: skills_only\nllm:\n  provider: kimi\n  api_key: sk-abcdefghijklmnop\n  model_id: moonshotai/Kimi-K2.5\nfancy_new_key: 1\nmemory:\n  enabled: true\n",
    )
    .unwrap();
    metaclaw(home.path())
        .args(["config", "show"])
        .assert()
        .success()
        .stdout(predicate::str::contains("sk-abcdefghijklmnop").not())
        .stdout(predicate::str::contains("model_id: moonshotai/Kimi-K2.5"))
        .stderr(predicate::str::contains("fancy_new_key"))
        .stderr(predicate::str::contains("memory.enabled"));
    metaclaw(home.path())
        .args(["config", "llm.model_id"])
        .assert()
        .success()
        .stdout("moonshotai/Kimi-K2.5\n");
    metaclaw(home.path())
        .args(["config", "proxy.port", "31000"])
        .assert()
        .success()
        .stdout("proxy.port = 31000\n");
    metaclaw(home.path())
        .args(["config", "proxy.port"])
        .assert()
        .success()
        .stdout("31000\n");
    let before = std::fs::read(&path).unwrap();
    metaclaw(home.path())
        .args(["config", "mode", "turbo"])
        .assert()
        .failure()
        .stderr(
            predicate::str::contains("`mode`")
                .and(predicate::str::contains("turbo"))
                .and(predicate::str::contains("skills_only")),
        );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "a rejected value leaves the file untouched"
    );
    metaclaw(home.path())
        .args(["config", "no.such.key"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("no.such.key"));
}

#[test]
fn broken_yaml_is_reported_with_its_position() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("config.yaml"), "mode: [unclosed\n").unwrap();
    metaclaw(home.path())
        .args(["start"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("line"));
}

#[test]
fn status_and_stop_when_not_running() {
    let home = tempfile::tempdir().unwrap();
    metaclaw(home.path())
        .arg("status")
        .assert()
        .success()
        .stdout(predicate::str::contains("stopped"));
    metaclaw(home.path())
        .arg("stop")
        .assert()
        .success()
        .stdout(predicate::str::contains("not running"));
}

#[test]
fn start_status_stop_lifecycle() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mock = rt.block_on(MockUpstream::start()).unwrap();
    let home = tempfile::tempdir().unwrap();
    let port = free_port();
    std::fs::write(
        home.path().join("config.yaml"),
        format!(
            "mode: skills_only\nllm:\n  provider: custom\n  model_id: mock-model\n  api_base: {}\n  api_key: k\nproxy:\n  port: {port}\n  api_key: pk\n",
            mock.openai_base()
        ),
    )
    .unwrap();
    metaclaw(home.path())
        .arg("start")
        .assert()
        .success()
        .stdout(predicate::str::contains(format!(
            "http://127.0.0.1:{port}/v1"
        )));
    // One request so `turns today` counts something.
    let body = r#"{"model":"m","messages":[{"role":"user","content":"hi"}]}"#;
    let resp = rt.block_on(async {
        reqwest::Client::new()
            .post(format!("http://127.0.0.1:{port}/v1/chat/completions"))
            .bearer_auth("pk")
            .body(body)
            .send()
            .await
            .unwrap()
            .status()
    });
    assert_eq!(resp, 200);
    // The turn is recorded off the request path: wait until status counts it.
    let status = metaclaw_tests::wait::wait_for_blocking("status to count the turn", || {
        let status = json_of(home.path(), &["status", "--json"]);
        (status["turns_today"] == 1).then_some(status)
    });
    assert_eq!(status["running"], true);
    assert_eq!(status["healthy"], true);
    assert_eq!(status["mode"], "skills_only");
    assert_eq!(status["port"], port);
    assert_eq!(status["upstream"]["reachable"], true);
    assert_eq!(status["turns_today"], 1);
    // A second start reports the running one; a second foreground daemon refuses to run.
    metaclaw(home.path())
        .arg("start")
        .assert()
        .success()
        .stdout(predicate::str::contains("already running"));
    metaclaw(home.path())
        .args(["start", "--foreground", "--port", &free_port().to_string()])
        .assert()
        .failure()
        .stderr(predicate::str::contains("already running"));
    metaclaw(home.path())
        .arg("stop")
        .assert()
        .success()
        .stdout(predicate::str::contains("stopped"));
    metaclaw(home.path())
        .arg("status")
        .assert()
        .success()
        .stdout(predicate::str::contains("stopped"));
    assert!(!home.path().join("daemon.json").exists());
    rt.block_on(mock.stop());
}

#[test]
fn start_explains_a_port_in_use() {
    let home = tempfile::tempdir().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    std::fs::write(
        home.path().join("config.yaml"),
        format!("proxy:\n  port: {port}\n"),
    )
    .unwrap();
    metaclaw(home.path())
        .arg("start")
        .assert()
        .failure()
        .stderr(predicate::str::contains("could not listen"));
    assert!(!home.path().join("daemon.json").exists());
}

#[test]
fn skills_list_search_switch_show_and_lint() {
    let home = tempfile::tempdir().unwrap();
    metaclaw(home.path())
        .args(["skills", "list", "--category", "debugging"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("fix-flaky-tests")
                .and(predicate::str::contains("write-clear-emails").not()),
        );
    metaclaw(home.path())
        .args(["skills", "search", "my pytest suite fails randomly on CI"])
        .assert()
        .success()
        .stdout(predicate::str::is_match(r"inject\s+[0-9.]+\s+fix-flaky-tests").unwrap())
        .stdout(predicate::str::contains("below"));
    metaclaw(home.path())
        .args(["skills", "search", "what's the capital of Peru?"])
        .assert()
        .success()
        .stdout(predicate::str::contains("nothing would be injected"));
    metaclaw(home.path())
        .args(["skills", "disable", "fix-flaky-tests"])
        .assert()
        .success();
    metaclaw(home.path())
        .args(["skills", "pin", "write-clear-emails"])
        .assert()
        .success();
    let list = json_of(home.path(), &["skills", "list", "--json"]);
    let find = |n: &str| {
        list.as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == n)
            .unwrap()
            .clone()
    };
    assert_eq!(find("fix-flaky-tests")["enabled"], false);
    assert_eq!(find("write-clear-emails")["pinned"], true);
    metaclaw(home.path())
        .args(["skills", "search", "my pytest suite fails randomly on CI"])
        .assert()
        .stdout(predicate::str::contains("disabled"))
        .stdout(predicate::str::contains("pinned"));
    metaclaw(home.path())
        .args(["skills", "pin", "no-such-skill"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("no skill named"));
    metaclaw(home.path())
        .args(["skills", "show", "fix-flaky-tests"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("name: fix-flaky-tests")
                .and(predicate::str::contains("## Anti-patterns")),
        );

    // Lint: the bundled bank is clean; a broken user folder fails with reasons.
    let bank = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../skills");
    metaclaw(home.path())
        .args(["skills", "lint"])
        .arg(&bank)
        .assert()
        .success()
        .stdout(predicate::str::contains("0 errors"));
    let bad = home.path().join("bad");
    std::fs::create_dir_all(bad.join("mismatch")).unwrap();
    std::fs::write(
        bad.join("mismatch/SKILL.md"),
        "---\nname: other-name\ndescription: d\n---\nbody\n",
    )
    .unwrap();
    std::fs::create_dir_all(bad.join("broken")).unwrap();
    std::fs::write(bad.join("broken/SKILL.md"), "no frontmatter here").unwrap();
    metaclaw(home.path())
        .args(["skills", "lint"])
        .arg(&bad)
        .assert()
        .failure()
        .stdout(
            predicate::str::contains("must equal its folder name")
                .and(predicate::str::contains("must start with")),
        );
}

#[test]
fn evolution_inbox_from_the_command_line() {
    use metaclaw_tests::mock_upstream::Behaviour;
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mock = rt.block_on(MockUpstream::start()).unwrap();
    let home = tempfile::tempdir().unwrap();
    let port = free_port();
    std::fs::write(
        home.path().join("config.yaml"),
        format!(
            "llm:\n  provider: custom\n  model_id: mock-model\n  api_base: {}\n  api_key: k\nproxy:\n  port: {port}\n  api_key: pk\nskills:\n  auto_evolve: false\n",
            mock.openai_base()
        ),
    )
    .unwrap();
    metaclaw(home.path()).arg("start").assert().success();
    let send = |body: serde_json::Value| {
        rt.block_on(async {
            reqwest::Client::new()
                .post(format!("http://127.0.0.1:{port}/v1/chat/completions"))
                .bearer_auth("pk")
                .header("x-session-id", "cli-session")
                .json(&body)
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap()
        })
    };
    send(
        serde_json::json!({"messages": [{"role": "user", "content": "format the date for the report"}]}),
    );
    send(
        serde_json::json!({"messages": [{"role": "user", "content": "format the date for the report"},
        {"role": "assistant", "content": "11/21/2026"}, {"role": "user", "content": "No, I said ISO 8601 dates"}]}),
    );
    metaclaw(home.path()).arg("stop").assert().success();

    let proposal = serde_json::json!({"proposals": [{"name": "use-iso-dates", "category": "communication",
        "description": "Use when writing dates in reports or messages: prefer ISO 8601",
        "body": "# ISO dates\n\n## Steps\n1. Write YYYY-MM-DD.\n\n## Anti-patterns\n- 11/21/2026.", "reason": "user corrected the date format", "turns": []}]});
    mock.push(Behaviour::Match {
        contains: Some("## Existing skills".into()),
        path: None,
        then: Box::new(Behaviour::reply(proposal.to_string())),
    });
    metaclaw(home.path())
        .args(["skills", "distil"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("Correction")
                .and(predicate::str::contains("1 proposal(s) waiting")),
        );
    metaclaw(home.path())
        .args(["skills", "pending"])
        .assert()
        .success()
        .stdout(predicate::str::contains("#1 new `use-iso-dates`"));
    let status = json_of(home.path(), &["status", "--json"]);
    assert_eq!(status["skills"]["pending_proposals"], 1);

    let edited = home.path().join("edited.md");
    std::fs::write(&edited, "---\nname: use-iso-dates\ndescription: Use when writing dates anywhere\ncategory: communication\n---\nAlways YYYY-MM-DD.\n").unwrap();
    metaclaw(home.path())
        .args(["skills", "approve", "1", "--file"])
        .arg(&edited)
        .assert()
        .success()
        .stdout(predicate::str::contains("version 2"));
    assert!(home.path().join("skills/use-iso-dates/SKILL.md").exists());
    metaclaw(home.path())
        .args(["skills", "approve", "1"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("not pending"));
    metaclaw(home.path())
        .args(["skills", "history", "use-iso-dates"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("v1")
                .and(predicate::str::contains("(absent)"))
                .and(predicate::str::contains("v2")),
        );
    metaclaw(home.path())
        .args(["skills", "rollback", "use-iso-dates", "1"])
        .assert()
        .success();
    assert!(!home.path().join("skills/use-iso-dates/SKILL.md").exists());
    metaclaw(home.path())
        .args(["skills", "rollback", "use-iso-dates", "9"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("no version 9"));

    let store = metaclaw_store::Store::open_read_only(home.path().join("metaclaw.db")).unwrap();
    let turn = store.turn_ids_in_session("cli-session").unwrap()[0].clone();
    metaclaw(home.path())
        .args(["feedback", &turn, "down", "--note", "wrong format"])
        .assert()
        .success();
    assert_eq!(store.feedback(&turn).unwrap().unwrap().rating, -1);
    metaclaw(home.path())
        .args(["feedback", "nope", "up"])
        .assert()
        .failure();
    // An evolver that cannot answer (the first try and the client's two retries): the
    // failure is reported, not swallowed.
    for _ in 0..3 {
        mock.push(Behaviour::Match {
            contains: Some("## Existing skills".into()),
            path: None,
            then: Box::new(Behaviour::error(503)),
        });
    }
    metaclaw(home.path())
        .args(["skills", "distil", "cli-session"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("HTTP 503"));
    metaclaw(home.path())
        .args(["status"])
        .assert()
        .success()
        .stdout(predicate::str::contains("last failure"));
    rt.block_on(mock.stop());
}

#[test]
fn uninstall_confirms_stops_unwires_and_purges_only_when_asked() {
    let home = tempfile::tempdir().unwrap();
    let mc = home.path().join("mc");
    std::fs::create_dir_all(mc.join("skills/my-skill")).unwrap();
    std::fs::write(
        mc.join("skills/my-skill/SKILL.md"),
        "---\nname: my-skill\ndescription: d\n---\nb\n",
    )
    .unwrap();
    std::fs::write(mc.join("config.yaml"), "claw_type: none\n").unwrap();
    // Without a terminal and without --yes nothing happens.
    metaclaw(&mc)
        .arg("uninstall")
        .assert()
        .failure()
        .stderr(predicate::str::contains("--yes"));
    metaclaw(&mc)
        .args(["uninstall", "--yes"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("not running")
                .and(predicate::str::contains("nothing to unwire"))
                .and(predicate::str::contains("Kept")),
        );
    assert!(
        mc.join("skills/my-skill/SKILL.md").exists(),
        "skills are kept without --purge"
    );
    metaclaw(&mc)
        .args(["uninstall", "--yes", "--purge"])
        .assert()
        .success()
        .stdout(predicate::str::contains("Deleted"));
    assert!(!mc.exists());
}

#[test]
fn start_without_openclaw_prints_manual_steps_and_still_runs() {
    let home = tempfile::tempdir().unwrap();
    let port = free_port();
    std::fs::write(
        home.path().join("config.yaml"),
        format!("proxy:\n  port: {port}\n  api_key: pk\nllm:\n  model_id: m1\n"),
    )
    .unwrap();
    metaclaw(home.path())
        .arg("start")
        .assert()
        .success()
        .stdout(
            predicate::str::contains("OpenClaw was not wired")
                .and(predicate::str::contains("\"primary\": \"metaclaw/m1\"")),
        );
    metaclaw(home.path()).arg("stop").assert().success();
}

/// While a daemon runs, the CLI is a client of its API: a change is visible to the daemon the
/// moment the command returns (there is no polling), and errors exit with their class.
#[test]
fn the_cli_talks_to_the_running_daemon() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mock = rt.block_on(MockUpstream::start()).unwrap();
    let home = tempfile::tempdir().unwrap();
    let port = free_port();
    std::fs::write(
        home.path().join("config.yaml"),
        format!(
            "llm:\n  provider: custom\n  model_id: mock-model\n  api_base: {}\n  api_key: k\nproxy:\n  port: {port}\n  api_key: pk\nclaw_type: none\n",
            mock.openai_base()
        ),
    )
    .unwrap();
    metaclaw(home.path()).arg("start").assert().success();
    let token = std::fs::read_to_string(home.path().join("dashboard.token")).unwrap();
    let get = |path: &str| -> serde_json::Value {
        rt.block_on(async {
            reqwest::Client::new()
                .get(format!("http://127.0.0.1:{port}{path}"))
                .bearer_auth(token.trim())
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap()
        })
    };
    let enabled = |skills: &serde_json::Value, name: &str| {
        skills
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .map(|s| s["enabled"].as_bool().unwrap())
    };

    metaclaw(home.path())
        .args(["skills", "disable", "fix-flaky-tests"])
        .assert()
        .success();
    assert_eq!(enabled(&get("/api/skills"), "fix-flaky-tests"), Some(false));
    metaclaw(home.path())
        .args(["config", "skills.evolution_every_n_turns", "3"])
        .assert()
        .success()
        .stdout(predicate::str::contains("restart").not());
    assert_eq!(get("/api/config")["skills"]["evolution_every_n_turns"], 3);
    // And the other way round: the CLI shows what the daemon has.
    metaclaw(home.path())
        .args(["skills", "enable", "fix-flaky-tests"])
        .assert()
        .success();
    metaclaw(home.path())
        .args(["skills", "list", "--json"])
        .assert()
        .success()
        .stdout(predicate::str::contains("\"enabled\": false").not());

    // Exit status by class: not found 3, not ready 4, bad input 2.
    metaclaw(home.path())
        .args(["skills", "show", "no-such-skill"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("no skill named `no-such-skill`"));
    metaclaw(home.path())
        .args(["skills", "approve", "999"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("no proposal #999"));
    metaclaw(home.path())
        .args(["config", "mode", "rl"])
        .assert()
        .code(4)
        .stderr(predicate::str::contains("rl.api_key"));
    metaclaw(home.path())
        .args(["config", "proxy.port", "many"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("proxy.port"));
    assert_eq!(get("/api/status")["mode"], "skills_only");

    metaclaw(home.path()).arg("stop").assert().success();
    // Nothing runs now: RL needs a running core, other commands open the home themselves.
    metaclaw(home.path())
        .arg("train-step")
        .assert()
        .code(5)
        .stderr(predicate::str::contains("not running"));
    metaclaw(home.path())
        .args(["skills", "disable", "fix-flaky-tests"])
        .assert()
        .success();
    metaclaw(home.path())
        .args(["skills", "list", "--json"])
        .assert()
        .success()
        .stdout(predicate::str::contains("\"enabled\": false"));
    rt.block_on(mock.stop());
}

/// With nothing running, a command opens the home itself under the instance lock: while
/// another program holds it (a daemon starting, another command), it waits instead of writing
/// beside it.
#[test]
fn a_local_command_waits_for_the_home_lock() {
    let home = tempfile::tempdir().unwrap();
    let h = metaclaw_config::Home::at(home.path());
    h.ensure().unwrap();
    let lock = metaclaw_core::instance::InstanceLock::acquire(&h).unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("metaclaw"))
        .env("METACLAW_HOME", home.path())
        .args(["skills", "pin", "write-clear-emails"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    assert!(child.try_wait().unwrap().is_none(), "it waits for the lock");
    drop(lock);
    let status = child.wait().unwrap();
    assert!(status.success());
    metaclaw(home.path())
        .args(["skills", "list", "--json"])
        .assert()
        .success()
        .stdout(predicate::str::contains("\"pinned\": true"));
}

/// The scheduler computes sleep windows and the CLI prints them in one zone: `TZ` when set.
/// (Before, the scheduler read /etc/localtime while the CLI printed in `TZ`, an hour off.)
#[test]
fn scheduler_windows_and_the_cli_agree_on_the_zone_under_tz() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.yaml"),
        "mode: auto\nscheduler:\n  enabled: true\n  sleep_enabled: true\n  sleep_start: \"23:00\"\n  sleep_end: \"07:00\"\n  idle_enabled: false\n",
    )
    .unwrap();
    for zone in ["Europe/Berlin", "America/New_York", "Asia/Shanghai"] {
        let out = stdout_of(
            metaclaw(home.path())
                .env("TZ", zone)
                .args(["scheduler", "next-window"])
                .assert(),
        );
        assert!(
            out.contains("23:00 to") && out.trim_end().ends_with("07:00"),
            "TZ={zone}: {out}"
        );
    }
}

/// `scheduler status` names the idle source in use; without a graphical session that is the
/// proxy-activity fallback, with the reason.
#[test]
fn scheduler_status_names_the_idle_source() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.yaml"),
        "mode: auto\nscheduler:\n  enabled: true\n  idle_enabled: true\n  idle_threshold_minutes: 30\n",
    )
    .unwrap();
    metaclaw(home.path())
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("XDG_SESSION_TYPE")
        .args(["scheduler", "status"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "idle       proxy activity (no OS idle source: no graphical session (DISPLAY not set))",
        ));
}

/// `claw_type` lists several agents: `start` wires them all in the user's home, `status`
/// lists them, `stop --unwire` restores every file byte for byte. A `hermes` whose
/// `gateway restart` hangs (as it does with no gateway running) never holds either up.
#[test]
fn several_agents_are_wired_and_restored_and_hermes_never_blocks() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mock = rt.block_on(MockUpstream::start()).unwrap();
    let user = tempfile::tempdir().unwrap();
    let home = user.path().join("mc");
    std::fs::create_dir_all(&home).unwrap();
    let put = |rel: &str, text: &str| {
        let path = user.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
    };
    let originals = [
        (
            ".hermes/config.yaml",
            "model:\n  default: gpt-x\n  provider: openrouter\n",
        ),
        (
            ".claude/settings.json",
            "{\n  \"model\": \"opus\",\n  \"env\": {\"DISABLE_TELEMETRY\": \"1\"}\n}\n",
        ),
        (
            ".codex/config.toml",
            "# mine\nmodel = \"gpt-5\"\n\n[tui]\nnotifications = true\n",
        ),
    ];
    for (rel, text) in originals {
        put(rel, text);
    }
    // A hermes that records how it was called, then hangs.
    let calls = user.path().join("hermes-calls");
    put(
        "bin/hermes",
        &format!(
            "#!/bin/sh\necho \"$@\" >> {}\nexec sleep 600\n",
            calls.display()
        ),
    );
    let bin = user.path().join("bin");
    std::fs::set_permissions(bin.join("hermes"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let port = free_port();
    std::fs::write(
        home.join("config.yaml"),
        format!(
            "llm:\n  provider: custom\n  model_id: mock-model\n  api_base: {}\n  api_key: k\nproxy:\n  port: {port}\n  api_key: pk\nclaw_type: [hermes, claude-code, codex, qwen-code]\n",
            mock.openai_base()
        ),
    )
    .unwrap();
    let run = |args: &[&str]| {
        let mut cmd = metaclaw(&home);
        cmd.env("HOME", user.path())
            .env("PATH", &path)
            .env_remove("HERMES_HOME")
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("CODEX_HOME")
            .env_remove("QWEN_HOME")
            .args(args);
        let started = std::time::Instant::now();
        (stdout_of(cmd.assert()), started.elapsed())
    };

    let (out, took) = run(&["start"]);
    assert!(took < Duration::from_secs(15), "start took {took:?}\n{out}");
    assert!(
        out.contains("Hermes Agent: not running, so not restarted"),
        "{out}"
    );
    let read = |rel: &str| std::fs::read_to_string(user.path().join(rel)).ok();
    let claude = read(".claude/settings.json").unwrap();
    assert!(
        claude.contains(&format!(
            "\"ANTHROPIC_BASE_URL\": \"http://127.0.0.1:{port}\""
        )),
        "{claude}"
    );
    assert!(claude.contains("\"DISABLE_TELEMETRY\": \"1\""), "{claude}");
    let codex = read(".codex/config.toml").unwrap();
    assert!(
        codex.contains("wire_api = \"responses\"") && codex.contains("# mine"),
        "{codex}"
    );
    let qwen = read(".qwen/settings.json").unwrap();
    assert!(qwen.contains(&format!("127.0.0.1:{port}/v1")), "{qwen}");
    assert!(
        read(".hermes/config.yaml")
            .unwrap()
            .contains("provider: custom")
    );

    // Each agent got its own proxy key, and its configuration holds that key.
    let agents = metaclaw_config::load(&home.join("config.yaml"))
        .unwrap()
        .config
        .agents;
    let key = |agent: &str| agents[agent].api_key.clone();
    let keys: Vec<String> = ["hermes", "claude-code", "codex", "qwen-code"]
        .iter()
        .map(|a| key(a))
        .collect();
    assert!(
        keys.iter().all(|k| k.starts_with("mc-") && k.len() > 30),
        "{keys:?}"
    );
    let mut unique = keys.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 4);
    assert!(
        claude.contains(&key("claude-code")) && !claude.contains("\"pk\""),
        "{claude}"
    );
    assert!(qwen.contains(&key("qwen-code")), "{qwen}");
    assert!(
        read(".hermes/config.yaml")
            .unwrap()
            .contains(&key("hermes"))
    );
    // The proxy knows each agent by its key.
    let answer = rt.block_on(async {
        reqwest::Client::new()
            .post(format!("http://127.0.0.1:{port}/v1/chat/completions"))
            .bearer_auth(key("codex"))
            .json(
                &serde_json::json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]}),
            )
            .send()
            .await
            .unwrap()
            .status()
    });
    assert_eq!(answer, 200);

    let (status_text, _) = run(&["status"]);
    for k in &keys {
        assert!(
            !status_text.contains(k.as_str()),
            "status shows a whole key: {status_text}"
        );
    }
    assert!(
        status_text.contains("claude-code  key mc-…"),
        "{status_text}"
    );
    let status = json_of_env(&home, user.path(), &path, &["status", "--json"]);
    assert!(
        keys.iter()
            .all(|k| !status.to_string().contains(k.as_str()))
    );
    assert_eq!(
        status["agents"]["list"].as_array().unwrap().len(),
        4,
        "{status}"
    );
    assert_eq!(
        status["agents"]["configured"],
        serde_json::json!(["hermes", "claude-code", "codex", "qwen-code"])
    );
    assert_eq!(
        status["agents"]["wired"],
        serde_json::json!(["claude-code", "codex", "hermes", "qwen-code"])
    );

    let (out, took) = run(&["stop", "--unwire"]);
    assert!(took < Duration::from_secs(15), "stop took {took:?}\n{out}");
    for (rel, text) in originals {
        assert_eq!(
            read(rel).as_deref(),
            Some(text),
            "{rel} not restored\n{out}"
        );
    }
    assert_eq!(read(".qwen/settings.json"), None, "{out}");
    assert!(!user.path().join(".qwen").exists());
    assert!(
        !calls.exists(),
        "hermes gateway restart ran with no gateway"
    );
}

fn json_of_env(home: &Path, user: &Path, path: &str, args: &[&str]) -> serde_json::Value {
    let out = stdout_of(
        metaclaw(home)
            .env("HOME", user)
            .env("PATH", path)
            .args(args)
            .assert(),
    );
    serde_json::from_str(&out).unwrap()
}

#[test]
fn bench_runs_a_checkout_through_the_daemon_and_prints_the_table() {
    let bench = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/metaclaw-bench-mini"
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mock = rt.block_on(MockUpstream::start()).unwrap();
    let home = tempfile::tempdir().unwrap();
    let port = free_port();
    std::fs::write(
        home.path().join("config.yaml"),
        format!(
            "llm:\n  provider: custom\n  model_id: mock-model\n  api_base: {}\n  api_key: k\nproxy:\n  port: {port}\n  api_key: pk\nskills:\n  auto_evolve: false\nclaw_type: none\n",
            mock.openai_base()
        ),
    )
    .unwrap();
    metaclaw(home.path()).arg("start").assert().success();
    // The mock's default replies write no file and give no \bbox: every round scores 0.
    metaclaw(home.path())
        .args(["bench", bench, "--arms", "baseline,skills-rl"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "2 day(s), 5 rounds (3 file_check, 2 multi_choice)",
        ))
        .stdout(predicate::str::contains("0.0 [0.0–"))
        .stdout(predicate::str::contains("(0/3)"))
        .stdout(predicate::str::contains("skills-rl: not run: RL is off"))
        .stderr(predicate::str::contains(
            "eval/day02/questions.json line 38: not a round (missing field `eval`)",
        ))
        .stderr(predicate::str::contains("all_tests.json line 16"));
    let report = json_of(
        home.path(),
        &[
            "bench", bench, "--arms", "baseline", "--days", "1", "--json",
        ],
    );
    assert_eq!(report["days"], 1, "{report}");
    assert_eq!(report["arms"][0]["arm"], "baseline");
    assert_eq!(report["arms"][0]["accuracy"]["n"], 3);
    assert_eq!(report["arms"][0]["format_errors"], 1);
    metaclaw(home.path())
        .args(["bench", "/nonexistent/bench"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("no all_tests.json"));
    metaclaw(home.path()).arg("stop").assert().success();
    rt.block_on(mock.stop());
}
