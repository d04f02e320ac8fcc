use super::*;
use crate::scorer::Tally;
use crate::stats::{self, Interval};

pub(crate) fn case(id: &str, model: &str, passed: bool, score: f64, latency_ms: u64) -> CaseResult {
    CaseResult {
        id: id.into(),
        workload: "w.sr".into(),
        entry: None,
        model: Some(model.into()),
        epoch: 1,
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
        run: None,
    }
}

fn found(id: &str, epoch: u32, matched: usize, expected: usize, reported: usize) -> CaseResult {
    let tally = Tally { matched, expected, reported };
    let mut score = Score::new("findings", tally.score() >= 1.0, String::new());
    score.score = tally.score();
    score.findings = Some(tally);
    CaseResult { epoch, scores: vec![score], ..case(id, "a", tally.score() >= 1.0, tally.score(), 1) }
}

#[test]
fn the_summary_is_per_variant_with_nearest_rank_percentiles() {
    let mut cases: Vec<CaseResult> = (1..=20).map(|i| case(&format!("c{i}"), "a", i % 4 != 0, 0.5, i * 10)).collect();
    cases.push(case("c1", "b", true, 1.0, 7));
    cases[3].cost_usd = Some(0.25);
    cases[5].cost_usd = Some(0.5);
    let results = Results::of(cases);
    assert_eq!(results.summary.len(), 2);
    let a = &results.summary[0];
    assert_eq!((a.model.as_deref(), a.passed, a.total, a.cases), (Some("a"), 15, 20, 20));
    assert_eq!(a.pass_rate, 0.75);
    assert_eq!(a.mean_score, 0.5);
    assert_eq!(a.mean_score_ci, Some(Interval { low: 0.5, high: 0.5 }));
    // statsmodels' proportion_confint(15, 20, method="wilson") = (0.5312991, 0.8881383).
    assert!((a.pass_rate_ci.low - 0.5312991).abs() < 1e-6 && (a.pass_rate_ci.high - 0.8881383).abs() < 1e-6);
    assert_eq!(a.tokens, Tokens { input: 200, output: 40 });
    assert_eq!(a.cost_usd, Some(0.75));
    assert_eq!((a.p50_latency_ms, a.p95_latency_ms), (100, 190));
    assert_eq!(a.findings, None);
    let b = &results.summary[1];
    assert_eq!((b.passed, b.total, b.cost_usd, b.p50_latency_ms, b.p95_latency_ms), (1, 1, None, 7, 7));
    assert!((results.mean_score() - (20.0 * 0.5 + 1.0) / 21.0).abs() < 1e-12);
    assert_eq!(Results::of(vec![]).mean_score(), 0.0);
    assert!(results.complete && results.partial().is_none());
}

#[test]
fn a_case_counts_once_whatever_its_epochs_reduced_as_asked() {
    // c1 passes 2 of 3 epochs (scores 1, 1, 0.4); c2 fails all three (0.2, 0.5, 0).
    let runs = [("c1", 1, true, 1.0), ("c1", 2, false, 0.4), ("c1", 3, true, 1.0)]
        .into_iter()
        .chain([("c2", 1, false, 0.2), ("c2", 2, false, 0.5), ("c2", 3, false, 0.0)])
        .map(|(id, epoch, passed, score)| CaseResult { epoch, ..case(id, "a", passed, score, 1) })
        .collect::<Vec<_>>();
    let summary = |reduce| Results::assemble(&[], runs.clone(), reduce, None).summary[0].clone();
    let mean = summary(Reduce::Mean);
    assert_eq!((mean.cases, mean.passed, mean.total), (2, 2, 6));
    assert!((mean.pass_rate - (2.0 / 3.0 + 0.0) / 2.0).abs() < 1e-12);
    assert!((mean.mean_score - (0.8 + 0.7 / 3.0) / 2.0).abs() < 1e-12);
    // The interval is over the 2 cases, not the 6 runs.
    assert_eq!(mean.pass_rate_ci, stats::wilson(mean.pass_rate, 2));
    let max = summary(Reduce::Max);
    assert_eq!((max.pass_rate, max.mean_score), (0.5, 0.75));
    // pass@2 of 3 runs with 2 passing is 1; with none passing, 0.
    let pass2 = summary(Reduce::PassAt(2));
    assert_eq!((pass2.pass_rate, pass2.mean_score), (0.5, 0.5));
    // pass@5 of 3 runs is pass@3.
    assert_eq!(summary(Reduce::PassAt(5)).pass_rate, 0.5);
}

#[test]
fn findings_add_up_micro_and_average_macro_leaving_undefined_out() {
    // c1 right (P 1, R 1); c2 a miss (P undefined, R 0); c3 half right (P 0.5, R 0.5).
    let results = Results::of(vec![found("c1", 1, 1, 1, 1), found("c2", 1, 0, 1, 0), found("c3", 1, 1, 2, 2)]);
    let f = results.summary[0].findings.clone().unwrap();
    assert_eq!(f.tally, Tally { matched: 2, expected: 4, reported: 3 });
    let value = |e: Estimate| e.value.unwrap();
    assert!((value(f.micro.precision) - 2.0 / 3.0).abs() < 1e-12);
    assert!((value(f.micro.recall) - 0.5).abs() < 1e-12);
    assert!((value(f.micro.f1) - 4.0 / 7.0).abs() < 1e-12);
    assert!((value(f.macro_.precision) - 0.75).abs() < 1e-12, "c2 has no precision");
    assert!((value(f.macro_.recall) - 0.5).abs() < 1e-12);
    assert!((value(f.macro_.f1) - 0.5).abs() < 1e-12);
    for e in [f.micro.precision, f.micro.recall, f.micro.f1, f.macro_.f1] {
        let (low, high) = (e.low.unwrap(), e.high.unwrap());
        assert!(low <= e.value.unwrap() && e.value.unwrap() <= high && 0.0 <= low && high <= 1.0, "{e:?}");
    }
    // Nothing expected and nothing reported anywhere: every figure is undefined.
    let empty = Results::of(vec![found("c1", 1, 0, 0, 0)]);
    let f = empty.summary[0].findings.clone().unwrap();
    assert_eq!(f.micro.precision, Estimate { value: None, low: None, high: None });
    assert_eq!(f.macro_.f1.value, None);
    // Scorer pass rates count runs.
    assert_eq!(
        results.summary[0].scorers,
        [ScorerRate { kind: "findings".into(), passed: 1, total: 3, pass_rate: 1.0 / 3.0 }]
    );
}

#[test]
fn assembled_results_say_what_is_missing_and_read_back_the_same() {
    let key = |id: &str, epoch| RunKey {
        id: id.into(),
        workload: "w.sr".into(),
        entry: None,
        model: Some("a".into()),
        epoch,
    };
    let plan = [key("c1", 1), key("c2", 1), key("c3", 1)];
    let results = Results::assemble(
        &plan,
        vec![case("c3", "a", true, 1.0, 1), case("c1", "a", false, 0.0, 1)],
        Reduce::Mean,
        None,
    );
    assert_eq!(results.cases.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), ["c1", "c3"]);
    assert_eq!((results.complete, results.planned, results.finished), (false, 3, 2));
    assert_eq!(results.missing, [key("c2", 1)]);
    assert_eq!(results.partial().as_deref(), Some("partial: 2 of 3 cases"));
    let text = serde_json::to_string(&results).unwrap();
    assert_eq!(Results::read(&text).unwrap(), results);
    // Counts are recomputed on reading, whatever the file says.
    let mut doctored: Value = serde_json::from_str(&text).unwrap();
    doctored["complete"] = Value::Bool(true);
    doctored["planned"] = 2.into();
    doctored["summary"] = Value::Null;
    assert_eq!(Results::read(&doctored.to_string()).unwrap(), results);
    let epochs =
        Results::assemble(&[key("c1", 1), key("c1", 2)], vec![case("c1", "a", true, 1.0, 1)], Reduce::Mean, None);
    assert_eq!(epochs.partial().as_deref(), Some("partial: 1 of 2 case runs"));
}
