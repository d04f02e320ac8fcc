//! A work directory as the travel endpoint shows it: every file's path and
//! size, and the text of small UTF-8 files, all bounded. Symbolic links are
//! listed, never followed.

use std::path::Path;

use sr_api::travel::{FileEntry as Entry, FileKind, WorkFiles as Files};

/// Entries listed at most; the rest are counted in `omitted`.
pub const MAX_ENTRIES: usize = 500;
/// A file's text is shown up to this many bytes.
pub const MAX_TEXT: usize = 64 * 1024;
/// The texts shown add up to at most this many bytes.
pub const MAX_TOTAL_TEXT: usize = 1 << 20;
/// Directories deeper than this are not entered.
const MAX_DEPTH: usize = 32;

/// Everything under `root`, sorted by path.
pub fn list(root: &Path) -> Files {
    let mut files = Files::default();
    let mut budget = MAX_TOTAL_TEXT;
    walk(root, root, 0, &mut files, &mut budget);
    files
}

fn walk(root: &Path, dir: &Path, depth: usize, files: &mut Files, budget: &mut usize) {
    let Ok(read) = std::fs::read_dir(dir) else { return };
    let mut children: Vec<_> = read.filter_map(Result::ok).map(|e| e.path()).collect();
    children.sort();
    for path in children {
        let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
        if files.entries.len() >= MAX_ENTRIES {
            files.omitted += 1;
            continue;
        }
        let relative = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
        let kind = if meta.file_type().is_symlink() {
            FileKind::Symlink
        } else if meta.is_dir() {
            FileKind::Dir
        } else {
            FileKind::File
        };
        let (text, truncated) = if kind == FileKind::File { text_of(&path, meta.len(), budget) } else { (None, false) };
        files.entries.push(Entry { path: relative, kind, size: meta.len(), text, truncated });
        if kind == FileKind::Dir && depth < MAX_DEPTH {
            walk(root, &path, depth + 1, files, budget);
        }
    }
}

fn text_of(path: &Path, size: u64, budget: &mut usize) -> (Option<String>, bool) {
    use std::io::Read;
    let want = MAX_TEXT.min(*budget);
    if want == 0 {
        return (None, false);
    }
    let Ok(file) = std::fs::File::open(path) else { return (None, false) };
    let mut bytes = Vec::new();
    if file.take(want as u64).read_to_end(&mut bytes).is_err() {
        return (None, false);
    }
    let truncated = (bytes.len() as u64) < size;
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        // Cut inside a character: keep the whole ones.
        Err(e) if truncated && e.utf8_error().error_len().is_none() => {
            let valid = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).unwrap_or_default()
        }
        Err(_) => return (None, false),
    };
    *budget -= text.len();
    (Some(text), truncated)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_bounded_and_links_are_not_followed() {
        let dir = std::env::temp_dir().join(format!("sr-serve-files-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("a.txt"), "hello").unwrap();
        std::fs::write(dir.join("bin"), [0xff, 0xfe, 0]).unwrap();
        // A multi-byte character straddles the cut.
        let long = format!("{}é{}", "x".repeat(MAX_TEXT - 1), "y".repeat(10));
        std::fs::write(dir.join("sub/long.txt"), &long).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", dir.join("link")).unwrap();
        let files = list(&dir);
        let shown: Vec<_> =
            files.entries.iter().map(|e| (e.path.as_str(), e.kind, e.size, e.text.as_ref().map(String::len))).collect();
        assert_eq!(
            shown,
            [
                ("a.txt", FileKind::File, 5, Some(5)),
                ("bin", FileKind::File, 3, None),
                ("link", FileKind::Symlink, 11, None),
                ("sub", FileKind::Dir, files.entries[3].size, None),
                ("sub/long.txt", FileKind::File, long.len() as u64, Some(MAX_TEXT - 1)),
            ]
        );
        assert!(files.entries[4].truncated);
        for i in 0..MAX_ENTRIES + 3 {
            std::fs::write(dir.join(format!("many-{i:04}")), "").unwrap();
        }
        let files = list(&dir);
        assert_eq!((files.entries.len(), files.omitted), (MAX_ENTRIES, 7));
        let text: usize = files.entries.iter().filter_map(|e| e.text.as_ref()).map(String::len).sum();
        assert!(text <= MAX_TOTAL_TEXT);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
