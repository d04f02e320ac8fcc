//! Where the runtime keeps its own state (the sessions database, run journals
//! and run locks): outside the work directory by default, so that file tools,
//! which the model drives, never see it.

use std::path::{Path, PathBuf};

use crate::ids::{self, BadId, IdKind};

/// The variable that overrides the state directory (as `--state-dir` does).
pub const STATE_DIR_VAR: &str = "STREETRACE_STATE_DIR";

/// No state directory was given and none can be derived from the environment.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("neither XDG_STATE_HOME nor HOME is set: pass --state-dir or set {STATE_DIR_VAR}")]
pub struct NoStateDir;

/// The state directory of one project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateDir {
    pub dir: PathBuf,
}

impl StateDir {
    /// `explicit` (a flag) if given, else `$STREETRACE_STATE_DIR`, else
    /// `$XDG_STATE_HOME/streetrace/<project>` (`~/.local/state/…` without
    /// it), where `<project>` names the work directory: its last component and
    /// a hash of its canonical path.
    pub fn resolve(explicit: Option<&Path>, work_dir: &Path) -> Result<StateDir, NoStateDir> {
        if let Some(dir) = explicit {
            return Ok(StateDir { dir: dir.to_path_buf() });
        }
        if let Some(dir) = std::env::var_os(STATE_DIR_VAR).filter(|v| !v.is_empty()) {
            return Ok(StateDir { dir: PathBuf::from(dir) });
        }
        let base = match std::env::var_os("XDG_STATE_HOME").filter(|v| !v.is_empty()) {
            Some(dir) => PathBuf::from(dir),
            None => match std::env::var_os("HOME").filter(|v| !v.is_empty()) {
                Some(home) => PathBuf::from(home).join(".local/state"),
                None => return Err(NoStateDir),
            },
        };
        Ok(StateDir { dir: base.join("streetrace").join(project_key(work_dir)) })
    }

    pub fn sessions_db(&self) -> PathBuf {
        self.dir.join("sessions.db")
    }

    /// The journal of a run's model exchanges and tool results, inside the
    /// state directory: a session id that breaks the id rule is refused.
    pub fn journal(&self, session: &str, run: i64) -> Result<PathBuf, BadId> {
        ids::check(IdKind::Session, session)?;
        Ok(self.dir.join("journal").join(session).join(format!("{run}.jsonl")))
    }

    /// Where live runs keep their leases (see [`crate::lease`]).
    pub fn leases(&self) -> PathBuf {
        self.dir.join("leases")
    }
}

/// `NAME-HASH`: the work directory's last component and the FNV-1a hash of
/// its canonical path, stable across runs and versions.
pub fn project_key(work_dir: &Path) -> String {
    let canonical = work_dir.canonicalize().unwrap_or_else(|_| work_dir.to_path_buf());
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in canonical.as_os_str().as_encoded_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    let name: String = canonical
        .file_name()
        .map(|n| {
            n.to_string_lossy()
                .chars()
                .map(|c| if c.is_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
                .collect()
        })
        .unwrap_or_else(|| "root".to_string());
    format!("{name}-{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projects_are_keyed_by_their_canonical_path() {
        let a = project_key(Path::new("/srv/app"));
        assert!(a.starts_with("app-") && a.len() == "app-".len() + 16, "{a}");
        assert_ne!(a, project_key(Path::new("/srv/other/app")));
        assert_eq!(a, project_key(Path::new("/srv/app")));
        let explicit = StateDir::resolve(Some(Path::new("/tmp/st")), Path::new("/srv/app")).unwrap();
        assert_eq!(explicit.journal("s1", 2).unwrap(), Path::new("/tmp/st/journal/s1/2.jsonl"));
    }

    /// A journal is always a file of its own session's directory: a hostile
    /// session id is an error naming the rule, never a path.
    #[test]
    fn journals_of_hostile_session_ids_are_refused() {
        let state = StateDir { dir: PathBuf::from("/tmp/st") };
        for id in ids::hostile() {
            let error = state.journal(&id, 1).expect_err(&id).to_string();
            assert!(error.starts_with("session id ") && error.ends_with(ids::RULE), "{error}");
        }
    }
}
