//! docs/diagnostics.md against the code list: its code table is generated from
//! [`Code`] (run `UPDATE_EXPECT=1 cargo test -p sr-syntax --test codes` to
//! rewrite it, as expect-test does for snapshots), and every code has one
//! documented entry with the anchor the table links to.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;

use sr_syntax::Code;

const DOCS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/diagnostics.md");
const START: &str = "<!-- codes:start -->\n";
const END: &str = "<!-- codes:end -->";

fn docs() -> String {
    std::fs::read_to_string(DOCS).unwrap()
}

/// The table between the markers.
fn table() -> String {
    let mut out = String::from("| code | name | default severity | origin |\n| --- | --- | --- | --- |\n");
    for &code in Code::ALL {
        let origin = if code.is_upstream() { "upstream" } else { "ours" };
        out.push_str(&format!(
            "| [{code}](#{}) | `{}` | {} | {origin} |\n",
            code.doc_anchor(),
            code.name(),
            code.severity().as_str()
        ));
    }
    out
}

#[test]
fn codes_table() {
    let docs = docs();
    let start = docs.find(START).expect("docs/diagnostics.md has `<!-- codes:start -->`") + START.len();
    let end = start + docs[start..].find(END).expect("docs/diagnostics.md has `<!-- codes:end -->`");
    let generated = table();
    if docs[start..end] == generated {
        return;
    }
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        // Renamed into place: the other test may be reading the file.
        let temporary = format!("{DOCS}.tmp");
        std::fs::write(&temporary, format!("{}{generated}{}", &docs[..start], &docs[end..])).unwrap();
        std::fs::rename(&temporary, DOCS).unwrap();
        return;
    }
    panic!(
        "the code table in docs/diagnostics.md is out of date; run `UPDATE_EXPECT=1 cargo test -p sr-syntax --test codes`\n\
         committed:\n{}\ngenerated:\n{generated}",
        &docs[start..end]
    );
}

/// The rows of the per-code tables: `| <a id="e0001"></a>E0001 | … |`, as cells.
fn entries(docs: &str) -> Vec<Vec<&str>> {
    docs.lines()
        .filter(|line| line.starts_with("| <a id="))
        .map(|line| line.trim_matches('|').split(" | ").map(str::trim).collect())
        .collect()
}

#[test]
fn every_code_has_one_entry_with_its_anchor() {
    let docs = docs();
    let entries = entries(&docs);
    let mut documented = BTreeSet::new();
    for cells in &entries {
        let cell = cells[0];
        let code = Code::ALL.iter().find(|c| cell == format!("<a id=\"{}\"></a>{c}", c.doc_anchor()));
        let code = code.unwrap_or_else(|| panic!("an entry of no code, or with another code's anchor: {cell}"));
        assert!(documented.insert(*code), "{code} has two entries");
        // The "our checks" table has a severity column: it must agree.
        if let Some(&severity) = cells.get(1).filter(|s| ["error", "warning"].contains(s)) {
            assert_eq!(severity, code.severity().as_str(), "{code}'s severity in the docs");
        }
    }
    let missing: Vec<&Code> = Code::ALL.iter().filter(|c| !documented.contains(c)).collect();
    assert!(missing.is_empty(), "undocumented: {missing:?}");
    let names: BTreeSet<&str> = Code::ALL.iter().map(|c| c.name()).collect();
    assert_eq!(names.len(), Code::ALL.len(), "two codes share a name");
}
