//! A parse after edits reuses the last parse's pieces; it must equal the
//! parse of the new text from scratch.

use sr_hir::{RootDatabase, file_items, parse, syntax_errors};

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
        let scratch = sr_syntax::parse(&text);
        assert_eq!(syntax_errors(&db, file)[..], scratch.errors()[..], "after replacing {from:?} by {to:?}");
        assert_eq!(*parse(&db, file), scratch, "after replacing {from:?} by {to:?}");

        let mut fresh_db = RootDatabase::default();
        let fresh = fresh_db.set_file("/reparse/main.sr", text.clone());
        let items = |db: &RootDatabase, file| -> Vec<String> {
            file_items(db, file).iter().map(|i| format!("{:?} {} {:?}", i.kind(db), i.name(db), i.offset(db))).collect()
        };
        assert_eq!(items(&db, file), items(&fresh_db, fresh), "after replacing {from:?} by {to:?}");
    }
}

/// Random edits of a real workload, as a user makes them mid-typing (spans
/// deleted or duplicated, quotes, brackets and blocks put in, the rest cut
/// off): after each, the reusing parse equals a parse from scratch.
#[test]
fn random_edits_reparse_as_from_scratch() {
    let original = sr_testing::v2_parallel();
    let inserts = ["\"\"\"", "\"", "\n", "\n    ", "(", ")", "${x}", "flow f:\n    return 1\n", "end\n", "\t", "é"];
    let mut rng = sr_testing::random::Rng::new(20261126);
    let mut db = RootDatabase::default();
    let mut text = original.clone();
    let file = db.set_file("/reparse/random.sr", text.clone());
    let _ = parse(&db, file);
    for step in 0..600 {
        text = if text.len() < 200 {
            original.clone()
        } else if step % 2 == 0 {
            sr_testing::random::mutate(&text, &mut rng, &inserts)
        } else {
            // One character in, out or replaced, as typing does.
            let mut at = rng.below(text.len());
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            let mut edited = text.clone();
            let typed = ['x', '\n', '"', ':', ' ', '('][rng.below(6)];
            match rng.below(3) {
                0 => edited.insert(at, typed),
                // Same length: the old piece has the same place, not the same text.
                1 if text[at..].starts_with(|c: char| c.is_ascii()) => {
                    edited.replace_range(at..at + 1, &typed.to_string())
                }
                _ if at < text.len() => {
                    edited.remove(at);
                }
                _ => {}
            }
            edited
        };
        db.set_file("/reparse/random.sr", text.clone());
        // The errors first: they come from the pieces without the tree.
        let scratch = sr_syntax::parse(&text);
        assert!(syntax_errors(&db, file)[..] == scratch.errors()[..], "step {step}: the errors differ on {text:?}");
        assert!(*parse(&db, file) == scratch, "step {step}: the reused parse differs on {text:?}");
    }
}
