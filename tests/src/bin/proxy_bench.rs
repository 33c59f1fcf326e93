//! `proxy-bench [--metaclaw PATH] [--requests N] [--api chat|responses] [--json]`
//!
//! Measures what the MetaClaw proxy adds on top of an OpenAI-compatible upstream. With
//! `--api responses` the same agent turn is sent as a Responses request: straight to the mock's
//! `/v1/responses`, and through the proxy's `/v1/responses`, which translates it to the mock's
//! chat completions (the path Codex takes in front of a chat-only provider); answers are then
//! compared by their text and event types, which translation keeps. The mock
//! upstream (`mock-upstream`) and the daemon (`metaclaw start --foreground`) run as separate
//! processes, so their CPU time can be read from `/proc` and attributed. Steps:
//!
//! 1. start the mock upstream on a free port;
//! 2. start the daemon 5 times (fresh home each time), timing spawn → `/healthz` 200;
//! 3. idle RSS of the last instance (kept running for the rest);
//! 4. a deterministic ~14 KB OpenClaw-like agent request body;
//! 5. latency at concurrency 1, direct vs proxied, interleaved in blocks;
//! 6. throughput at concurrency 64 for a fixed duration, proxied and direct;
//! 7. daemon CPU per request during the proxied c=64 phase;
//! 8. streaming: time to first SSE chunk, and every SSE event passed through unchanged;
//! 9. a markdown table (or `--json`) with targets and PASS/MISS.
//!
//! Exits 0 when the report was produced (even with MISSes); 1 on harness errors, including
//! SSE events lost or altered by the proxy. Every child process is stopped on every path
//! (guards with `Drop`, plus a signal watcher for SIGINT/SIGTERM/SIGHUP).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail, ensure};
use bytes::Bytes;
use clap::Parser;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use serde_json::{Value, json};

use metaclaw_tests::bench::{
    DaemonSpec, PROXY_KEY, UPSTREAM_KEY, agent_body, clk_tck, cpu_ticks, responses_agent_body,
    rss_mb, sibling_exe, start_daemon, start_mock, status_mb, system_prompt, tail, watch_signals,
};

// Targets from the brief.
const TARGET_ADDED_P50_MS: f64 = 0.5;
const TARGET_ADDED_P99_MS: f64 = 2.0;
const TARGET_RPS: f64 = 2500.0;
const TARGET_IDLE_RSS_MB: f64 = 25.0;
const TARGET_READY_MS: f64 = 150.0;

#[derive(Parser, Debug)]
#[command(
    name = "proxy-bench",
    about = "Measures the latency, throughput, CPU and memory the MetaClaw proxy adds"
)]
struct Args {
    /// The `metaclaw` binary (default: next to this executable).
    #[arg(long)]
    metaclaw: Option<PathBuf>,
    /// The `mock-upstream` binary (default: next to this executable).
    #[arg(long)]
    mock: Option<PathBuf>,
    /// Sequential requests per side (direct, proxied) at concurrency 1.
    #[arg(long, default_value_t = 2000)]
    requests: usize,
    /// Warm-up requests per side before the concurrency-1 phase.
    #[arg(long, default_value_t = 200)]
    warmup: usize,
    /// Requests per block when alternating direct/proxied at concurrency 1.
    #[arg(long, default_value_t = 100)]
    block: usize,
    /// Concurrent client tasks in the throughput phase.
    #[arg(long, default_value_t = 64)]
    concurrency: usize,
    /// Seconds per side in the throughput phase.
    #[arg(long, default_value_t = 5.0)]
    duration: f64,
    /// Streamed requests per side.
    #[arg(long, default_value_t = 200)]
    stream_requests: usize,
    /// Content deltas per streamed reply (passed to `mock-upstream --stream-chunks`).
    #[arg(long, default_value_t = 32)]
    stream_chunks: usize,
    /// Daemon start-ups to time.
    #[arg(long, default_value_t = 5)]
    startups: usize,
    /// Extra environment for the daemon, e.g. `--daemon-env MALLOC_ARENA_MAX=2` (repeatable).
    #[arg(long, value_name = "KEY=VALUE", value_parser = parse_env)]
    daemon_env: Vec<(String, String)>,
    /// Print the report as JSON instead of a markdown table.
    #[arg(long)]
    json: bool,
    /// Run with skill injection on (the bundled bank, BM25): measures what retrieval and
    /// injection add on every proxied request.
    #[arg(long)]
    skills: bool,
    /// The client API measured: chat completions, or the Responses API (translated by the
    /// proxy to the mock's chat completions).
    #[arg(long, value_enum, default_value_t = BenchApi::Chat)]
    api: BenchApi,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq)]
enum BenchApi {
    Chat,
    Responses,
}

impl BenchApi {
    fn path(self) -> &'static str {
        match self {
            Self::Chat => "/v1/chat/completions",
            Self::Responses => "/v1/responses",
        }
    }

    fn body(self, stream: bool) -> Value {
        match self {
            Self::Chat => agent_body(stream),
            Self::Responses => responses_agent_body(stream),
        }
    }

    /// What must be the same in a direct and a proxied answer: everything but per-request ids,
    /// times and prompt sizes for chat (passed through); the text for Responses (translated).
    fn answer_key(self, raw: &str) -> String {
        match self {
            Self::Chat => mask_per_request(raw),
            Self::Responses => serde_json::from_str::<Value>(raw)
                .map(|v| output_text(&v))
                .unwrap_or_else(|_| raw.to_owned()),
        }
    }

    /// The same for one SSE event: the event type and its text for Responses.
    fn event_key(self, data: &str) -> String {
        match self {
            Self::Chat => mask_per_request(data),
            Self::Responses => match serde_json::from_str::<Value>(data) {
                Ok(v) => {
                    let text = ["delta", "text", "arguments"]
                        .iter()
                        .find_map(|k| v.get(*k).and_then(Value::as_str))
                        .unwrap_or_default();
                    format!("{}|{text}", v["type"].as_str().unwrap_or_default())
                }
                Err(_) => data.to_owned(),
            },
        }
    }

    /// A well-formed direct stream: `[DONE]` and a usage chunk, or `response.completed`
    /// with usage.
    fn check_direct_stream(self, events: &[String]) -> Result<()> {
        match self {
            Self::Chat => {
                ensure!(
                    events.last().map(String::as_str) == Some("[DONE]"),
                    "direct stream did not end with [DONE]"
                );
                ensure!(
                    events.iter().any(|e| e.contains("\"usage\":{")),
                    "direct stream has no usage chunk"
                );
            }
            Self::Responses => {
                let last: Value = serde_json::from_str(events.last().map_or("", String::as_str))
                    .context("direct stream ended with a non-JSON event")?;
                ensure!(
                    last["type"] == "response.completed",
                    "direct stream did not end with response.completed"
                );
                ensure!(
                    last["response"]["usage"].is_object(),
                    "direct stream has no usage"
                );
            }
        }
        Ok(())
    }
}

/// The text of a Responses `response` object's messages.
fn output_text(v: &Value) -> String {
    let mut out = String::new();
    for item in v["output"].as_array().into_iter().flatten() {
        for part in item["content"].as_array().into_iter().flatten() {
            out.push_str(part["text"].as_str().unwrap_or_default());
        }
    }
    out
}

fn parse_env(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_owned(), v.to_owned())),
        _ => Err(format!("expected KEY=VALUE, got {s:?}")),
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    watch_signals();
    match run(&args) {
        Ok(report) => {
            if args.json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&report.to_json()).unwrap_or_default()
                );
            } else {
                print!("{}", report.to_markdown());
            }
            if report.harness_ok() {
                ExitCode::SUCCESS
            } else {
                eprintln!(
                    "proxy-bench: FAIL: {}",
                    report.harness_failures().join("; ")
                );
                ExitCode::from(1)
            }
        }
        Err(e) => {
            eprintln!("proxy-bench: error: {e:#}");
            ExitCode::from(1)
        }
    }
}

macro_rules! progress {
    ($($t:tt)*) => {{
        eprintln!("[proxy-bench] {}", format!($($t)*));
    }};
}

/// Waits until the process used no CPU for 200 ms (work deferred past the responses, such as
/// recording turns, belongs to the requests too). Gives up after `max`.
/// Returns the CPU ticks then, and how long it took until the last busy interval ended.
fn wait_quiet(pid: u32, max: Duration) -> Result<(u64, Duration)> {
    let t0 = Instant::now();
    let deadline = t0 + max;
    let mut last = cpu_ticks(pid)?;
    let mut busy_until = Duration::ZERO;
    loop {
        std::thread::sleep(Duration::from_millis(200));
        let now = cpu_ticks(pid)?;
        if now == last || Instant::now() > deadline {
            return Ok((now, busy_until));
        }
        busy_until = t0.elapsed();
        last = now;
    }
}

// ------------------------------------------------------------------------------------ client

#[derive(Clone)]
struct Target {
    name: &'static str,
    url: String,
    auth: HeaderValue,
}

fn targets(mock_port: u16, proxy_port: u16, api: BenchApi) -> Result<(Target, Target)> {
    let path = api.path();
    let direct = Target {
        name: "direct",
        url: format!("http://127.0.0.1:{mock_port}{path}"),
        auth: HeaderValue::from_str(&format!("Bearer {UPSTREAM_KEY}"))?,
    };
    let proxied = Target {
        name: "proxied",
        url: format!("http://127.0.0.1:{proxy_port}{path}"),
        auth: HeaderValue::from_str(&format!("Bearer {PROXY_KEY}"))?,
    };
    Ok((direct, proxied))
}

fn client() -> Result<reqwest::Client> {
    Ok(reqwest::Client::builder()
        .http1_only()
        .no_proxy()
        .tcp_nodelay(true)
        .pool_max_idle_per_host(256)
        .pool_idle_timeout(None)
        .timeout(Duration::from_secs(60))
        .build()?)
}

/// One non-stream request; returns its latency (send → whole body read) and the body.
async fn post(client: &reqwest::Client, t: &Target, body: &Bytes) -> Result<(Duration, Bytes)> {
    let t0 = Instant::now();
    let resp = client
        .post(&t.url)
        .header(AUTHORIZATION, t.auth.clone())
        .header(CONTENT_TYPE, "application/json")
        .body(body.clone())
        .send()
        .await
        .with_context(|| format!("{} request failed", t.name))?;
    let status = resp.status();
    let bytes = resp
        .bytes()
        .await
        .with_context(|| format!("{} body failed", t.name))?;
    let elapsed = t0.elapsed();
    if !status.is_success() {
        bail!(
            "{} answered {status}: {}",
            t.name,
            String::from_utf8_lossy(&bytes)
        );
    }
    Ok((elapsed, bytes))
}

fn current_thread_rt() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

// --------------------------------------------------------------------------------- statistics

#[derive(Clone, Copy, Debug, Default)]
struct Pcts {
    p50: f64,
    p90: f64,
    p99: f64,
    max: f64,
}

/// Nearest-rank percentiles, in milliseconds.
fn pcts(samples: &[Duration]) -> Pcts {
    if samples.is_empty() {
        return Pcts::default();
    }
    let mut ms: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1000.0).collect();
    ms.sort_by(f64::total_cmp);
    let at = |p: f64| ms[((p * ms.len() as f64).ceil() as usize).clamp(1, ms.len()) - 1];
    Pcts {
        p50: at(0.50),
        p90: at(0.90),
        p99: at(0.99),
        max: ms[ms.len() - 1],
    }
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    if s.is_empty() {
        0.0
    } else if s.len() % 2 == 1 {
        s[s.len() / 2]
    } else {
        (s[s.len() / 2 - 1] + s[s.len() / 2]) / 2.0
    }
}

/// Replaces the values the mock generates per request (`"id":"…"`, `"created":N`) with `#`,
/// so two answers to the same request compare byte for byte.
/// Masks what legitimately differs per request: ids, timestamps, and the prompt-token counts
/// (skill injection makes the forwarded prompt longer, by design).
fn mask_per_request(s: &str) -> String {
    const KEYS: [(&str, bool); 4] = [
        ("\"id\":\"", true),
        ("\"created\":", false),
        ("\"prompt_tokens\":", false),
        ("\"total_tokens\":", false),
    ];
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    loop {
        let next = KEYS
            .iter()
            .filter_map(|(key, quoted)| rest.find(key).map(|i| (i, *key, *quoted)))
            .min_by_key(|(i, _, _)| *i);
        let Some((i, key, quoted)) = next else {
            out.push_str(rest);
            return out;
        };
        out.push_str(&rest[..i + key.len()]);
        rest = &rest[i + key.len()..];
        let end = if quoted {
            rest.find('"').unwrap_or(rest.len())
        } else {
            rest.find(|c: char| !c.is_ascii_digit())
                .unwrap_or(rest.len())
        };
        out.push('#');
        rest = &rest[end..];
    }
}

/// The `data:` payloads of an SSE body, one per event.
fn sse_data_events(raw: &[u8]) -> Result<Vec<String>> {
    let text = std::str::from_utf8(raw)
        .context("SSE body is not UTF-8")?
        .replace("\r\n", "\n");
    let mut events = Vec::new();
    for block in text.split("\n\n") {
        let data: Vec<&str> = block
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(|d| d.strip_prefix(' ').unwrap_or(d))
            .collect();
        if !data.is_empty() {
            events.push(data.join("\n"));
        }
    }
    Ok(events)
}

// ----------------------------------------------------------------------------------- phases

struct Startup {
    runs_ms: Vec<f64>,
}

struct C1 {
    n: usize,
    direct: Pcts,
    proxied: Pcts,
}

struct Side {
    requests: usize,
    errors: usize,
    secs: f64,
    lat: Pcts,
}

impl Side {
    fn rps(&self) -> f64 {
        self.requests as f64 / self.secs.max(1e-9)
    }
}

struct Load {
    concurrency: usize,
    proxied: Side,
    direct: Side,
    proxy_cpu_ms_per_req: f64,
    mock_cpu_ms_per_req_proxied: f64,
    mock_cpu_ms_per_req_direct: f64,
    bench_cpu_ms_per_req_proxied: f64,
    bench_cpu_ms_per_req_direct: f64,
    /// RSS right at the end of the proxied c=64 phase.
    rss_end_of_load_mb: f64,
    /// How long the daemon kept using CPU after the proxied c=64 phase ended (deferred work).
    drain: Duration,
}

struct Streaming {
    n: usize,
    direct_ttfb: Pcts,
    proxied_ttfb: Pcts,
    direct_total: Pcts,
    proxied_total: Pcts,
    events_direct: usize,
    events_proxied: usize,
    mismatched_responses: usize,
    first_mismatch: Option<String>,
}

struct Report {
    body_bytes: usize,
    startup: Startup,
    idle_rss_mb: f64,
    loaded_rss_mb: f64,
    peak_rss_mb: f64,
    c1: C1,
    load: Load,
    stream: Streaming,
    nonstream_identical: bool,
    clk_tck: u64,
}

fn phase_c1(args: &Args, direct: &Target, proxied: &Target, body: &Bytes) -> Result<(C1, bool)> {
    let rt = current_thread_rt()?;
    rt.block_on(async {
        let client = client()?;
        // Warm-up, and the non-stream answers must match byte for byte (modulo id/created).
        let (_, a) = post(&client, direct, body).await?;
        let (_, b) = post(&client, proxied, body).await?;
        let identical = args.api.answer_key(&String::from_utf8_lossy(&a))
            == args.api.answer_key(&String::from_utf8_lossy(&b));
        if !identical {
            progress!(
                "non-stream answers differ:\n direct:  {}\n proxied: {}",
                String::from_utf8_lossy(&a),
                String::from_utf8_lossy(&b)
            );
        }
        for _ in 0..args.warmup {
            post(&client, direct, body).await?;
            post(&client, proxied, body).await?;
        }
        let n = args.requests;
        let block = args.block.max(1);
        let (mut d, mut p) = (Vec::with_capacity(n), Vec::with_capacity(n));
        while d.len() < n || p.len() < n {
            for _ in 0..block.min(n - d.len()) {
                d.push(post(&client, direct, body).await?.0);
            }
            for _ in 0..block.min(n - p.len()) {
                p.push(post(&client, proxied, body).await?.0);
            }
        }
        Ok((
            C1 {
                n,
                direct: pcts(&d),
                proxied: pcts(&p),
            },
            identical,
        ))
    })
}

/// `concurrency` tasks hammering `t` for `secs`; latencies of every completed request.
async fn hammer(
    client: &reqwest::Client,
    t: &Target,
    body: &Bytes,
    concurrency: usize,
    secs: f64,
) -> Side {
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    let t0 = Instant::now();
    let mut tasks = Vec::with_capacity(concurrency);
    for _ in 0..concurrency {
        let (client, t, body) = (client.clone(), t.clone(), body.clone());
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::with_capacity(4096);
            let mut errors = 0usize;
            while Instant::now() < deadline {
                match post(&client, &t, &body).await {
                    Ok((d, _)) => lat.push(d),
                    Err(e) => {
                        if errors == 0 {
                            progress!("{e:#}");
                        }
                        errors += 1;
                    }
                }
            }
            (lat, errors)
        }));
    }
    let mut all = Vec::new();
    let mut errors = 0;
    for task in tasks {
        match task.await {
            Ok((lat, e)) => {
                all.extend(lat);
                errors += e;
            }
            Err(_) => errors += 1,
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    Side {
        requests: all.len(),
        errors,
        secs,
        lat: pcts(&all),
    }
}

fn phase_load(
    args: &Args,
    direct: &Target,
    proxied: &Target,
    body: &Bytes,
    proxy_pid: u32,
    mock_pid: u32,
    tck: u64,
) -> Result<Load> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let me = std::process::id();
    let ms_per = |ticks: u64, reqs: usize| ticks as f64 * 1000.0 / tck as f64 / reqs.max(1) as f64;
    rt.block_on(async {
        let client = client()?;
        let c = args.concurrency.max(1);
        // Warm-up: open every connection on both legs.
        hammer(&client, proxied, body, c, 0.5).await;
        hammer(&client, direct, body, c, 0.5).await;

        let _ = wait_quiet(proxy_pid, Duration::from_secs(30))?;
        let (p0, m0, b0) = (cpu_ticks(proxy_pid)?, cpu_ticks(mock_pid)?, cpu_ticks(me)?);
        let proxied_side = hammer(&client, proxied, body, c, args.duration).await;
        let (m1, b1) = (cpu_ticks(mock_pid)?, cpu_ticks(me)?);
        // Include the daemon's deferred per-turn work (capture, recording).
        let rss_end_of_load_mb = rss_mb(proxy_pid)?;
        let (p1, drain) = wait_quiet(proxy_pid, Duration::from_secs(30))?;

        let (m2, b2) = (cpu_ticks(mock_pid)?, cpu_ticks(me)?);
        let direct_side = hammer(&client, direct, body, c, args.duration).await;
        let (m3, b3) = (cpu_ticks(mock_pid)?, cpu_ticks(me)?);

        Ok(Load {
            concurrency: c,
            proxy_cpu_ms_per_req: ms_per(p1 - p0, proxied_side.requests),
            mock_cpu_ms_per_req_proxied: ms_per(m1 - m0, proxied_side.requests),
            mock_cpu_ms_per_req_direct: ms_per(m3 - m2, direct_side.requests),
            bench_cpu_ms_per_req_proxied: ms_per(b1 - b0, proxied_side.requests),
            bench_cpu_ms_per_req_direct: ms_per(b3 - b2, direct_side.requests),
            proxied: proxied_side,
            direct: direct_side,
            rss_end_of_load_mb,
            drain,
        })
    })
}

struct StreamOnce {
    ttfb: Duration,
    total: Duration,
    raw: Vec<u8>,
}

async fn stream_once(client: &reqwest::Client, t: &Target, body: &Bytes) -> Result<StreamOnce> {
    let t0 = Instant::now();
    let mut resp = client
        .post(&t.url)
        .header(AUTHORIZATION, t.auth.clone())
        .header(CONTENT_TYPE, "application/json")
        .body(body.clone())
        .send()
        .await
        .with_context(|| format!("{} stream request failed", t.name))?;
    let status = resp.status();
    let ctype = resp
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let mut ttfb = None;
    let mut raw = Vec::with_capacity(8192);
    while let Some(chunk) = resp
        .chunk()
        .await
        .with_context(|| format!("{} stream broke off", t.name))?
    {
        if ttfb.is_none() && !chunk.is_empty() {
            ttfb = Some(t0.elapsed());
        }
        raw.extend_from_slice(&chunk);
    }
    let total = t0.elapsed();
    ensure!(
        status.is_success(),
        "{} stream answered {status}: {}",
        t.name,
        String::from_utf8_lossy(&raw)
    );
    ensure!(
        ctype.starts_with("text/event-stream"),
        "{} stream has content-type {ctype:?}",
        t.name
    );
    Ok(StreamOnce {
        ttfb: ttfb.ok_or_else(|| anyhow!("{} stream had an empty body", t.name))?,
        total,
        raw,
    })
}

fn phase_stream(args: &Args, direct: &Target, proxied: &Target, body: &Bytes) -> Result<Streaming> {
    let rt = current_thread_rt()?;
    rt.block_on(async {
        let client = client()?;
        for _ in 0..20 {
            stream_once(&client, direct, body).await?;
            stream_once(&client, proxied, body).await?;
        }
        let n = args.stream_requests;
        let mut s = Streaming {
            n,
            direct_ttfb: Pcts::default(),
            proxied_ttfb: Pcts::default(),
            direct_total: Pcts::default(),
            proxied_total: Pcts::default(),
            events_direct: 0,
            events_proxied: 0,
            mismatched_responses: 0,
            first_mismatch: None,
        };
        let (mut dt, mut pt, mut dtot, mut ptot) = (vec![], vec![], vec![], vec![]);
        for i in 0..n {
            // Alternate which side goes first.
            let (d, p) = if i % 2 == 0 {
                let d = stream_once(&client, direct, body).await?;
                (d, stream_once(&client, proxied, body).await?)
            } else {
                let p = stream_once(&client, proxied, body).await?;
                (stream_once(&client, direct, body).await?, p)
            };
            dt.push(d.ttfb);
            pt.push(p.ttfb);
            dtot.push(d.total);
            ptot.push(p.total);
            let de = sse_data_events(&d.raw)?;
            let pe = sse_data_events(&p.raw)?;
            args.api.check_direct_stream(&de)?;
            s.events_direct += de.len();
            s.events_proxied += pe.len();
            let dm: Vec<String> = de.iter().map(|e| args.api.event_key(e)).collect();
            let pm: Vec<String> = pe.iter().map(|e| args.api.event_key(e)).collect();
            if dm != pm {
                s.mismatched_responses += 1;
                if s.first_mismatch.is_none() {
                    let at = dm.iter().zip(&pm).position(|(a, b)| a != b).unwrap_or(dm.len().min(pm.len()));
                    s.first_mismatch = Some(format!(
                        "response {i}: {} direct vs {} proxied events; first difference at event {at}: direct {:?} / proxied {:?}",
                        dm.len(),
                        pm.len(),
                        dm.get(at),
                        pm.get(at)
                    ));
                }
            }
        }
        s.direct_ttfb = pcts(&dt);
        s.proxied_ttfb = pcts(&pt);
        s.direct_total = pcts(&dtot);
        s.proxied_total = pcts(&ptot);
        Ok(s)
    })
}

fn run(args: &Args) -> Result<Report> {
    ensure!(
        args.requests > 0 && args.stream_requests > 0 && args.startups > 0,
        "counts must be positive"
    );
    let metaclaw = match &args.metaclaw {
        Some(p) => p.clone(),
        None => sibling_exe("metaclaw")?,
    };
    let mock_exe = match &args.mock {
        Some(p) => p.clone(),
        None => sibling_exe("mock-upstream")?,
    };
    ensure!(
        metaclaw.is_file(),
        "metaclaw binary not found at {} (build metaclaw-cli, or pass --metaclaw)",
        metaclaw.display()
    );
    let tck = clk_tck();
    let scratch = tempfile::Builder::new().prefix("proxy-bench-").tempdir()?;

    // 1. Mock upstream.
    let (mut mock, mock_port) = start_mock(
        &mock_exe,
        args.stream_chunks,
        &scratch.path().join("mock.log"),
    )?;
    progress!("mock upstream pid {} on port {mock_port}", mock.pid());

    // 2. Start-up time, `startups` times; the last instance keeps running.
    let mut runs_ms = Vec::new();
    let mut daemon = None;
    for i in 0..args.startups {
        let (mut d, took) = start_daemon(
            &metaclaw,
            mock_port,
            &DaemonSpec {
                env: args.daemon_env.clone(),
                skills: args.skills,
                ..DaemonSpec::default()
            },
        )?;
        runs_ms.push(took.as_secs_f64() * 1000.0);
        progress!(
            "start-up {}: /healthz ready after {:.1} ms",
            i + 1,
            took.as_secs_f64() * 1000.0
        );
        if i + 1 < args.startups {
            let status = d.proc.stop()?;
            if !status.success() {
                progress!(
                    "metaclaw exited with {status} after SIGTERM; log:\n{}",
                    tail(&d.log())
                );
            }
        } else {
            daemon = Some(d);
        }
    }
    let mut daemon = daemon.ok_or_else(|| anyhow!("no daemon"))?;
    let pid = daemon.proc.pid();

    // 3. Idle RSS.
    std::thread::sleep(Duration::from_secs(1));
    let idle_rss_mb = rss_mb(pid)?;
    progress!(
        "metaclaw pid {pid} on port {}: idle RSS {idle_rss_mb:.1} MB",
        daemon.port
    );

    // 4. The request bodies.
    let chat_len = serde_json::to_vec(&agent_body(false))?.len();
    ensure!(
        (13 * 1024..=15 * 1024).contains(&chat_len),
        "the agent request body is {chat_len} bytes; expected 13–15 KB",
    );
    let body = Bytes::from(serde_json::to_vec(&args.api.body(false))?);
    let stream_body = Bytes::from(serde_json::to_vec(&args.api.body(true))?);
    progress!(
        "request body: {} bytes (system prompt {} bytes)",
        body.len(),
        system_prompt().len()
    );
    let (direct, proxied) = targets(mock_port, daemon.port, args.api)?;
    progress!("API: {}", args.api.path());

    // 5. Concurrency 1.
    progress!(
        "c=1: {} warm-up + {} requests per side, blocks of {}",
        args.warmup,
        args.requests,
        args.block
    );
    let (c1, nonstream_identical) = phase_c1(args, &direct, &proxied, &body)?;

    // 6 + 7. Concurrency 64 with CPU accounting.
    progress!("c={}: {:.1} s per side", args.concurrency, args.duration);
    let load = phase_load(args, &direct, &proxied, &body, pid, mock.pid(), tck)?;

    // 8. Streaming.
    progress!("streaming: {} requests per side", args.stream_requests);
    let stream = phase_stream(args, &direct, &proxied, &stream_body)?;

    let loaded_rss_mb = rss_mb(pid)?;
    let peak_rss_mb = status_mb(pid, "VmHWM")?;

    // 10. Stop everything (the guards would do it too, on any early return).
    let status = daemon.proc.stop()?;
    if !status.success() {
        progress!(
            "metaclaw exited with {status} after SIGTERM; log:\n{}",
            tail(&daemon.log())
        );
    }
    let _ = mock.stop();

    Ok(Report {
        body_bytes: body.len(),
        startup: Startup { runs_ms },
        idle_rss_mb,
        loaded_rss_mb,
        peak_rss_mb,
        c1,
        load,
        stream,
        nonstream_identical,
        clk_tck: tck,
    })
}

// ------------------------------------------------------------------------------------ report

struct Check {
    name: &'static str,
    measured: String,
    target: &'static str,
    pass: bool,
    /// A failure of the proxy's correctness (exit 1), not a performance MISS.
    harness: bool,
}

impl Report {
    fn added_p50(&self) -> f64 {
        self.c1.proxied.p50 - self.c1.direct.p50
    }

    fn added_p99(&self) -> f64 {
        self.c1.proxied.p99 - self.c1.direct.p99
    }

    fn startup_median(&self) -> f64 {
        median(&self.startup.runs_ms)
    }

    fn startup_max(&self) -> f64 {
        self.startup.runs_ms.iter().copied().fold(0.0, f64::max)
    }

    fn events_ok(&self) -> bool {
        self.stream.events_direct == self.stream.events_proxied
            && self.stream.mismatched_responses == 0
    }

    fn checks(&self) -> Vec<Check> {
        let s = &self.stream;
        vec![
            Check {
                name: "added latency p50 @ c=1",
                measured: format!("{:.3} ms", self.added_p50()),
                target: "≤ 0.5 ms",
                pass: self.added_p50() <= TARGET_ADDED_P50_MS,
                harness: false,
            },
            Check {
                name: "added latency p99 @ c=1",
                measured: format!("{:.3} ms", self.added_p99()),
                target: "≤ 2 ms",
                pass: self.added_p99() <= TARGET_ADDED_P99_MS,
                harness: false,
            },
            Check {
                name: "SSE events passed through",
                measured: format!(
                    "{}/{} ({} of {} responses differ)",
                    s.events_proxied, s.events_direct, s.mismatched_responses, s.n
                ),
                target: "all, byte-identical",
                pass: self.events_ok(),
                harness: true,
            },
            Check {
                name: "non-stream answer passed through",
                measured: if self.nonstream_identical {
                    "byte-identical".into()
                } else {
                    "differs".into()
                },
                target: "byte-identical",
                pass: self.nonstream_identical,
                harness: true,
            },
            Check {
                name: "throughput @ c=64 (proxied)",
                measured: format!("{:.0} req/s", self.load.proxied.rps()),
                target: "≥ 2,500 req/s",
                pass: self.load.proxied.rps() >= TARGET_RPS && self.load.proxied.errors == 0,
                harness: false,
            },
            Check {
                name: "idle RSS",
                measured: format!("{:.1} MB", self.idle_rss_mb),
                target: "≤ 25 MB",
                pass: self.idle_rss_mb <= TARGET_IDLE_RSS_MB,
                harness: false,
            },
            Check {
                name: "/healthz ready after start (max of runs)",
                measured: format!(
                    "{:.1} ms (median {:.1} ms)",
                    self.startup_max(),
                    self.startup_median()
                ),
                target: "≤ 150 ms",
                pass: self.startup_max() <= TARGET_READY_MS,
                harness: false,
            },
        ]
    }

    fn harness_failures(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .checks()
            .into_iter()
            .filter(|c| c.harness && !c.pass)
            .map(|c| format!("{}: {}", c.name, c.measured))
            .collect();
        if let Some(m) = &self.stream.first_mismatch {
            out.push(m.clone());
        }
        if self.load.proxied.errors + self.load.direct.errors > 0 {
            out.push(format!(
                "errors under load: {} proxied, {} direct",
                self.load.proxied.errors, self.load.direct.errors
            ));
        }
        out
    }

    fn harness_ok(&self) -> bool {
        self.harness_failures().is_empty()
    }

    fn to_markdown(&self) -> String {
        let mut o = String::new();
        let c1 = &self.c1;
        let l = &self.load;
        let s = &self.stream;
        let _ = writeln!(o, "\n## MetaClaw proxy-bench\n");
        let _ = writeln!(o, "| Check | Measured | Target | Result |");
        let _ = writeln!(o, "|---|---|---|---|");
        for c in self.checks() {
            let result = match (c.pass, c.harness) {
                (true, _) => "PASS",
                (false, false) => "MISS",
                (false, true) => "FAIL",
            };
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} |",
                c.name, c.measured, c.target, result
            );
        }
        let _ = writeln!(o, "\n| Figure | Direct (mock) | Proxied | Added |");
        let _ = writeln!(o, "|---|---|---|---|");
        let row = |o: &mut String, name: &str, d: f64, p: f64| {
            let _ = writeln!(o, "| {name} | {d:.3} ms | {p:.3} ms | {:+.3} ms |", p - d);
        };
        row(
            &mut o,
            &format!("c=1 p50 ({} req/side)", c1.n),
            c1.direct.p50,
            c1.proxied.p50,
        );
        row(&mut o, "c=1 p90", c1.direct.p90, c1.proxied.p90);
        row(&mut o, "c=1 p99", c1.direct.p99, c1.proxied.p99);
        row(&mut o, "c=1 max", c1.direct.max, c1.proxied.max);
        let _ = writeln!(
            o,
            "| c={} throughput ({:.1} s) | {:.0} req/s | {:.0} req/s | {:+.1} % |",
            l.concurrency,
            l.direct.secs,
            l.direct.rps(),
            l.proxied.rps(),
            (l.proxied.rps() / l.direct.rps().max(1e-9) - 1.0) * 100.0
        );
        row(
            &mut o,
            &format!("c={} p50", l.concurrency),
            l.direct.lat.p50,
            l.proxied.lat.p50,
        );
        row(
            &mut o,
            &format!("c={} p99", l.concurrency),
            l.direct.lat.p99,
            l.proxied.lat.p99,
        );
        let _ = writeln!(
            o,
            "| c={} requests / errors | {} / {} | {} / {} | |",
            l.concurrency, l.direct.requests, l.direct.errors, l.proxied.requests, l.proxied.errors
        );
        row(
            &mut o,
            &format!("stream TTFB p50 ({} req/side)", s.n),
            s.direct_ttfb.p50,
            s.proxied_ttfb.p50,
        );
        row(
            &mut o,
            "stream TTFB p99",
            s.direct_ttfb.p99,
            s.proxied_ttfb.p99,
        );
        row(
            &mut o,
            "stream complete p50",
            s.direct_total.p50,
            s.proxied_total.p50,
        );
        row(
            &mut o,
            "stream complete p99",
            s.direct_total.p99,
            s.proxied_total.p99,
        );
        let _ = writeln!(o, "\n| Resource | Value |");
        let _ = writeln!(o, "|---|---|");
        let _ = writeln!(
            o,
            "| /healthz ready after spawn | median {:.1} ms, max {:.1} ms (runs: {}) |",
            self.startup_median(),
            self.startup_max(),
            self.startup
                .runs_ms
                .iter()
                .map(|m| format!("{m:.1}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let _ = writeln!(
            o,
            "| metaclaw RSS idle / end of c={} phase / after all load / peak (VmHWM) | {:.1} / {:.1} / {:.1} / {:.1} MB |",
            l.concurrency,
            self.idle_rss_mb,
            l.rss_end_of_load_mb,
            self.loaded_rss_mb,
            self.peak_rss_mb
        );
        let _ = writeln!(
            o,
            "| metaclaw busy after the proxied c={} phase ended (deferred work) | {:.1} s |",
            l.concurrency,
            l.drain.as_secs_f64()
        );
        let _ = writeln!(
            o,
            "| metaclaw CPU per proxied request (c={}, incl. deferred recording) | {:.3} ms |",
            l.concurrency, l.proxy_cpu_ms_per_req
        );
        let _ = writeln!(
            o,
            "| mock CPU per request (proxied / direct phase) | {:.3} ms / {:.3} ms |",
            l.mock_cpu_ms_per_req_proxied, l.mock_cpu_ms_per_req_direct
        );
        let _ = writeln!(
            o,
            "| load generator CPU per request (proxied / direct phase) | {:.3} ms / {:.3} ms |",
            l.bench_cpu_ms_per_req_proxied, l.bench_cpu_ms_per_req_direct
        );
        let _ = writeln!(o, "| request body | {} bytes |", self.body_bytes);
        let _ = writeln!(
            o,
            "| SSE events per streamed response | {:.1} |",
            s.events_direct as f64 / s.n.max(1) as f64
        );
        let _ = writeln!(
            o,
            "| CPUs / CLK_TCK | {} / {} |",
            std::thread::available_parallelism().map_or(0, |n| n.get()),
            self.clk_tck
        );
        if let Some(m) = &s.first_mismatch {
            let _ = writeln!(o, "\nFirst SSE mismatch: {m}");
        }
        o
    }

    fn to_json(&self) -> Value {
        let p = |x: &Pcts| json!({"p50": x.p50, "p90": x.p90, "p99": x.p99, "max": x.max});
        let side = |x: &Side| {
            json!({"requests": x.requests, "errors": x.errors, "seconds": x.secs, "rps": x.rps(),
                   "latency_ms": p(&x.lat)})
        };
        let checks: Vec<Value> = self
            .checks()
            .into_iter()
            .map(|c| {
                let result = match (c.pass, c.harness) {
                    (true, _) => "PASS",
                    (false, false) => "MISS",
                    (false, true) => "FAIL",
                };
                json!({"name": c.name, "measured": c.measured, "target": c.target, "result": result})
            })
            .collect();
        let l = &self.load;
        let s = &self.stream;
        json!({
            "startup_ms": {"runs": self.startup.runs_ms, "median": self.startup_median(), "max": self.startup_max()},
            "rss_mb": {"idle": self.idle_rss_mb, "end_of_c64_phase": l.rss_end_of_load_mb,
                       "after_load": self.loaded_rss_mb, "peak": self.peak_rss_mb},
            "request_body_bytes": self.body_bytes,
            "c1": {
                "requests_per_side": self.c1.n,
                "direct_ms": p(&self.c1.direct),
                "proxied_ms": p(&self.c1.proxied),
                "added_p50_ms": self.added_p50(),
                "added_p99_ms": self.added_p99(),
                "nonstream_identical": self.nonstream_identical,
            },
            "load": {
                "concurrency": l.concurrency,
                "proxied": side(&l.proxied),
                "direct": side(&l.direct),
                "metaclaw_cpu_ms_per_request": l.proxy_cpu_ms_per_req,
                "metaclaw_busy_after_phase_s": l.drain.as_secs_f64(),
                "mock_cpu_ms_per_request": {"proxied_phase": l.mock_cpu_ms_per_req_proxied, "direct_phase": l.mock_cpu_ms_per_req_direct},
                "bench_cpu_ms_per_request": {"proxied_phase": l.bench_cpu_ms_per_req_proxied, "direct_phase": l.bench_cpu_ms_per_req_direct},
            },
            "stream": {
                "requests_per_side": s.n,
                "ttfb_ms": {"direct": p(&s.direct_ttfb), "proxied": p(&s.proxied_ttfb)},
                "complete_ms": {"direct": p(&s.direct_total), "proxied": p(&s.proxied_total)},
                "events_direct": s.events_direct,
                "events_proxied": s.events_proxied,
                "mismatched_responses": s.mismatched_responses,
                "first_mismatch": s.first_mismatch,
            },
            "clk_tck": self.clk_tck,
            "checks": checks,
            "harness_ok": self.harness_ok(),
        })
    }
}
