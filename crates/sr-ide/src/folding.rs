//! Folding ranges: multi-line items and blocks, prompt bodies, multi-line
//! brackets and runs of comment lines.

use std::path::Path;

use sr_hir::{RootDatabase, parse};
use sr_syntax::{NodeOrToken, SyntaxKind, TextRange};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FoldKind {
    Region,
    Comment,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fold {
    pub range: TextRange,
    pub kind: FoldKind,
}

pub(crate) fn folding_ranges(db: &RootDatabase, path: &Path) -> Vec<Fold> {
    let Some(file) = db.file(path) else { return Vec::new() };
    let index = sr_hir::line_index(db, file);
    let multi_line = |range: TextRange| index.line_col(range.start()).line < index.line_col(range.end()).line;
    let mut out = Vec::new();
    let mut comments: Option<TextRange> = None;
    let mut last_comment_line = None;
    for element in parse(db, file).syntax().descendants_with_tokens() {
        let range = match &element {
            NodeOrToken::Node(node) => {
                let foldable = node.parent().is_some_and(|p| p.kind() == SyntaxKind::SOURCE_FILE)
                    || matches!(
                        node.kind(),
                        SyntaxKind::FOR_STMT
                            | SyntaxKind::LOOP_STMT
                            | SyntaxKind::PARALLEL_STMT
                            | SyntaxKind::MATCH_STMT
                            | SyntaxKind::IF_STMT
                            | SyntaxKind::FAILURE_BLOCK
                            | SyntaxKind::EVENT_HANDLER
                            | SyntaxKind::LIST_EXPR
                            | SyntaxKind::OBJECT_EXPR
                    );
                if !foldable {
                    continue;
                }
                sr_syntax::significant_range(node)
            }
            NodeOrToken::Token(token) => match token.kind() {
                SyntaxKind::TRIPLE_STRING | SyntaxKind::STRING => token.text_range(),
                SyntaxKind::COMMENT => {
                    let line = index.line_col(token.text_range().start()).line;
                    let alone = token.prev_token().is_none_or(|t| {
                        t.kind() == SyntaxKind::NEWLINE
                            || (t.kind() == SyntaxKind::WHITESPACE
                                && t.prev_token().is_none_or(|p| p.kind() == SyntaxKind::NEWLINE))
                    });
                    if alone && last_comment_line.is_some_and(|l| l + 1 == line) {
                        comments = comments.map(|c| c.cover(token.text_range()));
                    } else {
                        if let Some(run) = comments.take().filter(|r| multi_line(*r)) {
                            out.push(Fold { range: run, kind: FoldKind::Comment });
                        }
                        comments = alone.then(|| token.text_range());
                    }
                    last_comment_line = alone.then_some(line);
                    continue;
                }
                _ => continue,
            },
        };
        if multi_line(range) {
            out.push(Fold { range, kind: FoldKind::Region });
        }
    }
    if let Some(run) = comments.filter(|r| multi_line(*r)) {
        out.push(Fold { range: run, kind: FoldKind::Comment });
    }
    // Editors fold lines: keep the outermost fold starting on each line.
    out.sort_by_key(|f| (f.range.start(), std::cmp::Reverse(f.range.end())));
    let mut seen_lines = Vec::new();
    out.retain(|f| {
        let line = index.line_col(f.range.start()).line;
        let first = !seen_lines.contains(&line);
        seen_lines.push(line);
        first
    });
    out
}

/// A node's range without trailing trivia and line breaks.
#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::tests::analysis;

    #[test]
    fn folds_items_blocks_bodies_brackets_and_comments() {
        let (analysis, fixture) = analysis(
            r#"
            # one
            # two
            prompt p: """line one
            line two"""
            flow main:
                $x = [
                    1,
                    2
                ]
                for $i in $x do
                    log $i
                end
            model m = a/b
            "#,
        );
        let text = fixture.text("/main.sr");
        let folds = analysis.folding_ranges(std::path::Path::new("/main.sr")).unwrap();
        let out: Vec<String> = folds.iter().map(|f| format!("{:?} {:?}", f.kind, &text[f.range])).collect();
        expect![[r##"
            Comment "# one\n# two"
            Region "prompt p: \"\"\"line one\nline two\"\"\""
            Region "flow main:\n    $x = [\n        1,\n        2\n    ]\n    for $i in $x do\n        log $i\n    end"
            Region "[\n        1,\n        2\n    ]"
            Region "for $i in $x do\n        log $i\n    end""##]]
        .assert_eq(&out.join("\n"));
    }
}
