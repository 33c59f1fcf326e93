//! Numbered schema migrations, tracked in SQLite's `user_version`.
//!
//! Append new files (`0002_skill_versions.sql`, ...) to [`MIGRATION_LIST`]; never edit a
//! migration that has shipped.

use rusqlite::Connection;
use rusqlite_migration::{M, Migrations};

use crate::error::{Result, StoreError};

const MIGRATION_LIST: &[M<'static>] = &[
    M::up(include_str!("../migrations/0001_initial.sql")),
    M::up(include_str!("../migrations/0002_skills.sql")),
    M::up(include_str!("../migrations/0003_evolution.sql")),
    M::up(include_str!("../migrations/0004_training.sql")),
    M::up(include_str!("../migrations/0005_samples.sql")),
    M::up(include_str!("../migrations/0006_year_scale.sql")),
    M::up(include_str!("../migrations/0007_prm_verdicts.sql")),
    M::up(include_str!("../migrations/0008_skill_evidence.sql")),
    M::up(include_str!("../migrations/0009_tasks.sql")),
    M::up(include_str!("../migrations/0010_agents.sql")),
    M::up(include_str!("../migrations/0012_bench.sql")),
    M::up(include_str!("../migrations/0013_reward_components.sql")),
];

const MIGRATIONS: Migrations<'static> = Migrations::from_slice(MIGRATION_LIST);

/// The `user_version` of a fully migrated database: the number of migrations.
pub const SCHEMA_VERSION: usize = MIGRATION_LIST.len();

pub(crate) fn user_version(conn: &Connection) -> Result<usize> {
    let v: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    // A negative user_version was not written by us; treat it as "too new" below.
    Ok(usize::try_from(v).unwrap_or(usize::MAX))
}

/// Brings the database up to [`SCHEMA_VERSION`]; refuses databases from a newer build.
pub(crate) fn migrate(conn: &mut Connection) -> Result<()> {
    let found = user_version(conn)?;
    if found > SCHEMA_VERSION {
        return Err(StoreError::SchemaTooNew {
            found,
            expected: SCHEMA_VERSION,
        });
    }
    if found < SCHEMA_VERSION {
        MIGRATIONS.to_latest(conn)?;
        tracing::info!(
            from = found,
            to = SCHEMA_VERSION,
            "store: migrated database schema"
        );
    }
    Ok(())
}

/// For read-only opens, which must not migrate: the schema has to match exactly.
pub(crate) fn require_current(conn: &Connection) -> Result<()> {
    let found = user_version(conn)?;
    match found.cmp(&SCHEMA_VERSION) {
        std::cmp::Ordering::Less => Err(StoreError::SchemaTooOld {
            found,
            expected: SCHEMA_VERSION,
        }),
        std::cmp::Ordering::Greater => Err(StoreError::SchemaTooNew {
            found,
            expected: SCHEMA_VERSION,
        }),
        std::cmp::Ordering::Equal => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_are_valid() {
        MIGRATIONS.validate().unwrap();
    }

    #[test]
    fn migrate_sets_user_version_and_is_idempotent() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn).unwrap();
        assert_eq!(user_version(&conn).unwrap(), SCHEMA_VERSION);
        migrate(&mut conn).unwrap();
        assert_eq!(user_version(&conn).unwrap(), SCHEMA_VERSION);
        require_current(&conn).unwrap();
    }

    /// Turns logged before 0003 get their `turn_skills` rows, the same ones the writer
    /// derives for new turns.
    #[test]
    fn migration_0003_backfills_turn_skills_like_the_writer() {
        let mut conn = Connection::open_in_memory().unwrap();
        Migrations::from_slice(&MIGRATION_LIST[..2])
            .to_latest(&mut conn)
            .unwrap();
        assert_eq!(user_version(&conn).unwrap(), 2);
        let injected = [
            serde_json::json!([
                {"kind": "skill", "name": "git", "version": "1.2", "score": 1.0},
                {"kind": "memory", "name": "m"},
                {"kind": "skill", "name": "venv", "version": 3},
                {"kind": "skill", "name": "bare"},
                {"kind": "skill", "version": "1"},
                {"kind": "skill", "name": "git", "version": "9"},
                "skill",
                7,
            ]),
            serde_json::json!({"skills": [{"kind": "skill", "name": "x"}]}),
            serde_json::json!(null),
            serde_json::json!([]),
        ];
        conn.execute(
            "INSERT INTO sessions (id, source, started_at, last_seen_at) VALUES ('s', 'body', 't', 't')",
            [],
        )
        .unwrap();
        for (i, inj) in injected.iter().enumerate() {
            conn.execute(
                "INSERT INTO turns (id, session_id, seq, turn_type, api, stream, request_json,
                     status, http_status, started_at, latency_ms, injected_json)
                 VALUES (?1, 's', ?2, 'main', 'openai', 0, '{}', 'ok', 200, 't', 1.0, ?3)",
                rusqlite::params![format!("t{i}"), i as i64 + 1, inj.to_string()],
            )
            .unwrap();
        }

        migrate(&mut conn).unwrap();
        assert_eq!(user_version(&conn).unwrap(), SCHEMA_VERSION);
        let mut stmt = conn
            .prepare("SELECT skill_name, version FROM turn_skills WHERE turn_id = ?1 ORDER BY skill_name")
            .unwrap();
        for (i, inj) in injected.iter().enumerate() {
            let stored: Vec<(String, Option<String>)> = stmt
                .query_map([format!("t{i}")], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap();
            // The writer keeps the first entry of a skill listed twice (INSERT OR IGNORE).
            let mut expected = crate::turns::injected_skills(inj);
            let mut seen = std::collections::HashSet::new();
            expected.retain(|(name, _)| seen.insert(name.clone()));
            expected.sort();
            assert_eq!(stored, expected, "injected {inj}");
        }
        let total: i64 = conn
            .query_row("SELECT count(*) FROM turn_skills", [], |r| r.get(0))
            .unwrap();
        assert_eq!(total, 3);
        let generation: String = conn
            .query_row(
                "SELECT value FROM meta WHERE key = 'skill_generation'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(generation, "0");
    }

    /// Every file in migrations/ is registered, in file-name order, numbered 0001, 0002, ...
    #[test]
    fn migration_files_are_numbered_and_all_registered() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".sql"))
            .collect();
        names.sort();
        assert_eq!(names.len(), SCHEMA_VERSION);
        // Numbers are handed out per branch (0008 is another branch's until it merges), so
        // they must increase; the list must hold each file in that order.
        let numbers: Vec<usize> = names.iter().map(|n| n[..4].parse().unwrap()).collect();
        assert_eq!(numbers[0], 1);
        assert!(numbers.windows(2).all(|w| w[0] < w[1]), "{names:?}");
        for (m, name) in MIGRATION_LIST.iter().zip(&names) {
            let text = std::fs::read_to_string(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("migrations")
                    .join(name),
            )
            .unwrap();
            assert_eq!(*m, M::up(Box::leak(text.into_boxed_str())), "{name}");
        }
        assert_eq!(SCHEMA_VERSION, 12);
        assert!(names[8].starts_with("0009_tasks"));
        assert!(names[9].starts_with("0010_agents"));
        assert!(names[10].starts_with("0012_bench"));
        assert!(names.last().unwrap().starts_with("0013_reward_components"));
        assert!(names[4].contains("samples"));
        assert!(names[5].contains("year_scale"));
        assert!(names[6].contains("prm_verdicts"));
        assert!(names[7].contains("skill_evidence"));
    }

    /// 0013 applies on top of a database with turn outcomes: they gain `retried`, the
    /// reward parts and the rollout sessions have their tables.
    #[test]
    fn migration_0013_adds_reward_parts_and_retries() {
        let mut conn = Connection::open_in_memory().unwrap();
        Migrations::from_slice(&MIGRATION_LIST[..9])
            .to_latest(&mut conn)
            .unwrap();
        Migrations::from_slice(MIGRATION_LIST)
            .to_latest(&mut conn)
            .unwrap();
        let retried: i64 = conn
            .query_row(
                "SELECT count(*) FROM pragma_table_info('turn_outcomes') WHERE name = 'retried'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(retried, 1);
        let parts: i64 = conn
            .query_row("SELECT count(*) FROM turn_reward_components", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(parts, 0);
        let rollouts: i64 = conn
            .query_row("SELECT count(*) FROM rollout_sessions", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rollouts, 0);
    }

    /// 0004 applies on top of a 0003 database; its tables are STRICT.
    #[test]
    fn migration_0004_adds_the_training_tables() {
        let mut conn = Connection::open_in_memory().unwrap();
        Migrations::from_slice(&MIGRATION_LIST[..3])
            .to_latest(&mut conn)
            .unwrap();
        migrate(&mut conn).unwrap();
        for table in ["training_steps", "checkpoints", "prm_votes", "turn_rewards"] {
            let strict: i64 = conn
                .query_row(
                    "SELECT strict FROM pragma_table_list WHERE name = ?1",
                    [table],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(strict, 1, "{table} is STRICT");
        }
    }

    /// `skill_usage` computed from the turn log, as `skill_stats` did before 0006.
    fn usage_from_log(conn: &Connection) -> Vec<(String, i64, i64, i64, String)> {
        conn.prepare(
            "SELECT ts.skill_name, count(*), count(*) FILTER (WHERE f.rating = 1),
                    count(*) FILTER (WHERE f.rating = -1), max(t.started_at)
             FROM turn_skills ts JOIN turns t ON t.id = ts.turn_id
             LEFT JOIN feedback f ON f.turn_id = ts.turn_id
             GROUP BY ts.skill_name ORDER BY ts.skill_name",
        )
        .unwrap()
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
    }

    fn usage_table(conn: &Connection) -> Vec<(String, i64, i64, i64, String)> {
        conn.prepare(
            "SELECT skill_name, injected, thumbs_up, thumbs_down, last_injected_at
             FROM skill_usage ORDER BY skill_name",
        )
        .unwrap()
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
    }

    /// 0006 applies on a database with data: its indexes exist, `skill_usage` is backfilled
    /// from the log, and its triggers keep it equal to the log through new turns, ratings,
    /// re-ratings and deleted turns.
    #[test]
    fn migration_0006_applies_on_an_existing_database_and_keeps_usage() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "foreign_keys", "ON").unwrap();
        Migrations::from_slice(&MIGRATION_LIST[..5])
            .to_latest(&mut conn)
            .unwrap();
        assert_eq!(user_version(&conn).unwrap(), 5);
        let turn = |conn: &Connection, id: &str, at: &str, skills: &[&str]| {
            conn.execute(
                "INSERT INTO turns (id, session_id, seq, turn_type, api, stream, request_json,
                     status, http_status, started_at, latency_ms, injected_json)
                 VALUES (?1, 's', (SELECT count(*) + 1 FROM turns), 'main', 'openai', 0, '{}',
                     'ok', 200, ?2, 1.0, '[]')",
                rusqlite::params![id, at],
            )
            .unwrap();
            for skill in skills {
                conn.execute(
                    "INSERT INTO turn_skills (turn_id, skill_name) VALUES (?1, ?2)",
                    [id, skill],
                )
                .unwrap();
            }
        };
        let rate = |conn: &Connection, id: &str, rating: i64| {
            conn.execute(
                "INSERT INTO feedback (turn_id, rating, created_at) VALUES (?1, ?2, 't')
                 ON CONFLICT (turn_id) DO UPDATE SET rating = excluded.rating",
                rusqlite::params![id, rating],
            )
            .unwrap();
        };
        conn.execute(
            "INSERT INTO sessions (id, source, started_at, last_seen_at) VALUES ('s', 'body', 'a', 'z')",
            [],
        )
        .unwrap();
        turn(&conn, "t1", "2025-01-01T00:00:00.000Z", &["git", "venv"]);
        turn(&conn, "t2", "2025-01-02T00:00:00.000Z", &["git"]);
        turn(&conn, "t3", "2025-01-03T00:00:00.000Z", &[]);
        rate(&conn, "t1", 1);
        rate(&conn, "t2", -1);

        migrate(&mut conn).unwrap();
        assert_eq!(user_version(&conn).unwrap(), SCHEMA_VERSION);
        for index in [
            "sessions_recent",
            "sessions_open",
            "proposals_status_id",
            "evolution_runs_failed",
        ] {
            let n: i64 = conn
                .query_row(
                    "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = ?1",
                    [index],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(n, 1, "{index}");
        }
        let backfilled = usage_table(&conn);
        assert_eq!(backfilled.len(), 2);
        assert_eq!(backfilled, usage_from_log(&conn));

        turn(&conn, "t4", "2025-01-04T00:00:00.000Z", &["venv", "docs"]);
        rate(&conn, "t4", 1);
        assert_eq!(usage_table(&conn), usage_from_log(&conn));
        rate(&conn, "t1", -1); // re-rated
        assert_eq!(usage_table(&conn), usage_from_log(&conn));
        conn.execute("DELETE FROM feedback WHERE turn_id = 't2'", [])
            .unwrap();
        assert_eq!(usage_table(&conn), usage_from_log(&conn));
        rate(&conn, "t2", 1);
        // Deleting turns takes their skills and feedback along (cascade, in either order).
        conn.execute("DELETE FROM turns WHERE id IN ('t1', 't2')", [])
            .unwrap();
        assert_eq!(usage_table(&conn), usage_from_log(&conn));
        assert!(usage_table(&conn).iter().all(|(name, ..)| name != "git"));
    }

    /// Each judged turn's verdict computed from its votes, as the chart did before 0007.
    fn verdicts_from_votes(conn: &Connection) -> Vec<(String, i64)> {
        conn.prepare(
            "SELECT turn_id, CASE WHEN up > down AND up > zero THEN 1
                                  WHEN down > up AND down > zero THEN -1 ELSE 0 END
             FROM (SELECT turn_id, sum(score = 1) AS up, sum(score = 0) AS zero,
                          sum(score = -1) AS down
                   FROM prm_votes GROUP BY turn_id)
             ORDER BY turn_id",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
    }

    fn verdicts_table(conn: &Connection) -> Vec<(String, i64)> {
        conn.prepare("SELECT turn_id, verdict FROM prm_verdicts ORDER BY turn_id")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    }

    /// 0007 backfills `prm_verdicts` from the votes already stored, and its triggers keep
    /// it equal to the votes through new votes, replaced votes, a changed score and
    /// deleted turns.
    #[test]
    fn migration_0007_backfills_verdicts_and_keeps_them() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "foreign_keys", "ON").unwrap();
        Migrations::from_slice(&MIGRATION_LIST[..6])
            .to_latest(&mut conn)
            .unwrap();
        conn.execute(
            "INSERT INTO sessions (id, source, started_at, last_seen_at) VALUES ('s', 'body', 'a', 'z')",
            [],
        )
        .unwrap();
        for (seq, id) in ["t1", "t2", "t3", "t4"].iter().enumerate() {
            conn.execute(
                "INSERT INTO turns (id, session_id, seq, turn_type, api, stream, request_json,
                     status, http_status, started_at, latency_ms, injected_json)
                 VALUES (?1, 's', ?2, 'main', 'openai', 0, '{}', 'ok', 200, 'a', 1.0, '[]')",
                rusqlite::params![id, seq as i64 + 1],
            )
            .unwrap();
        }
        let vote = |conn: &Connection, id: &str, scores: &[i64]| {
            conn.execute("DELETE FROM prm_votes WHERE turn_id = ?1", [id])
                .unwrap();
            for (n, score) in scores.iter().enumerate() {
                conn.execute(
                    "INSERT INTO prm_votes (turn_id, vote, score, rationale, created_at)
                     VALUES (?1, ?2, ?3, '', 't')",
                    rusqlite::params![id, n as i64, score],
                )
                .unwrap();
            }
        };
        vote(&conn, "t1", &[1, 1, -1]);
        vote(&conn, "t2", &[-1, 0, -1]);
        vote(&conn, "t3", &[1, -1, 0]); // a three-way tie is 0

        migrate(&mut conn).unwrap();
        let backfilled = verdicts_table(&conn);
        assert_eq!(
            backfilled,
            vec![("t1".into(), 1), ("t2".into(), -1), ("t3".into(), 0)]
        );
        assert_eq!(backfilled, verdicts_from_votes(&conn));

        vote(&conn, "t4", &[1]);
        assert_eq!(verdicts_table(&conn), verdicts_from_votes(&conn));
        vote(&conn, "t1", &[-1, -1, 0]); // the judge ran again
        assert_eq!(verdicts_table(&conn), verdicts_from_votes(&conn));
        conn.execute(
            "UPDATE prm_votes SET score = 1 WHERE turn_id = 't3' AND vote = 2",
            [],
        )
        .unwrap();
        assert_eq!(verdicts_table(&conn), verdicts_from_votes(&conn));
        vote(&conn, "t4", &[]); // votes removed: no verdict left
        assert_eq!(verdicts_table(&conn), verdicts_from_votes(&conn));
        assert!(verdicts_table(&conn).iter().all(|(id, _)| id != "t4"));
        conn.execute("DELETE FROM turns WHERE id IN ('t1', 't2')", [])
            .unwrap();
        assert_eq!(verdicts_table(&conn), vec![("t3".into(), 1)]);
    }

    /// 0008 counts the injections, thumbs down and bad verdicts already stored.
    #[test]
    fn migration_0008_backfills_evidence() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "foreign_keys", "ON").unwrap();
        Migrations::from_slice(&MIGRATION_LIST[..7])
            .to_latest(&mut conn)
            .unwrap();
        conn.execute_batch(
            "INSERT INTO sessions (id, source, started_at, last_seen_at) VALUES ('s', 'body', 'a', 'z');
             INSERT INTO turns (id, session_id, seq, turn_type, api, stream, request_json, status,
                 http_status, started_at, latency_ms, injected_json)
             VALUES ('t1', 's', 1, 'main', 'openai', 0, '{}', 'ok', 200, 'a', 1.0, '[]'),
                    ('t2', 's', 2, 'main', 'openai', 0, '{}', 'ok', 200, 'b', 1.0, '[]'),
                    ('t3', 's', 3, 'side', 'openai', 0, '{}', 'ok', 200, 'c', 1.0, '[]');
             INSERT INTO turn_skills (turn_id, skill_name) VALUES ('t1', 'k'), ('t2', 'k');
             INSERT INTO feedback (turn_id, rating, created_at) VALUES ('t1', -1, 'x'), ('t2', 1, 'x');
             INSERT INTO prm_votes (turn_id, vote, score, rationale, created_at)
             VALUES ('t3', 0, -1, '', 'x');",
        )
        .unwrap();
        migrate(&mut conn).unwrap();
        let row: (i64, i64, i64, i64) = conn
            .query_row(
                "SELECT turns, bad, thumbs_down, judged_bad FROM skill_evidence
                 WHERE skill_name = 'k' AND arm = 'injected'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .unwrap();
        assert_eq!(row, (2, 1, 1, 0));
        let totals: (i64, i64) = conn
            .query_row("SELECT turns, bad FROM outcome_totals", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        assert_eq!(totals, (2, 1), "the side turn's bad verdict is not counted");
    }

    #[test]
    fn newer_schema_is_refused() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "user_version", SCHEMA_VERSION as i64 + 1)
            .unwrap();
        assert!(matches!(
            migrate(&mut conn),
            Err(StoreError::SchemaTooNew { .. })
        ));
        assert!(matches!(
            require_current(&conn),
            Err(StoreError::SchemaTooNew { .. })
        ));
    }
}
