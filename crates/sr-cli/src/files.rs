//! Finding and reading `.sr` files.

use std::path::{Path, PathBuf};

/// Reads a source file; the error text follows upstream's wording.
pub fn read(path: &Path) -> Result<String, String> {
    if !path.exists() {
        return Err(format!("file not found: {}", path.display()));
    }
    if !path.is_file() {
        return Err(format!("not a file: {}", path.display()));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read file: {e}"))?;
    String::from_utf8(bytes).map_err(|_| format!("cannot read file: {} is not valid UTF-8", path.display()))
}

/// Every `*.sr` file under `dir`, sorted, skipping hidden directories.
pub fn sr_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let hidden = path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with('.'));
            if path.is_dir() {
                if !hidden && !matches!(path.file_name().and_then(|n| n.to_str()), Some("target" | "node_modules")) {
                    stack.push(path);
                }
            } else if path.extension().is_some_and(|e| e == "sr") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}
