//! Two word lists that tell a request about a skill's subject from an everyday request that
//! only sounds like one.
//!
//! - *Request words* ("explain", "help me write", "a message", "plan", "next week"): the words
//!   of the bundled bank's names, descriptions, trigger phrases and bodies that say nothing
//!   about which skill fits, because people use them to ask for anything. A skill may gain
//!   score from them, but they are not *topic words*.
//! - *Everyday words* ("soccer", "birthday", "grandma", "recipe"): words of daily life outside
//!   work and computing.
//!
//! A request that uses everyday words gets a skill only if it shares a topic word with it: "explain
//! the offside rule" matches explain-to-non-experts through "explain" alone and gets nothing,
//! while "explain the outage to my grandma" keeps it through "outage". How the lists were made
//! and chosen: tests/fixtures/README.md, round 6. One file per list and language (`#` starts a
//! comment).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};

use crate::analyzer::{Analyzer, AnalyzerOptions};

const REQUEST: [&str; 6] = [
    include_str!("vocabulary/request/en.txt"),
    include_str!("vocabulary/request/es.txt"),
    include_str!("vocabulary/request/de.txt"),
    include_str!("vocabulary/request/fr.txt"),
    include_str!("vocabulary/request/zh.txt"),
    include_str!("vocabulary/request/ja.txt"),
];

const EVERYDAY: [&str; 6] = [
    include_str!("vocabulary/everyday/en.txt"),
    include_str!("vocabulary/everyday/es.txt"),
    include_str!("vocabulary/everyday/de.txt"),
    include_str!("vocabulary/everyday/fr.txt"),
    include_str!("vocabulary/everyday/zh.txt"),
    include_str!("vocabulary/everyday/ja.txt"),
];

fn words(lists: &[&'static str]) -> impl Iterator<Item = &'static str> {
    lists
        .iter()
        .flat_map(|list| list.lines())
        .filter(|line| !line.starts_with('#'))
}

/// Both lists as index terms.
pub(crate) struct Terms {
    pub request: HashSet<String>,
    pub everyday: HashSet<String>,
}

/// The lists' terms for this analyzer's configuration, analysed once per process: they depend
/// on the analyzer alone, while an index is rebuilt on every skill change (and analysing
/// ~7,000 words each time would also churn the analyzer's word memory).
pub(crate) fn terms(analyzer: &Analyzer) -> Arc<Terms> {
    static BUILT: OnceLock<Mutex<HashMap<AnalyzerOptions, Arc<Terms>>>> = OnceLock::new();
    let mut built = BUILT
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    built
        .entry(analyzer.options())
        .or_insert_with(|| {
            Arc::new(Terms {
                request: request_terms(analyzer),
                everyday: everyday_terms(analyzer),
            })
        })
        .clone()
}

/// Every index term of every request word: each entry goes through the analyzer that indexes
/// the skills, so its inflections in the four stemmed languages (and a CJK entry's bigrams)
/// are covered too.
fn request_terms(analyzer: &Analyzer) -> HashSet<String> {
    words(&REQUEST)
        .flat_map(|line| analyzer.words(line))
        .flatten()
        .collect()
}

/// The everyday words, each as its first variant (the English stem, or the CJK bigram). A
/// query word is everyday when its own first variant is here: matching on every stem would
/// let Spanish "pasta" (stem "past") claim English "pasting".
fn everyday_terms(analyzer: &Analyzer) -> HashSet<String> {
    words(&EVERYDAY)
        .flat_map(|line| analyzer.words(line))
        .filter_map(|variants| variants.into_iter().next())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_words_cover_inflections_and_languages() {
        let a = Analyzer::new();
        let t = request_terms(&a);
        for word in ["explaining", "messages", "Nachricht", "解释", "メッセージ"] {
            let variants = a.words(word);
            assert!(
                variants[0].iter().any(|v| t.contains(v)),
                "{word}: {variants:?}"
            );
        }
        for topic in [
            "email",
            "flaky",
            "合并",
            "議事録",
            "Kalender",
            "déploiement",
        ] {
            let variants = a.words(topic);
            assert!(
                variants.iter().flatten().all(|v| !t.contains(v)),
                "{topic} must stay a topic word"
            );
        }
    }

    #[test]
    fn everyday_words_are_matched_by_their_first_stem_only() {
        let a = Analyzer::new();
        let t = everyday_terms(&a);
        for word in [
            "recipes",
            "Geburtstag",
            "cumpleaños",
            "anniversaire",
            "生日",
            "誕生日",
        ] {
            assert!(t.contains(&a.words(word)[0][0]), "{word}");
        }
        assert!(!t.contains(&a.words("pasting")[0][0]));
    }
}
