//! A2A over JSON-RPC 2.0 (`POST /a2a`, `POST /a2a/{workload}`): the envelope
//! and the objects `sr serve` answers with, in both protocol versions it
//! speaks. A method's name picks the version (`SendMessage` is 1.0's,
//! `message/send` 0.3's): 1.0 writes ProtoJSON (`ROLE_AGENT`,
//! `TASK_STATE_COMPLETED`, a part is `{"text"}` or `{"data", "mediaType"}`,
//! and a send's or a stream's result is wrapped in a field naming its kind:
//! `{"task": …}`), 0.3 tags objects with `kind` (`agent`, `completed`,
//! `{"kind": "text", "text"}`). Fields one version has and the other lacks
//! are optional here.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A request: one object (no batches), with an id (A2A has no notifications).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RpcRequest {
    /// `2.0`.
    pub jsonrpc: String,
    pub id: RpcId,
    pub method: RpcMethod,
    /// The method's parameters: `{message, configuration?, metadata?}` for a
    /// send (`metadata.skill` picks the entry), `{id}` for a task's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Map<String, Value>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum RpcId {
    Text(String),
    Number(i64),
}

/// Every method either version defines. The push notification methods answer
/// -32003 unless the server allows webhook hosts (`sr serve --push-host`);
/// the extended card answers -32007.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum RpcMethod {
    SendMessage,
    SendStreamingMessage,
    GetTask,
    ListTasks,
    CancelTask,
    SubscribeToTask,
    CreateTaskPushNotificationConfig,
    GetTaskPushNotificationConfig,
    ListTaskPushNotificationConfigs,
    DeleteTaskPushNotificationConfig,
    GetExtendedAgentCard,
    #[serde(rename = "message/send")]
    MessageSend,
    #[serde(rename = "message/stream")]
    MessageStream,
    #[serde(rename = "tasks/get")]
    TasksGet,
    #[serde(rename = "tasks/cancel")]
    TasksCancel,
    #[serde(rename = "tasks/resubscribe")]
    TasksResubscribe,
    #[serde(rename = "tasks/pushNotificationConfig/set")]
    PushConfigSet,
    #[serde(rename = "tasks/pushNotificationConfig/get")]
    PushConfigGet,
    #[serde(rename = "tasks/pushNotificationConfig/list")]
    PushConfigList,
    #[serde(rename = "tasks/pushNotificationConfig/delete")]
    PushConfigDelete,
    #[serde(rename = "agent/getAuthenticatedExtendedCard")]
    ExtendedCard,
}

/// An answer: HTTP 200 with a `result` or an `error`; a streaming method
/// answers Server-Sent Events whose `data:` is one answer each.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RpcAnswer {
    pub jsonrpc: String,
    /// The request's id; null when the request could not be read.
    pub id: Value,
    #[serde(flatten)]
    pub outcome: RpcOutcome,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum RpcOutcome {
    /// A `Task`, a `Message`, a status or artifact update (1.0 wraps each
    /// in a field naming its kind), or a task list.
    Result {
        result: Value,
    },
    Error {
        error: RpcError,
    },
}

/// Codes: -32700 parse, -32600 invalid request, -32601 no such method,
/// -32602 invalid params, -32603 internal, -32001 no such task, -32002 not
/// cancelable, -32003 push notifications not supported, -32004 unsupported
/// operation, -32005 content type not supported, -32007 no extended card,
/// -32009 version not supported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
}

/// A task: one run, in the context of its session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// The run's id.
    pub id: String,
    /// The run's session.
    pub context_id: String,
    pub status: TaskStatus,
    /// The run's result, once it is done (when asked for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifacts: Option<Vec<Artifact>>,
    /// The message that started the run (when asked for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<Vec<Message>>,
    /// 0.3: `task`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TaskStatus {
    /// 1.0: `TASK_STATE_SUBMITTED`, `…_WORKING`, `…_INPUT_REQUIRED`,
    /// `…_COMPLETED`, `…_FAILED`, `…_CANCELED`; 0.3: `submitted`, `working`,
    /// `input-required`, `completed`, `failed`, `canceled`.
    pub state: String,
    /// What a paused run asks, or why a run failed or was cancelled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    pub message_id: String,
    /// 1.0: `ROLE_USER`, `ROLE_AGENT`; 0.3: `user`, `agent`.
    pub role: String,
    /// Text, data and file parts (a file by URL is refused: -32005).
    pub parts: Vec<Part>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
    /// 0.3: `message`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

/// A text part (`text`), a data part (`data`: any JSON, given to a run as
/// its JSON text) or a file part (1.0: `raw`, `filename`, `mediaType`; 0.3:
/// `file`), whose bytes are base64.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Part {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    /// 1.0's file part: the file's bytes, base64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
    /// 1.0's file part: the file's name (a path relative to the run's work
    /// directory in an artifact).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// 1.0's data part: `application/json`; a file part's type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// 0.3's file part's file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<FileContent>,
    /// 0.3: `text`, `data` or `file`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

/// 0.3's file: its bytes (base64), name and type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileContent {
    pub bytes: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

/// 1.0's push notification configuration of a task
/// (`CreateTaskPushNotificationConfig`'s params and answer,
/// `SendMessage`'s `configuration.taskPushNotificationConfig`). The webhook
/// is sent `X-A2A-Notification-Token: token` and `Authorization: SCHEME
/// CREDENTIALS`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskPushConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<PushAuthentication>,
}

/// 1.0: `scheme` and `credentials`; 0.3: `schemes` (the first is used) and `credentials`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PushAuthentication {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheme: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schemes: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<String>,
}

/// 0.3's push notification configuration of a task
/// (`tasks/pushNotificationConfig/set`'s params and answer); `message/send`'s
/// `configuration.pushNotificationConfig` is its inner object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskPushConfigV03 {
    pub task_id: String,
    pub push_notification_config: TaskPushConfig,
}

/// A run's result (`result`: one text part for text, one data part for
/// anything else) or the files it wrote (`files`: one file part each).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    /// `result` or `files`.
    pub artifact_id: String,
    pub name: String,
    pub parts: Vec<Part>,
    /// `{"schema": …}`: the result's JSON schema, when the program declares one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

/// A stream's news of a task's status (1.0 wraps it as `statusUpdate`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatusUpdate {
    pub task_id: String,
    pub context_id: String,
    pub status: TaskStatus,
    /// 0.3: `status-update`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// 0.3: whether the stream ends after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r#final: Option<bool>,
}

/// A stream's news of a task's result (1.0 wraps it as `artifactUpdate`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskArtifactUpdate {
    pub task_id: String,
    pub context_id: String,
    pub artifact: Artifact,
    pub last_chunk: bool,
    /// 0.3: `artifact-update`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// 0.3: `false`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub append: Option<bool>,
}
