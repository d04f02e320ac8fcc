//! Project automation: `cargo xtask <task>`.
// A developer tool: it prints its findings, and a broken corpus or fixture stops it loudly.
#![allow(clippy::print_stdout, clippy::unwrap_used)]

mod bench;
mod ci;
mod differential;
mod dist;
mod e2e_vscode;
mod fuzz;
mod lsp_bench;
mod record_example;
mod scaling;
mod semantic;
mod serve_bench;
mod simulate;
mod studio;

use std::process::ExitCode;

const USAGE: &str = "usage: cargo xtask <task>

tasks:
  ci  formatting, lints and every test (what .ci/run runs)
  bench [CRATE... | lsp | scaling | serve]
      every benchmark (divan benches of sr-syntax, sr-hir, sr-ide, sr-runtime,
      sr-sandbox; the language server's latency and memory examples; the
      scaling check), or those named; `lsp [--server PATH] [--runs N]` drives
      the release sr-lsp binary over stdio on the example workload and a 9.2 MB
      file and prints each request's time, answer size and the server's memory; `scaling` runs sr check (release) on
      every generated hostile input (one per diagnostic code, one per
      construct, the hand-written ones) at a size and twice it and fails when
      twice the input takes more than 2.5x the time; `serve` runs sr serve
      (release, embedded) under 200 sessions of a two-agent flow and prints
      throughput, API latency, first-event latency and peak memory
  cycles
      no module cycle inside any crate: sibling modules must form a DAG
      (a path from a::b::… to a::c::… is an edge b → c); runs the syn-only
      xtask-cycles package, which `cargo cycles` runs without building xtask
  string-errors [--list] [--max N]
      per crate, the `Result<_, String>` types and `map_err(|e| format!(…))`
      calls of shipped code (tests and sr-testing left out); --list names
      each site; --max fails when more than N `Result<_, String>` remain;
      runs the syn-only xtask-cycles package
  differential [--cases N] [--seed S] [--save FILE]
      mutate the corpus, parse every mutant here and with upstream StreetRace
      (python from $STREETRACE_PYTHON, default /opt/upstream/bin/python) and
      report where the two disagree; --save appends up to 300 agreements,
      with upstream's verdicts, to a regression file
  dist [--no-build] [--check]
      the dist profile (LTO, stripped) of sr, sr-lsp and sr-dap (failing when
      sr > 25 MiB or sr-lsp > 10 MiB), and in target/dist/: a tarball
      (binaries, completions, licences), a Python wheel (pip install
      --no-index target/dist/streetrace_rs-*.whl) and the linux-x64 .vsix
      with sr bundled; --check installs the wheel in a fresh venv and runs
      its sr --version and sr check on an example
  fuzz [--seconds N] [TARGET...]
      build the cargo-fuzz targets of fuzz/ (parse, format, lsp_gate) and run
      each (or those named) for N seconds (default 30) on a corpus seeded from
      the repository's .sr files; fails on a crash with the reproducer's path
      (needs cargo-fuzz; stable Rust runs it with RUSTC_BOOTSTRAP=1)
  record-example
      re-record examples/review/review.cassette.jsonl (the README's first
      command replays it) and examples/structured-workflow's recording
      against a local mock model server
  e2e-vscode [--sr FILE] [--screenshots DIR]
      the VS Code extension with `sr` bundled, installed in code-server and
      driven by headless Chromium: a diagnostic appears in the Problems panel
      and clears after a fix, Run and Debug work; screenshots to docs/images
      (needs chromium and libkrb5-dev from apt)
  studio-check [--write]
      type-check the studio (studio/) and rebuild it into a scratch directory;
      fails when the build differs from crates/sr-studio/assets (which --write
      replaces instead)
  studio-e2e [--screenshots DIR]
      the studio's Playwright tests in Debian's Chromium against the fixture
      server (sr-studio's example), which serves the embedded app: every page
      without a console error or serious axe violation, a live event within a
      second, answering a question, 10,000 events in under a second, the
      evaluations page; screenshots to DIR (docs/images for docs/studio.md)
  simulate [--seed N] [--cases K] [--budget SECS] [--size N] [--kills N]
           [--only F,..] [--without F,..] [--all] [--keep]
      generated workflows (sr_testing::simulate) run live against a scripted
      model (no call in doubt, as nothing crashed), then replayed (identical events and files, no request), killed
      after --kills random journal lines (default 4) and resumed (every
      effect once, the same files, its journal replays the same), and forked
      (no request before the fork's step); a failing case is shrunk and
      printed with its seed. Features in KNOWN_ESCAPES are left out unless
      --all; --keep keeps the last case's directories; $SR_BIN, else the
      debug sr (built first)
  differential --semantic [--cases N] [--seed S] [--save FILE]
      the same for semantic analysis: random programs checked here in
      --compat upstream mode and with upstream's `check`; compares the
      (code, line) pairs";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci::run(&args[1..]),
        Some("bench") => bench::run(&args[1..]),
        // The check is its own syn-only package (xtask/cycles), fast to build.
        Some("cycles") => {
            let mut command = vec!["run", "--quiet", "--package", "xtask-cycles", "--"];
            command.extend(args[1..].iter().map(String::as_str));
            ci::step("cargo", &command, &[])
        }
        Some("string-errors") => {
            let mut command = vec!["run", "--quiet", "--package", "xtask-cycles", "--", "string-errors"];
            command.extend(args[1..].iter().map(String::as_str));
            ci::step("cargo", &command, &[])
        }
        Some("differential") if args.iter().any(|a| a == "--semantic") => semantic::run(&args[1..]),
        Some("differential") => differential::run(&args[1..]),
        Some("simulate") => simulate::run(&args[1..]),
        Some("dist") => dist::run(&args[1..]),
        Some("fuzz") => fuzz::run(&args[1..]),
        Some("record-example") => record_example::run(&args[1..]),
        Some("e2e-vscode") => e2e_vscode::run(&args[1..]),
        Some("studio-check") => studio::check(&args[1..]),
        Some("studio-e2e") => studio::e2e(&args[1..]),
        _ => Err(USAGE.to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root.
pub fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The `version` of `[workspace.package]`.
pub fn workspace_version(root: &std::path::Path) -> Result<String, String> {
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).map_err(|e| format!("Cargo.toml: {e}"))?;
    manifest
        .lines()
        .find_map(|line| line.strip_prefix("version = \"").and_then(|rest| rest.strip_suffix('"')))
        .map(str::to_string)
        .ok_or_else(|| "no version in Cargo.toml's [workspace.package]".to_string())
}

/// Where cargo builds: `$CARGO_TARGET_DIR`, else `target/`.
pub fn target_dir() -> std::path::PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root().join("target"), Into::into)
}

/// The value after `--name` in `args`.
pub fn flag<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).map(String::as_str)
}
