//! The standard library of flow expressions. Names and arities come from
//! `sr_hir::stdlib::FUNCTIONS`, the table the checker uses: a call the table
//! does not allow fails here with the same words as `sr check`.
//!
//! Every function is pure but those of `sr_hir::stdlib::NONDETERMINISTIC`
//! (`uuid`, `now`, `random`, `random_int`), whose values a run journals
//! (`run::flow_tools`), and bounded: strings the
//! functions build stay under [`MAX_TEXT`] bytes, `range` under [`MAX_RANGE`]
//! items, and regular expressions under the `regex` crate's size limits.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use regex::{Regex, RegexBuilder};
use serde_json::{Map, Value};
use sr_hir::stdlib;

use crate::value::{self, ValueError, display, type_name};

type Result<T> = std::result::Result<T, ValueError>;

/// The longest string a function builds (`replace`, `regex_replace`).
pub const MAX_TEXT: usize = 64 << 20;
/// The most items `range` makes.
pub const MAX_RANGE: usize = 1 << 20;
/// The longest regular expression, and the most memory one may compile to.
const MAX_PATTERN: usize = 4096;
const REGEX_SIZE_LIMIT: usize = 1 << 20;

fn err<T>(message: impl Into<String>) -> Result<T> {
    Err(ValueError(message.into()))
}

/// Calls `name` with `args`.
pub fn call(name: &str, args: &[Value]) -> Result<Value> {
    let Some(f) = stdlib::function(name) else { return err(format!("unknown function '{name}'")) };
    if !f.accepts(args.len()) {
        return err(format!("{name}() takes {}, {} given", f.arity_text(), args.len()));
    }
    let arg = |i: usize| &args[i];
    let opt = |i: usize| args.get(i);
    Ok(match name {
        "len" => Value::from(match arg(0) {
            Value::String(s) => s.chars().count(),
            Value::Array(a) => a.len(),
            Value::Object(o) => o.len(),
            other => return wrong(name, "a string, list or object", other),
        }),
        "str" => Value::String(opt(0).map(display).unwrap_or_default()),
        "int" => int(arg(0))?,
        "float" => float(arg(0))?,
        "bool" => Value::Bool(value::truthy(arg(0))),
        "lower" => Value::String(text(name, arg(0))?.to_lowercase()),
        "upper" => Value::String(text(name, arg(0))?.to_uppercase()),
        "trim" => Value::String(text(name, arg(0))?.trim().to_string()),
        "split" => {
            let sep = text(name, arg(1))?;
            if sep.is_empty() {
                return err("split() needs a separator that is not empty");
            }
            text(name, arg(0))?.split(sep).map(|p| Value::String(p.to_string())).collect()
        }
        "join" => {
            let items = list(name, arg(0))?;
            Value::String(items.iter().map(display).collect::<Vec<_>>().join(text(name, arg(1))?))
        }
        "replace" => Value::String(replace(text(name, arg(0))?, text(name, arg(1))?, text(name, arg(2))?)?),
        "starts_with" => Value::Bool(text(name, arg(0))?.starts_with(text(name, arg(1))?)),
        "ends_with" => Value::Bool(text(name, arg(0))?.ends_with(text(name, arg(1))?)),
        "slice" => slice(arg(0), arg(1), opt(2))?,
        "regex_match" => Value::Bool(regex(arg(1))?.is_match(text(name, arg(0))?)),
        "regex_find_all" => find_all(text(name, arg(0))?, &*regex(arg(1))?),
        "regex_replace" => Value::String(regex_replace(text(name, arg(0))?, &*regex(arg(1))?, text(name, arg(2))?)?),
        "json_parse" => {
            serde_json::from_str(text(name, arg(0))?).map_err(|e| ValueError(format!("json_parse(): not JSON: {e}")))?
        }
        "json_format" => Value::String(json_format(arg(0), opt(1))?),
        "extract_code" => {
            let lang = opt(1).map(|l| text(name, l)).transpose()?;
            Value::String(extract_code(text(name, arg(0))?, lang).to_string())
        }
        "keys" => object(name, arg(0))?.keys().map(|k| Value::String(k.clone())).collect(),
        "values" => object(name, arg(0))?.values().cloned().collect(),
        "range" => range(args)?,
        "sum" => {
            let start = opt(1).cloned().unwrap_or(Value::from(0));
            list(name, arg(0))?.iter().try_fold(start, |acc, v| value::add(&acc, v))?
        }
        "min" | "max" | "sort" | "sorted" => {
            let items = match args {
                [single] => list(name, single)?.clone(),
                many => many.to_vec(),
            };
            ordered(name, items)?
        }
        "unique" => unique(list(name, arg(0))?),
        "abs" => match arg(0) {
            Value::Number(n) if let Some(v) = n.as_i64().and_then(i64::checked_abs) => Value::from(v),
            Value::Number(n) => number(n.as_f64().unwrap_or(0.0).abs())?,
            other => return wrong(name, "a number", other),
        },
        "round" => {
            let x = num(name, arg(0))?;
            match opt(1) {
                None => Value::from(x.round_ties_even() as i64),
                Some(digits) => {
                    let factor = 10f64.powi(num(name, digits)?.clamp(-308.0, 308.0) as i32);
                    number((x * factor).round_ties_even() / factor)?
                }
            }
        }
        "uuid" => Value::String(uuid::Uuid::new_v4().to_string()),
        "now" => Value::String(now()),
        "random" => number(fastrand::f64())?,
        "random_int" => {
            let bound = |v: &Value| match v {
                Value::Number(n) if let Some(i) = n.as_i64() => Ok(i),
                other => wrong(name, "two integers", other),
            };
            let (low, high) = (bound(arg(0))?, bound(arg(1))?);
            if low > high {
                return err(format!("random_int() needs low <= high, got {low} and {high}"));
            }
            Value::from(fastrand::i64(low..=high))
        }
        "process" => arg(0).clone(),
        other => unreachable!("`{other}` is in the table but has no implementation"),
    })
}

fn wrong<T>(function: &str, expected: &str, got: &Value) -> Result<T> {
    let got = type_name(got);
    let article = if got.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" };
    err(format!("{function}() needs {expected}, got {article} {got}"))
}

fn text<'v>(function: &str, v: &'v Value) -> Result<&'v str> {
    v.as_str().map_or_else(|| wrong(function, "a string", v), Ok)
}

fn list<'v>(function: &str, v: &'v Value) -> Result<&'v Vec<Value>> {
    v.as_array().map_or_else(|| wrong(function, "a list", v), Ok)
}

fn object<'v>(function: &str, v: &'v Value) -> Result<&'v Map<String, Value>> {
    v.as_object().map_or_else(|| wrong(function, "an object", v), Ok)
}

fn num(function: &str, v: &Value) -> Result<f64> {
    match v {
        Value::Number(n) => Ok(n.as_f64().unwrap_or(0.0)),
        other => wrong(function, "a number", other),
    }
}

fn whole(function: &str, v: &Value) -> Result<i64> {
    v.as_i64().map_or_else(|| wrong(function, "a whole number", v), Ok)
}

fn number(f: f64) -> Result<Value> {
    serde_json::Number::from_f64(f).map(Value::Number).ok_or_else(|| ValueError(format!("{f} is not a number")))
}

fn int(v: &Value) -> Result<Value> {
    Ok(Value::from(match v {
        Value::Number(n) if let Some(i) = n.as_i64() => i,
        Value::Number(n) => {
            let f = n.as_f64().unwrap_or(0.0).trunc();
            if !(-9.2e18..9.2e18).contains(&f) {
                return err(format!("int() of {f} is out of range"));
            }
            f as i64
        }
        Value::String(s) => s.trim().parse::<i64>().map_err(|_| ValueError(format!("int() cannot read '{s}'")))?,
        Value::Bool(b) => *b as i64,
        other => return wrong("int", "a number, string or bool", other),
    }))
}

fn float(v: &Value) -> Result<Value> {
    match v {
        Value::Number(n) => number(n.as_f64().unwrap_or(0.0)),
        Value::String(s) => match s.trim().parse::<f64>() {
            Ok(f) if f.is_finite() => number(f),
            _ => err(format!("float() cannot read '{s}'")),
        },
        Value::Bool(b) => number(*b as i64 as f64),
        other => wrong("float", "a number, string or bool", other),
    }
}

fn replace(text: &str, old: &str, new: &str) -> Result<String> {
    let count = if old.is_empty() { text.chars().count() + 1 } else { text.matches(old).count() };
    let len = count.checked_mul(new.len()).and_then(|added| (text.len() - count * old.len()).checked_add(added));
    match len {
        Some(len) if len <= MAX_TEXT => Ok(if old.is_empty() {
            // Python: `new` before every character and at the end.
            let mut out = String::with_capacity(len);
            for c in text.chars() {
                out.push_str(new);
                out.push(c);
            }
            out.push_str(new);
            out
        } else {
            text.replace(old, new)
        }),
        _ => err(format!("replace() would make a string longer than {MAX_TEXT} bytes")),
    }
}

/// Python's slice bounds: negative counts from the end, out of range clamps.
fn slice(x: &Value, start: &Value, end: Option<&Value>) -> Result<Value> {
    let bound = |v: &Value, len: usize| -> Result<usize> {
        let i = whole("slice", v)?;
        let len = len as i64;
        Ok((if i < 0 { (len + i).max(0) } else { i.min(len) }) as usize)
    };
    let range = |len: usize| -> Result<(usize, usize)> {
        let from = bound(start, len)?;
        let to = match end {
            Some(Value::Null) | None => len,
            Some(e) => bound(e, len)?,
        };
        Ok((from, to.max(from)))
    };
    match x {
        Value::String(s) => {
            let chars: Vec<char> = s.chars().collect();
            let (from, to) = range(chars.len())?;
            Ok(Value::String(chars[from..to].iter().collect()))
        }
        Value::Array(items) => {
            let (from, to) = range(items.len())?;
            Ok(Value::Array(items[from..to].to_vec()))
        }
        other => wrong("slice", "a string or a list", other),
    }
}

/// Compiled patterns, by text; cleared when it holds [`CACHED_PATTERNS`].
static PATTERNS: LazyLock<Mutex<HashMap<String, Arc<Regex>>>> = LazyLock::new(Default::default);
const CACHED_PATTERNS: usize = 64;

fn regex(pattern: &Value) -> Result<Arc<Regex>> {
    let pattern = text("regex", pattern)?;
    if pattern.len() > MAX_PATTERN {
        return err(format!("a regular expression is limited to {MAX_PATTERN} bytes"));
    }
    let mut cache = PATTERNS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(re) = cache.get(pattern) {
        return Ok(re.clone());
    }
    let re = RegexBuilder::new(pattern)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_SIZE_LIMIT)
        .nest_limit(64)
        .build()
        .map_err(|e| ValueError(format!("invalid regular expression: {e}")))?;
    if cache.len() >= CACHED_PATTERNS {
        cache.clear();
    }
    let re = Arc::new(re);
    cache.insert(pattern.to_string(), re.clone());
    Ok(re)
}

/// Python's `re.findall`: whole matches, group 1, or a list of the groups;
/// a group that did not take part is `""`.
fn find_all(text: &str, re: &Regex) -> Value {
    let group = |m: Option<regex::Match<'_>>| Value::String(m.map_or("", |m| m.as_str()).to_string());
    match re.captures_len() {
        1 => re.find_iter(text).map(|m| Value::String(m.as_str().to_string())).collect(),
        2 => re.captures_iter(text).map(|c| group(c.get(1))).collect(),
        _ => re.captures_iter(text).map(|c| Value::Array(c.iter().skip(1).map(group).collect())).collect(),
    }
}

fn regex_replace(text: &str, re: &Regex, with: &str) -> Result<String> {
    let mut out = String::new();
    let mut last = 0;
    for caps in re.captures_iter(text) {
        let m = caps.get(0).expect("group 0 always matches");
        out.push_str(&text[last..m.start()]);
        caps.expand(with, &mut out);
        last = m.end();
        if out.len() > MAX_TEXT {
            return err(format!("regex_replace() would make a string longer than {MAX_TEXT} bytes"));
        }
    }
    out.push_str(&text[last..]);
    Ok(out)
}

fn json_format(v: &Value, indent: Option<&Value>) -> Result<String> {
    let Some(indent) = indent else { return Ok(serde_json::to_string(v).unwrap_or_default()) };
    let width = whole("json_format", indent)?;
    if !(0..=16).contains(&width) {
        return err("json_format() indents by 0 to 16 spaces");
    }
    let spaces = " ".repeat(width as usize);
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(spaces.as_bytes());
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    serde::Serialize::serialize(v, &mut serializer).map_err(|e| ValueError(e.to_string()))?;
    Ok(String::from_utf8(out).expect("serde_json writes UTF-8"))
}

/// The last fenced block tagged `lang` (case-insensitively), else the last
/// fenced block, else the text. A fence is a line of three or more
/// backticks (indented or not); a block runs to the next such line.
pub fn extract_code<'t>(text: &'t str, lang: Option<&str>) -> &'t str {
    let mut blocks: Vec<(&str, &str)> = Vec::new();
    let mut open: Option<(&str, usize)> = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        if let Some(info) = trimmed.strip_prefix("```") {
            let info = info.trim_start_matches('`').trim();
            match open.take() {
                Some((tag, start)) => blocks.push((tag, text[start..offset].trim_end_matches(['\n', '\r']))),
                None => open = Some((info.split_whitespace().next().unwrap_or(""), offset + line.len())),
            }
        }
        offset += line.len();
    }
    let tagged = lang.and_then(|lang| blocks.iter().rev().find(|(tag, _)| tag.eq_ignore_ascii_case(lang)));
    tagged.or(blocks.last()).map_or(text, |(_, code)| code)
}

fn range(args: &[Value]) -> Result<Value> {
    let ints = args.iter().map(|a| whole("range", a)).collect::<Result<Vec<i64>>>()?;
    let (start, end, step) = match ints[..] {
        [end] => (0, end, 1),
        [start, end] => (start, end, 1),
        [start, end, step] => (start, end, step),
        _ => unreachable!("the table allows 1 to 3 arguments"),
    };
    if step == 0 {
        return err("range() step must not be zero");
    }
    let span = if step > 0 { end as i128 - start as i128 } else { start as i128 - end as i128 };
    let count = if span <= 0 { 0 } else { (span + step.unsigned_abs() as i128 - 1) / step.unsigned_abs() as i128 };
    if count > MAX_RANGE as i128 {
        return err(format!("range() is limited to {MAX_RANGE} items, this one has {count}"));
    }
    Ok((0..count as i64).map(|i| Value::from(start + i * step)).collect())
}

fn ordered(name: &str, mut items: Vec<Value>) -> Result<Value> {
    let mut error = None;
    items.sort_by(|a, b| match value::compare(a, b, "<") {
        Ok(true) => std::cmp::Ordering::Less,
        Ok(false) if value::equals(a, b) => std::cmp::Ordering::Equal,
        Ok(false) => std::cmp::Ordering::Greater,
        Err(e) => {
            error.get_or_insert(e);
            std::cmp::Ordering::Equal
        }
    });
    if let Some(e) = error {
        return Err(ValueError(format!("{name}(): {}", e.0)));
    }
    match name {
        "sort" | "sorted" => Ok(Value::Array(items)),
        _ if items.is_empty() => err(format!("{name}() of an empty list")),
        "min" => Ok(items.swap_remove(0)),
        _ => Ok(items.pop().expect("not empty")),
    }
}

/// Items without repeats (equal as `==` compares them: `1`, `1.0` and `true`
/// are one item), first occurrences kept.
fn unique(items: &[Value]) -> Value {
    let key = |v: &Value| match v {
        Value::Number(n) => format!("n{}", n.as_f64().unwrap_or(0.0)),
        Value::Bool(b) => format!("n{}", *b as u8),
        other => format!("v{other}"),
    };
    let mut seen = std::collections::HashSet::new();
    items.iter().filter(|v| seen.insert(key(v))).cloned().collect()
}

/// The date `days` after 1970-01-01 (Howard Hinnant's days-to-civil).
pub fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// The current UTC time, RFC 3339 with milliseconds.
fn now() -> String {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (year, month, day) = civil(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        since.subsec_millis()
    )
}
