//! Finding and reading `.sr` files (through sr-files, whose rules the
//! formatter and the language server share).

use std::path::{Path, PathBuf};

use sr_files::ReadError;

/// Reads a source file; the error text follows upstream's wording.
pub fn read(path: &Path) -> Result<String, String> {
    sr_files::read_source(path).map_err(|err| match err {
        ReadError::NotFound => format!("file not found: {}", path.display()),
        err => format!("cannot read {}: {err}", path.display()),
    })
}

/// Every `*.sr` file under `dir`, sorted; places the scan skipped are
/// reported on stderr.
pub fn sr_files(dir: &Path) -> Vec<PathBuf> {
    let scan = sr_files::sr_files(dir);
    for problem in &scan.problems {
        eprintln!("warning: {problem}");
    }
    scan.files
}
