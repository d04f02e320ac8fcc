//! One redaction for every place a run writes or sends text: every substring
//! occurrence of every secret value is replaced by `[redacted]`.

use std::sync::RwLock;

use serde_json::Value;

/// What replaces a secret.
pub const REDACTED: &str = "[redacted]";

/// Secret values known to a run. Shared by the event emitter, the cassettes
/// and the tool-result path, and filled as secrets become known.
#[derive(Default)]
pub struct Redactor {
    /// Longest first, so that a secret containing another is replaced whole.
    secrets: RwLock<Vec<String>>,
}

/// A value too short to be redacted without mangling every message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooShort {
    pub len: usize,
}

impl Redactor {
    /// Values shorter than this are refused as secrets.
    pub const MIN_LEN: usize = 4;

    pub fn new() -> Redactor {
        Redactor::default()
    }

    /// Adds a secret. An empty value is ignored; a value shorter than
    /// `MIN_LEN` characters is refused (the caller warns).
    pub fn add(&self, value: &str) -> Result<(), TooShort> {
        let len = value.chars().count();
        if len == 0 {
            return Ok(());
        }
        if len < Self::MIN_LEN {
            return Err(TooShort { len });
        }
        let mut secrets = self.secrets.write().unwrap_or_else(|p| p.into_inner());
        if !secrets.iter().any(|s| s == value) {
            secrets.push(value.to_string());
            secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        }
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.secrets.read().unwrap_or_else(|p| p.into_inner()).is_empty()
    }

    /// `text` with every occurrence of every secret replaced; `None` if it
    /// holds none.
    pub fn redact_str(&self, text: &str) -> Option<String> {
        let secrets = self.secrets.read().unwrap_or_else(|p| p.into_inner());
        if !secrets.iter().any(|s| text.contains(s.as_str())) {
            return None;
        }
        Some(secrets.iter().fold(text.to_string(), |text, secret| text.replace(secret.as_str(), REDACTED)))
    }

    /// How many bytes at the end of `text` could be the start of a secret
    /// that the next piece of a stream completes: a stream holds them back.
    pub fn held_back(&self, text: &str) -> usize {
        let secrets = self.secrets.read().unwrap_or_else(|p| p.into_inner());
        secrets
            .iter()
            .flat_map(|secret| secret.char_indices().skip(1).map(|(end, _)| &secret[..end]))
            .filter(|prefix| text.ends_with(prefix))
            .map(str::len)
            .max()
            .unwrap_or(0)
    }

    /// `text` redacted.
    pub fn redact(&self, text: &str) -> String {
        self.redact_str(text).unwrap_or_else(|| text.to_string())
    }

    /// Redacts every string (and object key) inside `value`; whether anything changed.
    pub fn redact_value(&self, value: &mut Value) -> bool {
        if self.is_empty() {
            return false;
        }
        match value {
            Value::String(text) => match self.redact_str(text) {
                Some(redacted) => {
                    *text = redacted;
                    true
                }
                None => false,
            },
            Value::Array(items) => items.iter_mut().fold(false, |changed, item| self.redact_value(item) | changed),
            Value::Object(map) => {
                let mut changed = false;
                let entries = std::mem::take(map);
                for (key, mut item) in entries {
                    changed |= self.redact_value(&mut item);
                    let key = match self.redact_str(&key) {
                        Some(redacted) => {
                            changed = true;
                            redacted
                        }
                        None => key,
                    };
                    map.insert(key, item);
                }
                changed
            }
            _ => false,
        }
    }
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} secrets)", self.secrets.read().map_or(0, |s| s.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_occurrence_of_every_secret_goes_longest_first() {
        let redactor = Redactor::new();
        redactor.add("tok-123").unwrap();
        redactor.add("tok-123456").unwrap();
        assert_eq!(redactor.add("abc"), Err(TooShort { len: 3 }));
        assert_eq!(redactor.add(""), Ok(()));
        assert_eq!(redactor.redact("Bearer tok-123456 and tok-123, abc"), "Bearer [redacted] and [redacted], abc");
        let mut value = json!({"a": ["x tok-123 y", {"tok-123": 1}], "b": 2});
        assert!(redactor.redact_value(&mut value));
        assert_eq!(value, json!({"a": ["x [redacted] y", {"[redacted]": 1}], "b": 2}));
        assert!(!redactor.redact_value(&mut json!({"clean": "text"})));
        assert_eq!(format!("{redactor:?}"), "Redactor(2 secrets)");
    }
}
