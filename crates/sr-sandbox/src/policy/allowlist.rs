//! Module allowlist entries: `json` (that module), `numpy.*` (the package and every
//! submodule), `*` (anything).

use std::fmt;
use std::str::FromStr;

/// Standard modules with no file, process or network access of their own.
/// `__future__` is here because `from __future__ import annotations` is an import.
pub const DEFAULT_MODULES: &[&str] = &[
    "__future__",
    "abc",
    "array",
    "base64",
    "bisect",
    "calendar",
    "cmath",
    "collections.*",
    "contextlib",
    "copy",
    "dataclasses",
    "datetime",
    "decimal",
    "difflib",
    "enum",
    "fractions",
    "functools",
    "hashlib",
    "heapq",
    "itertools",
    "json.*",
    "math",
    "numbers",
    "operator",
    "pprint",
    "random",
    "re",
    "statistics",
    "string",
    "textwrap",
    "time",
    "typing",
    "unicodedata",
    "uuid",
];

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ModulePattern {
    Exact(String),
    /// `pkg.*`: `pkg` itself and everything below it.
    Subtree(String),
    /// `*`: every module (the sandbox is then the only boundary).
    Any,
}

impl ModulePattern {
    pub fn matches(&self, module: &str) -> bool {
        match self {
            ModulePattern::Exact(name) => name == module,
            ModulePattern::Subtree(root) => {
                module.strip_prefix(root.as_str()).is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
            }
            ModulePattern::Any => true,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternError(pub String);

impl fmt::Display for PatternError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid module pattern '{}': use `name`, `package.*` or `*`", self.0)
    }
}

impl std::error::Error for PatternError {}

impl FromStr for ModulePattern {
    type Err = PatternError;

    fn from_str(text: &str) -> Result<ModulePattern, PatternError> {
        let text = text.trim();
        if text == "*" {
            return Ok(ModulePattern::Any);
        }
        let (name, subtree) = match text.strip_suffix(".*") {
            Some(name) => (name, true),
            None => (text, false),
        };
        if !is_dotted_name(name) {
            return Err(PatternError(text.to_string()));
        }
        Ok(if subtree { ModulePattern::Subtree(name.to_string()) } else { ModulePattern::Exact(name.to_string()) })
    }
}

impl fmt::Display for ModulePattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModulePattern::Exact(name) => f.write_str(name),
            ModulePattern::Subtree(root) => write!(f, "{root}.*"),
            ModulePattern::Any => f.write_str("*"),
        }
    }
}

pub(crate) fn is_identifier(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c == '_' || c.is_alphabetic()) && chars.all(|c| c == '_' || c.is_alphanumeric())
}

fn is_dotted_name(text: &str) -> bool {
    text.split('.').all(is_identifier)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_matches_patterns() {
        let exact: ModulePattern = "json".parse().unwrap();
        assert!(exact.matches("json"));
        assert!(!exact.matches("json.decoder"));
        assert!(!exact.matches("jsonschema"));

        let subtree: ModulePattern = "numpy.*".parse().unwrap();
        assert!(subtree.matches("numpy"));
        assert!(subtree.matches("numpy.linalg.lapack"));
        assert!(!subtree.matches("numpyx"));

        assert!("*".parse::<ModulePattern>().unwrap().matches("os"));
        for bad in ["", "os.", "1abc", "a..b", "a.*.b", "a b", "*.x"] {
            assert!(bad.parse::<ModulePattern>().is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn defaults_are_valid_patterns() {
        for name in DEFAULT_MODULES {
            assert_eq!(name.parse::<ModulePattern>().unwrap().to_string(), *name);
        }
    }
}
