//! Selection ranges: from the word under the cursor out to the whole item.

use std::path::Path;

use sr_hir::{RootDatabase, parse};
use sr_syntax::{SyntaxKind, TextRange, TextSize};

pub(crate) fn selection_ranges(db: &RootDatabase, path: &Path, offsets: &[TextSize]) -> Vec<Vec<TextRange>> {
    let Some(file) = db.file(path) else { return Vec::new() };
    let root = parse(db, file).syntax();
    offsets
        .iter()
        .map(|&offset| {
            let offset = offset.min(root.text_range().end());
            let token =
                root.token_at_offset(offset).max_by_key(|t| !t.kind().is_trivia() && t.kind() != SyntaxKind::NEWLINE);
            let mut ranges: Vec<TextRange> = Vec::new();
            let mut push = |range: TextRange| {
                if ranges.last().is_none_or(|last| *last != range && range.contains_range(*last)) {
                    ranges.push(range);
                }
            };
            match token {
                Some(token) => {
                    if !token.kind().is_trivia() && token.kind() != SyntaxKind::NEWLINE {
                        push(token.text_range());
                    }
                    for node in token.parent_ancestors() {
                        push(sr_syntax::significant_range(&node));
                    }
                }
                None => push(TextRange::empty(offset)),
            }
            push(root.text_range());
            ranges
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::tests::analysis;

    #[test]
    fn grows_from_the_word_to_the_file() {
        let (analysis, fixture) = analysis("flow main:\n    $x = $a + $b$0\n    return $x\n");
        let text = fixture.text("/main.sr");
        let offset = fixture.position().1.into();
        let ranges = analysis.selection_ranges(std::path::Path::new("/main.sr"), &[offset]).unwrap();
        let out: Vec<&str> = ranges[0].iter().map(|r| &text[*r]).collect();
        expect![[r#"
            [
                "b",
                "$b",
                "$a + $b",
                "$x = $a + $b",
                "$x = $a + $b\n    return $x",
                "flow main:\n    $x = $a + $b\n    return $x",
                "flow main:\n    $x = $a + $b\n    return $x\n",
            ]
        "#]]
        .assert_debug_eq(&out);
    }
}
