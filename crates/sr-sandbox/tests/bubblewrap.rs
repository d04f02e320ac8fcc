//! The default backend, bubblewrap.

mod support;

use std::sync::Arc;

use sr_sandbox::{Backend, Bubblewrap};
use support::{require, suite};

fn backend() -> Option<Arc<dyn Backend>> {
    require(Bubblewrap::available(), "bubblewrap (bwrap)").then(|| Arc::new(Bubblewrap::default()) as Arc<dyn Backend>)
}

macro_rules! scenarios {
    ($($name:ident),* $(,)?) => {$(
        #[tokio::test]
        async fn $name() {
            if let Some(backend) = backend() {
                suite::$name(backend).await;
            }
        }
    )*};
}

scenarios!(
    tools_and_state,
    tool_errors,
    wrong_token_refused,
    timeout_kills_and_recovers,
    crash_recovers,
    memory_limit,
    network_unreachable,
    root_read_only,
    unprivileged,
);
