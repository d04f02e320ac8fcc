//! `results.json`: every case run, whether the run is complete (what was
//! planned, what finished, what is missing), how it was asked for, and a
//! summary per variant computed from the runs ([`summary`]).

pub(crate) mod summary;

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use summary::{Estimate, Findings, Prf, ScorerRate, Summary};

use crate::config::{Reduce, RunConfig};
pub use crate::names::VariantKey;
use crate::scorer::Score;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Results {
    /// How the run was asked for (for `--resume`); merged results have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<RunConfig>,
    /// How each case's runs reduce to its pass value and score.
    #[serde(default)]
    pub reduce: Reduce,
    /// Every planned case run finished (failed ones included).
    pub complete: bool,
    /// Case runs planned (case × variant × epoch), finished, and the ones
    /// missing: never run, or cut off by an interruption.
    pub planned: usize,
    pub finished: usize,
    #[serde(default)]
    pub missing: Vec<RunKey>,
    pub cases: Vec<CaseResult>,
    /// Recomputed from `cases` whenever results are read.
    #[serde(skip_deserializing)]
    pub summary: Vec<Summary>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseResult {
    pub id: String,
    pub workload: String,
    pub entry: Option<String>,
    pub model: Option<String>,
    /// 1-based: which of the case's runs with `--epochs` this is.
    #[serde(default = "first_epoch")]
    pub epoch: u32,
    pub passed: bool,
    pub score: f64,
    pub scores: Vec<Score>,
    pub output: Value,
    pub error: Option<String>,
    pub tokens: Tokens,
    pub cost_usd: Option<f64>,
    pub latency_ms: u64,
    pub model_calls: u64,
    /// The run's events (JSON lines), relative to the output directory.
    #[serde(default)]
    pub events: Option<String>,
    /// The id of the run on the server that ran the case (`sr eval --server`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
}

fn first_epoch() -> u32 {
    1
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
}

/// What identifies one case run: the case, its variant and its epoch.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RunKey {
    pub id: String,
    pub workload: String,
    pub entry: Option<String>,
    pub model: Option<String>,
    pub epoch: u32,
}

impl RunKey {
    pub fn variant(&self) -> VariantKey {
        (self.workload.clone(), self.entry.clone(), self.model.clone())
    }
}

impl CaseResult {
    pub fn variant(&self) -> VariantKey {
        (self.workload.clone(), self.entry.clone(), self.model.clone())
    }

    pub fn key(&self) -> RunKey {
        RunKey {
            id: self.id.clone(),
            workload: self.workload.clone(),
            entry: self.entry.clone(),
            model: self.model.clone(),
            epoch: self.epoch,
        }
    }
}

impl Results {
    /// Complete results of `cases` (nothing else was planned), reduced by mean.
    pub fn of(cases: Vec<CaseResult>) -> Results {
        Results::assemble(&[], cases, Reduce::Mean, None)
    }

    /// The results of a run that planned `plan`: `cases` in the plan's order
    /// (any the plan lacks after them), and what the plan has that no case
    /// ran as missing.
    pub fn assemble(plan: &[RunKey], mut cases: Vec<CaseResult>, reduce: Reduce, run: Option<RunConfig>) -> Results {
        let order: HashMap<&RunKey, usize> = plan.iter().enumerate().map(|(i, k)| (k, i)).collect();
        cases.sort_by_key(|c| order.get(&c.key()).copied().unwrap_or(usize::MAX));
        let ran: HashSet<RunKey> = cases.iter().map(CaseResult::key).collect();
        let missing: Vec<RunKey> = plan.iter().filter(|k| !ran.contains(*k)).cloned().collect();
        Results::with_missing(cases, missing, reduce, run)
    }

    /// Results of `cases` with `missing` still to run; counts and summary computed.
    pub fn with_missing(
        cases: Vec<CaseResult>,
        missing: Vec<RunKey>,
        reduce: Reduce,
        run: Option<RunConfig>,
    ) -> Results {
        let summary = summary::summarise(&cases, reduce);
        Results {
            run,
            reduce,
            complete: missing.is_empty(),
            planned: cases.len() + missing.len(),
            finished: cases.len(),
            missing,
            cases,
            summary,
        }
    }

    /// Results as `results.json` holds them; the counts and the summary are
    /// computed again from the cases and the missing runs.
    pub fn read(text: &str) -> Result<Results, serde_json::Error> {
        let read: Results = serde_json::from_str(text)?;
        Ok(Results::with_missing(read.cases, read.missing, read.reduce, read.run))
    }

    /// Mean score over every case run; 0 when there are none.
    pub fn mean_score(&self) -> f64 {
        crate::stats::mean(self.cases.iter().map(|c| c.score)).unwrap_or(0.0)
    }

    /// `partial: 2 of 6 cases` when runs are missing, else `None`.
    pub fn partial(&self) -> Option<String> {
        if self.complete {
            return None;
        }
        let epochs = self.cases.iter().map(|c| c.epoch).chain(self.missing.iter().map(|k| k.epoch)).max();
        let what = if epochs.unwrap_or(1) > 1 { "case runs" } else { "cases" };
        Some(format!("partial: {} of {} {what}", self.finished, self.planned))
    }

    /// Per variant with missing runs, in plan order: its name, how many of
    /// its case runs are missing, and whether none of its runs finished
    /// (it never started).
    pub fn not_run(&self) -> Vec<(String, usize, bool)> {
        let mut listed: Vec<(VariantKey, usize)> = Vec::new();
        for key in &self.missing {
            let variant = key.variant();
            match listed.iter_mut().find(|(v, _)| *v == variant) {
                Some((_, count)) => *count += 1,
                None => listed.push((variant, 1)),
            }
        }
        listed
            .into_iter()
            .map(|(variant, count)| {
                let started = self.cases.iter().any(|c| c.variant() == variant);
                (crate::names::variant_name(&variant), count, !started)
            })
            .collect()
    }
}

#[cfg(test)]
pub(crate) mod tests;
