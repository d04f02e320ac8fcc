//! Runs every variant on every case (`epochs` times each), `jobs` at a time,
//! each case run with its own timeout and retries, and scores the runs. A
//! case that fails, errors, times out or panics is a failed case with its
//! reason; the run goes on. A run cut off by a stop is missing, not failed.

use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use regex::Regex;
use serde_json::Value;
use sr_llm::{HttpClient, Provider, Router};
use sr_runtime::RunOptions;
use sr_runtime::compile::Compiled;
use sr_runtime::event::{Event, Payload, Usage};
use sr_runtime::ids::safe_name;
use sr_runtime::journal::{Journal, JournaledProvider, Mode, Recorded};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::case::{CaseError, CaseRun, CaseSpec, Models, Sessions, read_text, run_case};
use crate::config::Reduce;
use crate::dataset::Case;
use crate::meter::Meter;
use crate::results::{CaseResult, Results, RunKey, Tokens};
use crate::scorer::{JudgeModel, NoJudge, Observed, Score, Scorer};

/// One workload (at one entry) with one model.
pub struct Variant {
    /// The workload as the user named it.
    pub workload: String,
    /// The directory name of the variant's runs (unique among variants of one workload path).
    pub label: String,
    pub program: Arc<Compiled>,
    pub entry: Option<String>,
    pub model: Option<String>,
}

/// Every combination of workload, entry (none: the workload's entry point)
/// and model (none: the workload's own).
pub fn variants(workloads: &[(String, Arc<Compiled>)], entries: &[String], models: &[String]) -> Vec<Variant> {
    let entries: Vec<Option<&String>> =
        if entries.is_empty() { vec![None] } else { entries.iter().map(Some).collect() };
    let models: Vec<Option<&String>> = if models.is_empty() { vec![None] } else { models.iter().map(Some).collect() };
    let mut used: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    for (workload, program) in workloads {
        let stem = Path::new(workload).file_stem().map_or("workload".into(), |s| safe_name(&s.to_string_lossy()));
        let n = used.entry(stem.clone()).or_default();
        *n += 1;
        let stem = if *n == 1 { stem } else { format!("{stem}-{n}") };
        for entry in &entries {
            for model in &models {
                out.push(Variant {
                    workload: workload.clone(),
                    label: entry.map_or(stem.clone(), |e| format!("{stem}@{}", safe_name(e))),
                    program: program.clone(),
                    entry: entry.cloned(),
                    model: model.cloned(),
                });
            }
        }
    }
    out
}

fn model_label(model: Option<&str>) -> String {
    model.map_or("default".to_string(), safe_name)
}

/// Which cases run: ids matching `filter`, then shard `index` (1-based) of
/// `count`, cases dealt round-robin in dataset order.
pub fn select(cases: Vec<Case>, filter: Option<&Regex>, shard: Option<(usize, usize)>) -> Vec<Case> {
    cases
        .into_iter()
        .filter(|c| filter.is_none_or(|f| f.is_match(&c.id)))
        .enumerate()
        .filter(|(i, _)| shard.is_none_or(|(index, count)| i % count == index - 1))
        .map(|(_, c)| c)
        .collect()
}

pub struct Options {
    /// Cases run at once (at least 1).
    pub jobs: usize,
    /// Each attempt of a case fails with "timeout" after this long.
    pub timeout: Option<Duration>,
    /// Attempts after the first for a case whose run errors or times out.
    pub retries: u32,
    /// Where `cases/<id>/<workload>/<model>/events.jsonl` go.
    pub out: PathBuf,
    /// `Record` and `Replay` name a directory with one cassette per case run:
    /// `<id>/<workload>/<model>.jsonl` (`<model>.<epoch>.jsonl` from epoch 2).
    pub models: Models,
    /// Options every run gets (turns, prices, host tools); each variant sets
    /// its own `override_model` and `entry`.
    pub run: RunOptions,
    /// How the results reduce a case's epochs.
    pub reduce: Reduce,
}

/// One planned case run: indices into the variants and the cases, and the
/// epoch (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Planned {
    pub variant: usize,
    pub case: usize,
    pub epoch: u32,
}

/// Every case of every variant, `epochs` times: in variant order, then
/// dataset order, then epoch order.
pub fn plan(variants: &[Variant], cases: &[Case], epochs: u32) -> Vec<Planned> {
    let mut plan = Vec::with_capacity(variants.len() * cases.len() * epochs as usize);
    for variant in 0..variants.len() {
        for case in 0..cases.len() {
            plan.extend((1..=epochs.max(1)).map(|epoch| Planned { variant, case, epoch }));
        }
    }
    plan
}

/// What identifies a planned run in results.
pub fn key(variants: &[Variant], cases: &[Case], planned: Planned) -> RunKey {
    let variant = &variants[planned.variant];
    RunKey {
        id: cases[planned.case].id.clone(),
        workload: variant.workload.clone(),
        entry: variant.entry.clone(),
        model: variant.model.clone(),
        epoch: planned.epoch,
    }
}

/// A case finished.
pub struct Progress<'a> {
    pub done: usize,
    pub total: usize,
    pub passed: usize,
    pub case: &'a CaseResult,
}

pub struct Ran {
    /// The planned runs that finished, in plan order; the others missing.
    pub results: Results,
    /// `stop` ended the run before every case ran.
    pub interrupted: bool,
}

/// Runs the `planned` case runs. When `stop` completes, runs still going are
/// abandoned (they are missing from the results, not failed) and the results
/// so far are returned.
pub async fn run(
    variants: Vec<Variant>,
    cases: Vec<Case>,
    planned: Vec<Planned>,
    options: Options,
    progress: &(dyn Fn(&Progress) + Sync),
    stop: impl Future<Output = ()>,
) -> Ran {
    let keys: Vec<RunKey> = planned.iter().map(|p| key(&variants, &cases, *p)).collect();
    let reduce = options.reduce;
    let (variants, cases, options) = (Arc::new(variants), Arc::new(cases), Arc::new(options));
    let sessions = Sessions::new().map(Arc::new).map_err(Arc::new);
    let permits = Arc::new(Semaphore::new(options.jobs.max(1)));
    let total = planned.len();
    let mut tasks = JoinSet::new();
    let mut spawned = HashMap::new();
    for (at, p) in planned.iter().copied().enumerate() {
        let (variants, cases, options, permits, sessions) =
            (variants.clone(), cases.clone(), options.clone(), permits.clone(), sessions.clone());
        let task = tasks.spawn(async move {
            let _permit = permits.acquire_owned().await;
            run_one(&variants[p.variant], &cases[p.case], p.epoch, &options, &sessions).await
        });
        spawned.insert(task.id(), at);
    }
    let mut done: Vec<CaseResult> = Vec::with_capacity(total);
    let mut passed = 0;
    tokio::pin!(stop);
    let interrupted = loop {
        let result = tokio::select! {
            next = tasks.join_next_with_id() => match next {
                None => break false,
                Some(Ok((_, result))) => result,
                // A panic in a case's run: the case failed, and the run goes on.
                Some(Err(e)) if e.is_panic() => match spawned.get(&e.id()) {
                    Some(&at) => panicked(&keys[at], &cases[planned[at].case]),
                    None => continue,
                },
                Some(Err(_)) => continue,
            },
            () = &mut stop => {
                tasks.abort_all();
                // Aborted runs are dropped (a server's run has its cancel sent,
                // `remote`) before the results are returned; a task that does
                // not yield in time is left behind.
                let _ = tokio::time::timeout(Duration::from_secs(5), async {
                    while tasks.join_next().await.is_some() {}
                })
                .await;
                break true;
            }
        };
        passed += usize::from(result.passed);
        progress(&Progress { done: done.len() + 1, total, passed, case: &result });
        done.push(result);
    };
    Ran { results: Results::assemble(&keys, done, reduce, None), interrupted }
}

/// The result of a run whose task panicked.
fn panicked(key: &RunKey, case: &Case) -> CaseResult {
    let reason = "the case's run panicked (a bug in sr; please report it)";
    CaseResult {
        id: key.id.clone(),
        workload: key.workload.clone(),
        entry: key.entry.clone(),
        model: key.model.clone(),
        epoch: key.epoch,
        passed: false,
        score: 0.0,
        scores: case.expect.iter().map(|s| s.unscored(reason)).collect(),
        output: Value::Null,
        error: Some(reason.to_string()),
        tokens: Tokens::default(),
        cost_usd: None,
        latency_ms: 0,
        model_calls: 0,
        events: None,
        run: None,
    }
}

/// `name` for epoch 1, `name.<epoch>` after: cassettes and events files of
/// a run with one epoch keep the names they had before epochs.
fn with_epoch(name: &str, epoch: u32) -> String {
    if epoch <= 1 { name.to_string() } else { format!("{name}.{epoch}") }
}

/// The cassette of one case run, relative to the record or replay directory.
fn cassette(variant: &Variant, case: &Case, epoch: u32) -> PathBuf {
    let model = model_label(variant.model.as_deref());
    Path::new(&case.id).join(&variant.label).join(format!("{}.jsonl", with_epoch(&model, epoch)))
}

/// The epochs from 2 to `epochs` of which the replay directory `dir` holds
/// no cassette for any case run: a replay serves each epoch its own
/// recording, so every run of these epochs would fail for want of one.
pub fn unrecorded_epochs(dir: &Path, variants: &[Variant], cases: &[Case], epochs: u32) -> Vec<u32> {
    (2..=epochs)
        .filter(|&epoch| !variants.iter().any(|v| cases.iter().any(|c| dir.join(cassette(v, c, epoch)).is_file())))
        .collect()
}

/// The variants whose every model call is declared at temperature 0: no
/// `--model` override, and each model of the workload says `temperature:
/// 0.0`. Their epochs ask the same thing the same way, so they can only
/// differ as far as the provider is not deterministic.
pub fn temperature_zero(variants: &[Variant]) -> Vec<&Variant> {
    variants
        .iter()
        .filter(|v| {
            let models = &v.program.models;
            v.model.is_none() && !models.is_empty() && models.values().all(|m| m.temperature == Some(0.0))
        })
        .collect()
}

/// One case of one variant, with its retries.
async fn run_one(
    variant: &Variant,
    case: &Case,
    epoch: u32,
    options: &Options,
    sessions: &Result<Arc<Sessions>, Arc<CaseError>>,
) -> CaseResult {
    let model = model_label(variant.model.as_deref());
    let events = format!("cases/{}/{}/{model}/{}.jsonl", case.id, variant.label, with_epoch("events", epoch));
    let events_file = options.out.join(&events);
    let cassette = cassette(variant, case, epoch);
    let models = options.models.clone();
    let mut attempt = 0;
    loop {
        let spec = CaseSpec {
            workload: variant.workload.clone(),
            program: variant.program.clone(),
            prompt: case.prompt.clone(),
            files: case.files.clone(),
            options: RunOptions {
                override_model: variant.model.clone(),
                entry: variant.entry.clone(),
                vars: case.vars.clone(),
                ..options.run.clone()
            },
            models: models.clone(),
            cassette: cassette.clone(),
            events_file: events_file.clone(),
            sessions: sessions.clone(),
        };
        let started = Instant::now();
        let run = match options.timeout {
            Some(limit) => tokio::time::timeout(limit, run_case(spec)).await.ok(),
            None => Some(run_case(spec).await),
        };
        let latency_ms = started.elapsed().as_millis() as u64;
        let failed = run.as_ref().is_none_or(|r| r.error.is_some());
        if !failed || attempt >= options.retries {
            let (judge, meter) = match judge_model(case, &models, &cassette) {
                Ok(provider) => {
                    let meter = Arc::new(Meter::new(provider, options.run.prices.clone()));
                    (Ok(meter.clone() as Arc<dyn Provider>), Some(meter))
                }
                Err(e) => (Err(e), None),
            };
            let mut result = score(variant, case, epoch, run, latency_ms, &judge, options.timeout).await;
            if let Some(meter) = meter {
                add_usage(&mut result, &meter.spent());
            }
            result.events = Some(events);
            return result;
        }
        attempt += 1;
    }
}

/// Where a case's `judge` and `flow` scorers send their model calls: the
/// case's provider (recorded to, or replayed from, `<model>.judge.jsonl`
/// beside its cassette, read through a jail on the replay directory). Their
/// tokens and cost are added to the case's.
fn judge_model(case: &Case, models: &Models, cassette: &Path) -> JudgeModel {
    if !case.expect.iter().any(|s| matches!(s, Scorer::Judge(_) | Scorer::Flow(_))) {
        return Err(NoJudge::NotAsked);
    }
    let router = || -> Arc<dyn Provider> { Arc::new(Router::from_env(HttpClient::shared())) };
    let beside = cassette.with_extension("judge.jsonl");
    match models {
        // A server's case runs are judged here, by the providers of this machine.
        Models::Live | Models::Server(_) => Ok(router()),
        Models::Provider(provider) => Ok(provider.clone()),
        Models::Record(dir) => {
            let journal = Journal::recording_exchanges(&dir.join(beside)).map_err(NoJudge::Record)?;
            Ok(Arc::new(JournaledProvider::new(Arc::new(journal), "judge", router())))
        }
        Models::Replay(dir) => {
            let shown = dir.join(&beside);
            let text = read_text(dir, &beside)?.ok_or_else(|| CaseError::NoSuchFile { path: shown.clone() })?;
            let recorded = Recorded::parse(&text).map_err(|cause| NoJudge::BadRecording { path: shown, cause })?;
            // A replay never asks the router: what is not recorded is an error.
            let journal = Journal::new(Mode::Replay, recorded, None, None);
            Ok(Arc::new(JournaledProvider::new(Arc::new(journal), "judge", router())))
        }
    }
}

/// A case's result from its run (`None`: it timed out). Each scorer gets
/// `timeout` too (a judge's model may not answer).
async fn score(
    variant: &Variant,
    case: &Case,
    epoch: u32,
    run: Option<CaseRun>,
    latency_ms: u64,
    judge: &JudgeModel,
    timeout: Option<Duration>,
) -> CaseResult {
    let mut result = CaseResult {
        id: case.id.clone(),
        workload: variant.workload.clone(),
        entry: variant.entry.clone(),
        model: variant.model.clone(),
        epoch,
        passed: false,
        score: 0.0,
        scores: Vec::new(),
        output: Value::Null,
        error: Some("timeout".to_string()),
        tokens: Tokens::default(),
        cost_usd: None,
        latency_ms,
        model_calls: 0,
        events: None,
        run: None,
    };
    let Some(run) = run else {
        result.scores = case.expect.iter().map(|s| s.unscored("timeout")).collect();
        return result;
    };
    result.output = run.result.clone().unwrap_or(Value::Null);
    result.error = run.error.clone();
    result.run = run.run.clone();
    tally_usage(&run.events, &mut result);
    if let Some(work_dir) = run.work_dir() {
        let seen = Observed {
            output: run.result.as_ref(),
            work_dir: &work_dir,
            events: &run.events,
            prompt: &case.prompt,
            judge,
        };
        for scorer in &case.expect {
            let score = match timeout {
                Some(limit) => tokio::time::timeout(limit, scorer.score(&seen))
                    .await
                    .unwrap_or_else(|_| Score::new(scorer.kind(), false, "timeout".to_string())),
                None => scorer.score(&seen).await,
            };
            result.scores.push(score);
        }
    } else {
        let reason = run.error.as_deref().unwrap_or("no work directory");
        result.scores = case.expect.iter().map(|s| s.unscored(reason)).collect();
    }
    if result.error.is_none() {
        result.passed = result.scores.iter().all(|s| s.passed);
        let n = result.scores.len();
        result.score = if n == 0 { 1.0 } else { result.scores.iter().map(|s| s.score).sum::<f64>() / n as f64 };
    }
    result
}

/// The run's model calls, and its tokens and cost.
fn tally_usage(events: &[Event], result: &mut CaseResult) {
    for event in events {
        match &event.payload {
            Payload::ModelResponse { .. } => result.model_calls += 1,
            Payload::RunFinished { usage, .. } => add_usage(result, usage),
            _ => {}
        }
    }
}

fn add_usage(result: &mut CaseResult, usage: &Usage) {
    result.tokens.input += usage.input_tokens;
    result.tokens.output += usage.output_tokens;
    if let Some(cost) = usage.cost_usd {
        *result.cost_usd.get_or_insert(0.0) += cost;
    }
}

#[cfg(test)]
mod tests;
