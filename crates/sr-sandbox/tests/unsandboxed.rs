//! The unsandboxed backend: the bridge, the persistent interpreter and recovery work
//! the same; it has no isolation to test.

mod support;

use std::sync::Arc;

use sr_sandbox::{Backend, Unsandboxed};
use support::suite;

fn backend() -> Arc<dyn Backend> {
    Arc::new(Unsandboxed::default())
}

#[tokio::test]
async fn tools_and_state() {
    suite::tools_and_state(backend()).await;
}

#[tokio::test]
async fn tool_errors() {
    suite::tool_errors(backend()).await;
}

#[tokio::test]
async fn wrong_token_refused() {
    suite::wrong_token_refused(backend()).await;
}

#[tokio::test]
async fn timeout_kills_and_recovers() {
    suite::timeout_kills_and_recovers(backend()).await;
}

#[tokio::test]
async fn crash_recovers() {
    suite::crash_recovers(backend()).await;
}

#[tokio::test]
async fn memory_limit() {
    suite::memory_limit(backend()).await;
}
