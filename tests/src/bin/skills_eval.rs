//! Retrieval quality of the bundled bank on the labelled set in tests/fixtures/skills_eval.jsonl:
//! recall@3, MRR and false injections for the template, bm25 and embedding modes.
//!
//! `cargo run -p metaclaw-tests --bin skills-eval [-- --sweep]`
//! Embedding mode runs against the mock upstream's fake `/v1/embeddings` (hash vectors): it
//! checks the mechanics (caching, fusion, fallback), not semantic quality.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use anyhow::{Context, Result};
use metaclaw_skills::{
    Embedder, EmbeddingCache, Library, Mode, RetrievalConfig, Sources, States, query, retrieve,
};
use metaclaw_tests::mock_upstream::MockUpstream;
use serde_json::Value;

struct Case {
    id: String,
    messages: Vec<Value>,
    expected: Vec<String>,
}

#[derive(Default)]
struct MemoryCache(Mutex<HashMap<(String, String), Vec<f32>>>);

impl EmbeddingCache for MemoryCache {
    fn get(&self, model: &str, hash: &str) -> Option<Vec<f32>> {
        self.0
            .lock()
            .ok()?
            .get(&(model.to_owned(), hash.to_owned()))
            .cloned()
    }
    fn put(&self, model: &str, hash: &str, vector: &[f32]) {
        if let Ok(mut m) = self.0.lock() {
            m.insert((model.to_owned(), hash.to_owned()), vector.to_vec());
        }
    }
}

#[derive(Debug, Default, Clone, Copy)]
struct Metrics {
    recall_at_3: f64,
    mrr: f64,
    false_injection: f64,
    irrelevant_per_query: f64,
    mean_injected: f64,
}

fn load_cases() -> Result<Vec<Case>> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/skills_eval.jsonl");
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l)?;
            Ok(Case {
                id: v["id"].as_str().unwrap_or_default().to_owned(),
                messages: v["messages"].as_array().cloned().unwrap_or_default(),
                expected: v["expected"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|x| x.as_str().map(str::to_owned))
                    .collect(),
            })
        })
        .collect()
}

fn score(cases: &[Case], injected: &[Vec<String>]) -> Metrics {
    let (mut recall, mut mrr, mut with, mut without, mut false_inj, mut irrelevant, mut total) =
        (0.0, 0.0, 0, 0, 0, 0usize, 0usize);
    for (case, got) in cases.iter().zip(injected) {
        total += got.len();
        irrelevant += got.iter().filter(|g| !case.expected.contains(g)).count();
        if case.expected.is_empty() {
            without += 1;
            if !got.is_empty() {
                false_inj += 1;
            }
            continue;
        }
        with += 1;
        let top3 = &got[..got.len().min(3)];
        recall += case.expected.iter().filter(|e| top3.contains(e)).count() as f64
            / case.expected.len() as f64;
        if let Some(rank) = got.iter().position(|g| case.expected.contains(g)) {
            mrr += 1.0 / (rank as f64 + 1.0);
        }
    }
    Metrics {
        recall_at_3: recall / with.max(1) as f64,
        mrr: mrr / with.max(1) as f64,
        false_injection: false_inj as f64 / without.max(1) as f64,
        irrelevant_per_query: irrelevant as f64 / cases.len().max(1) as f64,
        mean_injected: total as f64 / cases.len().max(1) as f64,
    }
}

async fn run(
    lib: &Library,
    cases: &[Case],
    cfg: &RetrievalConfig,
    embed: Option<(&Embedder, &MemoryCache)>,
) -> Result<Vec<Vec<String>>> {
    let mut out = Vec::new();
    for case in cases {
        let q = query::from_messages(&case.messages);
        let dense = match embed {
            Some((e, cache)) if !q.is_empty() => {
                Some(e.rank(lib, cache, &q).await.map_err(anyhow::Error::msg)?)
            }
            _ => None,
        };
        let r = retrieve(lib, &States::new(), &q, cfg, dense.as_deref());
        // Injection order: by score among retrieved skills (pins first, none here).
        out.push(r.injected_names().into_iter().map(str::to_owned).collect());
    }
    Ok(out)
}

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
