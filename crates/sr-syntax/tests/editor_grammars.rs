//! The editor grammars know every hard keyword of `KEYWORDS`: a hard keyword is
//! never a name, so both grammars must highlight it, and a keyword added to the
//! table fails here naming each grammar that does not mention it yet.

use std::collections::HashSet;
use std::path::Path;

use sr_syntax::KEYWORDS;

const GRAMMARS: [&str; 2] =
    ["editors/vscode/syntaxes/streetrace.tmLanguage.json", "editors/neovim/syntax/streetrace.vim"];

/// The words a grammar file spells out: runs of `[A-Za-z0-9_-]`, with regex
/// escapes (`\b`, `\s`, `\<`, Vim's `\zs`/`\ze`) taken as separators so that
/// `\btrue` and `\zsend` yield `true` and `end`.
fn words(text: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    let mut word = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            word.push(c);
            continue;
        }
        out.insert(std::mem::take(&mut word));
        if c == '\\' {
            while chars.next_if_eq(&'\\').is_some() {}
            if chars.next_if(char::is_ascii_alphabetic) == Some('z') {
                chars.next_if(|c| matches!(c, 's' | 'e'));
            }
        }
    }
    out.insert(word);
    out
}

#[test]
fn the_word_reader_sees_through_regex_escapes() {
    let got = words(r#"\\btrue\\b \zsend\>\s\+ tool-call"#);
    for word in ["true", "end", "tool-call"] {
        assert!(got.contains(word), "{word} in {got:?}");
    }
    assert!(!got.contains("btrue") && !got.contains("zsend"), "{got:?}");
}

#[test]
fn every_editor_grammar_knows_every_hard_keyword() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut missing = Vec::new();
    for grammar in GRAMMARS {
        let text = std::fs::read_to_string(root.join(grammar)).unwrap();
        let known = words(&text);
        let absent: Vec<&str> = KEYWORDS
            .iter()
            .filter(|(text, _, hard)| *hard && !known.contains(*text))
            .map(|(text, _, _)| *text)
            .collect();
        if !absent.is_empty() {
            missing.push(format!("{grammar}: {}", absent.join(", ")));
        }
    }
    assert!(missing.is_empty(), "hard keywords an editor grammar does not know:\n{}", missing.join("\n"));
}
