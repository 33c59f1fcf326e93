//! Scoring retrieval on the labelled sets in tests/fixtures/retrieval/ (see its README), shared
//! by the `skills-eval` report and the quality tests.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context, Result, bail};
use metaclaw_skills::{
    Embedder, EmbeddingCache, Library, RetrievalConfig, States, query, retrieve,
};
use serde_json::Value;

#[derive(Clone)]
pub struct Case {
    pub id: String,
    pub messages: Vec<Value>,
    pub expected: Vec<String>,
    /// ISO 639-1 code of the request's language (`en` when the file does not say).
    pub lang: String,
    /// `request`, `paraphrase`, `scaffolding`, `no_skill`, … (free text, reported as found).
    pub kind: String,
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

/// Recall@k is the share of cases with an expected skill that have one of them among the
/// first k injected skills; the false-injection rate is the share of cases expecting none
/// that got at least one.
#[derive(Debug, Default, Clone, Copy)]
pub struct Metrics {
    /// Cases with an expected skill, and with none.
    pub with: usize,
    pub without: usize,
    pub recall_at_1: f64,
    pub recall_at_3: f64,
    pub mrr: f64,
    pub false_injection: f64,
    pub irrelevant_per_query: f64,
    pub mean_injected: f64,
}

/// The labelled sets' folder.
pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/retrieval")
}

/// The tuning part (thresholds, trigger phrases and weights are chosen on it).
pub fn load_tune() -> Result<Vec<Case>> {
    load_cases(&fixtures_dir().join("tune.jsonl"))
}

/// A JSONL file of cases: `id`, `messages`, `expected`, optional `lang` and `kind`.
pub fn load_cases(path: &Path) -> Result<Vec<Case>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, l)| {
            let v: Value = serde_json::from_str(l)
                .with_context(|| format!("{} line {}", path.display(), n + 1))?;
            let Some(messages) = v["messages"].as_array().cloned() else {
                bail!("{} line {}: no `messages` array", path.display(), n + 1);
            };
            let field = |key: &str, default: &str| v[key].as_str().unwrap_or(default).to_owned();
            Ok(Case {
                id: field("id", ""),
                messages,
                expected: v["expected"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|x| x.as_str().map(str::to_owned))
                    .collect(),
                lang: field("lang", "en"),
                kind: field(
                    "kind",
                    if v["expected"].as_array().is_some_and(|e| e.is_empty()) {
                        "no_skill"
                    } else {
                        "request"
                    },
                ),
            })
        })
        .collect()
}

pub fn score(cases: &[Case], injected: &[Vec<String>]) -> Metrics {
    let score_of: Vec<(&Case, &Vec<String>)> = cases.iter().zip(injected).collect();
    score_pairs(&score_of)
}

fn score_pairs(pairs: &[(&Case, &Vec<String>)]) -> Metrics {
    let mut m = Metrics::default();
    let (mut r1, mut r3, mut mrr, mut false_inj, mut irrelevant, mut total) =
        (0usize, 0usize, 0.0, 0usize, 0usize, 0usize);
    for (case, got) in pairs {
        total += got.len();
        irrelevant += got.iter().filter(|g| !case.expected.contains(g)).count();
        if case.expected.is_empty() {
            m.without += 1;
            false_inj += usize::from(!got.is_empty());
            continue;
        }
        m.with += 1;
        if let Some(rank) = got.iter().position(|g| case.expected.contains(g)) {
            r1 += usize::from(rank < 1);
            r3 += usize::from(rank < 3);
            mrr += 1.0 / (rank as f64 + 1.0);
        }
    }
    let with = m.with.max(1) as f64;
    let n = pairs.len().max(1) as f64;
    m.recall_at_1 = r1 as f64 / with;
    m.recall_at_3 = r3 as f64 / with;
    m.mrr = mrr / with;
    m.false_injection = false_inj as f64 / m.without.max(1) as f64;
    m.irrelevant_per_query = irrelevant as f64 / n;
    m.mean_injected = total as f64 / n;
    m
}

/// Metrics per value of `key` (a case's language or kind), plus `all` and `non-en`.
pub fn breakdown(
    cases: &[Case],
    injected: &[Vec<String>],
    key: impl Fn(&Case) -> &str,
) -> BTreeMap<String, Metrics> {
    let mut groups: BTreeMap<String, Vec<(&Case, &Vec<String>)>> = BTreeMap::new();
    for (case, got) in cases.iter().zip(injected) {
        groups
            .entry(key(case).to_owned())
            .or_default()
            .push((case, got));
    }
    groups
        .into_iter()
        .map(|(k, pairs)| (k, score_pairs(&pairs)))
        .collect()
}

/// The cases not in English (for the non-English target).
pub fn non_english<'a>(
    cases: &'a [Case],
    injected: &'a [Vec<String>],
) -> (Vec<&'a Case>, Vec<&'a Vec<String>>) {
    cases
        .iter()
        .zip(injected)
        .filter(|(c, _)| c.lang != "en")
        .unzip()
}

/// Metrics over a subset given as references.
pub fn score_refs(cases: &[&Case], injected: &[&Vec<String>]) -> Metrics {
    let pairs: Vec<(&Case, &Vec<String>)> = cases
        .iter()
        .copied()
        .zip(injected.iter().copied())
        .collect();
    score_pairs(&pairs)
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
