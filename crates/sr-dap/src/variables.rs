//! Values as DAP variables: handles (`variablesReference`, frame ids) that
//! live until their thread resumes, previews, structured children with
//! paging, and writes for setVariable. A string too long to preview whole
//! expands into its text in pieces of [`MAX_STRING`] characters.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;
use sr_runtime::eval::Vars;
use sr_runtime::value::type_name;

use crate::protocol::Variable;

/// Strings longer than this are cut in previews (and expand into pieces this long).
pub const MAX_STRING: usize = 10_000;
/// A list or object whose JSON is at most this long is shown whole.
const MAX_INLINE: usize = 80;

/// What a handle stands for. Every handle belongs to a stopped thread.
#[derive(Debug, Clone)]
pub enum Handle {
    Frame { thread: u32, index: usize },
    Node(Node),
}

/// A container to expand: the thread's variables or a value, and a path into it.
#[derive(Debug, Clone)]
pub struct Node {
    pub thread: u32,
    pub root: Root,
    pub path: Vec<Key>,
}

#[derive(Debug, Clone)]
pub enum Root {
    /// The run's variables (editable).
    Vars,
    /// The call the thread is about to make (a model call's is editable).
    Call,
    /// A value captured at the stop (an exchange, an evaluation result).
    Value(Arc<Value>),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Key {
    Field(String),
    Index(usize),
    /// The `n`th piece of a long string's text.
    Piece(usize),
}

impl Key {
    fn name(&self) -> String {
        match self {
            Key::Field(name) => name.clone(),
            Key::Index(i) => format!("[{i}]"),
            Key::Piece(n) => format!("[{}..{}]", n * MAX_STRING, (n + 1) * MAX_STRING),
        }
    }
}

/// Handles of stopped threads. Numbers are never reused within a session, so
/// a stale handle is an error rather than another value.
#[derive(Debug, Default)]
pub struct Handles {
    last: i64,
    map: HashMap<i64, Handle>,
}

impl Handles {
    pub fn add(&mut self, handle: Handle) -> i64 {
        self.last += 1;
        self.map.insert(self.last, handle);
        self.last
    }

    pub fn get(&self, id: i64) -> Option<&Handle> {
        self.map.get(&id)
    }

    /// None of the handles, numbering on (a new run of the session).
    pub fn forget_all(&mut self) {
        self.map.clear();
    }

    /// Forgets the handles of a thread that resumes.
    pub fn release(&mut self, thread: u32) {
        self.map.retain(|_, h| match h {
            Handle::Frame { thread: t, .. } | Handle::Node(Node { thread: t, .. }) => *t != thread,
        });
    }
}

/// A container: the variables map or a JSON value.
#[derive(Clone, Copy)]
pub enum Container<'a> {
    Vars(&'a Vars),
    Value(&'a Value),
}

impl<'a> Container<'a> {
    /// Follows `path` down from here.
    pub fn walk(self, path: &[Key]) -> Option<Container<'a>> {
        let mut current = self;
        for key in path {
            current = Container::Value(current.child(key)?);
        }
        Some(current)
    }

    fn child(self, key: &Key) -> Option<&'a Value> {
        match (self, key) {
            (Container::Vars(vars), Key::Field(name)) => vars.get(name),
            (Container::Value(Value::Object(map)), Key::Field(name)) => map.get(name),
            (Container::Value(Value::Array(items)), Key::Index(i)) => items.get(*i),
            _ => None,
        }
    }

    /// The children, optionally only the indexed or the named ones.
    pub fn entries(self, filter: Option<&str>) -> Vec<(Key, Cow<'a, Value>)> {
        let (named, indexed) = match filter {
            Some("indexed") => (false, true),
            Some("named") => (true, false),
            _ => (true, true),
        };
        match self {
            Container::Vars(vars) if named => {
                vars.iter().map(|(k, v)| (Key::Field(k.clone()), Cow::Borrowed(v))).collect()
            }
            Container::Value(Value::Object(map)) if named => {
                map.iter().map(|(k, v)| (Key::Field(k.clone()), Cow::Borrowed(v))).collect()
            }
            Container::Value(Value::Array(items)) if indexed => {
                items.iter().enumerate().map(|(i, v)| (Key::Index(i), Cow::Borrowed(v))).collect()
            }
            Container::Value(Value::String(text)) if indexed => {
                let chars: Vec<char> = text.chars().collect();
                let pieces = chars.chunks(MAX_STRING).map(|piece| Cow::Owned(Value::String(piece.iter().collect())));
                pieces.enumerate().map(|(n, piece)| (Key::Piece(n), piece)).collect()
            }
            _ => Vec::new(),
        }
    }
}

/// The `start`/`count` window of a list (DAP paging).
pub fn page<T>(items: Vec<T>, start: Option<i64>, count: Option<i64>) -> Vec<T> {
    let start = start.unwrap_or(0).max(0) as usize;
    let count = match count {
        Some(n) if n > 0 => n as usize,
        _ => usize::MAX,
    };
    items.into_iter().skip(start).take(count).collect()
}

/// How a value reads in one line.
pub fn preview(value: &Value) -> String {
    match value {
        Value::String(s) if s.chars().count() > MAX_STRING => {
            let cut: String = s.chars().take(MAX_STRING).collect();
            format!("{}…", serde_json::to_string(&cut).unwrap_or_default().trim_end_matches('"'))
        }
        Value::Array(items) => {
            let json = serde_json::to_string(value).unwrap_or_default();
            if json.len() <= MAX_INLINE { json } else { format!("list of {}", items.len()) }
        }
        Value::Object(map) => {
            let json = serde_json::to_string(value).unwrap_or_default();
            if json.len() <= MAX_INLINE {
                json
            } else {
                let keys: Vec<&str> = map.keys().take(4).map(String::as_str).collect();
                let more = if map.len() > 4 { ", …" } else { "" };
                format!("{{{}{more}}}", keys.join(", "))
            }
        }
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

/// Counts of a container's children, for the client's paging.
pub fn counts(value: &Value) -> (Option<i64>, Option<i64>) {
    match value {
        Value::Object(map) => (Some(map.len() as i64), None),
        Value::Array(items) => (None, Some(items.len() as i64)),
        Value::String(text) if is_container(value) => (None, Some(text.chars().count().div_ceil(MAX_STRING) as i64)),
        _ => (None, None),
    }
}

/// Whether a value expands: a list, an object, or a string too long to preview.
pub fn is_container(value: &Value) -> bool {
    match value {
        Value::Object(_) | Value::Array(_) => true,
        Value::String(text) => text.len() > MAX_STRING && text.chars().nth(MAX_STRING).is_some(),
        _ => false,
    }
}

/// The DSL expression that reads a child, when there is one (lists have no
/// index syntax).
pub fn child_expression(parent: Option<&str>, key: &Key) -> Option<String> {
    let Key::Field(name) = key else { return None };
    let plain = !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_');
    match parent {
        None if plain => Some(format!("${name}")),
        Some(parent) if plain => Some(format!("{parent}.{name}")),
        _ => None,
    }
}

/// A child as a DAP variable; `reference` makes a handle for a container.
pub fn variable(key: &Key, value: &Value, evaluate_name: Option<String>, reference: impl FnOnce() -> i64) -> Variable {
    let (named, indexed) = counts(value);
    Variable {
        name: key.name(),
        value: preview(value),
        kind: type_name(value).to_string(),
        variables_reference: if is_container(value) { reference() } else { 0 },
        named_variables: named,
        indexed_variables: indexed,
        evaluate_name,
    }
}

/// Sets child `name` of the container at `path` in `vars`. Only existing
/// children can be set.
pub fn set(vars: &mut Vars, path: &[Key], name: &str, new: Value) -> Result<(), EditError> {
    let missing = || EditError::NoChild(name.to_string());
    let Some((first, rest)) = path.split_first() else {
        let slot = vars.get_mut(name).ok_or_else(missing)?;
        *slot = new;
        return Ok(());
    };
    let Key::Field(first) = first else { return Err(missing()) };
    set_in(vars.get_mut(first).ok_or_else(missing)?, rest, name, new)
}

/// Sets child `name` of the container at `path` in `root`. Only existing
/// children can be set.
pub fn set_in(root: &mut Value, path: &[Key], name: &str, new: Value) -> Result<(), EditError> {
    let missing = || EditError::NoChild(name.to_string());
    let mut current = root;
    for key in path {
        current = match (current, key) {
            (Value::Object(map), Key::Field(field)) => map.get_mut(field),
            (Value::Array(items), Key::Index(i)) => items.get_mut(*i),
            _ => None,
        }
        .ok_or_else(missing)?;
    }
    let slot = match current {
        Value::Object(map) => map.get_mut(name),
        Value::Array(items) => name
            .strip_prefix('[')
            .and_then(|n| n.strip_suffix(']'))
            .and_then(|n| n.parse::<usize>().ok())
            .and_then(|i| items.get_mut(i)),
        _ => None,
    }
    .ok_or_else(missing)?;
    *slot = new;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn previews_are_short_and_typed() {
        assert_eq!(preview(&json!("a\"b")), r#""a\"b""#);
        assert_eq!(preview(&json!([1, 2])), "[1,2]");
        let long: Vec<i64> = (0..100).collect();
        assert_eq!(preview(&json!(long)), "list of 100");
        let wide = json!({"alpha": "x".repeat(40), "beta": "y".repeat(40), "c": 1, "d": 2, "e": 3});
        assert_eq!(preview(&wide), "{alpha, beta, c, d, …}");
        let huge = "z".repeat(MAX_STRING + 5);
        assert!(preview(&json!(huge)).ends_with("z…"));
    }

    #[test]
    fn long_strings_expand_into_their_whole_text() {
        let text: String = "é".repeat(MAX_STRING) + "tail";
        let value = json!(text);
        assert!(is_container(&value) && !is_container(&json!("é".repeat(MAX_STRING))));
        assert_eq!(counts(&value), (None, Some(2)));
        let pieces = Container::Value(&value).entries(None);
        let names: Vec<String> = pieces.iter().map(|(k, _)| k.name()).collect();
        assert_eq!(names, ["[0..10000]", "[10000..20000]"]);
        let whole: String = pieces.iter().map(|(_, v)| v.as_str().unwrap()).collect();
        assert_eq!(whole, text);
    }

    #[test]
    fn containers_walk_filter_and_page() {
        let vars: Vars = [("r".to_string(), json!({"a": [10, 20, 30]}))].into_iter().collect();
        let list = Container::Vars(&vars).walk(&[Key::Field("r".into()), Key::Field("a".into())]).unwrap();
        let entries = list.entries(Some("indexed"));
        assert_eq!(page(entries, Some(1), Some(1)), vec![(Key::Index(1), Cow::Borrowed(&json!(20)))]);
        assert!(list.entries(Some("named")).is_empty());
        assert!(Container::Vars(&vars).walk(&[Key::Field("nope".into())]).is_none());
    }

    #[test]
    fn set_writes_existing_children_only() {
        let mut vars: Vars = [("r".to_string(), json!({"a": [1, 2]}))].into_iter().collect();
        set(&mut vars, &[Key::Field("r".into()), Key::Field("a".into())], "[1]", json!("two")).unwrap();
        set(&mut vars, &[Key::Field("r".into())], "a", json!({"b": true})).unwrap();
        assert_eq!(vars["r"], json!({"a": {"b": true}}));
        assert!(set(&mut vars, &[], "new", json!(1)).is_err());
        assert!(set(&mut vars, &[Key::Field("r".into())], "zz", json!(1)).is_err());
    }

    #[test]
    fn evaluate_names_follow_fields() {
        assert_eq!(child_expression(None, &Key::Field("x".into())).as_deref(), Some("$x"));
        assert_eq!(child_expression(Some("$x"), &Key::Field("y".into())).as_deref(), Some("$x.y"));
        assert_eq!(child_expression(Some("$x"), &Key::Index(0)), None);
        assert_eq!(child_expression(Some("$x"), &Key::Field("a b".into())), None);
    }
}

/// Why a variable or a model call cannot take a new value (the JSON
/// reader's reason, for a call).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    /// The name of the child that is not there.
    #[error("there is no '{0}' here")]
    NoChild(String),
    #[error("the call would not be a valid request: {0}")]
    InvalidRequest(String),
    #[error("the reply would not be a valid reply: {0}")]
    InvalidReply(String),
}
