//! docs/diagnostics.md has one table row per diagnostic code, and no row for
//! a code that does not exist: the code list and its documentation cannot drift.

use std::collections::BTreeSet;

use sr_syntax::Code;

#[test]
fn every_code_has_one_documented_row() {
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/diagnostics.md")).unwrap();
    let rows: Vec<&str> = docs
        .lines()
        .filter_map(|line| line.strip_prefix("| ")?.split(' ').next())
        .filter(|cell| cell.len() == 5 && (cell.starts_with('E') || cell.starts_with('W') || cell.starts_with("SR")))
        .collect();
    let documented: BTreeSet<&str> = rows.iter().copied().collect();
    assert_eq!(documented.len(), rows.len(), "a code has two rows: {rows:?}");
    let codes: BTreeSet<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(codes.len(), Code::ALL.len(), "two codes share a name");
    let missing: Vec<_> = codes.difference(&documented).collect();
    let unknown: Vec<_> = documented.difference(&codes).collect();
    assert!(missing.is_empty() && unknown.is_empty(), "undocumented: {missing:?}; documented but unknown: {unknown:?}");
}
