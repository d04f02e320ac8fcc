//! `TOOL.FUNCTION(args)` in a flow or handler body: a name that is no declared
//! tool or executor, or no function of a builtin tool or executor (SR117), and arguments the function
//! does not take (SR118), by `crate::tool_functions`. MCP servers' functions are
//! not known at check time and are not checked. Upstream
//! emits these calls verbatim into Python, so nothing is reported in
//! `--compat upstream` mode.

use sr_syntax::{Code, Reported};

use super::{Anchor, SemanticDiagnostic, similarity};
use crate::hir::{Body, Expr, ExprId, ItemData};
use crate::items::Item;
use crate::resolve::Program;
use crate::tool_functions::{EXECUTOR, ToolFunction, ToolKind};
use crate::{Db, item_data};

pub(super) fn check<'db>(
    db: &'db dyn Db,
    item: Item<'db>,
    body: &Body,
    program: &Program<'db>,
) -> Vec<SemanticDiagnostic<'db>> {
    let mut out = Vec::new();
    body.walk_stmts(&mut |_, stmt| {
        for root in body.stmt_exprs(stmt) {
            body.walk_expr(root, &mut |id, expr| {
                if let Expr::Call { function, args } = expr
                    && let Some((tool, name)) = function.split_once('.')
                {
                    out.extend(call(db, program, body, tool, name, args, Anchor::Expr(item, id)));
                }
            });
        }
    });
    out
}

fn call<'db>(
    db: &'db dyn Db,
    program: &Program<'db>,
    body: &Body,
    tool: &str,
    name: &str,
    args: &[ExprId],
    anchor: Anchor<'db>,
) -> Option<SemanticDiagnostic<'db>> {
    let error = |code, message: String, help: String| SemanticDiagnostic {
        help: Some(help),
        reported: Reported::DefaultOnly,
        ..SemanticDiagnostic::new(code, message, anchor.clone())
    };
    let functions = match (program.tools.get(tool), program.executors.contains_key(tool)) {
        (Some(&definition), _) => {
            let data = item_data(db, definition);
            let data = match &*data {
                ItemData::Tool(data) => Some(data),
                _ => None,
            };
            ToolKind::of(tool, data).functions()?
        }
        (None, true) => EXECUTOR.iter().collect(),
        (None, false) => return Some(unknown_tool(program, tool, name, error)),
    };
    let Some(function) = functions.iter().find(|f| f.name == name) else {
        let closest = functions
            .iter()
            .map(|f| (similarity(name, f.name), f))
            .filter(|(score, _)| *score >= 0.6)
            .max_by(|a, b| a.0.total_cmp(&b.0));
        let help = match (closest, functions.is_empty()) {
            (Some((_, f)), _) => format!("did you mean `{tool}.{}`?", f.signature()),
            (None, true) => format!("tool '{tool}' gives no functions"),
            (None, false) => format!(
                "the functions of '{tool}' are: {}",
                functions.iter().map(|f| f.signature()).collect::<Vec<_>>().join(", ")
            ),
        };
        return Some(error(Code::SR117, format!("tool '{tool}' has no function '{name}'"), help));
    };
    let problem = arguments(function, body, args)?;
    Some(error(Code::SR118, format!("{tool}.{name}(): {problem}"), format!("`{tool}.{}`", function.signature())))
}

fn unknown_tool<'db>(
    program: &Program<'db>,
    tool: &str,
    name: &str,
    error: impl Fn(Code, String, String) -> SemanticDiagnostic<'db>,
) -> SemanticDiagnostic<'db> {
    let known: Vec<&str> = program.tools.keys().chain(program.executors.keys()).map(|k| k.as_str()).collect();
    let help = match known.is_empty() {
        true => format!("declare it, e.g. `tool {tool} = builtin streetrace.fs`"),
        false => format!("the declared tools and executors are: {}", known.join(", ")),
    };
    error(Code::SR117, format!("unknown tool '{tool}' in `{tool}.{name}(…)`"), help)
}

/// What is wrong with the arguments, if anything: one object literal names
/// them, anything else is positional.
fn arguments(function: &ToolFunction, body: &Body, args: &[ExprId]) -> Option<String> {
    if let [single] = args
        && let Expr::Object(entries) = &body.exprs[*single]
    {
        if let Some((key, _)) = entries.iter().find(|(key, _)| function.param(key).is_none()) {
            return Some(format!("no parameter named '{key}'"));
        }
        let missing: Vec<&str> = function
            .params
            .iter()
            .filter(|p| p.required && !entries.iter().any(|(key, _)| key == p.name))
            .map(|p| p.name)
            .collect();
        return (!missing.is_empty()).then(|| format!("missing {}", missing.join(", ")));
    }
    let count = args.len();
    (count < function.required() || count > function.params.len())
        .then(|| format!("takes {}, {count} given", function.arity_text()))
}
