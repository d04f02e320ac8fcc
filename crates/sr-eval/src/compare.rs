//! Comparing two result sets: the CI gate. Cases are paired by id within a
//! variant (or between two chosen variants); each difference (pass rate,
//! mean score, precision, recall and F1 where the cases have findings,
//! tokens and cost) is reported with a p-value of no difference and a 95%
//! interval made by the same method ([`stats::paired`]): McNemar's exact
//! test where every case is a pass or a fail, the paired permutation
//! (sign-flip) test for other means, the paired bootstrap for ratios. The
//! [`gate`]'s rules fail on significant changes only; runs of the base
//! missing from the new results fail it unless allowed. [`verdict`] says
//! the outcome in words.

pub mod gate;
mod text;
pub mod verdict;

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use crate::config::Reduce;
use crate::names::{select, short_name, variant_name};
use crate::results::summary::{CaseRuns, group};
use crate::results::{CaseResult, Results, RunKey, VariantKey};
use crate::scorer::Tally;
use crate::stats::paired::{self, SignFlip};
use crate::stats::{self, COMPARE_RESAMPLES, SEED};

pub use gate::{Judgement, Rule};
pub use text::judgement_line;

pub struct Options {
    /// The gate's rules; each fails on a change beyond its amount whose
    /// p-value is below `significance`.
    pub rules: Vec<Rule>,
    /// The significance level of every rule (0.05 by default in `sr eval`).
    pub significance: f64,
    /// Runs and variants of the base missing from the new results do not fail the gate.
    pub allow_missing: bool,
    /// Compare this variant of the base with this variant of the new results
    /// (any name [`select`] takes), instead of each variant with itself.
    pub variants: Option<(String, String)>,
}

/// What changed from the base to the new results.
#[derive(Debug, Serialize)]
pub struct Comparison {
    /// The gate fails: a rule failed, or runs are missing.
    pub regressed: bool,
    /// The outcome in words, a sentence per compared variant ([`verdict`]).
    pub verdict: Vec<String>,
    /// `partial: …` of the new results, when they are.
    pub partial: Option<String>,
    /// Every rule on every compared variant.
    pub gate: Vec<Judgement>,
    /// The significance level of the rules.
    pub significance: f64,
    pub variants: Vec<VariantChange>,
    /// Variants only the new results have.
    pub added: Vec<String>,
    pub cases: Vec<CaseChange>,
    pub missing: Missing,
}

#[derive(Debug, Default, Serialize)]
pub struct Missing {
    /// Variants of the base the new results lack altogether.
    pub variants: Vec<String>,
    /// Runs of the base the new results lack (of the variants they have).
    pub runs: Vec<RunKey>,
}

#[derive(Debug, Serialize)]
pub struct VariantChange {
    pub base: String,
    pub new: String,
    /// Cases both results have.
    pub cases: usize,
    pub pass_rate: Difference,
    pub mean_score: Difference,
    /// Micro precision, recall and F1 over the paired cases with findings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub findings: Option<FindingsChange>,
    /// Tokens (input and output) per case run, the mean of each case's runs.
    pub tokens: Difference,
    /// Cost per case run in USD, over the paired cases both sides priced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<Difference>,
    /// About how many cases a pass-rate difference like this one needs to be
    /// significant at 5% with 80% power (the normal approximation, with the
    /// spread of these paired differences); `null` without a difference.
    pub cases_needed: Option<u64>,
    /// The variants' short names, for sentences.
    #[serde(skip)]
    pub names: (String, String),
}

#[derive(Debug, Serialize)]
pub struct FindingsChange {
    pub precision: Difference,
    pub recall: Difference,
    pub f1: Difference,
}

/// A figure before and after, the paired difference with its 95% interval,
/// and the p-value of no difference; `null` where undefined. The interval is
/// `null`, and `too_few` true, when the pairs are too few for the test to
/// call any difference significant at 5%.
#[derive(Debug, Clone, Serialize)]
pub struct Difference {
    pub base: Option<f64>,
    pub new: Option<f64>,
    pub difference: Option<f64>,
    pub low: Option<f64>,
    pub high: Option<f64>,
    pub p_value: Option<f64>,
    /// `mcnemar-exact`, `paired-permutation` or `paired-bootstrap`.
    pub test: &'static str,
    /// The paired cases the figure is over.
    pub pairs: usize,
    pub too_few: bool,
}

#[derive(Debug, Serialize)]
pub struct CaseChange {
    pub id: String,
    pub variant: String,
    /// `fail` (passed, now fails), `worse` (a lower share of its epochs
    /// passes), `fixed`, `better`, or `score`.
    pub change: &'static str,
    pub base_pass: f64,
    pub new_pass: f64,
    pub base_score: f64,
    pub new_score: f64,
    /// Why the new runs fail, for `fail` and `worse`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Compares `new` with `base`; an error when `options.variants` names a
/// variant the results do not have.
pub fn compare(base: &Results, new: &Results, options: &Options) -> Result<Comparison, String> {
    let base_groups = group(&base.cases);
    let new_groups = group(&new.cases);
    let keys = |groups: &[(VariantKey, Vec<CaseRuns>)]| groups.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
    let (base_keys, new_keys) = (keys(&base_groups), keys(&new_groups));
    // Base variants with no finished run still count: their runs are planned.
    let mut base_all = base_keys.clone();
    for key in base.missing.iter().map(RunKey::variant) {
        if !base_all.contains(&key) {
            base_all.push(key);
        }
    }
    let pairs: Vec<(VariantKey, VariantKey)> = match &options.variants {
        Some((b, n)) => vec![(select(b, &base_all)?.clone(), select(n, &new_keys)?.clone())],
        None => base_all.iter().map(|k| (k.clone(), k.clone())).collect(),
    };
    let mut comparison = Comparison {
        regressed: false,
        verdict: Vec::new(),
        partial: new.partial(),
        gate: Vec::new(),
        significance: options.significance,
        variants: Vec::new(),
        added: Vec::new(),
        cases: Vec::new(),
        missing: Missing::default(),
    };
    if options.variants.is_none() {
        comparison.added = new_keys.iter().filter(|k| !base_all.contains(k)).map(variant_name).collect();
    }
    let empty = Vec::new();
    let runs_of = |groups: &[(VariantKey, Vec<CaseRuns>)], key: &VariantKey| groups.iter().position(|(k, _)| k == key);
    for (base_key, new_key) in pairs {
        let b = runs_of(&base_groups, &base_key).map_or(&empty, |at| &base_groups[at].1);
        let planned: Vec<&RunKey> = base.missing.iter().filter(|k| k.variant() == base_key).collect();
        let Some(at) = runs_of(&new_groups, &new_key) else {
            comparison.missing.variants.push(variant_name(&new_key));
            continue;
        };
        let n = &new_groups[at].1;
        comparison.missing.runs.extend(missing_runs(b, &planned, n, &new_key));
        let mut change = compare_variant(&base_key, &new_key, b, n, (base.reduce, new.reduce), &mut comparison.cases);
        let named = [base_key.clone(), new_key.clone()];
        let short = |key: &VariantKey| short_name(key, if base_key == new_key { &base_all } else { &named });
        change.names = (short(&base_key), short(&new_key));
        comparison.gate.extend(options.rules.iter().map(|rule| gate::judge(rule, &change, options.significance)));
        comparison.verdict.push(verdict::sentence(&change, options.significance));
        comparison.variants.push(change);
    }
    let missing = !comparison.missing.variants.is_empty() || !comparison.missing.runs.is_empty();
    comparison.regressed = comparison.gate.iter().any(|j| j.failed) || (missing && !options.allow_missing);
    Ok(comparison)
}

/// The verdict of each variant of `results` after the first against the
/// first, case by case at 0.05: the summary of an evaluation of several.
pub fn verdicts(results: &Results) -> Vec<String> {
    let names: Vec<String> = results.summary.iter().map(|s| variant_name(&s.variant())).collect();
    let Some((first, others)) = names.split_first() else { return Vec::new() };
    others
        .iter()
        .filter_map(|other| {
            let options = Options {
                rules: Vec::new(),
                significance: 0.05,
                allow_missing: true,
                variants: Some((first.clone(), other.clone())),
            };
            compare(results, results, &options).ok()?.verdict.pop()
        })
        .collect()
}

/// Runs of the base (finished, or planned and missing there too) that the new results lack.
fn missing_runs(base: &[CaseRuns], planned: &[&RunKey], new: &[CaseRuns], new_key: &VariantKey) -> Vec<RunKey> {
    let have: HashSet<(&str, u32)> = new.iter().flat_map(|c| c.runs.iter().map(|r| (r.id.as_str(), r.epoch))).collect();
    let wanted = base
        .iter()
        .flat_map(|c| c.runs.iter().map(|r| (r.id.clone(), r.epoch)))
        .chain(planned.iter().map(|k| (k.id.clone(), k.epoch)));
    let (workload, entry, model) = new_key.clone();
    wanted
        .filter(|(id, epoch)| !have.contains(&(id.as_str(), *epoch)))
        .map(|(id, epoch)| RunKey { id, workload: workload.clone(), entry: entry.clone(), model: model.clone(), epoch })
        .collect()
}

fn compare_variant(
    base_key: &VariantKey,
    new_key: &VariantKey,
    base: &[CaseRuns],
    new: &[CaseRuns],
    (base_reduce, new_reduce): (Reduce, Reduce),
    cases: &mut Vec<CaseChange>,
) -> VariantChange {
    let by_id: HashMap<&str, &CaseRuns> = new.iter().map(|c| (c.id, c)).collect();
    let pairs: Vec<(&CaseRuns, &CaseRuns)> = base.iter().filter_map(|b| Some((b, *by_id.get(b.id)?))).collect();
    let pass: Vec<(f64, f64)> = pairs.iter().map(|(b, n)| (b.pass(base_reduce), n.pass(new_reduce))).collect();
    let score: Vec<(f64, f64)> = pairs.iter().map(|(b, n)| (b.score(base_reduce), n.score(new_reduce))).collect();
    let binary = pairs.iter().all(|(b, n)| b.binary(base_reduce) && n.binary(new_reduce));
    let pass_rate = if binary { mcnemar(&pass) } else { paired_mean(&pass) };
    let mean_score = paired_mean(&score);
    let tallies: Vec<(Tally, Tally)> = pairs.iter().filter_map(|(b, n)| Some((b.tally()?, n.tally()?))).collect();
    let findings = (!tallies.is_empty()).then(|| FindingsChange {
        precision: paired_ratio(&tallies, Tally::precision),
        recall: paired_ratio(&tallies, Tally::recall),
        f1: paired_ratio(&tallies, Tally::f1),
    });
    let per_run = |runs: &[&CaseResult], of: &dyn Fn(&CaseResult) -> Option<f64>| -> Option<f64> {
        let values: Option<Vec<f64>> = runs.iter().map(|r| of(r)).collect();
        stats::mean(values?)
    };
    let tokens_of = |r: &CaseResult| Some((r.tokens.input + r.tokens.output) as f64);
    let tokens: Vec<(f64, f64)> = pairs
        .iter()
        .filter_map(|(b, n)| Some((per_run(&b.runs, &tokens_of)?, per_run(&n.runs, &tokens_of)?)))
        .collect();
    let cost_of = |r: &CaseResult| r.cost_usd;
    let costs: Vec<(f64, f64)> =
        pairs.iter().filter_map(|(b, n)| Some((per_run(&b.runs, &cost_of)?, per_run(&n.runs, &cost_of)?))).collect();
    let name = variant_name(new_key);
    for ((_, n), ((bp, np), (bs, ns))) in pairs.iter().zip(pass.iter().zip(&score)) {
        let change = match () {
            _ if np < bp => {
                if *bp == 1.0 && *np == 0.0 {
                    "fail"
                } else {
                    "worse"
                }
            }
            _ if np > bp => {
                if *bp == 0.0 && *np == 1.0 {
                    "fixed"
                } else {
                    "better"
                }
            }
            _ if (ns - bs).abs() > 1e-9 => "score",
            _ => continue,
        };
        let reason = (np < bp).then(|| reason(&n.runs)).flatten();
        cases.push(CaseChange {
            id: n.id.to_string(),
            variant: name.clone(),
            change,
            base_pass: *bp,
            new_pass: *np,
            base_score: *bs,
            new_score: *ns,
            reason,
        });
    }
    VariantChange {
        base: variant_name(base_key),
        new: name,
        cases: pairs.len(),
        pass_rate,
        mean_score,
        findings,
        tokens: paired_mean(&tokens),
        cost_usd: (!costs.is_empty()).then(|| paired_mean(&costs)),
        cases_needed: cases_needed(&pass),
        names: (String::new(), String::new()),
    }
}

/// `((z₀.₉₇₅ + z₀.₈) σ / δ)²` for the paired differences' mean `δ` and
/// standard deviation `σ`.
fn cases_needed(pairs: &[(f64, f64)]) -> Option<u64> {
    let d: Vec<f64> = pairs.iter().map(|(b, n)| n - b).collect();
    let mean = stats::mean(d.iter().copied())?;
    let variance = stats::mean(d.iter().map(|x| (x - mean).powi(2)))?;
    if mean.abs() < 1e-12 || variance <= 0.0 {
        return None;
    }
    let n = ((stats::Z95 + Z80) * variance.sqrt() / mean.abs()).powi(2);
    Some(n.ceil() as u64)
}

/// The normal quantile of 80%: the power asked of a study's size.
const Z80: f64 = 0.841_621_233_572_914_3;

/// Why the first failing run of a case failed.
fn reason(runs: &[&CaseResult]) -> Option<String> {
    let run = runs.iter().find(|r| !r.passed)?;
    run.error.clone().or_else(|| run.scores.iter().find(|s| !s.passed).map(|s| s.detail.clone()))
}

/// The paired difference of means, with the paired permutation
/// (sign-flip) test and the interval of the shifts it does not reject.
fn paired_mean(pairs: &[(f64, f64)]) -> Difference {
    let d: Vec<f64> = pairs.iter().map(|(b, n)| n - b).collect();
    let flips = SignFlip::new(&d, COMPARE_RESAMPLES, SEED);
    let too_few = !paired::can_conclude(d.len(), paired::ALPHA);
    let interval = if too_few { None } else { flips.interval() };
    Difference {
        base: stats::mean(pairs.iter().map(|p| p.0)),
        new: stats::mean(pairs.iter().map(|p| p.1)),
        difference: stats::mean(d.iter().copied()),
        low: interval.map(|i| i.low),
        high: interval.map(|i| i.high),
        p_value: (!d.is_empty()).then(|| flips.p_value(0.0)),
        test: "paired-permutation",
        pairs: d.len(),
        too_few,
    }
}

/// As [`paired_mean`], with McNemar's exact test for pass/fail pairs and
/// its Clopper–Pearson interval.
fn mcnemar(pairs: &[(f64, f64)]) -> Difference {
    let worse = pairs.iter().filter(|(b, n)| b > n).count() as u64;
    let better = pairs.iter().filter(|(b, n)| b < n).count() as u64;
    let mean = paired_mean(pairs);
    let interval = (!mean.too_few).then(|| paired::mcnemar_interval(worse, better, pairs.len() as u64));
    Difference {
        p_value: (!pairs.is_empty()).then(|| stats::mcnemar_exact(worse, better)),
        test: "mcnemar-exact",
        low: interval.map(|i| i.low),
        high: interval.map(|i| i.high),
        ..mean
    }
}

/// A ratio of added-up findings (micro precision, recall or F1) before and
/// after, over the paired cases: the paired bootstrap (pairs resampled) for
/// both its interval and its p-value.
fn paired_ratio(pairs: &[(Tally, Tally)], figure: fn(&Tally) -> Option<f64>) -> Difference {
    let sums = |pick: &mut dyn FnMut(usize) -> (Tally, Tally), n: usize| {
        let (mut b, mut a) = (Tally::default(), Tally::default());
        for i in 0..n {
            let (x, y) = pick(i);
            b.add(&x);
            a.add(&y);
        }
        (b, a)
    };
    let diff = |(b, a): (Tally, Tally)| Some(figure(&a)? - figure(&b)?);
    let (base, new) = sums(&mut |i| pairs[i], pairs.len());
    let observed = diff((base, new));
    let resamples = stats::bootstrap_values(pairs.len(), COMPARE_RESAMPLES, SEED, |drawn| {
        diff(sums(&mut |i| pairs[drawn[i]], drawn.len()))
    });
    let too_few = !paired::can_conclude(pairs.len(), paired::ALPHA);
    let interval = (!too_few && !resamples.is_empty())
        .then(|| (stats::percentile(&resamples, 0.025), stats::percentile(&resamples, 0.975)));
    Difference {
        base: figure(&base),
        new: figure(&new),
        difference: observed,
        low: interval.map(|i| i.0),
        high: interval.map(|i| i.1),
        p_value: observed.and_then(|_| paired::bootstrap_p_value(&resamples)),
        test: "paired-bootstrap",
        pairs: pairs.len(),
        too_few,
    }
}

#[cfg(test)]
mod tests;
