use std::os::unix::fs::symlink;
use std::path::PathBuf;

use super::*;

/// The regular files under `dir`, relative, sorted.
fn files_under(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(at) = pending.pop() {
        for entry in std::fs::read_dir(dir.join(&at)).unwrap() {
            let entry = entry.unwrap();
            let path = at.join(entry.file_name());
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                pending.push(path);
            } else {
                assert!(kind.is_file(), "{} is not a regular file", path.display());
                found.push(path.display().to_string());
            }
        }
    }
    found.sort();
    found
}

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
    assert_eq!(files_under(work.path()), ["readme.txt", "src/deep/a.py"]);
    assert_eq!(std::fs::read_to_string(work.path().join("src/deep/a.py")).unwrap(), "x = 1\n");
}
