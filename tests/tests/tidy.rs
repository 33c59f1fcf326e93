//! Rules about the code's shape that ARCHITECTURE.md states, held by tests so they stay true:
//! which crate may depend on which, that every crate is on the map, that time comes from the
//! clock and that HTTP clients are built in one place.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn crate_dirs() -> Vec<(String, PathBuf)> {
    let mut dirs: Vec<(String, PathBuf)> = std::fs::read_dir(repo().join("crates"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), p))
        .collect();
    dirs.sort();
    dirs
}

/// The MetaClaw crates (and Tauri) a manifest's `[dependencies]` names; dev-dependencies are
/// free (tests may use anything).
fn internal_dependencies(manifest: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(manifest).unwrap();
    let doc: toml_edit::DocumentMut = text.parse().unwrap();
    let Some(deps) = doc.get("dependencies").and_then(|d| d.as_table_like()) else {
        return BTreeSet::new();
    };
    deps.iter()
        .map(|(name, _)| name.to_owned())
        .filter(|n| n.starts_with("metaclaw-") || n == "tinker-client" || n.starts_with("tauri"))
        .collect()
}

/// Who may depend on whom: lower layers never reach up. A new edge is a design decision:
/// add it here and say why in ARCHITECTURE.md.
const ALLOWED: &[(&str, &[&str])] = &[
    ("metaclaw-domain", &[]),
    ("metaclaw-config", &[]),
    ("metaclaw-charts", &[]),
    ("metaclaw-claws", &[]),
    ("metaclaw-tasks", &[]),
    ("tinker-client", &[]),
    ("metaclaw-store", &["metaclaw-domain"]),
    ("metaclaw-llm", &["metaclaw-domain"]),
    ("metaclaw-openclaw", &["metaclaw-domain"]),
    ("metaclaw-proxy", &["metaclaw-domain", "metaclaw-config"]),
    ("metaclaw-render", &["metaclaw-llm"]),
    ("metaclaw-scheduler", &["metaclaw-domain", "metaclaw-llm"]),
    ("metaclaw-skills", &["metaclaw-domain", "metaclaw-llm"]),
    (
        "metaclaw-evolve",
        &["metaclaw-domain", "metaclaw-skills", "metaclaw-llm"],
    ),
    (
        "metaclaw-rl",
        &[
            "metaclaw-domain",
            "metaclaw-config",
            "metaclaw-store",
            "metaclaw-proxy",
            "metaclaw-render",
            "metaclaw-llm",
            "metaclaw-scheduler",
            "tinker-client",
        ],
    ),
    (
        "metaclaw-core",
        &[
            "metaclaw-domain",
            "metaclaw-config",
            "metaclaw-store",
            "metaclaw-proxy",
            "metaclaw-render",
            "metaclaw-rl",
            "metaclaw-skills",
            "metaclaw-evolve",
            "metaclaw-llm",
            "metaclaw-openclaw",
            "metaclaw-claws",
            "metaclaw-charts",
            "metaclaw-scheduler",
            "metaclaw-tasks",
        ],
    ),
    (
        "metaclaw-cli",
        &[
            "metaclaw-domain",
            "metaclaw-config",
            "metaclaw-core",
            "metaclaw-llm",
            "metaclaw-rl",
            "metaclaw-store",
            "metaclaw-skills",
        ],
    ),
];

#[test]
fn crates_depend_only_on_the_layers_below_them() {
    let allowed: BTreeMap<&str, BTreeSet<&str>> = ALLOWED
        .iter()
        .map(|(c, deps)| (*c, deps.iter().copied().collect()))
        .collect();
    let mut problems = Vec::new();
    for (name, dir) in crate_dirs() {
        let Some(ok) = allowed.get(name.as_str()) else {
            problems.push(format!(
                "{name} has no entry in the layer table of tests/tests/tidy.rs"
            ));
            continue;
        };
        for dep in internal_dependencies(&dir.join("Cargo.toml")) {
            if !ok.contains(dep.as_str()) {
                problems.push(format!(
                    "{name} depends on {dep}, which its layer does not allow"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_cores_never_need_tauri() {
    for (name, dir) in crate_dirs() {
        let text = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        assert!(
            !text.contains("tauri"),
            "{name} mentions tauri; only src-tauri may"
        );
    }
}

#[test]
fn every_crate_is_on_the_map_and_in_the_readme() {
    let architecture = std::fs::read_to_string(repo().join("ARCHITECTURE.md")).unwrap();
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let paragraph = readme
        .split("## Architecture in one paragraph")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("README.md has an 'Architecture in one paragraph' section");
    let mut problems = Vec::new();
    for (name, _) in crate_dirs() {
        if !architecture.contains(&format!("### `crates/{name}`")) {
            problems.push(format!(
                "ARCHITECTURE.md has no '### `crates/{name}`' section"
            ));
        }
        if !paragraph.contains(&format!("`{name}`")) {
            problems.push(format!(
                "README's architecture paragraph does not name `{name}`"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Production Rust sources: `src/` of every crate and of the app, without test modules and
/// comments.
fn production_sources() -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.filter_map(|e| e.ok()) {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    for (_, dir) in crate_dirs() {
        walk(&dir.join("src"), &mut files);
    }
    walk(&repo().join("src-tauri/src"), &mut files);
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            // Unit tests sit at the end of a file behind `#[cfg(test)]`.
            let code = text.split("#[cfg(test)]\nmod ").next().unwrap_or_default();
            let code: String = code
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            (path, code)
        })
        .collect()
}

fn relative(path: &Path) -> String {
    path.strip_prefix(repo())
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

#[test]
fn time_is_read_only_by_the_clock() {
    let mut problems = Vec::new();
    for (path, code) in production_sources() {
        let rel = relative(&path);
        if rel.ends_with("crates/metaclaw-domain/src/clock.rs") {
            continue;
        }
        for needle in ["Utc::now(", "SystemTime::now(", "Local::now("] {
            if code.contains(needle) {
                problems.push(format!("{rel} calls {needle}) (take a Clock instead)"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn http_clients_are_built_in_one_place() {
    const MAY_BUILD: &[&str] = &[
        "crates/metaclaw-llm/",
        // Relays the user's streams byte for byte.
        "crates/metaclaw-proxy/",
        // Reusable outside MetaClaw, with the Tinker protocol's own retry rules.
        "crates/tinker-client/",
    ];
    let mut problems = Vec::new();
    for (path, code) in production_sources() {
        let rel = relative(&path);
        if MAY_BUILD.iter().any(|p| rel.contains(p)) {
            continue;
        }
        for needle in [
            "Client::builder(",
            "reqwest::Client::new(",
            "ClientBuilder::new(",
            "reqwest::Client::default(",
        ] {
            if code.contains(needle) {
                problems.push(format!(
                    "{rel} builds an HTTP client ({needle}); use metaclaw_llm::http_client"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The rules above must see real code, or they would pass on an empty tree.
#[test]
fn the_rules_see_the_sources() {
    let sources = production_sources();
    assert!(
        sources.len() > 100,
        "only {} source files found",
        sources.len()
    );
    assert!(sources.iter().any(
        |(p, code)| p.ends_with("crates/metaclaw-domain/src/clock.rs")
            && code.contains("Utc::now(")
    ));
    assert!(crate_dirs().len() >= 16);
}
