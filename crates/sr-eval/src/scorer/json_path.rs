//! The JSONPath subset scorers use: `$`, then `.name`, `["name"]` (or
//! `['name']`) and `[N]` steps. Filters, wildcards and slices are refused
//! when the dataset is read.

use std::fmt;

use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
pub struct JsonPath {
    text: String,
    steps: Vec<Step>,
}

#[derive(Debug, Clone, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl JsonPath {
    pub fn parse(text: &str) -> Result<JsonPath, String> {
        let bad = |at: usize, what: &str| format!("json_path {text:?}: {what} at character {}", at + 1);
        let Some(mut rest) = text.strip_prefix('$') else {
            return Err(bad(0, "expected `$`"));
        };
        let mut steps = Vec::new();
        while !rest.is_empty() {
            let at = text.len() - rest.len();
            if let Some(after) = rest.strip_prefix('.') {
                let end = after.find(['.', '[']).unwrap_or(after.len());
                let name = &after[..end];
                if name.is_empty() || name == "*" {
                    return Err(bad(at + 1, "expected a name"));
                }
                steps.push(Step::Key(name.to_string()));
                rest = &after[end..];
            } else if let Some(after) = rest.strip_prefix('[') {
                let end = after.find(']').ok_or_else(|| bad(at, "unclosed `[`"))?;
                let inside = after[..end].trim();
                let quoted = [('"', '"'), ('\'', '\'')]
                    .iter()
                    .find_map(|(open, close)| inside.strip_prefix(*open)?.strip_suffix(*close));
                match (quoted, inside.parse::<usize>()) {
                    (Some(name), _) => steps.push(Step::Key(name.to_string())),
                    (None, Ok(index)) => steps.push(Step::Index(index)),
                    (None, Err(_)) => return Err(bad(at + 1, "expected an index or a quoted name")),
                }
                rest = &after[end + 1..];
            } else {
                return Err(bad(at, "expected `.` or `[`"));
            }
        }
        Ok(JsonPath { text: text.to_string(), steps })
    }

    /// The value at this path in `value`, if there is one.
    pub fn find<'v>(&self, value: &'v Value) -> Option<&'v Value> {
        self.steps.iter().try_fold(value, |value, step| match step {
            Step::Key(key) => value.get(key),
            Step::Index(index) => value.get(index),
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn paths_find_keys_and_indexes() {
        let value = json!({"a": {"b": [10, {"c d": "x"}]}});
        let find = |path: &str| JsonPath::parse(path).unwrap().find(&value).cloned();
        assert_eq!(find("$"), Some(value.clone()));
        assert_eq!(find("$.a.b[0]"), Some(json!(10)));
        assert_eq!(find("$.a.b[1]['c d']"), Some(json!("x")));
        assert_eq!(find("$[\"a\"].b[1][\"c d\"]"), Some(json!("x")));
        assert_eq!(find("$.a.b[2]"), None);
        assert_eq!(find("$.a.missing"), None);
        assert_eq!(find("$.a.b.c"), None);
    }

    #[test]
    fn unsupported_paths_are_refused_with_their_position() {
        for (path, error) in [
            ("a.b", "expected `$` at character 1"),
            ("$.", "expected a name at character 3"),
            ("$.a[*]", "expected an index or a quoted name at character 5"),
            ("$.a[0", "unclosed `[` at character 4"),
            ("$x", "expected `.` or `[` at character 2"),
            ("$.a[-1]", "expected an index or a quoted name at character 5"),
        ] {
            let got = JsonPath::parse(path).unwrap_err();
            assert!(got.ends_with(error), "{path}: {got}");
        }
    }
}
