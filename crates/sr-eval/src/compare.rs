//! Comparing two result sets: the CI gate. Cases are paired by id within a
//! variant (or between two chosen variants); each difference (pass rate,
//! mean score, and precision, recall and F1 where the cases have findings) is
//! reported with its 95% bootstrap interval over the pairs and a p-value:
//! McNemar's exact test where every case is a pass or a fail, else the
//! paired permutation test. Runs of the base missing from the new results
//! fail the gate unless allowed.

mod text;

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use crate::config::Reduce;
use crate::names::{select, variant_name};
use crate::results::summary::{CaseRuns, group};
use crate::results::{CaseResult, Results, RunKey, VariantKey};
use crate::scorer::Tally;
use crate::stats::{self, COMPARE_RESAMPLES, SEED};

pub struct Options {
    /// The pass-rate drop allowed per variant, a fraction (0.05 = five points).
    pub max_drop: f64,
    /// Fail only on a drop beyond `max_drop` with a p-value below this;
    /// without it, any case that passed and now fails fails the gate.
    pub significance: Option<f64>,
    /// Runs and variants of the base missing from the new results do not fail the gate.
    pub allow_missing: bool,
    /// Compare this variant of the base with this variant of the new results
    /// (any name [`select`] takes), instead of each variant with itself.
    pub variants: Option<(String, String)>,
}

/// What changed from the base to the new results.
#[derive(Debug, Serialize)]
pub struct Comparison {
    /// The gate fails: a drop, a case that failed, or missing runs.
    pub regressed: bool,
    /// `partial: …` of the new results, when they are.
    pub partial: Option<String>,
    pub variants: Vec<VariantChange>,
    /// Variants only the new results have.
    pub added: Vec<String>,
    pub cases: Vec<CaseChange>,
    pub missing: Missing,
    /// The significance level and the drop allowed, as asked.
    pub significance: Option<f64>,
    pub max_drop: f64,
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
    /// The pass rate dropped beyond the allowed drop (and significantly, when asked).
    pub dropped: bool,
}

#[derive(Debug, Serialize)]
pub struct FindingsChange {
    pub precision: Difference,
    pub recall: Difference,
    pub f1: Difference,
}

/// A figure before and after, the paired difference with its 95% interval,
/// and the p-value of no difference; `null` where undefined.
#[derive(Debug, Clone, Serialize)]
pub struct Difference {
    pub base: Option<f64>,
    pub new: Option<f64>,
    pub difference: Option<f64>,
    pub low: Option<f64>,
    pub high: Option<f64>,
    pub p_value: Option<f64>,
    /// `mcnemar-exact` or `paired-permutation`.
    pub test: &'static str,
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
        partial: new.partial(),
        variants: Vec::new(),
        added: Vec::new(),
        cases: Vec::new(),
        missing: Missing::default(),
        significance: options.significance,
        max_drop: options.max_drop,
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
        let change =
            compare_variant(&base_key, &new_key, b, n, (base.reduce, new.reduce), options, &mut comparison.cases);
        comparison.variants.push(change);
    }
    let flipped = comparison.cases.iter().any(|c| c.new_pass < c.base_pass);
    let missing = !comparison.missing.variants.is_empty() || !comparison.missing.runs.is_empty();
    comparison.regressed = comparison.variants.iter().any(|v| v.dropped)
        || (options.significance.is_none() && flipped)
        || (missing && !options.allow_missing);
    Ok(comparison)
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
    options: &Options,
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
    let drop = -pass_rate.difference.unwrap_or(0.0);
    // A drop exactly at the limit is allowed (within float noise).
    let beyond = drop > options.max_drop + 1e-9;
    let significant = match options.significance {
        Some(level) => pass_rate.p_value.is_some_and(|p| p < level),
        None => true,
    };
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
        dropped: beyond && significant,
    }
}

/// Why the first failing run of a case failed.
fn reason(runs: &[&CaseResult]) -> Option<String> {
    let run = runs.iter().find(|r| !r.passed)?;
    run.error.clone().or_else(|| run.scores.iter().find(|s| !s.passed).map(|s| s.detail.clone()))
}

/// The paired difference of means with its bootstrap interval and the
/// paired permutation test.
fn paired_mean(pairs: &[(f64, f64)]) -> Difference {
    let d: Vec<f64> = pairs.iter().map(|(b, n)| n - b).collect();
    let mean_of = |drawn: &[usize]| stats::mean(drawn.iter().map(|&i| d[i]));
    let interval = stats::bootstrap(d.len(), COMPARE_RESAMPLES, SEED, mean_of);
    let p_value = (!d.is_empty()).then(|| {
        stats::paired_permutation(d.len(), COMPARE_RESAMPLES, SEED, |swapped| {
            d.iter().zip(swapped).map(|(x, s)| if *s { -x } else { *x }).sum::<f64>() / d.len() as f64
        })
    });
    Difference {
        base: stats::mean(pairs.iter().map(|p| p.0)),
        new: stats::mean(pairs.iter().map(|p| p.1)),
        difference: stats::mean(d.iter().copied()),
        low: interval.map(|i| i.low),
        high: interval.map(|i| i.high),
        p_value,
        test: "paired-permutation",
    }
}

/// As [`paired_mean`], with McNemar's exact test for pass/fail pairs.
fn mcnemar(pairs: &[(f64, f64)]) -> Difference {
    let worse = pairs.iter().filter(|(b, n)| b > n).count() as u64;
    let better = pairs.iter().filter(|(b, n)| b < n).count() as u64;
    Difference {
        p_value: (!pairs.is_empty()).then(|| stats::mcnemar_exact(worse, better)),
        test: "mcnemar-exact",
        ..paired_mean(pairs)
    }
}

/// A ratio of added-up findings (micro precision, recall or F1) before and
/// after, over the paired cases: resampled pairs for the interval, sides
/// swapped within pairs for the p-value.
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
    let interval = stats::bootstrap(pairs.len(), COMPARE_RESAMPLES, SEED, |drawn| {
        diff(sums(&mut |i| pairs[drawn[i]], drawn.len()))
    });
    let observed = diff((base, new));
    let p_value = observed.map(|_| {
        stats::paired_permutation(pairs.len(), COMPARE_RESAMPLES, SEED, |swapped| {
            let pick = |i: usize| if swapped[i] { (pairs[i].1, pairs[i].0) } else { pairs[i] };
            diff(sums(&mut { pick }, pairs.len())).unwrap_or(0.0)
        })
    });
    Difference {
        base: figure(&base),
        new: figure(&new),
        difference: observed,
        low: interval.map(|i| i.low),
        high: interval.map(|i| i.high),
        p_value,
        test: "paired-permutation",
    }
}

#[cfg(test)]
mod tests;
