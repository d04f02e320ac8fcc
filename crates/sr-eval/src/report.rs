//! `report.md`: whether the run is complete (in its first line, and when
//! not, each variant that never started or did not finish), with several
//! variants the verdict of each against the first, the summary
//! per variant with 95% intervals, precision, recall and F1 of `findings`
//! scorers, each scorer's pass rate, then every failed case run with its reasons.

use std::fmt::Write;

use crate::names::variant_name;
use crate::results::{CaseResult, Estimate, Results, Summary};
use crate::stats::Interval;

pub fn markdown(results: &Results) -> String {
    let mut out = match results.partial() {
        Some(partial) => format!("# Evaluation report ({partial})\n\n"),
        None => String::from("# Evaluation report\n\n"),
    };
    if !results.complete {
        let _ = writeln!(
            out,
            "{} case run(s) did not run; `sr eval --resume DIR` runs them and writes this report again.\n",
            results.missing.len()
        );
        for (variant, count, never) in results.not_run() {
            let what = if never { "never started" } else { "did not finish" };
            let _ = writeln!(out, "- {}: {what} ({count} case run(s) missing)", cell(&variant));
        }
        out.push('\n');
    }
    for sentence in crate::compare::verdicts(results) {
        let _ = writeln!(out, "{sentence}\n");
    }
    let epochs = results.cases.iter().map(|c| c.epoch).max().unwrap_or(1);
    if epochs > 1 {
        let _ = writeln!(out, "{epochs} epochs per case, reduced by {}; intervals are over cases.\n", results.reduce);
    }
    out.push_str("| variant | cases | runs passed | pass rate [95% CI] | mean score [95% CI] | tokens in/out | cost (USD) | p50 ms | p95 ms |\n");
    out.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for s in &results.summary {
        row(&mut out, s);
    }
    findings(&mut out, &results.summary);
    scorers(&mut out, &results.summary);
    let failures: Vec<&CaseResult> = results.cases.iter().filter(|c| !c.passed).collect();
    if failures.is_empty() {
        let which = if results.complete { "Every case run passed." } else { "Every case run that finished passed." };
        let _ = writeln!(out, "\n{which}");
        return out;
    }
    let _ = writeln!(out, "\n## Failures ({})\n", failures.len());
    for case in failures {
        let epoch = if epochs > 1 { format!(", epoch {}", case.epoch) } else { String::new() };
        let _ = writeln!(
            out,
            "### {} — {}{epoch} (score {:.2})\n",
            case.id,
            cell(&variant_name(&case.variant())),
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
        "| {} | {} | {}/{} | {:.1}% [{}] | {:.3} [{}] | {}/{} | {} | {} | {} |",
        cell(&variant_name(&s.variant())),
        s.cases,
        s.passed,
        s.total,
        s.pass_rate * 100.0,
        percent_interval(Some(s.pass_rate_ci)),
        s.mean_score,
        interval(s.mean_score_ci),
        s.tokens.input,
        s.tokens.output,
        cost,
        s.p50_latency_ms,
        s.p95_latency_ms
    );
}

fn findings(out: &mut String, summary: &[Summary]) {
    if summary.iter().all(|s| s.findings.is_none()) {
        return;
    }
    out.push_str("\n## Findings\n\nMicro: every case's findings added up; macro: the mean over cases (`n/a` where undefined: precision with nothing reported, recall with nothing expected).\n\n");
    out.push_str(
        "| variant | | precision [95% CI] | recall [95% CI] | F1 [95% CI] | matched / expected / reported |\n",
    );
    out.push_str("|---|---|---:|---:|---:|---:|\n");
    for s in summary {
        let Some(f) = &s.findings else { continue };
        let name = cell(&variant_name(&s.variant()));
        let t = f.tally;
        for (kind, prf, name, counts) in [
            ("micro", &f.micro, name.as_str(), format!("{} / {} / {}", t.matched, t.expected, t.reported)),
            ("macro", &f.macro_, "", String::new()),
        ] {
            let _ = writeln!(
                out,
                "| {name} | {kind} | {} | {} | {} | {counts} |",
                estimate(&prf.precision),
                estimate(&prf.recall),
                estimate(&prf.f1)
            );
        }
    }
}

fn scorers(out: &mut String, summary: &[Summary]) {
    let mut kinds: Vec<&str> = Vec::new();
    for rate in summary.iter().flat_map(|s| &s.scorers) {
        if !kinds.contains(&rate.kind.as_str()) {
            kinds.push(&rate.kind);
        }
    }
    if kinds.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n## Scorers (runs passed)\n\n| variant | {} |", kinds.join(" | "));
    let _ = writeln!(out, "|---|{}", "---:|".repeat(kinds.len()));
    for s in summary {
        let cells: Vec<String> = kinds
            .iter()
            .map(|kind| match s.scorers.iter().find(|r| r.kind == *kind) {
                Some(r) => format!("{}/{} ({:.1}%)", r.passed, r.total, r.pass_rate * 100.0),
                None => "-".to_string(),
            })
            .collect();
        let _ = writeln!(out, "| {} | {} |", cell(&variant_name(&s.variant())), cells.join(" | "));
    }
}

/// `0.71 [0.43, 1.00]`, or `n/a`.
pub fn estimate(e: &Estimate) -> String {
    match (e.value, e.low, e.high) {
        (Some(v), Some(low), Some(high)) => format!("{v:.2} [{low:.2}, {high:.2}]"),
        (Some(v), _, _) => format!("{v:.2}"),
        _ => "n/a".to_string(),
    }
}

fn interval(i: Option<Interval>) -> String {
    i.map_or("-".to_string(), |i| format!("{:.2}, {:.2}", i.low, i.high))
}

fn percent_interval(i: Option<Interval>) -> String {
    i.map_or("-".to_string(), |i| format!("{:.1}, {:.1}", i.low * 100.0, i.high * 100.0))
}

/// Text safe in a table cell.
fn cell(text: &str) -> String {
    one_line(text).replace('|', "\\|")
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests;
