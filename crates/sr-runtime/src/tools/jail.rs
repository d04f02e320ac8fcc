//! Confines file tools to the work directory.

use std::path::{Component, Path, PathBuf};

use super::ToolError;

/// A directory that paths given by a model must stay inside (symlinks
/// included).
#[derive(Debug, Clone)]
pub struct Jail {
    root: PathBuf,
}

impl Jail {
    pub fn new(root: impl AsRef<Path>) -> std::io::Result<Jail> {
        Ok(Jail { root: root.as_ref().canonicalize()? })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves `path` (relative to the root, or absolute inside it). The
    /// deepest existing ancestor is canonicalized, so a symlink pointing out of
    /// the root is refused too.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, ToolError> {
        let refuse = || ToolError(format!("path '{path}' is outside the work directory {}", self.root.display()));
        let joined = if Path::new(path).is_absolute() { PathBuf::from(path) } else { self.root.join(path) };
        let mut lexical = PathBuf::new();
        for component in joined.components() {
            match component {
                Component::ParentDir => {
                    if !lexical.pop() {
                        return Err(refuse());
                    }
                }
                Component::CurDir => {}
                other => lexical.push(other),
            }
        }
        let mut existing = lexical.as_path();
        let mut rest = Vec::new();
        while !existing.exists() {
            rest.push(existing.file_name().ok_or_else(refuse)?.to_owned());
            existing = existing.parent().ok_or_else(refuse)?;
        }
        let mut resolved = existing.canonicalize().map_err(|e| ToolError(format!("cannot resolve '{path}': {e}")))?;
        resolved.extend(rest.iter().rev());
        if resolved.starts_with(&self.root) { Ok(resolved) } else { Err(refuse()) }
    }

    /// A path relative to the root, for results shown to the model.
    pub fn relative(&self, path: &Path) -> String {
        path.strip_prefix(&self.root).unwrap_or(path).display().to_string()
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
        assert_eq!(jail.resolve("inside/new.txt").unwrap(), dir.canonicalize().unwrap().join("inside/new.txt"));
        assert!(jail.resolve("../escape").is_err());
        assert!(jail.resolve("inside/../../escape").is_err());
        assert!(jail.resolve("/etc/passwd").is_err());
        #[cfg(unix)]
        {
            let link = dir.join("link");
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink("/etc", &link).unwrap();
            assert!(jail.resolve("link/passwd").is_err());
        }
    }
}
