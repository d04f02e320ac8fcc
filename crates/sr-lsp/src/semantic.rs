//! Semantic tokens: our tags as LSP token types, the relative encoding (one
//! token per line: multi-line strings are split), and deltas as one edit
//! replacing what changed between the common prefix and suffix.

use sr_ide::{Encoding, HighlightTag, HighlightedRange, LineIndex, TextRange, TextSize};
use tower_lsp_server::ls_types::{
    SemanticToken, SemanticTokenModifier, SemanticTokenType, SemanticTokensEdit, SemanticTokensLegend,
};

const TYPES: [SemanticTokenType; 15] = [
    SemanticTokenType::KEYWORD,
    SemanticTokenType::COMMENT,
    SemanticTokenType::STRING,
    SemanticTokenType::NUMBER,
    SemanticTokenType::OPERATOR,
    SemanticTokenType::TYPE,
    SemanticTokenType::CLASS,
    SemanticTokenType::MACRO,
    SemanticTokenType::INTERFACE,
    SemanticTokenType::ENUM,
    SemanticTokenType::STRUCT,
    SemanticTokenType::PROPERTY,
    SemanticTokenType::FUNCTION,
    SemanticTokenType::NAMESPACE,
    SemanticTokenType::VARIABLE,
];

pub(crate) fn legend() -> SemanticTokensLegend {
    SemanticTokensLegend { token_types: TYPES.to_vec(), token_modifiers: vec![SemanticTokenModifier::DECLARATION] }
}

fn type_index(tag: HighlightTag) -> u32 {
    match tag {
        HighlightTag::Keyword => 0,
        HighlightTag::Comment => 1,
        HighlightTag::String => 2,
        HighlightTag::Number => 3,
        HighlightTag::Operator => 4,
        HighlightTag::BuiltinType => 5,
        HighlightTag::Agent => 6,
        HighlightTag::Prompt => 7,
        HighlightTag::Tool => 8,
        HighlightTag::Model => 9,
        HighlightTag::Schema => 10,
        HighlightTag::Field => 11,
        HighlightTag::Flow => 12,
        HighlightTag::Policy => 13,
        HighlightTag::Variable => 14,
    }
}

pub(crate) fn encode(index: &LineIndex, ranges: &[HighlightedRange], encoding: Encoding) -> Vec<SemanticToken> {
    let text = index.text();
    let mut out = Vec::with_capacity(ranges.len());
    let (mut last_line, mut last_start) = (0, 0);
    for highlighted in ranges {
        let token_type = type_index(highlighted.tag);
        let modifiers = u32::from(highlighted.definition);
        let mut start = usize::from(highlighted.range.start());
        let end = usize::from(highlighted.range.end());
        while start < end {
            let line_end = text[start..end].find('\n').map_or(end, |i| start + i);
            let piece_end = if text[..line_end].ends_with('\r') && line_end > start { line_end - 1 } else { line_end };
            if piece_end > start {
                let range = TextRange::new(TextSize::from(start as u32), TextSize::from(piece_end as u32));
                let line = index.line_col(range.start()).line;
                let col = index.col_in(range.start(), encoding);
                let length = index.col_in(range.end(), encoding) - col;
                let delta_line = line - last_line;
                let delta_start = if delta_line == 0 { col - last_start } else { col };
                out.push(SemanticToken {
                    delta_line,
                    delta_start,
                    length,
                    token_type,
                    token_modifiers_bitset: modifiers,
                });
                (last_line, last_start) = (line, col);
            }
            start = line_end + 1;
        }
    }
    out
}

/// The edit turning `old` into `new` (none when equal).
pub(crate) fn diff(old: &[SemanticToken], new: &[SemanticToken]) -> Vec<SemanticTokensEdit> {
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..].iter().rev().zip(new[prefix..].iter().rev()).take_while(|(a, b)| a == b).count();
    let deleted = old.len() - prefix - suffix;
    let inserted = &new[prefix..new.len() - suffix];
    if deleted == 0 && inserted.is_empty() {
        return Vec::new();
    }
    vec![SemanticTokensEdit {
        start: 5 * prefix as u32,
        delete_count: 5 * deleted as u32,
        data: (!inserted.is_empty()).then(|| inserted.to_vec()),
    }]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(delta_line: u32, delta_start: u32, length: u32) -> SemanticToken {
        SemanticToken { delta_line, delta_start, length, token_type: 0, token_modifiers_bitset: 0 }
    }

    #[test]
    fn multi_line_tokens_are_split_per_line_in_utf16() {
        let text = "p: \"\"\"é\nab\"\"\" x";
        let index = LineIndex::new(text);
        let string = HighlightedRange {
            range: TextRange::new(3.into(), 14.into()),
            tag: HighlightTag::String,
            definition: false,
        };
        let name = HighlightedRange {
            range: TextRange::new(15.into(), 16.into()),
            tag: HighlightTag::Variable,
            definition: true,
        };
        let tokens = encode(&index, &[string, name], Encoding::Utf16);
        let flat: Vec<(u32, u32, u32, u32, u32)> = tokens
            .iter()
            .map(|t| (t.delta_line, t.delta_start, t.length, t.token_type, t.token_modifiers_bitset))
            .collect();
        assert_eq!(flat, vec![(0, 3, 4, 2, 0), (1, 0, 5, 2, 0), (0, 6, 1, 14, 1)]);
    }

    #[test]
    fn delta_replaces_the_changed_middle() {
        let old = vec![token(0, 0, 1), token(0, 2, 1), token(1, 0, 3)];
        let new = vec![token(0, 0, 1), token(0, 2, 4), token(0, 5, 1), token(1, 0, 3)];
        let edits = diff(&old, &new);
        assert_eq!(edits.len(), 1);
        assert_eq!((edits[0].start, edits[0].delete_count), (5, 5));
        assert_eq!(edits[0].data.as_deref(), Some(&new[1..3]));
        assert!(diff(&new, &new).is_empty());
    }
}
