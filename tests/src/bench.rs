//! What the benchmarks share: child processes that are always stopped, the mock upstream and
//! a daemon in a fresh home, readings from /proc, and a realistic agent request.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail, ensure};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};

pub const PROXY_KEY: &str = "proxy-key";
pub const UPSTREAM_KEY: &str = "k";
pub const MODEL: &str = "mock-model";

macro_rules! progress {
    ($($t:tt)*) => {{
        eprintln!("[bench] {}", format!($($t)*));
    }};
}

/// PIDs of running children, for the signal watcher.
static CHILDREN: Mutex<Vec<u32>> = Mutex::new(Vec::new());

fn children() -> std::sync::MutexGuard<'static, Vec<u32>> {
    CHILDREN.lock().unwrap_or_else(|e| e.into_inner())
}

/// On SIGINT/SIGTERM/SIGHUP: SIGTERM every child, reap them, exit 130.
pub fn watch_signals() {
    let spawned = std::thread::Builder::new()
        .name("signals".into())
        .spawn(|| {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async {
                use tokio::signal::unix::{SignalKind, signal};
                let (Ok(mut int), Ok(mut term), Ok(mut hup)) = (
                    signal(SignalKind::interrupt()),
                    signal(SignalKind::terminate()),
                    signal(SignalKind::hangup()),
                ) else {
                    return std::future::pending().await;
                };
                tokio::select! {
                    _ = int.recv() => {}
                    _ = term.recv() => {}
                    _ = hup.recv() => {}
                }
            });
            eprintln!("[proxy-bench] interrupted: stopping child processes");
            let pids: Vec<u32> = children().clone();
            for pid in &pids {
                let _ = kill(Pid::from_raw(-(*pid as i32)), Signal::SIGTERM);
            }
            let deadline = Instant::now() + Duration::from_secs(5);
            for pid in &pids {
                let pid = Pid::from_raw(*pid as i32);
                loop {
                    use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
                    match waitpid(pid, Some(WaitPidFlag::WNOHANG)) {
                        Ok(WaitStatus::StillAlive) if Instant::now() < deadline => {
                            std::thread::sleep(Duration::from_millis(10))
                        }
                        Ok(WaitStatus::StillAlive) => {
                            let _ = kill(pid, Signal::SIGKILL);
                            let _ = waitpid(pid, None);
                            break;
                        }
                        _ => break,
                    }
                }
            }
            std::process::exit(130);
        });
    if let Err(e) = spawned {
        progress!("could not start the signal watcher: {e}");
    }
}

/// A child process that is stopped (SIGTERM, then SIGKILL after 10 s) and reaped when dropped.
pub struct Proc {
    name: &'static str,
    pub child: Option<Child>,
    pid: u32,
    pub _stdout: Option<ChildStdout>,
}

impl Proc {
    /// Each child leads its own process group, and is stopped with it: a wrapper such as
    /// heaptrack takes the program it runs along.
    pub fn spawn(name: &'static str, cmd: &mut Command) -> Result<Proc> {
        use std::os::unix::process::CommandExt;
        let child = cmd
            .process_group(0)
            .spawn()
            .with_context(|| format!("could not start {name} ({cmd:?})"))?;
        let pid = child.id();
        children().push(pid);
        Ok(Proc {
            name,
            child: Some(child),
            pid,
            _stdout: None,
        })
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// `Some(status)` when the process has already exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child
            .as_mut()
            .and_then(|c| c.try_wait().ok().flatten())
    }

    /// SIGTERM and wait; SIGKILL after 10 s. Idempotent.
    pub fn stop(&mut self) -> Result<ExitStatus> {
        let Some(mut child) = self.child.take() else {
            bail!("{} was already stopped", self.name)
        };
        let result = (|| {
            if let Some(status) = child.try_wait()? {
                return Ok(status);
            }
            let _ = kill(Pid::from_raw(-(self.pid as i32)), Signal::SIGTERM);
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                if let Some(status) = child.try_wait()? {
                    return Ok(status);
                }
                if Instant::now() > deadline {
                    progress!(
                        "{} (pid {}) ignored SIGTERM for 10 s; killing it",
                        self.name,
                        self.pid
                    );
                    let _ = kill(Pid::from_raw(-(self.pid as i32)), Signal::SIGKILL);
                    return Ok(child.wait()?);
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        })();
        children().retain(|p| *p != self.pid);
        result
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if self.child.is_some() {
            let _ = self.stop();
        }
    }
}

pub fn sibling_exe(name: &str) -> Result<PathBuf> {
    Ok(std::env::current_exe()
        .context("cannot find this executable")?
        .with_file_name(name))
}

pub fn free_port() -> Result<u16> {
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).context("could not find a free port")?;
    Ok(l.local_addr()?.port())
}

pub fn start_mock(exe: &Path, stream_chunks: usize, log: &Path) -> Result<(Proc, u16)> {
    ensure!(
        exe.is_file(),
        "mock upstream binary not found at {} (build metaclaw-tests first)",
        exe.display()
    );
    let err = std::fs::File::create(log)?;
    let mut cmd = Command::new(exe);
    cmd.args([
        "--port",
        "0",
        "--no-record",
        "--stream-chunks",
        &stream_chunks.to_string(),
    ])
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(err);
    let mut proc = Proc::spawn("mock-upstream", &mut cmd)?;
    let stdout = proc
        .child
        .as_mut()
        .and_then(|c| c.stdout.take())
        .ok_or_else(|| anyhow!("no mock stdout"))?;
    let mut reader = BufReader::new(stdout);
    let mut line = String::new();
    reader
        .read_line(&mut line)
        .context("reading the mock's first line")?;
    let port = line
        .trim()
        .strip_prefix("listening on http://127.0.0.1:")
        .and_then(|p| p.parse::<u16>().ok())
        .ok_or_else(|| {
            anyhow!(
                "unexpected first line from mock-upstream: {line:?}; log: {}",
                tail(log)
            )
        })?;
    proc._stdout = Some(reader.into_inner());
    Ok((proc, port))
}

pub fn tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

/// A daemon instance with its own home directory.
pub struct Daemon {
    pub proc: Proc,
    pub port: u16,
    pub home: tempfile::TempDir,
}

impl Daemon {
    pub fn log(&self) -> PathBuf {
        self.home.path().join("bench-daemon.log")
    }
}

/// How to run a benchmark daemon.
#[derive(Debug, Clone, Default)]
pub struct DaemonSpec {
    /// Extra environment, e.g. `MALLOC_ARENA_MAX=2`.
    pub env: Vec<(String, String)>,
    /// Skill injection on (the bundled bank, BM25).
    pub skills: bool,
    /// More config.yaml lines (top-level keys).
    pub extra_config: String,
    /// A command to run the daemon under (e.g. `heaptrack -o FILE`).
    pub wrapper: Vec<String>,
    /// More arguments for `metaclaw start --foreground`.
    pub args: Vec<String>,
}

/// Spawns `metaclaw start --foreground` with a fresh home and returns it with the time from
/// spawn until `/healthz` answered 200.
pub fn start_daemon(exe: &Path, mock_port: u16, spec: &DaemonSpec) -> Result<(Daemon, Duration)> {
    let home = tempfile::Builder::new()
        .prefix("metaclaw-bench-")
        .tempdir()?;
    let port = free_port()?;
    let skills = spec.skills;
    let config = format!(
        "mode: skills_only\n\
         llm: {{provider: custom, model_id: {MODEL}, api_base: \"http://127.0.0.1:{mock_port}/v1\", api_key: {UPSTREAM_KEY}, timeout_seconds: 30}}\n\
         proxy: {{port: {port}, api_key: {PROXY_KEY}}}\n\
         skills: {{enabled: {skills}}}\n\
         claw_type: none\n{}",
        spec.extra_config
    );
    std::fs::write(home.path().join("config.yaml"), config)?;
    let log_path = home.path().join("bench-daemon.log");
    let log = std::fs::File::create(&log_path)?;
    let mut cmd = match spec.wrapper.split_first() {
        Some((first, rest)) => {
            let mut c = Command::new(first);
            c.args(rest).arg(exe);
            c
        }
        None => Command::new(exe),
    };
    cmd.args(["start", "--foreground"])
        .args(&spec.args)
        .env("METACLAW_HOME", home.path())
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log);
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let t0 = Instant::now();
    let proc = Proc::spawn("metaclaw", &mut cmd)?;
    let mut daemon = Daemon { proc, port, home };
    // A wrapper such as heaptrack slows the start a lot.
    let deadline = t0 + Duration::from_secs(if spec.wrapper.is_empty() { 15 } else { 120 });
    loop {
        if healthz_ok(addr) {
            return Ok((daemon, t0.elapsed()));
        }
        if let Some(status) = daemon.proc.exited() {
            bail!(
                "metaclaw exited during start-up ({status}); log:\n{}",
                tail(&log_path)
            );
        }
        if Instant::now() > deadline {
            bail!(
                "metaclaw did not answer /healthz in time; log:\n{}",
                tail(&daemon.log())
            );
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// One plain HTTP/1.1 probe of `/healthz` (no client library in the timing).
pub fn healthz_ok(addr: SocketAddr) -> bool {
    let probe = || -> std::io::Result<bool> {
        let mut s = TcpStream::connect_timeout(&addr, Duration::from_millis(200))?;
        s.set_read_timeout(Some(Duration::from_millis(500)))?;
        s.set_nodelay(true)?;
        s.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")?;
        let mut buf = Vec::with_capacity(512);
        s.read_to_end(&mut buf)?;
        let text = String::from_utf8_lossy(&buf);
        Ok(text.starts_with("HTTP/1.1 200") && text.contains("\"ok\":true"))
    };
    probe().unwrap_or(false)
}

// ------------------------------------------------------------------------------------- /proc

/// A `kB` line of `/proc/<pid>/status` (`VmRSS`, `VmHWM`), in MB.
pub fn status_mb(pid: u32, key: &str) -> Result<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix(key).and_then(|v| v.strip_prefix(':')))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| anyhow!("no {key} in /proc/{pid}/status"))?;
    Ok(kb / 1024.0)
}

pub fn rss_mb(pid: u32) -> Result<f64> {
    status_mb(pid, "VmRSS")
}

/// utime + stime in clock ticks.
pub fn cpu_ticks(pid: u32) -> Result<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    let rest = stat
        .rfind(')')
        .map(|i| &stat[i + 1..])
        .ok_or_else(|| anyhow!("bad /proc/{pid}/stat"))?;
    let f: Vec<&str> = rest.split_whitespace().collect();
    ensure!(f.len() > 12, "short /proc/{pid}/stat");
    Ok(f[11].parse::<u64>()? + f[12].parse::<u64>()?)
}

pub fn clk_tck() -> u64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .filter(|t| *t > 0)
        .unwrap_or(100)
}

// ------------------------------------------------------------------------------ request body

const SYSTEM_INTRO: &str = "You are a personal assistant running inside OpenClaw. You act on the user's behalf on \
their own machine: you read and edit files, run shell commands, browse, and keep notes in the workspace. Be \
direct, precise and calm. Prefer doing over describing: when a tool can answer a question, call it instead of \
guessing, and report what you found with the evidence that matters.";

const SYSTEM_SECTIONS: &[(&str, &[&str])] = &[
    (
        "Tooling",
        &[
            "Tool availability is filtered by policy; only the tools listed in this request may be called.",
            "Call tools with exactly the JSON arguments their schema describes; never invent parameters.",
            "Read a file before editing it, and edit with the smallest change that achieves the goal.",
            "Long-running commands must use a timeout; prefer background jobs for servers and watchers.",
            "When a command fails, read its output carefully before retrying with a different approach.",
            "Do not run destructive commands (rm -rf, git reset --hard, force pushes) without explicit consent.",
        ],
    ),
    (
        "Workspace",
        &[
            "Your working directory is the user's workspace; treat it as the single source of truth.",
            "AGENTS.md, SOUL.md, TOOLS.md and USER.md in the workspace root describe conventions; follow them.",
            "Keep daily notes in memory/YYYY-MM-DD.md and long-term facts in MEMORY.md; write, do not just remember.",
            "Never commit secrets. Treat tokens, keys and passwords in files as confidential.",
            "Large generated artifacts belong in the build directory, never next to the sources.",
        ],
    ),
    (
        "Safety",
        &[
            "You have no independent goals: do not pursue self-preservation, replication or resource acquisition.",
            "Prioritize safety and human oversight over completion; if instructions conflict, pause and ask.",
            "Comply with stop and pause requests immediately and never bypass safeguards.",
            "Do not exfiltrate private data; messages to third parties need the user's approval.",
        ],
    ),
    (
        "Messaging",
        &[
            "Reply in the current session; the channel router delivers your answer to the right surface.",
            "Keep replies short in group chats; use threads for long explanations when the channel supports them.",
            "Never send half-finished or streaming partial replies to external messaging surfaces.",
            "If nothing needs saying after a heartbeat poll, answer exactly HEARTBEAT_OK.",
        ],
    ),
    (
        "Reasoning",
        &[
            "Think step by step for multi-part problems, but keep the visible answer focused on results.",
            "State assumptions explicitly when the request is ambiguous, then proceed with the most likely reading.",
            "Verify claims against files or command output; say so when something could not be verified.",
            "Prefer simple, boring solutions; explain trade-offs only when they change the decision.",
        ],
    ),
];

const SKILLS: &[(&str, &str)] = &[
    (
        "github",
        "Use the gh CLI for issues, pull requests, checks and releases; never scrape the web UI.",
    ),
    (
        "coding-agent",
        "Delegate long refactors to a background coding agent and review its diff before applying.",
    ),
    (
        "weather",
        "Current weather and forecasts via wttr.in; no API key required.",
    ),
    (
        "summarize",
        "Summarize URLs, PDFs and long files into bullet points with source references.",
    ),
    (
        "calendar",
        "Read and create events in the user's calendar through the CalDAV bridge.",
    ),
    (
        "notes",
        "Append to and search the user's notes vault; keep one topic per note.",
    ),
    (
        "healthcheck",
        "Inspect disk, memory, services and recent logs when the user reports a slow machine.",
    ),
    (
        "tmux",
        "Drive interactive terminal programs through tmux send-keys and capture-pane.",
    ),
    (
        "session-logs",
        "Search past session transcripts to recall earlier decisions and context.",
    ),
    (
        "image-gen",
        "Generate or edit images with the configured provider and save them in the workspace.",
    ),
];

pub fn system_prompt() -> String {
    let mut s = String::with_capacity(11_000);
    s.push_str(SYSTEM_INTRO);
    s.push_str("\n\n");
    for (title, rules) in SYSTEM_SECTIONS {
        let _ = writeln!(s, "## {title}");
        for r in *rules {
            let _ = writeln!(s, "- {r}");
        }
        s.push('\n');
    }
    s.push_str("## Skills (mandatory)\nBefore replying, scan the available skills. If exactly one clearly applies, read its \
SKILL.md with `read_file`, then follow it. If several could apply, choose the most specific one.\n<available_skills>\n");
    for (name, desc) in SKILLS {
        let _ = writeln!(
            s,
            "  <skill><name>{name}</name><description>{desc}</description><location>~/.openclaw/skills/{name}/SKILL.md</location></skill>"
        );
    }
    s.push_str("</available_skills>\n\n## Workspace files (injected)\n");
    // Project context the agent injects: deterministic pseudo-documentation until ~10 KB.
    let topics = [
        "build", "tests", "release", "style", "review", "deploy", "logging", "config",
    ];
    let mut i = 0usize;
    while s.len() < 10_500 {
        let t = topics[i % topics.len()];
        let _ = writeln!(
            s,
            "### AGENTS.md § {n}. {t}\nFor {t} work in this repository, run the documented make target first, compare the \
result with the previous run recorded in memory/{t}.md, and only then change code. Step {n} of the {t} checklist: \
keep changes small, cite file paths and line numbers, and summarize the outcome in one sentence.\n",
            n = i + 1
        );
        i += 1;
    }
    let _ = write!(
        s,
        "## Runtime\nRuntime: agent=main | host=bench-host | os=linux (x64) | model=custom/{MODEL} | channel=webchat | thinking=low\n\
         Current date: 2025-06-01. Time zone: UTC."
    );
    s
}

fn tool(name: &str, description: &str, properties: Value, required: &[&str]) -> Value {
    json!({"type": "function", "function": {
        "name": name,
        "description": description,
        "parameters": {"type": "object", "properties": properties, "required": required, "additionalProperties": false}
    }})
}

/// A deterministic OpenClaw-like chat completions request of ~14 KB.
pub fn agent_body(stream: bool) -> Value {
    let file_excerpt = "use std::time::Duration;\n\npub fn backoff(attempt: u32) -> Duration {\n    let base = Duration::from_millis(100);\n    \
base * 2u32.pow(attempt)\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn grows() {\n        \
assert_eq!(backoff(0), Duration::from_millis(100));\n        assert_eq!(backoff(3), Duration::from_millis(800));\n        \
assert_eq!(backoff(40), Duration::from_secs(60));\n    }\n}\n";
    let tools = vec![
        tool(
            "read_file",
            "Read a UTF-8 text file from the workspace. Returns the content with line numbers.",
            json!({
                "path": {"type": "string", "description": "Path relative to the workspace root."},
                "offset": {"type": "integer", "minimum": 1, "description": "First line to read (1-based)."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 2000, "description": "Maximum number of lines."}
            }),
            &["path"],
        ),
        tool(
            "exec",
            "Run a shell command in the workspace and return its exit code, stdout and stderr.",
            json!({
                "command": {"type": "string", "description": "The command line, run with bash -lc."},
                "timeout_seconds": {"type": "integer", "minimum": 1, "maximum": 1800, "default": 120},
                "background": {"type": "boolean", "description": "Run detached and return a job id."}
            }),
            &["command"],
        ),
        tool(
            "edit_file",
            "Replace one exact, unique occurrence of old_text with new_text in a file.",
            json!({
                "path": {"type": "string"},
                "old_text": {"type": "string", "description": "Text to replace; must occur exactly once."},
                "new_text": {"type": "string"}
            }),
            &["path", "old_text", "new_text"],
        ),
    ];
    let mut body = json!({
        "model": MODEL,
        "messages": [
            {"role": "system", "content": system_prompt()},
            {"role": "user", "content": "The retry test in crates/net fails since yesterday's change. Can you find out why and fix it?"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_7f3a1", "type": "function", "function": {"name": "exec", "arguments": "{\"command\":\"cargo test -p net retry 2>&1 | tail -20\"}"}}
            ]},
            {"role": "tool", "tool_call_id": "call_7f3a1", "content": "running 1 test\ntest retry::tests::grows ... FAILED\n\nthread 'retry::tests::grows' panicked at crates/net/src/retry.rs:15:9:\nattempt to multiply with overflow\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n\ntest result: FAILED. 0 passed; 1 failed"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_7f3a2", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"crates/net/src/retry.rs\"}"}}
            ]},
            {"role": "tool", "tool_call_id": "call_7f3a2", "content": file_excerpt},
            {"role": "assistant", "content": "The backoff multiplies without a cap, so attempt 40 overflows. The test expects the delay to saturate at 60 s."},
            {"role": "user", "content": "Right, cap it at 60 seconds and use saturating arithmetic. Then run the tests again."}
        ],
        "tools": tools,
        "tool_choice": "auto",
        "temperature": 0.2,
        "max_tokens": 4096,
        "stream": stream,
    });
    if stream {
        body["stream_options"] = json!({"include_usage": true});
    }
    body
}

/// The same agent turn as [`agent_body`], as an OpenAI Responses request (what Codex sends):
/// the system prompt as `instructions`, the history as input items, flat function tools.
pub fn responses_agent_body(stream: bool) -> Value {
    let chat = agent_body(stream);
    let mut input = Vec::new();
    let mut instructions = Value::Null;
    for m in chat["messages"].as_array().into_iter().flatten() {
        match m["role"].as_str() {
            Some("system") => instructions = m["content"].clone(),
            Some("tool") => input.push(json!({"type": "function_call_output",
                "call_id": m["tool_call_id"], "output": m["content"]})),
            Some("assistant") if m["tool_calls"].is_array() => {
                for c in m["tool_calls"].as_array().into_iter().flatten() {
                    input.push(json!({"type": "function_call", "call_id": c["id"],
                        "name": c["function"]["name"], "arguments": c["function"]["arguments"]}));
                }
            }
            Some("assistant") => input.push(json!({"type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": m["content"], "annotations": []}]})),
            _ => input.push(json!({"type": "message", "role": m["role"],
                "content": [{"type": "input_text", "text": m["content"]}]})),
        }
    }
    let tools: Vec<Value> = chat["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            let f = &t["function"];
            json!({"type": "function", "name": f["name"], "description": f["description"],
                "parameters": f["parameters"], "strict": false})
        })
        .collect();
    json!({
        "model": MODEL, "instructions": instructions, "input": input, "tools": tools,
        "tool_choice": "auto", "parallel_tool_calls": true, "temperature": 0.2,
        "max_output_tokens": 4096, "store": false, "stream": stream,
    })
}
