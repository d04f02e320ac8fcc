//! Secrets of MCP connections: `${env:VAR}` and `${VAR}` resolved from the
//! environment, and kept out of every message the runtime shows.

/// Replaces `${env:VAR}` and `${VAR}` in `text` with `lookup(VAR)`. Anything
/// else, including a `${` without its `}`, stays as written.
pub(crate) fn substitute(text: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<String, MissingVar> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let inner = after[..end].trim();
        let name = inner.strip_prefix("env:").unwrap_or(inner).trim();
        if is_var_name(name) {
            out.push_str(&lookup(name).ok_or_else(|| MissingVar(name.to_string()))?);
        } else {
            out.push_str(&rest[start..start + 2 + end + 1]);
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn is_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// An environment variable a connection needs and the process does not have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MissingVar(pub String);

/// The secret values of one connection (each variable's value, not the text
/// it was substituted into), to scrub from messages: error texts of HTTP
/// clients and servers may echo what was sent. Values shorter than
/// [`sr_llm::Redactor::MIN_LEN`] would garble messages more than they protect:
/// they are refused, and the variables named for a warning.
#[derive(Clone, Default)]
pub(crate) struct Secrets {
    redactor: std::sync::Arc<sr_llm::Redactor>,
    values: Vec<String>,
    pub(crate) too_short: Vec<String>,
}

impl Secrets {
    /// Adds the value of the variable `name`.
    pub(crate) fn add(&mut self, name: &str, value: &str) {
        match self.redactor.add(value) {
            Ok(()) if !value.is_empty() && !self.values.iter().any(|v| v == value) => {
                self.values.push(value.to_string())
            }
            Ok(()) => {}
            Err(_) => self.too_short.push(name.to_string()),
        }
    }

    pub(crate) fn redact(&self, text: &str) -> String {
        self.redactor.redact(text)
    }

    /// The values, for the run's redactor.
    pub(crate) fn values(&self) -> &[String] {
        &self.values
    }
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secrets({} redacted)", self.values.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("s3cr3t".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn both_spellings_are_resolved_and_the_rest_kept() {
        assert_eq!(substitute("${env:TOKEN}", env).unwrap(), "s3cr3t");
        assert_eq!(substitute("a ${TOKEN} b ${ env:TOKEN }", env).unwrap(), "a s3cr3t b s3cr3t");
        assert_eq!(substitute("x${EMPTY}y", env).unwrap(), "xy");
        assert_eq!(substitute("$TOKEN ${} ${1A} ${TOKEN", env).unwrap(), "$TOKEN ${} ${1A} ${TOKEN");
        assert_eq!(substitute("ünï ${TOKEN}€", env).unwrap(), "ünï s3cr3t€");
    }

    #[test]
    fn a_missing_variable_is_named() {
        assert_eq!(substitute("Bearer ${env:NOPE}", env), Err(MissingVar("NOPE".into())));
    }

    #[test]
    fn secrets_are_scrubbed_longest_first_and_never_debug_printed() {
        let mut secrets = Secrets::default();
        secrets.add("A", "abcd");
        secrets.add("B", "abcdefgh");
        secrets.add("C", "ab");
        assert_eq!(secrets.redact("x abcdefgh y abcd z ab"), "x [redacted] y [redacted] z ab");
        assert_eq!(format!("{secrets:?}"), "Secrets(2 redacted)");
        assert_eq!(secrets.too_short, ["C"]);
    }
}
