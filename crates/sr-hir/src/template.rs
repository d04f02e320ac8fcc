//! `${…}` interpolation in strings and prompt bodies.

use sr_syntax::{TextRange, TextSize};

use crate::Name;
use crate::hir::{Interpolation, PartId, Template, TemplatePart};

/// Reads `text` as upstream's code generator does: every `${…}` up to the first
/// `}`; inside, `f(arg)` is a call of `f` on a dotted path, anything else is a
/// dotted path whose first segment may start with `$`. `start` is where `text`
/// begins in the item; each interpolation's range is added to `parts`.
pub fn parse_template(text: &str, start: TextSize, parts: &mut Vec<TextRange>) -> Template {
    let mut out = Vec::new();
    let mut rest_start = 0;
    let mut search = 0;
    while let Some(found) = text[search..].find("${") {
        let open = search + found;
        let Some(close_rel) = text[open + 2..].find('}') else { break };
        let close = open + 2 + close_rel;
        if close == open + 2 {
            // `${}`: upstream's pattern needs at least one character.
            search = open + 2;
            continue;
        }
        let inner = &text[open + 2..close];
        if open > rest_start {
            out.push(TemplatePart::Text(text[rest_start..open].to_string()));
        }
        let range = TextRange::new(start + offset(open), start + offset(close + 1));
        let part = PartId(parts.len() as u32);
        parts.push(range);
        let (function, path) = read_interpolation(inner.trim());
        out.push(TemplatePart::Interpolation(Interpolation {
            function,
            path,
            plain: is_plain_path(inner),
            part,
            char_offset: text[..open].chars().count() as u32,
        }));
        rest_start = close + 1;
        search = close + 1;
    }
    if rest_start < text.len() {
        out.push(TemplatePart::Text(text[rest_start..].to_string()));
    }
    Template { parts: out }
}

/// Whether the text has anything upstream would interpolate.
pub fn has_interpolation(text: &str) -> bool {
    let mut search = 0;
    while let Some(found) = text[search..].find("${") {
        let open = search + found;
        match text[open + 2..].find('}') {
            Some(0) => search = open + 2,
            Some(_) => return true,
            None => return false,
        }
    }
    false
}

fn offset(n: usize) -> TextSize {
    TextSize::from(n as u32)
}

fn read_interpolation(inner: &str) -> (Option<Name>, Vec<Name>) {
    // `(\w+)\(([^)]+)\)` at the start, as upstream matches it.
    let word_end = inner.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(inner.len());
    if word_end > 0
        && inner[word_end..].starts_with('(')
        && let Some(close) = inner[word_end + 1..].find(')')
        && close > 0
    {
        let arg = &inner[word_end + 1..word_end + 1 + close];
        return (Some(Name::from(&inner[..word_end])), path(arg));
    }
    (None, path(inner))
}

fn path(text: &str) -> Vec<Name> {
    text.split('.')
        .enumerate()
        .map(|(i, segment)| {
            let segment = segment.trim();
            Name::from(if i == 0 { segment.trim_start_matches('$') } else { segment })
        })
        .collect()
}

/// `ident(.ident)*`: the only form upstream's checker looks at.
fn is_plain_path(inner: &str) -> bool {
    inner.split('.').all(|segment| {
        let mut chars = segment.chars();
        chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str) -> String {
        let mut parts = Vec::new();
        let template = parse_template(text, TextSize::from(10), &mut parts);
        template
            .parts
            .iter()
            .map(|p| match p {
                TemplatePart::Text(t) => format!("text {t:?}"),
                TemplatePart::Interpolation(i) => format!(
                    "interp {:?} {:?} plain={} at {:?} char {}",
                    i.function, i.path, i.plain, parts[i.part.0 as usize], i.char_offset
                ),
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn reads_interpolations_like_upstream() {
        expect_test::expect![[r#"
            text "Hi "
            interp None ["name"] plain=true at 13..20 char 3
            text ", "
            interp None ["a", "b"] plain=true at 22..28 char 12
            text " "
            interp Some("len") ["items"] plain=false at 29..42 char 19
            text " "
            interp None ["x"] plain=false at 43..48 char 33
            text " ${} {literal} é"
            interp None ["y"] plain=false at 65..71 char 54"#]]
        .assert_eq(&check("Hi ${name}, ${a.b} ${len(items)} ${$x} ${} {literal} é${ y }"));
    }

    #[test]
    fn detects_interpolation() {
        assert!(has_interpolation("a ${b} c"));
        assert!(!has_interpolation("a ${} $b {c}"));
        assert!(!has_interpolation("${unclosed"));
    }
}
