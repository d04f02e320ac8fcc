//! `sr try`'s inputs: a YAML map of variables, and the ones its prompts read
//! that it lacks, each at the `${…}` that reads it.

use std::path::Path;

use sr_hir::{File, RootDatabase};
use sr_runtime::eval::Vars;
use sr_syntax::LineIndex;
use sr_syntax::line_index::Encoding;

/// The variables in `path`. A file that does not exist is no variables,
/// unless it was named (`named`): then it is an error.
pub fn read(path: &Path, named: bool) -> Result<Vars, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !named => return Ok(Vars::new()),
        Err(e) => return Err(format!("cannot read the inputs {}: {e}", path.display())),
    };
    parse(&text).map_err(|e| format!("{}{e}", path.display()))
}

/// A YAML map of name → value; an empty document is no variables. The
/// error starts with `:LINE:COL: ` when the YAML reader knows where.
fn parse(text: &str) -> Result<Vars, String> {
    if text.lines().all(|l| l.trim().is_empty() || l.trim_start().starts_with('#')) {
        return Ok(Vars::new());
    }
    serde_norway::from_str::<Vars>(text).map_err(|e| {
        let at = e.location().map(|l| format!(":{}:{}", l.line(), l.column())).unwrap_or_default();
        format!("{at}: the inputs are a map of variable name to value: {e}")
    })
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_a_map_and_a_bad_one_says_where() {
        let vars = parse("topic: rust\ndoc:\n  title: T\nn: 2\n").unwrap();
        assert_eq!(serde_json::to_string(&vars).unwrap(), r#"{"topic":"rust","doc":{"title":"T"},"n":2}"#);
        assert!(parse("# nothing yet\n\n").unwrap().is_empty());
        let list = parse("- a\n- b\n").unwrap_err();
        assert!(list.starts_with(":1:1: the inputs are a map of variable name to value"), "{list}");
        let broken = parse("a: 1\nb: [\n").unwrap_err();
        assert!(broken.starts_with(":3:1: "), "{broken}");
    }
}
