//! What the harness adds to each case: N runs of a one-agent workload against
//! a scripted model, launched directly (a fresh work and state directory each,
//! as a case has) and then as N cases of `harness::run` with `--jobs 1`
//! (which adds the case's files, the events file, the work directory
//! snapshot and the scoring). Prints both per run and the difference.
//!
//! `cargo run -p sr-eval --example overhead [N]` (debug unless `--release`);
//! N runs of each kind, in five alternating rounds.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use sr_eval::case::Models;
use sr_eval::harness::{self, Options};
use sr_runtime::RunOptions;
use sr_runtime::human::Unattended;
use sr_runtime::launch::{LaunchSpec, Storage, launch};
use sr_runtime::scripted::conforming;
use sr_runtime::state::StateDir;

const ROUNDS: usize = 5;

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

    // Alternating rounds, so that a busy machine slows both alike.
    let (mut direct_total, mut harness_total) = (0.0, 0.0);
    let (mut direct_cpu, mut harness_cpu) = (0.0, 0.0);
    for round in 0..ROUNDS {
        let (started, cpu) = (Instant::now(), cpu_seconds());
        for i in 0..n {
            runtime.block_on(direct(&program, provider.clone(), &dir.path().join(format!("direct-{round}-{i}"))));
        }
        direct_total += started.elapsed().as_secs_f64();
        direct_cpu += cpu_seconds() - cpu;

        let lines: Vec<String> =
            (0..n).map(|i| format!(r#"{{"id": "c{i}", "prompt": "p", "expect": [{{"equals": "ok"}}]}}"#)).collect();
        let cases =
            sr_eval::dataset::parse_jsonl(&lines.join("\n"), Path::new("bench.jsonl"), dir.path()).expect("cases");
        let options = Options {
            jobs: 1,
            timeout: None,
            retries: 0,
            out: dir.path().join(format!("out-{round}")),
            models: Models::Provider(provider.clone()),
            run: RunOptions::default(),
        };
        let variants = harness::variants(&[("answer.sr".to_string(), program.clone())], &[], &[]);
        let (started, cpu) = (Instant::now(), cpu_seconds());
        let ran = runtime.block_on(harness::run(variants, cases, options, &|_| {}, std::future::pending()));
        harness_total += started.elapsed().as_secs_f64();
        harness_cpu += cpu_seconds() - cpu;
        assert!(ran.results.cases.iter().all(|c| c.passed), "every case passes");
    }
    let runs = (n * ROUNDS) as f64;
    let (direct_ms, harness_ms) = (direct_total * 1000.0 / runs, harness_total * 1000.0 / runs);
    let (direct_cpu, harness_cpu) = (direct_cpu * 1000.0 / runs, harness_cpu * 1000.0 / runs);
    println!("{runs} runs of each, per run (wall / CPU of the whole process):");
    println!("  launched directly: {direct_ms:.2} ms / {direct_cpu:.2} ms");
    println!("  as eval cases:     {harness_ms:.2} ms / {harness_cpu:.2} ms");
    println!("  harness overhead:  {:.2} ms / {:.2} ms", harness_ms - direct_ms, harness_cpu - direct_cpu);
}

/// One run as `sr_eval::case` launches it, without the harness around it.
async fn direct(program: &Arc<sr_runtime::compile::Compiled>, provider: Arc<dyn sr_llm::Provider>, dir: &Path) {
    let (work, state) = (dir.join("work"), dir.join("state"));
    std::fs::create_dir_all(&work).expect("work");
    std::fs::create_dir_all(&state).expect("state");
    let storage = Storage {
        state: StateDir { dir: state.clone() },
        sessions: state.join("sessions.db"),
        session: None,
        resume: None,
    };
    let mut launched = launch(LaunchSpec {
        program: program.clone(),
        message: "p".to_string(),
        work_dir: work,
        storage: Some(storage),
        record: None,
        replay: None,
        options: RunOptions::default(),
        human: Arc::new(Unattended),
    })
    .expect("it launches");
    launched.provider = provider;
    let finished = launched.run(vec![]).await.expect("it runs");
    assert!(finished.error.is_none());
    std::fs::remove_dir_all(dir).expect("cleaning up");
}

/// User and system time of this process so far (Linux, 100 ticks a second).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command name, which is in parentheses.
    let fields: Vec<&str> = stat.rsplit_once(')').map_or("", |(_, rest)| rest).split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}
