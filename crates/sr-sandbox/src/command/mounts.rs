//! What the command sandbox mounts over the work directory, which is bound
//! read-write at `/work`: read-only paths bound read-only, hidden paths covered,
//! and every directory between the work directory and either bound onto itself,
//! so that the command can neither rename nor remove them (the kernel refuses to
//! move or delete a mount point). A path that does not exist gets a placeholder
//! on the host while the command runs (an empty directory, or an empty file for
//! a hidden path), mounted over like an existing one, so that the command cannot
//! create it; the last command using a placeholder removes it when it ends, if it
//! is still the empty thing we made (`placeholder`: one a crash left behind is
//! removed later).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};

use super::WORK_DIR;
use super::placeholder::{self, Placeholder};

/// What is mounted at one path, weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Cover {
    /// A directory on the way to a covered path: bound onto itself, read-write.
    Pin,
    ReadOnly,
    Hidden,
}

/// The bubblewrap arguments, and the placeholders they need while the command runs.
pub(super) struct Mounts {
    pub args: Vec<OsString>,
    _placeholders: Vec<Placeholder>,
}

/// The mounts for `read_only` and `hidden` paths (absolute, or relative to `root`,
/// the canonical work directory); paths outside it need none.
pub(super) fn plan(root: &Path, read_only: &[PathBuf], hidden: &[PathBuf]) -> io::Result<Mounts> {
    let covers = covers(root, read_only, hidden);
    let mut mounts = Mounts { args: Vec::new(), _placeholders: Vec::new() };
    // Covered paths mounted so far; the map's order puts a parent before its children.
    let mut covered: Vec<(&Path, Cover)> = Vec::new();
    for (relative, &cover) in &covers {
        let above = covered.iter().filter(|(path, _)| relative.starts_with(path)).map(|(_, c)| *c).max();
        let host = root.join(relative);
        match above {
            // Nothing beneath a hidden path is visible, nothing beneath a read-only
            // one can change, and what does not exist there cannot be made.
            Some(Cover::Hidden) => continue,
            Some(Cover::ReadOnly) if cover != Cover::Hidden || host.symlink_metadata().is_err() => continue,
            _ => {}
        }
        // A missing directory on the way is covered as what it leads to.
        let strongest = covers.range(relative.clone()..).take_while(|(path, _)| path.starts_with(relative));
        let effective = strongest.map(|(_, c)| *c).max().unwrap_or(cover);
        let placeholder = match Placeholder::claim(&host, cover != Cover::Hidden) {
            Ok(placeholder) => placeholder,
            // What sr cannot create there, the command cannot either: it runs with
            // sr's rights or fewer, and its view of the directory is no more writable.
            Err(error) if uncreatable(&error) => {
                covered.push((relative, Cover::Hidden));
                continue;
            }
            Err(error) => return Err(error),
        };
        let meta = host.symlink_metadata()?;
        if meta.is_symlink() {
            return Err(io::Error::other(format!("{} turned into a symbolic link", host.display())));
        }
        // A path that exists is covered as itself; a placeholder as what it stands for.
        let cover = if placeholder.is_some() { effective } else { cover };
        mounts._placeholders.extend(placeholder);
        let inside = Path::new(WORK_DIR).join(relative).into_os_string();
        let args: Vec<OsString> = match cover {
            Cover::Pin => vec!["--bind".into(), host.into_os_string(), inside],
            Cover::ReadOnly => vec!["--ro-bind".into(), host.into_os_string(), inside],
            Cover::Hidden if meta.is_dir() => {
                vec!["--size".into(), "4096".into(), "--tmpfs".into(), inside.clone(), "--remount-ro".into(), inside]
            }
            // Unreadable: bubblewrap mounts devices `nodev`.
            Cover::Hidden => vec!["--ro-bind".into(), "/dev/null".into(), inside],
        };
        mounts.args.extend(args);
        if cover != Cover::Pin {
            covered.push((relative, cover));
        }
    }
    Ok(mounts)
}

/// Removes the placeholders for `read_only` and `hidden` paths (as for
/// [`plan`]) that a process killed while its command ran left behind.
pub(super) fn remove_left_behind(root: &Path, read_only: &[PathBuf], hidden: &[PathBuf]) {
    // Children first: a placeholder directory may hold another.
    for relative in covers(root, read_only, hidden).keys().rev() {
        placeholder::remove_left_behind(&root.join(relative));
    }
}

/// Every path the mounts cover, relative to `root`, with the directories on
/// the way to one pinned.
fn covers(root: &Path, read_only: &[PathBuf], hidden: &[PathBuf]) -> BTreeMap<PathBuf, Cover> {
    let mut covers = BTreeMap::new();
    for (paths, cover) in [(hidden, Cover::Hidden), (read_only, Cover::ReadOnly)] {
        for relative in paths.iter().filter_map(|path| inside(root, path)) {
            for ancestor in relative.ancestors().skip(1).filter(|a| !a.as_os_str().is_empty()) {
                covers.entry(ancestor.to_path_buf()).or_insert(Cover::Pin);
            }
            let entry = covers.entry(relative).or_insert(cover);
            *entry = (*entry).max(cover);
        }
    }
    covers
}

/// The error of a directory sr may not write to.
fn uncreatable(error: &io::Error) -> bool {
    use rustix::io::Errno;
    Errno::from_io_error(error).is_some_and(|errno| [Errno::ACCESS, Errno::PERM, Errno::ROFS].contains(&errno))
}

/// `path` (absolute, or relative to `root`) relative to `root`, with the symlinks
/// of the part that exists resolved; `None` outside `root` or for `root` itself.
fn inside(root: &Path, path: &Path) -> Option<PathBuf> {
    let mut lexical = PathBuf::new();
    for component in root.join(path).components() {
        match component {
            Component::ParentDir => {
                lexical.pop();
            }
            Component::CurDir => {}
            other => lexical.push(other),
        }
    }
    let mut missing = Vec::new();
    let mut existing = lexical.as_path();
    let real = loop {
        match existing.canonicalize() {
            Ok(real) => break real,
            Err(_) => {
                missing.push(existing.file_name()?);
                existing = existing.parent()?;
            }
        }
    };
    let full = missing.iter().rev().fold(real, |path, name| path.join(name));
    let relative = full.strip_prefix(root).ok()?;
    (!relative.as_os_str().is_empty()).then(|| relative.to_path_buf())
}
