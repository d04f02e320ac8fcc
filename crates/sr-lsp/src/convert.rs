//! Conversions between editor data (`sr_ide`) and LSP types, in the
//! negotiated position encoding.

use std::path::{Path, PathBuf};

use sr_ide::{Encoding, LineIndex, TextRange, TextSize};
use tower_lsp_server::ls_types::{self as lsp, Uri};

/// A document URI as a database path: `file:` URIs map to their path, others
/// (unsaved buffers) to a path under `/untitled/`.
pub(crate) fn path_of(uri: &Uri) -> PathBuf {
    if uri.scheme().as_str() == "file"
        && let Some(path) = uri.to_file_path()
    {
        return path.into_owned();
    }
    let name: String =
        uri.as_str().chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' { c } else { '_' }).collect();
    PathBuf::from("/untitled").join(name)
}

pub(crate) fn uri_of(path: &Path) -> Option<Uri> {
    Uri::from_file_path(path)
}

pub(crate) fn offset(index: &LineIndex, position: lsp::Position, encoding: Encoding) -> TextSize {
    index.offset(position.line, position.character, encoding)
}

pub(crate) fn position(index: &LineIndex, offset: TextSize, encoding: Encoding) -> lsp::Position {
    lsp::Position { line: index.line_col(offset).line, character: index.col_in(offset, encoding) }
}

pub(crate) fn range(index: &LineIndex, range: TextRange, encoding: Encoding) -> lsp::Range {
    lsp::Range { start: position(index, range.start(), encoding), end: position(index, range.end(), encoding) }
}

pub(crate) fn text_range(index: &LineIndex, range: lsp::Range, encoding: Encoding) -> TextRange {
    let start = offset(index, range.start, encoding);
    let end = offset(index, range.end, encoding);
    TextRange::new(start.min(end), end.max(start))
}

/// A parameter's place in a signature label, in the negotiated encoding's units.
pub(crate) fn label_offsets(label: &str, range: TextRange, encoding: Encoding) -> [u32; 2] {
    let units = |end: TextSize| {
        let text = label.get(..usize::from(end)).unwrap_or(label);
        let count = match encoding {
            Encoding::Utf8 => text.len(),
            _ => text.encode_utf16().count(),
        };
        u32::try_from(count).unwrap_or(u32::MAX)
    };
    [units(range.start()), units(range.end())]
}

pub(crate) fn symbol_kind(kind: sr_ide::SymbolKind) -> lsp::SymbolKind {
    use sr_ide::SymbolKind::*;
    match kind {
        Agent => lsp::SymbolKind::CLASS,
        Prompt => lsp::SymbolKind::STRING,
        Tool => lsp::SymbolKind::INTERFACE,
        Model => lsp::SymbolKind::ENUM,
        Schema => lsp::SymbolKind::STRUCT,
        Field => lsp::SymbolKind::FIELD,
        Flow => lsp::SymbolKind::FUNCTION,
        Handler => lsp::SymbolKind::EVENT,
        RetryPolicy | TimeoutPolicy | Policy => lsp::SymbolKind::NAMESPACE,
        Executor => lsp::SymbolKind::OBJECT,
        Import => lsp::SymbolKind::MODULE,
        Variable => lsp::SymbolKind::VARIABLE,
        File => lsp::SymbolKind::FILE,
    }
}

pub(crate) fn completion_kind(kind: sr_ide::CompletionKind) -> lsp::CompletionItemKind {
    use sr_ide::CompletionKind::*;
    match kind {
        Keyword => lsp::CompletionItemKind::KEYWORD,
        Agent => lsp::CompletionItemKind::CLASS,
        Prompt => lsp::CompletionItemKind::TEXT,
        Tool => lsp::CompletionItemKind::INTERFACE,
        Model => lsp::CompletionItemKind::ENUM,
        Schema => lsp::CompletionItemKind::STRUCT,
        Flow => lsp::CompletionItemKind::FUNCTION,
        Policy => lsp::CompletionItemKind::MODULE,
        Variable => lsp::CompletionItemKind::VARIABLE,
        Type => lsp::CompletionItemKind::TYPE_PARAMETER,
        File => lsp::CompletionItemKind::FILE,
        Function => lsp::CompletionItemKind::METHOD,
        Parameter | Field => lsp::CompletionItemKind::FIELD,
        Snippet => lsp::CompletionItemKind::SNIPPET,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_in_both_encodings() {
        let index = LineIndex::new("a\n\u{e9}\u{1d11e}x\n");
        let x = TextSize::from(2 + 2 + 4);
        assert_eq!(position(&index, x, Encoding::Utf16), lsp::Position { line: 1, character: 3 });
        assert_eq!(position(&index, x, Encoding::Utf8), lsp::Position { line: 1, character: 6 });
        assert_eq!(offset(&index, lsp::Position { line: 1, character: 3 }, Encoding::Utf16), x);
        // Out of range positions clamp instead of failing.
        assert_eq!(offset(&index, lsp::Position { line: 99, character: 99 }, Encoding::Utf16), TextSize::from(10));
    }

    #[test]
    fn untitled_documents_get_a_stable_path() {
        let uri: Uri = "untitled:Untitled-1".parse().unwrap();
        assert_eq!(path_of(&uri), PathBuf::from("/untitled/untitled_Untitled-1"));
        let file: Uri = "file:///tmp/a%20b.sr".parse().unwrap();
        assert_eq!(path_of(&file), PathBuf::from("/tmp/a b.sr"));
    }
}
