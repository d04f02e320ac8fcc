//! The one error type of the provider layer.
//!
//! It is data (serde), so a recorded failure replays as the same error. Messages
//! never contain API keys: bodies quoted from providers are redacted first.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LlmError {
    /// A provider needs configuration the environment does not have.
    MissingEnv {
        provider: String,
        /// What is missing, e.g. "API key".
        what: String,
        /// The variables that would provide it, in order of preference.
        variables: Vec<String>,
    },
    /// The model string names no known provider.
    UnknownProvider { model: String, known: Vec<String> },
    /// The model id cannot name a model (see [`check_model_id`](crate::check_model_id));
    /// `model` is shown cut to 100 characters.
    InvalidModel { model: String, problem: String },
    /// The provider answered with an error: an HTTP status, or an error event
    /// inside a successful stream (`status` is then `None`).
    Api {
        provider: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<u16>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<String>,
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_after_ms: Option<u64>,
    },
    /// The connection failed or broke.
    Transport { provider: String, message: String },
    /// No response head within the request timeout, or a stream went silent.
    Timeout { provider: String, after_ms: u64 },
    /// The reply could not be understood.
    Protocol { provider: String, message: String },
    /// A replayed run asked for something the cassette does not have.
    NotRecorded { message: String },
    /// The cassette could not be read or written.
    Cassette { message: String },
}

impl LlmError {
    /// Whether trying the same request again may succeed: connection failures,
    /// timeouts, 408, 409, 429, 5xx and overload errors inside a stream.
    pub fn is_retryable(&self) -> bool {
        match self {
            LlmError::Transport { .. } | LlmError::Timeout { .. } => true,
            LlmError::Api { status: Some(status), .. } => matches!(status, 408 | 409 | 429 | 500..=599),
            LlmError::Api { status: None, code: Some(code), .. } => {
                matches!(code.as_str(), "overloaded_error" | "rate_limit_error" | "api_error" | "server_error")
            }
            _ => false,
        }
    }

    /// The wait the server asked for, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            LlmError::Api { retry_after_ms: Some(ms), .. } => Some(Duration::from_millis(*ms)),
            _ => None,
        }
    }
}

impl fmt::Display for LlmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LlmError::MissingEnv { provider, what, variables } => {
                write!(f, "{provider}: no {what} configured: set {}", variables.join(" or "))
            }
            LlmError::UnknownProvider { model, known } => write!(
                f,
                "cannot tell the provider of model `{model}`: write it as provider/model, \
                 with provider one of {}",
                known.join(", ")
            ),
            LlmError::InvalidModel { model, problem } => write!(f, "model id {model:?} is not valid: {problem}"),
            LlmError::Api { provider, status, code, message, retry_after_ms } => {
                write!(f, "{provider}: ")?;
                if let Some(status) = status {
                    write!(f, "HTTP {status}: ")?;
                }
                if let Some(code) = code {
                    write!(f, "{code}: ")?;
                }
                f.write_str(message)?;
                if let Some(ms) = retry_after_ms {
                    write!(f, " (retry after {:.1}s)", *ms as f64 / 1000.0)?;
                }
                Ok(())
            }
            LlmError::Transport { provider, message } => write!(f, "{provider}: connection failed: {message}"),
            LlmError::Timeout { provider, after_ms } => {
                write!(f, "{provider}: no answer within {:.1}s", *after_ms as f64 / 1000.0)
            }
            LlmError::Protocol { provider, message } if provider.is_empty() => write!(f, "invalid reply: {message}"),
            LlmError::Protocol { provider, message } => write!(f, "{provider}: invalid reply: {message}"),
            LlmError::NotRecorded { message } => write!(f, "replay: {message}"),
            LlmError::Cassette { message } => write!(f, "cassette: {message}"),
        }
    }
}

impl std::error::Error for LlmError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn api(status: Option<u16>, code: Option<&str>) -> LlmError {
        LlmError::Api {
            provider: "p".into(),
            status,
            code: code.map(str::to_owned),
            message: "m".into(),
            retry_after_ms: None,
        }
    }

    #[test]
    fn retryable_errors_are_classified() {
        for status in [408, 409, 429, 500, 503, 529] {
            assert!(api(Some(status), None).is_retryable(), "{status}");
        }
        for status in [400, 401, 403, 404, 422] {
            assert!(!api(Some(status), None).is_retryable(), "{status}");
        }
        assert!(api(None, Some("overloaded_error")).is_retryable());
        assert!(!api(None, Some("invalid_request_error")).is_retryable());
        assert!(LlmError::Timeout { provider: "p".into(), after_ms: 1 }.is_retryable());
        let missing = LlmError::MissingEnv { provider: "p".into(), what: "API key".into(), variables: vec![] };
        assert!(!missing.is_retryable());
    }

    #[test]
    fn missing_env_names_the_variables() {
        let err = LlmError::MissingEnv {
            provider: "gemini".into(),
            what: "API key".into(),
            variables: vec!["GEMINI_API_KEY".into(), "GOOGLE_API_KEY".into()],
        };
        assert_eq!(err.to_string(), "gemini: no API key configured: set GEMINI_API_KEY or GOOGLE_API_KEY");
    }
}
