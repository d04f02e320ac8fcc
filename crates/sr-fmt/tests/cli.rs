//! `sr fmt [--check]` over a directory: exit codes, messages, files written.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sr-fmt-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::create_dir_all(dir.join(".hidden")).unwrap();
    std::fs::write(dir.join("ok.sr"), "flow main:\n    return 1\n").unwrap();
    std::fs::write(dir.join("sub/messy.sr"), "flow main:\n  return   1\n").unwrap();
    std::fs::write(dir.join(".hidden/skip.sr"), "flow main:\n  return   1\n").unwrap();
    std::fs::write(dir.join("notes.txt"), "not a workload").unwrap();
    dir
}

fn run(paths: &[PathBuf], check: bool) -> (i32, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = sr_fmt::run(paths, check, &mut out, &mut err);
    (code, String::from_utf8(out).unwrap(), String::from_utf8(err).unwrap())
}

#[test]
fn check_lists_files_then_formatting_fixes_them() {
    let dir = temp_dir("check");
    let (code, out, err) = run(std::slice::from_ref(&dir), true);
    assert_eq!((code, err.as_str()), (1, ""));
    assert_eq!(out, format!("would reformat {}\n", dir.join("sub/messy.sr").display()));
    assert_eq!(std::fs::read_to_string(dir.join("sub/messy.sr")).unwrap(), "flow main:\n  return   1\n");

    let (code, out, _) = run(std::slice::from_ref(&dir), false);
    assert_eq!(code, 0);
    assert_eq!(out, format!("formatted {}\n", dir.join("sub/messy.sr").display()));
    assert_eq!(std::fs::read_to_string(dir.join("sub/messy.sr")).unwrap(), "flow main:\n    return 1\n");
    assert_eq!(std::fs::read_to_string(dir.join(".hidden/skip.sr")).unwrap(), "flow main:\n  return   1\n");
    assert_eq!(run(std::slice::from_ref(&dir), true).0, 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn syntax_errors_and_missing_paths() {
    let dir = temp_dir("errors");
    std::fs::write(dir.join("broken.sr"), "prompt p \"\"\"x\"\"\"\n").unwrap();
    let (code, _, err) = run(&[dir.join("broken.sr")], false);
    assert_eq!(code, 1);
    assert!(err.contains("broken.sr: cannot format a file with syntax errors: E0007"), "{err}");
    let (code, _, err) = run(&[dir.join("missing.sr")], true);
    assert_eq!(code, 2);
    assert!(err.starts_with("error: cannot read"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
