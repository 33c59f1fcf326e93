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
