//! Scoring retrieval on the labelled set (tests/fixtures/skills_eval.jsonl), shared by the
//! `skills-eval` report and the quality test.

use std::collections::HashMap;
use std::sync::Mutex;

use anyhow::{Context, Result};
use metaclaw_skills::{
    Embedder, EmbeddingCache, Library, RetrievalConfig, States, query, retrieve,
};
use serde_json::Value;

pub struct Case {
    pub id: String,
    pub messages: Vec<Value>,
    pub expected: Vec<String>,
}

#[derive(Default)]
pub struct MemoryCache(Mutex<HashMap<(String, String), Vec<f32>>>);

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
pub struct Metrics {
    pub recall_at_3: f64,
    pub mrr: f64,
    pub false_injection: f64,
    pub irrelevant_per_query: f64,
    pub mean_injected: f64,
}

pub fn load_cases() -> Result<Vec<Case>> {
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

pub fn score(cases: &[Case], injected: &[Vec<String>]) -> Metrics {
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

pub async fn run(
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
