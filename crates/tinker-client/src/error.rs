//! The one error type of the crate.

use std::time::Duration;

/// Everything that can go wrong talking to a Tinker server.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The server answered with a non-retryable (or retries exhausted) HTTP status.
    #[error("HTTP {status}: {body}")]
    Http { status: u16, body: String },
    /// A future completed with an error. `category` is `user` (bad input, do not
    /// retry), `server`, or `unknown`.
    #[error("request failed ({category}): {message}")]
    RequestFailed { category: String, message: String },
    /// An earlier training request of this model failed; because the server runs a
    /// model's requests strictly in `seq_id` order, later ones cannot be trusted.
    /// Recover by creating a new model and `load_state` from the last checkpoint.
    #[error("a previous request failed; this TrainingClient is poisoned")]
    Poisoned,
    /// The session was finished (HTTP 410 on heartbeat, or `close()` was called).
    #[error("the Tinker session is closed")]
    SessionClosed,
    /// The server kept answering 402 (billing) for longer than the pause window.
    #[error("billing pause exceeded {0:?}")]
    BillingPause(Duration),
    /// The response could not be decoded (bad JSON/protobuf/tensor bytes).
    #[error("cannot decode server response: {0}")]
    Decode(String),
    /// Connection-level failure (DNS, refused, reset, TLS).
    #[error("transport error: {0}")]
    Transport(String),
    /// A deadline (request timeout or retry budget) elapsed.
    #[error("timed out: {0}")]
    Timeout(String),
    /// The caller passed something the protocol cannot express.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn decode(e: impl std::fmt::Display) -> Self {
        Error::Decode(e.to_string())
    }

    pub(crate) fn from_reqwest(e: reqwest::Error) -> Self {
        if e.is_timeout() {
            Error::Timeout(e.to_string())
        } else {
            Error::Transport(e.to_string())
        }
    }
}
