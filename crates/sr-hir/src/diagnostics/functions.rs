//! Calls of standard library functions (`crate::stdlib`): an unknown name
//! (SR112), a wrong number of arguments (SR113), and, in `--compat upstream`
//! mode, the syntax errors upstream reports for our extensions (`int(x)`,
//! `float(x)`, `bool(x)`, `max(x)` and `break`).

use sr_syntax::Reported;

use super::suggest::similarity;
use super::{Anchor, SemanticDiagnostic};
use crate::Name;
use crate::diagnostic_kinds::{self as kinds, Extension};
use crate::hir::{Body, Expr, StmtId, Template};
use crate::items::Item;
use crate::stdlib::{self, KEYWORD_NAMED, PYTHON_ONLY};

/// Every call in a flow or handler body, `${f(x)}` in its strings included.
pub(super) fn check<'db>(item: Item<'db>, body: &Body) -> Vec<SemanticDiagnostic<'db>> {
    let mut out = Vec::new();
    body.walk_stmts(&mut |_, stmt| {
        for root in stmt.exprs() {
            body.walk_expr(root, &mut |id, expr| match expr {
                // `lib.f(x)` names a tool function or a module: not ours to judge here.
                Expr::Call { function, args } if !function.contains('.') => {
                    let anchor = Anchor::Expr(item, id);
                    if KEYWORD_NAMED.contains(&function.as_str()) {
                        out.push(keyword_call_not_upstream(function, anchor.clone()));
                    }
                    out.extend(call(function, args.len(), anchor));
                }
                Expr::Template(template) => out.extend(template_calls(item, template)),
                _ => {}
            });
        }
    });
    out
}

/// `${f(x)}` in a string or a prompt body: one argument.
pub(super) fn template_calls<'db>(item: Item<'db>, template: &Template) -> Vec<SemanticDiagnostic<'db>> {
    template
        .interpolations()
        .filter_map(|i| Some((i.function.as_ref()?, i.part)))
        .filter_map(|(function, part)| call(function, 1, Anchor::Part(item, part)))
        .collect()
}

/// What is wrong with calling `function` with `count` arguments, if anything.
fn call<'db>(function: &Name, count: usize, anchor: Anchor<'db>) -> Option<SemanticDiagnostic<'db>> {
    let Some(f) = stdlib::function(function) else {
        return Some(unknown(function, anchor));
    };
    if f.accepts(count) {
        return None;
    }
    let kind = kinds::ArgumentCount {
        function: f.name.to_string(),
        takes: f.arity_text(),
        given: count,
        signature: f.signature(),
        doc: f.doc.to_string(),
    };
    Some(SemanticDiagnostic { reported: Reported::DefaultOnly, ..SemanticDiagnostic::new(kind, anchor) })
}

/// SR112. Upstream's checker accepts every call and emits it into Python, where
/// Python's builtins run and other names fail with a `NameError`; so a Python
/// builtin we lack is a warning (it ran upstream, it fails here), anything else
/// an error (it fails in both).
fn unknown<'db>(function: &Name, anchor: Anchor<'db>) -> SemanticDiagnostic<'db> {
    let function = function.to_string();
    let kind: kinds::DiagnosticKind = if PYTHON_ONLY.contains(&function.as_str()) {
        kinds::PythonBuiltin { function }.into()
    } else {
        let closest = stdlib::FUNCTIONS
            .iter()
            .map(|f| (similarity(&function, f.name), f))
            .filter(|(score, _)| *score >= 0.6)
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, f)| f.signature());
        let known = match closest {
            Some(_) => Vec::new(),
            None => stdlib::FUNCTIONS.iter().map(|f| f.name.to_string()).collect(),
        };
        kinds::UnknownFunction { function, closest, known }.into()
    };
    SemanticDiagnostic { reported: Reported::DefaultOnly, ..SemanticDiagnostic::new(kind, anchor) }
}

/// Upstream lexes `int`, `float`, `bool` and `max` as keywords: a call is a syntax error there.
fn keyword_call_not_upstream<'db>(function: &Name, anchor: Anchor<'db>) -> SemanticDiagnostic<'db> {
    SemanticDiagnostic {
        reported: Reported::UpstreamOnly,
        ..SemanticDiagnostic::new(Extension::KeywordCall(function.to_string()), anchor)
    }
}

/// Upstream reads `break` as a variable and fails at the end of its line.
pub(super) fn break_not_upstream(item: Item<'_>, stmt: StmtId) -> SemanticDiagnostic<'_> {
    SemanticDiagnostic {
        reported: Reported::UpstreamOnly,
        ..SemanticDiagnostic::new(Extension::Break, Anchor::Stmt(item, stmt))
    }
}
