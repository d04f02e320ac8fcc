//! What 10,000 deterministic flow steps cost: `cargo bench -p sr-runtime
//! --bench flow_steps`. Each case is a flow whose loop makes 10,000 steps with
//! no model, run end to end by `Runtime::run` with events going to a sink:
//! - `strings`: `$s = upper(trim("  item ${i}  "))`, standard library calls;
//! - `files`: `fs.write_file("out.txt", "line ${i}")`, a tool function step
//!   (the jail, tool events, the tool gate) that writes a file;
//! - `files_tool`: the same 10,000 writes through the `write_file` tool
//!   alone (the jail's `openat2` beneath the work directory, no flow);
//! - `files_bare`: the same 10,000 writes with `std::fs::write` and no
//!   runtime. `files - files_bare` is the orchestration overhead beyond the
//!   file system's own time, `files - files_tool` the flow's share of it.
//!   The files are on `/dev/shm` when it exists.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::sync::Arc;

use divan::Bencher;
use divan::counter::ItemsCount;
use sr_hir::RootDatabase;
use sr_runtime::compile::{Compiled, compile_path};
use sr_runtime::event::{Emitter, Event, RunStatus};
use sr_runtime::hook::NoHook;
use sr_runtime::human::Unattended;
use sr_runtime::journal::Journal;
use sr_runtime::mcp::McpHub;
use sr_runtime::scripted::ScriptedProvider;
use sr_runtime::tools::{Jail, builtin_tools};
use sr_runtime::{Env, RunOptions, Runtime};

fn main() {
    divan::main();
}

const STEPS: usize = 10_000;

const STRINGS: &str = r#"flow main:
    for $i in range(10000) do
        $s = upper(trim("  item ${i}  "))
    end
    return $s
"#;

const FILES: &str = r#"tool fs = builtin streetrace.fs

flow main:
    for $i in range(10000) do
        fs.write_file("out.txt", "line ${i}")
    end
    return fs.read_file("out.txt")
"#;

/// On tmpfs where there is one, so the file system's own time is small next
/// to the runtime's.
fn dir(name: &str) -> PathBuf {
    let base = Some(PathBuf::from("/dev/shm")).filter(|p| p.is_dir()).unwrap_or_else(std::env::temp_dir);
    let dir = base.join(format!("sr-bench-steps-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn runtime(name: &str, source: &str) -> (Runtime, PathBuf) {
    let dir = dir(name);
    let path = dir.join("flow.sr");
    std::fs::write(&path, source).unwrap();
    let program: Arc<Compiled> = compile_path(&mut RootDatabase::default(), &path).unwrap();
    let env = Env {
        provider: Arc::new(ScriptedProvider::new()),
        hook: Arc::new(NoHook),
        jail: Jail::new(&dir).unwrap(),
        mcp: Arc::new(McpHub::default()),
        journal: Arc::new(Journal::unrecorded()),
        human: Arc::new(Unattended),
        options: RunOptions::default(),
    };
    (Runtime::new(program, env), dir)
}

fn run_flow(bencher: Bencher, name: &str, source: &str, expected: &str) {
    let (runtime, _dir) = runtime(name, source);
    let tokio = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    bencher.counter(ItemsCount::new(STEPS)).bench_local(|| {
        let emitter = Emitter::new("bench", vec![Arc::new(|_: &Event| {})]);
        let outcome = tokio.block_on(runtime.run(emitter, String::new(), Vec::new()));
        assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
        assert_eq!(outcome.result, Some(serde_json::json!(expected)));
    });
}

#[divan::bench(sample_count = 10)]
fn strings(bencher: Bencher) {
    run_flow(bencher, "strings", STRINGS, "ITEM 9999");
}

#[divan::bench(sample_count = 10)]
fn files(bencher: Bencher) {
    run_flow(bencher, "files", FILES, "line 9999");
}

#[divan::bench(sample_count = 10)]
fn files_tool(bencher: Bencher) {
    let dir = dir("tool");
    let tools = builtin_tools("streetrace.fs", None, &Jail::new(&dir).unwrap(), &RunOptions::default());
    let write = tools.into_iter().find(|t| t.name() == "write_file").unwrap();
    let tokio = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    bencher.counter(ItemsCount::new(STEPS)).bench_local(|| {
        tokio.block_on(async {
            for i in 0..STEPS {
                let args = serde_json::json!({"path": "out.txt", "content": format!("line {i}")});
                assert_eq!(write.call(args).await.unwrap()["result"], "success");
            }
        })
    });
}

#[divan::bench(sample_count = 10)]
fn files_bare(bencher: Bencher) {
    let dir = dir("bare");
    bencher.counter(ItemsCount::new(STEPS)).bench_local(|| {
        for i in 0..STEPS {
            std::fs::write(dir.join("out.txt"), format!("line {i}")).unwrap();
        }
    });
}
