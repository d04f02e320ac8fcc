//! What the model's tools must never change inside the work directory: every
//! place the toolchain, git or an editor later reads code or configuration
//! from. Writing any of them would run the model's code on the host later
//! (a planted `tool x = mcp "stdio:…"` at the user's next `sr run`, a git
//! hook at the next commit, an editor setting that picks an executable).
//! The file jail, the cli sandbox and the tests share this one table; the
//! workload's own files are added by whoever compiled them.

use std::path::{Path, PathBuf};

/// One name that is protected wherever it appears under the work directory
/// (compared ignoring ASCII case, for case-insensitive file systems).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Name {
    pub name: &'static str,
    /// Whether the toolchain or tool reading it expects a directory: a
    /// missing one is kept from being created, during a sandboxed command,
    /// by an empty read-only directory in its place at the top.
    pub dir: bool,
    /// Who reads it, for messages and docs.
    pub read_by: &'static str,
}

/// The protected names.
pub const NAMES: [Name; 6] = [
    Name { name: ".git", dir: true, read_by: "git (hooks, config)" },
    Name { name: ".streetrace", dir: true, read_by: "sr (workloads found by name)" },
    Name { name: ".vscode", dir: true, read_by: "VS Code (workspace settings, tasks, launch)" },
    Name { name: ".nvim.lua", dir: false, read_by: "Neovim (exrc)" },
    Name { name: ".nvimrc", dir: false, read_by: "Neovim (exrc)" },
    Name { name: ".exrc", dir: false, read_by: "Vim and Neovim (exrc)" },
];

/// The protected name `name` is, if it is one.
pub fn name(name: &str) -> Option<&'static Name> {
    NAMES.iter().find(|n| n.name.eq_ignore_ascii_case(name))
}

/// The directories `sr run NAME` searches for workloads that lie inside
/// `root` (for a run in `root`, or from the process's current directory
/// `cwd`): exactly [`crate::workload::search_path`]'s, so a directory added
/// to the search is protected with it.
pub fn search_dirs(root: &Path, cwd: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for dir in crate::workload::search_path(root).into_iter().chain(crate::workload::search_path(cwd)) {
        let dir = if dir.is_absolute() { dir } else { cwd.join(dir) };
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    dirs
}
