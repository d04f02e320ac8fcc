//! `TOOL.FUNCTION(args)` in a flow or handler body: a name that is no declared
//! tool or executor, or no function of a builtin tool or executor (SR117), and arguments the function
//! does not take (SR118), by `crate::tool_functions`. MCP servers' functions are
//! not known at check time and are not checked. Upstream
//! emits these calls verbatim into Python, so nothing is reported in
//! `--compat upstream` mode.

use sr_syntax::Reported;

use super::suggest::similarity;
use super::{Anchor, SemanticDiagnostic};
use crate::diagnostic_kinds::{self as kinds, ArgumentProblem, Listing};
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
        for root in stmt.exprs() {
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
    let error = |kind: kinds::DiagnosticKind| SemanticDiagnostic {
        reported: Reported::DefaultOnly,
        ..SemanticDiagnostic::new(kind, anchor.clone())
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
        (None, false) => {
            let names = program.tools.keys().chain(program.executors.keys()).map(|k| k.to_string());
            let declared = Listing::new(names, program.tools.len() + program.executors.len());
            return Some(error(
                kinds::UnknownTool { tool: tool.to_string(), function: name.to_string(), declared }.into(),
            ));
        }
    };
    let Some(function) = functions.iter().find(|f| f.name == name) else {
        let closest = functions
            .iter()
            .map(|f| (similarity(name, f.name), f))
            .filter(|(score, _)| *score >= 0.6)
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, f)| f.signature());
        let known = match closest {
            Some(_) => Vec::new(),
            None => functions.iter().map(|f| f.signature()).collect(),
        };
        return Some(error(
            kinds::UnknownToolFunction { tool: tool.to_string(), function: name.to_string(), closest, known }.into(),
        ));
    };
    let problem = arguments(function, body, args)?;
    Some(error(
        kinds::ToolArguments {
            tool: tool.to_string(),
            function: name.to_string(),
            signature: function.signature(),
            problem,
        }
        .into(),
    ))
}

/// What is wrong with the arguments, if anything: one object literal names
/// them, anything else is positional.
fn arguments(function: &ToolFunction, body: &Body, args: &[ExprId]) -> Option<ArgumentProblem> {
    if let [single] = args
        && let Expr::Object(entries) = &body.exprs[*single]
    {
        if let Some((key, _)) = entries.iter().find(|(key, _)| function.param(key).is_none()) {
            return Some(ArgumentProblem::UnknownParameter(key.to_string()));
        }
        let missing: Vec<String> = function
            .params
            .iter()
            .filter(|p| p.required && !entries.iter().any(|(key, _)| key == p.name))
            .map(|p| p.name.to_string())
            .collect();
        return (!missing.is_empty()).then_some(ArgumentProblem::Missing(missing));
    }
    let count = args.len();
    (count < function.required() || count > function.params.len())
        .then(|| ArgumentProblem::Count { takes: function.arity_text(), given: count })
}
