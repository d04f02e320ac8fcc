//! Protected names at any depth for a sandboxed command, which shares the work
//! directory read-write. bubblewrap can bind read-only only what exists when
//! the sandbox starts, and a command can make `sub/.git` (with an executable
//! hook) anywhere. So before the command every entry with a protected name is
//! found and bound read-only, and after it — when nothing of the command runs
//! any more — every such entry that was not there before is removed and the
//! call fails. What the command made stays on the host only while the
//! command runs.

use std::collections::BTreeMap;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sr_sandbox::command::Placement;

/// The entries with a protected name under a root, as found before a command.
pub struct Names {
    root: PathBuf,
    /// Paths the walk does not enter: covered by the sandbox, so nothing can
    /// be made in them.
    skip: Vec<PathBuf>,
    /// Each entry's identity: a symlink the command replaced (bound is only
    /// what it leads to) is another entry under the same name.
    before: BTreeMap<PathBuf, Identity>,
    /// The covered paths that are symlinks: the sandbox binds what they lead
    /// to, so the link itself could be replaced.
    links: Vec<(PathBuf, Identity)>,
}

/// An entry's device, inode and, for a symlink, target: a freed inode is soon
/// given to the next new file, so the number alone does not tell them apart.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Identity {
    device: u64,
    inode: u64,
    target: Option<PathBuf>,
}

impl Identity {
    fn of(path: &Path, meta: &std::fs::Metadata) -> io::Result<Identity> {
        let target = if meta.is_symlink() { Some(std::fs::read_link(path)?) } else { None };
        Ok(Identity { device: meta.dev(), inode: meta.ino(), target })
    }
}

impl Names {
    /// Finds every entry with a protected name under `root` (canonical),
    /// without following symlinks or entering `skip` or a protected entry;
    /// the paths in `skip` themselves are not counted (the sandbox covers
    /// them, with a placeholder while a missing one's command runs).
    pub fn scan(root: &Path, skip: &[PathBuf]) -> io::Result<Names> {
        let links = skip
            .iter()
            .filter_map(|path| {
                let meta = path.symlink_metadata().ok().filter(|meta| meta.is_symlink())?;
                Some((path.clone(), Identity::of(path, &meta).ok()?))
            })
            .collect();
        let mut names = Names { root: root.to_path_buf(), skip: skip.to_vec(), before: BTreeMap::new(), links };
        names.before = names.walk(Ok)?;
        Ok(names)
    }

    /// The entries found before the command: the sandbox binds them read-only.
    pub fn existing(&self) -> impl Iterator<Item = &PathBuf> {
        self.before.keys()
    }

    /// Removes every entry with a protected name that the command made, and
    /// puts back a covered symlink it replaced; says which (relative to the
    /// root); an error if one could not be removed.
    pub fn remove_new(&self) -> io::Result<Vec<PathBuf>> {
        let mut replaced = Vec::new();
        for (path, id) in &self.links {
            let now = gone_is_none(path.symlink_metadata())?;
            if let Some(meta) = &now
                && Identity::of(path, meta)? == *id
            {
                continue;
            }
            if now.is_some() {
                remove_tree(path)?;
            }
            if let Some(target) = &id.target {
                std::os::unix::fs::symlink(target, path)?;
            }
            replaced.push(path.clone());
        }
        let made = self.walk(|found| {
            let made: Vec<PathBuf> = found
                .into_iter()
                .filter(|(path, id)| self.before.get(path) != Some(id))
                .map(|(path, _)| path)
                .collect();
            for path in &made {
                remove_tree(path).map_err(|error| {
                    io::Error::other(format!(
                        "{} (a protected name the command made) could not be removed: {error}; remove it \
                         yourself before git or an editor reads it",
                        path.display()
                    ))
                })?;
            }
            Ok(made)
        })?;
        Ok(replaced
            .iter()
            .chain(&made)
            .map(|path| path.strip_prefix(&self.root).unwrap_or(path).to_path_buf())
            .collect())
    }

    /// The entries with a protected name. A directory its owner cannot list
    /// or enter (the command may have made it so) is opened up for the walk
    /// and given its mode back after it; one sr cannot change is not entered
    /// (sr runs with the command's rights or more, so the command could not
    /// list it either). `then` is given what was found before the modes are
    /// given back.
    fn walk<T>(&self, then: impl FnOnce(BTreeMap<PathBuf, Identity>) -> io::Result<T>) -> io::Result<T> {
        let mut found = BTreeMap::new();
        let mut opened: Vec<(PathBuf, u32)> = Vec::new();
        let mut dirs = vec![self.root.clone()];
        let walked = (|| {
            while let Some(dir) = dirs.pop() {
                // What another command removed meanwhile holds nothing any more.
                let Some(meta) = gone_is_none(std::fs::symlink_metadata(&dir))? else { continue };
                let mode = meta.permissions().mode();
                if mode & 0o500 != 0o500 {
                    if std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode | 0o500)).is_err() {
                        continue;
                    }
                    opened.push((dir.clone(), mode));
                }
                let Some(entries) = gone_is_none(std::fs::read_dir(&dir))? else { continue };
                for entry in entries {
                    let entry = entry?;
                    let path = entry.path();
                    if self.skip.contains(&path) {
                        continue;
                    }
                    if entry.file_name().to_str().and_then(crate::protected::name).is_some() {
                        let Some(meta) = gone_is_none(entry.metadata())? else { continue };
                        let Some(id) = gone_is_none(Identity::of(&path, &meta))? else { continue };
                        found.insert(path, id);
                    } else if entry.file_type()?.is_dir() && !self.skip.iter().any(|skip| path.starts_with(skip)) {
                        dirs.push(path);
                    }
                }
            }
            Ok(())
        })();
        let walked = walked.and_then(|()| then(found));
        for (dir, mode) in opened.into_iter().rev() {
            let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode));
        }
        walked
    }
}

/// `None` for what does not exist (any more).
fn gone_is_none<T>(result: io::Result<T>) -> io::Result<Option<T>> {
    match result {
        Ok(value) => Ok(Some(value)),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error),
    }
}

/// Removes `path` and everything under it, without following symlinks; a
/// directory the command made unreadable is made readable first.
fn remove_tree(path: &Path) -> io::Result<()> {
    let meta = path.symlink_metadata()?;
    if !meta.is_dir() {
        return std::fs::remove_file(path);
    }
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))?;
    for entry in std::fs::read_dir(path)? {
        remove_tree(&entry?.path())?;
    }
    std::fs::remove_dir(path)
}

/// Before a sandboxed command: the protected names under its work directory,
/// which are added to what it binds read-only. `None` for a command on the host.
pub(super) async fn before(placement: &mut Placement) -> io::Result<Option<Arc<Names>>> {
    let Placement::Sandbox { work_dir, read_only, hidden, .. } = placement else { return Ok(None) };
    let (root, skip) = (work_dir.clone(), read_only.iter().chain(hidden.iter()).cloned().collect::<Vec<_>>());
    let names = tokio::task::spawn_blocking(move || Names::scan(&root, &skip)).await.map_err(io::Error::other)??;
    read_only.extend(names.existing().cloned());
    Ok(Some(Arc::new(names)))
}

/// After a sandboxed command: what it made with a protected name, removed.
pub(super) async fn after(names: Option<Arc<Names>>) -> io::Result<Vec<PathBuf>> {
    let Some(names) = names else { return Ok(Vec::new()) };
    tokio::task::spawn_blocking(move || names.remove_new()).await.map_err(io::Error::other)?
}
