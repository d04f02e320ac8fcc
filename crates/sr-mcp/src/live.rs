//! A connected server's tool: the name a model sees, the call with its
//! timeout, and the result as JSON.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock, ResourceContents};
use serde_json::Value;

use crate::Spec;
use crate::ToolCallError;
use crate::connect::Client;
use crate::secret::Secrets;

/// A tool of a connected server.
pub(crate) struct Live {
    /// The server's own name for the tool.
    pub(crate) remote: String,
    pub(crate) server: String,
    pub(crate) client: Arc<Client>,
    pub(crate) timeout: Duration,
    pub(crate) secrets: Secrets,
}

impl Live {
    pub(crate) async fn call(&self, args: Value, key: Option<&str>) -> Result<Value, ToolCallError> {
        let mut params = CallToolRequestParams::new(self.remote.clone());
        if let Some(key) = key {
            let mut meta = rmcp::model::RequestMetaObject::default();
            meta.0.0.insert(crate::IDEMPOTENCY_KEY_META.to_string(), Value::String(key.to_string()));
            params.meta = Some(meta);
        }
        match args {
            Value::Object(arguments) => params = params.with_arguments(arguments),
            Value::Null => {}
            other => return Err(ToolCallError::NotAnObject(other)),
        }
        // On timeout the request future is dropped, which tells the server to cancel it.
        match tokio::time::timeout(self.timeout, self.client.call_tool(params)).await {
            Err(_) => Err(ToolCallError::Timeout {
                tool: self.remote.clone(),
                server: self.server.clone(),
                seconds: self.timeout.as_secs_f64(),
            }),
            Ok(Err(e)) => {
                Err(ToolCallError::Server(self.secrets.redact(&format!("MCP server '{}': {e}", self.server))))
            }
            Ok(Ok(result)) => outcome(result),
        }
    }
}

/// Providers accept tool names of at most 64 characters of `[A-Za-z0-9_-]`.
const MAX_NAME: usize = 64;

/// The name a model sees: `{server}__{tool}`, so that tools of different
/// servers (and builtin tools) never collide, and a tool keeps its name when
/// another server is added. Other characters become `_`; a name too long is
/// cut and ends with a hash of the whole, to stay unique.
pub(crate) fn tool_name(server: &str, tool: &str) -> String {
    let full = format!("{server}__{tool}");
    let name: String =
        full.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect();
    if name.len() <= MAX_NAME {
        return name;
    }
    let hash = full.bytes().fold(0x811c_9dc5_u32, |h, b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193));
    format!("{}_{hash:08x}", &name[..MAX_NAME - 9])
}

/// What the model sees of a listed tool.
pub(crate) fn spec(server: &str, tool: &rmcp::model::Tool) -> Spec {
    let mut parameters = Value::Object((*tool.input_schema).clone());
    // Some providers reject an object schema without `properties`.
    if parameters["type"] == "object" && parameters.get("properties").is_none() {
        parameters["properties"] = Value::Object(Default::default());
    }
    Spec {
        name: tool_name(server, &tool.name),
        description: tool.description.as_deref().or(tool.title.as_deref()).unwrap_or_default().to_string(),
        parameters,
    }
}

/// The structured content when the server gives it, else the text of the
/// content blocks; a result flagged as an error is a tool error.
fn outcome(result: CallToolResult) -> Result<Value, ToolCallError> {
    let text = result.content.iter().map(block_text).collect::<Vec<_>>().join("\n");
    if result.is_error == Some(true) {
        let message = match (text.is_empty(), &result.structured_content) {
            (false, _) => text,
            (true, Some(value)) => value.to_string(),
            (true, None) => "the tool reported an error without saying what".to_string(),
        };
        return Err(ToolCallError::Failed(message));
    }
    Ok(result.structured_content.unwrap_or(Value::String(text)))
}

/// Text as is; other content is named, since a tool result is text to a model.
fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Image(image) => format!("[image: {}, {} bytes of base64]", image.mime_type, image.data.len()),
        ContentBlock::Audio(audio) => format!("[audio: {}, {} bytes of base64]", audio.mime_type, audio.data.len()),
        ContentBlock::Resource(embedded) => match &embedded.resource {
            ResourceContents::TextResourceContents { text, .. } => text.clone(),
            ResourceContents::BlobResourceContents { uri, blob, .. } => {
                format!("[resource {uri}: {} bytes of base64]", blob.len())
            }
            other => serde_json::to_string(other).unwrap_or_default(),
        },
        ContentBlock::ResourceLink(link) => format!("[resource link: {} ({})]", link.uri, link.name),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_are_namespaced_sanitized_and_bounded() {
        assert_eq!(tool_name("everything", "get-sum"), "everything__get-sum");
        assert_eq!(tool_name("fs", "read.file v2"), "fs__read_file_v2");
        let long = tool_name("server", &"x".repeat(80));
        assert_eq!(long.len(), MAX_NAME);
        assert!(long.starts_with("server__xxx"));
        assert_ne!(long, tool_name("server", &"x".repeat(81)));
    }

    #[test]
    fn specs_keep_the_schema_and_give_objects_properties() {
        let tool: rmcp::model::Tool =
            serde_json::from_value(json!({"name": "ping", "title": "Ping", "inputSchema": {"type": "object"}}))
                .unwrap();
        let spec = spec("s", &tool);
        assert_eq!(spec.name, "s__ping");
        assert_eq!(spec.description, "Ping");
        assert_eq!(spec.parameters, json!({"type": "object", "properties": {}}));
    }

    fn result(value: Value) -> CallToolResult {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn results_prefer_structured_content_then_joined_text() {
        let structured = result(json!({
            "content": [{"type": "text", "text": "{\"t\":1}"}],
            "structuredContent": {"t": 1}
        }));
        assert_eq!(outcome(structured), Ok(json!({"t": 1})));
        let text = result(json!({"content": [
            {"type": "text", "text": "a"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "mem://x", "text": "inside"}}
        ]}));
        assert_eq!(outcome(text), Ok(json!("a\n[image: image/png, 4 bytes of base64]\ninside")));
        assert_eq!(outcome(result(json!({"content": []}))), Ok(json!("")));
    }

    #[test]
    fn flagged_results_are_tool_errors() {
        let failed = result(json!({"content": [{"type": "text", "text": "bad input"}], "isError": true}));
        assert_eq!(outcome(failed), Err(ToolCallError::Failed("bad input".into())));
        let bare = result(json!({"content": [], "isError": true}));
        assert_eq!(outcome(bare), Err(ToolCallError::Failed("the tool reported an error without saying what".into())));
    }
}
