//! Runs every variant on every case, `jobs` at a time, each case with its
//! own timeout and retries, and scores the runs. A case that fails, errors
//! or times out is a failed case with its reason; the run goes on.

use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use regex::Regex;
use serde_json::Value;
use sr_llm::{HttpClient, HttpOptions, Provider, Router};
use sr_runtime::RunOptions;
use sr_runtime::compile::Compiled;
use sr_runtime::event::{Event, Payload, Usage};
use sr_runtime::ids::safe_name;
use sr_runtime::journal::{Journal, JournaledProvider, Mode, Recorded};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::case::{CaseRun, CaseSpec, Models, Sessions, read_text, run_case};
use crate::dataset::Case;
use crate::meter::Meter;
use crate::results::{CaseResult, Results, Tokens};
use crate::scorer::{JudgeModel, Observed, Score, Scorer};

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
    /// `<id>/<workload>/<model>.jsonl`.
    pub models: Models,
    /// Options every run gets (turns, prices, host tools); each variant sets
    /// its own `override_model` and `entry`.
    pub run: RunOptions,
}

/// A case finished.
pub struct Progress<'a> {
    pub done: usize,
    pub total: usize,
    pub passed: usize,
    pub case: &'a CaseResult,
}

pub struct Ran {
    /// In variant order, then dataset order.
    pub results: Results,
    /// `stop` ended the run before every case ran.
    pub interrupted: bool,
}

/// Runs every variant on every case. When `stop` completes, cases still
/// running are abandoned and the results so far are returned.
pub async fn run(
    variants: Vec<Variant>,
    cases: Vec<Case>,
    options: Options,
    progress: &(dyn Fn(&Progress) + Sync),
    stop: impl Future<Output = ()>,
) -> Ran {
    let (variants, cases, options) = (Arc::new(variants), Arc::new(cases), Arc::new(options));
    let sessions = Sessions::new().map(Arc::new);
    let permits = Arc::new(Semaphore::new(options.jobs.max(1)));
    let total = variants.len() * cases.len();
    let mut tasks = JoinSet::new();
    for v in 0..variants.len() {
        for c in 0..cases.len() {
            let (variants, cases, options, permits, sessions) =
                (variants.clone(), cases.clone(), options.clone(), permits.clone(), sessions.clone());
            tasks.spawn(async move {
                let _permit = permits.acquire_owned().await;
                ((v, c), run_one(&variants[v], &cases[c], &options, &sessions).await)
            });
        }
    }
    let mut done: Vec<((usize, usize), CaseResult)> = Vec::with_capacity(total);
    let mut passed = 0;
    tokio::pin!(stop);
    let interrupted = loop {
        tokio::select! {
            next = tasks.join_next() => match next {
                None => break false,
                Some(Ok((at, result))) => {
                    passed += usize::from(result.passed);
                    progress(&Progress { done: done.len() + 1, total, passed, case: &result });
                    done.push((at, result));
                }
                // A panic in a case's task: its case is lost, the run goes on.
                Some(Err(_)) => {}
            },
            () = &mut stop => {
                tasks.abort_all();
                break true;
            }
        }
    };
    done.sort_by_key(|(at, _)| *at);
    Ran { results: Results::of(done.into_iter().map(|(_, r)| r).collect()), interrupted }
}

/// One case of one variant, with its retries.
async fn run_one(
    variant: &Variant,
    case: &Case,
    options: &Options,
    sessions: &Result<Arc<Sessions>, String>,
) -> CaseResult {
    let model = model_label(variant.model.as_deref());
    let events = format!("cases/{}/{}/{model}/events.jsonl", case.id, variant.label);
    let events_file = options.out.join(&events);
    let cassette = Path::new(&case.id).join(&variant.label).join(format!("{model}.jsonl"));
    let models = options.models.clone();
    let mut attempt = 0;
    loop {
        let spec = CaseSpec {
            program: variant.program.clone(),
            prompt: case.prompt.clone(),
            files: case.files.clone(),
            options: RunOptions {
                override_model: variant.model.clone(),
                entry: variant.entry.clone(),
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
            let meter =
                judge_model(case, &models, &cassette).map(|p| Arc::new(Meter::new(p, options.run.prices.clone())));
            let judge = meter.clone().map(|m| m as Arc<dyn Provider>);
            let mut result = score(variant, case, run, latency_ms, &judge, options.timeout).await;
            if let Ok(meter) = meter {
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
        return Err("the case has no judge".to_string());
    }
    let router = || -> Result<Arc<dyn Provider>, String> {
        let http = HttpClient::new(HttpOptions::default()).map_err(|e| e.to_string())?;
        Ok(Arc::new(Router::from_env(http)))
    };
    let beside = cassette.with_extension("judge.jsonl");
    match models {
        Models::Live => router(),
        Models::Provider(provider) => Ok(provider.clone()),
        Models::Record(dir) => {
            let journal = Journal::recording_exchanges(&dir.join(beside))?;
            Ok(Arc::new(JournaledProvider::new(Arc::new(journal), "judge", router()?)))
        }
        Models::Replay(dir) => {
            let shown = dir.join(&beside);
            let text =
                read_text(dir, &beside)?.ok_or_else(|| format!("cannot read {}: no such file", shown.display()))?;
            let recorded = Recorded::parse(&text).map_err(|e| format!("{}: {e}", shown.display()))?;
            // A replay never asks the router: what is not recorded is an error.
            let journal = Journal::new(Mode::Replay, recorded, None, None);
            Ok(Arc::new(JournaledProvider::new(Arc::new(journal), "judge", router()?)))
        }
    }
}

/// A case's result from its run (`None`: it timed out). Each scorer gets
/// `timeout` too (a judge's model may not answer).
async fn score(
    variant: &Variant,
    case: &Case,
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
    };
    let Some(run) = run else { return result };
    result.output = run.result.clone().unwrap_or(Value::Null);
    result.error = run.error.clone();
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
                Some(limit) => tokio::time::timeout(limit, scorer.score(&seen)).await.unwrap_or_else(|_| Score {
                    kind: scorer.kind().to_string(),
                    passed: false,
                    score: 0.0,
                    detail: "timeout".to_string(),
                }),
                None => scorer.score(&seen).await,
            };
            result.scores.push(score);
        }
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
