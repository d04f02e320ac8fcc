use std::path::Path;

use super::*;

fn jsonl(text: &str) -> Result<Vec<Case>, String> {
    parse_jsonl(text, Path::new("set.jsonl"), Path::new(".")).map_err(|e| e.to_string())
}

fn yaml(text: &str) -> Result<Vec<Case>, String> {
    parse_yaml(text, Path::new("set.yaml"), Path::new(".")).map_err(|e| e.to_string())
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
        (r#"{"id": "c2", "prompt": "p", "expect": [{"regex": "("}]}"#, "set.jsonl:3:54: expect: bad regex"),
        (r#"{"id": "../x", "prompt": "p", "expect": []}"#, "set.jsonl:3:13: id: \"../x\" is not a case id"),
        (
            r#"{"id": "c2", "prompt": "p", "files": {"../x": ""}, "expect": []}"#,
            "set.jsonl:3: files: \"../x\" must be a relative path",
        ),
        (
            r#"{"id": "c2", "prompt": "p", "expect": [{"file": "/etc/passwd"}]}"#,
            "set.jsonl:3: expect: file \"/etc/passwd\" must be a relative path",
        ),
        (
            r#"{"id": "c2", "prompt": "p", "files": "no-such-dir", "expect": []}"#,
            "set.jsonl:3: files: ./no-such-dir is not a directory",
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
        ("- id: c2\n  prompt: p\n  expect:\n    - regex: '('\n", "set.yaml:7:5: .[1].expect: expect: bad regex"),
        (
            "- id: c2\n  prompt: p\n  files: {/abs: x}\n  expect: []\n",
            "set.yaml:4: case \"c2\": files: \"/abs\" must be a relative path",
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
    assert!(load(&csv).unwrap_err().to_string().ends_with("set.csv: a dataset is a .jsonl or .yaml file"));
    let missing = dir.path().join("none.jsonl");
    assert!(load(&missing).unwrap_err().to_string().contains("none.jsonl: cannot read"));
    let copied = dir.path().join("files");
    std::fs::create_dir(&copied).unwrap();
    let set = dir.path().join("set.jsonl");
    std::fs::write(&set, r#"{"id": "c", "prompt": "p", "files": "files", "expect": []}"#).unwrap();
    assert_eq!(load(&set).unwrap()[0].files, Files::Dir(copied));
}

#[test]
fn only_regular_files_within_the_size_limit_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let error = |path: &Path| load(path).unwrap_err().to_string();
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
