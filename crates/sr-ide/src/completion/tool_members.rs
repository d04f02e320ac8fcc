//! Completion of tool calls in a flow or handler: after `TOOL.` the functions
//! of the declared tool or executor, with their signatures and docs; as keys
//! of the object argument (`fs.write_file({pa`) the function's parameters.

use super::{CompletionItem, CompletionKind, Completions};
use crate::tool_functions::{functions_of, markdown};

/// Offers the functions when the word being completed follows `NAME.` (not
/// `$NAME.`, a variable's field); true when it does, whether or not `NAME`
/// is a tool whose functions are known.
pub(super) fn complete(cx: &mut Completions<'_, '_>) -> bool {
    parameters(cx) || functions(cx)
}

fn functions(cx: &mut Completions<'_, '_>) -> bool {
    let Some(before_dot) = cx.line.strip_suffix('.') else { return false };
    let start = before_dot.trim_end_matches(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-').len();
    let (rest, tool) = before_dot.split_at(start);
    if tool.is_empty() || rest.ends_with(['$', '.']) {
        return false;
    }
    for function in functions_of(cx.db, cx.program, tool).unwrap_or_default() {
        cx.add_item(CompletionItem {
            label: function.name.to_string(),
            kind: CompletionKind::Function,
            detail: Some(format!("{tool}.{}", function.signature())),
            documentation: Some(markdown(tool, function)),
            insert_text: function.name.to_string(),
            replace_range: cx.replace_range,
            snippet: false,
            additional_edits: Vec::new(),
        });
    }
    true
}

/// The parameters not named yet, when the word being completed is a key of
/// `TOOL.FUNCTION({…` (right after the `{` or a `,` of that object); true
/// when it is, whether or not the function is known.
fn parameters(cx: &mut Completions<'_, '_>) -> bool {
    let line = cx.line.trim_end();
    let Some(open) = line.rfind('{').filter(|_| line.ends_with(['{', ','])) else { return false };
    let named = &line[open + 1..];
    let Some(call) = line[..open].trim_end().strip_suffix('(') else { return false };
    if named.contains(['}', '[', '(', '"']) {
        return false;
    }
    let start = call.rfind(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))).map_or(0, |i| i + 1);
    let Some((tool, name)) = call[start..].split_once('.') else { return false };
    let functions = functions_of(cx.db, cx.program, tool).unwrap_or_default();
    let Some(function) = functions.into_iter().find(|f| f.name == name) else { return true };
    let given: Vec<&str> = named.split(',').filter_map(|entry| Some(entry.split_once(':')?.0.trim())).collect();
    for param in function.params.iter().filter(|p| !given.contains(&p.name)) {
        cx.add_item(CompletionItem {
            label: param.name.to_string(),
            kind: CompletionKind::Parameter,
            detail: Some(format!(
                "{} parameter of {tool}.{name}",
                if param.required { "required" } else { "optional" }
            )),
            documentation: Some(param.doc.to_string()),
            insert_text: format!("{}: ", param.name),
            replace_range: cx.replace_range,
            snippet: false,
            additional_edits: Vec::new(),
        });
    }
    true
}
