//! docs/diagnostics.md is generated from the code: the code table from
//! [`Code`], and each code's entry from the doc comment of its file
//! (`sr-hir/src/diagnostic_kinds/<name>.rs`, or sr-syntax's
//! `src/diagnostic/<name>.rs` for the syntax errors), as ruff documents its
//! rules. `UPDATE_EXPECT=1 cargo test -p sr-hir --test docs` rewrites the page
//! between its markers, as expect-test does for snapshots; the test fails while
//! the page differs. Every entry's example is checked to report its code.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use sr_hir::{RootDatabase, file_diagnostics};
use sr_syntax::Code;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
const DOCS: &str = "docs/diagnostics.md";
const START: &str = "<!-- diagnostics:start -->\n";
const END: &str = "<!-- diagnostics:end -->";

/// The file whose doc comment documents `code`: exactly one of the two places.
fn source(code: Code) -> PathBuf {
    let file = format!("{}.rs", code.name().replace('-', "_"));
    let places = ["crates/sr-hir/src/diagnostic_kinds", "crates/sr-syntax/src/diagnostic"];
    let found: Vec<PathBuf> =
        places.iter().map(|dir| Path::new(dir).join(&file)).filter(|p| Path::new(ROOT).join(p).is_file()).collect();
    match &found[..] {
        [one] => one.clone(),
        _ => panic!("{code} `{}` needs one file {file} in {places:?}, found {found:?}", code.name()),
    }
}

/// The leading `//!` comment of a file, without the markers.
fn doc_comment(path: &Path) -> String {
    let text = std::fs::read_to_string(Path::new(ROOT).join(path)).unwrap();
    let lines: Vec<&str> = text
        .lines()
        .map_while(|line| line.strip_prefix("//!"))
        .map(|line| line.strip_prefix(' ').unwrap_or(line))
        .collect();
    lines.join("\n")
}

/// A code's entry: a heading with its anchor, its severity and origin, then its
/// doc comment, whose first line must begin with the code and its name.
fn entry(code: Code) -> String {
    let path = source(code);
    let doc = doc_comment(&path);
    let lead = format!("{code} `{}`: ", code.name());
    let what =
        doc.strip_prefix(&lead).unwrap_or_else(|| panic!("{}'s doc comment starts with {lead:?}", path.display()));
    let origin = match (code.is_upstream(), code.is_syntax()) {
        (true, _) => "upstream's code",
        (false, true) => "our check, in every mode",
        (false, false) => "our check, default mode only",
    };
    let mut what = what.to_string();
    what[..1].make_ascii_uppercase();
    format!(
        "### <a id=\"{}\"></a>{code} `{}`\n\n*{}, {origin}; from `{}`*\n\n{what}\n",
        code.doc_anchor(),
        code.name(),
        code.severity().as_str(),
        path.display()
    )
}

/// Everything between the markers: the code table, then one entry per code.
fn generated() -> String {
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
    for &code in Code::ALL {
        out.push('\n');
        out.push_str(&entry(code));
    }
    out
}

#[test]
fn the_page_is_generated_from_the_code() {
    let path = Path::new(ROOT).join(DOCS);
    let docs = std::fs::read_to_string(&path).unwrap();
    let start = docs.find(START).expect("docs/diagnostics.md has `<!-- diagnostics:start -->`") + START.len();
    let end = start + docs[start..].find(END).expect("docs/diagnostics.md has `<!-- diagnostics:end -->`");
    let generated = generated();
    if docs[start..end] == generated {
        return;
    }
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(&path, format!("{}{generated}{}", &docs[..start], &docs[end..])).unwrap();
        return;
    }
    panic!(
        "docs/diagnostics.md is out of date; run `UPDATE_EXPECT=1 cargo test -p sr-hir --test docs`\n\
         committed:\n{}\ngenerated:\n{generated}",
        &docs[start..end]
    );
}

#[test]
fn codes_have_distinct_names() {
    let mut names: Vec<&str> = Code::ALL.iter().map(|c| c.name()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), Code::ALL.len(), "two codes share a name");
}

/// The ```sr blocks of a doc comment. A block that starts with a `# NAME.sr`
/// line holds several files, each starting at such a line; otherwise it is one
/// file, `main.sr`. The first file is the one checked.
fn examples(doc: &str) -> Vec<Vec<(String, String)>> {
    let mut blocks = Vec::new();
    let mut lines = doc.lines();
    while let Some(line) = lines.next() {
        if line.trim() != "```sr" {
            continue;
        }
        let mut files: Vec<(String, String)> = Vec::new();
        for line in lines.by_ref().take_while(|line| line.trim() != "```") {
            match line.strip_prefix("# ").filter(|name| name.ends_with(".sr") && !name.contains(' ')) {
                Some(name) => files.push((name.to_string(), String::new())),
                None if files.is_empty() => files.push(("main.sr".to_string(), format!("{line}\n"))),
                None => files.last_mut().unwrap().1.push_str(&format!("{line}\n")),
            }
        }
        blocks.push(files);
    }
    blocks
}

#[test]
fn every_entry_has_an_example_that_reports_its_code() {
    let mut failures = Vec::new();
    for &code in Code::ALL {
        let blocks = examples(&doc_comment(&source(code)));
        if blocks.is_empty() {
            failures.push(format!("{code}: no ```sr example"));
        }
        // SR111's example elides its 300 levels.
        if code == Code::SR111 {
            continue;
        }
        for files in blocks {
            let mut db = RootDatabase::default();
            for (name, text) in files.iter().rev() {
                db.set_file(format!("/ws/{name}"), text.as_str());
            }
            let checked = db.file(format!("/ws/{}", files[0].0)).unwrap();
            let diagnostics = file_diagnostics(&db, checked);
            if !diagnostics.iter().any(|d| d.code() == code) {
                let found: Vec<String> = diagnostics.iter().map(|d| format!("{} {}", d.code(), d.message())).collect();
                failures.push(format!("{code}: the example reports {found:?}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
