//! What a run needs before its first case: the run's description (from the
//! flags, or from the results it resumes) and everything it names loaded and
//! checked — the dataset (every problem), the workloads (compiled; the same
//! sources as the run being resumed), the entries, the models and their
//! providers, the price table and the recordings. Every problem is reported
//! at once and nothing runs.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use sr_eval::case::Models;
use sr_eval::config::{Reduce, RunConfig, WorkloadRef, fingerprint};
use sr_eval::dataset::Case;
use sr_eval::harness::{self, Options, Variant};
use sr_eval::remote::{self, Servers};
use sr_hir::RootDatabase;
use sr_runtime::RunOptions;
use sr_runtime::compile::Compiled;
use sr_runtime::workload::{discover, load};

use super::RunArgs;

pub struct Prepared {
    pub cases: Vec<Case>,
    pub variants: Vec<Variant>,
    pub options: Options,
}

/// The run the flags ask for, paths made absolute (workloads are found by `prepare`).
pub fn config(args: &RunArgs) -> Result<RunConfig, String> {
    let Some(dataset) = &args.dataset else { return Err("give a dataset".to_string()) };
    if let Reduce::PassAt(k) = args.reduce
        && k > args.epochs
    {
        return Err(format!("--reduce pass@{k} needs --epochs {k} or more (it is {})", args.epochs));
    }
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    Ok(RunConfig {
        dataset: absolute(dataset),
        dataset_sha256: String::new(),
        workloads: args
            .workloads
            .iter()
            .map(|name| WorkloadRef { name: name.clone(), path: PathBuf::new(), sha256: String::new() })
            .collect(),
        entries: args.entries.clone(),
        models: args.models.clone(),
        epochs: args.epochs,
        jobs: args.jobs.map(usize::from),
        timeout_secs: args.timeout.map(|t| t.as_secs_f64()),
        retries: args.retries,
        record_to: args.record_to.as_deref().map(absolute),
        replay_from: args.replay_from.as_deref().map(absolute),
        filter: args.filter.clone(),
        shard: args.shard,
        max_turns: args.max_turns,
        prices: args.prices.as_deref().map(absolute),
        allow_host_tools: args.allow_host_tools,
        allow_unsandboxed: args.allow_unsandboxed,
        min_score: args.min_score,
        servers: args.servers.clone(),
        api_key_file: args.api_key_file.as_deref().map(absolute),
    })
}

/// Loads and checks everything `config` names. A new run (`fresh`) finds its
/// workloads and records their paths and fingerprints, and the dataset's; a
/// resumed one refuses a dataset or workload that changed since.
pub fn prepare(config: &mut RunConfig, out: &Path, fresh: bool) -> Result<Prepared, Vec<String>> {
    let mut problems = Vec::new();
    let cases = match sr_eval::dataset::load(&shown(&config.dataset)) {
        Ok(dataset) => {
            if fresh {
                config.dataset_sha256 = dataset.sha256;
            } else if dataset.sha256 != config.dataset_sha256 {
                problems.push(changed(&config.dataset));
            }
            dataset.cases
        }
        Err(errors) => {
            problems.extend(errors.iter().map(|e| format!("error: {e}")));
            Vec::new()
        }
    };
    let filter = match config.filter.as_deref().map(regex::Regex::new).transpose() {
        Ok(filter) => filter,
        Err(e) => {
            problems.push(format!("error: --filter: {e}"));
            None
        }
    };
    let cases = harness::select(cases, filter.as_ref(), config.shard);
    for model in &config.models {
        if let Err(e) = crate::load::check_model("--model", model) {
            problems.push(format!("error: {e}"));
        }
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    let mut workloads: Vec<(String, Arc<Compiled>)> = Vec::new();
    for workload in &mut config.workloads {
        let path =
            if fresh { discover(&workload.name, &cwd).map_err(|e| e.to_string()) } else { Ok(workload.path.clone()) };
        let compiled = path.and_then(|path| {
            load(&mut RootDatabase::default(), &path).map(|program| (path.clone(), program)).map_err(|e| {
                let mut lines = crate::load::errors(&e);
                lines.push(format!("error: {} has errors; run `sr check {}`", path.display(), path.display()));
                lines.join("\n")
            })
        });
        match compiled {
            Ok((path, program)) => {
                let sha256 = sources_fingerprint(&program);
                if fresh {
                    workload.path = std::path::absolute(&path).unwrap_or(path);
                    workload.sha256 = sha256;
                } else if sha256 != workload.sha256 {
                    problems.push(changed(&workload.path));
                }
                workloads.push((workload.name.clone(), program));
            }
            Err(e) if e.starts_with("error: ") || e.contains("\nerror: ") => problems.push(e),
            Err(e) => problems.push(format!("error: {e}")),
        }
    }
    let prices = match config.prices.as_deref().map(crate::load::prices).transpose() {
        Ok(prices) => prices,
        Err(e) => {
            problems.push(format!("error: {e}"));
            None
        }
    };
    let remote = !config.servers.is_empty();
    let models = match (&config.record_to, &config.replay_from) {
        _ if remote => match servers(config, &cases) {
            Ok(servers) => Models::Server(servers),
            Err(errors) => {
                problems.extend(errors.iter().map(|e| format!("error: {e}")));
                Models::Live
            }
        },
        (Some(dir), _) => Models::Record(dir.clone()),
        (_, Some(dir)) if !dir.is_dir() => {
            problems.push(format!("error: no recordings at {}", shown(dir).display()));
            Models::Live
        }
        (_, Some(dir)) => Models::Replay(dir.clone()),
        (None, None) => Models::Live,
    };
    // A replay calls no provider, even one whose recordings are missing.
    let live = config.replay_from.is_none();
    problems.extend(sr_eval::validate::entries(&workloads, &config.entries).into_iter().map(|e| format!("error: {e}")));
    // A server's runs call the server's providers: only the judges' models are called here.
    let (called, overrides) = if remote { (&[][..], &[][..]) } else { (&workloads[..], &config.models[..]) };
    problems
        .extend(sr_eval::validate::models(called, overrides, &cases, live).into_iter().map(|e| format!("error: {e}")));
    if !problems.is_empty() {
        return Err(problems);
    }
    let variants = harness::variants(&workloads, &config.entries, &config.models);
    let jobs = config.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let options = Options {
        jobs,
        timeout: config.timeout_secs.map(std::time::Duration::from_secs_f64),
        retries: config.retries,
        out: out.to_path_buf(),
        models,
        run: RunOptions {
            max_turns: config.max_turns,
            prices,
            allow_host_tools: config.allow_host_tools,
            allow_unsandboxed: config.allow_unsandboxed,
            ..RunOptions::default()
        },
        reduce: Reduce::Mean,
    };
    Ok(Prepared { cases, variants, options })
}

/// Clients for `--server`, and what the cases ask that a server cannot do.
fn servers(config: &RunConfig, cases: &[Case]) -> Result<Arc<Servers>, Vec<String>> {
    let mut problems = remote::unsupported(cases);
    let key = match config.api_key_file.as_deref().map(remote::read_key).transpose() {
        Ok(key) => key,
        Err(e) => {
            problems.push(e.to_string());
            None
        }
    };
    match Servers::new(&config.servers, key.as_deref()) {
        Ok(servers) if problems.is_empty() => Ok(Arc::new(servers)),
        Ok(_) => Err(problems),
        Err(e) => {
            problems.push(e.to_string());
            Err(problems)
        }
    }
}

/// With `--server`: every server answers with the key and serves every
/// variant's workload and entry; every problem, before a case is submitted.
pub async fn check_servers(options: &Options, variants: &[Variant]) -> Result<(), Vec<String>> {
    let Models::Server(servers) = &options.models else { return Ok(()) };
    let mut wanted: Vec<(String, Option<String>)> =
        variants.iter().map(|v| (v.workload.clone(), v.entry.clone())).collect();
    wanted.dedup();
    let problems = servers.check(&wanted).await;
    if problems.is_empty() { Ok(()) } else { Err(problems.into_iter().map(|e| format!("error: {e}")).collect()) }
}

/// `path` relative to the current directory when it is beneath it, so that
/// messages name the dataset as the user wrote it.
fn shown(path: &Path) -> PathBuf {
    let cwd = std::env::current_dir().unwrap_or_default();
    path.strip_prefix(&cwd).map_or_else(|_| path.to_path_buf(), Path::to_path_buf)
}

fn changed(path: &Path) -> String {
    format!(
        "error: {} changed since the run being resumed (its SHA-256 differs): finishing it would mix two \
         versions; start a new run",
        path.display()
    )
}

/// The fingerprint of a program's source files, its imports included.
fn sources_fingerprint(program: &Compiled) -> String {
    let texts: Vec<Vec<u8>> = program
        .sources
        .iter()
        .flat_map(|s| [s.path.display().to_string().into_bytes(), std::fs::read(&s.path).unwrap_or_default()])
        .collect();
    fingerprint(texts.iter().map(Vec::as_slice))
}
