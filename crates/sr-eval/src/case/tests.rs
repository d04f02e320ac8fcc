use std::os::unix::fs::symlink;

use super::*;

/// A copied `files` directory brings its regular files and directories, and
/// nothing a symlink in it points at (a key outside the dataset, a directory
/// outside it, a FIFO).
#[test]
fn a_files_directory_is_copied_without_following_symlinks() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("id_rsa"), "PRIVATE-KEY").unwrap();
    let dataset = tempfile::tempdir().unwrap();
    let case = dataset.path().join("case");
    std::fs::create_dir_all(case.join("src/deep")).unwrap();
    std::fs::write(case.join("readme.txt"), "hello").unwrap();
    std::fs::write(case.join("src/deep/a.py"), "x = 1\n").unwrap();
    symlink(outside.path().join("id_rsa"), case.join("id_rsa")).unwrap();
    symlink(outside.path(), case.join("src/outside")).unwrap();
    assert!(std::process::Command::new("mkfifo").arg(case.join("pipe")).status().unwrap().success());
    let work = tempfile::tempdir().unwrap();
    let files = Files::Dir { base: dataset.path().to_path_buf(), relative: "case".into() };
    write_files(&files, work.path()).unwrap();
    let copied = snapshot(work.path());
    assert_eq!(copied.keys().collect::<Vec<_>>(), ["readme.txt", "src/deep/a.py"]);
    assert!(!work.path().join("id_rsa").exists() && !work.path().join("src/outside").exists());
}

/// Recorded files are put back through the work directory's jail, from a
/// record inside the replay directory: paths out of the work directory,
/// protected paths and a record that is a symlink out are errors that change
/// nothing.
#[test]
fn recorded_files_are_restored_inside_the_jail() {
    let replay = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("old.txt"), "old").unwrap();
    let record = |name: &str, json: serde_json::Value| {
        std::fs::write(replay.path().join(name), json.to_string()).unwrap();
        restore_files(replay.path(), Path::new(name), work.path())
    };
    record("ok.json", serde_json::json!({"written": {"out/a.txt": "A"}, "removed": ["old.txt"]})).unwrap();
    assert_eq!(std::fs::read_to_string(work.path().join("out/a.txt")).unwrap(), "A");
    assert!(!work.path().join("old.txt").exists());
    let before = snapshot(work.path());
    for (name, written) in [
        ("up.json", "../escaped.txt"),
        ("abs.json", "/tmp/escaped.txt"),
        ("hook.json", ".git/hooks/pre-commit"),
        ("agents.json", ".streetrace/agents/x.sr"),
    ] {
        let error = record(name, serde_json::json!({"written": {written: "x"}})).unwrap_err();
        assert!(error.contains(name), "{error}");
    }
    assert!(!work.path().join(".git").exists() && !work.path().join(".streetrace").exists());
    std::fs::write(outside.path().join("files.json"), r#"{"written": {"stolen.txt": "x"}}"#).unwrap();
    symlink(outside.path().join("files.json"), replay.path().join("link.json")).unwrap();
    let error = restore_files(replay.path(), Path::new("link.json"), work.path()).unwrap_err();
    assert!(error.contains("leads outside"), "{error}");
    assert_eq!(snapshot(work.path()), before);
    // No record: the recording changed no files.
    restore_files(replay.path(), Path::new("none.json"), work.path()).unwrap();
}
