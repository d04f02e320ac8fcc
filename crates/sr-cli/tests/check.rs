//! `sr check` end to end: exit codes, text and JSON output.

mod common;

use common::{sr, temp_dir};
use expect_test::expect;

const VALID: &str = "model main = anthropic/claude\nprompt p: \"\"\"Hi\"\"\"\nagent:\n    instruction p\n";
const BROKEN: &str = "model main = anthropic/claude\nflow main:\n    $x = 1 +\n";

#[test]
fn valid_file_prints_upstreams_success_line() {
    let dir = temp_dir("valid", &[("a.sr", VALID)]);
    let (code, stdout, _) = sr(&["check", "a.sr"], &dir);
    assert_eq!(code, 0);
    expect![[r#"
        valid (1 model, 1 agent)
    "#]]
    .assert_eq(&stdout);
}

#[test]
fn syntax_error_is_rendered_with_a_snippet() {
    let dir = temp_dir("broken", &[("b.sr", BROKEN)]);
    let (code, stdout, _) = sr(&["check", "b.sr"], &dir);
    assert_eq!(code, 1);
    expect![[r#"
        error[E0007]: unexpected end of line
         --> b.sr:3:13
          |
        3 |     $x = 1 +
          |             ^
          |
          = help: expected an expression after the operator

        Found 1 error in b.sr
    "#]]
    .assert_eq(&stdout);
}

#[test]
fn json_output_has_upstreams_shape() {
    let dir = temp_dir("json", &[("b.sr", BROKEN)]);
    let (code, stdout, _) = sr(&["check", "--format", "json", "b.sr"], &dir);
    assert_eq!(code, 1);
    expect![[r#"
        {
          "version": "1.0",
          "file": "b.sr",
          "valid": false,
          "errors": [
            {
              "severity": "error",
              "message": "unexpected end of line",
              "location": {
                "file": "b.sr",
                "line": 3,
                "column": 13,
                "end_line": 3,
                "end_column": 13
              },
              "code": "E0007",
              "help": "expected an expression after the operator"
            }
          ],
          "warnings": [],
          "stats": {
            "models": 1,
            "agents": 0,
            "flows": 1,
            "handlers": 0
          }
        }
    "#]]
    .assert_eq(&stdout);
}

#[test]
fn directories_are_searched_recursively() {
    let dir = temp_dir("dir", &[("x/a.sr", VALID), ("x/y/b.sr", BROKEN), ("x/notes.txt", "")]);
    let (code, stdout, _) = sr(&["check", "x"], &dir);
    assert_eq!(code, 1);
    assert!(stdout.starts_with("x/a.sr: valid (1 model, 1 agent)\n"), "{stdout}");
    assert!(stdout.contains("Found 1 error in x/y/b.sr"), "{stdout}");
}

#[test]
fn missing_path_exits_with_2() {
    let dir = temp_dir("missing", &[]);
    std::fs::create_dir_all(&dir).unwrap();
    let (code, stdout, stderr) = sr(&["check", "nope.sr"], &dir);
    assert_eq!(code, 2);
    assert_eq!(stdout, "");
    assert_eq!(stderr, "error: file not found: nope.sr\n");
    let (code, stdout, _) = sr(&["check", "--format", "json", "nope.sr"], &dir);
    assert_eq!(code, 2);
    assert!(stdout.contains(r#""error": "file not found: nope.sr""#), "{stdout}");
}

const SCOPED: &str =
    "model main = anthropic/claude\nflow main:\n    if $input_prompt:\n        $x = 1\n    return $x\n";

#[test]
fn default_mode_follows_the_runtime_and_compat_mode_reproduces_upstream() {
    let dir = temp_dir("compat", &[("s.sr", SCOPED)]);
    let (code, stdout, _) = sr(&["check", "s.sr"], &dir);
    assert_eq!((code, stdout.as_str()), (0, "valid (1 model, 1 flow)\n"));
    let (code, stdout, _) = sr(&["check", "--compat", "upstream", "--format", "json", "s.sr"], &dir);
    assert_eq!(code, 1);
    expect![[r#"
        {
          "version": "1.0",
          "file": "s.sr",
          "valid": false,
          "errors": [
            {
              "severity": "error",
              "message": "variable '$x' used before definition",
              "location": {
                "file": "s.sr",
                "line": 5,
                "column": 12
              },
              "code": "E0002"
            }
          ],
          "warnings": [],
          "stats": {
            "models": 1,
            "agents": 0,
            "flows": 1,
            "handlers": 0
          }
        }
    "#]]
    .assert_eq(&stdout);
}

#[test]
fn warnings_do_not_fail_unless_strict() {
    let dir = temp_dir(
        "strict",
        &[("w.sr", "model main = anthropic/claude\nmodel spare = anthropic/haiku\nflow main:\n    log 1\n")],
    );
    let (code, stdout, _) = sr(&["check", "w.sr"], &dir);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("warning[SR100]: model 'spare' is never used"), "{stdout}");
    assert!(stdout.ends_with("Found 1 warning in w.sr\n"), "{stdout}");
    let (code, _, _) = sr(&["check", "--strict", "w.sr"], &dir);
    assert_eq!(code, 1);
}

#[test]
fn special_files_are_refused_without_hanging() {
    let main = "import ./pipe.sr\nimport ./zero.sr\nimport ./loop.sr\nmodel main = openai/gpt-4o\n";
    let dir = temp_dir("special", &[("main.sr", main)]);
    let status = std::process::Command::new("mkfifo").arg(dir.join("pipe.sr")).status().unwrap();
    assert!(status.success());
    std::os::unix::fs::symlink("/dev/zero", dir.join("zero.sr")).unwrap();
    std::os::unix::fs::symlink(dir.join("loop2.sr"), dir.join("loop.sr")).unwrap();
    std::os::unix::fs::symlink(dir.join("loop.sr"), dir.join("loop2.sr")).unwrap();
    // Named on the command line: refused with the reason, exit 2.
    let (code, _, stderr) = sr(&["check", "pipe.sr"], &dir);
    assert_eq!((code, stderr.as_str()), (2, "error: cannot read pipe.sr: a FIFO (named pipe), not a regular file\n"));
    let (code, _, stderr) = sr(&["check", "zero.sr"], &dir);
    assert_eq!((code, stderr.as_str()), (2, "error: cannot read zero.sr: a device, not a regular file\n"));
    // Imported: the importing file is still checked, and each import says why
    // it cannot be read (SR107).
    let (code, stdout, _) = sr(&["check", "--format", "json", "main.sr"], &dir);
    assert_eq!(code, 1, "{stdout}");
    let messages: Vec<&str> = stdout.lines().filter_map(|l| l.trim().strip_prefix("\"message\": ")).collect();
    assert_eq!(
        messages,
        [
            "\"cannot read ./pipe.sr: a FIFO (named pipe), not a regular file\",",
            "\"cannot read ./zero.sr: a device, not a regular file\",",
            "\"cannot read ./loop.sr: too many levels of symbolic links (a symlink loop)\","
        ],
        "{stdout}"
    );
    // `sr graph` refuses the broken program with the same errors.
    let (code, stdout, stderr) = sr(&["graph", "main.sr"], &dir);
    assert_eq!((code, stdout.as_str()), (1, ""), "{stderr}");
    assert_eq!(stderr.matches("error[SR107]: cannot read ./").count(), 3, "{stderr}");
    let (code, _, stderr) = sr(&["graph", "pipe.sr"], &dir);
    assert_eq!((code, stderr.as_str()), (2, "error: cannot read pipe.sr: a FIFO (named pipe), not a regular file\n"));
}

/// A long line is shown as a window around the span, with `…` where the line
/// goes on; the location is the span's own line and column.
#[test]
fn a_long_line_is_shown_as_a_window_around_the_span() {
    let text = format!("flow main:\n    log \"{}\" + $nope + \"{}\"\n", "a".repeat(5_000), "b".repeat(5_000));
    let dir = temp_dir("long-line", &[("l.sr", &text)]);
    let (code, stdout, _) = sr(&["check", "l.sr"], &dir);
    assert_eq!(code, 1);
    expect![[r#"
        error[SR101]: undefined variable '$nope'
         --> l.sr:2:5014
          |
        2 | …aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" + $nope + "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb…
          |                                                              ^^^^^

        Found 1 error in l.sr
    "#]]
    .assert_eq(&stdout);
    let (_, json, _) = sr(&["check", "--format", "json", "l.sr"], &dir);
    assert!(json.contains("\"column\": 5014"), "{json}");
}

/// 40,000 invalid characters on one line: five are drawn and the rest
/// counted; JSON lists every one.
#[test]
fn diagnostics_past_the_limits_are_counted_not_drawn() {
    let dir = temp_dir("nul-line", &[("n.sr", &format!("{}\n", "\0".repeat(40_000)))]);
    let (code, stdout, _) = sr(&["check", "n.sr"], &dir);
    assert_eq!(code, 1);
    assert_eq!(stdout.matches("error[E0007]").count(), 5, "{stdout}");
    assert!(stdout.len() < 4_000, "{} bytes", stdout.len());
    assert!(stdout.contains("… and 39995 more errors in this file"), "{stdout}");
    assert!(stdout.ends_with("Found 40000 errors in n.sr\n"), "{stdout}");
    let (_, json, _) = sr(&["check", "--format", "json", "n.sr"], &dir);
    assert_eq!(json.matches("\"code\": \"E0007\"").count(), 40_000);
}

/// Past 100 diagnostics a file's are counted; `--max-diagnostics` draws more
/// or fewer.
#[test]
fn at_most_a_hundred_diagnostics_are_drawn_unless_asked() {
    let text = sr_testing::hostile::generator("SR101").files(150).remove(0).1;
    let dir = temp_dir("many", &[("m.sr", &text)]);
    let drawn = |args: &[&str]| {
        let (code, stdout, _) = sr(args, &dir);
        assert_eq!(code, 1);
        assert!(stdout.ends_with("Found 150 errors in m.sr\n"), "{stdout}");
        (stdout.matches("error[SR101]").count(), stdout)
    };
    let (count, stdout) = drawn(&["check", "m.sr"]);
    assert_eq!(count, 100);
    assert!(stdout.contains("… and 50 more errors in this file (at most 100 diagnostics are drawn"), "{stdout}");
    assert_eq!(drawn(&["check", "--max-diagnostics", "3", "m.sr"]).0, 3);
    let (count, stdout) = drawn(&["check", "--max-diagnostics", "1000", "m.sr"]);
    assert_eq!(count, 150);
    assert!(!stdout.contains("more errors"), "{stdout}");
}

const PROMPTS: &str = "prompt greet expecting Nope: \"\"\"Greet ${name}.\"\"\"\n";
const MAIN: &str = "import ./prompts.sr\nmodel main = anthropic/claude\nflow main:\n    $name = \"world\"\n    $r = call llm greet\n    return $r\n";

#[test]
fn checking_an_entry_reports_the_errors_of_the_files_it_imports() {
    let dir = temp_dir("entry_imports", &[("main.sr", MAIN), ("prompts.sr", PROMPTS)]);
    let (code, stdout, _) = sr(&["check", "--color", "never", "main.sr"], &dir);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.starts_with("main.sr: valid (1 model, 1 flow)\n"), "{stdout}");
    assert!(stdout.contains("undefined reference to schema 'Nope'"), "{stdout}");
    assert!(stdout.contains("Found 1 error in prompts.sr"), "{stdout}");
    // `$name` is assigned by the program's flow: no false error.
    assert!(!stdout.contains("'$name'"), "{stdout}");
}

#[test]
fn a_folder_judges_each_file_as_part_of_the_programs_that_import_it() {
    let dir = temp_dir("folder_programs", &[("main.sr", MAIN), ("prompts.sr", PROMPTS)]);
    let (code, stdout, _) = sr(&["check", "--color", "never", "."], &dir);
    assert_eq!(code, 1, "{stdout}");
    assert_eq!(stdout.matches("undefined reference to schema 'Nope'").count(), 1, "{stdout}");
    assert!(!stdout.contains("'$name'"), "{stdout}");
    // Upstream's checker judges each file alone: its verdict is kept.
    let (code, stdout, _) = sr(&["check", "--compat", "upstream", "--format", "json", "."], &dir);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("prompt 'greet' references undefined variable '$name'"), "{stdout}");
}

/// Findings in an imported file: one JSON array of both files' documents, and
/// the entry's stats count its program's agents (they are in the import).
/// `--compat upstream` prints upstream's one document for the file given.
#[test]
fn json_for_several_files_is_one_array_with_program_stats() {
    let agents = "prompt p expecting Nope: \"\"\"Hi\"\"\"\nagent a:\n    instruction p\nagent b:\n    instruction p\nagent c:\n    instruction p\n";
    let main = "import ./agents.sr\nmodel main = anthropic/claude\nflow main:\n    run agent a\n";
    let dir = temp_dir("json_array", &[("main.sr", main), ("agents.sr", agents)]);
    let (code, stdout, _) = sr(&["check", "--format", "json", "main.sr"], &dir);
    assert_eq!(code, 1, "{stdout}");
    let documents: Vec<serde_json::Value> = serde_json::from_str(&stdout).unwrap();
    let summary: Vec<(String, String, usize)> = documents
        .iter()
        .map(|d| {
            (d["file"].as_str().unwrap().to_string(), d["stats"].to_string(), d["errors"].as_array().unwrap().len())
        })
        .collect();
    expect![[r#"
        [
            (
                "main.sr",
                "{\"models\":1,\"agents\":3,\"flows\":1,\"handlers\":0}",
                0,
            ),
            (
                "agents.sr",
                "{\"models\":0,\"agents\":3,\"flows\":0,\"handlers\":0}",
                1,
            ),
        ]
    "#]]
    .assert_debug_eq(&summary);
    let (_, stdout, _) = sr(&["check", "--compat", "upstream", "--format", "json", "main.sr"], &dir);
    let document: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!((document["file"].as_str(), document["stats"]["agents"].as_u64()), (Some("main.sr"), Some(0)));
}
