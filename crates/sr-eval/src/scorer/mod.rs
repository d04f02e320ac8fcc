//! Scorers: what a case expects of its run. Each gives a score in 0..1 and
//! whether it passed, with a one-line detail for the report.

mod findings;
mod flow;
mod json_path;
mod judge;
mod parse;

use std::path::Path;

use regex::Regex;
use serde::Serialize;
use serde_json::Value;
use sr_runtime::event::{Event, Payload};
use sr_runtime::tools::{Jail, Opened};

pub use findings::{Expected, Tally, shown, tally};
pub use flow::FlowScorer;
pub use json_path::JsonPath;
pub use judge::{Judge, JudgeModel, NoJudge};
pub(crate) use parse::parse;

/// One entry of a case's `expect` list.
#[derive(Debug)]
pub enum Scorer {
    /// The output equals this value (strings with surrounding whitespace trimmed).
    Equals(Value),
    /// The output's text contains this.
    Contains(String),
    /// The output's text matches this.
    Regex(Regex),
    /// The value at a path of the (JSON) output exists, or passes `check`.
    JsonPath { path: JsonPath, check: Option<Check> },
    /// The (JSON) output is valid against a JSON Schema.
    Schema(Box<jsonschema::Validator>),
    /// A file the run left in its work directory exists, or passes `check`.
    File { path: String, check: Option<Check> },
    /// A tool or agent was (or, with `called: false`, was not) called; with
    /// `args`, by a call whose arguments contain these.
    ToolCalled { name: String, called: bool, args: Option<Value> },
    /// Expected findings against the output's, within `tolerance` lines;
    /// passes when F1 reaches `min_f1`.
    Findings { expected: Vec<Expected>, tolerance: u64, min_f1: f64 },
    /// A model grades the output against a rubric.
    Judge(Judge),
    /// A `.sr` flow grades the run.
    Flow(FlowScorer),
}

/// A test of one value.
#[derive(Debug)]
pub enum Check {
    Equals(Value),
    Contains(String),
    Regex(Regex),
}

/// What a scorer looks at: the run's output, its work directory, its events;
/// and for a judge, the case's prompt and where judge calls go.
pub struct Observed<'a> {
    pub output: Option<&'a Value>,
    pub work_dir: &'a Path,
    pub events: &'a [Event],
    pub prompt: &'a str,
    pub judge: &'a JudgeModel,
}

/// One scorer's verdict.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Score {
    pub kind: String,
    pub passed: bool,
    pub score: f64,
    pub detail: String,
    /// A `findings` scorer's counts, which a variant's precision, recall and F1 add up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub findings: Option<Tally>,
}

impl Score {
    pub fn new(kind: &str, passed: bool, detail: String) -> Score {
        Score { kind: kind.to_string(), passed, score: if passed { 1.0 } else { 0.0 }, detail, findings: None }
    }
}

impl Scorer {
    pub fn kind(&self) -> &'static str {
        match self {
            Scorer::Equals(_) => "equals",
            Scorer::Contains(_) => "contains",
            Scorer::Regex(_) => "regex",
            Scorer::JsonPath { .. } => "json_path",
            Scorer::Schema(_) => "schema",
            Scorer::File { .. } => "file",
            Scorer::ToolCalled { .. } => "tool_called",
            Scorer::Findings { .. } => "findings",
            Scorer::Judge(_) => "judge",
            Scorer::Flow(_) => "flow",
        }
    }

    /// The verdict of a scorer that never saw the run (it timed out, or its
    /// work directory could not be made): failed, and for `findings` every
    /// expected finding missed, so that the variant's recall counts the run.
    pub fn unscored(&self, reason: &str) -> Score {
        let mut score = Score::new(self.kind(), false, format!("not scored: {reason}"));
        if let Scorer::Findings { expected, .. } = self {
            score.findings = Some(Tally { matched: 0, expected: expected.len(), reported: 0 });
        }
        score
    }

    pub async fn score(&self, seen: &Observed<'_>) -> Score {
        let kind = self.kind();
        let null = Value::Null;
        let output = seen.output.unwrap_or(&null);
        match self {
            Scorer::Equals(want) => check_value(kind, &Check::Equals(want.clone()), output, "the output"),
            Scorer::Contains(text) => check_value(kind, &Check::Contains(text.clone()), output, "the output"),
            Scorer::Regex(re) => check_value(kind, &Check::Regex(re.clone()), output, "the output"),
            Scorer::JsonPath { path, check } => {
                let json = structured(output);
                match (path.find(&json), check) {
                    (None, _) => Score::new(kind, false, format!("{path}: nothing there")),
                    (Some(_), None) => Score::new(kind, true, format!("{path}: present")),
                    (Some(value), Some(check)) => check_value(kind, check, value, &path.to_string()),
                }
            }
            Scorer::Schema(validator) => {
                let json = structured(output);
                match validator.iter_errors(&json).next() {
                    None => Score::new(kind, true, "valid".to_string()),
                    Some(error) => Score::new(kind, false, format!("{}: {error}", error.instance_path())),
                }
            }
            Scorer::File { path, check } => score_file(kind, seen.work_dir, path, check.as_ref()),
            Scorer::ToolCalled { name, called, args } => score_calls(kind, seen.events, name, *called, args.as_ref()),
            Scorer::Findings { expected, tolerance, min_f1 } => {
                let t = tally(expected, &structured(output), *tolerance);
                let score = t.score();
                let detail = format!(
                    "precision {} recall {} F1 {} ({} of {} expected, {} reported)",
                    shown(t.precision()),
                    shown(t.recall()),
                    shown(t.f1()),
                    t.matched,
                    t.expected,
                    t.reported
                );
                Score { kind: kind.to_string(), passed: score >= *min_f1, score, detail, findings: Some(t) }
            }
            Scorer::Judge(judge) => judge.score(seen.judge, seen.prompt, output).await,
            Scorer::Flow(flow) => flow.score(seen.judge, seen.prompt, output, seen.work_dir).await,
        }
    }
}

/// The output as JSON: a string holding JSON (also inside a ``` fence) is
/// parsed, anything else is used as it is.
pub fn structured(output: &Value) -> Value {
    let Value::String(text) = output else { return output.clone() };
    let trimmed = text.trim();
    let unfenced = trimmed
        .strip_prefix("```")
        .and_then(|rest| rest.strip_suffix("```"))
        .map(|inner| inner.split_once('\n').map_or("", |(_, body)| body))
        .unwrap_or(trimmed);
    serde_json::from_str(unfenced).unwrap_or_else(|_| output.clone())
}

/// A value as text: strings as they are, anything else as compact JSON.
fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn short(text: &str) -> String {
    const MAX: usize = 80;
    match text.char_indices().nth(MAX) {
        Some((at, _)) => format!("{:?}…", &text[..at]),
        None => format!("{text:?}"),
    }
}

fn check_value(kind: &str, check: &Check, value: &Value, what: &str) -> Score {
    let text = text_of(value);
    match check {
        Check::Equals(want) => {
            let passed = match (value, want) {
                (Value::String(got), Value::String(want)) => got.trim() == want.trim(),
                (Value::String(got), want) => serde_json::from_str::<Value>(got.trim()).is_ok_and(|got| &got == want),
                (got, want) => got == want,
            };
            let detail = if passed {
                format!("{what} equals {}", short(&text_of(want)))
            } else {
                format!("{what} is {}, not {}", short(&text), short(&text_of(want)))
            };
            Score::new(kind, passed, detail)
        }
        Check::Contains(needle) => {
            let passed = text.contains(needle.as_str());
            let verb = if passed { "contains" } else { "does not contain" };
            Score::new(kind, passed, format!("{what} {verb} {}", short(needle)))
        }
        Check::Regex(re) => {
            let passed = re.is_match(&text);
            let verb = if passed { "matches" } else { "does not match" };
            Score::new(kind, passed, format!("{what} {verb} /{}/", re.as_str()))
        }
    }
}

/// Files larger than this are not read by the `file` scorer.
const MAX_FILE_BYTES: u64 = 16 << 20;

/// Reads the file through a read-only jail on the work directory, as the
/// file tools would: a symlink the run left that leads out of it, a FIFO or a
/// device is not read.
fn score_file(kind: &str, work_dir: &Path, path: &str, check: Option<&Check>) -> Score {
    let opened = Jail::read_only(work_dir).map_err(|e| e.to_string()).and_then(|jail| {
        let relative = jail.relative_path(path).map_err(|e| e.0)?;
        match jail.open_read(&relative) {
            Ok(Opened::File(_)) => Ok((jail, relative)),
            Ok(Opened::Dir(_)) => Err("a directory".to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err("no such file".to_string()),
            Err(e) => Err(e.to_string()),
        }
    });
    let (jail, relative) = match opened {
        Ok(found) => found,
        Err(why) => return Score::new(kind, false, format!("{path}: {why}")),
    };
    let Some(check) = check else {
        return Score::new(kind, true, format!("{path}: present"));
    };
    match jail.read(&relative, MAX_FILE_BYTES).map(String::from_utf8) {
        Ok(Ok(text)) => check_value(kind, check, &Value::String(text), path),
        Ok(Err(_)) => Score::new(kind, false, format!("{path}: not UTF-8 text")),
        Err(e) => Score::new(kind, false, format!("{path}: cannot read: {e}")),
    }
}

/// Whether `args` holds everything in `want`: objects key by key
/// (recursively), anything else by equality.
fn contains_args(args: &Value, want: &Value) -> bool {
    match (args, want) {
        (Value::Object(got), Value::Object(want)) => {
            want.iter().all(|(k, v)| got.get(k).is_some_and(|g| contains_args(g, v)))
        }
        (got, want) => got == want,
    }
}

fn score_calls(kind: &str, events: &[Event], name: &str, called: bool, args: Option<&Value>) -> Score {
    let mut calls = 0;
    let mut matching = 0;
    for event in events {
        let (hit, call_args) = match &event.payload {
            Payload::ToolCall { tool, args, .. } => (tool == name, Some(args)),
            Payload::AgentStarted { agent, .. } => (agent == name, None),
            Payload::Transfer { to, .. } => (to == name, None),
            _ => (false, None),
        };
        if hit {
            calls += 1;
            if args.is_none_or(|want| call_args.is_some_and(|got| contains_args(got, want))) {
                matching += 1;
            }
        }
    }
    let with = args.map(|a| format!(" with {a}")).unwrap_or_default();
    let detail = match (matching, calls) {
        (0, 0) => format!("{name} was not called"),
        (0, n) => format!("{name} was called {n} time(s), never{with}"),
        (m, _) => format!("{name} was called{with} {m} time(s)"),
    };
    Score::new(kind, (matching > 0) == called, detail)
}

#[cfg(test)]
mod tests;
