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
        match collect(root, &mut files, err) {
            Ok(()) => {}
            Err(e) => {
                let _ = writeln!(err, "error: cannot read {}: {e}", root.display());
                code = 2;
            }
        }
    }
    for file in files {
        let text = match sr_files::read_source(&file) {
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

/// `.sr` files under `path` (or `path` itself), by the workspace rules
/// every scan shares (sr-files).
fn collect(path: &Path, out: &mut Vec<PathBuf>, err: &mut dyn Write) -> Result<(), sr_files::ReadError> {
    if !path.is_dir() {
        std::fs::metadata(path)?;
        out.push(path.to_path_buf());
        return Ok(());
    }
    let scan = sr_files::sr_files(path);
    for problem in &scan.problems {
        let _ = writeln!(err, "warning: {problem}");
    }
    out.extend(scan.files);
    Ok(())
}
