//! Code-review scoring: expected findings against reported ones, matched one
//! to one within a line tolerance, as precision, recall and F1.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A finding the case expects.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expected {
    pub file: String,
    pub line: u64,
    #[serde(default)]
    pub category: Option<String>,
}

/// A finding the run reported.
#[derive(Debug, Clone, PartialEq)]
struct Reported {
    file: String,
    line: u64,
    category: Option<String>,
}

/// Matched, expected and reported findings: what precision, recall and F1
/// are made of, kept in each `findings` score so that a variant's figures
/// can be added up over its cases.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    pub matched: usize,
    pub expected: usize,
    pub reported: usize,
}

impl Tally {
    /// Matched of reported; undefined when nothing was reported.
    pub fn precision(&self) -> Option<f64> {
        ratio(self.matched, self.reported)
    }

    /// Matched of expected; undefined when nothing was expected.
    pub fn recall(&self) -> Option<f64> {
        ratio(self.matched, self.expected)
    }

    /// `2·matched / (expected + reported)`, the harmonic mean of precision and
    /// recall where both are defined, 0 where one side is empty and the other
    /// not; undefined when both are empty.
    pub fn f1(&self) -> Option<f64> {
        ratio(2 * self.matched, self.expected + self.reported)
    }

    /// The scorer's score: F1, and 1 when both sides are empty (they agree).
    pub fn score(&self) -> f64 {
        self.f1().unwrap_or(1.0)
    }

    pub fn add(&mut self, other: &Tally) {
        self.matched += other.matched;
        self.expected += other.expected;
        self.reported += other.reported;
    }
}

fn ratio(part: usize, whole: usize) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// A figure that may be undefined, as reports show it: two decimals or `n/a`.
pub fn shown(value: Option<f64>) -> String {
    value.map_or_else(|| "n/a".to_string(), |v| format!("{v:.2}"))
}

/// The findings in a run's output: an array of findings, or an object with a
/// `findings` array; each an object with `file` (or `path`), `line` (a
/// number or a numeric string) and optionally `category`. Items that are
/// not findings are skipped.
fn reported(output: &Value) -> Vec<Reported> {
    let items = match output {
        Value::Array(items) => items.as_slice(),
        Value::Object(map) => map.get("findings").and_then(Value::as_array).map_or(&[][..], Vec::as_slice),
        _ => &[],
    };
    items
        .iter()
        .filter_map(|item| {
            let file = item.get("file").or_else(|| item.get("path"))?.as_str()?;
            let line = match item.get("line")? {
                Value::Number(n) => n.as_u64()?,
                Value::String(s) => s.trim().parse().ok()?,
                _ => return None,
            };
            let category = item.get("category").and_then(Value::as_str).map(str::to_string);
            Some(Reported { file: file.to_string(), line, category })
        })
        .collect()
}

fn same_file(a: &str, b: &str) -> bool {
    a.trim_start_matches("./") == b.trim_start_matches("./")
}

/// Matches each expected finding, in order, to the nearest unmatched
/// reported finding in the same file within `tolerance` lines (and of the
/// same category, ignoring case, when one is expected).
pub fn tally(expected: &[Expected], output: &Value, tolerance: u64) -> Tally {
    let reported = reported(output);
    let mut taken = vec![false; reported.len()];
    let mut matched = 0;
    for want in expected {
        let best = reported
            .iter()
            .enumerate()
            .filter(|(i, got)| {
                !taken[*i]
                    && same_file(&got.file, &want.file)
                    && got.line.abs_diff(want.line) <= tolerance
                    && want
                        .category
                        .as_ref()
                        .is_none_or(|c| got.category.as_ref().is_some_and(|g| g.eq_ignore_ascii_case(c)))
            })
            .min_by_key(|(_, got)| got.line.abs_diff(want.line));
        if let Some((i, _)) = best {
            taken[i] = true;
            matched += 1;
        }
    }
    Tally { matched, expected: expected.len(), reported: reported.len() }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn want(file: &str, line: u64, category: Option<&str>) -> Expected {
        Expected { file: file.into(), line, category: category.map(str::to_string) }
    }

    #[test]
    fn findings_match_one_to_one_within_the_tolerance() {
        let expected = [want("a.py", 10, None), want("a.py", 12, None), want("b.py", 3, Some("bug"))];
        let output = json!({"findings": [
            {"file": "./a.py", "line": 11},
            {"file": "a.py", "line": "40"},
            {"path": "b.py", "line": 3, "category": "BUG"},
            {"message": "not a finding"},
        ]});
        let t = tally(&expected, &output, 2);
        // a.py:11 serves one of 10 and 12, not both; a.py:40 is too far.
        assert_eq!(t, Tally { matched: 2, expected: 3, reported: 3 });
        assert!((t.precision().unwrap() - 2.0 / 3.0).abs() < 1e-9);
        assert!((t.recall().unwrap() - 2.0 / 3.0).abs() < 1e-9);
        assert!((t.f1().unwrap() - 2.0 / 3.0).abs() < 1e-9);
        assert_eq!(tally(&expected, &output, 0).matched, 1);
    }

    #[test]
    fn a_category_must_agree_when_one_is_expected() {
        let output = json!([{"file": "b.py", "line": 3, "category": "style"}]);
        assert_eq!(tally(&[want("b.py", 3, Some("bug"))], &output, 0).matched, 0);
        assert_eq!(tally(&[want("b.py", 3, None)], &output, 0).matched, 1);
    }

    #[test]
    fn an_empty_side_leaves_its_ratio_undefined() {
        // Both empty: nothing to measure, and the sides agree.
        let none = tally(&[], &json!([]), 3);
        assert_eq!((none.precision(), none.recall(), none.f1(), none.score()), (None, None, None, 1.0));
        // A false alarm: precision 0, recall of nothing expected undefined.
        let spurious = tally(&[], &json!([{"file": "a", "line": 1}]), 3);
        assert_eq!((spurious.precision(), spurious.recall(), spurious.f1()), (Some(0.0), None, Some(0.0)));
        // A miss: precision of nothing reported undefined, recall 0.
        let missed = tally(&[want("a", 1, None)], &json!("no findings"), 3);
        assert_eq!((missed.precision(), missed.recall(), missed.f1()), (None, Some(0.0), Some(0.0)));
        assert_eq!((shown(missed.precision()), shown(missed.recall())), ("n/a".to_string(), "0.00".to_string()));
    }
}
