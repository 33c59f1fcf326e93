use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    #[error(transparent)]
    Config(#[from] metaclaw_config::ConfigError),
    #[error("could not open the database {path}: {source}")]
    Store {
        path: PathBuf,
        source: metaclaw_store::StoreError,
    },
    #[error(
        "could not listen on {addr}: {source} (is another MetaClaw or program using the port? change proxy.port)"
    )]
    Bind {
        addr: String,
        source: std::io::Error,
    },
    #[error("could not build the HTTP client: {0}")]
    Http(String),
    #[error(transparent)]
    Skill(#[from] SkillError),
    #[error(transparent)]
    Library(#[from] metaclaw_skills::SkillsError),
    #[error("could not write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("server error: {0}")]
    Serve(std::io::Error),
}

/// Why a skill, proposal or version operation failed.
#[derive(Debug, thiserror::Error)]
pub enum SkillError {
    #[error("no skill named `{0}` (see `metaclaw skills list`)")]
    NotFound(String),
    #[error("no proposal #{0}")]
    NoProposal(i64),
    #[error("`{name}` has no version {version} (see `metaclaw skills history {name}`)")]
    NoVersion { name: String, version: u64 },
    #[error("proposal #{id} is {status}, not {expected}")]
    WrongState {
        id: i64,
        status: String,
        expected: &'static str,
    },
    #[error("a skill named `{0}` already exists; edit it instead")]
    Exists(String),
    #[error("`{0}` is a bundled skill; disable it instead")]
    Bundled(String),
    #[error("invalid skill name `{0}`")]
    InvalidName(String),
    /// A SKILL.md that does not parse, changes its name or fails lint.
    #[error("{0}")]
    Invalid(String),
    #[error("no user skills folder is configured (skills.dir)")]
    NoFolder,
    #[error("no agent `{0}` under agents: in config.yaml (see `metaclaw status`)")]
    NoAgent(String),
    #[error("skills are off (skills.enabled: false)")]
    Off,
    #[error("no sessions recorded yet")]
    NoSessions,
    #[error("no turns recorded for session `{0}`")]
    EmptySession(String),
    #[error("no injection of `{0}` was followed by a correction yet: nothing to revise from")]
    NothingToRevise(String),
    #[error("proposal #{id} for `{name}` is already waiting in the inbox; decide it first")]
    PendingProposal { name: String, id: i64 },
    #[error(
        "no evolver endpoint: set llm.api_base and llm.model_id, or rl.evolver_api_base and rl.evolver_model"
    )]
    NoEvolver,
    #[error("{0}")]
    Evolver(String),
    #[error("could not write {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("database: {0}")]
    Store(#[from] metaclaw_store::StoreError),
    /// A background step panicked or was cancelled at shutdown.
    #[error("{0}")]
    Task(String),
}
