//! Formatting line by line: every source line maps to one formatted line (or
//! to nothing, for a blank line in excess), which is what makes range
//! formatting a matter of picking lines.

use sr_syntax::lexer::tokenize;
use sr_syntax::{SyntaxKind, SyntaxToken, TextRange, TextSize};

use crate::spacing::space_between;
use crate::{Edit, FormatError};

const INDENT: &str = "    ";

/// The formatted lines of a text.
pub(crate) struct Lines<'a> {
    text: &'a str,
    /// Each source line's range including its line break, and its formatted
    /// text without one (`None`: the line is dropped).
    lines: Vec<(TextRange, Option<String>)>,
    ending: &'static str,
}

impl Lines<'_> {
    pub(crate) fn join(&self) -> String {
        let mut out = String::with_capacity(self.text.len());
        for (_, line) in &self.lines {
            if let Some(line) = line {
                out.push_str(line);
                out.push_str(self.ending);
            }
        }
        out
    }

    pub(crate) fn edits_within(&self, range: TextRange) -> Vec<Edit> {
        let mut edits = Vec::new();
        for (line_range, line) in &self.lines {
            let touched = line_range.start() <= range.end()
                && range.start() < line_range.end().max(line_range.start() + TextSize::from(1));
            if !touched {
                continue;
            }
            let new_text = line.as_ref().map(|l| format!("{l}{}", self.ending)).unwrap_or_default();
            if self.text[*line_range] != new_text {
                edits.push(Edit { range: *line_range, new_text });
            }
        }
        edits
    }
}

/// A source line: its content (without line break and `\r`) and the range
/// including the break.
struct SourceLine {
    content: TextRange,
    full: TextRange,
}

fn source_lines(text: &str) -> Vec<SourceLine> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, _) in text.match_indices('\n') {
        let end = if text[..i].ends_with('\r') { i - 1 } else { i };
        out.push(SourceLine { content: range(start, end), full: range(start, i + 1) });
        start = i + 1;
    }
    if start < text.len() {
        out.push(SourceLine { content: range(start, text.len()), full: range(start, text.len()) });
    }
    out
}

/// A line's formatted text: `composed` up to its first line break when the
/// line's last token runs on past the line (a string that spans lines; the
/// lines after are kept as they are), else without trailing blanks.
fn up_to_line_end(composed: String, pieces: &[&SyntaxToken], line: &SourceLine) -> String {
    if pieces.last().is_some_and(|t| t.text_range().end() > line.content.end()) {
        let first_line = composed.split('\n').next().unwrap_or_default();
        first_line.strip_suffix('\r').unwrap_or(first_line).to_string()
    } else {
        composed.trim_end().to_string()
    }
}

fn range(start: usize, end: usize) -> TextRange {
    TextRange::new(TextSize::from(start as u32), TextSize::from(end as u32))
}

/// What a line is, before comments are placed.
enum Kind {
    Blank,
    /// Inside a multi-line string from its start to its end: kept as is.
    Verbatim(String),
    /// Code at an indentation level (comments trailing).
    Code(u32, String),
    /// Only a comment; its level is chosen once the code levels are known.
    Comment {
        column: u32,
        text: String,
        in_brackets: Option<u32>,
    },
}

pub(crate) fn format_lines(text: &str) -> Result<Lines<'_>, FormatError> {
    let parse = sr_syntax::parse(text);
    if let Some(error) = parse.errors().first() {
        return Err(FormatError::Syntax(Box::new(error.clone())));
    }
    let tokens: Vec<SyntaxToken> = parse.syntax().descendants_with_tokens().filter_map(|e| e.into_token()).collect();
    let ending = if text.find('\n').is_some_and(|i| text[..i].ends_with('\r')) { "\r\n" } else { "\n" };
    let source = source_lines(text);

    // Pass 1: code lines and their levels, with the brackets they leave open.
    let mut kinds = Vec::with_capacity(source.len());
    let mut next = 0;
    let mut brackets: Vec<Bracket> = Vec::new();
    for (index, line) in source.iter().enumerate() {
        while next < tokens.len()
            && tokens[next].text_range().end() <= line.content.start()
            && !tokens[next].text_range().is_empty()
        {
            next += 1;
        }
        let mut pieces: Vec<&SyntaxToken> = Vec::new();
        let mut verbatim_end = None;
        let mut i = next;
        while i < tokens.len()
            && tokens[i].text_range().start() < line.content.end().max(line.content.start() + TextSize::from(1))
        {
            let token = &tokens[i];
            let r = token.text_range();
            if r.start() < line.content.start() {
                verbatim_end = Some(r.end());
            } else if r.start() < line.content.end()
                && !matches!(token.kind(), SyntaxKind::WHITESPACE | SyntaxKind::NEWLINE)
            {
                pieces.push(token);
            }
            i += 1;
        }
        let kind = match verbatim_end {
            Some(end) if end >= line.content.end() => Kind::Verbatim(text[line.content].to_string()),
            Some(end) => {
                let prefix = &text[TextRange::new(line.content.start(), end)];
                let gap = match pieces.first() {
                    Some(first) if first.text_range().start() > end => " ",
                    _ => "",
                };
                track_brackets(&mut brackets, &pieces, 0, index);
                Kind::Verbatim(up_to_line_end(format!("{prefix}{gap}{}", compose(text, &pieces)), &pieces, line))
            }
            None if pieces.is_empty() => Kind::Blank,
            None if pieces[0].kind() == SyntaxKind::COMMENT => {
                let leading = &text[TextRange::new(line.content.start(), pieces[0].text_range().start())];
                Kind::Comment {
                    column: leading.chars().map(|c| if c == '\t' { 4 } else { 1 }).sum(),
                    text: pieces[0].text().trim_end().to_string(),
                    in_brackets: brackets.last().map(|b| b.inner),
                }
            }
            None => {
                let first = pieces[0];
                let level = match brackets.last() {
                    Some(b) if is_closing(first.kind()) => b.outer,
                    Some(b) => b.inner,
                    None => block_level(first),
                };
                track_brackets(&mut brackets, &pieces, level, index);
                let line_text = up_to_line_end(compose(text, &pieces), &pieces, line);
                Kind::Code(level, format!("{}{line_text}", INDENT.repeat(level as usize)))
            }
        };
        kinds.push(kind);
        next = i.saturating_sub(1).max(next);
    }

    // Pass 2: comment lines between the levels of the code around them;
    // blank lines collapse.
    let code_level = |k: &Kind| match k {
        Kind::Code(level, _) => Some(*level),
        _ => None,
    };
    let mut lines = Vec::with_capacity(source.len());
    let mut previous_blank = true;
    for (index, kind) in kinds.iter().enumerate() {
        let line = match kind {
            Kind::Blank => {
                let keep = !previous_blank && kinds[index + 1..].iter().any(|k| !matches!(k, Kind::Blank));
                previous_blank = true;
                lines.push((source[index].full, keep.then(String::new)));
                continue;
            }
            Kind::Verbatim(text) | Kind::Code(_, text) => text.clone(),
            Kind::Comment { column, text, in_brackets } => {
                let level = match in_brackets {
                    Some(level) => *level,
                    None => {
                        let previous = kinds[..index].iter().rev().find_map(code_level).unwrap_or(0);
                        let following = kinds[index + 1..].iter().find_map(code_level).unwrap_or(0);
                        (column / 4).clamp(following, previous.max(following))
                    }
                };
                format!("{}{text}", INDENT.repeat(level as usize))
            }
        };
        previous_blank = false;
        lines.push((source[index].full, Some(line)));
    }
    Ok(Lines { text, lines, ending })
}

/// A bracket open across lines: the level of the line that opened it and of
/// the lines inside.
struct Bracket {
    outer: u32,
    inner: u32,
    line: usize,
}

fn is_closing(kind: SyntaxKind) -> bool {
    matches!(kind, SyntaxKind::R_PAREN | SyntaxKind::R_BRACK | SyntaxKind::R_BRACE)
}

fn track_brackets(stack: &mut Vec<Bracket>, pieces: &[&SyntaxToken], level: u32, line: usize) {
    for token in pieces {
        match token.kind() {
            SyntaxKind::L_PAREN | SyntaxKind::L_BRACK | SyntaxKind::L_BRACE => {
                let inner = match stack.last() {
                    Some(top) if top.line == line => top.inner,
                    _ => level + 1,
                };
                stack.push(Bracket { outer: level, inner, line });
            }
            kind if is_closing(kind) => {
                stack.pop();
            }
            _ => {}
        }
    }
}

/// Blocks around a token: one level per enclosing block, and one for a
/// prompt's escalation clause.
fn block_level(token: &SyntaxToken) -> u32 {
    token.parent_ancestors().filter(|n| matches!(n.kind(), SyntaxKind::BLOCK | SyntaxKind::ESCALATION_CLAUSE)).count()
        as u32
}

/// The tokens of one line with canonical spacing; if that would lex
/// differently, with the source's spacing (one space where it had any).
fn compose(text: &str, pieces: &[&SyntaxToken]) -> String {
    let canonical = join(text, pieces, true);
    let expected: Vec<(SyntaxKind, &str)> = pieces.iter().map(|t| (t.kind(), t.text())).collect();
    let relexed: Vec<(SyntaxKind, &str)> = tokenize(&canonical)
        .into_iter()
        .filter(|t| t.kind != SyntaxKind::WHITESPACE)
        .map(|t| (t.kind, &canonical[t.range]))
        .collect();
    if relexed == expected { canonical } else { join(text, pieces, false) }
}

fn join(text: &str, pieces: &[&SyntaxToken], canonical: bool) -> String {
    let mut out = String::new();
    for (i, token) in pieces.iter().enumerate() {
        if i > 0 {
            let previous = pieces[i - 1];
            let gap = &text[TextRange::new(previous.text_range().end(), token.text_range().start())];
            let had_space = !gap.is_empty();
            if token.kind() == SyntaxKind::COMMENT {
                // A trailing comment keeps its distance (alignment), at least one space.
                let width = gap.chars().map(|c| if c == '\t' { 4 } else { 1 }).sum::<usize>().max(1);
                out.push_str(&" ".repeat(width));
            } else if if canonical { space_between(previous, token, had_space) } else { had_space } {
                out.push(' ');
            }
        }
        out.push_str(token.text());
    }
    out
}
