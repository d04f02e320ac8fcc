//! The upstream conformance corpus (`fixtures/upstream`) and the differential
//! regression set (`fixtures/differential`): every input upstream parses must
//! parse without syntax errors here, and every one upstream rejects with a syntax
//! error must be rejected on the same line.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use serde_json::Value;
use sr_syntax::{LineIndex, parse};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/upstream")
}

struct Case {
    id: String,
    source: String,
    /// Line of upstream's syntax error, if upstream reported one.
    syntax_error_line: Option<Option<i64>>,
}

fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let snippets = std::fs::read_to_string(corpus().join("snippets.jsonl")).unwrap();
    for line in snippets.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let syntax = v["check"] == "syntax";
        let line_of_error = v["diagnostics"]
            .as_array()
            .and_then(|d| d.iter().find(|d| d["code"] == "E0007" || d["code"] == "E0008"))
            .map(|d| d["line"].as_i64());
        cases.push(Case {
            id: v["id"].as_str().unwrap().to_string(),
            source: v["source"].as_str().unwrap().to_string(),
            syntax_error_line: syntax.then(|| line_of_error.flatten()),
        });
    }
    let files: Value =
        serde_json::from_str(&std::fs::read_to_string(corpus().join("files-check.json")).unwrap()).unwrap();
    for file in files.as_array().unwrap() {
        let path = file["path"].as_str().unwrap();
        let source = std::fs::read_to_string(corpus().join("files").join(path)).unwrap();
        let syntax = file["check_json"]["errors"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["code"] == "E0007" || d["code"] == "E0008")
            .map(|d| d["location"]["line"].as_i64());
        cases.push(Case { id: path.to_string(), source, syntax_error_line: syntax });
    }
    // Mutants and generated programs on which upstream and we agreed when
    // `cargo xtask differential --save` ran; they guard against regressions.
    let differential = corpus().join("../differential/syntax.jsonl");
    for line in std::fs::read_to_string(differential).unwrap().lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let upstream = &v["upstream"];
        let syntax_error_line = (!upstream["ok"].as_bool().unwrap()).then(|| upstream["line"].as_i64());
        cases.push(Case {
            id: v["id"].as_str().unwrap().to_string(),
            source: v["source"].as_str().unwrap().to_string(),
            syntax_error_line,
        });
    }
    cases
}

#[test]
fn corpus_parses_as_upstream() {
    let cases = cases();
    let mut failures = Vec::new();
    let (mut accepted, mut rejected) = (0, 0);
    for case in &cases {
        let parse = parse(&case.source);
        assert_eq!(parse.syntax().text().to_string(), case.source, "{}: not lossless", case.id);
        let index = LineIndex::new(&case.source);
        let first = parse.errors().first();
        match (&case.syntax_error_line, first) {
            (None, None) => accepted += 1,
            (None, Some(e)) => failures.push(format!(
                "{}: upstream accepts, we report {} at line {}: {} ({})",
                case.id,
                e.code(),
                index.line_col(e.range.start()).line + 1,
                e.message(),
                e.help().unwrap_or_default()
            )),
            (Some(_), None) => failures.push(format!("{}: upstream rejects, we accept", case.id)),
            (Some(line), Some(e)) => {
                let ours = index.line_col(e.range.start()).line as i64 + 1;
                // Upstream reports E0008 at line 1 and end-of-input at line -1.
                let same = match (e.code(), line) {
                    (sr_syntax::Code::E0008, _) => true,
                    (_, Some(-1)) | (_, None) => e.message() == "unexpected end of input",
                    (_, Some(l)) => *l == ours,
                };
                if same {
                    rejected += 1;
                } else {
                    failures.push(format!("{}: upstream line {:?}, ours {} ({})", case.id, line, ours, e.message()));
                }
            }
        }
    }
    eprintln!("conformance: {accepted} accepted and {rejected} rejected as upstream, {} mismatches", failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
