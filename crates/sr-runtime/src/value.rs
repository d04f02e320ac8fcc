//! Runtime values and their operators. Values are JSON values (upstream's are
//! Python objects that came from JSON); operators follow upstream's generated
//! Python: `+` concatenates lists, `contains` is Python's `in`, `~` compares
//! normalised text, truthiness is Python's.

use serde_json::{Map, Number, Value};

/// An error of an operation on values, without a location (the interpreter
/// adds it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueError(pub String);

type Result<T> = std::result::Result<T, ValueError>;

fn err<T>(message: impl Into<String>) -> Result<T> {
    Err(ValueError(message.into()))
}

/// Python truthiness.
pub fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// The type name used in messages.
pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "object",
    }
}

/// Text of a value as upstream renders scalars (Python `str()`): `True`,
/// `None`, `1.0`; lists and objects as JSON.
pub fn display(value: &Value) -> String {
    match value {
        Value::Null => "None".to_string(),
        Value::Bool(true) => "True".to_string(),
        Value::Bool(false) => "False".to_string(),
        Value::Number(n) => number_text(n),
        Value::String(s) => s.clone(),
        Value::Array(_) | Value::Object(_) => serde_json::to_string(value).unwrap_or_default(),
    }
}

fn number_text(n: &Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    let f = n.as_f64().unwrap_or(0.0);
    if f.fract() == 0.0 && f.abs() < 1e16 { format!("{f:.1}") } else { f.to_string() }
}

fn number(f: f64) -> Value {
    Number::from_f64(f).map_or(Value::Null, Value::Number)
}

fn as_int(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) => n.as_i64(),
        Value::Bool(b) => Some(*b as i64),
        _ => None,
    }
}

fn as_float(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::Bool(b) => Some(*b as i64 as f64),
        _ => None,
    }
}

/// `a + b`: lists concatenate, a scalar added to a list is appended, `null`
/// operands are skipped, otherwise numbers add and strings concatenate.
pub fn add(a: &Value, b: &Value) -> Result<Value> {
    Ok(match (a, b) {
        (Value::Null, other) | (other, Value::Null) => other.clone(),
        (Value::Array(x), Value::Array(y)) => Value::Array(x.iter().chain(y).cloned().collect()),
        (Value::Array(x), other) => Value::Array(x.iter().cloned().chain([other.clone()]).collect()),
        (Value::String(x), Value::String(y)) => Value::String(format!("{x}{y}")),
        _ => return arithmetic(a, b, "+", |x, y| x.checked_add(y), |x, y| x + y),
    })
}

pub fn sub(a: &Value, b: &Value) -> Result<Value> {
    arithmetic(a, b, "-", |x, y| x.checked_sub(y), |x, y| x - y)
}

/// The longest string `*` makes (Python would try and run out of memory).
const MAX_REPEATED_STRING: usize = 64 << 20;

pub fn mul(a: &Value, b: &Value) -> Result<Value> {
    match (a, b) {
        (Value::String(s), n) | (n, Value::String(s)) if let Some(times) = as_int(n) => {
            let times = usize::try_from(times).unwrap_or(0);
            match s.len().checked_mul(times) {
                Some(len) if len <= MAX_REPEATED_STRING => Ok(Value::String(s.repeat(times))),
                _ => err(format!("a string repeated {times} times is too long")),
            }
        }
        _ => arithmetic(a, b, "*", |x, y| x.checked_mul(y), |x, y| x * y),
    }
}

/// True division, as Python 3.
pub fn div(a: &Value, b: &Value) -> Result<Value> {
    let (Some(x), Some(y)) = (as_float(a), as_float(b)) else { return unsupported("/", a, b) };
    if y == 0.0 {
        return err("division by zero");
    }
    Ok(number(x / y))
}

/// Python's modulo (the sign follows the divisor).
pub fn rem(a: &Value, b: &Value) -> Result<Value> {
    if let (Some(x), Some(y)) = (as_int(a), as_int(b))
        && a.is_i64()
        && b.is_i64()
    {
        if y == 0 {
            return err("modulo by zero");
        }
        return Ok(Value::from(x.rem_euclid(y) + if y < 0 && x.rem_euclid(y) != 0 { y } else { 0 }));
    }
    let (Some(x), Some(y)) = (as_float(a), as_float(b)) else { return unsupported("%", a, b) };
    if y == 0.0 {
        return err("modulo by zero");
    }
    Ok(number(x - y * (x / y).floor()))
}

pub fn neg(a: &Value) -> Result<Value> {
    match a {
        Value::Number(n) if let Some(v) = n.as_i64().and_then(i64::checked_neg) => Ok(Value::from(v)),
        Value::Number(n) => Ok(number(-n.as_f64().unwrap_or(0.0))),
        other => err(format!("cannot negate a {}", type_name(other))),
    }
}

fn arithmetic(
    a: &Value,
    b: &Value,
    op: &str,
    int: impl Fn(i64, i64) -> Option<i64>,
    float: impl Fn(f64, f64) -> f64,
) -> Result<Value> {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64())
        && let Some(v) = int(x, y)
    {
        return Ok(Value::from(v));
    }
    match (as_float(a), as_float(b)) {
        (Some(x), Some(y)) if !a.is_string() && !b.is_string() => Ok(number(float(x, y))),
        _ => unsupported(op, a, b),
    }
}

fn unsupported<T>(op: &str, a: &Value, b: &Value) -> Result<T> {
    err(format!("unsupported operand types for {op}: {} and {}", type_name(a), type_name(b)))
}

/// `==` with Python's numeric equality (`1 == 1.0`).
pub fn equals(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(_), Value::Number(_))
        | (Value::Bool(_), Value::Number(_))
        | (Value::Number(_), Value::Bool(_)) => as_float(a) == as_float(b),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| equals(p, q)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equals(v, w)))
        }
        _ => a == b,
    }
}

/// `<`, `>`, `<=`, `>=`: numbers with numbers, strings with strings, lists
/// lexicographically; anything else is an error, as in Python.
pub fn compare(a: &Value, b: &Value, op: &str) -> Result<bool> {
    let ordering = match (a, b) {
        (Value::String(x), Value::String(y)) => x.cmp(y),
        _ => match (as_float(a), as_float(b)) {
            (Some(x), Some(y)) if !a.is_string() && !b.is_string() => {
                x.partial_cmp(&y).ok_or_else(|| ValueError("cannot compare NaN".into()))?
            }
            _ => {
                return err(format!("'{op}' is not supported between {} and {}", type_name(a), type_name(b)));
            }
        },
    };
    Ok(match op {
        "<" => ordering.is_lt(),
        ">" => ordering.is_gt(),
        "<=" => ordering.is_le(),
        _ => ordering.is_ge(),
    })
}

/// `a contains b`: Python's `b in a` (substring, list membership, object key).
pub fn contains(a: &Value, b: &Value) -> Result<bool> {
    match a {
        Value::String(s) => match b {
            Value::String(t) => Ok(s.contains(t.as_str())),
            other => err(format!("'contains' on a string needs a string, not a {}", type_name(other))),
        },
        Value::Array(items) => Ok(items.iter().any(|item| equals(item, b))),
        Value::Object(map) => Ok(map.contains_key(&display(b))),
        other => err(format!("'contains' needs a string, list or object, not a {}", type_name(other))),
    }
}

/// `a ~ b`: equal after normalising both texts: markdown emphasis characters
/// (`*`, `_`, `` ` ``, `#`) and punctuation (`. ! ? , ; :`) removed, lowercase,
/// whitespace collapsed.
pub fn similar(a: &Value, b: &Value) -> bool {
    normalize(&display(a)) == normalize(&display(b))
}

pub fn normalize(text: &str) -> String {
    let kept: String = text
        .chars()
        .filter(|c| !matches!(c, '*' | '_' | '`' | '#' | '.' | '!' | '?' | ',' | ';' | ':'))
        .flat_map(char::to_lowercase)
        .collect();
    kept.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `value.field`: object lookup; a missing field or a non-object is an error.
pub fn field<'a>(value: &'a Value, name: &str) -> Result<&'a Value> {
    match value {
        Value::Object(map) => map.get(name).ok_or_else(|| {
            let known: Vec<&str> = map.keys().map(String::as_str).collect();
            ValueError(format!("no field '{name}' (fields: {})", known.join(", ")))
        }),
        other => err(format!("cannot read field '{name}' of a {}", type_name(other))),
    }
}

/// Sets `path` inside `value`, creating objects along the way.
pub fn set_path(value: &mut Value, path: &[String], new: Value) -> Result<()> {
    let Some((first, rest)) = path.split_first() else {
        *value = new;
        return Ok(());
    };
    if value.is_null() {
        *value = Value::Object(Map::new());
    }
    match value {
        Value::Object(map) => set_path(map.entry(first.clone()).or_insert(Value::Null), rest, new),
        other => err(format!("cannot set field '{first}' of a {}", type_name(other))),
    }
}

/// Items to iterate: list items, object keys, string characters (Python's `for`).
pub fn iterate(value: &Value) -> Result<Vec<Value>> {
    match value {
        Value::Array(items) => Ok(items.clone()),
        Value::Object(map) => Ok(map.keys().map(|k| Value::String(k.clone())).collect()),
        Value::String(s) => Ok(s.chars().map(|c| Value::String(c.to_string())).collect()),
        other => err(format!("cannot iterate over a {}", type_name(other))),
    }
}

/// Parses model output: a fenced code block is unwrapped, then JSON is tried,
/// else the text is kept (so `"3.14"` becomes a number, as upstream).
pub fn from_model_text(text: &str) -> Value {
    let inner = strip_fence(text);
    serde_json::from_str(inner.trim()).unwrap_or_else(|_| Value::String(text.to_string()))
}

/// The body of the first ``` fenced block, or the text itself.
pub fn strip_fence(text: &str) -> &str {
    let Some(start) = text.find("```") else { return text };
    let after = &text[start + 3..];
    let body_start = after.find('\n').map_or(0, |i| i + 1);
    let body = &after[body_start..];
    match body.find("```") {
        Some(end) => &body[..end],
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn plus_follows_upstream_list_concat() {
        assert_eq!(add(&json!([1]), &json!([2, 3])).unwrap(), json!([1, 2, 3]));
        assert_eq!(add(&json!([1]), &json!("x")).unwrap(), json!([1, "x"]));
        assert_eq!(add(&json!(null), &json!([1])).unwrap(), json!([1]));
        assert_eq!(add(&json!("a"), &json!("b")).unwrap(), json!("ab"));
        assert_eq!(add(&json!(1), &json!(2.5)).unwrap(), json!(3.5));
        assert!(add(&json!(1), &json!("x")).is_err());
    }

    #[test]
    fn arithmetic_is_pythons() {
        assert_eq!(div(&json!(7), &json!(2)).unwrap(), json!(3.5));
        assert_eq!(rem(&json!(-7), &json!(3)).unwrap(), json!(2));
        assert_eq!(rem(&json!(7), &json!(-3)).unwrap(), json!(-2));
        assert!(div(&json!(1), &json!(0)).is_err());
        assert_eq!(mul(&json!("ab"), &json!(2)).unwrap(), json!("abab"));
        assert_eq!(neg(&json!(2)).unwrap(), json!(-2));
    }

    #[test]
    fn extremes_are_errors_or_floats_never_panics() {
        assert_eq!(mul(&json!("ab"), &json!(-3)).unwrap(), json!(""));
        assert!(mul(&json!("ab"), &json!(i64::MAX)).unwrap_err().0.contains("too long"));
        assert_eq!(neg(&json!(i64::MIN)).unwrap(), json!(9.223372036854776e18));
        assert_eq!(mul(&json!(i64::MAX), &json!(2)).unwrap(), json!(1.8446744073709552e19));
    }

    #[test]
    fn comparisons_and_membership() {
        assert!(equals(&json!(1), &json!(1.0)));
        assert!(compare(&json!(1), &json!(2), "<").unwrap());
        assert!(compare(&json!("a"), &json!(1), "<").is_err());
        assert!(contains(&json!("hello"), &json!("ell")).unwrap());
        assert!(contains(&json!([1, 2]), &json!(2.0)).unwrap());
        assert!(contains(&json!({"k": 1}), &json!("k")).unwrap());
    }

    #[test]
    fn normalized_equality_ignores_markup_and_case() {
        assert!(similar(&json!("**DRIFTING**."), &json!("drifting")));
        assert!(similar(&json!("  Yes,   it   is! "), &json!("yes it is")));
        assert!(!similar(&json!("yes"), &json!("no")));
    }

    #[test]
    fn display_is_pythons_str_for_scalars() {
        assert_eq!(display(&json!(true)), "True");
        assert_eq!(display(&json!(null)), "None");
        assert_eq!(display(&json!(2.0)), "2.0");
        assert_eq!(display(&json!({"a": [1]})), r#"{"a":[1]}"#);
    }

    #[test]
    fn model_text_is_parsed_leniently() {
        assert_eq!(from_model_text("2.5"), json!(2.5));
        assert_eq!(from_model_text("```json\n{\"a\": 1}\n```"), json!({"a": 1}));
        assert_eq!(from_model_text("plain words"), json!("plain words"));
    }

    #[test]
    fn set_path_creates_objects() {
        let mut v = json!(null);
        set_path(&mut v, &["a".into(), "b".into()], json!(1)).unwrap();
        assert_eq!(v, json!({"a": {"b": 1}}));
        assert!(set_path(&mut json!(1), &["a".into()], json!(1)).is_err());
    }
}
