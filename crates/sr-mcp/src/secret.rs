//! Secrets of MCP connections: `${env:VAR}` and `${VAR}` resolved from the
//! environment (`crate::vars`), and kept out of every message the runtime shows.

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
