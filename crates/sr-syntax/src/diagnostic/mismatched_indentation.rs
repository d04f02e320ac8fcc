//! E0008 `mismatched-indentation`: a line is indented between the columns of
//! two enclosing blocks, so it belongs to neither.
//!
//! Reported at the badly indented line (upstream reports it at line 1). The line
//! stays in the inner block, so what follows is still checked.
//!
//! ```sr
//! flow main:
//!     $a = 1
//!   $b = 2
//! ```
//!
//! `$b = 2` starts at column 3, between the flow (column 1) and its body
//! (column 5). Fix: align the line with the lines of its block.

/// The message, as upstream words it.
pub(super) fn message() -> String {
    "mismatched indentation".to_string()
}

pub(super) fn help(column: u32, block_columns: &[u32]) -> String {
    let columns: Vec<String> = block_columns.iter().map(|n| n.to_string()).collect();
    format!(
        "this line starts at column {column}, but the enclosing blocks start at columns {}; align it with the lines of its block",
        columns.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::diagnostic::{Describe, SyntaxError};

    #[test]
    fn help_names_the_line_and_block_columns() {
        let error = SyntaxError::MismatchedIndentation { column: 3, block_columns: vec![1, 5] };
        expect!["E0008: mismatched indentation | this line starts at column 3, but the enclosing blocks start at columns 1, 5; align it with the lines of its block"]
            .assert_eq(&format!("{}: {} | {}", error.code(), error.message(), error.help().unwrap_or_default()));
    }
}
