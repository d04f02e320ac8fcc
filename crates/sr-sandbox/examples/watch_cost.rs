//! What watching a bubblewrap sandbox's memory costs: the CPU time this process
//! spends while a coding agent's sandbox idles (the watcher thread is then all
//! that runs), with its interpreter alone and with 100 sleeping children.
//!
//! `cargo run --release -p sr-sandbox --example watch_cost`
#![allow(clippy::print_stdout)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use sr_sandbox::{Backend, BoxFuture, Bubblewrap, ImportPolicy, Session, SessionConfig, ToolError, ToolHost};

struct NoTools;

impl ToolHost for NoTools {
    fn call<'a>(&'a self, _: &'a str, _: Value) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(async { Err(ToolError("no tools".into())) })
    }
}

/// User and system CPU time of this process so far.
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<u64> =
        stat[stat.rfind(')').map_or(0, |at| at + 2)..].split_whitespace().filter_map(|f| f.parse().ok()).collect();
    // utime and stime are fields 14 and 15; the list starts at field 4 (ppid).
    let ticks = fields.get(10).copied().unwrap_or(0) + fields.get(11).copied().unwrap_or(0);
    Duration::from_millis(ticks * 10)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    if !Bubblewrap::available() {
        println!("bubblewrap is not installed here");
        return;
    }
    let policy = ImportPolicy::default().allow("os").and_then(|p| p.allow("subprocess")).expect("valid patterns");
    let backend: Arc<dyn Backend> = Arc::new(Bubblewrap::default());
    let mut session =
        Session::start(backend, Vec::new(), Arc::new(NoTools), SessionConfig { policy, ..Default::default() })
            .await
            .expect("the sandbox starts");
    let idle = Duration::from_secs(10);
    for (label, code) in [
        ("the interpreter alone", "x = 1"),
        (
            "100 sleeping children",
            "import os, time\nfor _ in range(100):\n    if os.fork() == 0:\n        time.sleep(3600)",
        ),
    ] {
        session.run(code, &mut |_| {}).await.expect("the step runs");
        let (cpu, wall) = (cpu_time(), Instant::now());
        tokio::time::sleep(idle).await;
        let used = cpu_time() - cpu;
        let samples = wall.elapsed().as_millis() / 10;
        println!(
            "{label}: {:.2} % of a core ({} µs per sample, {samples} samples)",
            used.as_secs_f64() * 100.0 / wall.elapsed().as_secs_f64(),
            used.as_micros() / samples.max(1)
        );
    }
    session.close().await;
}
