//! JSON-RPC 2.0 as A2A uses it: the request envelope, the method table of
//! both protocol versions, the `A2A-Version` header, and the errors with the
//! codes the specification gives them.

use serde_json::{Map, Value, json};

use sr_api::a2a::{RpcAnswer, RpcOutcome};

use crate::error::ApiError;

/// The protocol version a method name belongs to: it decides the shapes of
/// the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    V03,
    V10,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Send,
    Stream,
    Get,
    List,
    Cancel,
    Subscribe,
    /// Push notification configuration: set, get, list, delete.
    PushSet,
    PushGet,
    PushList,
    PushDelete,
    /// The extended (authenticated) card: not built.
    ExtendedCard,
}

/// Every method name either version defines, with what answers it.
pub const METHODS: [(&str, Method, Version); 21] = [
    ("SendMessage", Method::Send, Version::V10),
    ("SendStreamingMessage", Method::Stream, Version::V10),
    ("GetTask", Method::Get, Version::V10),
    ("ListTasks", Method::List, Version::V10),
    ("CancelTask", Method::Cancel, Version::V10),
    ("SubscribeToTask", Method::Subscribe, Version::V10),
    ("CreateTaskPushNotificationConfig", Method::PushSet, Version::V10),
    ("GetTaskPushNotificationConfig", Method::PushGet, Version::V10),
    ("ListTaskPushNotificationConfigs", Method::PushList, Version::V10),
    ("DeleteTaskPushNotificationConfig", Method::PushDelete, Version::V10),
    ("GetExtendedAgentCard", Method::ExtendedCard, Version::V10),
    ("message/send", Method::Send, Version::V03),
    ("message/stream", Method::Stream, Version::V03),
    ("tasks/get", Method::Get, Version::V03),
    ("tasks/cancel", Method::Cancel, Version::V03),
    ("tasks/resubscribe", Method::Subscribe, Version::V03),
    ("tasks/pushNotificationConfig/set", Method::PushSet, Version::V03),
    ("tasks/pushNotificationConfig/get", Method::PushGet, Version::V03),
    ("tasks/pushNotificationConfig/list", Method::PushList, Version::V03),
    ("tasks/pushNotificationConfig/delete", Method::PushDelete, Version::V03),
    ("agent/getAuthenticatedExtendedCard", Method::ExtendedCard, Version::V03),
];

/// `A2A-Version` values this server speaks (an absent header means 0.3).
const HEADER_VERSIONS: [&str; 4] = ["1.0", "1.0.0", "0.3", "0.3.0"];

/// A JSON-RPC error as A2A names it.
#[derive(Debug)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
}

impl RpcError {
    fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError { code, message: message.into() }
    }
    pub fn parse(message: impl Into<String>) -> RpcError {
        RpcError::new(-32700, message)
    }
    pub fn invalid_request(message: impl Into<String>) -> RpcError {
        RpcError::new(-32600, message)
    }
    pub fn method_not_found(message: impl Into<String>) -> RpcError {
        RpcError::new(-32601, message)
    }
    pub fn invalid_params(message: impl Into<String>) -> RpcError {
        RpcError::new(-32602, message)
    }
    pub fn internal(message: impl Into<String>) -> RpcError {
        RpcError::new(-32603, message)
    }
    pub fn task_not_found(id: &str) -> RpcError {
        let shown: String = id.chars().take(80).collect();
        RpcError::new(-32001, format!("no task {shown:?} in this agent"))
    }
    pub fn not_cancelable(message: impl Into<String>) -> RpcError {
        RpcError::new(-32002, message)
    }
    pub fn push_not_supported() -> RpcError {
        RpcError::new(
            -32003,
            "push notifications are off on this server (sr serve --push-host turns them on): stream the task or poll it",
        )
    }
    pub fn unsupported(message: impl Into<String>) -> RpcError {
        RpcError::new(-32004, message)
    }
    pub fn content_type(message: impl Into<String>) -> RpcError {
        RpcError::new(-32005, message)
    }
    pub fn no_extended_card() -> RpcError {
        RpcError::new(-32007, "this agent has no extended card: its public card is all there is")
    }
    pub fn version(message: impl Into<String>) -> RpcError {
        RpcError::new(-32009, message)
    }
}

/// API v1's errors as A2A's: a missing run is a missing task, an ended one
/// cannot be cancelled, a busy or not-waiting one cannot take the message.
impl From<ApiError> for RpcError {
    fn from(error: ApiError) -> RpcError {
        let code = match error.code {
            "not_found" => -32001,
            "run_ended" => -32002,
            "session_busy" | "not_waiting" => -32004,
            "invalid_request" => -32602,
            _ => -32603,
        };
        RpcError::new(code, error.message)
    }
}

/// A request, checked.
#[derive(Debug)]
pub struct Request {
    pub id: Value,
    pub method: Method,
    pub version: Version,
    pub params: Map<String, Value>,
}

/// Reads a request; on failure, the id to answer with (null when it could
/// not be read) and the error.
pub fn read(body: &[u8]) -> Result<Request, (Value, RpcError)> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| (Value::Null, RpcError::parse(format!("the body is not JSON: {e}"))))?;
    let Value::Object(mut object) = value else {
        let what =
            if value.is_array() { "a batch (not supported: send one request at a time)" } else { "not an object" };
        return Err((Value::Null, RpcError::invalid_request(format!("the request is {what}"))));
    };
    let id = match object.remove("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id,
        Some(other) => {
            return Err((Value::Null, RpcError::invalid_request(format!("id: {other} is not a string or a number"))));
        }
        None => return Err((Value::Null, RpcError::invalid_request("id: missing (A2A has no notifications)"))),
    };
    let fail = |error| Err((id.clone(), error));
    if object.get("jsonrpc") != Some(&json!("2.0")) {
        return fail(RpcError::invalid_request("jsonrpc: must be \"2.0\""));
    }
    let Some(Value::String(name)) = object.get("method") else {
        return fail(RpcError::invalid_request("method: missing or not a string"));
    };
    let Some((_, method, version)) = METHODS.iter().find(|(known, ..)| known == name) else {
        let shown: String = name.chars().take(80).collect();
        return fail(RpcError::method_not_found(format!("no method {shown:?}")));
    };
    let params = match object.remove("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(params)) => params,
        Some(_) => return fail(RpcError::invalid_params("params: must be an object")),
    };
    Ok(Request { id, method: *method, version: *version, params })
}

/// Checks the `A2A-Version` header.
pub fn check_version(header: Option<&[u8]>) -> Result<(), RpcError> {
    let Some(header) = header else { return Ok(()) };
    let text = String::from_utf8_lossy(header);
    let text = text.trim();
    if text.is_empty() || HEADER_VERSIONS.contains(&text) {
        return Ok(());
    }
    let shown: String = text.chars().take(40).collect();
    Err(RpcError::version(format!("A2A-Version {shown:?} is not supported (supported: 1.0, 0.3)")))
}

pub fn success(id: &Value, result: Value) -> Value {
    answer(id, RpcOutcome::Result { result })
}

pub fn failure(id: &Value, error: &RpcError) -> Value {
    answer(id, RpcOutcome::Error { error: sr_api::a2a::RpcError { code: error.code, message: error.message.clone() } })
}

fn answer(id: &Value, outcome: RpcOutcome) -> Value {
    let answer = RpcAnswer { jsonrpc: "2.0".to_string(), id: id.clone(), outcome };
    serde_json::to_value(answer).expect("an answer has string keys only")
}

/// A string parameter.
pub fn string<'a>(params: &'a Map<String, Value>, name: &str) -> Result<Option<&'a str>, RpcError> {
    match params.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(_) => Err(RpcError::invalid_params(format!("{name}: must be a string"))),
    }
}

/// A string parameter that must be there.
pub fn required<'a>(params: &'a Map<String, Value>, name: &str) -> Result<&'a str, RpcError> {
    string(params, name)?.ok_or_else(|| RpcError::invalid_params(format!("{name}: missing")))
}

/// A whole-number parameter, at most `max`.
pub fn count(params: &Map<String, Value>, name: &str, max: u64) -> Result<Option<u64>, RpcError> {
    match params.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => match value.as_u64() {
            Some(n) if n <= max => Ok(Some(n)),
            _ => Err(RpcError::invalid_params(format!("{name}: must be a whole number from 0 to {max}"))),
        },
    }
}
