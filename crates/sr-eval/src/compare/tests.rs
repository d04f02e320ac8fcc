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

/// The default gate: `pass_rate drop > 0 points` at 0.05.
fn options() -> Options {
    Options { rules: vec![Rule::max_drop(0.0)], significance: 0.05, allow_missing: false, variants: None }
}

fn rules(rules: &[&str]) -> Options {
    Options { rules: rules.iter().map(|r| Rule::parse(r).unwrap()).collect(), ..options() }
}

#[test]
fn a_case_that_flips_is_listed_but_fails_the_gate_only_when_significant() {
    let base = set(&[true, false]);
    let new = set(&[false, true]);
    let c = compare(&base, &new, &options()).unwrap();
    assert!(!c.regressed, "{}", c.text());
    let text = c.text();
    assert!(text.contains("  FAIL  c0 (w.sr × default): timeout"), "{text}");
    assert!(text.contains("  fixed c1 (w.sr × default)"), "{text}");
    assert!(text.contains("  pass  pass_rate drop > 0 points (w.sr × default): moved 0, p = 1.0"), "{text}");
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
    // The interval is McNemar's (Clopper–Pearson): below zero, as p < 0.05.
    let (low, high) = (v.pass_rate.low.unwrap(), v.pass_rate.high.unwrap());
    assert!(low < -10.0 / 12.0 && -10.0 / 12.0 < high && high < 0.0, "{low} {high}");
    assert!(!v.pass_rate.too_few);
    // The mean score's test is the paired permutation test: 12 pairs, 10 of
    // them -1 and 2 of them 0: only the assignments with all 10 one way reach
    // |mean| 10/12, 2 · 2^2 of 2^12.
    assert_eq!(v.mean_score.test, "paired-permutation");
    assert!((v.mean_score.p_value.unwrap() - 8.0 / 4096.0).abs() < 1e-12);
    assert!(c.gate[0].failed && c.regressed);
    let text = c.text();
    assert!(text.contains("    pass rate   100.0% → 16.7%  -83.3 points ["), "{text}");
    assert!(text.contains("  p = 0.002 (McNemar exact)\n"), "{text}");
    assert!(text.contains("  FAIL  pass_rate drop > 0 points (w.sr × default): moved 83.333, p = 0.0020"), "{text}");
    // And the same as JSON.
    let json = serde_json::to_value(&c).unwrap();
    assert_eq!(json["variants"][0]["pass_rate"]["p_value"], json!(2.0 / 1024.0));
    assert_eq!(json["variants"][0]["pass_rate"]["test"], json!("mcnemar-exact"));
    assert_eq!(json["regressed"], json!(true));
}

#[test]
fn the_pass_rate_rule_fails_on_a_significant_drop_beyond_its_amount() {
    let base = set(&[true; 6]);
    // One case flipping: McNemar p = 1, not a failure.
    let c = compare(&base, &set(&[true, true, true, true, true, false]), &options()).unwrap();
    assert!(!c.regressed, "{}", c.text());
    // Every case of 12 flipping: p = 2 / 2^12, significant and beyond the amount.
    let (all, none) = (set(&[true; 12]), set(&[false; 12]));
    assert!(compare(&all, &none, &options()).unwrap().regressed);
    // Significant but within the amount (--max-drop 1 is 100 points): no failure.
    let within = Options { rules: vec![Rule::max_drop(1.0)], ..options() };
    assert!(!compare(&all, &none, &within).unwrap().regressed);
    // A stricter level turns the same drop of 6 of 6 (p = 2 / 2^6) into noise.
    let six = compare(&base, &set(&[false; 6]), &options()).unwrap();
    assert!(six.regressed);
    assert!(!compare(&base, &set(&[false; 6]), &Options { significance: 0.01, ..options() }).unwrap().regressed);
}

/// Results of `w.sr` with these scores (a case passes at 0.5).
fn scored(scores: &[f64]) -> Results {
    Results::of(
        scores
            .iter()
            .enumerate()
            .map(|(i, s)| CaseResult { score: *s, passed: *s >= 0.5, ..case(&format!("c{i}"), "w.sr", 1, true) })
            .collect(),
    )
}

#[test]
fn the_mean_score_rule_fails_on_a_significant_drop_only() {
    let rule = rules(&["mean_score drop > 0.05"]);
    let base = scored(&[0.9, 0.8, 0.9, 0.7, 0.8, 0.9, 0.6, 0.8]);
    // Every case 0.1 to 0.3 lower: p = 2 / 2^8, a drop of 0.2 beyond 0.05.
    let lower = scored(&[0.7, 0.6, 0.6, 0.5, 0.6, 0.7, 0.5, 0.5]);
    let c = compare(&base, &lower, &rule).unwrap();
    assert!(c.regressed, "{}", c.text());
    assert!((c.gate[0].p_value.unwrap() - 2.0 / 256.0).abs() < 1e-12);
    // Noise: as many cases up as down, a net drop of 0.075 (beyond 0.05) that
    // the permutation test does not call significant.
    let noise = scored(&[0.4, 1.0, 0.5, 0.9, 0.5, 1.0, 0.9, 0.6]);
    let c = compare(&base, &noise, &rule).unwrap();
    assert!(!c.regressed && (c.gate[0].moved.unwrap() - 0.075).abs() < 1e-9, "{}", c.text());
    assert!(c.gate[0].p_value.unwrap() > 0.3, "{}", c.text());
    // A significant drop within the amount passes.
    assert!(!compare(&base, &lower, &rules(&["mean_score drop > 0.25"])).unwrap().regressed);
}

#[test]
fn epochs_that_flake_without_a_significant_change_pass_the_gate() {
    // The same flaky model twice: each of 8 cases passes 3 of 4 epochs, in other epochs each time.
    let runs = |shift: u32| {
        let mut cases = Vec::new();
        for i in 0..8 {
            for e in 1..=4 {
                cases.push(case(&format!("c{i}"), "w.sr", e, !(e + shift + i).is_multiple_of(4)));
            }
        }
        Results::of(cases)
    };
    let c = compare(&runs(0), &runs(1), &options()).unwrap();
    assert!(!c.regressed, "{}", c.text());
    // Half the epochs now failing in every case is a significant drop.
    let worse =
        Results::of((0..8).flat_map(|i| (1..=4).map(move |e| case(&format!("c{i}"), "w.sr", e, e % 2 == 0))).collect());
    let c = compare(&runs(0), &worse, &options()).unwrap();
    assert!(c.regressed && c.variants[0].pass_rate.test == "paired-permutation", "{}", c.text());
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
    // Three cases are too few to conclude: no interval, and it says so.
    assert!(f.f1.p_value.is_some() && f.f1.low.is_none() && f.f1.too_few);
    // The verdict comes first, then the figures.
    let verdict = "split vs review: no significant difference in pass rate (+33.3 points, p = 1.0), mean score \
                   (+0.33, p = 1.0), F1 (+0.46, p = 0.070) or tokens (n/a, p = 1.0). 3 cases cannot make any \
                   difference significant at 0.05 (that takes 6 cases changing one way).\n";
    assert!(c.text().starts_with(&format!("{verdict}variant: base → new (paired difference, 95% interval, p-value of no difference)\n  review.sr × default → split.sr × default (3 paired cases)\n")), "{}", c.text());
    assert!(
        c.text().contains("    F1 (micro)  0.400 → 0.857  +0.457 [too few cases to conclude]  p = "),
        "{}",
        c.text()
    );
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
    assert!(!c.regressed, "one case a third lower is not significant: {}", c.text());
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

#[test]
fn rules_parse_and_bad_ones_say_where() {
    let parsed = |text: &str| Rule::parse(text).map(|r| r.to_string());
    assert_eq!(parsed("pass_rate drop > 2 points"), Ok("pass_rate drop > 2 points".into()));
    assert_eq!(parsed("  cost rise>20%"), Ok("cost rise > 20%".into()));
    assert_eq!(parsed("tokens rise > 50 %"), Ok("tokens rise > 50%".into()));
    assert_eq!(parsed("f1 drop > 0.03"), Ok("f1 drop > 0.03".into()));
    assert_eq!(Rule::max_drop(0.05), Rule::parse("pass_rate drop > 5 points").unwrap());
    for (text, error) in [
        (
            "pass rate drop > 2",
            "column 1: expected a metric (pass_rate, mean_score, f1, precision, recall, tokens, cost), found \"pass\"",
        ),
        ("f1 fall > 0.1", "column 4: expected `drop` or `rise`, found \"fall\""),
        ("f1 drop >= 0.1", "column 10: expected an amount (a number at least 0), found \"=\""),
        ("f1 drop 0.1", "column 9: expected `>`, found \"0.1\""),
        ("pass_rate drop > 2", "column 19: a pass rate's amount is in `points` or `%`"),
        ("pass_rate drop > 2 pts", "column 20: expected `points` or `%` after the amount, found \"pts\""),
        ("mean_score drop > 0.05 points", "column 24: expected `%` or nothing after the amount, found \"points\""),
        ("cost rise > 20% now", "column 17: unexpected \"now\" after the rule"),
        ("cost rise >", "column 12: expected an amount (a number at least 0), found \"\""),
        ("", "column 1: expected a metric"),
    ] {
        let got = Rule::parse(text).unwrap_err();
        assert!(got.starts_with(&format!("--gate {text:?}: {error}")), "{text}: {got}");
    }
}

#[test]
fn the_f1_rule_is_judged_by_the_paired_bootstrap() {
    // 8 cases with 2 expected findings each: the base finds both, the new one
    // finds one (F1 1 → 0.67) in every case, or in two cases only (noise).
    let results = |found: &[usize]| {
        let cases = found
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let tally = Tally { matched: *m, expected: 2, reported: *m };
                let mut score = Score::new("findings", *m == 2, String::new());
                score.findings = Some(tally);
                CaseResult { scores: vec![score], ..case(&format!("c{i}"), "w.sr", 1, true) }
            })
            .collect();
        Results::of(cases)
    };
    let rule = rules(&["f1 drop > 0.03"]);
    let base = results(&[2; 8]);
    let c = compare(&base, &results(&[1; 8]), &rule).unwrap();
    let f1 = &c.variants[0].findings.as_ref().unwrap().f1;
    assert_eq!(f1.test, "paired-bootstrap");
    assert!(c.regressed && f1.high.unwrap() < 0.0, "{}", c.text());
    let c = compare(&base, &results(&[2, 2, 1, 2, 2, 2, 1, 2]), &rule).unwrap();
    assert!(!c.regressed && c.gate[0].moved.unwrap() > 0.03, "{}", c.text());
    // Recall halves with it (1 → 0.5) while precision stays 1: only the recall rule fails.
    let both = rules(&["recall drop > 10%", "precision drop > 0"]);
    let c = compare(&base, &results(&[1; 8]), &both).unwrap();
    assert_eq!(c.gate.iter().map(|j| j.failed).collect::<Vec<_>>(), [true, false], "{}", c.text());
    assert!(!compare(&base, &results(&[2, 2, 1, 2, 2, 2, 1, 2]), &both).unwrap().regressed);
}

#[test]
fn the_tokens_rule_fails_on_a_significant_rise_only() {
    let used = |tokens: &[u64]| {
        Results::of(
            tokens
                .iter()
                .enumerate()
                .map(|(i, t)| CaseResult {
                    tokens: Tokens { input: *t, output: 0 },
                    ..case(&format!("c{i}"), "w.sr", 1, true)
                })
                .collect(),
        )
    };
    let rule = rules(&["tokens rise > 1000"]);
    let base = used(&[1000, 1200, 900, 1100, 1000, 1300, 800, 1000]);
    let c = compare(&base, &used(&[3000, 3200, 2900, 3100, 3000, 3300, 2800, 3000]), &rule).unwrap();
    assert!(c.regressed && (c.gate[0].moved.unwrap() - 2000.0).abs() < 1e-9, "{}", c.text());
    // 6,000 more in half the cases and up to 800 fewer in the rest: 2,612 more
    // on average, beyond the amount, but only the 32 of 256 sign flips that keep
    // the four rises together reach it (p = 0.125).
    let mixed = used(&[7000, 400, 6900, 300, 7000, 600, 6800, 200]);
    let c = compare(&base, &mixed, &rule).unwrap();
    assert!(!c.regressed && c.gate[0].moved.unwrap() > 1000.0, "{}", c.text());
    assert!((c.gate[0].p_value.unwrap() - 0.125).abs() < 1e-12, "{}", c.text());
}

#[test]
fn the_cost_rule_reads_a_rise_relative_to_the_base() {
    let priced = |costs: &[f64]| {
        Results::of(
            costs
                .iter()
                .enumerate()
                .map(|(i, c)| CaseResult { cost_usd: Some(*c), ..case(&format!("c{i}"), "w.sr", 1, true) })
                .collect(),
        )
    };
    let rule = rules(&["cost rise > 20%"]);
    let base = priced(&[0.010, 0.012, 0.008, 0.011, 0.009, 0.010, 0.012, 0.008]);
    // Every case 50% dearer: p = 2 / 2^8.
    let dearer = priced(&[0.015, 0.018, 0.012, 0.0165, 0.0135, 0.015, 0.018, 0.012]);
    let c = compare(&base, &dearer, &rule).unwrap();
    assert!(c.regressed && (c.gate[0].moved.unwrap() - 50.0).abs() < 1e-9, "{}", c.text());
    // 10% dearer everywhere is significant but within 20%.
    let bit = priced(&[0.011, 0.0132, 0.0088, 0.0121, 0.0099, 0.011, 0.0132, 0.0088]);
    assert!(!compare(&base, &bit, &rule).unwrap().regressed);
    // 0.012 dearer in half the cases, 0.004 cheaper in the rest: 40% dearer on
    // average, beyond 20%, but 72 of the 256 sign flips reach that sum (p =
    // 0.28, as scipy.stats.permutation_test gives): noise.
    let mixed = priced(&[0.022, 0.008, 0.020, 0.007, 0.021, 0.006, 0.024, 0.004]);
    let c = compare(&base, &mixed, &rule).unwrap();
    assert!(!c.regressed && (c.gate[0].moved.unwrap() - 40.0).abs() < 1e-6, "{}", c.text());
    assert!((c.gate[0].p_value.unwrap() - 72.0 / 256.0).abs() < 1e-12, "{}", c.text());
}

/// Seed 003's question, "is the structured workflow better than a single
/// agent?", as its benchmark had it: 6 review cases run by `review.sr@solo`
/// and `review.sr@structured` (one results set), structured passing two
/// cases solo fails and failing one it passes, ahead on mean score and F1,
/// and five times the cost in every case.
fn seed_003() -> Results {
    // (passed, score, findings matched of 2 expected and reported, cost) per case.
    let solo = [
        (false, 0.0, (0, 1), 0.01),
        (false, 0.1, (1, 2), 0.01),
        (true, 0.95, (2, 2), 0.01),
        (true, 0.6, (1, 1), 0.01),
        (true, 0.7, (2, 3), 0.01),
        (false, 0.2, (0, 0), 0.01),
    ];
    let structured = [
        (true, 1.0, (2, 2), 0.05),
        (true, 0.9, (2, 3), 0.05),
        (false, 0.05, (1, 2), 0.05),
        (true, 0.8, (2, 2), 0.05),
        (true, 0.8, (2, 2), 0.05),
        (false, 0.32, (1, 2), 0.05),
    ];
    let mut cases = Vec::new();
    for (entry, runs) in [("solo", solo), ("structured", structured)] {
        for (i, (passed, score, (matched, reported), cost)) in runs.into_iter().enumerate() {
            let mut findings = Score::new("findings", passed, String::new());
            findings.findings = Some(Tally { matched, expected: 2, reported });
            cases.push(CaseResult {
                entry: Some(entry.into()),
                passed,
                score,
                scores: vec![findings],
                cost_usd: Some(cost),
                ..case(&format!("case-{i}"), "review.sr", 1, passed)
            });
        }
    }
    Results::of(cases)
}

#[test]
fn the_verdict_answers_seed_003s_question_in_words() {
    let results = seed_003();
    let pair = Options { variants: Some(("solo".into(), "structured".into())), ..options() };
    let c = compare(&results, &results, &pair).unwrap();
    assert!(!c.regressed, "{}", c.text());
    expect_test::expect!["review@structured vs review@solo: no significant difference in pass rate (+16.7 points, p = 1.0), mean score (+0.22, p = 0.34) or F1 (+0.23, p = 0.22); cost +400% (p = 0.031). 6 cases cannot detect a pass-rate difference under 100 points (about 134 would detect +16.7 points with 80% power)."].assert_eq(&c.verdict.join("\n"));
    // The summary of the evaluation says the same.
    assert_eq!(verdicts(&results), c.verdict);
    assert_eq!(serde_json::to_value(&c).unwrap()["verdict"], json!(c.verdict));
}
