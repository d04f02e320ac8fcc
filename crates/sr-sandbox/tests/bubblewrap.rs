//! The default backend, bubblewrap.

#[macro_use]
mod support;

use std::sync::Arc;

use sr_sandbox::{Backend, Bubblewrap};
use support::require;

fn backend() -> Option<Arc<dyn Backend>> {
    require(Bubblewrap::available(), "bubblewrap (bwrap)").then(|| Arc::new(Bubblewrap::default()) as Arc<dyn Backend>)
}

scenarios!(
    backend();
    tools_and_state,
    tool_errors,
    wrong_token_refused,
    timeout_kills_and_recovers,
    crash_recovers,
    memory_limit,
    tree_memory,
    network_unreachable,
    root_read_only,
    unprivileged,
    fork_bomb,
    dev_bounded,
);
