//! `TOOL.FUNCTION(…)` calls in flows and handlers: which functions a declared
//! tool or executor has (by `sr_hir::tool_functions`, as the checker reads
//! them), and the function named under the cursor, for completion and hover.

use std::fmt::Write;

use sr_hir::hir::{Expr, ItemData};
use sr_hir::resolve::Program;
use sr_hir::tool_functions::{EXECUTOR, ToolFunction, ToolKind};
use sr_hir::{Db, File, ItemKind, body, file_items, item_data, program, source_map};
use sr_syntax::{TextRange, TextSize};

/// The functions of the tool or executor `name` declared in `program`; `None`
/// for an undeclared name and for MCP servers (whose functions are known only
/// at run time).
pub(crate) fn functions_of(db: &dyn Db, program: &Program<'_>, name: &str) -> Option<Vec<&'static ToolFunction>> {
    if let Some(&tool) = program.tools.get(name) {
        let data = item_data(db, tool);
        let data = match &*data {
            ItemData::Tool(data) => Some(data),
            _ => None,
        };
        return ToolKind::of(name, data).functions();
    }
    program.executors.contains_key(name).then(|| EXECUTOR.iter().collect())
}

/// The signature, doc, parameters and value of `tool.function`, in Markdown.
pub(crate) fn markdown(tool: &str, function: &ToolFunction) -> String {
    let mut out = format!("```streetrace\n{tool}.{}\n```\n\n{}\n", function.signature(), function.doc);
    for param in function.params {
        let optional = if param.required { "" } else { " (optional)" };
        let _ = write!(out, "\n- `{}`{optional}: {}", param.name, param.doc);
    }
    let _ = write!(out, "\n\n**gives** {}", function.value);
    out
}

/// The function name of the `TOOL.FUNCTION(…)` call at `offset` in `file`
/// (its range, and the hover text when the tool declares that function).
pub(crate) fn function_at(db: &dyn Db, file: File, offset: TextSize) -> Option<(TextRange, String)> {
    let program = program(db, file);
    let text = file.text(db).clone();
    for &item in file_items(db, file) {
        if !matches!(item.kind(db), ItemKind::Flow | ItemKind::Handler) {
            continue;
        }
        let (body, map) = (body(db, item), source_map(db, item));
        let mut found = None;
        body.walk_stmts(&mut |_, stmt| {
            for root in stmt.exprs() {
                body.walk_expr(root, &mut |id, expr| {
                    let Expr::Call { function: callee, .. } = expr else { return };
                    let Some((tool, name)) = callee.split_once('.') else { return };
                    let start = map.exprs[id].start() + item.offset(db) + TextSize::of(tool) + TextSize::of(".");
                    let range = TextRange::at(start, TextSize::of(name));
                    let spelled = text.get(std::ops::Range::<usize>::from(range)) == Some(name);
                    if spelled && range.contains_inclusive(offset) {
                        let functions = functions_of(db, program, tool).unwrap_or_default();
                        found = functions.into_iter().find(|f| f.name == name).map(|f| (range, markdown(tool, f)));
                    }
                });
            }
        });
        if found.is_some() {
            return found;
        }
    }
    None
}
