//! `fake-tinker [--vocab N]`
//!
//! The in-process fake Tinker server (tinker-client's `fake` feature) as a program, for the
//! dashboard's browser tests: prints exactly one line, `listening on http://127.0.0.1:PORT`,
//! then serves until SIGTERM or ctrl-c.

use std::io::Write;

use clap::Parser;
use tinker_client::fake::{FakeServer, Knobs};

#[derive(Parser, Debug)]
#[command(
    name = "fake-tinker",
    about = "Fake Tinker training server for MetaClaw tests"
)]
struct Args {
    /// Vocabulary of the fake policy: the token ids of the tokenizer the test uses must fit.
    #[arg(long, default_value_t = 362)]
    vocab: usize,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let server = FakeServer::try_start(Knobs {
        vocab_size: args.vocab,
        ..Knobs::default()
    })
    .await?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "listening on {}", server.url())?;
        out.flush()?;
    }
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
    server.shutdown().await;
    Ok(())
}
