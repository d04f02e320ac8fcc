//! What one case costs: N runs of a one-agent workload against a scripted
//! model, launched directly in a fresh work directory with a session in one
//! store kept open (as the harness keeps its cases' sessions), then as N case
//! runs of `harness::run` with `--jobs 1` and 3 epochs (N/3 cases, each run 3
//! times; the harness adds the case's files, the events file, the scoring
//! and the results' summary with its bootstrap intervals). Prints both per
//! run and the difference, the process's peak memory after each round, and
//! for comparison a run that creates a session store of its own (what the
//! harness did per case before it shared one).
//!
//! `cargo run --release -p sr-eval --example overhead [N]` (`cargo xtask bench
//! sr-eval` runs it with 1000); N runs of each kind, in five alternating
//! rounds. Temporary directories go under `TMPDIR` (a tmpfs there shows what
//! the disk's `fsync`s and deletes cost).
#![allow(clippy::print_stdout)]

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use sr_eval::case::Models;
use sr_eval::config::Reduce;
use sr_eval::harness::{self, Options};
use sr_runtime::RunOptions;
use sr_runtime::human::Unattended;
use sr_runtime::launch::{LaunchSpec, Models as RunModels, Storage, launch};
use sr_runtime::scripted::conforming;
use sr_runtime::session::SessionStore;
use sr_runtime::state::StateDir;

const ROUNDS: usize = 5;
/// The harness's runs are this many epochs of N / EPOCHS cases.
const EPOCHS: u32 = 3;

const WORKLOAD: &str =
    "model main = openai/gpt-4o-mini\nprompt answer: \"\"\"You answer.\"\"\"\nagent:\n    instruction answer\n";

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(200) / ROUNDS;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("answer.sr");
    std::fs::write(&path, WORKLOAD).expect("writing the workload");
    let program = sr_runtime::workload::load(&mut sr_hir::RootDatabase::default(), &path).expect("it compiles");
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a runtime");
    let provider: Arc<dyn sr_llm::Provider> = Arc::new(conforming("ok"));

    let shared = dir.path().join("state");
    let _held = SessionStore::open(&shared.join("sessions.db")).expect("a session store");
    // Alternating rounds, so that a busy machine slows all alike.
    let (mut direct_total, mut harness_total, mut own_total) = (0.0, 0.0, 0.0);
    let (mut direct_cpu, mut harness_cpu, mut own_cpu) = (0.0, 0.0, 0.0);
    for round in 0..ROUNDS {
        let (started, cpu) = (Instant::now(), cpu_seconds());
        for i in 0..n {
            let run = dir.path().join(format!("direct-{round}-{i}"));
            runtime.block_on(direct(&program, provider.clone(), &run, &shared));
        }
        direct_total += started.elapsed().as_secs_f64();
        direct_cpu += cpu_seconds() - cpu;

        let (started, cpu) = (Instant::now(), cpu_seconds());
        for i in 0..n.div_ceil(10) {
            let run = dir.path().join(format!("own-{round}-{i}"));
            runtime.block_on(direct(&program, provider.clone(), &run, &run.join("state")));
        }
        own_total += started.elapsed().as_secs_f64() * 10.0;
        own_cpu += (cpu_seconds() - cpu) * 10.0;

        let cases = n / EPOCHS as usize;
        let lines: Vec<String> =
            (0..cases).map(|i| format!(r#"{{"id": "c{i}", "prompt": "p", "expect": [{{"equals": "ok"}}]}}"#)).collect();
        let cases =
            sr_eval::dataset::parse_jsonl(&lines.join("\n"), Path::new("bench.jsonl"), dir.path()).expect("cases");
        let options = Options {
            jobs: 1,
            timeout: None,
            retries: 0,
            out: dir.path().join(format!("out-{round}")),
            models: Models::Provider(provider.clone()),
            run: RunOptions::default(),
            reduce: Reduce::Mean,
        };
        let variants = harness::variants(&[("answer.sr".to_string(), program.clone())], &[], &[]);
        let planned = harness::plan(&variants, &cases, EPOCHS);
        let (started, cpu) = (Instant::now(), cpu_seconds());
        let ran = runtime.block_on(harness::run(variants, cases, planned, options, &|_| {}, std::future::pending()));
        harness_total += started.elapsed().as_secs_f64() * n as f64 / ran.results.cases.len() as f64;
        harness_cpu += (cpu_seconds() - cpu) * n as f64 / ran.results.cases.len() as f64;
        assert!(ran.results.complete && ran.results.cases.iter().all(|c| c.passed), "every case passes");
        println!("round {}: peak RSS {} MB", round + 1, peak_rss_kb() / 1024);
    }
    let runs = (n * ROUNDS) as f64;
    let per_run = |total: f64| total * 1000.0 / runs;
    let (direct_ms, harness_ms, own_ms) = (per_run(direct_total), per_run(harness_total), per_run(own_total));
    let (direct_cpu, harness_cpu, own_cpu) = (per_run(direct_cpu), per_run(harness_cpu), per_run(own_cpu));
    println!("{runs} runs of each, per run (wall / CPU of the whole process):");
    println!("  launched directly:       {direct_ms:.2} ms / {direct_cpu:.2} ms");
    println!("  as eval cases:           {harness_ms:.2} ms / {harness_cpu:.2} ms");
    println!("  harness overhead:        {:.2} ms / {:.2} ms", harness_ms - direct_ms, harness_cpu - direct_cpu);
    println!("  with a store of its own: {own_ms:.2} ms / {own_cpu:.2} ms ({} runs)", n.div_ceil(10) * ROUNDS);
}

/// One run as `sr_eval::case` launches it, without the harness around it: a
/// fresh work directory, and a new session in the store under `state`.
async fn direct(
    program: &Arc<sr_runtime::compile::Compiled>,
    provider: Arc<dyn sr_llm::Provider>,
    dir: &Path,
    state: &Path,
) {
    let work = dir.join("work");
    std::fs::create_dir_all(&work).expect("work");
    let storage = Storage {
        state: StateDir { dir: state.to_path_buf() },
        sessions: state.join("sessions.db"),
        session: None,
        resume: None,
        copies: None,
    };
    let launched = launch(LaunchSpec {
        program: program.clone(),
        message: "p".to_string(),
        work_dir: work,
        read_only: false,
        storage: Some(storage),
        models: RunModels::Provider { provider, record: None },
        options: RunOptions::default(),
        human: Arc::new(Unattended),
        in_doubt: sr_runtime::in_doubt::skip_all(),
    })
    .expect("it launches");
    let finished = launched.run(Arc::new(sr_runtime::hook::NoHook), vec![]).await.expect("it runs");
    assert!(finished.error.is_none());
    std::fs::remove_dir_all(dir).expect("cleaning up");
}

/// The process's peak resident memory (Linux `VmHWM`), in KiB.
fn peak_rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap_or_default();
    line.split_whitespace().nth(1).and_then(|kb| kb.parse().ok()).unwrap_or(0)
}

/// User and system time of this process so far (Linux, 100 ticks a second).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command name, which is in parentheses.
    let fields: Vec<&str> = stat.rsplit_once(')').map_or("", |(_, rest)| rest).split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}
