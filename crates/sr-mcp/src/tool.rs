//! A server's tool as callers see it: what a model sees of it, and the call.

use serde_json::Value;

#[cfg(feature = "client")]
use crate::live::Live;
use crate::{Spec, ToolCallError};

/// A tool of a connected server, or one listed in a recording.
pub struct McpTool {
    pub(crate) spec: Spec,
    pub(crate) source: Source,
}

pub(crate) enum Source {
    #[cfg(feature = "client")]
    Live(Live),
    /// Listed in a recording: a replay serves its results from the cassette
    /// and never calls it.
    Listed,
}

impl McpTool {
    pub fn spec(&self) -> &Spec {
        &self.spec
    }

    /// Calls the tool with `args` (a JSON object, or null for none); the error
    /// is a message for the model, free of secrets.
    pub async fn call(&self, args: Value) -> Result<Value, ToolCallError> {
        self.call_with(args, None).await
    }

    /// Like [`McpTool::call`], with `key` in the request's `_meta` under
    /// [`crate::IDEMPOTENCY_KEY_META`], for a server that deduplicates.
    pub async fn call_keyed(&self, args: Value, key: &str) -> Result<Value, ToolCallError> {
        self.call_with(args, Some(key)).await
    }

    #[cfg_attr(not(feature = "client"), allow(unused_variables, clippy::unused_async))]
    async fn call_with(&self, args: Value, key: Option<&str>) -> Result<Value, ToolCallError> {
        match &self.source {
            #[cfg(feature = "client")]
            Source::Live(live) => live.call(args, key).await,
            Source::Listed => Err(ToolCallError::OnlyListed(self.spec.name.clone())),
        }
    }
}
