//! SR109 `unknown-guardrail`: a guardrail name the runtime does not know, or one
//! it accepts but never triggers.
//!
//! `cognitive_drift` is upstream's intent-drift guardrail (an embedding model):
//! this runtime accepts it and never triggers it.
//!
//! ```sr
//! flow main:
//!     mask secrets
//! ```
//!
//! `unknown guardrail 'secrets'`, help `known guardrails: …`. Fix: use a known
//! guardrail (`pii`, `jailbreak`, `mcp_guard`).

use sr_syntax::{Code, Describe};

/// A guardrail upstream knows that this runtime never triggers.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GuardrailNotEnforced {
    pub name: String,
    pub enforced: &'static [&'static str],
}

/// A guardrail nobody knows.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UnknownGuardrail {
    pub name: String,
    pub known: &'static [&'static str],
}

impl Describe for GuardrailNotEnforced {
    fn code(&self) -> Code {
        Code::SR109
    }

    fn message(&self) -> String {
        format!("guardrail '{}' is not enforced by this runtime: it never triggers", self.name)
    }

    fn help(&self) -> Option<String> {
        Some(format!("enforced guardrails: {}", self.enforced.join(", ")))
    }
}

impl Describe for UnknownGuardrail {
    fn code(&self) -> Code {
        Code::SR109
    }

    fn message(&self) -> String {
        format!("unknown guardrail '{}'", self.name)
    }

    fn help(&self) -> Option<String> {
        Some(format!("known guardrails: {}", self.known.join(", ")))
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::diagnostic_kinds::render;

    #[test]
    fn help_lists_the_guardrails() {
        let drift = GuardrailNotEnforced { name: "cognitive_drift".into(), enforced: &["pii", "jailbreak"] };
        let unknown = UnknownGuardrail { name: "secrets".into(), known: &["pii", "jailbreak"] };
        expect![[r#"
            SR109 warning: guardrail 'cognitive_drift' is not enforced by this runtime: it never triggers | help: enforced guardrails: pii, jailbreak | fixes: []
            SR109 warning: unknown guardrail 'secrets' | help: known guardrails: pii, jailbreak | fixes: []"#]].assert_eq(&[render(drift), render(unknown)].join("\n"));
    }
}
