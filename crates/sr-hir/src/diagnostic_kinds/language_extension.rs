//! Our language extensions as upstream's parser rejects them: E0007 in
//! `--compat upstream` only (E0007 is documented with the syntax errors, in
//! sr-syntax's `diagnostic/syntax_error.rs`).

use sr_syntax::{Code, Describe};

/// A construct of ours that upstream cannot parse.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Extension {
    Executor,
    /// A call of `int`, `float`, `bool` or `max`, which upstream lexes as keywords.
    KeywordCall(String),
    Break,
    /// `tool NAME = a2a "URL"`: a remote A2A agent.
    A2aTool,
}

impl Describe for Extension {
    fn code(&self) -> Code {
        Code::E0007
    }

    /// Upstream's message at the construct.
    fn message(&self) -> String {
        match self {
            Extension::Executor => "unexpected token 'executor'".to_string(),
            Extension::KeywordCall(function) => {
                format!("unexpected token '{}'", if function == "max" { "(" } else { function })
            }
            Extension::Break => "unexpected end of line".to_string(),
            Extension::A2aTool => "unexpected token 'a2a'".to_string(),
        }
    }

    fn help(&self) -> Option<String> {
        Some(match self {
            Extension::Executor => "`executor` is a StreetRace-rs extension for coding agents".to_string(),
            Extension::KeywordCall(function) => format!("calling `{function}` is a StreetRace-rs extension"),
            Extension::Break => "`break` is a StreetRace-rs extension".to_string(),
            Extension::A2aTool => "`a2a` tools (remote A2A agents) are a StreetRace-rs extension".to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::diagnostic_kinds::render;

    #[test]
    fn upstream_sees_max_as_a_keyword_before_its_parenthesis() {
        let out = [
            Extension::Executor,
            Extension::KeywordCall("int".into()),
            Extension::KeywordCall("max".into()),
            Extension::Break,
            Extension::A2aTool,
        ]
        .map(render);
        expect![[r#"
            E0007 error: unexpected token 'executor' | help: `executor` is a StreetRace-rs extension for coding agents | fixes: []
            E0007 error: unexpected token 'int' | help: calling `int` is a StreetRace-rs extension | fixes: []
            E0007 error: unexpected token '(' | help: calling `max` is a StreetRace-rs extension | fixes: []
            E0007 error: unexpected end of line | help: `break` is a StreetRace-rs extension | fixes: []
            E0007 error: unexpected token 'a2a' | help: `a2a` tools (remote A2A agents) are a StreetRace-rs extension | fixes: []"#]]
        .assert_eq(&out.join("\n"));
    }
}
