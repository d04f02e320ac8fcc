//! `sr fmt [--check] [PATH...]`: format files in place, or check that they are.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Formats the `.sr` files under `paths` (the current directory when empty).
/// With `check`, writes nothing and lists the files that would change.
/// Exit code: 0 all formatted, 1 some file would change or has syntax
/// errors, 2 a path could not be read or written.
pub fn run(paths: &[PathBuf], check: bool, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let roots = if paths.is_empty() { vec![PathBuf::from(".")] } else { paths.to_vec() };
    let mut files = Vec::new();
    let mut code = 0;
    for root in &roots {
        match collect(root, &mut files) {
            Ok(()) => {}
            Err(e) => {
                let _ = writeln!(err, "error: cannot read {}: {e}", root.display());
                code = 2;
            }
        }
    }
    for file in files {
        let text = match std::fs::read_to_string(&file) {
            Ok(text) => text,
            Err(e) => {
                let _ = writeln!(err, "error: cannot read {}: {e}", file.display());
                code = 2;
                continue;
            }
        };
        let formatted = match crate::format(&text) {
            Ok(formatted) => formatted,
            Err(e) => {
                let _ = writeln!(err, "error: {}: {e}", file.display());
                code = code.max(1);
                continue;
            }
        };
        if formatted == text {
            continue;
        }
        if check {
            let _ = writeln!(out, "would reformat {}", file.display());
            code = code.max(1);
        } else if let Err(e) = std::fs::write(&file, formatted) {
            let _ = writeln!(err, "error: cannot write {}: {e}", file.display());
            code = 2;
        } else {
            let _ = writeln!(out, "formatted {}", file.display());
        }
    }
    code
}

/// `.sr` files under `path` (or `path` itself), sorted, skipping hidden directories.
fn collect(path: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    if !path.is_dir() {
        std::fs::metadata(path)?;
        out.push(path.to_path_buf());
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)?.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for entry in entries {
        let hidden = entry.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'));
        if entry.is_dir() {
            if !hidden {
                collect(&entry, out)?;
            }
        } else if entry.extension().is_some_and(|e| e == "sr") {
            out.push(entry);
        }
    }
    Ok(())
}
