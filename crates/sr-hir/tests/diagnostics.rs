//! Diagnostic fixtures with inline expectations (`test_data/diagnostics/*.sr`).
//!
//! A trailing comment lists what the line must report, separated by `|`:
//! `# E0001: undefined reference to agent 'x'`. A `default:` or `upstream:`
//! prefix limits an expectation to one mode (`sr check` or
//! `sr check --compat upstream`); `@N` names another line (inside a prompt
//! body no comment can be written); the message after the code is optional.
//! Lines count from upstream's position in upstream mode. Every diagnostic must
//! be expected and every expectation met. Each diagnostic's range, with the text
//! it covers, is in `NAME.ranges` beside the fixture.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::path::Path;

use sr_hir::{RootDatabase, file_diagnostics};
use sr_syntax::LineIndex;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Expected {
    line: u32,
    code: String,
    message: Option<String>,
}

fn expectations(text: &str, upstream: bool) -> BTreeSet<Expected> {
    let mut out = BTreeSet::new();
    for (n, line) in text.lines().enumerate() {
        // The comment after the code (prompt bodies contain no `#` in fixtures).
        let Some(comment) = line.find("# ").map(|i| &line[i + 2..]) else { continue };
        for part in comment.split('|') {
            let mut part = part.trim();
            let mut at = n as u32 + 1;
            if let Some(rest) = part.strip_prefix('@') {
                let (number, rest) = rest.split_once(' ').unwrap();
                at = number.parse().unwrap();
                part = rest.trim();
            }
            let (mode, rest) = match part.split_once(':') {
                Some(("default", rest)) => (Some(false), rest.trim()),
                Some(("upstream", rest)) => (Some(true), rest.trim()),
                _ => (None, part),
            };
            let code = rest.split([':', ' ']).next().unwrap_or_default();
            let valid_code =
                code.len() == 5 && (code.starts_with('E') || code.starts_with('W') || code.starts_with("SR"));
            // Our own codes exist only in the default mode.
            let mode = if code.starts_with("SR") { Some(false) } else { mode };
            if !valid_code || mode.is_some_and(|m| m != upstream) {
                continue;
            }
            let message = rest[code.len()..].strip_prefix(':').map(|m| m.trim().to_string());
            out.insert(Expected { line: at, code: code.to_string(), message });
        }
    }
    out
}

fn check_fixture(path: &Path, upstream: bool) -> Result<(), String> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut db = RootDatabase::default();
    let file = db.set_file(path, text.as_str());
    let index = LineIndex::new(&text);
    let expected = expectations(&text, upstream);
    let mut actual = BTreeSet::new();
    for d in file_diagnostics(&db, file).iter().filter(|d| d.in_mode(upstream)) {
        let line = match d.upstream_position {
            Some((line, _)) if upstream => line.max(1) as u32,
            _ => index.line_col(d.range.start()).line + 1,
        };
        actual.insert(Expected { line, code: d.code().to_string(), message: Some(d.message()) });
    }
    let mut problems = Vec::new();
    for e in &expected {
        let met = actual
            .iter()
            .any(|a| a.line == e.line && a.code == e.code && (e.message.is_none() || e.message == a.message));
        if !met {
            problems.push(format!("  missing line {} {}: {}", e.line, e.code, e.message.as_deref().unwrap_or("…")));
        }
    }
    for a in &actual {
        let expected = expected
            .iter()
            .any(|e| e.line == a.line && e.code == a.code && (e.message.is_none() || e.message == a.message));
        if !expected {
            problems.push(format!("  unexpected line {} {}: {}", a.line, a.code, a.message.as_deref().unwrap_or("")));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        let mode = if upstream { "upstream" } else { "default" };
        Err(format!("{} ({mode} mode):\n{}", path.display(), problems.join("\n")))
    }
}

/// Each fixture's diagnostics with their ranges and the text they cover, in
/// `NAME.ranges` beside it (`UPDATE_EXPECT=1` rewrites them): where an error
/// points is part of what it says.
fn ranges(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let mut db = RootDatabase::default();
    let file = db.set_file(path, text.as_str());
    let index = LineIndex::new(&text);
    let mut out = String::new();
    for d in file_diagnostics(&db, file).iter().filter(|d| d.in_mode(false)) {
        let (start, end) = (index.line_col(d.range.start()), index.line_col(d.range.end()));
        let covered: String = text[d.range].chars().take(48).collect::<String>().replace('\n', "⏎");
        out.push_str(&format!(
            "{}:{}-{}:{} {} `{covered}`\n",
            start.line + 1,
            start.col + 1,
            end.line + 1,
            end.col + 1,
            d.code()
        ));
    }
    out
}

#[test]
fn diagnostic_fixtures() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/diagnostics");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sr"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    for path in &files {
        expect_test::expect_file![path.with_extension("ranges")].assert_eq(&ranges(path));
    }
    let failures: Vec<String> = files
        .iter()
        .flat_map(|path| [check_fixture(path, false), check_fixture(path, true)])
        .filter_map(Result::err)
        .collect();
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// SR119's "did you mean": a schema starting like the name first, else a
/// primitive close to it, else the schemas defined.
#[test]
fn unknown_field_types_suggest_a_schema_or_a_primitive() {
    let mut db = RootDatabase::default();
    let text = "schema Finding:\n    a: stringy\n    b: list[Findng]\n    c: Zzz\n    d: boolean?\n";
    let file = db.set_file("/ws/types.sr", text);
    let helps: Vec<(String, Option<String>)> = file_diagnostics(&db, file)
        .iter()
        .filter(|d| d.code() == sr_syntax::Code::SR119)
        .map(|d| (text[d.range].to_string(), d.help()))
        .collect();
    expect_test::expect![[r#"
        [
            (
                "stringy",
                Some(
                    "did you mean 'string'?",
                ),
            ),
            (
                "Findng",
                Some(
                    "did you mean 'Finding'?",
                ),
            ),
            (
                "Zzz",
                Some(
                    "types are string, int, float, bool and schemas; defined schemas are: Finding",
                ),
            ),
            (
                "boolean",
                Some(
                    "did you mean 'bool'?",
                ),
            ),
        ]
    "#]]
    .assert_debug_eq(&helps);
}
