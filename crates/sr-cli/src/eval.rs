//! `sr eval`: runs workloads on a dataset and scores every case (sr-eval),
//! appends each finished case run to `runs.jsonl` and writes `results.json`,
//! `report.md` and `report.html` from it; SIGINT, SIGTERM and SIGHUP stop it
//! with the finished cases written; `--resume OUT` finishes a run that
//! stopped or was killed; `sr eval compare` is the CI gate between two
//! result sets (and `--baseline RESULTS` applies it to the run just made),
//! `sr eval merge` joins shards and `sr eval report` renders the reports of
//! any results.

mod commands;
mod output;
mod prepare;
mod progress;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Duration;

use sr_eval::compare::Rule;
use sr_eval::config::Reduce;
use sr_eval::harness;
use sr_eval::results::{CaseResult, Results, RunKey};
use sr_eval::runlog::{self, RunLog};

use output::{fail, print_summary, read_results, tell, write_json, write_results};
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
    /// Per-variant and per-case differences between two results.json, each
    /// with its p-value and 95% interval, and a verdict in words; exit 1 when
    /// a gate rule fails (a significant change beyond its amount) or runs of
    /// the base are missing from the new results.
    Compare {
        base: PathBuf,
        new: PathBuf,
        #[command(flatten)]
        gate: GateArgs,
        /// Compare this variant of BASE (its full name, `workload@entry`, the
        /// workload or its file stem, or a part only it has: its entry or
        /// model) with --new-variant of NEW, case by case.
        #[arg(long, value_name = "VARIANT", requires = "new_variant")]
        base_variant: Option<String>,
        /// The variant of NEW compared with --base-variant.
        #[arg(long, value_name = "VARIANT", requires = "base_variant")]
        new_variant: Option<String>,
        /// `text` (default) or `json`.
        #[arg(long, default_value = "text", value_parser = ["text", "json"])]
        format: String,
        /// Also write the comparison as a page: the verdict, the gate, the
        /// paired differences and the changed cases' transcripts side by side.
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
    },
    /// Join the results.json of shards (`--shard I/N`) into one.
    Merge {
        #[arg(required = true)]
        parts: Vec<PathBuf>,
        /// Where the merged results go (`sr eval report` renders their reports).
        #[arg(short, long)]
        out: PathBuf,
    },
    /// Write report.md and report.html for a results.json (a run's, or merged ones).
    Report {
        results: PathBuf,
        /// Where the reports go (default: beside the results).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
}

const RESUME_CONFLICTS: [&str; 20] = [
    "dataset",
    "workloads",
    "entries",
    "models",
    "timeout",
    "retries",
    "out",
    "record_to",
    "replay_from",
    "min_score",
    "shard",
    "filter",
    "max_turns",
    "prices",
    "allow_host_tools",
    "allow_unsandboxed",
    "epochs",
    "reduce",
    "servers",
    "api_key_file",
];

/// What a server decides for its runs, or what runs here only.
const SERVER_CONFLICTS: [&str; 5] = ["record_to", "replay_from", "max_turns", "allow_host_tools", "allow_unsandboxed"];

/// The gate of `sr eval compare` and of `sr eval --baseline`.
#[derive(clap::Args)]
pub(crate) struct GateArgs {
    /// A rule that fails the gate: `METRIC drop|rise > AMOUNT [points|%]`
    /// (metrics: pass_rate, mean_score, f1, precision, recall, tokens,
    /// cost), such as `pass_rate drop > 2 points` or `cost rise > 20%`; it
    /// fails on a change beyond AMOUNT whose p-value is below --significance.
    /// Repeatable; without --gate or --max-drop the gate is `pass_rate drop > 0 points`.
    #[arg(long = "gate", value_name = "RULE", value_parser = Rule::parse)]
    rules: Vec<Rule>,
    /// A significant pass-rate drop of more than X, a fraction (0.05 = five
    /// points), fails: the rule `pass_rate drop > 100·X points`.
    #[arg(long, value_name = "X", value_parser = fraction)]
    max_drop: Option<f64>,
    /// The significance level of every rule: a change fails the gate only
    /// when its p-value is below LEVEL (default 0.05).
    #[arg(long, value_name = "LEVEL", value_parser = level)]
    significance: Option<f64>,
    /// Runs and variants of the base missing from the new results do not fail the gate.
    #[arg(long)]
    allow_missing: bool,
}

impl GateArgs {
    fn given(&self) -> bool {
        !self.rules.is_empty() || self.max_drop.is_some() || self.significance.is_some() || self.allow_missing
    }

    fn options(&self, variants: Option<(String, String)>) -> sr_eval::compare::Options {
        let mut rules = self.rules.clone();
        rules.extend(self.max_drop.map(Rule::max_drop));
        if rules.is_empty() {
            rules.push(Rule::max_drop(0.0));
        }
        sr_eval::compare::Options {
            rules,
            significance: self.significance.unwrap_or(0.05),
            allow_missing: self.allow_missing,
            variants,
        }
    }
}

#[derive(clap::Args)]
pub(crate) struct RunArgs {
    /// The dataset: `.jsonl` (one case a line) or `.yaml` (a list of cases).
    #[arg(required_unless_present = "resume")]
    dataset: Option<PathBuf>,
    /// A workload to evaluate (a `.sr` or YAML file, or a workload name); repeatable.
    #[arg(long = "workload", value_name = "FILE", required_unless_present = "resume")]
    workloads: Vec<String>,
    /// Start each workload at this flow, agent or prompt (`flow:`, `agent:`,
    /// `prompt:NAME` for one kind); repeatable (default: the entry point).
    #[arg(long = "entry", value_name = "NAME")]
    entries: Vec<String>,
    /// Run every call with this model; repeatable (default: the workload's models).
    #[arg(long = "model", value_name = "MODEL")]
    models: Vec<String>,
    /// Run each case K times (its runs reduce by --reduce).
    #[arg(long, value_name = "K", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    epochs: u32,
    /// How a case's epochs make its pass value and score: mean, max or pass@K.
    #[arg(long, value_name = "HOW", default_value = "mean")]
    reduce: Reduce,
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
    /// Record one cassette per case run under DIR.
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
    #[arg(long, value_name = "REGEX", value_parser = regex)]
    filter: Option<String>,
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
    /// Submit every case run to this `sr serve` (its API v1) instead of
    /// running it here; repeatable (the runs are dealt to the servers in turn).
    #[arg(long = "server", value_name = "URL", conflicts_with_all = SERVER_CONFLICTS)]
    servers: Vec<String>,
    /// The API key for --server: the file's first line that is neither blank nor a `#` comment.
    #[arg(long, value_name = "FILE", requires = "servers")]
    api_key_file: Option<PathBuf>,
    /// Compare the results with these (a results.json) when the run
    /// finishes, as `sr eval compare RESULTS` would, with the same gate:
    /// print the verdict, write compare.html beside the reports, and exit 1
    /// when the gate fails.
    #[arg(long, value_name = "RESULTS")]
    baseline: Option<PathBuf>,
    #[command(flatten)]
    gate: GateArgs,
    /// Finish the run in DIR: run the cases missing from DIR/results.json, as
    /// that run was asked (only --jobs may be given again), and write its
    /// results and reports again.
    #[arg(long, value_name = "DIR", conflicts_with_all = RESUME_CONFLICTS)]
    resume: Option<PathBuf>,
}

fn fraction(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        _ => Err(format!("{text:?} is not a number from 0 to 1")),
    }
}

fn level(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(x) if x > 0.0 && x < 1.0 => Ok(x),
        _ => Err(format!("{text:?} is not a significance level between 0 and 1 (such as 0.05)")),
    }
}

fn seconds(text: &str) -> Result<Duration, String> {
    match text.parse::<f64>() {
        Ok(secs) if secs > 0.0 && secs <= 1e9 => Ok(Duration::from_secs_f64(secs)),
        _ => Err(format!("{text:?} is not a positive number of seconds")),
    }
}

/// Why epochs the replay directory has no recording of cannot give results,
/// and what they cost: said once, before any case runs.
fn unrecorded_warning(unrecorded: &[u32], epochs: u32, dir: &Path) -> Option<String> {
    let first = *unrecorded.first()?;
    let listed = unrecorded.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
    let (epoch, them) = if unrecorded.len() == 1 { ("epoch", "it") } else { ("epochs", "them") };
    Some(format!(
        "warning: --epochs {epochs} with --replay-from {}: it has no recording of {epoch} {listed} (a replay serves \
         each epoch its own recording and never samples the model again), so every run of {them} will fail; the \
         run does {epochs}× the case runs of one epoch. Record with --epochs {epochs}, or replay with --epochs {}",
        dir.display(),
        first - 1
    ))
}

fn shard(text: &str) -> Result<(usize, usize), String> {
    let bad = || format!("{text:?} is not I/N with 1 <= I <= N");
    let (i, n) = text.split_once('/').ok_or_else(bad)?;
    match (i.trim().parse::<usize>(), n.trim().parse::<usize>()) {
        (Ok(i), Ok(n)) if 1 <= i && i <= n => Ok((i, n)),
        _ => Err(bad()),
    }
}

fn regex(text: &str) -> Result<String, String> {
    regex::Regex::new(text).map(|_| text.to_string()).map_err(|e| e.to_string())
}

pub fn run(args: Args) -> ExitCode {
    match args.command {
        Some(Command::Compare { base, new, gate, base_variant, new_variant, format, html }) => {
            let options = gate.options(base_variant.zip(new_variant));
            commands::compare(&base, &new, &options, format == "json", html.as_deref())
        }
        Some(Command::Merge { parts, out }) => commands::merge(&parts, &out),
        Some(Command::Report { results, out }) => commands::report(&results, out.as_deref()),
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

/// A new run, or the rest of one (`--resume`).
async fn evaluate(args: RunArgs) -> ExitCode {
    let jobs = args.jobs.map(usize::from);
    if args.baseline.is_none() && args.gate.given() {
        return fail("--gate, --max-drop, --significance and --allow-missing judge a run against --baseline", 2);
    }
    // A baseline that cannot be read stops the run before it starts.
    let baseline = match args.baseline.as_deref().map(|path| read_results(path).map(|r| (r, path))).transpose() {
        Ok(baseline) => baseline,
        Err(e) => return fail(e, 2),
    };
    let (config, out, before) = match &args.resume {
        Some(dir) => {
            let mut results = match read_results(&dir.join("results.json")) {
                Ok(results) => results,
                Err(e) => return fail(e, 2),
            };
            // The case runs that finished are the log's (results.json has
            // none after a `kill -9`).
            match logged(&dir.join(runlog::FILE), &results) {
                Ok(cases) => results.cases = cases,
                Err(e) => return fail(e, 2),
            }
            let Some(mut config) = results.run.clone() else {
                return fail(
                    format!(
                        "{} does not say how its run was asked for (merged results cannot be resumed)",
                        dir.display()
                    ),
                    2,
                );
            };
            config.jobs = jobs.or(config.jobs);
            (config, dir.clone(), Some(results))
        }
        None => match prepare::config(&args) {
            Ok(config) => {
                (config, args.out.clone().unwrap_or_else(|| Path::new(".streetrace/eval").join(utc_stamp())), None)
            }
            Err(e) => return fail(e, 2),
        },
    };
    let mut config = config;
    let prepared = match prepare::prepare(&mut config, &out, before.is_none()) {
        Ok(prepared) => prepared,
        Err(problems) => {
            for problem in &problems {
                tell(problem);
            }
            return ExitCode::from(2);
        }
    };
    let reduce = before.as_ref().map_or(args.reduce, |b| b.reduce);
    let prepare::Prepared { cases, variants, options } = prepared;
    if let Err(problems) = prepare::check_servers(&options, &variants).await {
        for problem in &problems {
            tell(problem);
        }
        return ExitCode::from(2);
    }
    if let Some(dir) = &config.replay_from {
        let unrecorded = harness::unrecorded_epochs(dir, &variants, &cases, config.epochs);
        if let Some(warning) = unrecorded_warning(&unrecorded, config.epochs, dir) {
            tell(&warning);
        }
    } else if config.epochs > 1 && config.servers.is_empty() {
        let fixed: Vec<String> = harness::temperature_zero(&variants)
            .iter()
            .map(|v| sr_eval::names::variant_name(&(v.workload.clone(), v.entry.clone(), v.model.clone())))
            .collect();
        if !fixed.is_empty() {
            tell(&format!(
                "warning: --epochs {}: every model of {} is declared at temperature 0, so its epochs ask the same \
                 thing the same way and differ only as far as the provider is not deterministic; the run does {}× \
                 the case runs of one epoch",
                config.epochs,
                fixed.join(", "),
                config.epochs
            ));
        }
    }
    let plan = harness::plan(&variants, &cases, config.epochs);
    let keys: Vec<RunKey> = plan.iter().map(|p| harness::key(&variants, &cases, *p)).collect();
    let finished: std::collections::HashSet<RunKey> =
        before.iter().flat_map(|b| b.cases.iter().map(|c| c.key())).collect();
    let todo: Vec<harness::Planned> =
        plan.iter().zip(&keys).filter(|(_, k)| !finished.contains(*k)).map(|(p, _)| *p).collect();
    if let Err(e) = std::fs::create_dir_all(&out) {
        return fail(format!("cannot make {}: {e}", out.display()), 2);
    }
    let log_path = out.join(runlog::FILE);
    let log = if before.is_some() { RunLog::append_to(&log_path) } else { RunLog::create(&log_path) };
    let log = match log {
        Ok(log) => Mutex::new(log),
        Err(e) => return fail(e, 2),
    };
    if before.is_none() {
        // How the run was asked for is on disk before any case runs: a
        // killed run can be resumed.
        let none = Results::assemble(&keys, Vec::new(), reduce, Some(config.clone()));
        if let Err(e) = write_json(&none, &out) {
            return fail(e, 2);
        }
    }
    let total = todo.len();
    let display = Display::new(total);
    let servers = match &options.models {
        sr_eval::case::Models::Server(servers) => Some(servers.clone()),
        _ => None,
    };
    let finished = |p: &harness::Progress| {
        display.case_done(p);
        let appended = log
            .lock()
            .map_err(|_| "the log's lock is poisoned".to_string())
            .and_then(|mut l| l.append(p.case).map_err(|e| e.to_string()));
        if let Err(e) = appended {
            tell(&format!("warning: {e} (this case run is not kept: --resume runs it again)"));
        }
    };
    let ran = harness::run(variants, cases, todo, options, &finished, stop_signal()).await;
    if let Some(servers) = servers {
        servers.settle().await;
    }
    display.finish();
    drop(log);
    // The results are the log's: what they hold is what a resume would find.
    let all = match runlog::recover(&log_path) {
        Ok(read) => read.cases,
        Err(e) => return fail(e, 2),
    };
    let min_score = config.min_score;
    let results = Results::assemble(&keys, all, reduce, Some(config));
    // Written before anything is printed: a closed stdout loses no results.
    if let Err(e) = write_results(&results, &out) {
        return fail(e, 2);
    }
    print_summary(&results, &out);
    if ran.interrupted {
        tell(&format!(
            "interrupted: {} of {} case runs finished; the results are in {} (sr eval --resume {} runs the rest)",
            results.finished,
            results.planned,
            out.join("results.json").display(),
            out.display()
        ));
        return ExitCode::from(130);
    }
    if !results.complete {
        // Only a case run the log could not take is missing from a run that was not stopped.
        return fail(
            format!(
                "{} of {} case runs could not be written to {} (sr eval --resume {} runs them)",
                results.missing.len(),
                results.planned,
                log_path.display(),
                out.display()
            ),
            2,
        );
    }
    let mut code = ExitCode::SUCCESS;
    if let Some((base, path)) = &baseline {
        let options = args.gate.options(None);
        match commands::gate(base, path, &results, &out, &options) {
            Ok(true) => code = ExitCode::from(1),
            Ok(false) => {}
            Err(e) => return fail(e, 2),
        }
    }
    let mean = results.mean_score();
    match min_score {
        Some(min) if mean < min => {
            tell(&format!("mean score {mean:.3} is below --min-score {min}"));
            ExitCode::from(1)
        }
        _ => code,
    }
}

/// The case runs in the log at `path` of a run being resumed (a torn last
/// line dropped with a warning). A directory without a log (written before
/// there was one) gets one with the case runs of its `results`.
fn logged(path: &Path, results: &Results) -> Result<Vec<CaseResult>, String> {
    if path.exists() {
        let read = runlog::recover(path).map_err(|e| e.to_string())?;
        if let Some(dropped) = read.dropped {
            tell(&format!("warning: {dropped}"));
        }
        return Ok(read.cases);
    }
    let mut log = RunLog::create(path).map_err(|e| e.to_string())?;
    for case in &results.cases {
        log.append(case).map_err(|e| e.to_string())?;
    }
    Ok(results.cases.clone())
}

/// Completes at the first SIGINT (Ctrl-C), SIGTERM (`timeout`, `docker
/// stop`, Kubernetes) or SIGHUP (the terminal went away); a signal that
/// cannot be watched never completes it.
#[cfg(unix)]
async fn stop_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    async fn on(kind: SignalKind) {
        match signal(kind) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    }
    tokio::select! {
        () = on(SignalKind::interrupt()) => {}
        () = on(SignalKind::terminate()) => {}
        () = on(SignalKind::hangup()) => {}
    }
}

/// Completes at the first Ctrl-C; never when the signal cannot be watched.
#[cfg(not(unix))]
async fn stop_signal() {
    if tokio::signal::ctrl_c().await.is_err() {
        std::future::pending::<()>().await;
    }
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
        assert_eq!(level("0.05"), Ok(0.05));
        for bad in ["0", "1", "-0.1", "NaN", "x"] {
            assert!(level(bad).is_err(), "{bad}");
        }
        assert!(regex("(").is_err() && regex("^c[0-9]$").is_ok());
    }

    #[test]
    fn the_default_out_directory_is_a_utc_date_and_time() {
        let stamp = utc_stamp();
        assert_eq!((stamp.len(), &stamp[8..9]), (15, "-"), "{stamp}");
    }
}
