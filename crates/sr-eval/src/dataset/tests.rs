use std::path::{Path, PathBuf};

use super::*;

fn shown(errors: Vec<DatasetError>) -> String {
    errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n")
}

fn jsonl(text: &str) -> Result<Vec<Case>, String> {
    parse_jsonl(text, Path::new("set.jsonl"), Path::new(".")).map_err(shown)
}

fn yaml(text: &str) -> Result<Vec<Case>, String> {
    parse_yaml(text, Path::new("set.yaml"), Path::new(".")).map_err(shown)
}

fn loaded(path: &Path) -> Result<Vec<Case>, String> {
    load(path).map(|d| d.cases).map_err(shown)
}

#[test]
fn jsonl_cases_read_with_files_input_and_scorers() {
    let text = r#"{"id": "c1", "prompt": "status of order ${order}?", "input": {"order": 7}, "files": {"src/a.py": "x = 1\n"}, "expect": [{"contains": "shipped"}, {"json_path": "$.status", "equals": "shipped"}]}

{"id": "c2", "prompt": "keep ${this}", "expect": []}
"#;
    let cases = jsonl(text).unwrap();
    assert_eq!(cases.len(), 2);
    assert_eq!(cases[0].id, "c1");
    assert_eq!(cases[0].prompt, "status of order 7?");
    assert_eq!(cases[0].files, Files::Map([("src/a.py".to_string(), "x = 1\n".to_string())].into()));
    assert_eq!(cases[0].expect.iter().map(Scorer::kind).collect::<Vec<_>>(), ["contains", "json_path"]);
    // `${...}` that names no input stays as written.
    assert_eq!(cases[1].prompt, "keep ${this}");
}

/// `vars` are the run's starting variables, kept as written (not filled in
/// the prompt, which only `input` does).
#[test]
fn vars_are_read_as_the_runs_starting_variables() {
    let text = r#"{"id": "try", "prompt": "${topic}", "vars": {"topic": {"name": "rust"}, "n": 2}, "expect": []}"#;
    let cases = jsonl(text).unwrap();
    assert_eq!(cases[0].prompt, "${topic}");
    assert_eq!(serde_json::to_string(&cases[0].vars).unwrap(), r#"{"topic":{"name":"rust"},"n":2}"#);
    let bad = jsonl(r#"{"id": "try", "prompt": "", "vars": [1], "expect": []}"#).unwrap_err();
    assert!(bad.starts_with("set.jsonl:1:"), "{bad}");
}

#[test]
fn yaml_cases_read_the_same() {
    let text = "- id: c1\n  prompt: hi ${who}\n  input:\n    who: Ann\n  expect:\n    - regex: 'order\\s+7'\n    - file: out.txt\n      contains: '7'\n- id: c2\n  prompt: two\n  expect: []\n";
    let cases = yaml(text).unwrap();
    assert_eq!(cases.iter().map(|c| c.prompt.as_str()).collect::<Vec<_>>(), ["hi Ann", "two"]);
    assert_eq!(cases[0].expect.iter().map(Scorer::kind).collect::<Vec<_>>(), ["regex", "file"]);
}

#[test]
fn jsonl_problems_name_the_line_and_field() {
    let ok = r#"{"id": "c1", "prompt": "p", "expect": []}"#;
    for (bad, error) in [
        (r#"{"id": "c2", "expect": []}"#, "set.jsonl:3:26: missing field `prompt`"),
        (r#"{"id": "c2", "prompt": "p", "expect": [], "extra": 1}"#, "set.jsonl:3:49: unknown field `extra`"),
        (r#"{"id": "c2", "prompt": "p", "expect": [{"regex": "("}]}"#, "set.jsonl:3:40: expect: bad regex"),
        (r#"{"id": "../x", "prompt": "p", "expect": []}"#, "set.jsonl:3:13: id: case id \"../x\" is not an id: "),
        (
            r#"{"id": "c2", "prompt": "p", "files": {"../x": ""}, "expect": []}"#,
            "set.jsonl:3:49: files: \"../x\" must be a relative path inside the work directory",
        ),
        (
            r#"{"id": "c2", "prompt": "p", "expect": [{"file": "/etc/passwd"}]}"#,
            "set.jsonl:3:40: expect: file \"/etc/passwd\" must be a relative path inside the work directory",
        ),
        (
            r#"{"id": "c2", "prompt": "p", "files": "no-such-dir", "expect": []}"#,
            "set.jsonl:3: files: \"no-such-dir\" is not a directory inside the dataset's directory",
        ),
        (
            r#"{"id": "c1", "prompt": "p", "expect": []}"#,
            "set.jsonl:3: id: \"c1\" is already the id of the case at line 1",
        ),
        (r#"{"id": "c2", "prompt": "p", "expect": [}"#, "set.jsonl:3:40: expected value"),
        ("not json", "set.jsonl:3:2: expected ident"),
    ] {
        let got = jsonl(&format!("{ok}\n\n{bad}\n")).unwrap_err();
        assert!(got.starts_with(error), "{bad}:\n  got  {got}\n  want {error}");
    }
}

#[test]
fn yaml_problems_name_the_location_and_field() {
    let ok = "- id: c1\n  prompt: p\n  expect: []\n";
    for (bad, error) in [
        ("- id: c2\n  expect: []\n", "set.yaml:4:3: .[1]: missing field `prompt`"),
        ("- id: c2\n  prompt: p\n  expect:\n    - regex: '('\n", "set.yaml:7:5: expect: bad regex"),
        (
            "- id: c2\n  prompt: p\n  files: {/abs: x}\n  expect: []\n",
            "set.yaml:6:10: .[1].files: files: \"/abs\" must be a relative path inside the work directory",
        ),
        ("- id: c1\n  prompt: p\n  expect: []\n", "set.yaml:4: id: \"c1\" is already the id of the case at line 1"),
        ("- id: c2\n  prompt: [\n", "set.yaml:5:11: .[1].prompt: invalid type: sequence"),
    ] {
        let got = yaml(&format!("{ok}{bad}")).unwrap_err();
        assert!(got.starts_with(error), "{bad}:\n  got  {got}\n  want {error}");
    }
}

#[test]
fn a_dataset_must_be_jsonl_or_yaml_and_readable() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("set.csv");
    std::fs::write(&csv, "id,prompt\n").unwrap();
    assert!(loaded(&csv).unwrap_err().ends_with("set.csv: a dataset is a .jsonl or .yaml file"));
    let missing = dir.path().join("none.jsonl");
    assert!(loaded(&missing).unwrap_err().contains("none.jsonl: cannot read"));
    let copied = dir.path().join("files");
    std::fs::create_dir(&copied).unwrap();
    let set = dir.path().join("set.jsonl");
    std::fs::write(&set, r#"{"id": "c", "prompt": "p", "files": "files", "expect": []}"#).unwrap();
    let relative = PathBuf::from("files");
    assert_eq!(loaded(&set).unwrap()[0].files, Files::Dir { base: dir.path().canonicalize().unwrap(), relative });
    assert!(copied.is_dir());
}

#[test]
fn only_regular_files_within_the_size_limit_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let error = |path: &Path| loaded(path).unwrap_err();
    let fifo = dir.path().join("pipe.jsonl");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    // No writer: reading it would block forever.
    assert!(error(&fifo).ends_with("pipe.jsonl: cannot read: not a regular file"), "{}", error(&fifo));
    let folder = dir.path().join("folder.yaml");
    std::fs::create_dir(&folder).unwrap();
    assert!(error(&folder).ends_with("cannot read: not a regular file"));
    // Sparse: the size is checked before anything is read.
    let huge = dir.path().join("huge.jsonl");
    std::fs::File::create(&huge).unwrap().set_len(MAX_DATASET_BYTES + 1).unwrap();
    assert!(error(&huge).ends_with("cannot read: larger than 256 MiB"), "{}", error(&huge));
    let binary = dir.path().join("binary.jsonl");
    std::fs::write(&binary, b"{\"id\": \"\xff\"}").unwrap();
    assert!(error(&binary).ends_with("binary.jsonl: not UTF-8 text (byte 8)"), "{}", error(&binary));
}

/// Every id the id rule refuses is a dataset error at its line and column,
/// naming the rule.
#[test]
fn hostile_case_ids_are_refused_where_they_are_written() {
    for id in sr_runtime::ids::hostile() {
        let line = serde_json::json!({"id": id, "prompt": "p", "expect": []}).to_string();
        let got = jsonl(&format!("\n{line}")).unwrap_err();
        assert!(got.starts_with("set.jsonl:2:") && got.contains(": id: case id "), "{got}");
        assert!(got.ends_with(sr_runtime::ids::RULE), "{got}");
    }
}

/// Paths a dataset gives stay inside the directory they are relative to:
/// each field with each way out is a dataset error at its line and column.
#[test]
fn dataset_paths_stay_inside_their_directories() {
    type Place = fn(&str) -> serde_json::Value;
    let fields: [(&str, Place, &str); 4] = [
        ("files", |p| serde_json::json!(p), "the dataset's directory"),
        ("files", |p| serde_json::json!({p: "x"}), "the work directory"),
        ("expect", |p| serde_json::json!([{"file": p}]), "the work directory"),
        ("expect", |p| serde_json::json!([{"flow": p}]), "the dataset's directory"),
    ];
    for (field, value, within) in fields {
        for path in ["../secret", "/etc", "/", "a/../../b", "./../x", "..", ""] {
            let mut case = serde_json::json!({"id": "c", "prompt": "p", "expect": []});
            case[field] = value(path);
            let got = jsonl(&case.to_string()).unwrap_err();
            let (place, message) = got.split_once(": ").unwrap();
            assert!(place.starts_with("set.jsonl:1:") && place.len() > "set.jsonl:1:".len(), "{got}");
            let said =
                if path.is_empty() { "is empty".to_string() } else { format!("a relative path inside {within}") };
            assert!(message.contains(&format!("{path:?}")) && message.contains(&said), "{got}");
        }
    }
    let got = yaml("- id: c\n  prompt: p\n  files: ../keys\n  expect: []\n").unwrap_err();
    assert!(got.starts_with("set.yaml:3:10: .[0].files: files: \"../keys\" must be"), "{got}");
}

/// A `files` directory or a flow reached through a symlink that leaves the
/// dataset's directory is a dataset error; a symlink inside a copied
/// directory is not followed.
#[test]
fn symlinks_out_of_the_dataset_directory_are_refused() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("grade.sr"), "flow main:\n    return 1\n").unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("data")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("grade.sr"), dir.path().join("grade.sr")).unwrap();
    let set = dir.path().join("set.jsonl");
    for (line, said) in [
        (r#"{"id": "c", "prompt": "p", "files": "data", "expect": []}"#, "files: \"data\" is not a directory inside"),
        (
            r#"{"id": "c", "prompt": "p", "expect": [{"flow": "grade.sr"}]}"#,
            "expect: flow: grade.sr is not a file inside",
        ),
    ] {
        std::fs::write(&set, line).unwrap();
        let got = loaded(&set).unwrap_err();
        assert!(got.contains(":1:") && got.contains(said) && got.contains("leads outside"), "{got}");
    }
}

/// Every problem of a dataset is reported at once, each at its place: a case
/// with a problem does not hide the next one's, and each scorer is read on its own.
#[test]
fn every_problem_is_reported_at_its_place() {
    let lines = [
        r#"{"id": "c1", "prompt": "p", "expect": [{"contians": "x"}, {"regex": "("}]}"#,
        r#"{"id": "c2", "prompt": "p", "expect": []}"#,
        r#"{"id": "c3", "prompt": 1, "expect": []}"#,
        r#"{"id": "c2", "prompt": "p", "expect": [{"findings": [], "tolerence": 1}]}"#,
        "not json",
        r#"{"id": "ünï", "prompt": "p", "expect": [{"equals": 1}, {"tool_called": 3}]}"#,
    ];
    let got = jsonl(&lines.join("\n")).unwrap_err();
    let want = [
        "set.jsonl:1:40: expect: unknown scorer `contians`: did you mean `contains`?",
        "set.jsonl:1:59: expect: bad regex \"(\"",
        "set.jsonl:3:24: invalid type: integer `1`, expected a string",
        "set.jsonl:4:40: expect: findings: unknown key `tolerence`: did you mean `tolerance`?",
        "set.jsonl:5:2: expected ident",
        "set.jsonl:6:12: id: case id \"ünï\" is not an id",
    ];
    let got: Vec<&str> = got.lines().collect();
    assert_eq!(got.len(), want.len(), "{got:#?}");
    for (got, want) in got.iter().zip(want) {
        assert!(got.starts_with(want), "\n  got  {got}\n  want {want}");
    }

    // Duplicates are reported with the line of the first; a duplicate of a case
    // with problems is not (that case was not read).
    let dup = [r#"{"id": "a", "prompt": "p", "expect": []}"#; 3].join("\n");
    assert_eq!(
        jsonl(&dup).unwrap_err(),
        "set.jsonl:2: id: \"a\" is already the id of the case at line 1\nset.jsonl:3: id: \"a\" is already the id of the case at line 1"
    );
}

#[test]
fn every_yaml_case_is_read_and_each_scorer_placed() {
    let text = "# cases\n\
- id: c1\n  prompt: p\n  expect:\n    - contains: ok\n    - contians: x\n\
- id: c2\n  prompt: [\n\
- id: c3\n  prompt: p\n  expect:\n  - regex: '('\n  - equals: 1\n  - file: /abs\n\
- id: c4\n  prompt: p\n  expect: [{banana: 1}]\n";
    let got = yaml(text).unwrap_err();
    let want = [
        "set.yaml:6:5: expect: unknown scorer `contians`: did you mean `contains`?",
        "set.yaml:8:11: .[1].prompt: invalid type: sequence",
        "set.yaml:12:3: expect: bad regex",
        "set.yaml:14:3: expect: file \"/abs\" must be a relative path inside the work directory",
        "set.yaml:17: expect: unknown scorer {banana}",
    ];
    let got: Vec<&str> = got.lines().collect();
    assert_eq!(got.len(), want.len(), "{got:#?}");
    for (got, want) in got.iter().zip(want) {
        assert!(got.starts_with(want), "\n  got  {got}\n  want {want}");
    }
    // A list in flow style is read whole: its first problem.
    let flow = "[{id: c1, prompt: p, expect: [{regex: '('}]}, {id: c2, expect: []}]";
    assert!(yaml(flow).unwrap_err().starts_with("set.yaml:1:"), "{}", yaml(flow).unwrap_err());
}
