//! Completion after `TOOL.` in a flow or handler: the functions of the
//! declared tool or executor, with their signatures and docs.

use super::{CompletionItem, CompletionKind, Completions};
use crate::tool_functions::{functions_of, markdown};

/// Offers the functions when the word being completed follows `NAME.` (not
/// `$NAME.`, a variable's field); true when it does, whether or not `NAME`
/// is a tool whose functions are known.
pub(super) fn complete(cx: &mut Completions<'_, '_>) -> bool {
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
        });
    }
    true
}
