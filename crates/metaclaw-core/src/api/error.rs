//! API errors: every failure has a stable code that decides its HTTP status (on `/api`) and the
//! CLI's exit status, chosen from the error's type, never from its text.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{CoreError, SkillError};

/// The class of a failure. Stable: clients may match on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The request itself is malformed (bad JSON, a missing field, a value out of range).
    BadRequest,
    /// A configuration value was refused by validation; `keys` names it.
    InvalidSetting,
    /// A SKILL.md does not parse or does not pass lint.
    InvalidSkill,
    /// The thing asked for does not exist.
    NotFound,
    /// The thing exists but is in the wrong state (not pending, already exists, bundled).
    Conflict,
    /// RL cannot run yet: settings are missing (`keys` names them).
    NotReady,
    /// A part of MetaClaw that is switched off (skills disabled, RL not running).
    Unavailable,
    /// No MetaClaw is running for this home directory (CLI).
    NotRunning,
    /// An upstream service (the LLM, the judge, Tinker) failed.
    Upstream,
    Unauthorized,
    Forbidden,
    TooLarge,
    Internal,
}

impl ErrorCode {
    pub fn status(self) -> StatusCode {
        match self {
            ErrorCode::BadRequest | ErrorCode::InvalidSetting | ErrorCode::InvalidSkill => {
                StatusCode::BAD_REQUEST
            }
            ErrorCode::NotFound => StatusCode::NOT_FOUND,
            ErrorCode::Conflict | ErrorCode::NotReady => StatusCode::CONFLICT,
            ErrorCode::Unavailable | ErrorCode::NotRunning => StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::Upstream => StatusCode::BAD_GATEWAY,
            ErrorCode::Unauthorized => StatusCode::UNAUTHORIZED,
            ErrorCode::Forbidden => StatusCode::FORBIDDEN,
            ErrorCode::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ErrorCode::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The code an HTTP status stands for, when an answer carries no code of ours.
    pub fn from_status(status: u16) -> ErrorCode {
        match status {
            400 | 422 => ErrorCode::BadRequest,
            401 => ErrorCode::Unauthorized,
            403 => ErrorCode::Forbidden,
            404 => ErrorCode::NotFound,
            409 => ErrorCode::Conflict,
            413 => ErrorCode::TooLarge,
            502 | 504 => ErrorCode::Upstream,
            503 => ErrorCode::Unavailable,
            _ => ErrorCode::Internal,
        }
    }

    /// The `metaclaw` exit status for this class (README, "Exit status").
    pub fn exit_code(self) -> u8 {
        match self {
            ErrorCode::Internal => 1,
            ErrorCode::BadRequest
            | ErrorCode::InvalidSetting
            | ErrorCode::InvalidSkill
            | ErrorCode::TooLarge => 2,
            ErrorCode::NotFound => 3,
            ErrorCode::Conflict | ErrorCode::NotReady => 4,
            ErrorCode::Unavailable | ErrorCode::NotRunning => 5,
            ErrorCode::Upstream => 6,
            ErrorCode::Unauthorized | ErrorCode::Forbidden => 7,
        }
    }
}

/// A failed operation: its class and a sentence the dashboard and the CLI show as is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, thiserror::Error)]
#[error("{message}")]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: String,
    /// Configuration keys the error is about (an invalid value, settings RL still needs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<String>,
    /// Per key, what is wrong with it (shown under the field that failed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<FieldError>,
}

/// What is wrong with one setting: an invalid value (the CLI's message) or a setting RL
/// still needs (what it is for).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FieldError {
    pub key: String,
    pub message: String,
}

/// How an error travels on `/api`: `{"error": {"code", "message", "keys"}}`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ErrorBody {
    pub error: ApiError,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError {
            code,
            message: message.into(),
            keys: Vec::new(),
            fields: Vec::new(),
        }
    }

    pub fn with_keys(mut self, keys: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.keys = keys.into_iter().map(Into::into).collect();
        self
    }

    /// Name the fields that failed and why; their keys join `keys`.
    pub fn with_fields(mut self, fields: Vec<FieldError>) -> Self {
        for f in &fields {
            if !self.keys.contains(&f.key) {
                self.keys.push(f.key.clone());
            }
        }
        self.fields = fields;
        self
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::BadRequest, message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::NotFound, message)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Internal, message)
    }

    pub fn status(&self) -> StatusCode {
        self.code.status()
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        (status, axum::Json(ErrorBody { error: self })).into_response()
    }
}

fn store_code(e: &metaclaw_store::StoreError) -> ErrorCode {
    use metaclaw_store::StoreError as S;
    match e {
        S::NotFound { .. } => ErrorCode::NotFound,
        S::InvalidRating(_) | S::InvalidValue { .. } => ErrorCode::BadRequest,
        _ => ErrorCode::Internal,
    }
}

impl From<metaclaw_store::StoreError> for ApiError {
    fn from(e: metaclaw_store::StoreError) -> Self {
        Self::new(store_code(&e), e.to_string())
    }
}

impl From<metaclaw_config::ConfigError> for ApiError {
    fn from(e: metaclaw_config::ConfigError) -> Self {
        use metaclaw_config::ConfigError as C;
        match &e {
            C::InvalidValue { key, .. } | C::InvalidKey { key, .. } => {
                Self::new(ErrorCode::InvalidSetting, e.to_string()).with_fields(vec![FieldError {
                    key: key.clone(),
                    message: e.to_string(),
                }])
            }
            C::Yaml { .. } | C::NotAMapping { .. } => {
                Self::new(ErrorCode::InvalidSetting, e.to_string())
            }
            C::NoHome | C::Io { .. } | C::Serialize(_) => Self::internal(e.to_string()),
        }
    }
}

impl From<SkillError> for ApiError {
    fn from(e: SkillError) -> Self {
        let code = match &e {
            SkillError::NotFound(_)
            | SkillError::NoProposal(_)
            | SkillError::NoVersion { .. }
            | SkillError::NoSessions
            | SkillError::NoAgent(_)
            | SkillError::EmptySession(_) => ErrorCode::NotFound,
            SkillError::NoEvolver => ErrorCode::Unavailable,
            SkillError::Evolver(_) => ErrorCode::Upstream,
            SkillError::WrongState { .. }
            | SkillError::Exists(_)
            | SkillError::Bundled(_)
            | SkillError::NothingToRevise(_)
            | SkillError::PendingProposal { .. } => ErrorCode::Conflict,
            SkillError::InvalidName(_) | SkillError::Invalid(_) => ErrorCode::InvalidSkill,
            SkillError::NoFolder | SkillError::Off => ErrorCode::Unavailable,
            SkillError::Io { .. } | SkillError::Task(_) => ErrorCode::Internal,
            SkillError::Store(s) => store_code(s),
        };
        Self::new(code, e.to_string())
    }
}

impl From<CoreError> for ApiError {
    fn from(e: CoreError) -> Self {
        match e {
            CoreError::Config(c) => c.into(),
            CoreError::Skill(s) => s.into(),
            other => Self::internal(other.to_string()),
        }
    }
}

impl From<metaclaw_rl::RlError> for ApiError {
    fn from(e: metaclaw_rl::RlError) -> Self {
        match e {
            metaclaw_rl::RlError::Config(m) => Self::new(ErrorCode::NotReady, m),
            other => Self::new(ErrorCode::Upstream, other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_a_distinct_meaning() {
        let all = [
            ErrorCode::BadRequest,
            ErrorCode::InvalidSetting,
            ErrorCode::InvalidSkill,
            ErrorCode::NotFound,
            ErrorCode::Conflict,
            ErrorCode::NotReady,
            ErrorCode::Unavailable,
            ErrorCode::NotRunning,
            ErrorCode::Upstream,
            ErrorCode::Unauthorized,
            ErrorCode::Forbidden,
            ErrorCode::TooLarge,
            ErrorCode::Internal,
        ];
        for c in all {
            // The status maps back to a code of the same exit class.
            assert_eq!(
                ErrorCode::from_status(c.status().as_u16()).exit_code(),
                c.exit_code(),
                "{c:?}"
            );
            assert_ne!(c.exit_code(), 0);
        }
    }

    #[test]
    fn skill_errors_map_by_type() {
        let e: ApiError = SkillError::NotFound("x".into()).into();
        assert_eq!(e.code, ErrorCode::NotFound);
        let e: ApiError = SkillError::WrongState {
            id: 3,
            status: "approved".into(),
            expected: "pending",
        }
        .into();
        assert_eq!((e.code, e.status().as_u16()), (ErrorCode::Conflict, 409));
        assert_eq!(e.message, "proposal #3 is approved, not pending");
        let e: ApiError = SkillError::Invalid("bad".into()).into();
        assert_eq!(e.status().as_u16(), 400);
    }

    #[test]
    fn config_errors_name_their_key() {
        let e: ApiError = metaclaw_config::ConfigError::InvalidValue {
            key: "mode".into(),
            value: "\"x\"".into(),
            allowed: "allowed: skills_only, rl, auto".into(),
        }
        .into();
        assert_eq!(e.code, ErrorCode::InvalidSetting);
        assert_eq!(e.keys, ["mode"]);
        assert_eq!(e.fields[0].key, "mode");
        assert_eq!(e.fields[0].message, e.message);
    }
}
