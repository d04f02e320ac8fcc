//! The gate's rules, as `--gate` declares them: `METRIC drop|rise > AMOUNT
//! [points|%]`, such as `pass_rate drop > 2 points`, `mean_score drop >
//! 0.05`, `f1 drop > 0.03` or `cost rise > 20%`. A rule fails for a variant
//! when its figure moved the named way by more than the amount and the
//! figure's paired test calls the change significant (p below the level):
//! a change the test cannot tell from noise, such as a flaky case's epochs,
//! never fails it.

use std::fmt;

use serde::Serialize;

use super::{Difference, VariantChange};
use crate::stats::paired::can_conclude;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    PassRate,
    MeanScore,
    F1,
    Precision,
    Recall,
    Tokens,
    Cost,
}

const METRICS: [(&str, Metric); 7] = [
    ("pass_rate", Metric::PassRate),
    ("mean_score", Metric::MeanScore),
    ("f1", Metric::F1),
    ("precision", Metric::Precision),
    ("recall", Metric::Recall),
    ("tokens", Metric::Tokens),
    ("cost", Metric::Cost),
];

impl Metric {
    pub fn name(self) -> &'static str {
        METRICS.iter().find(|(_, m)| *m == self).map_or("", |(name, _)| name)
    }

    /// The figure of `change` this metric reads; `None` where the results lack it.
    pub fn of(self, change: &VariantChange) -> Option<&Difference> {
        let findings = change.findings.as_ref();
        match self {
            Metric::PassRate => Some(&change.pass_rate),
            Metric::MeanScore => Some(&change.mean_score),
            Metric::F1 => findings.map(|f| &f.f1),
            Metric::Precision => findings.map(|f| &f.precision),
            Metric::Recall => findings.map(|f| &f.recall),
            Metric::Tokens => Some(&change.tokens),
            Metric::Cost => change.cost_usd.as_ref(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    Drop,
    Rise,
}

/// How the amount reads: percentage points (pass rate), percent of the
/// base's figure, or the figure's own unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    Points,
    Percent,
    Absolute,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rule {
    pub metric: Metric,
    pub direction: Direction,
    pub amount: f64,
    pub unit: Unit,
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let direction = if self.direction == Direction::Drop { "drop" } else { "rise" };
        let unit = match self.unit {
            Unit::Points => " points",
            Unit::Percent => "%",
            Unit::Absolute => "",
        };
        write!(f, "{} {direction} > {}{unit}", self.metric.name(), self.amount)
    }
}

impl Rule {
    /// `pass_rate drop > X points`, what `--max-drop` (a fraction) means.
    pub fn max_drop(fraction: f64) -> Rule {
        Rule { metric: Metric::PassRate, direction: Direction::Drop, amount: fraction * 100.0, unit: Unit::Points }
    }

    /// How far the figure moved the rule's way, in the rule's unit
    /// (negative when it moved the other way); `None` when undefined.
    pub fn moved(&self, d: &Difference) -> Option<f64> {
        let difference = d.difference?;
        let toward = if self.direction == Direction::Drop { -difference } else { difference };
        match self.unit {
            Unit::Points => Some(toward * 100.0),
            Unit::Absolute => Some(toward),
            Unit::Percent => {
                let base = d.base?.abs();
                (base > 0.0).then(|| toward / base * 100.0)
            }
        }
    }

    /// Parses a rule; an error says at which column (1-based) and what was expected.
    pub fn parse(text: &str) -> Result<Rule, String> {
        let words = words(text);
        let at = |i: usize| words.get(i).copied();
        let end = text.chars().count() + 1;
        let fail = |column: usize, what: &str| Err(format!("--gate {text:?}: column {column}: {what}"));
        let (column, word) = at(0).unwrap_or((end, ""));
        let Some(metric) = METRICS.iter().find(|(name, _)| *name == word).map(|(_, m)| *m) else {
            let names: Vec<&str> = METRICS.iter().map(|(name, _)| *name).collect();
            return fail(column, &format!("expected a metric ({}), found {word:?}", names.join(", ")));
        };
        let direction = match at(1) {
            Some((_, "drop")) => Direction::Drop,
            Some((_, "rise")) => Direction::Rise,
            other => {
                let (column, word) = other.unwrap_or((end, ""));
                return fail(column, &format!("expected `drop` or `rise`, found {word:?}"));
            }
        };
        match at(2) {
            Some((_, ">")) => {}
            other => {
                let (column, word) = other.unwrap_or((end, ""));
                return fail(column, &format!("expected `>`, found {word:?}"));
            }
        }
        let (column, word) = at(3).unwrap_or((end, ""));
        let (number, percent) = match word.strip_suffix('%') {
            Some(number) => (number, true),
            None => (word, false),
        };
        let amount = match number.parse::<f64>() {
            Ok(x) if x.is_finite() && x >= 0.0 => x,
            _ => return fail(column, &format!("expected an amount (a number at least 0), found {word:?}")),
        };
        let unit = match (percent, at(4)) {
            (true, None) => Unit::Percent,
            (false, Some((_, "%"))) => Unit::Percent,
            (false, Some((_, "points"))) if metric == Metric::PassRate => Unit::Points,
            (false, None) if metric != Metric::PassRate => Unit::Absolute,
            (false, None) => {
                return fail(end, "a pass rate's amount is in `points` or `%` (as in `pass_rate drop > 2 points`)");
            }
            (true, Some((column, word))) => return fail(column, &format!("unexpected {word:?} after the rule")),
            (false, Some((column, word))) => {
                let units = if metric == Metric::PassRate { "`points` or `%`" } else { "`%` or nothing" };
                return fail(column, &format!("expected {units} after the amount, found {word:?}"));
            }
        };
        if let Some((column, word)) = at(if percent || unit == Unit::Absolute { 4 } else { 5 }) {
            return fail(column, &format!("unexpected {word:?} after the rule"));
        }
        Ok(Rule { metric, direction, amount, unit })
    }
}

/// The words of `text` with their 1-based columns; `>` is a word of its own.
fn words(text: &str) -> Vec<(usize, &str)> {
    let mut words = Vec::new();
    // The current word's column and byte offset.
    let mut start: Option<(usize, usize)> = None;
    for (column, (byte, c)) in text.char_indices().enumerate() {
        if c.is_whitespace() || c == '>' {
            if let Some((at, from)) = start.take() {
                words.push((at + 1, &text[from..byte]));
            }
            if c == '>' {
                words.push((column + 1, ">"));
            }
        } else if start.is_none() {
            start = Some((column, byte));
        }
    }
    if let Some((at, from)) = start {
        words.push((at + 1, &text[from..]));
    }
    words
}

/// A rule judged on one variant.
#[derive(Debug, Clone, Serialize)]
pub struct Judgement {
    /// The rule as written back (`pass_rate drop > 2 points`).
    pub rule: String,
    pub variant: String,
    /// How far the figure moved the rule's way, in the rule's unit; `null`
    /// where the figure is undefined or the results lack it.
    pub moved: Option<f64>,
    pub p_value: Option<f64>,
    /// Beyond the amount and significant.
    pub failed: bool,
}

/// `rule` on `change` at `level`.
pub fn judge(rule: &Rule, change: &VariantChange, level: f64) -> Judgement {
    let difference = rule.metric.of(change);
    let moved = difference.and_then(|d| rule.moved(d));
    let p_value = difference.and_then(|d| d.p_value);
    // An amount exactly at the limit is allowed (within float noise).
    let beyond = moved.is_some_and(|m| m > rule.amount + 1e-9);
    let pairs = difference.map_or(0, |d| d.pairs);
    let significant = p_value.is_some_and(|p| p < level) && can_conclude(pairs, level);
    Judgement { rule: rule.to_string(), variant: change.new.clone(), moved, p_value, failed: beyond && significant }
}
