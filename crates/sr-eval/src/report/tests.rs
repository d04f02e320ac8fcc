use expect_test::expect;
use serde_json::Value;

use super::*;
use crate::config::Reduce;
use crate::results::{RunKey, Tokens};
use crate::scorer::{Score, Tally};

fn case(id: &str, epoch: u32, passed: bool, error: Option<&str>, scores: Vec<Score>) -> CaseResult {
    CaseResult {
        id: id.into(),
        workload: "bench/review.sr".into(),
        entry: None,
        model: Some("openai/gpt-4o|mini".into()),
        epoch,
        passed,
        score: if passed { 1.0 } else { 0.5 },
        scores,
        output: Value::Null,
        error: error.map(str::to_string),
        tokens: Tokens { input: 100, output: 20 },
        cost_usd: Some(0.001),
        latency_ms: 40,
        model_calls: 2,
        events: None,
        run: None,
    }
}

#[test]
fn the_report_has_the_summary_and_each_failure_with_its_reasons() {
    let ok = Score::new("contains", true, "fine".into());
    let bad = Score::new("regex", false, "the output does not match\n/x/".into());
    let results = Results::of(vec![
        case("c1", 1, true, None, vec![ok.clone()]),
        case("c2", 1, false, None, vec![ok, bad]),
        case("c3", 1, false, Some("timeout"), vec![]),
    ]);
    expect![[r#"
        # Evaluation report

        | variant | cases | runs passed | pass rate [95% CI] | mean score [95% CI] | tokens in/out | cost (USD) | p50 ms | p95 ms |
        |---|---:|---:|---:|---:|---:|---:|---:|---:|
        | bench/review.sr × openai/gpt-4o\|mini | 3 | 1/3 | 33.3% [6.1, 79.2] | 0.667 [0.50, 1.00] | 300/60 | 0.0030 | 40 | 40 |

        ## Scorers (runs passed)

        | variant | contains | regex |
        |---|---:|---:|
        | bench/review.sr × openai/gpt-4o\|mini | 2/2 (100.0%) | 0/1 (0.0%) |

        ## Failures (2)

        ### c2 — bench/review.sr × openai/gpt-4o\|mini (score 0.50)

        - regex (0.00): the output does not match /x/

        ### c3 — bench/review.sr × openai/gpt-4o\|mini (score 0.50)

        - error: timeout

    "#]]
    .assert_eq(&markdown(&results));
}

#[test]
fn a_partial_run_says_so_first_and_findings_have_their_figures() {
    let finding = |matched, reported| {
        let tally = Tally { matched, expected: 1, reported };
        let mut score = Score::new("findings", tally.score() >= 1.0, "d".into());
        score.findings = Some(tally);
        score
    };
    let key = |id: &str, epoch| RunKey {
        id: id.into(),
        workload: "bench/review.sr".into(),
        entry: None,
        model: Some("openai/gpt-4o|mini".into()),
        epoch,
    };
    let plan = [key("c1", 1), key("c1", 2), key("c2", 1), key("c2", 2)];
    let cases = vec![case("c1", 1, true, None, vec![finding(1, 1)]), case("c2", 1, false, None, vec![finding(0, 0)])];
    let results = Results::assemble(&plan, cases, Reduce::Mean, None);
    let report = markdown(&results);
    assert!(
        report.starts_with("# Evaluation report (partial: 2 of 4 case runs)\n\n2 case run(s) did not run;"),
        "{report}"
    );
    let findings = &report[report.find("## Findings").unwrap()..report.find("## Scorers").unwrap()];
    expect![[r#"
        ## Findings

        Micro: every case's findings added up; macro: the mean over cases (`n/a` where undefined: precision with nothing reported, recall with nothing expected).

        | variant | | precision [95% CI] | recall [95% CI] | F1 [95% CI] | matched / expected / reported |
        |---|---|---:|---:|---:|---:|
        | bench/review.sr × openai/gpt-4o\|mini | micro | 1.00 [1.00, 1.00] | 0.50 [0.00, 1.00] | 0.67 [0.00, 1.00] | 1 / 2 / 1 |
        |  | macro | 1.00 [1.00, 1.00] | 0.50 [0.00, 1.00] | 0.50 [0.00, 1.00] |  |

    "#]]
    .assert_eq(findings);
}

#[test]
fn a_partial_report_lists_the_variants_that_never_started() {
    let key = |id: &str, workload: &str| RunKey {
        id: id.into(),
        workload: workload.into(),
        entry: None,
        model: Some("openai/gpt-4o|mini".into()),
        epoch: 1,
    };
    // review.sr ran one of its two cases, which passed; split.sr never started.
    let plan =
        [key("c1", "bench/review.sr"), key("c2", "bench/review.sr"), key("c1", "split.sr"), key("c2", "split.sr")];
    let results = Results::assemble(&plan, vec![case("c1", 1, true, None, vec![])], Reduce::Mean, None);
    let report = markdown(&results);
    assert!(
        report.contains(
            "- bench/review.sr × openai/gpt-4o\\|mini: did not finish (1 case run(s) missing)\n\
             - split.sr × openai/gpt-4o\\|mini: never started (2 case run(s) missing)\n"
        ),
        "{report}"
    );
    assert!(report.ends_with("\nEvery case run that finished passed.\n") && !report.contains("Every case run passed"));
    let page = crate::html::report(&results, std::path::Path::new("."));
    assert!(page.contains("<li>split.sr × openai/gpt-4o|mini: never started (2 case run(s) missing)</li>"), "{page}");
}
