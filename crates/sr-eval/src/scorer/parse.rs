//! Reading a scorer from a dataset: an object keyed by the scorer's name,
//! e.g. `{"contains": "shipped"}` or `{"file": "out.txt", "regex": "\\d+"}`.
//! Regexes, paths and schemas are compiled here, so a bad one is a dataset
//! error with its location, never a failure in the middle of a run.

use regex::Regex;
use serde::Deserialize;
use serde::de::Error as _;
use serde_json::{Map, Value};

use super::{Check, Expected, FlowScorer, JsonPath, Judge, Scorer};
use crate::relative::{DATASET_DIR, WORK_DIR, check_relative};

/// Scorers that have a key of their own; `equals`, `contains` and `regex`
/// alone test the output.
const NAMED: [&str; 7] = ["json_path", "file", "tool_called", "findings", "schema", "judge", "flow"];

impl<'de> Deserialize<'de> for Scorer {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        parse(&value).map_err(D::Error::custom)
    }
}

fn parse(value: &Value) -> Result<Scorer, String> {
    let Value::Object(map) = value else {
        return Err(format!("expect: a scorer is an object keyed by its name, not {value}"));
    };
    let named: Vec<&str> = NAMED.iter().copied().filter(|k| map.contains_key(*k)).collect();
    let scorer = match named.as_slice() {
        [] => {
            let check = check(map, "")?.ok_or_else(|| {
                let keys: Vec<&str> = map.keys().map(String::as_str).collect();
                format!(
                    "expect: unknown scorer {{{}}} (known: equals, contains, regex, {})",
                    keys.join(", "),
                    NAMED.join(", ")
                )
            })?;
            return Ok(match check {
                Check::Equals(v) => Scorer::Equals(v),
                Check::Contains(s) => Scorer::Contains(s),
                Check::Regex(r) => Scorer::Regex(r),
            });
        }
        [one] => *one,
        many => return Err(format!("expect: one scorer per entry, found {}", many.join(" and "))),
    };
    let field = |key: &str| map.get(key).unwrap_or(&Value::Null);
    let expect = |e: String| format!("expect: {e}");
    match scorer {
        "json_path" => {
            only(map, scorer, &["json_path", "equals", "contains", "regex"])?;
            let text = string(field("json_path"), "json_path").map_err(expect)?;
            Ok(Scorer::JsonPath {
                path: JsonPath::parse(&text).map_err(|e| format!("expect: {e}"))?,
                check: check(map, "json_path: ")?,
            })
        }
        "file" => {
            only(map, scorer, &["file", "equals", "contains", "regex"])?;
            let path = string(field("file"), "file").map_err(expect)?;
            check_relative(&path, WORK_DIR).map_err(|e| format!("expect: file {path:?} {e}"))?;
            Ok(Scorer::File { path, check: check(map, "file: ")? })
        }
        "tool_called" => {
            only(map, scorer, &["tool_called", "called", "args"])?;
            let called = match map.get("called") {
                None => true,
                Some(Value::Bool(b)) => *b,
                Some(other) => return Err(format!("expect: tool_called: `called` must be true or false, not {other}")),
            };
            let args = match map.get("args") {
                None => None,
                Some(args @ Value::Object(_)) => Some(args.clone()),
                Some(other) => return Err(format!("expect: tool_called: `args` must be an object, not {other}")),
            };
            Ok(Scorer::ToolCalled { name: string(field("tool_called"), "tool_called").map_err(expect)?, called, args })
        }
        "findings" => {
            only(map, scorer, &["findings", "tolerance", "min_f1"])?;
            let expected = Vec::<Expected>::deserialize(field("findings"))
                .map_err(|e| format!("expect: findings: a list of {{file, line, category?}}: {e}"))?;
            let tolerance = match map.get("tolerance") {
                None => 0,
                Some(v) => v
                    .as_u64()
                    .ok_or_else(|| format!("expect: findings: `tolerance` must be a whole number, not {v}"))?,
            };
            let min_f1 = match map.get("min_f1") {
                None => 1.0,
                Some(v) => v
                    .as_f64()
                    .filter(|f| (0.0..=1.0).contains(f))
                    .ok_or_else(|| format!("expect: findings: `min_f1` must be a number in 0..1, not {v}"))?,
            };
            Ok(Scorer::Findings { expected, tolerance, min_f1 })
        }
        "judge" => {
            only(map, scorer, &["judge", "model", "min_score"])?;
            let rubric = string(field("judge"), "judge").map_err(expect)?;
            let model = string(field("model"), "model").map_err(|e| format!("expect: judge: {e}"))?;
            let min_score = match map.get("min_score") {
                None => 0.5,
                Some(v) => v
                    .as_f64()
                    .filter(|f| (0.0..=1.0).contains(f))
                    .ok_or_else(|| format!("expect: judge: `min_score` must be a number in 0..1, not {v}"))?,
            };
            Ok(Scorer::Judge(Judge { rubric, model, min_score }))
        }
        "flow" => {
            only(map, scorer, &["flow", "entry", "min_score"])?;
            let path = string(field("flow"), "flow").map_err(expect)?;
            check_relative(&path, DATASET_DIR).map_err(|e| format!("expect: flow {path:?} {e}"))?;
            let entry = match map.get("entry") {
                None => None,
                Some(v) => Some(string(v, "entry").map_err(|e| format!("expect: flow: {e}"))?),
            };
            let min_score = match map.get("min_score") {
                None => 0.5,
                Some(v) => v
                    .as_f64()
                    .filter(|f| (0.0..=1.0).contains(f))
                    .ok_or_else(|| format!("expect: flow: `min_score` must be a number in 0..1, not {v}"))?,
            };
            Ok(Scorer::Flow(FlowScorer { path: path.into(), entry, min_score, program: None }))
        }
        _ => {
            only(map, scorer, &["schema"])?;
            let validator = jsonschema::validator_for(field("schema")).map_err(|e| format!("expect: schema: {e}"))?;
            Ok(Scorer::Schema(Box::new(validator)))
        }
    }
}

/// Refuses keys a scorer does not know.
fn only(map: &Map<String, Value>, scorer: &str, keys: &[&str]) -> Result<(), String> {
    match map.keys().find(|k| !keys.contains(&k.as_str())) {
        Some(key) => Err(format!("expect: {scorer}: unknown key `{key}` (known: {})", keys.join(", "))),
        None => Ok(()),
    }
}

fn string(value: &Value, key: &str) -> Result<String, String> {
    value.as_str().map(str::to_string).ok_or_else(|| format!("`{key}` must be a string, not {value}"))
}

/// The one `equals`, `contains` or `regex` in `map`, if any.
fn check(map: &Map<String, Value>, context: &str) -> Result<Option<Check>, String> {
    let present: Vec<&str> = ["equals", "contains", "regex"].into_iter().filter(|k| map.contains_key(*k)).collect();
    let (key, value) = match present.as_slice() {
        [] => return Ok(None),
        [key] => (*key, &map[*key]),
        many => return Err(format!("expect: {context}one of equals, contains, regex; found {}", many.join(" and "))),
    };
    Ok(Some(match key {
        "equals" => Check::Equals(value.clone()),
        "contains" => Check::Contains(string(value, "contains").map_err(|e| format!("expect: {context}{e}"))?),
        _ => {
            let text = string(value, "regex").map_err(|e| format!("expect: {context}{e}"))?;
            Check::Regex(Regex::new(&text).map_err(|e| format!("expect: {context}bad regex {text:?}: {e}"))?)
        }
    }))
}
