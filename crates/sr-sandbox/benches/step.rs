//! Step latency per backend: a warm step (the interpreter is running), a warm step
//! with a tool call over the bridge, and a cold start (sandbox, driver, handshake).
//! Compare with starting bare Python (`python3 -c pass`).

#[path = "../tests/support/mod.rs"]
mod support;

use std::sync::Arc;

use divan::Bencher;
use sr_sandbox::{Backend, Bubblewrap, Container, SessionConfig, Unsandboxed};
use tokio::runtime::Runtime;

const BACKENDS: &[&str] = &["unsandboxed", "bubblewrap", "container"];

fn main() {
    divan::main();
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime")
}

/// The backend, or None (with a note) when it is not installed here.
fn backend(runtime: &Runtime, name: &str) -> Option<Arc<dyn Backend>> {
    let found: Option<Arc<dyn Backend>> = match name {
        "unsandboxed" => Some(Arc::new(Unsandboxed::default())),
        "bubblewrap" if Bubblewrap::available() => Some(Arc::new(Bubblewrap::default())),
        "container" => {
            let socket = support::podman::socket()?.to_str()?.to_string();
            runtime.block_on(async {
                let probe = Container::connect(&socket, "").await.ok()?;
                let image = support::podman::image(probe.docker()).await;
                Some(Arc::new(Container::connect(&socket, image).await.ok()?) as Arc<dyn Backend>)
            })
        }
        _ => None,
    };
    if found.is_none() {
        eprintln!("skipping {name}: not available on this machine");
    }
    found
}

fn warm(bencher: Bencher, name: &str, code: &str) {
    let runtime = runtime();
    let Some(backend) = backend(&runtime, name) else { return };
    let (mut session, _) = runtime.block_on(support::session(backend, SessionConfig::default()));
    bencher.bench_local(|| runtime.block_on(session.run(code, &mut |_| {})).expect("the step runs"));
    runtime.block_on(session.close());
}

#[divan::bench(args = BACKENDS, sample_count = 200)]
fn warm_step(bencher: Bencher, name: &str) {
    warm(bencher, name, "n = 41 + 1\nprint(n)");
}

#[divan::bench(args = BACKENDS, sample_count = 200)]
fn warm_step_with_tool_call(bencher: Bencher, name: &str) {
    warm(bencher, name, "total = add(a=1, b=2)\nprint(total)");
}

#[divan::bench(args = BACKENDS, sample_count = 20)]
fn cold_start(bencher: Bencher, name: &str) {
    let runtime = runtime();
    let Some(backend) = backend(&runtime, name) else { return };
    bencher.bench_local(|| {
        runtime.block_on(async {
            let (session, _) = support::session(backend.clone(), SessionConfig::default()).await;
            session.close().await;
        })
    });
}

#[divan::bench(sample_count = 20)]
fn bare_python_start() {
    let status = std::process::Command::new("/usr/bin/python3").args(["-I", "-c", "pass"]).status();
    assert!(status.is_ok_and(|status| status.success()));
}
