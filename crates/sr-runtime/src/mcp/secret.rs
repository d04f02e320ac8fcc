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

/// The secret values of one connection, to scrub from messages: error texts of
/// HTTP clients and servers may echo what was sent.
#[derive(Clone, Default)]
pub(crate) struct Secrets(Vec<String>);

impl Secrets {
    /// Values this short would garble messages more than they protect.
    const MIN_LEN: usize = 4;

    pub(crate) fn add(&mut self, value: &str) {
        if value.len() >= Self::MIN_LEN && !self.0.iter().any(|s| s == value) {
            self.0.push(value.to_string());
            // Longest first, so that a secret containing another is scrubbed whole.
            self.0.sort_by_key(|s| std::cmp::Reverse(s.len()));
        }
    }

    pub(crate) fn redact(&self, text: &str) -> String {
        self.0.iter().fold(text.to_string(), |text, secret| text.replace(secret.as_str(), "[redacted]"))
    }
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secrets({} redacted)", self.0.len())
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
        secrets.add("abcd");
        secrets.add("abcdefgh");
        secrets.add("ab");
        assert_eq!(secrets.redact("x abcdefgh y abcd z ab"), "x [redacted] y [redacted] z ab");
        assert_eq!(format!("{secrets:?}"), "Secrets(2 redacted)");
    }
}
