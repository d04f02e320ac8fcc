//! The container backend through bollard, against podman's Docker-compatible API
//! service with runc and an image imported from the host's Python (no registry).

#[macro_use]
mod support;

use std::sync::Arc;

use sr_sandbox::{Backend, Container};
use support::{podman, require};

async fn backend() -> Option<Arc<dyn Backend>> {
    let socket = podman::socket();
    if !require(socket.is_some(), "podman (with runc)") {
        return None;
    }
    let socket = socket?.to_str()?;
    let probe = Container::connect(socket, "").await.expect("the podman service answers");
    let image = podman::image(probe.docker()).await;
    Some(Arc::new(Container::connect(socket, image).await.expect("the podman service answers")))
}

scenarios!(
    backend().await;
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
