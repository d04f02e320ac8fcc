//! The unsandboxed backend: the bridge, the persistent interpreter and recovery work
//! the same; it has no isolation to test.

#[macro_use]
mod support;

use std::sync::Arc;

use sr_sandbox::{Backend, Unsandboxed};

fn backend() -> Arc<dyn Backend> {
    Arc::new(Unsandboxed::default())
}

scenarios!(
    Some(backend());
    tools_and_state,
    tool_errors,
    wrong_token_refused,
    timeout_kills_and_recovers,
    crash_recovers,
    memory_limit,
);
