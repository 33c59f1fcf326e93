use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::error::CoreError;

/// An `/api` failure: a status and a message the dashboard shows as it is.
#[derive(Debug)]
pub(crate) struct ApiError {
    pub status: StatusCode,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, message)
    }

    fn code(&self) -> &'static str {
        match self.status.as_u16() {
            400 | 422 => "bad_request",
            401 => "unauthorized",
            403 => "forbidden",
            404 => "not_found",
            409 => "conflict",
            413 => "too_large",
            503 => "unavailable",
            _ => "internal",
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"error": {"message": self.message, "code": self.code()}});
        (self.status, axum::Json(body)).into_response()
    }
}

impl From<CoreError> for ApiError {
    fn from(e: CoreError) -> Self {
        let message = e.to_string();
        // Core errors about a missing thing read "no skill named …", "no proposal #…".
        let status = if message.contains(": no ")
            || message.starts_with("no ")
            || message.contains("has no version")
        {
            StatusCode::NOT_FOUND
        } else if message.contains("not pending")
            || message.contains("not approved")
            || message.contains("already exists")
        {
            StatusCode::CONFLICT
        } else {
            StatusCode::BAD_REQUEST
        };
        Self::new(status, message)
    }
}

impl From<metaclaw_store::StoreError> for ApiError {
    fn from(e: metaclaw_store::StoreError) -> Self {
        let status = match e {
            metaclaw_store::StoreError::NotFound { .. } => StatusCode::NOT_FOUND,
            metaclaw_store::StoreError::InvalidRating(_)
            | metaclaw_store::StoreError::InvalidValue { .. } => StatusCode::BAD_REQUEST,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        Self::new(status, e.to_string())
    }
}

impl From<metaclaw_config::ConfigError> for ApiError {
    fn from(e: metaclaw_config::ConfigError) -> Self {
        Self::bad_request(e.to_string())
    }
}

pub(crate) type ApiResult<T> = Result<T, ApiError>;
