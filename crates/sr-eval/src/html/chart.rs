//! The chart of a report: per variant, its short name on a line of its own
//! (the full name in a `<title>` to hover; so no name, however long, reaches
//! a bar), then one bar per figure: pass rate, mean score and micro F1 with
//! their 95% intervals drawn as whiskers, and cost (or tokens when nothing is
//! priced) relative to the dearest variant.

use std::fmt::Write;

use super::escape;
use crate::names::{short_name, variant_name};
use crate::results::{Summary, VariantKey};
use crate::stats::Interval;

/// Where the bars start, and their full length.
pub(super) const BAR_X: f64 = 100.0;
pub(super) const BAR_W: f64 = 400.0;
const BAR_H: f64 = 14.0;
const BAR_STEP: f64 = 20.0;
/// The line a variant's name takes above its bars.
const NAME_H: f64 = 22.0;
const GAP: f64 = 12.0;
const WIDTH: f64 = 680.0;
/// Characters of a short name drawn; longer ones end with `…`.
const MAX_NAME: usize = 60;

struct Bar {
    class: &'static str,
    what: &'static str,
    /// Of the full length, 0..1.
    share: f64,
    interval: Option<Interval>,
    text: String,
}

pub(super) fn chart(page: &mut String, summary: &[Summary], all: &[VariantKey]) {
    let priced = summary.iter().any(|s| s.cost_usd.is_some());
    let spent =
        |s: &Summary| if priced { s.cost_usd.unwrap_or(0.0) } else { (s.tokens.input + s.tokens.output) as f64 };
    let most = summary.iter().map(spent).fold(0.0, f64::max);
    let findings = summary.iter().any(|s| s.findings.is_some());
    let bars: Vec<Vec<Bar>> = summary
        .iter()
        .map(|s| {
            let mut bars = vec![
                Bar {
                    class: "pass-rate",
                    what: "pass rate",
                    share: s.pass_rate,
                    interval: Some(s.pass_rate_ci),
                    text: format!(
                        "{:.1}% [{:.1}, {:.1}]",
                        s.pass_rate * 100.0,
                        s.pass_rate_ci.low * 100.0,
                        s.pass_rate_ci.high * 100.0
                    ),
                },
                Bar {
                    class: "mean-score",
                    what: "mean score",
                    share: s.mean_score,
                    interval: s.mean_score_ci,
                    text: with_interval(s.mean_score, s.mean_score_ci),
                },
            ];
            if findings {
                let f1 = s.findings.as_ref().map(|f| f.micro.f1);
                let value = f1.and_then(|e| e.value);
                let interval = f1.and_then(|e| Some(Interval { low: e.low?, high: e.high? }));
                bars.push(Bar {
                    class: "f1",
                    what: "F1 (micro)",
                    share: value.unwrap_or(0.0),
                    interval,
                    text: value.map_or("n/a".to_string(), |v| with_interval(v, interval)),
                });
            }
            let share = if most > 0.0 { spent(s) / most } else { 0.0 };
            bars.push(Bar {
                class: "cost",
                what: if priced { "cost" } else { "tokens" },
                share,
                interval: None,
                text: if priced { format!("${:.4}", spent(s)) } else { format!("{} tokens", spent(s)) },
            });
            bars
        })
        .collect();
    let block = |n: usize| NAME_H + BAR_STEP * n as f64 + GAP;
    let height: f64 = bars.iter().map(|b| block(b.len())).sum::<f64>() + 4.0;
    let _ = writeln!(
        page,
        "<h2>Per variant{}</h2>\n<svg id=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" role=\"img\">",
        if findings {
            ": pass rate, mean score and F1 with 95% intervals"
        } else {
            ": pass rate and mean score with 95% intervals"
        },
    );
    let mut top = 0.0;
    for (s, bars) in summary.iter().zip(&bars) {
        let key = s.variant();
        let _ = writeln!(
            page,
            "<text class=\"variant\" x=\"0\" y=\"{:.1}\" font-size=\"13\" font-weight=\"bold\"><title>{}</title>{}</text>",
            top + 15.0,
            escape(&variant_name(&key)),
            escape(&shortened(&short_name(&key, all)))
        );
        for (i, bar) in bars.iter().enumerate() {
            let y = top + NAME_H + BAR_STEP * i as f64;
            let width = BAR_W * bar.share.clamp(0.0, 1.0);
            let _ = write!(
                page,
                "<text class=\"metric\" x=\"0\" y=\"{:.1}\" font-size=\"11\">{}</text>\
                 <rect class=\"{}\" x=\"{BAR_X}\" y=\"{y:.1}\" width=\"{width:.1}\" height=\"{BAR_H}\" fill=\"{}\"/>",
                y + 11.0,
                bar.what,
                bar.class,
                if bar.class == "cost" { "#5c6bc0" } else { "#2e7d32" }
            );
            let mut end = width;
            if let Some(i) = bar.interval {
                let (low, high) = (BAR_X + BAR_W * i.low.clamp(0.0, 1.0), BAR_X + BAR_W * i.high.clamp(0.0, 1.0));
                let mid = y + BAR_H / 2.0;
                let _ = write!(
                    page,
                    "<g class=\"ci\" stroke=\"#111\" stroke-width=\"1.5\"><line x1=\"{low:.1}\" y1=\"{mid:.1}\" x2=\"{high:.1}\" y2=\"{mid:.1}\"/>\
                     <line x1=\"{low:.1}\" y1=\"{:.1}\" x2=\"{low:.1}\" y2=\"{:.1}\"/><line x1=\"{high:.1}\" y1=\"{:.1}\" x2=\"{high:.1}\" y2=\"{:.1}\"/></g>",
                    y + 2.0,
                    y + BAR_H - 2.0,
                    y + 2.0,
                    y + BAR_H - 2.0
                );
                end = end.max(high - BAR_X);
            }
            let _ = writeln!(
                page,
                "<text class=\"value\" x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\">{}</text>",
                BAR_X + end + 6.0,
                y + 11.0,
                escape(&bar.text)
            );
        }
        top += block(bars.len());
    }
    page.push_str("</svg>\n");
}

fn with_interval(value: f64, interval: Option<Interval>) -> String {
    match interval {
        Some(i) => format!("{value:.2} [{:.2}, {:.2}]", i.low, i.high),
        None => format!("{value:.2}"),
    }
}

/// At most [`MAX_NAME`] characters.
fn shortened(name: &str) -> String {
    match name.char_indices().nth(MAX_NAME) {
        Some((at, _)) => format!("{}…", &name[..at]),
        None => name.to_string(),
    }
}
