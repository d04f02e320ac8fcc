//! `results.json`: every case run, and a summary per variant computed from them.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::scorer::Score;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Results {
    pub cases: Vec<CaseResult>,
    pub summary: Vec<Summary>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseResult {
    pub id: String,
    pub workload: String,
    pub entry: Option<String>,
    pub model: Option<String>,
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
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub workload: String,
    pub entry: Option<String>,
    pub model: Option<String>,
    pub passed: usize,
    pub total: usize,
    pub pass_rate: f64,
    pub mean_score: f64,
    pub tokens: Tokens,
    /// `None` when no case of the variant had a price.
    pub cost_usd: Option<f64>,
    pub p50_latency_ms: u64,
    pub p95_latency_ms: u64,
}

/// What identifies a variant: workload, entry, model.
pub type VariantKey = (String, Option<String>, Option<String>);

impl CaseResult {
    pub fn variant(&self) -> VariantKey {
        (self.workload.clone(), self.entry.clone(), self.model.clone())
    }
}

impl Summary {
    pub fn variant(&self) -> VariantKey {
        (self.workload.clone(), self.entry.clone(), self.model.clone())
    }
}

impl Results {
    /// Results of `cases`, summarised per variant in order of first appearance.
    pub fn of(cases: Vec<CaseResult>) -> Results {
        let mut order: Vec<VariantKey> = Vec::new();
        let mut groups: HashMap<VariantKey, Vec<&CaseResult>> = HashMap::new();
        for case in &cases {
            let key = case.variant();
            if !groups.contains_key(&key) {
                order.push(key.clone());
            }
            groups.entry(key).or_default().push(case);
        }
        let summary = order.into_iter().map(|key| summarise(key.clone(), &groups[&key])).collect();
        Results { cases, summary }
    }

    /// Mean score over every case; 0 when there are none.
    pub fn mean_score(&self) -> f64 {
        mean(self.cases.iter().map(|c| c.score))
    }
}

fn mean(values: impl ExactSizeIterator<Item = f64>) -> f64 {
    let n = values.len();
    if n == 0 { 0.0 } else { values.sum::<f64>() / n as f64 }
}

fn summarise((workload, entry, model): VariantKey, cases: &[&CaseResult]) -> Summary {
    let passed = cases.iter().filter(|c| c.passed).count();
    let total = cases.len();
    let mut tokens = Tokens::default();
    let mut cost: Option<f64> = None;
    for case in cases {
        tokens.input += case.tokens.input;
        tokens.output += case.tokens.output;
        if let Some(c) = case.cost_usd {
            *cost.get_or_insert(0.0) += c;
        }
    }
    let mut latencies: Vec<u64> = cases.iter().map(|c| c.latency_ms).collect();
    latencies.sort_unstable();
    Summary {
        workload,
        entry,
        model,
        passed,
        total,
        pass_rate: if total == 0 { 0.0 } else { passed as f64 / total as f64 },
        mean_score: mean(cases.iter().map(|c| c.score)),
        tokens,
        cost_usd: cost,
        p50_latency_ms: percentile(&latencies, 50),
        p95_latency_ms: percentile(&latencies, 95),
    }
}

/// The nearest-rank percentile of sorted values; 0 for none.
fn percentile(sorted: &[u64], p: usize) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (p * sorted.len()).div_ceil(100).max(1);
    sorted[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn case(id: &str, model: &str, passed: bool, score: f64, latency_ms: u64) -> CaseResult {
        CaseResult {
            id: id.into(),
            workload: "w.sr".into(),
            entry: None,
            model: Some(model.into()),
            passed,
            score,
            scores: vec![],
            output: Value::Null,
            error: None,
            tokens: Tokens { input: 10, output: 2 },
            cost_usd: None,
            latency_ms,
            model_calls: 1,
            events: None,
        }
    }

    #[test]
    fn the_summary_is_per_variant_with_nearest_rank_percentiles() {
        let mut cases: Vec<CaseResult> =
            (1..=20).map(|i| case(&format!("c{i}"), "a", i % 4 != 0, 0.5, i * 10)).collect();
        cases.push(case("c1", "b", true, 1.0, 7));
        cases[3].cost_usd = Some(0.25);
        cases[5].cost_usd = Some(0.5);
        let results = Results::of(cases);
        assert_eq!(results.summary.len(), 2);
        let a = &results.summary[0];
        assert_eq!((a.model.as_deref(), a.passed, a.total), (Some("a"), 15, 20));
        assert_eq!(a.pass_rate, 0.75);
        assert_eq!(a.mean_score, 0.5);
        assert_eq!(a.tokens, Tokens { input: 200, output: 40 });
        assert_eq!(a.cost_usd, Some(0.75));
        assert_eq!((a.p50_latency_ms, a.p95_latency_ms), (100, 190));
        let b = &results.summary[1];
        assert_eq!((b.passed, b.total, b.cost_usd, b.p50_latency_ms, b.p95_latency_ms), (1, 1, None, 7, 7));
        assert!((results.mean_score() - (20.0 * 0.5 + 1.0) / 21.0).abs() < 1e-12);
        assert_eq!(Results::of(vec![]).mean_score(), 0.0);
    }
}
