//! Conversions between byte offsets and line/column positions in the encodings
//! our front ends speak: UTF-8 bytes (LSP `utf-8`), UTF-16 code units (LSP
//! default, DAP) and characters (`sr check` columns, upstream's Lark columns).

use std::sync::Arc;

use text_size::{TextRange, TextSize};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LineIndex {
    text: Arc<str>,
    /// Offset of the first byte of every line (shared: clones are cheap).
    line_starts: Arc<[TextSize]>,
    /// Every character longer than one byte, in text order, so that a column
    /// in UTF-16 units or characters costs a binary search, not a scan of the
    /// line (a 10 MB line has millions of tokens to convert).
    wide: Arc<[WideChar]>,
}

/// A character of more than one UTF-8 byte, with the UTF-16 units and
/// characters that the text up to and including it has fewer than bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct WideChar {
    offset: TextSize,
    utf16_fewer: u32,
    chars_fewer: u32,
}

/// A zero-based line and a zero-based column in UTF-8 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LineCol {
    pub line: u32,
    pub col: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf16,
    Char,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        LineIndex::shared(text.into())
    }

    /// The index of a text already shared (kept, not copied).
    pub fn shared(text: Arc<str>) -> LineIndex {
        let mut line_starts = vec![TextSize::from(0)];
        // `memchr_iter` searches a block at a time (`match_indices` calls
        // `memchr` once per line, which costs more than the search itself).
        line_starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| TextSize::from(i as u32 + 1)));
        let (mut utf16_fewer, mut chars_fewer) = (0, 0);
        // Checking for ASCII first is much faster than decoding every character.
        let non_ascii = if text.is_ascii() { "" } else { &text };
        let wide: Vec<WideChar> = non_ascii
            .char_indices()
            .filter(|(_, c)| !c.is_ascii())
            .map(|(i, c)| {
                utf16_fewer += (c.len_utf8() - c.len_utf16()) as u32;
                chars_fewer += c.len_utf8() as u32 - 1;
                WideChar { offset: TextSize::from(i as u32), utf16_fewer, chars_fewer }
            })
            .collect();
        LineIndex { text, line_starts: line_starts.into(), wide: wide.into() }
    }

    /// How many fewer `encoding` units than bytes the text before `offset` has.
    fn fewer_before(&self, offset: TextSize, encoding: Encoding) -> u32 {
        let before = self.wide.partition_point(|w| w.offset < offset);
        match (before.checked_sub(1).map(|i| self.wide[i]), encoding) {
            (None, _) | (_, Encoding::Utf8) => 0,
            (Some(w), Encoding::Utf16) => w.utf16_fewer,
            (Some(w), Encoding::Char) => w.chars_fewer,
        }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn line_count(&self) -> u32 {
        self.line_starts.len() as u32
    }

    /// The line and byte column of `offset` (clamped to the text).
    pub fn line_col(&self, offset: TextSize) -> LineCol {
        let offset = offset.min(TextSize::of(&*self.text));
        let line = self.line_starts.partition_point(|&start| start <= offset) - 1;
        LineCol { line: line as u32, col: u32::from(offset - self.line_starts[line]) }
    }

    /// The column of `offset` in `encoding` units.
    pub fn col_in(&self, offset: TextSize, encoding: Encoding) -> u32 {
        let lc = self.line_col(offset);
        let start = self.line_starts[lc.line as usize];
        let end = start + TextSize::from(lc.col);
        lc.col - (self.fewer_before(end, encoding) - self.fewer_before(start, encoding))
    }

    /// The offset of a zero-based `line` and a `col` in `encoding` units. Columns
    /// past the end of the line clamp to its end; lines past the end clamp to the
    /// end of the text.
    pub fn offset(&self, line: u32, col: u32, encoding: Encoding) -> TextSize {
        let Some(&start) = self.line_starts.get(line as usize) else {
            return TextSize::of(&*self.text);
        };
        let line_text = self.line_text_with_end(line);
        let mut units = 0u32;
        for (i, ch) in line_text.char_indices() {
            if units >= col || ch == '\n' || (ch == '\r' && line_text[i..].starts_with("\r\n")) {
                return start + TextSize::from(i as u32);
            }
            units += match encoding {
                Encoding::Utf8 => ch.len_utf8() as u32,
                Encoding::Utf16 => ch.len_utf16() as u32,
                Encoding::Char => 1,
            };
        }
        start + TextSize::of(line_text)
    }

    /// The text of a zero-based line without its line break.
    pub fn line_text(&self, line: u32) -> &str {
        let text = self.line_text_with_end(line);
        text.strip_suffix('\n').map(|t| t.strip_suffix('\r').unwrap_or(t)).unwrap_or(text)
    }

    fn line_text_with_end(&self, line: u32) -> &str {
        let Some(&start) = self.line_starts.get(line as usize) else {
            return "";
        };
        let end = self.line_starts.get(line as usize + 1).copied().unwrap_or(TextSize::of(&*self.text));
        &self.text[TextRange::new(start, end)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_in_every_encoding() {
        let index = LineIndex::new("ab\r\né𝄞x\n");
        let x = TextSize::from(4 + 2 + 4);
        assert_eq!(index.line_col(x), LineCol { line: 1, col: 6 });
        assert_eq!(index.col_in(x, Encoding::Utf16), 3);
        assert_eq!(index.col_in(x, Encoding::Char), 2);
        assert_eq!(index.offset(1, 3, Encoding::Utf16), x);
        assert_eq!(index.offset(1, 2, Encoding::Char), x);
        assert_eq!(index.offset(0, 99, Encoding::Utf8), TextSize::from(2));
        assert_eq!(index.offset(9, 0, Encoding::Utf8), TextSize::from(12));
        assert_eq!(index.line_text(0), "ab");
        assert_eq!(index.line_count(), 3);
    }

    #[test]
    fn columns_agree_with_counting_the_line() {
        let text = "aé𝄞\nxyz\n€€a𝄞b\r\n\n日本語 ok é";
        let index = LineIndex::new(text);
        for (offset, _) in text.char_indices().chain([(text.len(), ' ')]) {
            let offset = TextSize::from(offset as u32);
            let lc = index.line_col(offset);
            let start = usize::from(offset) - lc.col as usize;
            let prefix = &text[start..usize::from(offset)];
            assert_eq!(index.col_in(offset, Encoding::Utf16), prefix.encode_utf16().count() as u32, "{offset:?}");
            assert_eq!(index.col_in(offset, Encoding::Char), prefix.chars().count() as u32, "{offset:?}");
            assert_eq!(index.col_in(offset, Encoding::Utf8), lc.col);
        }
    }
}
