use std::path::PathBuf;

/// Everything that can go wrong in the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),

    #[error("database migration failed: {0}")]
    Migration(#[from] rusqlite_migration::Error),

    #[error("stored JSON is invalid: {0}")]
    Json(#[from] serde_json::Error),

    #[error("cannot create directory {path}: {source}")]
    CreateDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("database {0} does not exist")]
    DatabaseNotFound(PathBuf),

    /// A write addressed a row that does not exist (e.g. feedback on an unknown turn).
    #[error("{what} {id} does not exist")]
    NotFound { what: &'static str, id: String },

    #[error("feedback rating must be -1 (thumbs down) or 1 (thumbs up), got {0}")]
    InvalidRating(i8),

    /// An argument the store refuses to write or query with (a PRM score outside -1..=1, a
    /// non-finite reward, a step number beyond SQLite's integers, a time zone offset of
    /// more than a day, ...).
    #[error("invalid {what}: {value}")]
    InvalidValue { what: &'static str, value: String },

    #[error(
        "database schema version {found} is older than this build expects ({expected}); \
         start the daemon once so it can migrate the database"
    )]
    SchemaTooOld { found: usize, expected: usize },

    #[error(
        "database schema version {found} is newer than this build understands ({expected}); \
         upgrade metaclaw"
    )]
    SchemaTooNew { found: usize, expected: usize },

    #[error("the store was opened read-only")]
    ReadOnly,

    #[error("cannot start the store writer thread: {0}")]
    SpawnWriter(#[source] std::io::Error),

    #[error("the store writer thread is not running")]
    WriterGone,

    #[error("turn {turn_id} references blob {hash}, which is missing")]
    MissingBlob { turn_id: String, hash: String },

    #[error("invalid value in column {column}: {value:?}")]
    InvalidColumn { column: &'static str, value: String },
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;
