//! `soak-bench`: how MetaClaw lives through a burst and then hours of ordinary use.
//!
//! A daemon in a fresh home (skills on, evolution against the mock, log rotated by size) is
//! driven through four phases, and the bench prints what a laptop user would feel:
//! 1. burst: `--concurrency` clients send 14 KB agent requests for `--burst-secs`; RSS is
//!    sampled every 200 ms (peak);
//! 2. recovery: nothing for `--recover-secs`; RSS each second (is memory given back?);
//! 3. soak: `--soak-secs` of mixed traffic (OpenAI and Anthropic, stream and not, tool calls,
//!    sessions that end so evolution runs, thumbs on every tenth turn);
//! 4. idle: `--idle-secs` of nothing; CPU used and log bytes written.
//!
//! Then the daemon is stopped and every turn the proxy acknowledged (its
//! `x-metaclaw-turn-id`) is looked up in the database: "missing" must be 0.
//! A bench, not a test: it prints figures and the targets beside them.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Parser;
use metaclaw_tests::bench::{
    DaemonSpec, MODEL, PROXY_KEY, agent_body, clk_tck, cpu_ticks, rss_mb, sibling_exe,
    start_daemon, start_mock, watch_signals,
};
use serde_json::{Value, json};

const TARGET_PEAK_MB: f64 = 300.0;
const TARGET_IDLE_CPU_PCT: f64 = 0.5;

#[derive(Parser, Debug)]
#[command(
    name = "soak-bench",
    about = "Memory, CPU, log and database growth of a long-running MetaClaw"
)]
struct Args {
    #[arg(long)]
    metaclaw: Option<PathBuf>,
    #[arg(long)]
    mock: Option<PathBuf>,
    /// Clients in the burst.
    #[arg(long, default_value_t = 64)]
    concurrency: usize,
    #[arg(long, default_value_t = 60.0)]
    burst_secs: f64,
    #[arg(long, default_value_t = 60.0)]
    recover_secs: f64,
    #[arg(long, default_value_t = 120.0)]
    soak_secs: f64,
    /// Clients during the soak (a person and a few agents, not a load test).
    #[arg(long, default_value_t = 4)]
    soak_clients: usize,
    #[arg(long, default_value_t = 60.0)]
    idle_secs: f64,
    /// Run the daemon under this command, e.g. `--wrap "heaptrack -o /tmp/metaclaw"`.
    #[arg(long)]
    wrap: Option<String>,
    /// Extra environment for the daemon (repeatable), e.g. `--daemon-env MALLOC_ARENA_MAX=2`.
    #[arg(long, value_name = "KEY=VALUE")]
    daemon_env: Vec<String>,
}

struct Shared {
    client: reqwest::Client,
    base: String,
    token: String,
    acknowledged: Mutex<Vec<String>>,
    requests: AtomicU64,
    errors: AtomicU64,
    first_error: Mutex<Option<String>>,
}

impl Shared {
    fn error(&self, e: impl std::fmt::Display) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        let mut first = self.first_error.lock().unwrap_or_else(|p| p.into_inner());
        first.get_or_insert_with(|| e.to_string());
    }

    /// One request to `/v1{path}`; keeps the acknowledged turn id.
    async fn turn(
        &self,
        path: &str,
        body: &Value,
        session: Option<(&str, bool)>,
    ) -> Option<String> {
        self.requests.fetch_add(1, Ordering::Relaxed);
        let mut req = self
            .client
            .post(format!("{}/v1{path}", self.base))
            .bearer_auth(PROXY_KEY)
            .header("anthropic-version", "2023-06-01")
            .json(body);
        if let Some((id, done)) = session {
            req = req.header("x-session-id", id);
            if done {
                req = req.header("x-session-done", "true");
            }
        }
        let resp = match req.send().await {
            Ok(r) => r,
            Err(e) => {
                self.error(format!("{path}: {e}"));
                return None;
            }
        };
        let status = resp.status();
        let turn = resp
            .headers()
            .get("x-metaclaw-turn-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        // The turn is acknowledged once the whole answer (or stream) has arrived.
        match resp.bytes().await {
            Ok(_) if status.is_success() => {}
            Ok(b) => {
                self.error(format!("{path}: {status}: {}", String::from_utf8_lossy(&b)));
                return None;
            }
            Err(e) => {
                self.error(format!("{path}: body: {e}"));
                return None;
            }
        }
        let turn = turn?;
        self.acknowledged
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(turn.clone());
        Some(turn)
    }

    /// Thumbs on a turn, as a user does once it shows in the dashboard: a turn is recorded
    /// just after its answer, so a 404 is retried for a moment.
    async fn thumbs(&self, turn: &str, rating: i8) {
        for attempt in 0..50 {
            let r = self
                .client
                .post(format!("{}/api/turns/{turn}/feedback", self.base))
                .bearer_auth(&self.token)
                .json(&json!({"rating": rating}))
                .send()
                .await;
            match r {
                Ok(r) if r.status().is_success() => return,
                Ok(r) if r.status() == reqwest::StatusCode::NOT_FOUND && attempt < 49 => {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Ok(r) => return self.error(format!("feedback: {}", r.status())),
                Err(e) => return self.error(format!("feedback: {e}")),
            }
        }
    }

    async fn script(&self, mock_port: u16, behaviours: Value) {
        let _ = self
            .client
            .post(format!("http://127.0.0.1:{mock_port}/_mock/script"))
            .json(&behaviours)
            .send()
            .await;
    }
}

fn anthropic_body(stream: bool, text: &str) -> Value {
    json!({
        "model": MODEL, "max_tokens": 512, "stream": stream,
        "system": "You are a careful coding assistant.",
        "messages": [{"role": "user", "content": text}],
    })
}

fn openai_body(stream: bool, text: &str) -> Value {
    let mut body = agent_body(stream);
    if let Some(Value::Array(messages)) = body.get_mut("messages") {
        messages.push(json!({"role": "user", "content": text}));
    }
    body
}

const REQUESTS: &[&str] = &[
    "my bash script breaks when a filename has spaces, how do I fix it?",
    "review this diff before I merge it",
    "write a unit test for the retry helper",
    "帮我看看这个 SQL 查询为什么这么慢",
    "no, that is wrong: use saturating arithmetic instead",
    "summarise the meeting notes into action items",
];

/// Samples RSS every `every` until `stop`; returns (peak, samples).
fn sample_rss(
    pid: u32,
    every: Duration,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<Vec<f64>> {
    std::thread::spawn(move || {
        let mut samples = Vec::new();
        while !stop.load(Ordering::Relaxed) {
            if let Ok(mb) = rss_mb(pid) {
                samples.push(mb);
            }
            std::thread::sleep(every);
        }
        samples
    })
}

fn dir_bytes(dir: &std::path::Path, prefix: &str) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

fn main() -> ExitCode {
    match run(&Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("soak-bench: error: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn run(args: &Args) -> Result<()> {
    watch_signals();
    let metaclaw = args
        .metaclaw
        .clone()
        .map_or_else(|| sibling_exe("metaclaw"), Ok)?;
    let mock_exe = args
        .mock
        .clone()
        .map_or_else(|| sibling_exe("mock-upstream"), Ok)?;
    let scratch = tempfile::tempdir()?;
    let (_mock, mock_port) = start_mock(&mock_exe, 8, &scratch.path().join("mock.log"))?;
    let spec = DaemonSpec {
        env: args
            .daemon_env
            .iter()
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
        skills: true,
        // The evolver uses the upstream (the mock) when it has no endpoint of its own.
        extra_config: String::new(),
        wrapper: args
            .wrap
            .as_deref()
            .map(|w| w.split_whitespace().map(str::to_owned).collect())
            .unwrap_or_default(),
        args: vec!["--log-to-file".into()],
    };
    let (mut daemon, ready) = start_daemon(&metaclaw, mock_port, &spec)?;
    let pid = daemon.proc.pid();
    let home = daemon.home.path().to_owned();
    eprintln!(
        "[soak-bench] daemon pid {pid} ready in {:.0} ms; home {}",
        ready.as_secs_f64() * 1e3,
        home.display()
    );
    let token = std::fs::read_to_string(home.join("dashboard.token"))
        .context("reading the dashboard token")?
        .trim()
        .to_owned();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let shared = Arc::new(Shared {
        client: reqwest::Client::builder()
            .no_proxy()
            .pool_max_idle_per_host(256)
            .timeout(Duration::from_secs(60))
            .build()?,
        base: format!("http://127.0.0.1:{}", daemon.port),
        token,
        acknowledged: Mutex::default(),
        requests: AtomicU64::new(0),
        errors: AtomicU64::new(0),
        first_error: Mutex::default(),
    });

    std::thread::sleep(Duration::from_secs(3));
    let idle_rss = rss_mb(pid)?;

    // 1. Burst.
    eprintln!(
        "[soak-bench] burst: c={} for {:.0} s",
        args.concurrency, args.burst_secs
    );
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = sample_rss(pid, Duration::from_millis(200), stop.clone());
    let burst_body = agent_body(false);
    let t0 = Instant::now();
    rt.block_on(async {
        let deadline = t0 + Duration::from_secs_f64(args.burst_secs);
        let mut tasks = Vec::new();
        for _ in 0..args.concurrency {
            let shared = shared.clone();
            let body = burst_body.clone();
            tasks.push(tokio::spawn(async move {
                while Instant::now() < deadline {
                    shared.turn("/chat/completions", &body, None).await;
                }
            }));
        }
        for t in tasks {
            let _ = t.await;
        }
    });
    let burst_requests = shared.requests.load(Ordering::Relaxed);
    let burst_secs = t0.elapsed().as_secs_f64();
    // 2. Recovery (the sampler keeps going; the burst's peak includes the writer catching up).
    eprintln!("[soak-bench] recovery: {:.0} s", args.recover_secs);
    let mut recovery = Vec::new();
    let r0 = Instant::now();
    while r0.elapsed().as_secs_f64() < args.recover_secs {
        std::thread::sleep(Duration::from_secs(1));
        recovery.push((r0.elapsed().as_secs_f64(), rss_mb(pid)?));
    }
    stop.store(true, Ordering::Relaxed);
    let burst_samples = sampler.join().unwrap_or_default();
    let peak = burst_samples.iter().copied().fold(0.0, f64::max);

    // 3. Soak: mixed traffic.
    eprintln!(
        "[soak-bench] soak: {} clients for {:.0} s",
        args.soak_clients, args.soak_secs
    );
    let soak_rss = Arc::new(Mutex::new(Vec::<(f64, f64)>::new()));
    let s0 = Instant::now();
    let soak_before = shared.requests.load(Ordering::Relaxed);
    rt.block_on(async {
        let deadline = s0 + Duration::from_secs_f64(args.soak_secs);
        let mut tasks = Vec::new();
        for client in 0..args.soak_clients {
            let shared = shared.clone();
            tasks.push(tokio::spawn(async move {
                let mut n = 0usize;
                while Instant::now() < deadline {
                    let session = format!("soak-{client}-{}", n / 6);
                    let done = n % 6 == 5;
                    let text = REQUESTS[n % REQUESTS.len()];
                    if n % 7 == 3 {
                        shared
                            .script(
                                mock_port,
                                json!([{"kind": "tool_call", "name": "read_file", "arguments": "{\"path\":\"src/lib.rs\"}", "text": null}]),
                            )
                            .await;
                    }
                    let turn = match n % 4 {
                        0 => shared.turn("/chat/completions", &openai_body(false, text), Some((&session, done))).await,
                        1 => shared.turn("/chat/completions", &openai_body(true, text), Some((&session, done))).await,
                        2 => shared.turn("/messages", &anthropic_body(false, text), Some((&session, done))).await,
                        _ => shared.turn("/messages", &anthropic_body(true, text), Some((&session, done))).await,
                    };
                    if let Some(turn) = turn
                        && n.is_multiple_of(10)
                    {
                        shared.thumbs(&turn, if n.is_multiple_of(20) { 1 } else { -1 }).await;
                    }
                    n += 1;
                    // People and agents pause between turns.
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }));
        }
        let sampler = {
            let soak_rss = soak_rss.clone();
            tokio::spawn(async move {
                while Instant::now() < deadline {
                    tokio::time::sleep(Duration::from_secs(5)).await;
                    if let Ok(mb) = rss_mb(pid) {
                        soak_rss.lock().unwrap_or_else(|p| p.into_inner()).push((s0.elapsed().as_secs_f64(), mb));
                    }
                }
            })
        };
        for t in tasks {
            let _ = t.await;
        }
        let _ = sampler.await;
    });
    let soak_requests = shared.requests.load(Ordering::Relaxed) - soak_before;

    // 4. Idle.
    eprintln!("[soak-bench] idle: {:.0} s", args.idle_secs);
    std::thread::sleep(Duration::from_secs(5)); // let evolution runs and commits finish
    let log_before = dir_bytes(&home, "metaclaw.log");
    let ticks_before = cpu_ticks(pid)?;
    let i0 = Instant::now();
    std::thread::sleep(Duration::from_secs_f64(args.idle_secs));
    let idle_ticks = cpu_ticks(pid)? - ticks_before;
    let idle_cpu_pct = idle_ticks as f64 / clk_tck() as f64 / i0.elapsed().as_secs_f64() * 100.0;
    let idle_log_bytes = dir_bytes(&home, "metaclaw.log").saturating_sub(log_before);
    let final_rss = rss_mb(pid)?;
    let db_bytes = dir_bytes(&home, "metaclaw.db");
    let log_bytes = dir_bytes(&home, "metaclaw.log");

    // Stop (in-flight turns are committed on SIGTERM), then look every acknowledged turn up.
    let status = daemon.proc.stop()?;
    // A wrapper (heaptrack) may report the signal that stopped it rather than the daemon's exit.
    if !status.success() && args.wrap.is_none() {
        bail!("the daemon exited with {status}");
    }
    let acknowledged = std::mem::take(
        &mut *shared
            .acknowledged
            .lock()
            .unwrap_or_else(|p| p.into_inner()),
    );
    let conn = rusqlite::Connection::open_with_flags(
        home.join("metaclaw.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )?;
    let mut find = conn.prepare("SELECT 1 FROM turns WHERE id = ?1")?;
    let mut missing = 0u64;
    for id in &acknowledged {
        if !find.exists([id])? {
            missing += 1;
        }
    }
    let stored: i64 = conn.query_row("SELECT COUNT(*) FROM turns", [], |r| r.get(0))?;
    let evolution_runs: i64 = conn
        .query_row("SELECT COUNT(*) FROM evolution_runs", [], |r| r.get(0))
        .unwrap_or(0);

    let after = |secs: f64| {
        recovery
            .iter()
            .find(|(t, _)| *t >= secs)
            .or(recovery.last())
            .map_or(f64::NAN, |(_, mb)| *mb)
    };
    let recover_target = f64::max(100.0, 3.0 * idle_rss);
    let recovered = after(60.0);
    println!("| soak-bench | measured | target |");
    println!("|---|---|---|");
    println!("| idle RSS before the burst | {idle_rss:.1} MB | |");
    println!(
        "| burst: c={} for {burst_secs:.0} s | {burst_requests} requests ({:.0}/s) | |",
        args.concurrency,
        burst_requests as f64 / burst_secs
    );
    println!(
        "| peak RSS (burst + writer catching up) | {peak:.1} MB | ≤ {TARGET_PEAK_MB:.0} MB {} |",
        mark(peak <= TARGET_PEAK_MB)
    );
    println!(
        "| RSS 10 / 30 / 60 s after the burst | {:.1} / {:.1} / {:.1} MB | 60 s: ≤ {recover_target:.0} MB {} |",
        after(10.0),
        after(30.0),
        recovered,
        mark(recovered <= recover_target)
    );
    let soak_rss = soak_rss.lock().unwrap_or_else(|p| p.into_inner());
    println!(
        "| soak: {} clients, {:.0} s | {soak_requests} requests; RSS over time {} MB | |",
        args.soak_clients,
        args.soak_secs,
        soak_rss
            .iter()
            .map(|(t, mb)| format!("{t:.0}s:{mb:.0}"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!(
        "| idle CPU ({:.0} s) | {idle_cpu_pct:.2} % of a core | ≤ {TARGET_IDLE_CPU_PCT} % {} |",
        args.idle_secs,
        mark(idle_cpu_pct <= TARGET_IDLE_CPU_PCT)
    );
    println!(
        "| log bytes written while idle | {idle_log_bytes} | 0 {} |",
        mark(idle_log_bytes == 0)
    );
    println!("| RSS at the end | {final_rss:.1} MB | |");
    println!(
        "| log on disk (all rotated files) | {:.2} MB | |",
        log_bytes as f64 / 1_048_576.0
    );
    println!(
        "| database on disk (with WAL) | {:.1} MB | |",
        db_bytes as f64 / 1_048_576.0
    );
    println!("| evolution runs | {evolution_runs} | |");
    println!(
        "| errors | {} {} | 0 |",
        shared.errors.load(Ordering::Relaxed),
        shared
            .first_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .map(|e| format!("(first: {e})"))
            .unwrap_or_default()
    );
    println!(
        "| acknowledged turns missing from the database | {missing} of {} ({stored} stored) | 0 {} |",
        acknowledged.len(),
        mark(missing == 0)
    );
    Ok(())
}

fn mark(ok: bool) -> &'static str {
    if ok { "✓" } else { "✗" }
}
