//! `report.md`: the summary table, then every failed case with its reasons.

use std::fmt::Write;

use crate::results::{CaseResult, Results, Summary};

pub fn markdown(results: &Results) -> String {
    let mut out = String::from("# Evaluation report\n\n");
    out.push_str("| workload | entry | model | passed | pass rate | mean score | tokens in/out | cost (USD) | p50 ms | p95 ms |\n");
    out.push_str("|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for s in &results.summary {
        row(&mut out, s);
    }
    let failures: Vec<&CaseResult> = results.cases.iter().filter(|c| !c.passed).collect();
    if failures.is_empty() {
        out.push_str("\nEvery case passed.\n");
        return out;
    }
    let _ = writeln!(out, "\n## Failures ({})\n", failures.len());
    for case in failures {
        let _ = writeln!(
            out,
            "### {} — {} / {} / {} (score {:.2})\n",
            case.id,
            cell(&case.workload),
            cell(case.entry.as_deref().unwrap_or("-")),
            cell(case.model.as_deref().unwrap_or("default")),
            case.score
        );
        if let Some(error) = &case.error {
            let _ = writeln!(out, "- error: {}", one_line(error));
        }
        for score in case.scores.iter().filter(|s| !s.passed) {
            let _ = writeln!(out, "- {} ({:.2}): {}", score.kind, score.score, one_line(&score.detail));
        }
        out.push('\n');
    }
    out
}

fn row(out: &mut String, s: &Summary) {
    let cost = s.cost_usd.map_or("-".to_string(), |c| format!("{c:.4}"));
    let _ = writeln!(
        out,
        "| {} | {} | {} | {}/{} | {:.1}% | {:.3} | {}/{} | {} | {} | {} |",
        cell(&s.workload),
        cell(s.entry.as_deref().unwrap_or("-")),
        cell(s.model.as_deref().unwrap_or("default")),
        s.passed,
        s.total,
        s.pass_rate * 100.0,
        s.mean_score,
        s.tokens.input,
        s.tokens.output,
        cost,
        s.p50_latency_ms,
        s.p95_latency_ms
    );
}

/// Text safe in a table cell.
fn cell(text: &str) -> String {
    one_line(text).replace('|', "\\|")
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use expect_test::expect;
    use serde_json::Value;

    use super::*;
    use crate::results::Tokens;
    use crate::scorer::Score;

    fn case(id: &str, passed: bool, error: Option<&str>, scores: Vec<Score>) -> CaseResult {
        CaseResult {
            id: id.into(),
            workload: "bench/review.sr".into(),
            entry: None,
            model: Some("openai/gpt-4o|mini".into()),
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
        }
    }

    #[test]
    fn the_report_has_the_summary_and_each_failure_with_its_reasons() {
        let ok = Score { kind: "contains".into(), passed: true, score: 1.0, detail: "fine".into() };
        let bad =
            Score { kind: "regex".into(), passed: false, score: 0.0, detail: "the output does not match\n/x/".into() };
        let results = Results::of(vec![
            case("c1", true, None, vec![ok.clone()]),
            case("c2", false, None, vec![ok, bad]),
            case("c3", false, Some("timeout"), vec![]),
        ]);
        expect![[r#"
            # Evaluation report

            | workload | entry | model | passed | pass rate | mean score | tokens in/out | cost (USD) | p50 ms | p95 ms |
            |---|---|---|---:|---:|---:|---:|---:|---:|---:|
            | bench/review.sr | - | openai/gpt-4o\|mini | 1/3 | 33.3% | 0.667 | 300/60 | 0.0030 | 40 | 40 |

            ## Failures (2)

            ### c2 — bench/review.sr / - / openai/gpt-4o\|mini (score 0.50)

            - regex (0.00): the output does not match /x/

            ### c3 — bench/review.sr / - / openai/gpt-4o\|mini (score 0.50)

            - error: timeout

        "#]]
        .assert_eq(&markdown(&results));
    }
}
