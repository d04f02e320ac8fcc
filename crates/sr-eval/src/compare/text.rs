//! The comparison as `sr eval compare` prints it.

use std::fmt::Write;

use super::verdict::p_text;
use super::{Comparison, Difference, Judgement};
use crate::names::variant_name;

/// Missing runs listed one by one; the rest are counted.
const LISTED: usize = 20;

impl Comparison {
    pub fn text(&self) -> String {
        let mut text = String::new();
        for sentence in &self.verdict {
            let _ = writeln!(text, "{sentence}");
        }
        if let Some(partial) = &self.partial {
            let _ = writeln!(text, "new results {partial}");
        }
        text.push_str("variant: base → new (paired difference, 95% interval, p-value of no difference)\n");
        for v in &self.variants {
            let name = if v.base == v.new { v.base.clone() } else { format!("{} → {}", v.base, v.new) };
            let _ = writeln!(text, "  {name} ({} paired case{})", v.cases, if v.cases == 1 { "" } else { "s" });
            let _ = writeln!(text, "{}", line("pass rate", &v.pass_rate, Unit::Percent));
            let _ = writeln!(text, "{}", line("mean score", &v.mean_score, Unit::Fraction));
            if let Some(f) = &v.findings {
                let _ = writeln!(text, "{}", line("F1 (micro)", &f.f1, Unit::Fraction));
                let _ = writeln!(text, "{}", line("precision", &f.precision, Unit::Fraction));
                let _ = writeln!(text, "{}", line("recall", &f.recall, Unit::Fraction));
            }
            let _ = writeln!(text, "{}", line("tokens/run", &v.tokens, Unit::Count));
            if let Some(cost) = &v.cost_usd {
                let _ = writeln!(text, "{}", line("USD/run", cost, Unit::Dollars));
            }
        }
        if !self.gate.is_empty() {
            let _ = writeln!(text, "gate (a rule fails on a change beyond its amount with p < {}):", self.significance);
            for j in &self.gate {
                let _ = writeln!(text, "  {}", judgement_line(j));
            }
        }
        for added in &self.added {
            let _ = writeln!(text, "  {added}: only in the new results");
        }
        if !self.cases.is_empty() {
            text.push_str("cases:\n");
            for c in &self.cases {
                let name = format!("{} ({})", c.id, c.variant);
                let reason = c.reason.as_deref().map(|r| format!(": {}", one_line(r))).unwrap_or_default();
                let _ = match c.change {
                    "fail" => writeln!(text, "  FAIL  {name}{reason}"),
                    "fixed" => writeln!(text, "  fixed {name}"),
                    "score" => writeln!(text, "  score {name}: {:.3} → {:.3}", c.base_score, c.new_score),
                    other => writeln!(text, "  {other} {name}: passes {:.2} → {:.2}{reason}", c.base_pass, c.new_pass),
                };
            }
        }
        let missing = &self.missing;
        if !missing.variants.is_empty() || !missing.runs.is_empty() {
            text.push_str("missing from the new results:\n");
            for v in &missing.variants {
                let _ = writeln!(text, "  variant {v}");
            }
            for k in missing.runs.iter().take(LISTED) {
                let epoch = if k.epoch > 1 { format!(", epoch {}", k.epoch) } else { String::new() };
                let _ = writeln!(text, "  {} ({}){epoch}", k.id, variant_name(&k.variant()));
            }
            if missing.runs.len() > LISTED {
                let _ = writeln!(text, "  … and {} more case runs", missing.runs.len() - LISTED);
            }
        }
        text
    }
}

enum Unit {
    Percent,
    Fraction,
    Count,
    Dollars,
}

/// `FAIL  pass_rate drop > 2 points (helper.sr × default): 66.7, p = 0.0020`
pub fn judgement_line(j: &Judgement) -> String {
    let outcome = if j.failed { "FAIL" } else { "pass" };
    let moved = j.moved.map_or("n/a".to_string(), |m| {
        let text = format!("{:.3}", m + 0.0);
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    });
    let p = j.p_value.map_or(String::new(), |p| format!(", p = {}", p_text(p)));
    format!("{outcome}  {} ({}): moved {moved}{p}", j.rule, j.variant)
}

/// `    pass rate   62.5% → 75.0%  +12.5 points [-12.5, +37.5]  p = 0.625 (McNemar exact)`
fn line(what: &str, d: &Difference, unit: Unit) -> String {
    let value = |v: Option<f64>| match (v, &unit) {
        (None, _) => "n/a".to_string(),
        (Some(v), Unit::Percent) => format!("{:.1}%", v * 100.0),
        (Some(v), Unit::Fraction) => format!("{v:.3}"),
        (Some(v), Unit::Count) => format!("{v:.0}"),
        (Some(v), Unit::Dollars) => format!("{v:.4}"),
    };
    let delta = |v: f64| match unit {
        Unit::Percent => format!("{:+.1}", v * 100.0),
        Unit::Fraction => format!("{v:+.3}"),
        Unit::Count => format!("{v:+.0}"),
        Unit::Dollars => format!("{v:+.4}"),
    };
    let mut line = format!("    {what:<11} {} → {}", value(d.base), value(d.new));
    if let Some(difference) = d.difference {
        let points = if matches!(unit, Unit::Percent) { " points" } else { "" };
        let _ = write!(line, "  {}{points}", delta(difference));
        match (d.low, d.high) {
            (Some(low), Some(high)) => {
                let _ = write!(line, " [{}, {}]", delta(low), delta(high));
            }
            _ if d.too_few => line.push_str(" [too few cases to conclude]"),
            _ => {}
        }
    }
    if let Some(p) = d.p_value {
        let test = match d.test {
            "mcnemar-exact" => "McNemar exact",
            "paired-bootstrap" => "paired bootstrap",
            _ => "paired permutation",
        };
        let _ = write!(line, "  p = {p:.3} ({test})");
    }
    line
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
