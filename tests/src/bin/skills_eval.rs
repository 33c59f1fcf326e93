//! Retrieval quality of the bundled bank on the labelled set in tests/fixtures/skills_eval.jsonl:
//! recall@3, MRR and false injections for the template, bm25 and embedding modes.
//!
//! `cargo run -p metaclaw-tests --bin skills-eval [-- --sweep]`
//! Embedding mode runs against the mock upstream's fake `/v1/embeddings` (hash vectors): it
//! checks the mechanics (caching, fusion, fallback), not semantic quality.

use std::time::Duration;

use anyhow::Result;
use metaclaw_skills::{Embedder, Library, Mode, RetrievalConfig, Sources};
use metaclaw_tests::eval::{MemoryCache, Metrics, load_cases, run, score};
use metaclaw_tests::mock_upstream::MockUpstream;

fn row(name: &str, m: Metrics) -> String {
    format!(
        "| {name} | {:.3} | {:.3} | {:.1}% | {:.2} | {:.2} |",
        m.recall_at_3,
        m.mrr,
        m.false_injection * 100.0,
        m.irrelevant_per_query,
        m.mean_injected
    )
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<()> {
    let sweep = std::env::args().any(|a| a == "--sweep");
    let verbose = std::env::args().any(|a| a == "--misses");
    let cases = load_cases()?;
    let lib = Library::load(&Sources {
        user_dir: None,
        bundled: true,
    });
    let with = cases.iter().filter(|c| !c.expected.is_empty()).count();
    println!(
        "{} cases ({} with an expected skill, {} with none), {} skills\n",
        cases.len(),
        with,
        cases.len() - with,
        lib.len()
    );
    println!(
        "| mode | recall@3 | MRR | false injection (no-skill queries) | irrelevant skills / query | skills / query |"
    );
    println!("|---|---|---|---|---|---|");
    let base = RetrievalConfig::default();
    let template = RetrievalConfig {
        mode: Mode::Template,
        ..base.clone()
    };
    println!(
        "{}",
        row(
            "template",
            score(&cases, &run(&lib, &cases, &template, None).await?)
        )
    );
    let bm25_results = run(&lib, &cases, &base, None).await?;
    println!("{}", row("bm25", score(&cases, &bm25_results)));

    let mock = MockUpstream::start().await?;
    let embedder = Embedder::new(
        &mock.openai_base(),
        "",
        "fake-embed",
        Duration::from_secs(5),
    )
    .map_err(anyhow::Error::msg)?;
    let cache = MemoryCache::default();
    let emb_cfg = RetrievalConfig {
        mode: Mode::Embedding,
        ..base.clone()
    };
    let emb = run(&lib, &cases, &emb_cfg, Some((&embedder, &cache))).await;
    mock.stop().await;
    println!(
        "{}",
        row(
            "embedding (fake vectors, RRF with bm25)",
            score(&cases, &emb?)
        )
    );

    print_agent_scaffolding(&lib, &cases)?;

    if verbose {
        println!("\nbm25 misses:");
        for (case, got) in cases.iter().zip(&bm25_results) {
            let hit = case
                .expected
                .iter()
                .any(|e| got.iter().take(3).any(|g| g == e));
            if (case.expected.is_empty() && !got.is_empty()) || (!case.expected.is_empty() && !hit)
            {
                println!("  {}: expected {:?}, got {:?}", case.id, case.expected, got);
            }
        }
    }
    if sweep {
        println!("\nbm25 threshold sweep (min_score / relative):");
        for min_score in [2.0f32, 4.0, 6.0, 8.0, 10.0, 12.0] {
            for rel in [0.3f32, 0.5, 0.7] {
                let cfg = RetrievalConfig {
                    min_score,
                    relative_threshold: rel,
                    ..base.clone()
                };
                let m = score(&cases, &run(&lib, &cases, &cfg, None).await?);
                println!("{}", row(&format!("min {min_score} rel {rel}"), m));
            }
        }
    }
    Ok(())
}

/// bm25 recall@3 on the plain cases, bare and wrapped in each agent's recorded scaffolding
/// (tests/fixtures/agents/).
fn print_agent_scaffolding(lib: &Library, cases: &[metaclaw_tests::eval::Case]) -> Result<()> {
    use metaclaw_tests::agents::{load_all, scaffold_recall};
    println!("\n| agent scaffolding | cases | recall@3 bare | recall@3 wrapped | same skills |");
    println!("|---|---|---|---|---|");
    for fixture in load_all()? {
        let r = scaffold_recall(lib, cases, &fixture);
        println!(
            "| {} | {} | {:.3} | {:.3} | {}/{} |",
            r.agent, r.cases, r.bare.recall_at_3, r.wrapped.recall_at_3, r.identical, r.cases
        );
    }
    Ok(())
}
