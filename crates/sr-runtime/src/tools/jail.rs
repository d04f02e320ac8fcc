//! One directory that file access on a run's behalf stays inside: the file
//! tools a model drives, and what the runtime reads for it (eval scorers,
//! recorded and dataset files, cassettes). Every path is opened by the kernel
//! relative to a handle on the directory with `openat2(RESOLVE_BENEATH |
//! RESOLVE_NO_MAGICLINKS)`: a `..`, an absolute symlink or a symlink whose
//! target leaves the directory fails the open itself, so there is no window
//! between a check and the use of a path.
//!
//! What is decided after that is decided on where the opened handle is,
//! never on the text given: the path itself when it was opened crossing no
//! symlink and no `..` (`RESOLVE_NO_SYMLINKS`), else the real path the kernel
//! reports (`/proc/self/fd`):
//! - forbidden paths (the runtime's state, when it lies inside) are invisible:
//!   opening one is "no such file", listings leave them out;
//! - protected paths are read-only (`crate::protected`): the workload and
//!   every file it imports, the directories `sr run NAME` searches, and
//!   anything with a protected name (`.git`, `.vscode`, …) at any depth. Writing one,
//!   creating one, or creating anything inside one is refused, and so is
//!   writing a file with several hard links (another of its names could be
//!   protected);
//! - a read-only jail refuses every write.

use std::borrow::Cow;
use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags, openat2};
use rustix::io::Errno;

use super::ToolError;

/// A directory that paths stay inside (symlinks included), minus its
/// forbidden paths, with its protected paths read-only.
#[derive(Debug, Clone)]
pub struct Jail {
    root: PathBuf,
    dir: Arc<OwnedFd>,
    /// Canonical paths inside the root that are never opened or listed.
    forbidden: Vec<PathBuf>,
    /// Canonical paths of files inside the root that are never written, and
    /// whether they are the program's or given to the run to read.
    protected: Vec<(PathBuf, Rule)>,
    /// Canonical paths of directories inside the root where nothing is written.
    protected_dirs: Vec<PathBuf>,
    writable: bool,
}

/// What an opened path turned out to be.
pub enum Opened {
    File(File),
    Dir(OwnedFd),
}

/// One entry of a directory. A symlink is neither a directory nor a file: it
/// is listed, never followed.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Entry {
    pub name: String,
    pub is_dir: bool,
    pub is_file: bool,
}

/// Why a path cannot be written.
#[derive(Debug, Clone, PartialEq)]
enum Rule {
    Forbidden,
    Name(&'static str),
    Program,
    /// A file given to the run to read as it came (A2A's context file).
    Given,
    SearchDir(PathBuf),
    /// The real path is not under the root (the root moved while open).
    Outside,
}

const RESOLVE: ResolveFlags = ResolveFlags::BENEATH.union(ResolveFlags::NO_MAGICLINKS);

impl Jail {
    /// A jail whose files the tools may change (except the protected ones):
    /// the directories `sr run NAME` searches, from the root or from the
    /// process's current directory, are protected from the start.
    pub fn new(root: impl AsRef<Path>) -> io::Result<Jail> {
        let jail = Jail::open_root(root.as_ref(), true)?;
        let cwd = std::env::current_dir().unwrap_or_else(|_| jail.root.clone());
        Ok(crate::protected::search_dirs(&jail.root.clone(), &cwd).iter().fold(jail, |jail, dir| jail.protect_dir(dir)))
    }

    /// A jail that refuses every write: what the runtime reads on a run's
    /// behalf (scorers, dataset files, cassettes) is read through one.
    pub fn read_only(root: impl AsRef<Path>) -> io::Result<Jail> {
        Jail::open_root(root.as_ref(), false)
    }

    fn open_root(root: &Path, writable: bool) -> io::Result<Jail> {
        let root = root.canonicalize()?;
        let dir = rustix::fs::open(&root, OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())?;
        Ok(Jail {
            root,
            dir: Arc::new(dir),
            forbidden: Vec::new(),
            protected: Vec::new(),
            protected_dirs: Vec::new(),
            writable,
        })
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

    /// The jail with the file `path` read-only. Only a path inside the root
    /// needs this; a hard link to it inside the root is refused as every
    /// multiply linked file is. A symlink protects both itself and its target.
    pub fn protect(self, path: &Path) -> Jail {
        self.keep(path, Rule::Program)
    }

    /// The jail with the file `path` read-only (as [`Jail::protect`]) because
    /// it was given to the run to read as it came: tools may not forge it.
    pub fn protect_given(self, path: &Path) -> Jail {
        self.keep(path, Rule::Given)
    }

    fn keep(mut self, path: &Path, why: Rule) -> Jail {
        for path in [canonical_parent(path), canonical_prefix(path)] {
            if path.starts_with(&self.root) && !self.protected.iter().any(|(kept, _)| *kept == path) {
                self.protected.push((path, why.clone()));
            }
        }
        self
    }

    /// The jail with the directory `path` and everything under it read-only
    /// (also while it does not exist). Only a path inside the root needs this.
    /// A symlink protects both itself and its target.
    pub fn protect_dir(mut self, path: &Path) -> Jail {
        for path in [canonical_parent(path), canonical_prefix(path)] {
            if path.starts_with(&self.root) && path != self.root && !self.protected_dirs.contains(&path) {
                self.protected_dirs.push(path);
            }
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

    /// What a sandbox sharing the root must keep read-only: the protected
    /// files and directories, and the protected names that are directories at
    /// the root (which may not exist yet). The protected names deeper down,
    /// and those of files, are for the sandbox to keep by name
    /// ([`crate::protected::NAMES`]).
    pub fn protected(&self) -> Vec<PathBuf> {
        let names = crate::protected::NAMES.iter().filter(|n| n.dir).map(|n| self.root.join(n.name));
        self.protected.iter().map(|(path, _)| path).chain(&self.protected_dirs).cloned().chain(names).collect()
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
        Ok(relative)
    }

    /// Opens an existing regular file or directory for reading, without
    /// blocking (a FIFO or a device is refused, never waited on).
    pub fn open_read(&self, relative: &Path) -> io::Result<Opened> {
        self.open_readable(relative).map(|(opened, _)| opened)
    }

    fn open_readable(&self, relative: &Path) -> io::Result<(Opened, Option<PathBuf>)> {
        let Handle { fd, known } = self.open(relative, OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY)?;
        match FileType::from_raw_mode(rustix::fs::fstat(&fd)?.st_mode) {
            FileType::Directory => Ok((Opened::Dir(fd), known)),
            FileType::RegularFile => Ok((Opened::File(File::from(fd)), known)),
            _ => Err(not_regular(relative)),
        }
    }

    /// The bytes of a regular file, or an error naming `cap` if it is larger
    /// (also if it grows past it while being read).
    pub fn read(&self, relative: &Path, cap: u64) -> io::Result<Vec<u8>> {
        match self.open_read(relative)? {
            Opened::File(file) => read_capped(file, relative, cap),
            Opened::Dir(_) => Err(io::Error::other(format!("'{}' is a directory", relative.display()))),
        }
    }

    /// The entries of a directory, sorted by name, without `.`, `..` and the
    /// forbidden paths.
    pub fn entries(&self, relative: &Path) -> io::Result<Vec<Entry>> {
        let (Opened::Dir(fd), known) = self.open_readable(relative)? else {
            return Err(io::Error::other(format!("'{}' is not a directory", relative.display())));
        };
        let real = match known {
            _ if self.forbidden.is_empty() => None,
            Some(known) => Some(known),
            None => Some(real_path(fd.as_fd())?),
        };
        let mut out = Vec::new();
        for entry in rustix::fs::Dir::new(fd)? {
            let entry = entry?;
            let bytes = entry.file_name().to_bytes();
            if bytes == b"." || bytes == b".." {
                continue;
            }
            let name = String::from_utf8_lossy(bytes).into_owned();
            if let Some(real) = &real
                && self.is_forbidden(&real.join(OsStr::from_bytes(bytes)))
            {
                continue;
            }
            let kind = entry.file_type();
            out.push(Entry { name, is_dir: kind == FileType::Directory, is_file: kind == FileType::RegularFile });
        }
        out.sort();
        Ok(out)
    }

    /// Opens a regular file for writing, creating it (and its missing parent
    /// directories) if needed; `append` or truncated. A symlink that does not
    /// lead to an existing file inside the root is refused, also a dangling one.
    pub fn open_write(&self, relative: &Path, append: bool) -> io::Result<File> {
        self.check_writable(relative)?;
        let flags =
            OFlags::WRONLY | OFlags::NONBLOCK | OFlags::NOCTTY | if append { OFlags::APPEND } else { OFlags::empty() };
        let handle = match self.open(relative, flags) {
            Ok(handle) => handle,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let (parent, name) = split(relative)?;
                self.create_dir_all(parent)?;
                let parent = self.open(parent, OFlags::PATH | OFlags::DIRECTORY)?;
                self.check_new(&parent, name, relative)?;
                // O_EXCL does not follow a symlink in the last component: a
                // dangling one is EEXIST, never a file created at its target.
                let fd = openat2(
                    &parent.fd,
                    name,
                    flags | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC,
                    Mode::from(0o644),
                    RESOLVE,
                )
                .map_err(|e| match e {
                    Errno::EXIST => io::Error::new(
                        io::ErrorKind::PermissionDenied,
                        format!(
                            "'{}' is a symlink to a missing file; file tools do not create files through symlinks",
                            relative.display()
                        ),
                    ),
                    e => self.explain(relative, e),
                })?;
                Handle { fd, known: parent.known.map(|dir| dir.join(name)) }
            }
            Err(e) => return Err(e),
        };
        let stat = rustix::fs::fstat(&handle.fd)?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
            return Err(not_regular(relative));
        }
        if let Some(rule) = self.rule(&handle.real()?) {
            return Err(self.refusal(relative, rule));
        }
        if stat.st_nlink > 1 {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "'{}' has {} hard links: file tools do not write a file that has other names (one could be protected)",
                    relative.display(),
                    stat.st_nlink
                ),
            ));
        }
        let file = File::from(handle.fd);
        // Truncated only now: `O_TRUNC` would empty a protected file before
        // it is refused.
        if !append {
            file.set_len(0)?;
        }
        Ok(file)
    }

    /// Creates a directory and its missing parents, one component at a time,
    /// each beneath the root; a protected or forbidden one is refused, also
    /// when it exists.
    pub fn create_dir_all(&self, relative: &Path) -> io::Result<()> {
        self.check_writable(relative)?;
        let mut done = PathBuf::new();
        for component in relative.components() {
            let Component::Normal(name) = component else { continue };
            let parent = self.open(
                if done.as_os_str().is_empty() { Path::new(".") } else { &done },
                OFlags::PATH | OFlags::DIRECTORY,
            )?;
            done.push(name);
            self.check_new(&parent, name, &done)?;
            match rustix::fs::mkdirat(&parent.fd, name, Mode::from(0o755)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(self.explain(&done, e)),
            }
        }
        // A symlink to a protected directory "exists" without any mkdir.
        let made = self.open(relative, OFlags::PATH | OFlags::DIRECTORY)?;
        match self.rule(&made.real()?) {
            Some(rule) => Err(self.refusal(relative, rule)),
            None => Ok(()),
        }
    }

    /// Removes a file (a symlink itself, never its target); protected and
    /// forbidden paths are refused.
    pub fn remove_file(&self, relative: &Path) -> io::Result<()> {
        self.check_writable(relative)?;
        let (parent, name) = split(relative)?;
        let parent = self.open(parent, OFlags::PATH | OFlags::DIRECTORY)?;
        self.check_new(&parent, name, relative)?;
        rustix::fs::unlinkat(&parent.fd, name, AtFlags::empty()).map_err(|e| self.explain(relative, e))
    }

    /// Removes an empty directory (the journal undoing a directory a tool
    /// made); protected and forbidden paths are refused.
    pub fn remove_dir(&self, relative: &Path) -> io::Result<()> {
        self.check_writable(relative)?;
        let (parent, name) = split(relative)?;
        let parent = self.open(parent, OFlags::PATH | OFlags::DIRECTORY)?;
        self.check_new(&parent, name, relative)?;
        rustix::fs::unlinkat(&parent.fd, name, AtFlags::REMOVEDIR).map_err(|e| self.explain(relative, e))
    }

    /// What is at `relative` itself (a symlink is not followed); a forbidden
    /// path is not found.
    pub fn lstat(&self, relative: &Path) -> io::Result<rustix::fs::Stat> {
        let (parent, name) = split(relative)?;
        let parent = self.open(parent, OFlags::PATH | OFlags::DIRECTORY)?;
        if !self.forbidden.is_empty() && self.is_forbidden(&parent.real()?.join(name)) {
            return Err(io::Error::from(Errno::NOENT));
        }
        rustix::fs::statat(&parent.fd, name, AtFlags::SYMLINK_NOFOLLOW).map_err(|e| self.explain(relative, e))
    }

    /// The target text of the symlink at `relative`, never followed.
    pub fn read_link(&self, relative: &Path) -> io::Result<PathBuf> {
        let (parent, name) = split(relative)?;
        let parent = self.open(parent, OFlags::PATH | OFlags::DIRECTORY)?;
        let target = rustix::fs::readlinkat(&parent.fd, name, Vec::new()).map_err(|e| self.explain(relative, e))?;
        Ok(PathBuf::from(OsStr::from_bytes(target.as_bytes())))
    }

    /// Makes a symlink at `relative` (its missing parents too) with `target`
    /// as its text; a protected or forbidden path is refused. The target is
    /// not looked at: opening through the link later goes through the jail.
    pub fn symlink(&self, target: &Path, relative: &Path) -> io::Result<()> {
        self.check_writable(relative)?;
        let (parent, name) = split(relative)?;
        self.create_dir_all(parent)?;
        let parent = self.open(parent, OFlags::PATH | OFlags::DIRECTORY)?;
        self.check_new(&parent, name, relative)?;
        rustix::fs::symlinkat(target, &parent.fd, name).map_err(|e| self.explain(relative, e))
    }

    /// Sets the permission bits of the file or directory at `relative`; a
    /// symlink there is refused, never followed.
    pub fn set_mode(&self, relative: &Path, mode: u32) -> io::Result<()> {
        self.check_writable(relative)?;
        let (parent, name) = split(relative)?;
        let parent = self.open(parent, OFlags::PATH | OFlags::DIRECTORY)?;
        self.check_new(&parent, name, relative)?;
        let stat =
            rustix::fs::statat(&parent.fd, name, AtFlags::SYMLINK_NOFOLLOW).map_err(|e| self.explain(relative, e))?;
        if FileType::from_raw_mode(stat.st_mode) == FileType::Symlink {
            return Err(not_regular(relative));
        }
        rustix::fs::chmodat(&parent.fd, name, Mode::from_raw_mode(mode & 0o7777), AtFlags::empty())
            .map_err(|e| self.explain(relative, e))
    }

    /// `openat2` beneath the root; a forbidden path is not found. A path
    /// without `..` is first opened crossing no symlink (`RESOLVE_NO_SYMLINKS`):
    /// then it is where the path says, and its real path needs no
    /// `/proc/self/fd` lookup (which costs more than the open). When a symlink
    /// is on the way (`ELOOP`) it is opened again following it.
    fn open(&self, relative: &Path, flags: OFlags) -> io::Result<Handle> {
        let flags = flags | OFlags::CLOEXEC;
        let plain = relative.components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
        let direct = plain
            .then(|| openat2(self.dir.as_fd(), relative, flags, Mode::empty(), RESOLVE | ResolveFlags::NO_SYMLINKS));
        let handle = match direct {
            Some(Ok(fd)) => Handle { fd, known: Some(self.root.join(relative)) },
            Some(Err(Errno::LOOP)) | None => {
                let fd = openat2(self.dir.as_fd(), relative, flags, Mode::empty(), RESOLVE)
                    .map_err(|e| self.explain(relative, e))?;
                Handle { fd, known: None }
            }
            Some(Err(e)) => return Err(self.explain(relative, e)),
        };
        if !self.forbidden.is_empty() && self.is_forbidden(&handle.real()?) {
            return Err(io::Error::from(Errno::NOENT));
        }
        Ok(handle)
    }

    fn check_writable(&self, relative: &Path) -> io::Result<()> {
        if self.writable {
            return Ok(());
        }
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("'{}': {} is read-only here", relative.display(), self.root.display()),
        ))
    }

    /// Refuses `name` in the opened directory `parent` if it is (or would be)
    /// protected or forbidden.
    fn check_new(&self, parent: &Handle, name: &OsStr, relative: &Path) -> io::Result<()> {
        match self.rule(&parent.real()?.join(name)) {
            Some(rule) => Err(self.refusal(relative, rule)),
            None => Ok(()),
        }
    }

    fn is_forbidden(&self, real: &Path) -> bool {
        self.forbidden.iter().any(|f| real.starts_with(f))
    }

    /// Why the real path `real` cannot be written, if it cannot.
    fn rule(&self, real: &Path) -> Option<Rule> {
        if self.is_forbidden(real) {
            return Some(Rule::Forbidden);
        }
        if let Some((_, why)) = self.protected.iter().find(|(path, _)| path == real) {
            return Some(why.clone());
        }
        let Ok(inside) = real.strip_prefix(&self.root) else { return Some(Rule::Outside) };
        if let Some(dir) = self.protected_dirs.iter().find(|dir| starts_with_ignoring_case(real, dir)) {
            return Some(Rule::SearchDir(dir.strip_prefix(&self.root).unwrap_or(dir).to_path_buf()));
        }
        inside.components().find_map(|c| crate::protected::name(c.as_os_str().to_str()?).map(|n| Rule::Name(n.name)))
    }

    fn refusal(&self, relative: &Path, rule: Rule) -> io::Error {
        let shown = relative.display();
        let message = match rule {
            Rule::Name(name) => format!("'{shown}': `{name}` is protected: tools cannot change it"),
            Rule::SearchDir(dir) => format!(
                "'{shown}': `{}/` is where `sr run` finds workloads by name: tools cannot change it",
                dir.display()
            ),
            Rule::Program => {
                format!("'{shown}' is the workload or a file it imports: tools cannot change it")
            }
            Rule::Given => format!("'{shown}' was given to the run to read as it came: tools cannot change it"),
            Rule::Forbidden => format!("'{shown}' is reserved for the runtime's state: tools cannot write it"),
            Rule::Outside => format!("path '{shown}' leads outside the work directory {}", self.root.display()),
        };
        io::Error::new(io::ErrorKind::PermissionDenied, message)
    }

    fn explain(&self, relative: &Path, errno: Errno) -> io::Error {
        match errno {
            Errno::XDEV => io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("path '{}' leads outside the work directory {}", relative.display(), self.root.display()),
            ),
            Errno::NOSYS => {
                io::Error::other("file tools need Linux 5.6 or later (openat2) to keep paths inside the work directory")
            }
            e => io::Error::from(e),
        }
    }
}

/// An opened path, and where it is when the open crossed no symlink.
struct Handle {
    fd: OwnedFd,
    known: Option<PathBuf>,
}

impl Handle {
    /// Where the handle is: known, else as the kernel reports it.
    fn real(&self) -> io::Result<Cow<'_, Path>> {
        match &self.known {
            Some(known) => Ok(Cow::Borrowed(known)),
            None => real_path(self.fd.as_fd()).map(Cow::Owned),
        }
    }
}

/// Where the opened `fd` is now, as the kernel resolves it.
fn real_path(fd: BorrowedFd<'_>) -> io::Result<PathBuf> {
    std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))
}

/// The bytes of an opened file, or an error naming `cap` if it is larger
/// (also if it grows past it while being read).
pub(super) fn read_capped(file: File, relative: &Path, cap: u64) -> io::Result<Vec<u8>> {
    let too_large = || io::Error::other(format!("'{}' is larger than {}", relative.display(), size(cap)));
    if file.metadata()?.len() > cap {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    file.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(too_large());
    }
    Ok(bytes)
}

fn not_regular(relative: &Path) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, format!("'{}' is not a regular file or directory", relative.display()))
}

/// A size for messages: whole MiB or KiB when it is one, else bytes.
fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

/// Whether `path` is `dir` or under it, components compared ignoring ASCII
/// case (a case-insensitive file system has one `agents` for `Agents`).
fn starts_with_ignoring_case(path: &Path, dir: &Path) -> bool {
    let mut path = path.components();
    dir.components().all(|d| {
        path.next()
            .is_some_and(|p| p.as_os_str().as_encoded_bytes().eq_ignore_ascii_case(d.as_os_str().as_encoded_bytes()))
    })
}

fn split(relative: &Path) -> io::Result<(&Path, &OsStr)> {
    match (relative.parent(), relative.file_name()) {
        (Some(parent), Some(name)) => Ok((if parent.as_os_str().is_empty() { Path::new(".") } else { parent }, name)),
        _ => Err(io::Error::new(io::ErrorKind::InvalidInput, format!("'{}' is not a file name", relative.display()))),
    }
}

/// `path` with its parent canonicalized: where the name itself is (a symlink,
/// not what it leads to).
fn canonical_parent(path: &Path) -> PathBuf {
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => canonical_prefix(parent).join(name),
        _ => canonical_prefix(path),
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
mod tests;
