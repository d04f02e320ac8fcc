//! The files a run wrote, as an artifact `files` of file parts: every
//! regular file of its work directory (symbolic links are not followed)
//! but the ones a message brought that the run left as they came, within
//! bounds that keep a task's JSON small.

use std::path::Path;

use super::inbound::sha256;
use super::record::Delivered;

/// The largest file an artifact carries; a larger one is left out (the log says so).
pub const MAX_FILE_BYTES: u64 = 1 << 20;
/// The bytes of all the files together, and how many files, at most.
pub const MAX_TOTAL_BYTES: u64 = 4 << 20;
pub const MAX_FILES: usize = 32;
/// Directory entries looked at, at most: a run that wrote a huge tree costs
/// each task read this much, not the whole tree.
pub const MAX_ENTRIES: usize = 10_000;

/// A file the run wrote.
#[derive(Debug, PartialEq)]
pub struct Written {
    /// Relative to the work directory, `/`-separated.
    pub path: String,
    pub media_type: &'static str,
    pub bytes: Vec<u8>,
}

/// The files under `work` the run wrote, in path order, within the bounds.
pub fn written(work: &Path, delivered: &[Delivered]) -> Vec<Written> {
    let mut paths = Vec::new();
    walk(work, "", &mut paths, &mut { MAX_ENTRIES });
    paths.sort();
    let mut files = Vec::new();
    let mut total = 0;
    for (path, size) in paths {
        if files.len() == MAX_FILES || size > MAX_FILE_BYTES || total + size > MAX_TOTAL_BYTES {
            tracing::info!(%path, size, "a file the run wrote is over an artifact's bounds; left out");
            continue;
        }
        let Ok(bytes) = std::fs::read(work.join(&path)) else { continue };
        if delivered.iter().any(|d| d.path == path && d.sha256 == sha256(&bytes)) {
            continue;
        }
        total += size;
        files.push(Written { media_type: media_type(&path), path, bytes });
    }
    files
}

/// Regular files under `dir`, with their sizes, named relative to the work
/// directory; `budget` is the entries still to look at.
fn walk(dir: &Path, prefix: &str, into: &mut Vec<(String, u64)>, budget: &mut usize) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        if *budget == 0 {
            tracing::info!(dir = %dir.display(), "a run's work directory has over {MAX_ENTRIES} entries; the rest are left out");
            return;
        }
        *budget -= 1;
        let Ok(kind) = entry.file_type() else { continue };
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = if prefix.is_empty() { name } else { format!("{prefix}/{name}") };
        if kind.is_dir() {
            walk(&entry.path(), &path, into, budget);
        } else if kind.is_file() {
            into.push((path, entry.metadata().map_or(0, |m| m.len())));
        }
    }
}

/// The media type a file's extension names (`application/octet-stream` when it names none known).
fn media_type(path: &str) -> &'static str {
    let extension = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    match extension.as_str() {
        "txt" | "log" => "text/plain",
        "md" => "text/markdown",
        "json" => "application/json",
        "csv" => "text/csv",
        "html" => "text/html",
        "py" => "text/x-python",
        "yaml" | "yml" => "application/yaml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "pdf" => "application/pdf",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_files_are_listed_but_unchanged_deliveries_links_and_huge_files_are_not() {
        let work = std::env::temp_dir().join(format!("sr-serve-a2a-files-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(work.join("inbox")).unwrap();
        std::fs::create_dir_all(work.join("out")).unwrap();
        std::fs::write(work.join("inbox/kept.txt"), "as sent").unwrap();
        std::fs::write(work.join("inbox/edited.txt"), "changed by the run").unwrap();
        std::fs::write(work.join("out/report.md"), "# Report").unwrap();
        std::fs::write(work.join("huge.bin"), vec![0u8; MAX_FILE_BYTES as usize + 1]).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", work.join("link")).unwrap();
        let delivered = [
            Delivered { path: "inbox/kept.txt".into(), sha256: sha256(b"as sent") },
            Delivered { path: "inbox/edited.txt".into(), sha256: sha256(b"as sent") },
        ];
        let files = written(&work, &delivered);
        let listed: Vec<(&str, &str)> = files.iter().map(|f| (f.path.as_str(), f.media_type)).collect();
        assert_eq!(listed, [("inbox/edited.txt", "text/plain"), ("out/report.md", "text/markdown")]);
        assert_eq!(files[1].bytes, b"# Report");
        let _ = std::fs::remove_dir_all(&work);
    }

    #[test]
    fn a_huge_tree_is_looked_at_only_up_to_the_entry_budget() {
        let work = std::env::temp_dir().join(format!("sr-serve-a2a-tree-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&work).unwrap();
        for n in 0..MAX_ENTRIES + 50 {
            std::fs::write(work.join(format!("f{n:05}")), "").unwrap();
        }
        let mut paths = Vec::new();
        walk(&work, "", &mut paths, &mut { MAX_ENTRIES });
        assert_eq!(paths.len(), MAX_ENTRIES);
        assert_eq!(written(&work, &[]).len(), MAX_FILES);
        let _ = std::fs::remove_dir_all(&work);
    }
}
