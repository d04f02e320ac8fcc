//! `report.html`: one self-contained page (inline style and SVG, no script,
//! nothing fetched) with the summary table, a chart of pass rate and cost per
//! variant, and every case expandable to its scores, output and transcript.
//! Its content security policy lets a browser load nothing but the inline
//! style, so a page that reached for the network, or ran a script, would be
//! blocked and say so in the browser's console (see sr-cli's `eval_report_html` test).

use std::fmt::Write;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use serde_json::Value;

use crate::compare::variant_name;
use crate::results::{CaseResult, Results, Summary};

/// Transcript lines shown per case; the rest are counted.
const MAX_EVENTS: usize = 60;
/// Characters shown of one event.
const MAX_EVENT_CHARS: usize = 240;
/// Bytes of an events file read for its transcript.
const MAX_EVENTS_BYTES: u64 = 1 << 20;

const STYLE: &str = "body{font:14px system-ui,sans-serif;margin:2em;color:#222}\
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}\
td:first-child,th:first-child{text-align:left}details{margin:4px 0}summary{cursor:pointer}\
.pass summary{color:#176f2c}.fail summary{color:#b3261e}pre{background:#f6f6f6;padding:6px;white-space:pre-wrap}\
ol{font:12px monospace}";

/// Nothing but the page's inline style may load or run.
const POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'";

/// The page for `results`; transcripts are read from the events files under `out`.
pub fn report(results: &Results, out: &Path) -> String {
    let mut page = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{POLICY}\"><title>Evaluation report</title>\
         <style>{STYLE}</style></head><body>\n<h1>Evaluation report</h1>\n"
    );
    summary_table(&mut page, &results.summary);
    chart(&mut page, &results.summary);
    let _ = writeln!(page, "<h2>Cases ({})</h2>", results.cases.len());
    for case in &results.cases {
        case_details(&mut page, case, out);
    }
    page.push_str("</body></html>\n");
    page
}

fn summary_table(page: &mut String, summary: &[Summary]) {
    page.push_str("<table id=\"summary\"><thead><tr><th>variant</th><th>passed</th><th>pass rate</th>\
         <th>mean score</th><th>tokens in/out</th><th>cost (USD)</th><th>p50 ms</th><th>p95 ms</th></tr></thead><tbody>\n");
    for s in summary {
        let _ = writeln!(
            page,
            "<tr><td>{}</td><td>{}/{}</td><td>{:.1}%</td><td>{:.3}</td><td>{}/{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&variant_name(&s.variant())),
            s.passed,
            s.total,
            s.pass_rate * 100.0,
            s.mean_score,
            s.tokens.input,
            s.tokens.output,
            s.cost_usd.map_or("-".to_string(), |c| format!("{c:.4}")),
            s.p50_latency_ms,
            s.p95_latency_ms
        );
    }
    page.push_str("</tbody></table>\n");
}

/// Two bars per variant: pass rate (of 100%) and cost (of the dearest
/// variant), or tokens when no variant has a price.
fn chart(page: &mut String, summary: &[Summary]) {
    let priced = summary.iter().any(|s| s.cost_usd.is_some());
    let second = |s: &Summary| {
        if priced { s.cost_usd.unwrap_or(0.0) } else { (s.tokens.input + s.tokens.output) as f64 }
    };
    let most = summary.iter().map(second).fold(0.0, f64::max);
    let (label_w, bar_w, row_h) = (260.0, 300.0, 44.0);
    let height = 30.0 + row_h * summary.len() as f64;
    let _ = writeln!(
        page,
        "<h2>Pass rate and {}</h2>\n<svg id=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{height}\" role=\"img\">",
        if priced { "cost" } else { "tokens" },
        label_w + bar_w + 120.0
    );
    for (i, s) in summary.iter().enumerate() {
        let y = 10.0 + row_h * i as f64;
        let share = if most > 0.0 { second(s) / most } else { 0.0 };
        let value = if priced { format!("${:.4}", second(s)) } else { format!("{} tokens", second(s)) };
        let _ = writeln!(
            page,
            "<text x=\"0\" y=\"{}\" font-size=\"12\">{}</text>\
             <rect class=\"pass-rate\" x=\"{label_w}\" y=\"{y}\" width=\"{:.1}\" height=\"16\" fill=\"#2e7d32\"/>\
             <text x=\"{:.1}\" y=\"{}\" font-size=\"11\">{:.1}%</text>\
             <rect class=\"cost\" x=\"{label_w}\" y=\"{}\" width=\"{:.1}\" height=\"16\" fill=\"#5c6bc0\"/>\
             <text x=\"{:.1}\" y=\"{}\" font-size=\"11\">{}</text>",
            y + 22.0,
            escape(&variant_name(&s.variant())),
            bar_w * s.pass_rate,
            label_w + bar_w * s.pass_rate + 4.0,
            y + 12.0,
            s.pass_rate * 100.0,
            y + 18.0,
            bar_w * share,
            label_w + bar_w * share + 4.0,
            y + 30.0,
            escape(&value)
        );
    }
    page.push_str("</svg>\n");
}

fn case_details(page: &mut String, case: &CaseResult, out: &Path) {
    let verdict = if case.passed { "pass" } else { "fail" };
    let _ = writeln!(
        page,
        "<details class=\"case {verdict}\"><summary>{} — {} — {} (score {:.2}, {} ms)</summary>",
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
        transcript(page, &out.join(events));
    }
    page.push_str("</details>\n");
}

/// One line per event: its type, where it came from, and its fields.
fn transcript(page: &mut String, events: &Path) {
    let Ok(file) = std::fs::File::open(events) else {
        page.push_str("<p>no transcript</p>\n");
        return;
    };
    page.push_str("<ol class=\"transcript\">");
    let mut shown = 0;
    let mut more = 0;
    for line in BufReader::new(file.take(MAX_EVENTS_BYTES)).lines().map_while(Result::ok) {
        if shown == MAX_EVENTS {
            more += 1;
            continue;
        }
        let Ok(Value::Object(mut event)) = serde_json::from_str::<Value>(&line) else { continue };
        let kind = event.remove("type").and_then(|t| t.as_str().map(str::to_string)).unwrap_or_default();
        let path = event.remove("path").map(|p| p.to_string()).unwrap_or_default();
        for key in ["seq", "invocation_id", "ts"] {
            event.remove(key);
        }
        let fields = Value::Object(event).to_string();
        let fields: String = fields.chars().take(MAX_EVENT_CHARS).collect();
        let _ = write!(page, "<li><b>{}</b> {} {}</li>", escape(&kind), escape(&path), escape(&fields));
        shown += 1;
    }
    page.push_str("</ol>\n");
    if more > 0 {
        let _ = writeln!(page, "<p>{more} more event(s) in {}</p>", escape(&events.display().to_string()));
    }
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
