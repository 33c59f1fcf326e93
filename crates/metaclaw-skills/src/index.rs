//! Field-weighted BM25 (BM25F) over name, description, body and trigger phrases, with an
//! in-memory inverted index. Scoring touches only the postings of the query's terms, so a
//! query costs the same whatever the size of the bank, apart from the matches themselves.

use std::collections::{HashMap, HashSet};

use crate::analyzer::{Analyzer, Variants};
use crate::skill::Skill;
use crate::vocabulary;

const K1: f32 = 1.2;
const B: f32 = 0.75;
/// name ×3, description ×3, body ×0.5, trigger phrases ×4 (chosen on the tuning set): the
/// triggers are written to be matched (paraphrases, other languages), while the body's many
/// generic words mostly add spurious matches.
const FIELD_WEIGHTS: [f32; 4] = [3.0, 3.0, 0.5, 4.0];

/// One document matching a query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub doc: usize,
    pub score: f32,
    /// Share of the query's specificity (the idf of its words) that this document matches:
    /// small talk matches a generic word or two of a skill, a request most of its words.
    pub coverage: f32,
    /// The part of `score` from the skill's topic words: query words that are neither request
    /// words ([`vocabulary`]) nor numbers. Zero when only "explain", "message", "next week"…
    /// matched.
    pub topic: f32,
    /// How many of the query's words belong to everyday life (the same for every hit).
    pub everyday: u32,
}

/// The documents a term occurs in.
struct Postings {
    /// (document, weighted and length-normalized term frequency).
    docs: Vec<(u32, f32)>,
    /// A request word or a number: it adds to a score but is no evidence that
    /// the skill fits, so it does not count towards [`Hit::topic`].
    request_word: bool,
}

pub struct Index {
    analyzer: Analyzer,
    postings: HashMap<String, Postings>,
    /// Everyday words ([`vocabulary`]), none of them a term of the bank.
    everyday: HashSet<String>,
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

/// The text of each field of a skill, in `FIELD_WEIGHTS` order.
fn fields(skill: &Skill) -> [String; 4] {
    [
        skill.name.replace('-', " "),
        skill.description.clone(),
        skill.body.clone(),
        skill.triggers().join("\n"),
    ]
}

impl Index {
    pub fn build(skills: &[impl AsRef<Skill>]) -> Index {
        Index::build_with(skills, Analyzer::new())
    }

    pub fn build_with(skills: &[impl AsRef<Skill>], analyzer: Analyzer) -> Index {
        let fields: Vec<[Vec<Variants>; 4]> = skills
            .iter()
            .map(|s| fields(s.as_ref()).map(|text| analyzer.words(&text)))
            .collect();
        let n = fields.len().max(1) as f32;
        let mut avg = [0f32; 4];
        for f in &fields {
            for (i, words) in f.iter().enumerate() {
                avg[i] += words.len() as f32 / n;
            }
        }
        let lists = vocabulary::terms(&analyzer);
        let mut postings: HashMap<String, Postings> = HashMap::new();
        for (doc, f) in fields.iter().enumerate() {
            let mut weighted: HashMap<&str, f32> = HashMap::new();
            for (i, words) in f.iter().enumerate() {
                let norm = 1.0 - B + B * words.len() as f32 / avg[i].max(1.0);
                for variant in words.iter().flatten() {
                    *weighted.entry(variant.as_str()).or_default() += FIELD_WEIGHTS[i] / norm;
                }
            }
            for (term, w) in weighted {
                postings
                    .entry(term.to_owned())
                    .or_insert_with(|| Postings {
                        docs: Vec::new(),
                        // A number ("90", "2024") says nothing about which skill fits.
                        request_word: lists.request.contains(term)
                            || term.bytes().all(|b| b.is_ascii_digit()),
                    })
                    .docs
                    .push((doc as u32, w));
            }
        }
        // A word the bank itself uses ("date", "chat", "service") is work vocabulary too, and a
        // single CJK character is part of too many words to say anything.
        let everyday = lists
            .everyday
            .iter()
            .filter(|t| !postings.contains_key(*t) && t.chars().count() > 1)
            .cloned()
            .collect();
        Index {
            everyday,
            analyzer,
            postings,
            docs: fields.len(),
        }
    }

    pub fn analyzer(&self) -> &Analyzer {
        &self.analyzer
    }

    /// The query's distinct words, each with its term variants.
    fn query_words(&self, text: &str) -> Vec<Variants> {
        let mut words = self.analyzer.words(text);
        words.sort_unstable();
        words.dedup();
        words
    }

    /// BM25F scores of every document matching at least one query term, best first.
    pub fn search(&self, query: &str) -> Vec<(usize, f32)> {
        self.search_top(query, usize::MAX)
    }

    /// The `limit` best documents, best first, as `(document, score)`.
    pub fn search_top(&self, query: &str, limit: usize) -> Vec<(usize, f32)> {
        self.hits(query, limit)
            .into_iter()
            .map(|h| (h.doc, h.score))
            .collect()
    }

    /// The `limit` best documents, best first. Only the postings of the query's terms are
    /// touched, and only the winners are sorted. A query word adds, per document, the score
    /// of its best-matching variant, so a word with several stems counts once.
    pub fn hits(&self, query: &str, limit: usize) -> Vec<Hit> {
        let words = self.query_words(query);
        let n = self.docs as f32;
        let idf = |df: f32| (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
        let mut scores = vec![0f32; self.docs];
        let mut matched = vec![0f32; self.docs];
        let mut topic = vec![0f32; self.docs];
        // Per document, the word's best variant: score, idf, and whether it is a request word.
        let mut best = vec![(0f32, 0f32, false); self.docs];
        let mut stamp = vec![u32::MAX; self.docs];
        let mut touched: Vec<u32> = Vec::new();
        let mut in_word: Vec<u32> = Vec::new();
        let mut query_weight = 0f32;
        let mut everyday = 0;
        for (w, variants) in words.iter().enumerate() {
            let w = w as u32;
            if variants.first().is_some_and(|v| self.everyday.contains(v)) {
                everyday += 1;
            }
            in_word.clear();
            // A word the bank has never seen is as specific as a word can be.
            let mut word_idf = idf(0.0);
            for term in variants {
                let Some(postings) = self.postings.get(term) else {
                    continue;
                };
                let term_idf = idf(postings.docs.len() as f32);
                word_idf = word_idf.min(term_idf);
                for &(doc, tf) in &postings.docs {
                    let d = doc as usize;
                    let s = term_idf * tf * (K1 + 1.0) / (K1 + tf);
                    if stamp[d] != w {
                        stamp[d] = w;
                        best[d] = (s, term_idf, postings.request_word);
                        in_word.push(doc);
                    } else if s > best[d].0 {
                        best[d] = (s, term_idf, postings.request_word);
                    }
                }
            }
            query_weight += word_idf;
            for &doc in &in_word {
                let d = doc as usize;
                if scores[d] == 0.0 {
                    touched.push(doc);
                }
                scores[d] += best[d].0;
                matched[d] += best[d].1;
                if !best[d].2 {
                    topic[d] += best[d].0;
                }
            }
        }
        let mut out: Vec<Hit> = touched
            .into_iter()
            .map(|d| Hit {
                doc: d as usize,
                score: scores[d as usize],
                coverage: (matched[d as usize] / query_weight.max(f32::EPSILON)).min(1.0),
                topic: topic[d as usize],
                everyday,
            })
            .collect();
        let order = |a: &Hit, b: &Hit| b.score.total_cmp(&a.score).then(a.doc.cmp(&b.doc));
        if out.len() > limit {
            out.select_nth_unstable_by(limit, order);
            out.truncate(limit);
        }
        out.sort_by(order);
        out
    }

    /// The query's words that belong to everyday life (for explanations).
    pub fn everyday_terms(&self, query: &str) -> Vec<String> {
        self.query_words(query)
            .into_iter()
            .filter_map(|v| v.into_iter().next().filter(|t| self.everyday.contains(t)))
            .collect()
    }

    /// Which query terms occur in a document (for explanations).
    pub fn matched_terms(&self, query: &str, doc: usize) -> Vec<String> {
        self.query_words(query)
            .into_iter()
            .filter_map(|variants| {
                variants.into_iter().find(|t| {
                    self.postings
                        .get(t)
                        .is_some_and(|p| p.docs.iter().any(|(d, _)| *d as usize == doc))
                })
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

    #[test]
    fn trigger_phrases_are_a_searchable_field() {
        let text = "---\nname: tidy-inbox\ndescription: Use when sorting email\nmetadata:\n  metaclaw:\n    triggers:\n      es: [\"ordenar la bandeja de entrada\"]\n      ja: [\"受信トレイを整理\"]\n---\nArchive, label, unsubscribe.\n";
        let with = Skill::parse(text, "p".into(), SkillSource::User).unwrap();
        assert_eq!(
            with.triggers(),
            ["ordenar la bandeja de entrada", "受信トレイを整理"]
        );
        let mut without = with.clone();
        without.frontmatter.shift_remove("metadata");
        let other = skill("fix-flaky-tests", "Use when tests fail", "Repeat.");
        for query in ["cómo ordeno mi bandeja", "受信トレイの整理"] {
            let index = Index::build(&[with.clone(), other.clone()].map(std::sync::Arc::new));
            assert_eq!(index.search(query).first().map(|h| h.0), Some(0), "{query}");
            let index = Index::build(&[without.clone(), other.clone()].map(std::sync::Arc::new));
            assert!(
                index.search(query).is_empty(),
                "{query} matched without triggers"
            );
        }
    }

    #[test]
    fn topic_score_leaves_out_request_words_and_numbers() {
        let skills = [
            skill(
                "write-clear-emails",
                "Use when you write a message or email to a client",
                "Subject first.",
            ),
            skill("other-thing", "Use when cooking", "Boil water."),
        ]
        .map(std::sync::Arc::new);
        let index = Index::build(&skills);
        let generic = index.hits("please write me a message, 90 words", 5);
        assert_eq!(generic[0].doc, 0);
        assert!(generic[0].score > 0.0);
        assert_eq!(generic[0].topic, 0.0, "{generic:?}");
        let specific = index.hits("write a message to the client", 5);
        assert!(
            specific[0].topic > 0.0 && specific[0].topic < specific[0].score,
            "{specific:?}"
        );
    }

    /// A user's own skill about daily life makes its words topic words: "recipe" is everyday
    /// for a bank of work skills, and not once a cooking skill joins it.
    #[test]
    fn words_the_bank_uses_are_not_everyday() {
        let work = skill("fix-flaky-tests", "Use when tests fail", "Repeat.");
        let cooking = skill(
            "family-recipes",
            "Use when cooking a family recipe with lasagna or soup",
            "Weigh the flour.",
        );
        let request = "a recipe for lasagna please";
        let index = Index::build(&[std::sync::Arc::new(work.clone())]);
        assert_eq!(index.everyday_terms(request).len(), 2, "recipe, lasagna");
        let index = Index::build(&[work, cooking].map(std::sync::Arc::new));
        assert!(index.everyday_terms(request).is_empty());
        let hit = index.hits(request, 1)[0];
        assert!(hit.doc == 1 && hit.topic > 0.0, "{hit:?}");
    }

    #[test]
    fn a_word_with_several_stems_counts_once() {
        let skills = [
            skill(
                "edit-config",
                "Use when changing the configuration",
                "Deploying it.",
            ),
            skill("other-thing", "Use when cooking", "Boil water."),
        ]
        .map(std::sync::Arc::new);
        let index = Index::build(&skills);
        // Spanish "configuración" and English "configuration" meet through their stems.
        assert_eq!(index.search("configuración").first().map(|h| h.0), Some(0));
        let once = index.search("deploying")[0].1;
        let twice = index.search("deploying deploying")[0].1;
        assert_eq!(once, twice, "a repeated query word adds nothing");
    }
}
