//! Workloads: `.sr` files and upstream YAML agents, found by name or path
//! and compiled (`crate::launch` runs them).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use sr_hir::RootDatabase;

use crate::compile::{CompileError, Compiled, compile_path};

/// The directories under the current directory that workloads named on the
/// command line are searched in, in order. The file tools and the cli sandbox
/// keep them read-only ([`crate::protected::search_dirs`]).
pub const LOCAL_SEARCH_DIRS: [&str; 2] = ["agents", ".streetrace/agents"];

/// The extensions of workload files.
pub const EXTENSIONS: [&str; 3] = ["sr", "yaml", "yml"];

/// Directories searched for workloads named on the command line, in order:
/// `$STREETRACE_AGENT_PATHS` (colon-separated), [`LOCAL_SEARCH_DIRS`] under
/// `cwd`, `~/.streetrace/agents`.
pub fn search_path(cwd: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var("STREETRACE_AGENT_PATHS")
        .map(|v| v.split(':').filter(|p| !p.is_empty()).map(PathBuf::from).collect())
        .unwrap_or_default();
    dirs.extend(LOCAL_SEARCH_DIRS.iter().map(|dir| cwd.join(dir)));
    if let Some(home) = std::env::var_os("HOME") {
        dirs.push(PathBuf::from(home).join(".streetrace/agents"));
    }
    dirs
}

/// The file of a workload given by path or by name (`reviewer` finds
/// `reviewer.sr`, `reviewer.yaml` or `reviewer.yml`, names compared in
/// lowercase). A path is a text with a `/` or a workload extension: a bare
/// name is only searched for, so a file a tool made in the current directory
/// (`./reviewer`) is never what `sr run reviewer` runs.
pub fn discover(name_or_path: &str, cwd: &Path) -> Result<PathBuf, NotFound> {
    let direct = cwd.join(name_or_path);
    let is_path = name_or_path.contains('/')
        || Path::new(name_or_path).extension().and_then(|e| e.to_str()).is_some_and(|e| EXTENSIONS.contains(&e));
    if is_path && direct.is_file() {
        return Ok(direct);
    }
    let wanted = name_or_path.to_lowercase();
    let dirs = search_path(cwd);
    for dir in &dirs {
        let Ok(entries) = std::fs::read_dir(dir) else { continue };
        let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        entries.sort();
        for path in entries {
            let stem = path.file_stem().map(|s| s.to_string_lossy().to_lowercase()).unwrap_or_default();
            let ext = path.extension().and_then(|e| e.to_str()).unwrap_or_default();
            if stem == wanted && EXTENSIONS.contains(&ext) {
                return Ok(path);
            }
        }
    }
    Err(NotFound { name_or_path: name_or_path.to_string(), is_path, searched: dirs })
}

/// A workload that is neither the file it names nor in a searched directory.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "no workload '{name_or_path}': {}found in {}",
    if *is_path { "not a file, and not " } else { "not " },
    searched.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", ")
)]
pub struct NotFound {
    pub name_or_path: String,
    /// Whether it was taken for a path (it has a `/` or a workload extension).
    pub is_path: bool,
    /// The directories searched, in order.
    pub searched: Vec<PathBuf>,
}

/// Compiles a `.sr` file or an upstream YAML agent.
pub fn load(db: &mut RootDatabase, path: &Path) -> Result<Arc<Compiled>, CompileError> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("yaml" | "yml") => crate::yaml::load(path),
        _ => compile_path(db, path),
    }
}
