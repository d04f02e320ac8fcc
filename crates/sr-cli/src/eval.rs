//! `sr eval`: runs workloads on a dataset and scores every case (sr-eval),
//! writes `results.json`, `report.md` and `report.html`; `sr eval compare` is the CI gate
//! between two result sets and `sr eval merge` joins shards.

mod progress;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use regex::Regex;
use sr_eval::case::Models;
use sr_eval::harness::{self, Options};
use sr_eval::results::Results;
use sr_hir::RootDatabase;
use sr_runtime::RunOptions;
use sr_runtime::workload::{discover, load};

use progress::Display;

#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct Args {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Per-variant and per-case deltas between two results.json; exit 1 when a
    /// variant's pass rate drops by more than --max-drop or a passing case fails.
    Compare {
        base: PathBuf,
        new: PathBuf,
        /// The pass-rate drop allowed per variant, as a fraction (0.05 = five points).
        #[arg(long, default_value_t = 0.0, value_parser = fraction)]
        max_drop: f64,
    },
    /// Join the results.json of shards (`--shard I/N`) into one.
    Merge {
        #[arg(required = true)]
        parts: Vec<PathBuf>,
        /// Where the merged results go.
        #[arg(short, long)]
        out: PathBuf,
    },
}

#[derive(clap::Args)]
struct RunArgs {
    /// The dataset: `.jsonl` (one case a line) or `.yaml` (a list of cases).
    #[arg(required = true)]
    dataset: Option<PathBuf>,
    /// A workload to evaluate (a `.sr` or YAML file, or a workload name); repeatable.
    #[arg(long = "workload", value_name = "FILE", required = true)]
    workloads: Vec<String>,
    /// Start each workload at this flow or agent; repeatable (default: the entry point).
    #[arg(long = "entry", value_name = "NAME")]
    entries: Vec<String>,
    /// Run every call with this model; repeatable (default: the workload's models).
    #[arg(long = "model", value_name = "MODEL")]
    models: Vec<String>,
    /// Cases run at once (default: the number of CPUs).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    jobs: Option<u16>,
    /// Each attempt of a case fails as "timeout" after this many seconds.
    #[arg(long, value_name = "SECS", value_parser = seconds)]
    timeout: Option<Duration>,
    /// Attempts after the first for a case whose run errors or times out.
    #[arg(long, default_value_t = 0)]
    retries: u32,
    /// Where results.json, report.md, report.html and each case's events go
    /// (default: .streetrace/eval/<UTC timestamp>).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Record one cassette per case run under DIR (with the files it left).
    #[arg(long, value_name = "DIR", conflicts_with = "replay_from")]
    record_to: Option<PathBuf>,
    /// Serve every case run from the cassettes --record-to wrote (offline).
    #[arg(long, value_name = "DIR")]
    replay_from: Option<PathBuf>,
    /// Exit 1 when the mean score of all cases is below this (0..1).
    #[arg(long, value_name = "X", value_parser = fraction)]
    min_score: Option<f64>,
    /// Run only shard I of N (1-based; cases dealt round-robin in dataset order).
    #[arg(long, value_name = "I/N", value_parser = shard)]
    shard: Option<(usize, usize)>,
    /// Run only cases whose id matches this regular expression.
    #[arg(long, value_name = "REGEX")]
    filter: Option<Regex>,
    /// Model turns an agent may take.
    #[arg(long, default_value_t = 25)]
    max_turns: u32,
    /// A JSON price table (USD per million tokens by model) for the cost of each case.
    #[arg(long)]
    prices: Option<PathBuf>,
    /// Let cli tools declared `streetrace.cli.host` run commands on the host (see `sr run`).
    #[arg(long)]
    allow_host_tools: bool,
    /// Let coding agents with `backend: unsandboxed` run their code outside any sandbox.
    #[arg(long)]
    allow_unsandboxed: bool,
}

fn fraction(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        _ => Err(format!("{text:?} is not a number from 0 to 1")),
    }
}

fn seconds(text: &str) -> Result<Duration, String> {
    match text.parse::<f64>() {
        Ok(secs) if secs > 0.0 && secs <= 1e9 => Ok(Duration::from_secs_f64(secs)),
        _ => Err(format!("{text:?} is not a positive number of seconds")),
    }
}

fn shard(text: &str) -> Result<(usize, usize), String> {
    let bad = || format!("{text:?} is not I/N with 1 <= I <= N");
    let (i, n) = text.split_once('/').ok_or_else(bad)?;
    match (i.trim().parse::<usize>(), n.trim().parse::<usize>()) {
        (Ok(i), Ok(n)) if 1 <= i && i <= n => Ok((i, n)),
        _ => Err(bad()),
    }
}

fn fail(message: impl std::fmt::Display, code: u8) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(code)
}

pub fn run(args: Args) -> ExitCode {
    match args.command {
        Some(Command::Compare { base, new, max_drop }) => compare(&base, &new, max_drop),
        Some(Command::Merge { parts, out }) => merge(&parts, &out),
        None => {
            let runtime = match sr_runtime::async_runtime() {
                Ok(runtime) => runtime,
                Err(e) => return fail(format!("cannot start the async runtime: {e}"), 2),
            };
            let code = runtime.block_on(evaluate(args.run));
            // Runs a timeout or Ctrl-C abandoned are not waited for.
            runtime.shutdown_background();
            code
        }
    }
}

async fn evaluate(args: RunArgs) -> ExitCode {
    let Some(dataset) = &args.dataset else { return fail("give a dataset", 2) };
    let cases = match sr_eval::dataset::load(dataset) {
        Ok(cases) => cases,
        Err(e) => return fail(e, 2),
    };
    let cases = harness::select(cases, args.filter.as_ref(), args.shard);
    for model in &args.models {
        if let Err(e) = crate::load::check_model("--model", model) {
            return fail(e, 2);
        }
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    let mut workloads = Vec::new();
    for name in &args.workloads {
        match compile(name, &cwd) {
            Ok(program) => workloads.push((name.clone(), program)),
            Err(code) => return code,
        }
    }
    let prices = match args.prices.as_deref().map(crate::load::prices).transpose() {
        Ok(prices) => prices,
        Err(e) => return fail(e, 2),
    };
    let models = match (&args.record_to, &args.replay_from) {
        (Some(dir), _) => Models::Record(dir.clone()),
        (_, Some(dir)) if !dir.is_dir() => return fail(format!("no recordings at {}", dir.display()), 2),
        (_, Some(dir)) => Models::Replay(dir.clone()),
        (None, None) => Models::Live,
    };
    let out = args.out.clone().unwrap_or_else(|| Path::new(".streetrace/eval").join(utc_stamp()));
    if let Err(e) = std::fs::create_dir_all(&out) {
        return fail(format!("cannot make {}: {e}", out.display()), 2);
    }
    let variants = harness::variants(&workloads, &args.entries, &args.models);
    let total = variants.len() * cases.len();
    let jobs = args.jobs.map_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()), usize::from);
    let options = Options {
        jobs,
        timeout: args.timeout,
        retries: args.retries,
        out: out.clone(),
        models,
        run: RunOptions {
            max_turns: args.max_turns,
            prices,
            allow_host_tools: args.allow_host_tools,
            allow_unsandboxed: args.allow_unsandboxed,
            ..RunOptions::default()
        },
    };
    let display = Display::new(total);
    let ran = harness::run(variants, cases, options, &|p| display.case_done(p), ctrl_c()).await;
    display.finish();
    if let Err(e) = write_results(&ran.results, &out) {
        return fail(e, 2);
    }
    for s in &ran.results.summary {
        let name = sr_eval::compare::variant_name(&s.variant());
        println!(
            "{name}: {}/{} passed ({:.1}%), mean score {:.3}",
            s.passed,
            s.total,
            s.pass_rate * 100.0,
            s.mean_score
        );
    }
    println!("results: {}", out.join("results.json").display());
    println!("report: {} (and report.html)", out.join("report.md").display());
    if ran.interrupted {
        eprintln!(
            "interrupted: the results of the {} case run(s) that finished (of {total}) are in {}",
            ran.results.cases.len(),
            out.join("results.json").display()
        );
        return ExitCode::from(130);
    }
    let mean = ran.results.mean_score();
    match args.min_score {
        Some(min) if mean < min => {
            eprintln!("mean score {mean:.3} is below --min-score {min}");
            ExitCode::from(1)
        }
        _ => ExitCode::SUCCESS,
    }
}

/// Completes at the first Ctrl-C; never when the signal cannot be watched.
async fn ctrl_c() {
    if tokio::signal::ctrl_c().await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// The workload `name` names, compiled; its errors are printed.
fn compile(name: &str, cwd: &Path) -> Result<Arc<sr_runtime::compile::Compiled>, ExitCode> {
    let path = discover(name, cwd).map_err(|e| fail(e, 2))?;
    load(&mut RootDatabase::default(), &path).map_err(|e| {
        for line in crate::load::errors(&e) {
            eprintln!("{line}");
        }
        fail(format!("{} has errors; run `sr check {}`", path.display(), path.display()), 2)
    })
}

fn write_results(results: &Results, out: &Path) -> Result<(), String> {
    let write = |name: &str, text: String| {
        let path = out.join(name);
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    write("results.json", serde_json::to_string_pretty(results).map_err(|e| e.to_string())?)?;
    write("report.md", sr_eval::report::markdown(results))?;
    write("report.html", sr_eval::html::report(results, out))
}

fn read_results(path: &Path) -> Result<Results, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text)
        .map_err(|e| format!("{}:{}:{}: not eval results: {e}", path.display(), e.line(), e.column()))
}

fn compare(base: &Path, new: &Path, max_drop: f64) -> ExitCode {
    let (base, new) = match (read_results(base), read_results(new)) {
        (Ok(base), Ok(new)) => (base, new),
        (Err(e), _) | (_, Err(e)) => return fail(e, 2),
    };
    let comparison = sr_eval::compare::compare(&base, &new, max_drop);
    print!("{}", comparison.text);
    if comparison.regressed {
        eprintln!("regression: see the DROP and FAIL lines above");
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn merge(parts: &[PathBuf], out: &Path) -> ExitCode {
    let read: Result<Vec<Results>, String> = parts.iter().map(|p| read_results(p)).collect();
    let merged = match read.and_then(sr_eval::compare::merge) {
        Ok(merged) => merged,
        Err(e) => return fail(e, 2),
    };
    let text = serde_json::to_string_pretty(&merged).unwrap_or_default();
    if let Err(e) = std::fs::write(out, text) {
        return fail(format!("cannot write {}: {e}", out.display()), 2);
    }
    ExitCode::SUCCESS
}

/// `YYYYMMDD-HHMMSS` of the current UTC time.
fn utc_stamp() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (year, month, day) = sr_runtime::stdlib::civil((secs / 86_400) as i64);
    let rest = secs % 86_400;
    format!("{year:04}{month:02}{day:02}-{:02}{:02}{:02}", rest / 3600, rest % 3600 / 60, rest % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_values_are_checked() {
        assert_eq!(shard("2/3"), Ok((2, 3)));
        for bad in ["0/3", "4/3", "3", "a/b", "1/0"] {
            assert!(shard(bad).is_err(), "{bad}");
        }
        assert_eq!(seconds("1.5"), Ok(Duration::from_millis(1500)));
        for bad in ["0", "-1", "NaN", "inf", "x"] {
            assert!(seconds(bad).is_err(), "{bad}");
        }
        assert_eq!(fraction("0.25"), Ok(0.25));
        assert!(fraction("1.5").is_err() && fraction("NaN").is_err());
    }

    #[test]
    fn the_default_out_directory_is_a_utc_date_and_time() {
        let stamp = utc_stamp();
        assert_eq!((stamp.len(), &stamp[8..9]), (15, "-"), "{stamp}");
    }
}
