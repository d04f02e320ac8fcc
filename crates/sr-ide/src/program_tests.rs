//! A workload split over files (prompts in one, agents in another, flows in a
//! third): every file is analysed as part of the program that imports it, so
//! no file shows a false diagnostic and the features agree across them.

use std::path::Path;

use expect_test::{Expect, expect};

use crate::DiagnosticsMode;
use crate::tests::{analysis, position, show};

/// The workload, with `$0` placed by `at` (a file and a marker in it).
fn workload(at: (&str, &str)) -> String {
    let files = [
        (
            "/ws/prompts.sr",
            "prompt greet: \"\"\"Greet ${target} in a ${tone} tone.\"\"\"\n\
             prompt farewell: \"\"\"Say goodbye to ${target}.\"\"\"\n\
             schema Reply:\n    text: string\n",
        ),
        (
            "/ws/agents.sr",
            "import ./prompts.sr\nmodel main = anthropic/claude\nprompt system: \"\"\"You greet people.\"\"\"\n\
             agent greeter:\n    instruction system\n",
        ),
        (
            "/ws/main.sr",
            "import ./agents.sr\nflow main:\n    $target = \"world\"\n    $tone = \"warm\"\n\
             \x20   $greeting = call llm greet\n    $reply = run agent greeter with $greeting\n    return $reply\n",
        ),
    ];
    let mut out = String::new();
    for (path, text) in files {
        let text = if path == at.0 { text.replacen(at.1, &format!("{}$0", at.1), 1) } else { text.to_string() };
        out.push_str(&format!("//- {path}\n{text}"));
    }
    out
}

#[test]
fn no_file_of_the_workload_has_a_diagnostic() {
    let (analysis, fixture) = analysis(&workload(("/none", "")));
    for (path, _) in &fixture.files {
        let diagnostics = analysis.diagnostics(Path::new(path), DiagnosticsMode::Default).unwrap();
        let messages: Vec<String> = diagnostics.iter().map(|d| d.message()).collect();
        assert_eq!(messages, Vec::<String>::new(), "{path}");
    }
    // Alone, as upstream's checker sees it, the prompts' variables are unknown.
    let alone = analysis.diagnostics(Path::new("/ws/prompts.sr"), DiagnosticsMode::Upstream).unwrap();
    assert_eq!(alone.len(), 3, "{alone:?}");
}

fn hover(at: (&str, &str), expect: Expect) {
    let (analysis, fixture) = analysis(&workload(at));
    let hover = analysis.hover(&position(&fixture)).unwrap().expect("a hover");
    expect.assert_eq(&hover.markdown);
}

#[test]
fn hover_in_an_imported_file_sees_the_programs_variables() {
    hover(
        ("/ws/prompts.sr", "${tar"),
        expect![[r#"
            ```streetrace
            $target
            ```

            **type** `string`  
            first assigned in flow `main` (main.sr)"#]],
    );
}

fn definition(at: (&str, &str), expect: Expect) {
    let (analysis, fixture) = analysis(&workload(at));
    let targets = analysis.goto_definition(&position(&fixture)).unwrap();
    let out: Vec<String> = targets.iter().map(|t| show(&fixture, &t.path, t.focus_range)).collect();
    expect.assert_eq(&out.join("\n"));
}

#[test]
fn definition_from_an_imported_file_finds_the_assignment() {
    definition(("/ws/prompts.sr", "${to"), expect![[r#"/ws/main.sr:57..61 "tone""#]]);
    // A prompt no flow calls: the flow that assigns its variable.
    definition(("/ws/prompts.sr", "goodbye to ${tar"), expect![[r#"/ws/main.sr:35..41 "target""#]]);
}

fn references(at: (&str, &str), expect: Expect) {
    let (analysis, fixture) = analysis(&workload(at));
    let refs = analysis.find_references(&position(&fixture), true).unwrap();
    let out: Vec<String> = refs.iter().map(|r| show(&fixture, &r.path, r.range)).collect();
    expect.assert_eq(&out.join("\n"));
}

#[test]
fn references_of_a_variable_reach_every_file_and_the_uncalled_prompt() {
    references(
        ("/ws/main.sr", "$tar"),
        expect![[r#"
        /ws/main.sr:35..41 "target"
        /ws/prompts.sr:25..31 "target"
        /ws/prompts.sr:92..98 "target""#]],
    );
    references(
        ("/ws/prompts.sr", "goodbye to ${tar"),
        expect![[r#"
        /ws/main.sr:35..41 "target"
        /ws/prompts.sr:25..31 "target"
        /ws/prompts.sr:92..98 "target""#]],
    );
}

#[test]
fn rename_from_an_imported_file_leaves_no_stale_interpolation() {
    let (analysis, fixture) = analysis(&workload(("/ws/prompts.sr", "goodbye to ${tar")));
    let change = analysis.rename(&position(&fixture), "subject").unwrap().expect("renamed");
    let out = crate::tests::applied(&fixture, &change);
    assert!(!out.contains("target"), "{out}");
    expect![[r#"
        //- /ws/main.sr
        import ./agents.sr
        flow main:
            $subject = "world"
            $tone = "warm"
            $greeting = call llm greet
            $reply = run agent greeter with $greeting
            return $reply
        //- /ws/prompts.sr
        prompt greet: """Greet ${subject} in a ${tone} tone."""
        prompt farewell: """Say goodbye to ${subject}."""
        schema Reply:
            text: string
    "#]]
    .assert_eq(&out);
}

/// `imports` and `program_files` of each file of the workload beside a file
/// of its own, as `path: [imports] [program files]`.
#[test]
fn program_files_are_every_program_a_file_is_in() {
    let mut text = workload(("/none", ""));
    text.push_str(
        "//- /ws/other.sr\nimport ./prompts.sr\nflow other:\n    log 1\n//- /ws/alone.sr\nflow alone:\n    log 2\n",
    );
    let (analysis, fixture) = analysis(&text);
    let name = |p: &std::path::PathBuf| p.file_name().unwrap().to_string_lossy().into_owned();
    let mut out = String::new();
    for path in fixture.files.iter().map(|(path, _)| path.as_str()).chain(["/ws/missing.sr"]) {
        let imports: Vec<String> = analysis.imports(Path::new(path)).unwrap().iter().map(name).collect();
        let files: Vec<String> = analysis.program_files(Path::new(path)).unwrap().iter().map(name).collect();
        out.push_str(&format!("{path}: [{}] [{}]\n", imports.join(" "), files.join(" ")));
    }
    expect![[r#"
        /ws/prompts.sr: [] [prompts.sr agents.sr main.sr other.sr]
        /ws/agents.sr: [prompts.sr] [prompts.sr agents.sr main.sr]
        /ws/main.sr: [agents.sr] [prompts.sr agents.sr main.sr]
        /ws/other.sr: [prompts.sr] [prompts.sr other.sr]
        /ws/alone.sr: [] [alone.sr]
        /ws/missing.sr: [] []
    "#]]
    .assert_eq(&out);
}
