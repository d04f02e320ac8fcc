//! The formatter over every `.sr` text we have: the upstream corpus, the
//! upstream snippets, the differential cases and the parser fixtures. Each
//! formatted text must parse to the same tree (whitespace aside, comments
//! included) and format to itself.
#![allow(clippy::unwrap_used)]

use std::path::Path;

/// Checks one text; `Ok(false)` when it does not parse (not formatted).
fn check(name: &str, text: &str) -> Result<bool, String> {
    let formatted = match sr_fmt::format(text) {
        Ok(formatted) => formatted,
        Err(_) if !sr_syntax::parse(text).errors().is_empty() => return Ok(false),
        Err(e) => return Err(format!("{name}: refused a valid file: {e}")),
    };
    let errors = sr_syntax::parse(&formatted).errors().to_vec();
    if !errors.is_empty() {
        return Err(format!("{name}: formatted text does not parse: {errors:?}\n{formatted}"));
    }
    if sr_fmt::shape(text) != sr_fmt::shape(&formatted) {
        let (a, b) = (sr_fmt::shape(text), sr_fmt::shape(&formatted));
        let at = a.iter().zip(&b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
        return Err(format!("{name}: tree changed at {at}: {:?} vs {:?}\n{formatted}", a.get(at), b.get(at)));
    }
    let again = sr_fmt::format(&formatted).map_err(|e| format!("{name}: second pass failed: {e}"))?;
    if again != formatted {
        return Err(format!("{name}: not idempotent\n--- first\n{formatted}\n--- second\n{again}"));
    }
    // Range formatting of the whole text agrees with formatting.
    let edits = sr_fmt::format_range(text, sr_syntax::TextRange::up_to(sr_syntax::TextSize::of(text))).unwrap();
    let mut ranged = text.to_string();
    for edit in edits.iter().rev() {
        ranged.replace_range(std::ops::Range::<usize>::from(edit.range), &edit.new_text);
    }
    if ranged != formatted {
        return Err(format!("{name}: range formatting of everything differs\n{ranged}"));
    }
    Ok(true)
}

fn check_all(texts: impl IntoIterator<Item = (String, String)>) -> usize {
    let mut failures = Vec::new();
    let mut formatted = 0;
    for (name, text) in texts {
        match check(&name, &text) {
            Ok(true) => formatted += 1,
            Ok(false) => {}
            Err(e) => failures.push(e),
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n\n"));
    formatted
}

fn jsonl_sources(path: &Path) -> Vec<(String, String)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let value: serde_json::Value = serde_json::from_str(line).ok()?;
            let source = value.get("source")?.as_str()?.to_string();
            Some((format!("{}:{}", path.display(), i + 1), source))
        })
        .collect()
}

#[test]
fn every_corpus_file() {
    let files = sr_testing::upstream_files();
    assert!(files.len() >= 35);
    let formatted = check_all(files);
    // All but the one file upstream ships with a syntax error.
    assert!(formatted >= 34, "{formatted}");
}

#[test]
fn every_snippet_and_differential_case() {
    let root = sr_testing::workspace_root();
    let mut texts = jsonl_sources(&root.join("fixtures/upstream/snippets.jsonl"));
    texts.extend(jsonl_sources(&root.join("fixtures/differential/syntax.jsonl")));
    texts.extend(jsonl_sources(&root.join("fixtures/differential/semantic.jsonl")));
    assert!(texts.len() > 300, "{}", texts.len());
    let formatted = check_all(texts);
    assert!(formatted > 200, "{formatted}");
}

#[test]
fn every_parser_fixture() {
    let dir = sr_testing::workspace_root().join("crates/sr-syntax/test_data/parser/ok");
    let texts = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sr"))
        .map(|p| (p.display().to_string(), std::fs::read_to_string(&p).unwrap()));
    assert!(check_all(texts) >= 10);
}

/// Corpus files with lines deleted, duplicated, re-indented or moved: the
/// texts a user has mid-edit that still parse (the others are refused).
#[test]
fn line_mutants_of_corpus_files() {
    let files = sr_testing::upstream_files();
    let rounds = std::env::var("SR_RANDOM_ROUNDS").ok().and_then(|n| n.parse().ok()).unwrap_or(300);
    let mut rng = sr_testing::random::Rng::new(0xF0F0);
    let mut below = |n: usize| rng.below(n);
    let mut texts = Vec::new();
    for round in 0..rounds {
        let (name, text) = &files[round % files.len()];
        let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_string).collect();
        for _ in 0..1 + below(3) {
            let at = below(lines.len());
            match below(4) {
                0 => drop(lines.remove(at)),
                1 => lines.insert(at, lines[at].clone()),
                2 => lines[at] = format!("    {}", lines[at]),
                _ => {
                    let line = lines.remove(at);
                    let to = below(lines.len() + 1);
                    lines.insert(to, line);
                }
            }
            if lines.is_empty() {
                break;
            }
        }
        texts.push((format!("mutant {round} of {name}"), lines.concat()));
    }
    assert!(check_all(texts) > rounds / 10);
}
