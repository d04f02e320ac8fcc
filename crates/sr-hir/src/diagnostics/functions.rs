//! Calls of standard library functions (`crate::stdlib`): an unknown name
//! (SR112), a wrong number of arguments (SR113), and, in `--compat upstream`
//! mode, the syntax errors upstream reports for our extensions (`int(x)`,
//! `float(x)`, `bool(x)`, `max(x)` and `break`).

use sr_syntax::{Code, Reported};

use super::{Anchor, SemanticDiagnostic, UpstreamAt, similarity};
use crate::Name;
use crate::hir::{Body, Expr, StmtId, Template};
use crate::items::Item;
use crate::stdlib::{self, KEYWORD_NAMED, PYTHON_ONLY};

/// Every call in a flow or handler body, `${f(x)}` in its strings included.
pub(super) fn check<'db>(item: Item<'db>, body: &Body) -> Vec<SemanticDiagnostic<'db>> {
    let mut out = Vec::new();
    body.walk_stmts(&mut |_, stmt| {
        for root in body.stmt_exprs(stmt) {
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
    Some(SemanticDiagnostic {
        help: Some(format!("`{}`: {}", f.signature(), f.doc)),
        reported: Reported::DefaultOnly,
        ..SemanticDiagnostic::new(Code::SR113, format!("{}() takes {}, {count} given", f.name, f.arity_text()), anchor)
    })
}

/// SR112. Upstream's checker accepts every call and emits it into Python, where
/// Python's builtins run and other names fail with a `NameError`; so a Python
/// builtin we lack is a warning (it ran upstream, it fails here), anything else
/// an error (it fails in both).
fn unknown<'db>(function: &Name, anchor: Anchor<'db>) -> SemanticDiagnostic<'db> {
    let diagnostic = if PYTHON_ONLY.contains(&function.as_str()) {
        SemanticDiagnostic {
            help: Some("upstream runs it as Python's builtin; here the call fails when it runs".into()),
            ..SemanticDiagnostic::warning(
                Code::SR112,
                format!("'{function}' is a Python builtin that flows cannot call"),
                anchor,
            )
        }
    } else {
        let closest = stdlib::FUNCTIONS
            .iter()
            .map(|f| (similarity(function, f.name), f))
            .filter(|(score, _)| *score >= 0.6)
            .max_by(|a, b| a.0.total_cmp(&b.0));
        let help = match closest {
            Some((_, f)) => format!("did you mean `{}`?", f.signature()),
            None => format!(
                "the functions are: {}",
                stdlib::FUNCTIONS.iter().map(|f| f.name).collect::<Vec<_>>().join(", ")
            ),
        };
        SemanticDiagnostic {
            help: Some(help),
            ..SemanticDiagnostic::new(Code::SR112, format!("unknown function '{function}'"), anchor)
        }
    };
    SemanticDiagnostic { reported: Reported::DefaultOnly, ..diagnostic }
}

/// Upstream lexes `int`, `float`, `bool` and `max` as keywords: a call is a syntax error there.
fn keyword_call_not_upstream<'db>(function: &Name, anchor: Anchor<'db>) -> SemanticDiagnostic<'db> {
    let token = if function == "max" { "(" } else { function.as_str() };
    SemanticDiagnostic {
        help: Some(format!("calling `{function}` is a StreetRace-rs extension")),
        reported: Reported::UpstreamOnly,
        upstream_at: UpstreamAt::Anchor,
        ..SemanticDiagnostic::new(Code::E0007, format!("unexpected token '{token}'"), anchor)
    }
}

/// Upstream reads `break` as a variable and fails at the end of its line.
pub(super) fn break_not_upstream(item: Item<'_>, stmt: StmtId) -> SemanticDiagnostic<'_> {
    SemanticDiagnostic {
        help: Some("`break` is a StreetRace-rs extension".into()),
        reported: Reported::UpstreamOnly,
        upstream_at: UpstreamAt::Anchor,
        ..SemanticDiagnostic::new(Code::E0007, "unexpected end of line", Anchor::Stmt(item, stmt))
    }
}
