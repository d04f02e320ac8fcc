//! The part of the Debug Adapter Protocol we speak, as plain serde types
//! (<https://microsoft.github.io/debug-adapter-protocol/specification>).
//!
//! A request is read in two steps: the envelope ([`Request`]), then its
//! command and arguments through the command table ([`Command`]), so that
//! the session dispatches on a typed value. Responses carry typed bodies
//! ([`bodies`]) and events are a closed set ([`Event`]).

mod arguments;
mod bodies;
mod command;
mod events;

pub use arguments::*;
pub use bodies::*;
pub use command::Command;
pub use events::*;

use serde::Serialize;
use serde_json::Value;

/// A request from the client.
#[derive(Debug, Clone)]
pub struct Request {
    pub seq: i64,
    pub command: String,
    /// `null` when absent.
    pub arguments: Value,
}

/// Why a message from the client is not a request.
#[derive(Debug, Clone, PartialEq)]
pub enum NotARequest {
    /// Meant as a request but malformed: answered with an error response
    /// (`seq` 0 and `command` empty when the message has no usable one).
    Answer { seq: i64, command: String, message: String },
    /// Nothing that could be answered (not an object, a response or event,
    /// an object without `seq`, `command` or `type`): logged and skipped.
    Skip(String),
}

impl Request {
    /// Reads a client message as a request.
    pub fn from_message(message: Value) -> Result<Request, NotARequest> {
        let Value::Object(mut object) = message else {
            return Err(NotARequest::Skip("a message must be a JSON object".to_string()));
        };
        let kind = object.get("type").and_then(Value::as_str);
        if matches!(kind, Some("response" | "event")) {
            return Err(NotARequest::Skip(format!("a message of type '{}'", kind.unwrap_or_default())));
        }
        let seq = object.get("seq").and_then(Value::as_i64);
        let command = object.get("command").and_then(Value::as_str).map(str::to_string);
        let problem = match (kind, seq, &command) {
            (Some("request"), Some(_), Some(_)) => None,
            (None, None, None) => return Err(NotARequest::Skip("not a DAP message (no type, seq or command)".into())),
            (Some("request") | None, _, None) => Some("a request needs a \"command\" string"),
            (Some("request") | None, None, _) => Some("a request needs an integer \"seq\""),
            _ => Some("a request needs \"type\": \"request\""),
        };
        match problem {
            None => Ok(Request {
                seq: seq.unwrap_or_default(),
                command: command.unwrap_or_default(),
                arguments: object.remove("arguments").unwrap_or(Value::Null),
            }),
            Some(message) => Err(NotARequest::Answer {
                seq: seq.unwrap_or_default(),
                command: command.unwrap_or_default(),
                message: message.to_string(),
            }),
        }
    }
}

/// A message to the client (`seq` is set by the writer).
#[derive(Debug, Clone, PartialEq)]
pub enum Outgoing {
    Response(Response),
    Event(Event),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Response {
    #[serde(rename = "request_seq")]
    pub request_seq: i64,
    pub success: bool,
    pub command: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<Value>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(message: Value) -> Result<(i64, String), NotARequest> {
        Request::from_message(message).map(|r| (r.seq, r.command))
    }

    fn answer(seq: i64, command: &str, message: &str) -> Result<(i64, String), NotARequest> {
        Err(NotARequest::Answer { seq, command: command.into(), message: message.into() })
    }

    #[test]
    fn requests_and_what_is_answered_or_skipped() {
        assert_eq!(read(json!({"seq": 1, "type": "request", "command": "threads"})), Ok((1, "threads".into())));
        assert_eq!(
            read(json!({"seq": 2, "command": "threads"})),
            answer(2, "threads", "a request needs \"type\": \"request\"")
        );
        assert_eq!(read(json!({"seq": 3, "type": "request"})), answer(3, "", "a request needs a \"command\" string"));
        assert_eq!(
            read(json!({"type": "request", "command": "x"})),
            answer(0, "x", "a request needs an integer \"seq\"")
        );
        assert_eq!(
            read(json!({"seq": "4", "type": "request", "command": "x"})),
            answer(0, "x", "a request needs an integer \"seq\"")
        );
        assert_eq!(
            read(json!({"seq": 5, "type": "request", "command": 7})),
            answer(5, "", "a request needs a \"command\" string")
        );
        assert_eq!(
            read(json!({"seq": 6, "type": "bogus", "command": "x"})),
            answer(6, "x", "a request needs \"type\": \"request\"")
        );
        for skipped in [
            json!([1]),
            json!("x"),
            json!({}),
            json!({"type": "response", "seq": 1, "command": "x"}),
            json!({"type": "event"}),
        ] {
            assert!(matches!(read(skipped.clone()), Err(NotARequest::Skip(_))), "{skipped}");
        }
    }
}
