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
    #[error("skills: {0}")]
    Skills(String),
    #[error("server error: {0}")]
    Serve(std::io::Error),
}
