//! The year-of-use generator at a small scale: the home it writes is one the core opens and
//! serves, with the counts asked for, and the same seed gives the same data.

use chrono::{TimeZone, Utc};
use metaclaw_config::Home;
use metaclaw_core::CoreOptions;
use metaclaw_tests::year_home::{YearSpec, generate};
use serde_json::Value;

fn spec() -> YearSpec {
    YearSpec {
        seed: 7,
        sessions: 40,
        turns: 2_000,
        days: 365,
        end: Utc.with_ymd_and_hms(2026, 6, 1, 12, 0, 0).unwrap(),
    }
}

fn first_turn_ids(home: &std::path::Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(Home::at(home).db_path()).unwrap();
    conn.prepare("SELECT id FROM turns ORDER BY started_at, id LIMIT 20")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_generated_home_opens_in_the_core_with_the_counts_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let report = generate(dir.path(), &spec()).unwrap();
    assert_eq!(report.turns, 2_000);
    assert_eq!(report.sessions, 40);
    assert!(report.proposals > 0 && report.training_steps > 0 && report.samples > 0);
    // A second run refuses to overwrite the database.
    assert!(generate(dir.path(), &spec()).is_err());

    let home = Home::at(dir.path());
    let config = metaclaw_config::load(&home.config_path()).unwrap().config;
    let mut opts = CoreOptions::new(home.clone(), config);
    opts.bind = Some("127.0.0.1:0".parse().unwrap());
    let core = metaclaw_core::start(opts).await.expect("core starts");
    let base = format!("http://{}", core.addr());
    let token = std::fs::read_to_string(home.dashboard_token_path()).unwrap();
    let client = reqwest::Client::new();
    let get = |path: &str| {
        client
            .get(format!("{base}{path}"))
            .bearer_auth(token.trim())
            .send()
    };

    let status: Value = get("/api/status").await.unwrap().json().await.unwrap();
    assert_eq!(status["counts"]["turns"], 2_000);
    assert_eq!(status["counts"]["sessions"], 40);
    let pending = status["counts"]["pending_proposals"].as_u64().unwrap();
    let listed: Vec<Value> = get("/api/proposals?status=pending&limit=500")
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed.len() as u64, pending);

    // Every session once across pages, and a session's detail has all its turns.
    let mut seen = Vec::new();
    for offset in (0..40).step_by(15) {
        let page: Vec<Value> = get(&format!("/api/sessions?limit=15&offset={offset}"))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        seen.extend(page);
    }
    assert_eq!(seen.len(), 40);
    let total: u64 = seen.iter().map(|s| s["turn_count"].as_u64().unwrap()).sum();
    assert_eq!(total, 2_000);
    let first = &seen[0];
    let detail: Value = get(&format!("/api/sessions/{}", first["id"].as_str().unwrap()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        detail["turns"].as_array().unwrap().len() as u64,
        first["turn_count"].as_u64().unwrap()
    );
    assert!(!detail["turns"][0]["user_text"].as_str().unwrap().is_empty());
    core.shutdown().await.unwrap();

    // Same seed, same data.
    let again = tempfile::tempdir().unwrap();
    generate(again.path(), &spec()).unwrap();
    assert_eq!(first_turn_ids(dir.path()), first_turn_ids(again.path()));
}
