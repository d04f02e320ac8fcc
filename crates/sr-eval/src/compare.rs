//! Comparing two result sets (the CI gate) and merging shards.

use std::collections::{HashMap, HashSet};
use std::fmt::Write;

use crate::results::{CaseResult, Results, VariantKey};

/// What changed from `base` to `new`.
pub struct Comparison {
    /// Readable deltas, per variant then per case.
    pub text: String,
    /// A variant's pass rate dropped by more than the allowed drop, or a
    /// case that passed now fails.
    pub regressed: bool,
}

/// `workload@entry × model`, as reports and progress lines name a variant.
pub fn variant_name((workload, entry, model): &VariantKey) -> String {
    let mut name = workload.clone();
    if let Some(entry) = entry {
        let _ = write!(name, "@{entry}");
    }
    let _ = write!(name, " × {}", model.as_deref().unwrap_or("default"));
    name
}

type CaseKey = (String, VariantKey);

fn case_key(case: &CaseResult) -> CaseKey {
    (case.id.clone(), case.variant())
}

/// Compares per variant (pass rate, mean score) and per case (pass → fail,
/// fail → pass, score changes). `max_drop` is a fraction (0.05 = five points).
pub fn compare(base: &Results, new: &Results, max_drop: f64) -> Comparison {
    let mut text = String::new();
    let mut regressed = false;
    let old: HashMap<VariantKey, _> = base.summary.iter().map(|s| (s.variant(), s)).collect();
    text.push_str("variant: pass rate base → new (Δ), mean score base → new\n");
    for s in &new.summary {
        let name = variant_name(&s.variant());
        match old.get(&s.variant()) {
            None => {
                let _ = writeln!(text, "  {name}: new, pass rate {:.1}%", s.pass_rate * 100.0);
            }
            Some(b) => {
                let delta = s.pass_rate - b.pass_rate;
                // A drop exactly at the limit is allowed (within float noise).
                let dropped = -delta > max_drop + 1e-9;
                regressed |= dropped;
                let _ = writeln!(
                    text,
                    "  {name}: {:.1}% → {:.1}% ({:+.1}){}, {:.3} → {:.3}",
                    b.pass_rate * 100.0,
                    s.pass_rate * 100.0,
                    delta * 100.0,
                    if dropped { " DROP" } else { "" },
                    b.mean_score,
                    s.mean_score
                );
            }
        }
    }
    let new_variants: HashSet<VariantKey> = new.summary.iter().map(|s| s.variant()).collect();
    for s in base.summary.iter().filter(|s| !new_variants.contains(&s.variant())) {
        let _ = writeln!(text, "  {}: missing from the new results", variant_name(&s.variant()));
    }
    let before: HashMap<CaseKey, &CaseResult> = base.cases.iter().map(|c| (case_key(c), c)).collect();
    let mut changes = String::new();
    for case in &new.cases {
        let Some(b) = before.get(&case_key(case)) else { continue };
        let name = format!("{} ({})", case.id, variant_name(&case.variant()));
        if b.passed && !case.passed {
            regressed = true;
            let reason =
                case.error.clone().or_else(|| case.scores.iter().find(|s| !s.passed).map(|s| s.detail.clone()));
            let _ = writeln!(changes, "  FAIL  {name}: {}", reason.unwrap_or_default());
        } else if !b.passed && case.passed {
            let _ = writeln!(changes, "  fixed {name}");
        } else if (case.score - b.score).abs() > 1e-9 {
            let _ = writeln!(changes, "  score {name}: {:.3} → {:.3}", b.score, case.score);
        }
    }
    if !changes.is_empty() {
        text.push_str("cases:\n");
        text.push_str(&changes);
    }
    Comparison { text, regressed }
}

/// Joins shards into one result set; the same case of the same variant in
/// two shards is an error.
pub fn merge(parts: Vec<Results>) -> Result<Results, String> {
    let mut seen = HashSet::new();
    let mut cases = Vec::new();
    for part in parts {
        for case in part.cases {
            if !seen.insert(case_key(&case)) {
                return Err(format!("case {} of {} is in two of the results", case.id, variant_name(&case.variant())));
            }
            cases.push(case);
        }
    }
    Ok(Results::of(cases))
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::results::Tokens;

    fn case(id: &str, model: &str, passed: bool) -> CaseResult {
        CaseResult {
            id: id.into(),
            workload: "w.sr".into(),
            entry: None,
            model: Some(model.into()),
            passed,
            score: if passed { 1.0 } else { 0.0 },
            scores: vec![],
            output: Value::Null,
            error: (!passed).then(|| "timeout".to_string()),
            tokens: Tokens::default(),
            cost_usd: None,
            latency_ms: 1,
            model_calls: 0,
            events: None,
        }
    }

    fn set(cases: &[(&str, &str, bool)]) -> Results {
        Results::of(cases.iter().map(|(id, m, p)| case(id, m, *p)).collect())
    }

    #[test]
    fn a_case_that_passed_and_now_fails_is_a_regression_whatever_the_drop() {
        let base = set(&[("c1", "a", true), ("c2", "a", false)]);
        let new = set(&[("c1", "a", false), ("c2", "a", true)]);
        let c = compare(&base, &new, 1.0);
        assert!(c.regressed);
        assert!(c.text.contains("FAIL  c1 (w.sr × a): timeout"), "{}", c.text);
        assert!(c.text.contains("fixed c2 (w.sr × a)"), "{}", c.text);
    }

    #[test]
    fn a_pass_rate_drop_beyond_max_drop_fails_the_gate() {
        // c2 is new in `new` and fails: the pass rate drops from 100% to 50%
        // with no case going from pass to fail.
        let base = set(&[("c1", "a", true)]);
        let new = set(&[("c1", "a", true), ("c2", "a", false)]);
        let strict = compare(&base, &new, 0.0);
        assert!(strict.regressed);
        assert!(strict.text.contains("w.sr × a: 100.0% → 50.0% (-50.0) DROP"), "{}", strict.text);
        assert!(!compare(&base, &new, 0.5).regressed);
        assert!(compare(&base, &new, 0.49).regressed);
    }

    #[test]
    fn unchanged_and_improved_results_pass_and_variants_are_reported() {
        let base = set(&[("c1", "a", false), ("c1", "old", true)]);
        let new = set(&[("c1", "a", true), ("c1", "b", false)]);
        let c = compare(&base, &new, 0.0);
        assert!(!c.regressed, "{}", c.text);
        assert!(c.text.contains("w.sr × b: new, pass rate 0.0%"), "{}", c.text);
        assert!(c.text.contains("w.sr × old: missing from the new results"), "{}", c.text);
        assert!(!compare(&new, &new, 0.0).regressed);
    }

    #[test]
    fn merging_shards_joins_cases_and_recomputes_the_summary() {
        let one = set(&[("c1", "a", true), ("c3", "a", false)]);
        let two = set(&[("c2", "a", true), ("c2", "b", true)]);
        let merged = merge(vec![one.clone(), two]).unwrap();
        assert_eq!(merged.cases.len(), 4);
        let a = &merged.summary[0];
        assert_eq!((a.passed, a.total), (2, 3));
        assert_eq!((merged.summary[1].passed, merged.summary[1].total), (1, 1));
        let error = merge(vec![one.clone(), one]).unwrap_err();
        assert_eq!(error, "case c1 of w.sr × a is in two of the results");
    }
}
