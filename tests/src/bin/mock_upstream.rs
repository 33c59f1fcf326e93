//! `mock-upstream --port N [--stream-chunks N] [--no-record]`
//!
//! Prints exactly one line, `listening on http://127.0.0.1:PORT`, then serves until
//! SIGTERM or ctrl-c. Scripted through `POST /_mock/script` (see `Behaviour`).

use std::io::Write;

use clap::Parser;
use metaclaw_tests::mock_upstream::{MockOptions, MockUpstream};

#[derive(Parser, Debug)]
#[command(
    name = "mock-upstream",
    about = "Deterministic mock OpenAI/Anthropic upstream for MetaClaw tests"
)]
struct Args {
    /// Port on 127.0.0.1 (0 = any free port).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Number of content deltas per streamed reply.
    #[arg(long, default_value_t = 4)]
    stream_chunks: usize,
    /// Do not keep request records (for benchmarks).
    #[arg(long)]
    no_record: bool,
    /// Keep at most this many recorded requests.
    #[arg(long, default_value_t = 10_000)]
    max_recorded: usize,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let opts = MockOptions {
        stream_chunks: args.stream_chunks.max(1),
        record_requests: !args.no_record,
        max_recorded: args.max_recorded,
    };
    let mock = MockUpstream::start_with(args.port, opts).await?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "listening on http://{}", mock.addr())?;
        out.flush()?;
    }
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
    mock.stop().await;
    Ok(())
}
