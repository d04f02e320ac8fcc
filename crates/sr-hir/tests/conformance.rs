//! `--compat upstream` conformance: for every upstream snippet and `.sr` file,
//! the set of (code, line) pairs we report equals upstream's, except for the
//! cases listed with a reason in `fixtures/upstream/allowed-deviations.txt`.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;

use serde_json::Value;
use sr_hir::{RootDatabase, file_diagnostics};
use sr_syntax::{Code, LineIndex};

struct Case {
    id: String,
    source: String,
    /// Upstream's (code, line) pairs.
    expected: BTreeSet<(String, i64)>,
}

fn cases() -> Vec<Case> {
    let corpus = sr_testing::upstream_corpus();
    let mut cases = Vec::new();
    for line in std::fs::read_to_string(corpus.join("snippets.jsonl")).unwrap().lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let expected = v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| (d["code"].as_str().unwrap_or("").to_string(), d["line"].as_i64().unwrap_or(0)))
            .collect();
        cases.push(Case {
            id: v["id"].as_str().unwrap().into(),
            source: v["source"].as_str().unwrap().into(),
            expected,
        });
    }
    let files: Value =
        serde_json::from_str(&std::fs::read_to_string(corpus.join("files-check.json")).unwrap()).unwrap();
    for file in files.as_array().unwrap() {
        let path = file["path"].as_str().unwrap();
        let expected = file["check_json"]["errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| (d["code"].as_str().unwrap_or("").to_string(), d["location"]["line"].as_i64().unwrap()))
            .collect();
        let source = std::fs::read_to_string(corpus.join("files").join(path)).unwrap();
        cases.push(Case { id: path.into(), source, expected });
    }
    // Generated programs on which upstream and we agreed when
    // `cargo xtask differential --semantic --save` ran.
    let differential = corpus.join("../differential/semantic.jsonl");
    for line in std::fs::read_to_string(differential).unwrap().lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let expected = v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| (d["code"].as_str().unwrap_or("").to_string(), d["line"].as_i64().unwrap_or(0)))
            .collect();
        cases.push(Case {
            id: v["id"].as_str().unwrap().into(),
            source: v["source"].as_str().unwrap().into(),
            expected,
        });
    }
    cases
}

/// Our diagnostics in upstream mode as (code, line) pairs; after a syntax error
/// upstream reports only the first one and nothing else.
fn ours(db: &mut RootDatabase, source: &str) -> BTreeSet<(String, i64)> {
    let file = db.set_file("/conformance/case.sr", source);
    let index = LineIndex::new(source);
    let diagnostics: Vec<_> = file_diagnostics(db, file).iter().filter(|d| d.in_mode(true)).cloned().collect();
    if let Some(syntax) = diagnostics.iter().find(|d| d.code().is_syntax()) {
        let line = match syntax.upstream_position {
            Some((line, _)) => line as i64,
            None => index.line_col(syntax.range.start()).line as i64 + 1,
        };
        return BTreeSet::from([(syntax.code().to_string(), line)]);
    }
    diagnostics
        .iter()
        .map(|d| {
            let line = match d.upstream_position {
                Some((line, _)) => line as i64,
                None => index.line_col(d.range.start()).line as i64 + 1,
            };
            (d.code().to_string(), line)
        })
        .collect()
}

fn allowed() -> Vec<(String, String)> {
    let path = sr_testing::upstream_corpus().join("allowed-deviations.txt");
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (id, reason) = l.split_once(" -- ").expect("`ID -- reason`");
            (id.trim().to_string(), reason.trim().to_string())
        })
        .collect()
}

#[test]
fn compat_mode_matches_upstream() {
    let mut db = RootDatabase::default();
    let allowed = allowed();
    let cases = cases();
    let mut failures = Vec::new();
    let mut agreed = 0;
    for case in &cases {
        let ours = ours(&mut db, &case.source);
        // Upstream's E0007 on end of input is at line -1; ours carries it too.
        if ours == case.expected {
            agreed += 1;
            assert!(
                !allowed.iter().any(|(id, _)| id == &case.id),
                "{} agrees now: remove it from the allow-list",
                case.id
            );
            continue;
        }
        if allowed.iter().any(|(id, _)| id == &case.id) {
            continue;
        }
        failures.push(format!("{}: upstream {:?}, ours {:?}", case.id, case.expected, ours));
    }
    eprintln!(
        "compat conformance: {agreed} of {} cases agree, {} allowed deviations, {} failures",
        cases.len(),
        allowed.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let _ = Code::E0001;
}
