//! The summary of a variant: pass rate and mean score with 95% intervals,
//! the pass rate of each scorer, precision, recall and F1 of its `findings`
//! scorers (micro: over all findings; macro: the mean over cases), tokens,
//! cost and latency. A case counts once whatever its epochs: its runs reduce
//! to one pass value and one score ([`Reduce`]), and the intervals resample
//! cases, each with all of its runs.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::{CaseResult, Tokens, VariantKey};
use crate::config::Reduce;
use crate::scorer::Tally;
use crate::stats::{self, Interval, SEED, SUMMARY_RESAMPLES};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub workload: String,
    pub entry: Option<String>,
    pub model: Option<String>,
    /// Distinct cases.
    pub cases: usize,
    /// Runs that passed, of all runs (cases × epochs).
    pub passed: usize,
    pub total: usize,
    /// The mean of the cases' pass values, with its Wilson score interval
    /// over the cases (conservative when a case's pass value is a share of
    /// its epochs: a value in 0..1 with mean p varies at most as a pass/fail does).
    pub pass_rate: f64,
    pub pass_rate_ci: Interval,
    /// The mean of the cases' scores, with its bootstrap interval over the cases.
    pub mean_score: f64,
    pub mean_score_ci: Option<Interval>,
    /// Runs each kind of scorer passed in, of the runs it scored.
    pub scorers: Vec<ScorerRate>,
    /// Present when the variant's cases have `findings` scorers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub findings: Option<Findings>,
    pub tokens: Tokens,
    /// `None` when no case of the variant had a price.
    pub cost_usd: Option<f64>,
    pub p50_latency_ms: u64,
    pub p95_latency_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScorerRate {
    pub kind: String,
    pub passed: usize,
    pub total: usize,
    pub pass_rate: f64,
}

/// Precision, recall and F1 of a variant's `findings` scorers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Findings {
    /// Every run's findings added up.
    pub tally: Tally,
    /// From the added-up findings.
    pub micro: Prf,
    /// The mean over cases of each case's figure (the mean over its runs),
    /// leaving out cases where it is undefined.
    #[serde(rename = "macro")]
    pub macro_: Prf,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prf {
    pub precision: Estimate,
    pub recall: Estimate,
    pub f1: Estimate,
}

/// A figure and its 95% bootstrap interval over the cases; `null` where undefined.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub value: Option<f64>,
    pub low: Option<f64>,
    pub high: Option<f64>,
}

impl Estimate {
    fn of(value: Option<f64>, interval: Option<Interval>) -> Estimate {
        let interval = value.and(interval);
        Estimate { value, low: interval.map(|i| i.low), high: interval.map(|i| i.high) }
    }
}

impl Summary {
    pub fn variant(&self) -> VariantKey {
        (self.workload.clone(), self.entry.clone(), self.model.clone())
    }
}

/// One case of a variant: its runs, reduced.
pub(crate) struct CaseRuns<'a> {
    pub id: &'a str,
    pub runs: Vec<&'a CaseResult>,
}

impl CaseRuns<'_> {
    /// The case's pass value in 0..1.
    pub fn pass(&self, reduce: Reduce) -> f64 {
        let (n, c) = (self.runs.len() as u32, self.runs.iter().filter(|r| r.passed).count() as u32);
        match reduce {
            Reduce::Mean => f64::from(c) / f64::from(n.max(1)),
            Reduce::Max => f64::from(u8::from(c > 0)),
            Reduce::PassAt(k) => stats::pass_at_k(n, c, k.min(n)),
        }
    }

    /// The case's score in 0..1.
    pub fn score(&self, reduce: Reduce) -> f64 {
        let scores = self.runs.iter().map(|r| r.score);
        match reduce {
            Reduce::Mean => stats::mean(scores).unwrap_or(0.0),
            Reduce::Max => scores.fold(0.0, f64::max),
            Reduce::PassAt(_) => self.pass(reduce),
        }
    }

    /// Every pass value is 0 or 1 (a pass/fail, not a share).
    pub fn binary(&self, reduce: Reduce) -> bool {
        let pass = self.pass(reduce);
        pass == 0.0 || pass == 1.0
    }

    /// The case's findings added up over its runs, if it has any.
    pub fn tally(&self) -> Option<Tally> {
        let mut total: Option<Tally> = None;
        for run in &self.runs {
            if let Some(t) = run_tally(run) {
                total.get_or_insert_with(Tally::default).add(&t);
            }
        }
        total
    }

    /// The mean over the case's runs of a per-run figure, where defined.
    fn macro_figure(&self, figure: fn(&Tally) -> Option<f64>) -> Option<f64> {
        stats::mean(self.runs.iter().filter_map(|r| run_tally(r)).filter_map(|t| figure(&t)))
    }
}

/// A run's findings: its `findings` scores added up.
fn run_tally(run: &CaseResult) -> Option<Tally> {
    let mut total: Option<Tally> = None;
    for t in run.scores.iter().filter_map(|s| s.findings) {
        total.get_or_insert_with(Tally::default).add(&t);
    }
    total
}

/// The runs of `cases` grouped by variant, then by case id, each in order of first appearance.
pub(crate) fn group(cases: &[CaseResult]) -> Vec<(VariantKey, Vec<CaseRuns<'_>>)> {
    let mut variants: Vec<(VariantKey, Vec<CaseRuns>)> = Vec::new();
    let mut at: HashMap<VariantKey, (usize, HashMap<&str, usize>)> = HashMap::new();
    for case in cases {
        let key = case.variant();
        let (v, ids) = at.entry(key.clone()).or_insert_with(|| {
            variants.push((key, Vec::new()));
            (variants.len() - 1, HashMap::new())
        });
        let runs = &mut variants[*v].1;
        let c = *ids.entry(case.id.as_str()).or_insert_with(|| {
            runs.push(CaseRuns { id: &case.id, runs: Vec::new() });
            runs.len() - 1
        });
        runs[c].runs.push(case);
    }
    variants
}

pub(super) fn summarise(cases: &[CaseResult], reduce: Reduce) -> Vec<Summary> {
    group(cases).into_iter().map(|(key, runs)| summarise_variant(key, &runs, reduce)).collect()
}

fn summarise_variant((workload, entry, model): VariantKey, cases: &[CaseRuns], reduce: Reduce) -> Summary {
    let runs: Vec<&CaseResult> = cases.iter().flat_map(|c| c.runs.iter().copied()).collect();
    let passes: Vec<f64> = cases.iter().map(|c| c.pass(reduce)).collect();
    let scores: Vec<f64> = cases.iter().map(|c| c.score(reduce)).collect();
    let pass_rate = stats::mean(passes.iter().copied()).unwrap_or(0.0);
    let mean_score = stats::mean(scores.iter().copied()).unwrap_or(0.0);
    let mut tokens = Tokens::default();
    let mut cost: Option<f64> = None;
    for run in &runs {
        tokens.input += run.tokens.input;
        tokens.output += run.tokens.output;
        if let Some(c) = run.cost_usd {
            *cost.get_or_insert(0.0) += c;
        }
    }
    let mut latencies: Vec<u64> = runs.iter().map(|c| c.latency_ms).collect();
    latencies.sort_unstable();
    Summary {
        workload,
        entry,
        model,
        cases: cases.len(),
        passed: runs.iter().filter(|c| c.passed).count(),
        total: runs.len(),
        pass_rate,
        pass_rate_ci: stats::wilson(pass_rate, cases.len()),
        mean_score,
        mean_score_ci: mean_interval(&scores),
        scorers: scorer_rates(&runs),
        findings: findings(cases),
        tokens,
        cost_usd: cost,
        p50_latency_ms: percentile(&latencies, 50),
        p95_latency_ms: percentile(&latencies, 95),
    }
}

/// The bootstrap interval of the mean of `values` (one per case).
pub(crate) fn mean_interval(values: &[f64]) -> Option<Interval> {
    stats::bootstrap(values.len(), SUMMARY_RESAMPLES, SEED, |drawn| stats::mean(drawn.iter().map(|&i| values[i])))
}

fn scorer_rates(runs: &[&CaseResult]) -> Vec<ScorerRate> {
    let mut rates: Vec<ScorerRate> = Vec::new();
    for score in runs.iter().flat_map(|r| &r.scores) {
        let at = match rates.iter().position(|r| r.kind == score.kind) {
            Some(at) => at,
            None => {
                rates.push(ScorerRate { kind: score.kind.clone(), passed: 0, total: 0, pass_rate: 0.0 });
                rates.len() - 1
            }
        };
        rates[at].total += 1;
        rates[at].passed += usize::from(score.passed);
    }
    for rate in &mut rates {
        rate.pass_rate = rate.passed as f64 / rate.total as f64;
    }
    rates
}

/// Micro and macro precision, recall and F1, each with its bootstrap
/// interval over the cases that have findings.
fn findings(cases: &[CaseRuns]) -> Option<Findings> {
    let with: Vec<&CaseRuns> = cases.iter().filter(|c| c.tally().is_some()).collect();
    if with.is_empty() {
        return None;
    }
    let tallies: Vec<Tally> = with.iter().filter_map(|c| c.tally()).collect();
    let mut total = Tally::default();
    tallies.iter().for_each(|t| total.add(t));
    let figures: [fn(&Tally) -> Option<f64>; 3] = [Tally::precision, Tally::recall, Tally::f1];
    let micro = figures.map(|figure| {
        let interval = stats::bootstrap(tallies.len(), SUMMARY_RESAMPLES, SEED, |drawn| {
            let mut sum = Tally::default();
            drawn.iter().for_each(|&i| sum.add(&tallies[i]));
            figure(&sum)
        });
        Estimate::of(figure(&total), interval)
    });
    let macro_ = figures.map(|figure| {
        let per_case: Vec<Option<f64>> = with.iter().map(|c| c.macro_figure(figure)).collect();
        let value = stats::mean(per_case.iter().flatten().copied());
        let interval = stats::bootstrap(per_case.len(), SUMMARY_RESAMPLES, SEED, |drawn| {
            stats::mean(drawn.iter().filter_map(|&i| per_case[i]))
        });
        Estimate::of(value, interval)
    });
    let [precision, recall, f1] = micro;
    let [m_precision, m_recall, m_f1] = macro_;
    Some(Findings {
        tally: total,
        micro: Prf { precision, recall, f1 },
        macro_: Prf { precision: m_precision, recall: m_recall, f1: m_f1 },
    })
}

/// The nearest-rank percentile of sorted values; 0 for none.
fn percentile(sorted: &[u64], p: usize) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (p * sorted.len()).div_ceil(100).max(1);
    sorted[rank - 1]
}
