//! `report.html`: one self-contained page (inline style and SVG, no script,
//! nothing fetched): whether the run is complete (and what never started),
//! with several variants the verdict of each against the first, the summary table with 95%
//! intervals, precision, recall and F1, each scorer's pass rate, a chart of
//! each variant's figures with their intervals ([`chart`]), and every case
//! run expandable to its scores, output and transcript ([`transcript`]),
//! filtered by outcome and by failed scorer with radio buttons and CSS alone.
//! Its content security policy lets a browser load nothing but the inline
//! style, so a page that reached for the network, or ran a script, would be
//! blocked and say so in the browser's console (see sr-cli's `eval_report_html` test).

mod chart;
pub mod compare;
mod transcript;

use std::fmt::Write;
use std::path::Path;

use serde_json::Value;
use sr_runtime::tools::Jail;

use crate::names::{short_name, variant_name};
use crate::report::estimate;
use crate::results::{CaseResult, Results, Summary, VariantKey};

const STYLE: &str = "body{font:14px system-ui,sans-serif;margin:2em;color:#222}\
table{border-collapse:collapse;margin:0 0 1em}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}\
td:first-child,th:first-child{text-align:left}details{margin:4px 0}summary{cursor:pointer}\
.pass>summary{color:#176f2c}.fail>summary{color:#b3261e}pre{background:#f6f6f6;padding:6px;white-space:pre-wrap}\
.partial{background:#fff4e5;border-left:4px solid #e65100;padding:6px 10px}\
.verdict{font-size:15px;background:#eef3fb;border-left:4px solid #3949ab;padding:6px 10px}\
.filter{margin:0 0 8px}.filter label{margin-right:12px}\
ol.steps{font:12px monospace;padding-left:2.5em}ol.steps li{margin:2px 0}.step-model b{color:#3949ab}\
.step-tool b{color:#00796b}.step-error b{color:#b3261e}details.other{font:12px monospace;color:#555}";

/// Nothing but the page's inline style may load or run.
const POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'";

/// The page for `results`; transcripts are read from the events files under
/// `out`, through a read-only jail on it: results name their events files,
/// and results from elsewhere must not put a file outside `out` in the page.
pub fn report(results: &Results, out: &Path) -> String {
    let jail = Jail::read_only(out).ok();
    let title = match results.partial() {
        Some(partial) => format!("Evaluation report ({partial})"),
        None => "Evaluation report".to_string(),
    };
    let kinds = scorer_kinds(results);
    let mut page = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{POLICY}\"><title>{title}</title>\
         <style>{STYLE}{}</style></head><body>\n<h1>{title}</h1>\n",
        filter_style(&kinds)
    );
    if !results.complete {
        let _ = writeln!(
            page,
            "<p class=\"partial\">{} of {} planned case runs finished; {} did not run (<code>sr eval --resume DIR</code> runs them).</p>",
            results.finished,
            results.planned,
            results.missing.len()
        );
        page.push_str("<ul class=\"partial\">\n");
        for (variant, count, never) in results.not_run() {
            let what = if never { "never started" } else { "did not finish" };
            let _ = writeln!(page, "<li>{}: {what} ({count} case run(s) missing)</li>", escape(&variant));
        }
        page.push_str("</ul>\n");
    }
    for sentence in crate::compare::verdicts(results) {
        let _ = writeln!(page, "<p class=\"verdict\">{}</p>", escape(&sentence));
    }
    let variants: Vec<VariantKey> = results.summary.iter().map(Summary::variant).collect();
    summary_table(&mut page, &results.summary, &variants);
    findings_table(&mut page, &results.summary, &variants);
    chart::chart(&mut page, &results.summary, &variants);
    let _ = writeln!(page, "<h2>Cases ({})</h2>", results.cases.len());
    filter(&mut page, &kinds);
    page.push_str("<div id=\"cases\">\n");
    for case in &results.cases {
        case_details(&mut page, case, jail.as_ref());
    }
    page.push_str("</div>\n</body></html>\n");
    page
}

/// A variant's short name with its full name to hover.
fn label(key: &VariantKey, all: &[VariantKey]) -> String {
    format!("<span title=\"{}\">{}</span>", escape(&variant_name(key)), escape(&short_name(key, all)))
}

fn summary_table(page: &mut String, summary: &[Summary], all: &[VariantKey]) {
    page.push_str("<table id=\"summary\"><thead><tr><th>variant</th><th>cases</th><th>runs passed</th><th>pass rate [95% CI]</th>\
         <th>mean score [95% CI]</th><th>tokens in/out</th><th>cost (USD)</th><th>p50 ms</th><th>p95 ms</th></tr></thead><tbody>\n");
    for s in summary {
        let ci = |i: Option<crate::stats::Interval>, scale: f64, digits: usize| {
            i.map_or(String::new(), |i| format!(" [{:.digits$}, {:.digits$}]", i.low * scale, i.high * scale))
        };
        let _ = writeln!(
            page,
            "<tr><td>{}</td><td>{}</td><td>{}/{}</td><td>{:.1}%{}</td><td>{:.3}{}</td><td>{}/{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            label(&s.variant(), all),
            s.cases,
            s.passed,
            s.total,
            s.pass_rate * 100.0,
            ci(Some(s.pass_rate_ci), 100.0, 1),
            s.mean_score,
            ci(s.mean_score_ci, 1.0, 2),
            s.tokens.input,
            s.tokens.output,
            s.cost_usd.map_or("-".to_string(), |c| format!("{c:.4}")),
            s.p50_latency_ms,
            s.p95_latency_ms
        );
    }
    page.push_str("</tbody></table>\n");
}

fn findings_table(page: &mut String, summary: &[Summary], all: &[VariantKey]) {
    if summary.iter().all(|s| s.findings.is_none()) {
        return;
    }
    page.push_str(
        "<h2>Findings</h2>\n<table id=\"findings\"><thead><tr><th>variant</th><th></th><th>precision [95% CI]</th>\
         <th>recall [95% CI]</th><th>F1 [95% CI]</th><th>matched / expected / reported</th></tr></thead><tbody>\n",
    );
    for s in summary {
        let Some(f) = &s.findings else { continue };
        let t = f.tally;
        for (kind, prf, name, counts) in [
            ("micro", &f.micro, label(&s.variant(), all), format!("{} / {} / {}", t.matched, t.expected, t.reported)),
            ("macro", &f.macro_, String::new(), String::new()),
        ] {
            let _ = writeln!(
                page,
                "<tr><td>{name}</td><td>{kind}</td><td>{}</td><td>{}</td><td>{}</td><td>{counts}</td></tr>",
                estimate(&prf.precision),
                estimate(&prf.recall),
                estimate(&prf.f1)
            );
        }
    }
    page.push_str(
        "</tbody></table>\n<p>Micro: every case's findings added up; macro: the mean over cases; \
         n/a where undefined (precision with nothing reported, recall with nothing expected).</p>\n",
    );
}

/// The scorer kinds of the results that can name a CSS class.
fn scorer_kinds(results: &Results) -> Vec<String> {
    let mut kinds: Vec<String> = Vec::new();
    for score in results.cases.iter().flat_map(|c| &c.scores) {
        let plain = score.kind.chars().all(|c| c.is_ascii_lowercase() || c == '_');
        if plain && !score.kind.is_empty() && !kinds.contains(&score.kind) {
            kinds.push(score.kind.clone());
        }
    }
    kinds
}

/// Radio buttons before the cases; CSS hides the cases they rule out.
fn filter(page: &mut String, kinds: &[String]) {
    page.push_str("<div class=\"filter\">outcome:</div>\n");
    for (id, text, checked) in [("all", "all", true), ("pass", "passed", false), ("fail", "failed", false)] {
        let checked = if checked { " checked" } else { "" };
        let _ = writeln!(
            page,
            "<input type=\"radio\" name=\"outcome\" id=\"outcome-{id}\"{checked}><label for=\"outcome-{id}\">{text}</label>"
        );
    }
    page.push_str("<div class=\"filter\">failed scorer:</div>\n");
    page.push_str(
        "<input type=\"radio\" name=\"scorer\" id=\"scorer-any\" checked><label for=\"scorer-any\">any</label>\n",
    );
    for kind in kinds {
        let _ = writeln!(
            page,
            "<input type=\"radio\" name=\"scorer\" id=\"scorer-{kind}\"><label for=\"scorer-{kind}\">{kind}</label>"
        );
    }
}

fn filter_style(kinds: &[String]) -> String {
    let mut style =
        String::from("#outcome-pass:checked~#cases .case.fail,#outcome-fail:checked~#cases .case.pass{display:none}");
    for kind in kinds {
        let _ = write!(style, "#scorer-{kind}:checked~#cases .case:not(.failed-{kind}){{display:none}}");
    }
    style
}

fn case_details(page: &mut String, case: &CaseResult, jail: Option<&Jail>) {
    let verdict = if case.passed { "pass" } else { "fail" };
    let mut classes = format!("case {verdict}");
    for score in case.scores.iter().filter(|s| !s.passed) {
        if score.kind.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
            let _ = write!(classes, " failed-{}", score.kind);
        }
    }
    let epoch = if case.epoch > 1 { format!(", epoch {}", case.epoch) } else { String::new() };
    let _ = writeln!(
        page,
        "<details class=\"{classes}\"><summary>{} — {} — {}{epoch} (score {:.2}, {} ms)</summary>",
        escape(&case.id),
        escape(&variant_name(&case.variant())),
        verdict.to_uppercase(),
        case.score,
        case.latency_ms
    );
    if let Some(error) = &case.error {
        let _ = writeln!(page, "<p>error: {}</p>", escape(error));
    }
    page.push_str("<ul>");
    for s in &case.scores {
        let mark = if s.passed { "✓" } else { "✗" };
        let _ = write!(page, "<li>{mark} {} ({:.2}): {}</li>", escape(&s.kind), s.score, escape(&s.detail));
    }
    page.push_str("</ul>\n");
    let output = match &case.output {
        Value::String(text) => text.clone(),
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    };
    let _ = writeln!(page, "<pre class=\"output\">{}</pre>", escape(&output));
    if let Some(events) = &case.events {
        transcript::transcript(page, jail, Path::new(events));
    }
    page.push_str("</details>\n");
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests;
