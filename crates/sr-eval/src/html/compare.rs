//! `compare.html`: a comparison as one self-contained page (`sr eval compare
//! --html`, and `sr eval --baseline`'s `compare.html`): the verdict, the
//! gate's rules and outcome, each variant's paired differences with their
//! intervals and p-values, what is missing, and every case that changed
//! with the base's and the new runs' transcripts side by side.

use std::fmt::Write;
use std::path::Path;

use sr_runtime::tools::Jail;

use super::{POLICY, STYLE, escape, transcript};
use crate::compare::verdict::p_text;
use crate::compare::{CaseChange, Comparison, Difference};
use crate::names::variant_name;
use crate::results::{CaseResult, Results};

const SIDE_BY_SIDE: &str = ".sides{display:grid;grid-template-columns:1fr 1fr;gap:12px}.sides>div{min-width:0;overflow-wrap:anywhere}\
.gate-fail{color:#b3261e;font-weight:bold}.gate-pass{color:#176f2c}.few{color:#8a5a00}";

/// The page of `comparison`; each side's transcripts are read from the
/// events files under its directory, through a read-only jail on it.
pub fn page(comparison: &Comparison, base: (&Results, &Path), new: (&Results, &Path)) -> String {
    let outcome = if comparison.regressed { "the gate fails" } else { "the gate passes" };
    let title = format!("Comparison: {outcome}");
    let mut page = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{POLICY}\"><title>{title}</title>\
         <style>{STYLE}{SIDE_BY_SIDE}</style></head><body>\n<h1>{title}</h1>\n"
    );
    for sentence in &comparison.verdict {
        let _ = writeln!(page, "<p class=\"verdict\">{}</p>", escape(sentence));
    }
    if let Some(partial) = &comparison.partial {
        let _ = writeln!(page, "<p class=\"partial\">The new results are {}.</p>", escape(partial));
    }
    gate(&mut page, comparison);
    for v in &comparison.variants {
        let name = if v.base == v.new { v.base.clone() } else { format!("{} → {}", v.base, v.new) };
        let _ = writeln!(page, "<h2>{} ({} paired cases)</h2>", escape(&name), v.cases);
        page.push_str(
            "<table class=\"differences\"><thead><tr><th>figure</th><th>base</th><th>new</th><th>difference</th>\
             <th>95% interval</th><th>p-value</th><th>test</th></tr></thead><tbody>\n",
        );
        let mut rows = vec![("pass rate", &v.pass_rate, 100.0), ("mean score", &v.mean_score, 1.0)];
        if let Some(f) = &v.findings {
            rows.extend([("F1 (micro)", &f.f1, 1.0), ("precision", &f.precision, 1.0), ("recall", &f.recall, 1.0)]);
        }
        rows.push(("tokens/run", &v.tokens, 1.0));
        if let Some(cost) = &v.cost_usd {
            rows.push(("USD/run", cost, 1.0));
        }
        for (figure, d, scale) in rows {
            row(&mut page, figure, d, scale);
        }
        page.push_str("</tbody></table>\n");
    }
    missing(&mut page, comparison);
    changed(&mut page, comparison, base, new);
    page.push_str("</body></html>\n");
    page
}

fn gate(page: &mut String, comparison: &Comparison) {
    let _ = writeln!(
        page,
        "<h2>Gate</h2>\n<p>A rule fails on a change beyond its amount with p &lt; {}.</p>\n\
         <table id=\"gate\"><thead><tr><th>rule</th><th>variant</th><th>moved</th><th>p-value</th>\
         <th>outcome</th></tr></thead><tbody>",
        comparison.significance
    );
    for j in &comparison.gate {
        let (class, outcome) = if j.failed { ("gate-fail", "FAIL") } else { ("gate-pass", "pass") };
        let _ = writeln!(
            page,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"{class}\">{outcome}</td></tr>",
            escape(&j.rule),
            escape(&j.variant),
            j.moved.map_or("n/a".to_string(), |m| format!("{:.3}", m + 0.0)),
            j.p_value.map_or("n/a".to_string(), p_text),
        );
    }
    page.push_str("</tbody></table>\n");
}

fn row(page: &mut String, figure: &str, d: &Difference, scale: f64) {
    let value = |v: Option<f64>| v.map_or("n/a".to_string(), |v| format!("{:.3}", v * scale));
    let signed = |v: f64| format!("{:+.3}", v * scale);
    let interval = match (d.low, d.high) {
        (Some(low), Some(high)) => format!("[{}, {}]", signed(low), signed(high)),
        _ if d.too_few => "<span class=\"few\">too few cases to conclude</span>".to_string(),
        _ => "n/a".to_string(),
    };
    let _ = writeln!(
        page,
        "<tr><td>{figure}</td><td>{}</td><td>{}</td><td>{}</td><td>{interval}</td><td>{}</td><td>{}</td></tr>",
        value(d.base),
        value(d.new),
        d.difference.map_or("n/a".to_string(), signed),
        d.p_value.map_or("n/a".to_string(), p_text),
        d.test
    );
}

fn missing(page: &mut String, comparison: &Comparison) {
    let missing = &comparison.missing;
    if missing.variants.is_empty() && missing.runs.is_empty() {
        return;
    }
    page.push_str("<h2>Missing from the new results</h2>\n<ul>\n");
    for v in &missing.variants {
        let _ = writeln!(page, "<li>variant {} (never ran)</li>", escape(v));
    }
    for k in &missing.runs {
        let _ =
            writeln!(page, "<li>{} ({}), epoch {}</li>", escape(&k.id), escape(&variant_name(&k.variant())), k.epoch);
    }
    page.push_str("</ul>\n");
}

/// Every case whose pass value changed, base runs left, new runs right.
fn changed(page: &mut String, comparison: &Comparison, base: (&Results, &Path), new: (&Results, &Path)) {
    let flipped: Vec<&CaseChange> = comparison.cases.iter().filter(|c| c.base_pass != c.new_pass).collect();
    let _ = writeln!(page, "<h2>Cases that changed ({})</h2>", flipped.len());
    let (base_jail, new_jail) = (Jail::read_only(base.1).ok(), Jail::read_only(new.1).ok());
    for c in flipped {
        let Some(v) = comparison.variants.iter().find(|v| v.new == c.variant) else { continue };
        let runs = |results: &Results, variant: &str| -> Vec<CaseResult> {
            results.cases.iter().filter(|r| r.id == c.id && variant_name(&r.variant()) == variant).cloned().collect()
        };
        let class = if c.new_pass < c.base_pass { "fail" } else { "pass" };
        let _ = writeln!(
            page,
            "<details class=\"{class}\" open><summary>{} {} ({}): passes {:.2} → {:.2}, score {:.2} → {:.2}</summary>\
             <div class=\"sides\">",
            c.change,
            escape(&c.id),
            escape(&c.variant),
            c.base_pass,
            c.new_pass,
            c.base_score,
            c.new_score
        );
        for (side, results, variant, jail) in
            [("base", base.0, &v.base, base_jail.as_ref()), ("new", new.0, &v.new, new_jail.as_ref())]
        {
            let _ = writeln!(page, "<div><h3>{side}: {}</h3>", escape(variant));
            for run in runs(results, variant) {
                let verdict = if run.passed { "PASS" } else { "FAIL" };
                let _ = writeln!(page, "<p>epoch {}: {verdict}, score {:.2}</p>", run.epoch, run.score);
                if let Some(error) = &run.error {
                    let _ = writeln!(page, "<p>error: {}</p>", escape(error));
                }
                for s in run.scores.iter().filter(|s| !s.passed) {
                    let _ = writeln!(page, "<p>✗ {}: {}</p>", escape(&s.kind), escape(&s.detail));
                }
                if let Some(events) = &run.events {
                    transcript::transcript(page, jail, Path::new(events));
                }
            }
            page.push_str("</div>\n");
        }
        page.push_str("</div></details>\n");
    }
}
