//! Parser snapshots: every `test_data/parser/{ok,err}/*.sr` is parsed and its
//! tree and errors compared with the `.rast` file beside it
//! (`UPDATE_EXPECT=1 cargo test` rewrites them). `ok` files must parse cleanly,
//! `err` files must report at least one error; both must round-trip.
#![allow(clippy::unwrap_used)]

use std::fmt::Write;
use std::path::Path;

use sr_syntax::{LineIndex, debug_tree, parse};

fn snapshot(dir: &str, expect_errors: bool) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/parser").join(dir);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sr"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let parse = parse(&text);
        assert_eq!(parse.syntax().text().to_string(), text, "{}: not lossless", path.display());
        assert_eq!(!parse.errors().is_empty(), expect_errors, "{}: {:?}", path.display(), parse.errors());
        let mut out = debug_tree(&parse.syntax());
        let index = LineIndex::new(&text);
        for e in parse.errors() {
            let at = index.line_col(e.range.start());
            writeln!(
                out,
                "{} {}:{} {:?}: {}{}",
                e.code(),
                at.line + 1,
                at.col + 1,
                e.range,
                e.message(),
                e.help().map(|h| format!(" ({h})")).unwrap_or_default()
            )
            .unwrap();
        }
        expect_test::expect_file![path.with_extension("rast")].assert_eq(&out);
    }
}

#[test]
fn parser_ok() {
    snapshot("ok", false);
}

#[test]
fn parser_err() {
    snapshot("err", true);
}

#[test]
fn generated_benchmark_workload_is_valid() {
    let text = sr_testing::generated_workload(10_000);
    assert!(text.lines().count() >= 9_000);
    assert_eq!(parse(&text).errors(), &[]);
}
