use serde_json::{Value, json};

use super::*;
use crate::results::Tokens;
use crate::scorer::Score;

fn case(id: &str, workload: &str, epoch: u32, passed: bool) -> CaseResult {
    CaseResult {
        id: id.into(),
        workload: workload.into(),
        entry: None,
        model: None,
        epoch,
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
        run: None,
    }
}

/// Results of `w.sr`: case `c<i>` passes where `passes[i]` is true.
fn set(passes: &[bool]) -> Results {
    Results::of(passes.iter().enumerate().map(|(i, p)| case(&format!("c{i}"), "w.sr", 1, *p)).collect())
}

fn options() -> Options {
    Options { max_drop: 0.0, significance: None, allow_missing: false, variants: None }
}

#[test]
fn a_case_that_passed_and_now_fails_is_a_regression_whatever_the_drop() {
    let base = set(&[true, false]);
    let new = set(&[false, true]);
    let c = compare(&base, &new, &Options { max_drop: 1.0, ..options() }).unwrap();
    assert!(c.regressed);
    let text = c.text();
    assert!(text.contains("  FAIL  c0 (w.sr × default): timeout"), "{text}");
    assert!(text.contains("  fixed c1 (w.sr × default)"), "{text}");
    assert!(!compare(&new, &new, &options()).unwrap().regressed);
}

#[test]
fn each_difference_has_its_interval_and_p_value() {
    // 12 paired cases: 10 pass → fail, none fail → pass. McNemar exact: 2 / 2^10.
    let base = set(&[true; 12]);
    let mut after = [false; 12];
    after[0] = true;
    after[1] = true;
    let new = set(&after);
    let c = compare(&base, &new, &options()).unwrap();
    let v = &c.variants[0];
    assert_eq!((v.cases, v.pass_rate.test), (12, "mcnemar-exact"));
    assert_eq!((v.pass_rate.base, v.pass_rate.new), (Some(1.0), Some(2.0 / 12.0)));
    assert!((v.pass_rate.difference.unwrap() + 10.0 / 12.0).abs() < 1e-12);
    assert_eq!(v.pass_rate.p_value, Some(2.0 / 1024.0));
    let (low, high) = (v.pass_rate.low.unwrap(), v.pass_rate.high.unwrap());
    assert!(low < -10.0 / 12.0 && -10.0 / 12.0 < high && high < 0.0, "{low} {high}");
    // The mean score's test is the paired permutation test: 12 pairs, 10 of
    // them -1 and 2 of them 0: only the assignments with all 10 one way reach
    // |mean| 10/12, 2 · 2^2 of 2^12.
    assert_eq!(v.mean_score.test, "paired-permutation");
    assert!((v.mean_score.p_value.unwrap() - 8.0 / 4096.0).abs() < 1e-12);
    assert!(v.dropped && c.regressed);
    let text = c.text();
    assert!(text.contains("    pass rate   100.0% → 16.7%  -83.3 points ["), "{text}");
    assert!(text.contains("  p = 0.002 (McNemar exact) DROP"), "{text}");
    // And the same as JSON.
    let json = serde_json::to_value(&c).unwrap();
    assert_eq!(json["variants"][0]["pass_rate"]["p_value"], json!(2.0 / 1024.0));
    assert_eq!(json["variants"][0]["pass_rate"]["test"], json!("mcnemar-exact"));
    assert_eq!(json["regressed"], json!(true));
}

#[test]
fn with_a_significance_level_only_a_significant_drop_fails() {
    let base = set(&[true; 6]);
    let one_flip = set(&[true, true, true, true, true, false]);
    let significant = Options { significance: Some(0.05), ..options() };
    // One case flipping: McNemar p = 1; a failure without the level, not with it.
    assert!(compare(&base, &one_flip, &options()).unwrap().regressed);
    let c = compare(&base, &one_flip, &significant).unwrap();
    assert!(!c.regressed, "{}", c.text());
    assert!(c.text().contains("p = 1.000 (McNemar exact) (a drop, not significant at 0.05)"), "{}", c.text());
    // Every case of 12 flipping: p = 2 / 2^12, significant, and beyond the drop allowed.
    let all = set(&[true; 12]);
    let none = set(&[false; 12]);
    assert!(compare(&all, &none, &significant).unwrap().regressed);
    // Significant but within --max-drop: no failure.
    assert!(!compare(&all, &none, &Options { max_drop: 1.0, ..significant }).unwrap().regressed);
}

#[test]
fn missing_cases_and_variants_fail_the_gate_unless_allowed() {
    let base =
        Results::of(vec![case("c1", "w.sr", 1, true), case("c2", "w.sr", 1, true), case("c1", "old.sr", 1, true)]);
    // An interrupted or filtered run: c2 never ran, old.sr not at all.
    let new = Results::of(vec![case("c1", "w.sr", 1, true), case("c1", "added.sr", 1, false)]);
    let c = compare(&base, &new, &options()).unwrap();
    assert!(c.regressed);
    assert_eq!(c.missing.variants, ["old.sr × default"]);
    assert_eq!(c.missing.runs.iter().map(|k| k.id.as_str()).collect::<Vec<_>>(), ["c2"]);
    assert_eq!(c.added, ["added.sr × default"]);
    let text = c.text();
    assert!(
        text.contains("missing from the new results:\n  variant old.sr × default\n  c2 (w.sr × default)\n"),
        "{text}"
    );
    assert!(text.contains("  added.sr × default: only in the new results"), "{text}");
    assert!(!compare(&base, &new, &Options { allow_missing: true, ..options() }).unwrap().regressed);
    // Missing epochs are missing runs too.
    let epochs = Results::of(vec![case("c1", "w.sr", 1, true), case("c1", "w.sr", 2, true)]);
    let one = Results::of(vec![case("c1", "w.sr", 1, true)]);
    let c = compare(&epochs, &one, &options()).unwrap();
    assert!(c.regressed && c.text().contains("  c1 (w.sr × default), epoch 2\n"), "{}", c.text());
    // The new results say when they are partial, first.
    let key = RunKey { id: "c9".into(), workload: "w.sr".into(), entry: None, model: None, epoch: 1 };
    let partial = Results::assemble(&[key], vec![], Reduce::Mean, None);
    assert!(
        compare(&set(&[]), &partial, &options()).unwrap().text().starts_with("new results partial: 0 of 1 cases\n")
    );
}

#[test]
fn two_variants_of_one_result_set_compare_case_by_case() {
    let finding = |matched, expected, reported| {
        let tally = Tally { matched, expected, reported };
        let mut score = Score::new("findings", tally.score() >= 1.0, String::new());
        score.findings = Some(tally);
        score
    };
    let mut cases = Vec::new();
    for (id, review, split) in
        [("c1", (1, 1, 1), (1, 1, 1)), ("c2", (0, 1, 1), (1, 1, 1)), ("c3", (0, 1, 0), (1, 1, 2))]
    {
        for (workload, (m, e, r)) in [("review.sr", review), ("split.sr", split)] {
            let score = finding(m, e, r);
            cases.push(CaseResult {
                passed: score.passed,
                score: score.score,
                scores: vec![score],
                ..case(id, workload, 1, false)
            });
        }
    }
    let results = Results::of(cases);
    let pair = Options { variants: Some(("review".into(), "split.sr".into())), ..options() };
    let c = compare(&results, &results, &pair).unwrap();
    assert_eq!(c.variants.len(), 1);
    let v = &c.variants[0];
    assert_eq!((v.base.as_str(), v.new.as_str(), v.cases), ("review.sr × default", "split.sr × default", 3));
    let f = v.findings.as_ref().unwrap();
    // review: 1 of 3 found, 2 reported; split: 3 of 3, 4 reported.
    assert_eq!((f.recall.base, f.recall.new), (Some(1.0 / 3.0), Some(1.0)));
    assert_eq!((f.precision.base, f.precision.new), (Some(0.5), Some(0.75)));
    assert!((f.f1.difference.unwrap() - (6.0 / 7.0 - 2.0 / 5.0)).abs() < 1e-12);
    assert!(f.f1.p_value.is_some() && f.f1.low.is_some());
    assert!(c.text().starts_with("variant: base → new (paired difference, 95% interval, p-value of no difference)\n  review.sr × default → split.sr × default (3 paired cases)\n"), "{}", c.text());
    assert!(c.text().contains("    F1 (micro)  0.400 → 0.857  +0.457 ["), "{}", c.text());
    let bad = Options { variants: Some(("nope".into(), "split".into())), ..options() };
    assert!(compare(&results, &results, &bad).unwrap_err().contains("no variant \"nope\""));
}

#[test]
fn epochs_compare_by_the_share_of_runs_that_pass() {
    // c1 passed 3 of 3 epochs and now 2 of 3: worse, not a plain fail; the test is the permutation test.
    let runs = |passes: [bool; 3]| {
        Results::of(passes.iter().enumerate().map(|(e, p)| case("c1", "w.sr", e as u32 + 1, *p)).collect())
    };
    let c = compare(&runs([true; 3]), &runs([true, false, true]), &options()).unwrap();
    assert_eq!(c.variants[0].pass_rate.test, "paired-permutation");
    assert_eq!(c.cases[0].change, "worse");
    assert!(c.regressed, "a lower share of passing runs fails the gate without a significance level");
    assert!(c.text().contains("  worse c1 (w.sr × default): passes 1.00 → 0.67: timeout"), "{}", c.text());
}

#[test]
fn tokens_and_cost_per_run_are_compared_pair_by_pair() {
    let priced = |id: &str, epoch: u32, tokens: u64, cost: Option<f64>| CaseResult {
        tokens: Tokens { input: tokens, output: 0 },
        cost_usd: cost,
        ..case(id, "w.sr", epoch, true)
    };
    // c0: 100 then 300 tokens a run (its two epochs average 200 → 300); c1: 100 → 200.
    let base = Results::of(vec![
        priced("c0", 1, 100, Some(0.01)),
        priced("c0", 2, 300, Some(0.03)),
        priced("c1", 1, 100, None),
    ]);
    let new = Results::of(vec![
        priced("c0", 1, 300, Some(0.03)),
        priced("c0", 2, 300, Some(0.03)),
        priced("c1", 1, 200, None),
    ]);
    let v = &compare(&base, &new, &Options { allow_missing: true, ..options() }).unwrap().variants[0];
    assert_eq!((v.tokens.base, v.tokens.new, v.tokens.difference), (Some(150.0), Some(250.0), Some(100.0)));
    // Only c0 is priced on both sides: 0.02 → 0.03 a run.
    let cost = v.cost_usd.as_ref().unwrap();
    assert!((cost.difference.unwrap() - 0.01).abs() < 1e-12, "{cost:?}");
    let text = compare(&base, &new, &Options { allow_missing: true, ..options() }).unwrap().text();
    assert!(text.contains("    tokens/run  150 → 250  +100"), "{text}");
    assert!(text.contains("    USD/run     0.0200 → 0.0300  +0.0100"), "{text}");
    // Nothing priced: no cost line.
    assert!(compare(&set(&[true]), &set(&[true]), &options()).unwrap().variants[0].cost_usd.is_none());
}
