//! `year-bench [--home PATH] [--turns N] [--sessions N] [--requests N] [--retention-days N]`
//!
//! How MetaClaw copes with a year of heavy use. Steps:
//!
//! 1. generate a home with a year of use (`metaclaw_tests::year_home`), or reuse the one at
//!    `--home` when it already has a database;
//! 2. start the core on it as the daemon does (`metaclaw_core::start`), timing start → the
//!    first `/healthz` 200, three times;
//! 3. every `GET /api` route of the catalogue (`metaclaw_core::api::routes`), through real
//!    HTTP with the dashboard token: p50/p95/max over `--requests` calls each, with the
//!    session list also read deep into the list and the session detail on a long session;
//! 4. on a copy of the database, start the core with `records.retention_days` set so that
//!    retention prunes the oldest part of the year, and time `/v1` proxied requests (mock
//!    upstream) and `/api` requests while the pruning runs in the background;
//! 5. a markdown table with targets and PASS/MISS.
//!
//! Exits 0 when the report was produced (even with MISSes), 1 on harness errors.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use chrono::Utc;
use clap::Parser;
use metaclaw_config::{Config, Home, LlmProvider};
use metaclaw_core::{CoreOptions, RunningCore};
use metaclaw_tests::mock_upstream::MockUpstream;
use metaclaw_tests::year_home::{self, YearSpec};
use rusqlite::{Connection, OpenFlags};

const PROXY_KEY: &str = "proxy-key";
const TARGET_START_MS: f64 = 1000.0;
const TARGET_ROUTE_P95_MS: f64 = 100.0;
/// The charts `/api/charts/{name}` serves.
const CHARTS: &[&str] = &[
    "reward",
    "loss",
    "success_rate",
    "kl",
    "prm_distribution",
    "turns_per_day",
];

#[derive(Parser, Debug)]
#[command(
    name = "year-bench",
    about = "Start-up, every dashboard route and pruning on a home after a year of heavy use"
)]
struct Args {
    /// The home to use: reused when it has a database, generated there (and kept) otherwise.
    /// Default: a temporary directory, removed at the end.
    #[arg(long)]
    home: Option<PathBuf>,
    /// Turns to generate.
    #[arg(long, default_value_t = 1_000_000)]
    turns: u64,
    /// Sessions to generate.
    #[arg(long, default_value_t = 20_000)]
    sessions: u64,
    /// Timed calls per route.
    #[arg(long, default_value_t = 40)]
    requests: usize,
    /// Retention for the pruning phase (the generated year spans 365 days).
    #[arg(long, default_value_t = 300)]
    retention_days: u32,
    /// Skip the pruning phase (it copies the database).
    #[arg(long)]
    no_prune: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    // The core's own logs (start-up phases, pruning) when asked for.
    let _log = std::env::var_os("METACLAW_LOG")
        .is_some()
        .then(|| metaclaw_core::init_tracing(metaclaw_core::LogTarget::Stderr));
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("year-bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(run(args)) {
        Ok(report) => {
            println!("{report}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("year-bench: {e:#}");
            ExitCode::FAILURE
        }
    }
}

struct Pcts {
    n: usize,
    p50: f64,
    p95: f64,
    max: f64,
}

fn pcts(samples: &mut [f64]) -> Pcts {
    samples.sort_by(f64::total_cmp);
    let at = |q: f64| {
        let i = ((q * samples.len() as f64).ceil() as usize).clamp(1, samples.len()) - 1;
        samples[i]
    };
    Pcts {
        n: samples.len(),
        p50: at(0.50),
        p95: at(0.95),
        max: *samples.last().unwrap_or(&0.0),
    }
}

fn verdict(ok: bool) -> &'static str {
    if ok { "PASS" } else { "MISS" }
}

async fn run(args: Args) -> Result<String> {
    let temp;
    let root = match &args.home {
        Some(p) => p.clone(),
        None => {
            temp = tempfile::Builder::new().prefix("year-home-").tempdir()?;
            temp.path().to_owned()
        }
    };
    let home = Home::at(&root);
    let mut out = String::new();
    let mut line = |s: String| {
        eprintln!("{s}");
        out.push_str(&s);
        out.push('\n');
    };

    line("# year-bench".into());
    line(String::new());
    if home.db_path().exists() {
        line(format!("Reusing {}", home.db_path().display()));
    } else {
        eprintln!(
            "generating {} turns in {} sessions into {} ...",
            args.turns,
            args.sessions,
            root.display()
        );
        let spec = YearSpec {
            turns: args.turns,
            sessions: args.sessions,
            ..YearSpec::year(Utc::now())
        };
        let root2 = root.clone();
        let report =
            tokio::task::spawn_blocking(move || year_home::generate(&root2, &spec)).await??;
        line(format!(
            "Generated in {:.1} s: {} sessions, {} turns, {} blobs, {} feedback, {} samples, \
             {} PRM votes, {} rewards, {} training steps, {} checkpoints, {} proposals, \
             {} skill versions, {} evolver runs",
            report.elapsed.as_secs_f64(),
            report.sessions,
            report.turns,
            report.blobs,
            report.feedback,
            report.samples,
            report.prm_votes,
            report.rewards,
            report.training_steps,
            report.checkpoints,
            report.proposals,
            report.skill_versions,
            report.evolution_runs,
        ));
    }
    let db_mb = db_size(&home) as f64 / 1e6;
    line(format!("Database on disk: {db_mb:.0} MB"));
    line(String::new());

    let mock = MockUpstream::start().await.context("mock upstream")?;
    let config = bench_config(&home, &mock, 0)?;
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(120))
        .build()?;

    // Start-up, three times (the first one also pays for a cold page cache).
    let mut starts = Vec::new();
    let mut core = None;
    for i in 0..3 {
        let (c, ms) = start_core(&home, &config, &client).await?;
        starts.push(ms);
        if i < 2 {
            c.shutdown().await?;
        } else {
            core = Some(c);
        }
    }
    let core = core.context("core started")?;
    let base = format!("http://{}", core.addr());
    let token = std::fs::read_to_string(home.dashboard_token_path())
        .context("reading the dashboard token")?
        .trim()
        .to_owned();

    line("| Measure | Value | Target | Result |".into());
    line("|---|---|---|---|".into());
    line(format!("| Database size | {db_mb:.0} MB | | |"));
    let worst_start = starts.iter().copied().fold(0.0, f64::max);
    line(format!(
        "| Core start → /healthz 200 (3 runs) | {} ms | ≤ {TARGET_START_MS:.0} ms | {} |",
        starts
            .iter()
            .map(|s| format!("{s:.0}"))
            .collect::<Vec<_>>()
            .join(" / "),
        verdict(worst_start <= TARGET_START_MS)
    ));

    let targets = route_targets(&home)?;
    line(String::new());
    line(format!(
        "| GET route ({} calls each) | p50 ms | p95 ms | max ms | bytes | Result |",
        args.requests
    ));
    line("|---|---|---|---|---|---|".into());
    let mut misses = 0;
    for url in &targets {
        let (mut samples, bytes) = time_get(&client, &base, url, &token, args.requests).await?;
        let p = pcts(&mut samples);
        let ok = p.p95 <= TARGET_ROUTE_P95_MS;
        misses += usize::from(!ok);
        line(format!(
            "| `{url}` | {:.1} | {:.1} | {:.1} | {bytes} | {} |",
            p.p50,
            p.p95,
            p.max,
            verdict(ok)
        ));
    }
    let v1_idle = time_v1(&client, &base, args.requests * 5).await?;
    let mut v1_idle = v1_idle;
    let p = pcts(&mut v1_idle);
    line(format!(
        "| `POST /v1/chat/completions` (no pruning, n={}) | {:.1} | {:.1} | {:.1} | | |",
        p.n, p.p50, p.p95, p.max
    ));
    core.shutdown().await?;

    if !args.no_prune {
        line(String::new());
        let prune = prune_phase(&args, &home, &mock, &client).await?;
        for l in prune {
            line(l);
        }
    }
    line(String::new());
    line(format!(
        "{} of {} routes missed the p95 target of {TARGET_ROUTE_P95_MS:.0} ms.",
        misses,
        targets.len()
    ));
    Ok(out)
}

fn db_size(home: &Home) -> u64 {
    let db = home.db_path();
    let mut wal = db.clone().into_os_string();
    wal.push("-wal");
    [db, PathBuf::from(wal)]
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum()
}

/// The home's config, pointed at the mock upstream, with the given retention.
fn bench_config(home: &Home, mock: &MockUpstream, retention_days: u32) -> Result<Config> {
    let mut config = metaclaw_config::load(&home.config_path())
        .context("loading config.yaml")?
        .config;
    config.llm.provider = LlmProvider::Custom;
    config.llm.model_id = "mock-model".into();
    config.llm.api_base = mock.openai_base();
    config.llm.api_key = "upstream-key".into();
    config.proxy.api_key = PROXY_KEY.into();
    config.records.retention_days = retention_days;
    Ok(config)
}

/// Starts the core on port 0 and waits for `/healthz`; returns it with the time taken.
async fn start_core(
    home: &Home,
    config: &Config,
    client: &reqwest::Client,
) -> Result<(RunningCore, f64)> {
    let t0 = Instant::now();
    let mut opts = CoreOptions::new(home.clone(), config.clone());
    opts.bind = Some("127.0.0.1:0".parse()?);
    let core = metaclaw_core::start(opts)
        .await
        .context("starting the core")?;
    let url = format!("http://{}/healthz", core.addr());
    let deadline = t0 + Duration::from_secs(60);
    loop {
        if let Ok(r) = client.get(&url).send().await
            && r.status().is_success()
        {
            break;
        }
        ensure!(Instant::now() < deadline, "/healthz did not answer in 60 s");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    Ok((core, t0.elapsed().as_secs_f64() * 1000.0))
}

fn read_only(home: &Home) -> Result<Connection> {
    Ok(Connection::open_with_flags(
        home.db_path(),
        OpenFlags::SQLITE_OPEN_READ_ONLY,
    )?)
}

/// Every GET route of the catalogue with its parameters filled from the database; a route
/// with a parameter this bench does not know is an error, so a new route is never skipped.
fn route_targets(home: &Home) -> Result<Vec<String>> {
    let conn = read_only(home)?;
    let q = |sql: &str| -> Result<String> {
        conn.query_row(sql, [], |r| r.get::<_, rusqlite::types::Value>(0))
            .map(|v| match v {
                rusqlite::types::Value::Integer(i) => i.to_string(),
                rusqlite::types::Value::Text(t) => t,
                other => format!("{other:?}"),
            })
            .with_context(|| sql.to_owned())
    };
    let sessions: u64 = q("SELECT count(*) FROM sessions")?.parse()?;
    let longest = q("SELECT id FROM sessions ORDER BY turn_count DESC LIMIT 1")?;
    let typical = q(&format!(
        "SELECT id FROM sessions ORDER BY turn_count, id LIMIT 1 OFFSET {}",
        sessions / 2
    ))?;
    let skill = q(
        "SELECT skill_name FROM skill_versions WHERE skill_name NOT LIKE 'learned-%'
         GROUP BY skill_name ORDER BY count(*) DESC, skill_name LIMIT 1",
    )?;
    let proposal = q("SELECT max(id) FROM proposals")?;

    let mut out = Vec::new();
    for (method, path) in metaclaw_core::api::routes() {
        if method != "get" {
            continue;
        }
        match path {
            "/api/sessions" => {
                out.push(path.to_owned());
                for offset in [sessions / 2, sessions.saturating_sub(50)] {
                    out.push(format!("{path}?limit=50&offset={offset}"));
                }
            }
            "/api/sessions/{id}" => {
                out.push(format!("/api/sessions/{typical}"));
                out.push(format!("/api/sessions/{longest}"));
            }
            "/api/proposals" => {
                out.push(path.to_owned());
                out.push(format!("{path}?status=pending"));
            }
            "/api/proposals/{id}" => out.push(format!("/api/proposals/{proposal}")),
            "/api/skills/{name}" | "/api/skills/{name}/history" => {
                out.push(path.replace("{name}", &skill));
            }
            "/api/charts/{name}" => {
                out.extend(CHARTS.iter().map(|c| format!("/api/charts/{c}.svg")));
            }
            p if p.contains('{') => bail!("year-bench does not know how to fill {p}"),
            p => out.push(p.to_owned()),
        }
    }
    Ok(out)
}

/// Times `n` sequential GETs (after two warm-ups); `/api/events` is timed to its headers.
async fn time_get(
    client: &reqwest::Client,
    base: &str,
    url: &str,
    token: &str,
    n: usize,
) -> Result<(Vec<f64>, usize)> {
    let mut samples = Vec::with_capacity(n);
    let mut bytes = 0;
    for i in 0..n + 2 {
        let t0 = Instant::now();
        let resp = client
            .get(format!("{base}{url}"))
            .bearer_auth(token)
            .send()
            .await?;
        let status = resp.status();
        if url == "/api/events" {
            ensure!(status.is_success(), "{url}: HTTP {status}");
            drop(resp);
        } else {
            let body = resp.bytes().await?;
            ensure!(
                status.is_success(),
                "{url}: HTTP {status}: {}",
                String::from_utf8_lossy(&body[..body.len().min(300)])
            );
            bytes = body.len();
        }
        if i >= 2 {
            samples.push(t0.elapsed().as_secs_f64() * 1000.0);
        }
    }
    Ok((samples, bytes))
}

fn chat_body() -> serde_json::Value {
    serde_json::json!({
        "model": "mock-model",
        "messages": [
            {"role": "system", "content": "You are a coding agent."},
            {"role": "user", "content": "Summarise the build log, please."}
        ]
    })
}

async fn v1_once(client: &reqwest::Client, base: &str, body: &serde_json::Value) -> Result<f64> {
    let t0 = Instant::now();
    let resp = client
        .post(format!("{base}/v1/chat/completions"))
        .bearer_auth(PROXY_KEY)
        .json(body)
        .send()
        .await?;
    let status = resp.status();
    resp.bytes().await?;
    ensure!(status.is_success(), "/v1/chat/completions: HTTP {status}");
    Ok(t0.elapsed().as_secs_f64() * 1000.0)
}

async fn time_v1(client: &reqwest::Client, base: &str, n: usize) -> Result<Vec<f64>> {
    let body = chat_body();
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        samples.push(v1_once(client, base, &body).await?);
    }
    Ok(samples)
}

/// Retention on a copy of the database: the core prunes at start-up in the background while
/// `/v1` and `/api` requests are timed.
async fn prune_phase(
    args: &Args,
    home: &Home,
    mock: &MockUpstream,
    client: &reqwest::Client,
) -> Result<Vec<String>> {
    let scratch = tempfile::Builder::new()
        .prefix("year-prune-")
        .tempdir_in(home.root().parent().unwrap_or(Path::new("/tmp")))?;
    let copy = Home::at(scratch.path());
    copy.ensure()?;
    {
        // A consistent copy (the WAL is folded in by the last close of the core).
        let t0 = Instant::now();
        std::fs::copy(home.config_path(), copy.config_path())?;
        std::fs::copy(home.db_path(), copy.db_path())?;
        // Pages not yet checkpointed are in the WAL; a copy of both is the same database.
        let wal = |h: &Home| PathBuf::from(format!("{}-wal", h.db_path().display()));
        if wal(home).exists() {
            std::fs::copy(wal(home), wal(&copy))?;
        }
        eprintln!("copied the database in {:.1} s", t0.elapsed().as_secs_f64());
    }
    let cutoff = Utc::now() - chrono::Duration::days(i64::from(args.retention_days));
    let cutoff_text = cutoff.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let conn = read_only(&copy)?;
    let count = |conn: &Connection| -> Result<(i64, i64)> {
        Ok(conn.query_row(
            "SELECT (SELECT count(*) FROM turns WHERE started_at < ?1), (SELECT count(*) FROM turns)",
            [&cutoff_text],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?)
    };
    let (old_before, total_before) = count(&conn)?;

    let config = bench_config(&copy, mock, args.retention_days)?;
    let (core, start_ms) = start_core(&copy, &config, client).await?;
    let t0 = Instant::now();
    let base = format!("http://{}", core.addr());
    let token = std::fs::read_to_string(copy.dashboard_token_path())?
        .trim()
        .to_owned();
    let body = chat_body();
    let mut v1 = Vec::new();
    let mut api = Vec::new();
    let oldest = |conn: &Connection| -> Result<Option<String>> {
        Ok(conn.query_row("SELECT min(started_at) FROM turns", [], |r| r.get(0))?)
    };
    let deadline = Duration::from_secs(1800);
    let pruned_after;
    loop {
        v1.push(v1_once(client, &base, &body).await?);
        for url in ["/api/status", "/api/sessions", "/api/skills"] {
            let (s, _) = time_get(client, &base, url, &token, 1).await?;
            api.extend(s);
        }
        // Pruning is done once no turn older than the cutoff is left.
        if oldest(&conn)?.is_none_or(|o| o >= cutoff_text) {
            pruned_after = t0.elapsed();
            break;
        }
        ensure!(t0.elapsed() < deadline, "pruning did not finish in 30 min");
    }
    core.shutdown().await?;
    let (old_after, total_after) = count(&conn)?;
    drop(conn);
    let v1p = pcts(&mut v1);
    let apip = pcts(&mut api);
    Ok(vec![
        format!(
            "Pruning (retention {} days, on a copy): {} of {} turns older than the cutoff, \
             {} left after {:.1} s; {} turns stored after (start-up with pruning: {start_ms:.0} ms)",
            args.retention_days,
            old_before,
            total_before,
            old_after,
            pruned_after.as_secs_f64(),
            total_after
        ),
        String::new(),
        "| While pruning | n | p50 ms | p95 ms | max ms | Result |".into(),
        "|---|---|---|---|---|---|".into(),
        format!(
            "| `POST /v1/chat/completions` | {} | {:.1} | {:.1} | {:.1} | {} |",
            v1p.n,
            v1p.p50,
            v1p.p95,
            v1p.max,
            verdict(v1p.p95 <= TARGET_ROUTE_P95_MS)
        ),
        format!(
            "| `GET /api/status, /api/sessions, /api/skills` | {} | {:.1} | {:.1} | {:.1} | {} |",
            apip.n,
            apip.p50,
            apip.p95,
            apip.max,
            verdict(apip.p95 <= TARGET_ROUTE_P95_MS)
        ),
    ])
}
