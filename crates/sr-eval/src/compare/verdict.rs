//! The comparison in words, a sentence per compared variant: what changed
//! significantly, what did not (with each difference and p-value), and
//! whether the cases are enough to tell: "review@structured vs review@solo:
//! no significant difference in pass rate (+16.7 points, p = 1.0), …; cost
//! +400% (p = 0.031). 6 cases cannot detect a pass-rate difference under 100
//! points (about 134 would detect +16.7 points with 80% power)." With pass/fail
//! cases the floor is exact: fewer than [`fewest_pairs`] cases flipping one
//! way is never significant; the cases needed are the normal approximation.

use super::{Difference, VariantChange};
use crate::stats::paired::{can_conclude, fewest_pairs};

/// The sentence for `change` at the significance `level`.
pub fn sentence(change: &VariantChange, level: f64) -> String {
    let (base, new) = &change.names;
    let who = if base == new { format!("{new}, new vs base") } else { format!("{new} vs {base}") };
    let n = change.pass_rate.pairs;
    if n == 0 {
        return format!("{who}: no cases in common.");
    }
    let mut items = vec![
        ("pass rate", points(&change.pass_rate), &change.pass_rate),
        ("mean score", fraction(&change.mean_score), &change.mean_score),
    ];
    if let Some(f) = &change.findings {
        items.push(("F1", fraction(&f.f1), &f.f1));
    }
    match &change.cost_usd {
        Some(cost) => items.push(("cost", relative(cost), cost)),
        None => items.push(("tokens", relative(&change.tokens), &change.tokens)),
    }
    let (changed, same): (Vec<_>, Vec<_>) = items.into_iter().partition(|(_, _, d)| significant(d, level));
    let mut parts = Vec::new();
    if !same.is_empty() {
        let listed: Vec<String> =
            same.iter().map(|(name, detail, d)| format!("{name} ({detail}{})", p_clause(d, ", "))).collect();
        parts.push(format!("no significant difference in {}", or_list(&listed)));
    }
    for (name, detail, d) in &changed {
        parts.push(format!("{name} {detail} ({})", p_clause(d, "").trim_start_matches(", ")));
    }
    let mut text = format!("{who}: {}.", parts.join("; "));
    let fewest = fewest_pairs(level);
    if n < fewest {
        text.push_str(&format!(
            " {n} case{} cannot make any difference significant at {level} (that takes {fewest} cases changing one way).",
            if n == 1 { "" } else { "s" }
        ));
    } else if !significant(&change.pass_rate, level) {
        let needed = change.cases_needed.zip(change.pass_rate.difference);
        if change.pass_rate.test == "mcnemar-exact" {
            // Fewer cases than `fewest` flipping one way is never significant.
            let floor = fewest as f64 / n as f64 * 100.0;
            text.push_str(&format!(" {n} cases cannot detect a pass-rate difference under {floor:.0} points"));
            match needed {
                Some((needed, d)) => {
                    text.push_str(&format!(" (about {needed} would detect {:+.1} points with 80% power).", d * 100.0))
                }
                None => text.push('.'),
            }
        } else if let Some((needed, d)) = needed {
            text.push_str(&format!(
                " About {needed} cases (of {n} here) would detect a pass-rate difference of {:+.1} points with 80% power.",
                d * 100.0
            ));
        }
    }
    text
}

fn significant(d: &Difference, level: f64) -> bool {
    d.p_value.is_some_and(|p| p < level) && can_conclude(d.pairs, level)
}

/// `, p = 0.031`, or nothing without a p-value.
fn p_clause(d: &Difference, lead: &str) -> String {
    d.p_value.map_or(String::new(), |p| format!("{lead}p = {}", p_text(p)))
}

/// Two significant digits: `1.0`, `0.63`, `0.031`, `0.0020`.
pub fn p_text(p: f64) -> String {
    if p < 1e-4 {
        return "< 0.0001".to_string();
    }
    let decimals = (1 - p.log10().floor() as i32).max(1) as usize;
    let text = format!("{p:.decimals$}");
    // 0.996 rounds to 1.00 at two decimals; one is enough.
    if text.starts_with("1.") { "1.0".to_string() } else { text }
}

fn points(d: &Difference) -> String {
    d.difference.map_or("n/a".to_string(), |x| format!("{:+.1} points", x * 100.0))
}

fn fraction(d: &Difference) -> String {
    d.difference.map_or("n/a".to_string(), |x| format!("{x:+.2}"))
}

/// The change as a percentage of the base (`+400%`), or `n/a` from zero.
fn relative(d: &Difference) -> String {
    match (d.difference, d.base) {
        (Some(x), Some(base)) if base.abs() > 0.0 => format!("{:+.0}%", x / base.abs() * 100.0),
        _ => "n/a".to_string(),
    }
}

/// `a`, `a or b`, `a, b or c`.
fn or_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}
