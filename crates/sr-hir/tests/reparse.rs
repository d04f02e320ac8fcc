//! A parse after edits reuses the last parse's pieces; it must equal the
//! parse of the new text from scratch.

use sr_hir::{RootDatabase, file_items, parse};

const SOURCE: &str = r#"streetrace v1
model main = anthropic/claude
prompt review: """Review ${input_prompt}."""
agent reviewer:
    instruction review
    on input do
        mask pii
    end

flow main:
    $x = run agent reviewer with $input_prompt
    return $x

flow other:
    return 1
"#;

/// Each edit replaces the first occurrence of `.0` in the current text by `.1`.
const EDITS: &[(&str, &str)] = &[
    ("return 1", "return 12"),
    // Same length: the old piece has the same place but not the same text.
    ("return 12", "return 34"),
    ("flow other:", "flow othe(:"),
    ("flow othe(:", "flow other:"),
    ("Review ${", "Review the ${"),
    // An unterminated prompt swallows what follows; closing it again.
    ("${input_prompt}.\"\"\"", "${input_prompt}."),
    ("${input_prompt}.", "${input_prompt}.\"\"\""),
    ("flow other:", "flow other(:"),
    ("flow other(:", "flow other:"),
    ("streetrace v1\n", ""),
    ("model", "streetrace v1\nmodel"),
    ("    return $x\n", ""),
    ("return 12\n", "return 12\nflow last:\n    return 2\n"),
];

#[test]
fn every_parse_after_an_edit_equals_a_parse_from_scratch() {
    let mut db = RootDatabase::default();
    let mut text = SOURCE.to_string();
    let file = db.set_file("/reparse/main.sr", text.clone());
    let _ = parse(&db, file);
    for (from, to) in EDITS {
        text = text.replacen(from, to, 1);
        db.set_file("/reparse/main.sr", text.clone());
        assert_eq!(**parse(&db, file), sr_syntax::parse(&text), "after replacing {from:?} by {to:?}");

        let mut fresh_db = RootDatabase::default();
        let fresh = fresh_db.set_file("/reparse/main.sr", text.clone());
        let items = |db: &RootDatabase, file| -> Vec<String> {
            file_items(db, file).iter().map(|i| format!("{:?} {} {:?}", i.kind(db), i.name(db), i.offset(db))).collect()
        };
        assert_eq!(items(&db, file), items(&fresh_db, fresh), "after replacing {from:?} by {to:?}");
    }
}
