//! Confines file tools to the work directory. Every path a model gives is
//! opened by the kernel relative to a handle on the work directory with
//! `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`: a `..`, an absolute
//! symlink or a symlink whose target leaves the directory fails the open
//! itself, so there is no window between a check and the use of a path.
//! Paths inside a forbidden directory (the runtime's own state, when it was
//! configured inside the work directory) are refused by the real path of the
//! opened file.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use rustix::fs::{FileType, Mode, OFlags, ResolveFlags, openat2};

use super::ToolError;

/// A directory that paths given by a model must stay inside (symlinks
/// included), minus the forbidden directories inside it.
#[derive(Debug, Clone)]
pub struct Jail {
    root: PathBuf,
    dir: Arc<OwnedFd>,
    /// Canonical paths file tools never open, inside the root.
    forbidden: Vec<PathBuf>,
}

/// What an opened path turned out to be.
pub enum Opened {
    File(File),
    Dir(OwnedFd),
}

const RESOLVE: ResolveFlags = ResolveFlags::BENEATH.union(ResolveFlags::NO_MAGICLINKS);

impl Jail {
    pub fn new(root: impl AsRef<Path>) -> io::Result<Jail> {
        let root = root.as_ref().canonicalize()?;
        let dir = rustix::fs::open(&root, OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())?;
        Ok(Jail { root, dir: Arc::new(dir), forbidden: Vec::new() })
    }

    /// The jail without `path` (a directory or a file) and everything under it.
    /// Only a path inside the root needs this: the rest is outside anyway.
    pub fn forbid(mut self, path: &Path) -> Jail {
        let path = canonical_prefix(path);
        if path.starts_with(&self.root) && !self.forbidden.contains(&path) {
            self.forbidden.push(path);
        }
        self
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The forbidden paths inside the root, canonical.
    pub fn forbidden(&self) -> &[PathBuf] {
        &self.forbidden
    }

    /// `path` (relative to the root, or absolute inside it) as a path relative
    /// to the root, `.` for the root itself. Only the text is looked at: the
    /// kernel checks symlinks when the path is opened.
    pub fn relative_path(&self, path: &str) -> Result<PathBuf, ToolError> {
        let refuse = || ToolError(format!("path '{path}' is outside the work directory {}", self.root.display()));
        let given = Path::new(path);
        let given = if given.is_absolute() { given.strip_prefix(&self.root).map_err(|_| refuse())? } else { given };
        let mut relative = PathBuf::new();
        for component in given.components() {
            match component {
                Component::ParentDir => {
                    if !relative.pop() {
                        return Err(refuse());
                    }
                }
                Component::Normal(name) => relative.push(name),
                Component::CurDir => {}
                Component::RootDir | Component::Prefix(_) => return Err(refuse()),
            }
        }
        if relative.as_os_str().is_empty() {
            relative.push(".");
        }
        if self.forbidden.iter().any(|f| self.root.join(&relative).starts_with(f)) {
            return Err(self.forbidden_error(&relative));
        }
        Ok(relative)
    }

    /// Opens an existing regular file or directory for reading, without
    /// blocking (a FIFO or a device is refused, never waited on).
    pub fn open_read(&self, relative: &Path) -> io::Result<Opened> {
        let fd = self.open(relative, OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY, Mode::empty())?;
        match rustix::fs::fstat(&fd)?.st_mode {
            mode if FileType::from_raw_mode(mode) == FileType::Directory => Ok(Opened::Dir(fd)),
            mode if FileType::from_raw_mode(mode) == FileType::RegularFile => Ok(Opened::File(File::from(fd))),
            _ => Err(not_regular(relative)),
        }
    }

    /// Opens a regular file for writing, creating it (and its missing parent
    /// directories) if needed; `append` or truncated. A symlink that does not
    /// lead to an existing file inside the root is refused, also a dangling one.
    pub fn open_write(&self, relative: &Path, append: bool) -> io::Result<File> {
        let flags =
            OFlags::WRONLY | OFlags::NONBLOCK | OFlags::NOCTTY | if append { OFlags::APPEND } else { OFlags::empty() };
        let fd = match self.open(relative, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let (parent, name) = split(relative)?;
                self.create_dir_all(parent)?;
                let parent = self.open(parent, OFlags::PATH | OFlags::DIRECTORY, Mode::empty())?;
                // O_EXCL does not follow a symlink in the last component: a
                // dangling one is EEXIST, never a file created at its target.
                openat2(
                    &parent,
                    name,
                    flags | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC,
                    Mode::from(0o644),
                    RESOLVE,
                )
                .map_err(|e| match e {
                    rustix::io::Errno::EXIST => io::Error::new(
                        io::ErrorKind::PermissionDenied,
                        format!(
                            "'{}' is a symlink to a missing file; file tools do not create files through symlinks",
                            relative.display()
                        ),
                    ),
                    e => self.explain(relative, e),
                })?
            }
            Err(e) => return Err(e),
        };
        if FileType::from_raw_mode(rustix::fs::fstat(&fd)?.st_mode) != FileType::RegularFile {
            return Err(not_regular(relative));
        }
        let file = File::from(fd);
        // Truncated only now: `O_TRUNC` would empty a forbidden file before
        // `open` refuses it.
        if !append {
            file.set_len(0)?;
        }
        Ok(file)
    }

    /// Creates a directory and its missing parents, one component at a time,
    /// each beneath the root.
    pub fn create_dir_all(&self, relative: &Path) -> io::Result<()> {
        let mut done = PathBuf::new();
        for component in relative.components() {
            let Component::Normal(name) = component else { continue };
            let parent = self.open(
                if done.as_os_str().is_empty() { Path::new(".") } else { &done },
                OFlags::PATH | OFlags::DIRECTORY,
                Mode::empty(),
            )?;
            done.push(name);
            match rustix::fs::mkdirat(&parent, name, Mode::from(0o755)) {
                Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                Err(e) => return Err(self.explain(&done, e)),
            }
        }
        self.open(relative, OFlags::PATH | OFlags::DIRECTORY, Mode::empty()).map(drop)
    }

    /// Removes a file, or an empty directory, beneath the root (a symlink
    /// named by the last component is removed, not followed).
    pub fn remove(&self, relative: &Path, dir: bool) -> io::Result<()> {
        let (parent, name) = split(relative)?;
        let parent = self.open(parent, OFlags::PATH | OFlags::DIRECTORY, Mode::empty())?;
        let flags = if dir { rustix::fs::AtFlags::REMOVEDIR } else { rustix::fs::AtFlags::empty() };
        rustix::fs::unlinkat(&parent, name, flags).map_err(|e| self.explain(relative, e))
    }

    /// `openat2` beneath the root, then the forbidden directories.
    fn open(&self, relative: &Path, flags: OFlags, mode: Mode) -> io::Result<OwnedFd> {
        let fd = openat2(self.dir.as_fd(), relative, flags | OFlags::CLOEXEC, mode, RESOLVE)
            .map_err(|e| self.explain(relative, e))?;
        if !self.forbidden.is_empty() {
            let real = std::fs::read_link(format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&fd)))?;
            if self.forbidden.iter().any(|f| real.starts_with(f)) {
                return Err(io::Error::new(io::ErrorKind::PermissionDenied, self.forbidden_error(relative).0));
            }
        }
        Ok(fd)
    }

    fn explain(&self, relative: &Path, errno: rustix::io::Errno) -> io::Error {
        match errno {
            rustix::io::Errno::XDEV => io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("path '{}' leads outside the work directory {}", relative.display(), self.root.display()),
            ),
            rustix::io::Errno::NOSYS => {
                io::Error::other("file tools need Linux 5.6 or later (openat2) to keep paths inside the work directory")
            }
            e => io::Error::from(e),
        }
    }

    fn forbidden_error(&self, relative: &Path) -> ToolError {
        ToolError(format!("path '{}' is the runtime's own state; file tools cannot reach it", relative.display()))
    }
}

fn not_regular(relative: &Path) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, format!("'{}' is not a regular file or directory", relative.display()))
}

fn split(relative: &Path) -> io::Result<(&Path, &std::ffi::OsStr)> {
    match (relative.parent(), relative.file_name()) {
        (Some(parent), Some(name)) => Ok((if parent.as_os_str().is_empty() { Path::new(".") } else { parent }, name)),
        _ => Err(io::Error::new(io::ErrorKind::InvalidInput, format!("'{}' is not a file name", relative.display()))),
    }
}

/// `path` with its deepest existing ancestor canonicalized.
fn canonical_prefix(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut existing = path.to_path_buf();
    loop {
        if let Ok(canonical) = existing.canonicalize() {
            let mut out = canonical;
            out.extend(rest.iter().rev());
            return out;
        }
        match (existing.file_name().map(ToOwned::to_owned), existing.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_outside_the_root_are_refused() {
        let dir = std::env::temp_dir().join(format!("sr-jail-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("inside")).unwrap();
        let jail = Jail::new(&dir).unwrap();
        assert_eq!(jail.relative_path("inside/new.txt").unwrap(), Path::new("inside/new.txt"));
        assert_eq!(jail.relative_path(&dir.canonicalize().unwrap().display().to_string()).unwrap(), Path::new("."));
        assert!(jail.relative_path("../escape").is_err());
        assert!(jail.relative_path("inside/../../escape").is_err());
        assert!(jail.relative_path("/etc/passwd").is_err());
        let link = dir.join("link");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink("/etc", &link).unwrap();
        let error = jail.open_read(Path::new("link/passwd")).err().unwrap();
        assert!(error.to_string().contains("outside the work directory"), "{error}");
    }
}
