//! The inputs `sr try`'s prompts read that it lacks, each at the `${…}` that
//! reads it (the inputs file is read by `sr_ide::read_inputs`, as the
//! editors read it).

use sr_hir::{File, RootDatabase};
use sr_runtime::eval::Vars;
use sr_syntax::LineIndex;
use sr_syntax::line_index::Encoding;

/// `FILE:LINE:COL: error: missing input 'x' (read by prompt 'p')` for each
/// variable prompt `name` reads that `vars` lacks (1-based character columns).
pub fn missing(db: &RootDatabase, root: File, name: &str, vars: &Vars) -> Vec<String> {
    sr_hir::playground::missing_inputs(db, root, name, &|n| vars.contains_key(n))
        .into_iter()
        .map(|m| {
            let index = LineIndex::new(m.file.text(db));
            let line = index.line_col(m.range.start()).line + 1;
            let column = index.col_in(m.range.start(), Encoding::Char) + 1;
            let path = sr_runtime::compile::display_path(m.file.path(db));
            format!("{path}:{line}:{column}: error: missing input '{}' (read by prompt '{}')", m.name, m.prompt)
        })
        .collect()
}
