//! Errors as the API answers them: `{"error": {"code", "message"}}` with the
//! HTTP status that fits, and the request body reader that names the field at
//! fault.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use serde_json::json;

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    /// Seconds after which a refused request may be tried again (`Retry-After`).
    pub retry_after: Option<u64>,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError { status, code, message: message.into(), retry_after: None }
    }

    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "invalid_request", message)
    }

    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    pub fn conflict(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::CONFLICT, code, message)
    }

    /// The store failed: logged with its detail, answered without it.
    pub fn internal(error: impl std::fmt::Display) -> ApiError {
        tracing::error!(%error, "store error");
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "the server's store failed; see its log")
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"error": {"code": self.code, "message": self.message}});
        let mut response = (self.status, axum::Json(body)).into_response();
        if let Some(seconds) = self.retry_after {
            response.headers_mut().insert(axum::http::header::RETRY_AFTER, seconds.into());
        }
        response
    }
}

impl From<crate::store::StoreError> for ApiError {
    fn from(error: crate::store::StoreError) -> ApiError {
        ApiError::internal(error)
    }
}

/// A JSON body read into `T`, or a 400 whose message names the field at
/// fault (`prompt: invalid type: integer…`), or a 413 past the body limit.
pub struct Body<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Body<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        let bytes = Bytes::from_request(request, state).await.map_err(|rejection| {
            let status = rejection.status();
            if status == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::new(
                    status,
                    "body_too_large",
                    format!("the request body is over {} bytes", crate::MAX_BODY_BYTES),
                )
            } else {
                ApiError::bad_request(format!("cannot read the request body: {}", rejection.body_text()))
            }
        })?;
        let text = match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
            None => &b"{}"[..],
            Some(b'{') => &bytes[..],
            Some(_) => return Err(ApiError::bad_request("the body must be a JSON object")),
        };
        let deserializer = &mut serde_json::Deserializer::from_slice(text);
        serde_path_to_error::deserialize(deserializer).map(Body).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            match path.as_str() {
                "." | "" => ApiError::bad_request(format!("the body is not a valid request: {inner}")),
                field => ApiError::bad_request(format!("{field}: {inner}")),
            }
        })
    }
}
