//! SR112 `unknown-function`: a call to a function the standard library lacks,
//! with the nearest name.
//!
//! A warning for Python's other builtins (`print(x)`): upstream runs them, `sr
//! run` fails on them. Dotted calls (`lib.f(x)`) are tool functions (SR117,
//! SR118). See docs/runtime.md, "Standard library".
//!
//! ```sr
//! flow main:
//!     $id = uuidd()
//!     return $id
//! ```
//!
//! `unknown function 'uuidd'`, help ``did you mean `uuid()`?``. Fix: call a
//! function of the standard library.

use sr_syntax::{Code, Describe, Severity};

/// A Python builtin that upstream runs and flows cannot call: a warning.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PythonBuiltin {
    pub function: String,
}

/// `closest` is the signature of the nearest function, else `known` lists them all.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UnknownFunction {
    pub function: String,
    pub closest: Option<String>,
    pub known: Vec<String>,
}

impl Describe for PythonBuiltin {
    fn code(&self) -> Code {
        Code::SR112
    }

    fn message(&self) -> String {
        format!("'{}' is a Python builtin that flows cannot call", self.function)
    }

    fn help(&self) -> Option<String> {
        Some("upstream runs it as Python's builtin; here the call fails when it runs".to_string())
    }

    fn severity(&self) -> Severity {
        Severity::Warning
    }
}

impl Describe for UnknownFunction {
    fn code(&self) -> Code {
        Code::SR112
    }

    fn message(&self) -> String {
        format!("unknown function '{}'", self.function)
    }

    fn help(&self) -> Option<String> {
        Some(match &self.closest {
            Some(signature) => format!("did you mean `{signature}`?"),
            None => format!("the functions are: {}", self.known.join(", ")),
        })
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::diagnostic_kinds::render;

    #[test]
    fn python_builtins_are_warnings() {
        let builtin = PythonBuiltin { function: "print".into() };
        let close = UnknownFunction { function: "uuidd".into(), closest: Some("uuid()".into()), known: Vec::new() };
        let far = UnknownFunction { function: "zz".into(), closest: None, known: vec!["len(x)".into(), "uuid()".into()] };
        expect![[r#"
            SR112 warning: 'print' is a Python builtin that flows cannot call | help: upstream runs it as Python's builtin; here the call fails when it runs | fixes: []
            SR112 error: unknown function 'uuidd' | help: did you mean `uuid()`? | fixes: []
            SR112 error: unknown function 'zz' | help: the functions are: len(x), uuid() | fixes: []"#]].assert_eq(&[render(builtin), render(close), render(far)].join("\n"));
    }
}
