//! A file is judged as part of every program that imports it: its
//! diagnostics are those the programs find in it, a finding only some
//! programs make names the program, and a file no program imports is alone.

use expect_test::{Expect, expect};
use sr_hir::{RootDatabase, file_diagnostics, file_diagnostics_alone, programs_of};

const PROMPTS: &str = "prompt greet: \"\"\"Greet ${target} in ${tone}.\"\"\"\n";

fn show(diagnostics: &[sr_hir::Diagnostic]) -> String {
    diagnostics
        .iter()
        .filter(|d| d.in_mode(false))
        .map(|d| format!("{} {:?}: {}", d.code(), d.range, d.message()))
        .collect::<Vec<_>>()
        .join("\n")
}

fn check(files: &[(&str, &str)], path: &str, expect: Expect) {
    let mut db = RootDatabase::default();
    for (path, text) in files {
        db.set_file(path, *text);
    }
    let file = db.file(path).expect("the fixture has this file");
    expect.assert_eq(&show(file_diagnostics(&db, file)));
}

fn names(db: &RootDatabase, files: &[sr_hir::File]) -> Vec<String> {
    files.iter().map(|f| f.path(db).display().to_string()).collect()
}

fn main_with(vars: &str) -> String {
    format!(
        "import ./prompts.sr\nmodel main = anthropic/claude\nflow main:\n{vars}    $r = call llm greet\n    return $r\n"
    )
}

#[test]
fn an_imported_file_sees_the_variables_of_its_program() {
    let main = main_with("    $target = \"world\"\n    $tone = \"French\"\n");
    check(&[("/ws/prompts.sr", PROMPTS), ("/ws/main.sr", &main)], "/ws/prompts.sr", expect![""]);
    check(&[("/ws/prompts.sr", PROMPTS), ("/ws/main.sr", &main)], "/ws/main.sr", expect![""]);
}

#[test]
fn alone_an_imported_file_is_judged_as_upstream_judges_it() {
    let main = main_with("    $target = \"world\"\n    $tone = \"French\"\n");
    let mut db = RootDatabase::default();
    let prompts = db.set_file("/ws/prompts.sr", PROMPTS);
    db.set_file("/ws/main.sr", main);
    expect![[r#"
        E0015 23..32: prompt 'greet' references undefined variable '$target'
        E0015 36..43: prompt 'greet' references undefined variable '$tone'"#]]
    .assert_eq(&show(file_diagnostics_alone(&db, prompts)));
}

#[test]
fn an_error_in_an_imported_file_is_reported_there() {
    let prompts = "prompt greet expecting Nope: \"\"\"Hi.\"\"\"\n";
    let main = main_with("");
    check(
        &[("/ws/prompts.sr", prompts), ("/ws/main.sr", &main)],
        "/ws/prompts.sr",
        expect!["E0001 23..27: undefined reference to schema 'Nope'"],
    );
}

#[test]
fn programs_that_judge_a_file_differently_are_named() {
    let both = main_with("    $target = \"world\"\n    $tone = \"French\"\n");
    let only_target = main_with("    $target = \"world\"\n");
    let files = [("/ws/prompts.sr", PROMPTS), ("/ws/a.sr", &*both), ("/ws/b.sr", &*only_target)];
    check(
        &files,
        "/ws/prompts.sr",
        expect!["E0015 36..43: prompt 'greet' references undefined variable '$tone' (in program b.sr)"],
    );
    // Neither program assigns `$tone`: one finding, no program named.
    let files = [("/ws/prompts.sr", PROMPTS), ("/ws/b.sr", &*only_target), ("/ws/c.sr", &*only_target)];
    check(&files, "/ws/prompts.sr", expect!["E0015 36..43: prompt 'greet' references undefined variable '$tone'"]);
}

#[test]
fn membership_follows_imports_transitively() {
    let mut db = RootDatabase::default();
    let leaf = db.set_file("/ws/lib/leaf.sr", "model m = openai/gpt-4o\n");
    let mid = db.set_file("/ws/lib/mid.sr", "import ./leaf.sr\n");
    let a = db.set_file("/ws/a.sr", "import ./lib/mid.sr\n");
    let b = db.set_file("/ws/b.sr", "import ./lib/leaf.sr\n");
    let alone = db.set_file("/ws/alone.sr", "model x = openai/gpt-4o\n");
    assert_eq!(names(&db, programs_of(&db, leaf)), ["/ws/a.sr", "/ws/b.sr"]);
    assert_eq!(names(&db, programs_of(&db, mid)), ["/ws/a.sr"]);
    assert_eq!(names(&db, programs_of(&db, a)), ["/ws/a.sr"]);
    assert_eq!(names(&db, programs_of(&db, b)), ["/ws/b.sr"]);
    assert_eq!(names(&db, programs_of(&db, alone)), ["/ws/alone.sr"]);
    // Removing the importer leaves the file alone again.
    db.remove_file("/ws/a.sr");
    assert_eq!(names(&db, programs_of(&db, mid)), ["/ws/lib/mid.sr"]);
}
