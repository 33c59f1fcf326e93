//! Field-weighted BM25 (BM25F) over name, description and body, with an in-memory inverted
//! index. Scoring touches only the postings of the query's terms, so a query costs the same
//! whatever the size of the bank, apart from the matches themselves.

use std::collections::HashMap;

use bm25::{DefaultTokenizer, Language, Tokenizer};

use crate::skill::Skill;

const K1: f32 = 1.2;
const B: f32 = 0.75;
/// name ×3, description ×2, body ×1.
const FIELD_WEIGHTS: [f32; 3] = [3.0, 2.0, 1.0];

pub struct Index {
    tokenizer: DefaultTokenizer,
    /// term → (document, weighted and length-normalized term frequency).
    postings: HashMap<String, Vec<(u32, f32)>>,
    docs: usize,
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index")
            .field("terms", &self.postings.len())
            .field("docs", &self.docs)
            .finish()
    }
}

fn tokenizer() -> DefaultTokenizer {
    DefaultTokenizer::new(Language::English)
}

impl Index {
    pub fn build(skills: &[impl AsRef<Skill>]) -> Index {
        let tokenizer = tokenizer();
        let fields: Vec<[Vec<String>; 3]> = skills
            .iter()
            .map(|s| {
                let s = s.as_ref();
                [
                    tokenizer.tokenize(&s.name.replace('-', " ")),
                    tokenizer.tokenize(&s.description),
                    tokenizer.tokenize(&s.body),
                ]
            })
            .collect();
        let n = fields.len().max(1) as f32;
        let mut avg = [0f32; 3];
        for f in &fields {
            for (i, tokens) in f.iter().enumerate() {
                avg[i] += tokens.len() as f32 / n;
            }
        }
        let mut postings: HashMap<String, Vec<(u32, f32)>> = HashMap::new();
        for (doc, f) in fields.iter().enumerate() {
            let mut weighted: HashMap<&str, f32> = HashMap::new();
            for (i, tokens) in f.iter().enumerate() {
                let norm = 1.0 - B + B * tokens.len() as f32 / avg[i].max(1.0);
                for t in tokens {
                    *weighted.entry(t.as_str()).or_default() += FIELD_WEIGHTS[i] / norm;
                }
            }
            for (term, w) in weighted {
                postings
                    .entry(term.to_owned())
                    .or_default()
                    .push((doc as u32, w));
            }
        }
        Index {
            tokenizer,
            postings,
            docs: fields.len(),
        }
    }

    pub fn tokenize(&self, text: &str) -> Vec<String> {
        let mut tokens = self.tokenizer.tokenize(text);
        tokens.sort_unstable();
        tokens.dedup();
        tokens
    }

    /// BM25F scores of every document matching at least one query term, best first.
    pub fn search(&self, query: &str) -> Vec<(usize, f32)> {
        self.search_top(query, usize::MAX)
    }

    /// The `limit` best documents, best first. Only the postings of the query's terms are
    /// touched, and only the winners are sorted.
    pub fn search_top(&self, query: &str, limit: usize) -> Vec<(usize, f32)> {
        let terms = self.tokenize(query);
        let mut scores = vec![0f32; self.docs];
        let mut touched: Vec<u32> = Vec::new();
        for term in &terms {
            let Some(list) = self.postings.get(term) else {
                continue;
            };
            let df = list.len() as f32;
            let idf = (1.0 + (self.docs as f32 - df + 0.5) / (df + 0.5)).ln();
            for &(doc, tf) in list {
                let slot = &mut scores[doc as usize];
                if *slot == 0.0 {
                    touched.push(doc);
                }
                *slot += idf * tf * (K1 + 1.0) / (K1 + tf);
            }
        }
        let mut out: Vec<(usize, f32)> = touched
            .into_iter()
            .map(|d| (d as usize, scores[d as usize]))
            .collect();
        let order = |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if out.len() > limit {
            out.select_nth_unstable_by(limit, order);
            out.truncate(limit);
        }
        out.sort_by(order);
        out
    }

    /// Which query terms occur in a document (for explanations).
    pub fn matched_terms(&self, query: &str, doc: usize) -> Vec<String> {
        self.tokenize(query)
            .into_iter()
            .filter(|t| {
                self.postings
                    .get(t)
                    .is_some_and(|l| l.iter().any(|(d, _)| *d as usize == doc))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skill::SkillSource;

    fn skill(name: &str, description: &str, body: &str) -> Skill {
        let text = format!("---\nname: {name}\ndescription: \"{description}\"\n---\n{body}\n");
        Skill::parse(&text, "p".into(), SkillSource::Bundled).unwrap()
    }

    #[test]
    fn ranks_by_field_weighted_relevance() {
        let skills = vec![
            skill(
                "fix-flaky-tests",
                "Use when tests fail intermittently on CI",
                "Reproduce by repetition.",
            ),
            skill(
                "write-clear-emails",
                "Use when drafting an email to a colleague",
                "Subject line first.",
            ),
            skill(
                "read-stack-traces",
                "Use when a program crashes with a traceback",
                "Start at the bottom of the trace. Tests help.",
            ),
        ];
        let skills: Vec<std::sync::Arc<Skill>> =
            skills.into_iter().map(std::sync::Arc::new).collect();
        let index = Index::build(&skills);
        let hits = index.search("my tests are flaky on CI, failing randomly");
        assert_eq!(hits[0].0, 0);
        assert!(
            hits.iter().all(|(d, _)| *d != 1),
            "email skill shares no terms"
        );
        assert!(index.search("what is the capital of peru").is_empty());
        assert!(index.matched_terms("flaky tests", 0).len() == 2);
    }
}
