//! Upstream MetaClaw's `template` mode, kept for compatibility: route the query to a category
//! by keywords, then inject from that category — but with whole-word matching (upstream's
//! substring test let "test" match "latest") and BM25 ranking inside the category.

use std::collections::HashMap;

use crate::library::Library;
use crate::retrieve::RetrievalConfig;

const ROUTES: &[(&str, &[&str])] = &[
    (
        "coding",
        &[
            "code",
            "function",
            "class",
            "api",
            "refactor",
            "implement",
            "compile",
            "git",
            "review",
            "pull request",
            "endpoint",
            "library",
            "module",
            "python",
            "rust",
            "javascript",
            "typescript",
            "unit test",
            "migration",
        ],
    ),
    (
        "debugging",
        &[
            "bug",
            "debug",
            "error",
            "exception",
            "crash",
            "stack trace",
            "traceback",
            "flaky",
            "regression",
            "leak",
            "fails",
            "failing",
            "broken",
        ],
    ),
    (
        "research",
        &[
            "research",
            "paper",
            "papers",
            "study",
            "sources",
            "cite",
            "citation",
            "literature",
            "compare",
            "summarize",
            "summary",
            "fact check",
        ],
    ),
    (
        "data_analysis",
        &[
            "data",
            "dataset",
            "csv",
            "chart",
            "plot",
            "statistics",
            "sql",
            "query",
            "pandas",
            "outlier",
            "spreadsheet",
            "excel",
            "analysis",
        ],
    ),
    (
        "communication",
        &[
            "email",
            "write",
            "draft",
            "message",
            "reply",
            "release notes",
            "meeting notes",
            "explain",
            "letter",
            "announcement",
        ],
    ),
    (
        "security",
        &[
            "security",
            "secret",
            "password",
            "token",
            "vulnerability",
            "cve",
            "injection",
            "permission",
            "credentials",
            "auth",
        ],
    ),
    (
        "automation",
        &[
            "automate", "script", "cron", "schedule", "pipeline", "ci", "deploy", "workflow",
            "scrape", "bash", "shell",
        ],
    ),
    (
        "agentic",
        &[
            "plan", "steps", "tool", "tools", "agent", "task", "clarify", "verify",
        ],
    ),
    (
        "productivity",
        &[
            "todo",
            "calendar",
            "meeting",
            "organize",
            "files",
            "folders",
            "deadline",
            "prioritize",
            "time",
        ],
    ),
];

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Keyword hits per category, on word boundaries (a keyword may be a two-word phrase).
fn route(query: &str) -> Option<&'static str> {
    let w = words(query);
    let mut best: Option<(&str, usize)> = None;
    for (category, keywords) in ROUTES {
        let hits = keywords
            .iter()
            .filter(|k| {
                let kw: Vec<&str> = k.split(' ').collect();
                w.windows(kw.len())
                    .any(|win| win.iter().zip(&kw).all(|(a, b)| a == b))
            })
            .count();
        if hits > 0 && best.is_none_or(|(_, h)| hits > h) {
            best = Some((category, hits));
        }
    }
    best.map(|(c, _)| c)
}

/// `(library position, score, passes)` in injection order.
pub(crate) fn ranked(
    lib: &Library,
    query: &str,
    cfg: &RetrievalConfig,
) -> Vec<(usize, f32, Result<(), String>)> {
    let scores: HashMap<usize, f32> = lib.index().search(query).into_iter().collect();
    let score = |doc: usize| scores.get(&doc).copied().unwrap_or(0.0);
    let mut out = Vec::new();
    let by_category = |category: &str| {
        let mut docs: Vec<usize> = lib
            .skills()
            .iter()
            .enumerate()
            .filter(|(_, s)| s.category == category)
            .map(|(d, _)| d)
            .collect();
        docs.sort_by(|a, b| score(*b).total_cmp(&score(*a)).then(a.cmp(b)));
        docs
    };
    for doc in by_category("general").into_iter().take(cfg.top_k) {
        out.push((doc, score(doc), Ok(())));
    }
    match route(query) {
        Some(category) => {
            for (i, doc) in by_category(category).into_iter().enumerate() {
                let passes = if i < cfg.task_specific_top_k {
                    Ok(())
                } else {
                    Err(format!(
                        "beyond task_specific_top_k ({})",
                        cfg.task_specific_top_k
                    ))
                };
                out.push((doc, score(doc), passes));
            }
        }
        None => {
            for (doc, s) in &scores {
                out.push((*doc, *s, Err("no category keyword in the request".into())));
            }
        }
    }
    // Upstream always added common mistakes; here only those the request actually mentions.
    for doc in by_category("common_mistakes") {
        if score(doc) > 0.0 {
            out.push((doc, score(doc), Ok(())));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_on_whole_words_only() {
        assert_eq!(
            route("the latest news please"),
            None,
            "`test` must not match `latest`"
        );
        assert_eq!(
            route("write a unit test for the parser function"),
            Some("coding")
        );
        assert_eq!(route("plot this csv as a chart"), Some("data_analysis"));
        assert_eq!(
            route("the app crashes with a stack trace"),
            Some("debugging")
        );
    }
}
