//! The files the toolchain opens on its own: sources named on the command line,
//! imports, workspace scans, watched files.
//!
//! Every such read goes through [`read_source`], so that no caller can hang on a
//! FIFO, read a device without end, follow a symlink loop or load a file larger
//! than [`MAX_SOURCE_BYTES`]; every workspace scan goes through [`sr_files`], so
//! that `sr check`, `sr fmt` and the language server see the same files.

use std::fmt;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The largest source file the toolchain reads (16 MiB). Larger files are refused
/// with [`ReadError::TooLarge`] before any of their content is read.
pub const MAX_SOURCE_BYTES: u64 = 16 * 1024 * 1024;

/// Why a source file could not be read. `Display` gives the reason without the
/// path; callers say which file.
#[derive(Debug)]
pub enum ReadError {
    NotFound,
    /// A directory, FIFO, socket or device: only regular files are sources.
    NotAFile(&'static str),
    TooLarge {
        size: u64,
    },
    NotUtf8 {
        offset: usize,
    },
    SymlinkLoop,
    Io(std::io::Error),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::NotFound => f.write_str("file not found"),
            ReadError::NotAFile(kind) => write!(f, "{kind}, not a regular file"),
            ReadError::TooLarge { size } => write!(
                f,
                "file is {} bytes, over the limit of {} bytes ({} MiB) for source files",
                size,
                MAX_SOURCE_BYTES,
                MAX_SOURCE_BYTES / (1024 * 1024)
            ),
            ReadError::NotUtf8 { offset } => write!(f, "not valid UTF-8 (byte {offset})"),
            ReadError::SymlinkLoop => f.write_str("too many levels of symbolic links (a symlink loop)"),
            ReadError::Io(err) => write!(f, "{err}"),
        }
    }
}

impl std::error::Error for ReadError {}

impl From<std::io::Error> for ReadError {
    fn from(err: std::io::Error) -> Self {
        match err.raw_os_error() {
            Some(libc::ELOOP) => ReadError::SymlinkLoop,
            _ if err.kind() == std::io::ErrorKind::NotFound => ReadError::NotFound,
            _ => ReadError::Io(err),
        }
    }
}

/// Reads a source file as UTF-8 text.
///
/// The file is opened non-blocking, so that opening a FIFO with no writer
/// returns at once, and then inspected through the open descriptor: anything
/// but a regular file of at most [`MAX_SOURCE_BYTES`] is refused without
/// reading it. Symlinks to regular files are followed; a loop is an error.
pub fn read_source(path: &Path) -> Result<String, ReadError> {
    let mut file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY).open(path)?;
    let meta = file.metadata()?;
    let kind = meta.file_type();
    if !kind.is_file() {
        return Err(ReadError::NotAFile(describe(&kind)));
    }
    if meta.len() > MAX_SOURCE_BYTES {
        return Err(ReadError::TooLarge { size: meta.len() });
    }
    read_capped(&mut file)
}

/// Reads at most one byte more than the cap, so a file that grows while it is
/// read is still refused.
fn read_capped(file: &mut File) -> Result<String, ReadError> {
    let mut bytes = Vec::new();
    file.take(MAX_SOURCE_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_SOURCE_BYTES {
        return Err(ReadError::TooLarge { size: bytes.len() as u64 });
    }
    String::from_utf8(bytes).map_err(|err| ReadError::NotUtf8 { offset: err.utf8_error().valid_up_to() })
}

fn describe(kind: &std::fs::FileType) -> &'static str {
    if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO (named pipe)"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else {
        "a special file"
    }
}

/// What a workspace scan found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Scan {
    /// The `.sr` files, sorted.
    pub files: Vec<PathBuf>,
    /// Places the scan could not enter or skipped (a symlink loop, an
    /// unreadable directory), one line each with the path.
    pub problems: Vec<String>,
}

/// The `.sr` files under `root`, or `root` itself when it is not a directory.
///
/// The rules every scan shares: `.gitignore`, `.ignore` and `.git/info/exclude`
/// are honoured (also outside a git repository); hidden files and directories,
/// `target` and `node_modules` are skipped; symlinks are followed, and a symlink
/// that leads back to one of its ancestors is reported once and not entered;
/// only regular files count.
pub fn sr_files(root: &Path) -> Scan {
    let mut scan = Scan::default();
    if !root.is_dir() {
        scan.files.push(root.to_path_buf());
        return scan;
    }
    for entry in walker(root).build() {
        match entry {
            Ok(entry) => {
                let is_file = entry.file_type().is_some_and(|t| t.is_file());
                if is_file && entry.path().extension().is_some_and(|e| e == "sr") {
                    scan.files.push(entry.into_path());
                }
            }
            Err(err) => scan.problems.push(problem(&err)),
        }
    }
    scan.files.sort();
    scan
}

/// Whether a scan of `root` lists `path`: for a file a watcher reports, as
/// watchers know nothing of these rules. Reads each directory from `root`
/// down to `path` (one level each), so the same rules decide as in a scan.
pub fn scanned(root: &Path, path: &Path) -> bool {
    let Ok(relative) = path.strip_prefix(root) else { return false };
    if path.extension().is_none_or(|e| e != "sr") {
        return false;
    }
    let mut dir = root.to_path_buf();
    let mut components = relative.components().peekable();
    while let Some(component) = components.next() {
        let next = dir.join(component);
        let last = components.peek().is_none();
        let listed = walker(&dir).max_depth(Some(1)).build().flatten().any(|entry| {
            entry.depth() == 1
                && entry.path() == next
                && entry.file_type().is_some_and(|t| if last { t.is_file() } else { t.is_dir() })
        });
        if !listed {
            return false;
        }
        dir = next;
    }
    true
}

/// Directories every scan skips (besides hidden ones).
const SKIPPED_DIRS: [&str; 2] = ["target", "node_modules"];

fn walker(root: &Path) -> ignore::WalkBuilder {
    let mut walk = ignore::WalkBuilder::new(root);
    walk.follow_links(true)
        .hidden(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .require_git(false)
        .filter_entry(|entry| !entry.file_name().to_str().is_some_and(|name| SKIPPED_DIRS.contains(&name)));
    walk
}

fn problem(err: &ignore::Error) -> String {
    match err {
        ignore::Error::Loop { ancestor, child } => {
            format!("{}: symlink loop back to {}, not followed", child.display(), ancestor.display())
        }
        ignore::Error::WithPath { path, err } => format!("{}: {err}", path.display()),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => problem(err),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn dir() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    #[test]
    fn regular_files_are_read() {
        let d = dir();
        let path = d.path().join("a.sr");
        std::fs::write(&path, "model m = openai/gpt-4o\n").unwrap();
        assert_eq!(read_source(&path).unwrap(), "model m = openai/gpt-4o\n");
        let link = d.path().join("link.sr");
        symlink(&path, &link).unwrap();
        assert_eq!(read_source(&link).unwrap(), "model m = openai/gpt-4o\n");
    }

    #[test]
    fn special_files_are_refused_without_blocking() {
        let d = dir();
        let fifo = d.path().join("pipe.sr");
        let c_path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        // No writer ever opens the FIFO: a blocking open would hang this test.
        assert_eq!(read_source(&fifo).unwrap_err().to_string(), "a FIFO (named pipe), not a regular file");
        assert_eq!(read_source(Path::new("/dev/zero")).unwrap_err().to_string(), "a device, not a regular file");
        assert_eq!(read_source(d.path()).unwrap_err().to_string(), "a directory, not a regular file");
        assert!(matches!(read_source(&d.path().join("missing.sr")), Err(ReadError::NotFound)));
    }

    #[test]
    fn loops_too_large_and_binary_files_are_errors() {
        let d = dir();
        let a = d.path().join("a.sr");
        let b = d.path().join("b.sr");
        symlink(&a, &b).unwrap();
        symlink(&b, &a).unwrap();
        assert!(matches!(read_source(&a), Err(ReadError::SymlinkLoop)));

        let big = d.path().join("big.sr");
        let file = File::create(&big).unwrap();
        file.set_len(MAX_SOURCE_BYTES + 1).unwrap();
        let err = read_source(&big).unwrap_err();
        assert!(matches!(err, ReadError::TooLarge { size } if size == MAX_SOURCE_BYTES + 1), "{err}");

        let binary = d.path().join("bin.sr");
        std::fs::write(&binary, b"flow main:\n\xff\n").unwrap();
        assert_eq!(read_source(&binary).unwrap_err().to_string(), "not valid UTF-8 (byte 11)");
    }

    #[test]
    fn scans_follow_one_set_of_rules() {
        let d = dir();
        let root = d.path();
        for path in
            ["a.sr", "sub/b.sr", "sub/notes.txt", ".hidden/c.sr", "target/d.sr", "node_modules/e.sr", "skip/f.sr"]
        {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        std::fs::write(root.join(".gitignore"), "skip/\n").unwrap();
        // A loop: sub/back -> root.
        symlink(root, root.join("sub/back")).unwrap();
        // A FIFO named like a source is not a file.
        let fifo = std::ffi::CString::new(root.join("sub/pipe.sr").as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);

        let scan = sr_files(root);
        let relative: Vec<_> = scan.files.iter().map(|p| p.strip_prefix(root).unwrap().display().to_string()).collect();
        assert_eq!(relative, ["a.sr", "sub/b.sr"]);
        assert_eq!(scan.problems.len(), 1, "{:?}", scan.problems);
        assert!(scan.problems[0].contains("symlink loop"), "{:?}", scan.problems);

        // A file root is itself, whatever its name.
        assert_eq!(sr_files(&root.join("sub/notes.txt")).files, [root.join("sub/notes.txt")]);
    }

    /// A file a watcher reports counts as the scan would count it.
    #[test]
    fn a_single_path_is_judged_as_a_scan_judges_it() {
        let d = dir();
        let root = d.path();
        let paths = [
            "a.sr",
            "sub/b.sr",
            "sub/deep/c.sr",
            "sub/deep/generated.sr",
            "sub/notes.txt",
            ".hidden/c.sr",
            ".h.sr",
            "target/d.sr",
            "sub/node_modules/e.sr",
            "skip/f.sr",
            "skip/inner/g.sr",
        ];
        for path in paths {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        std::fs::write(root.join(".gitignore"), "skip/\n").unwrap();
        std::fs::write(root.join("sub/.gitignore"), "deep/generated.sr\n").unwrap();
        let scan = sr_files(root);
        for path in paths.iter().map(|p| root.join(p)).chain([root.join("missing.sr"), root.join("sub")]) {
            assert_eq!(scanned(root, &path), scan.files.contains(&path), "{}", path.display());
        }
        assert_eq!(scan.files.len(), 3, "{:?}", scan.files);
        assert!(!scanned(&root.join("sub"), &root.join("a.sr")), "outside the root");
    }
}
