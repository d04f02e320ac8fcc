//! The session's journals on disk. Each run records to a file of its own:
//! the launch's to the `record` file or a temporary one, each travel's to a
//! new temporary file that starts with what the travel served it. A travel
//! serves one branch (its journal: see `forks`), but the work directory is
//! wherever the last run left it, possibly in another branch; the runtime
//! puts it back as it was when the recorded run started by undoing every file
//! change the served journal holds, so a travel serves the changes of every
//! run of the session first (the archive: each `tool` line's changed files,
//! without its arguments and result, and the `blob` lines), then a `fork`
//! line with `from_step: 0`, which voids every effect before it, then the
//! branch's journal. The runtime undoes the archive's changes and the
//! branch's, last first, and serves only the branch's effects. A run's file
//! that no branch's journal is in any more is removed (`Session::prune`).

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};

use crate::forks::Piece;
use crate::request_error::ArchiveError;

/// Voids every effect recorded before it (`sr run --from 0` in effect).
pub const MARKER: &str = r#"{"kind":"fork","from_step":0}"#;

/// The file changes of every run of the session.
#[derive(Debug, Default)]
pub struct Archive {
    /// The first run's `meta` line (a journal must start with one).
    meta: Option<String>,
    /// The changes and blobs, one JSON line each; created on first use.
    file: Option<PathBuf>,
}

/// The parts of a journal line the archive looks at.
#[derive(Deserialize)]
struct Line {
    #[serde(default)]
    kind: String,
    files: Option<IgnoredAny>,
}

/// A tool line as the archive keeps it: where it was and the files it
/// changed, without its arguments and result (a rewind needs neither).
#[derive(Deserialize, Serialize)]
struct Change {
    kind: String,
    at: serde_json::Value,
    n: serde_json::Value,
    #[serde(default)]
    step: serde_json::Value,
    files: serde_json::Value,
}

impl Archive {
    /// The archive's file, for removal with the session's temporary files.
    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// Keeps the file changes a run recorded in `file` after the `served`
    /// bytes a travel gave it (those are the archive's and a branch's already).
    pub fn absorb(&mut self, file: &Path, served: u64) -> Result<(), ArchiveError> {
        let cannot = |source| ArchiveError::ReadRun { path: file.to_path_buf(), source };
        let mut journal = std::fs::File::open(file).map_err(cannot)?;
        journal.seek(SeekFrom::Start(served)).map_err(cannot)?;
        let mut text = String::new();
        journal.read_to_string(&mut text).map_err(cannot)?;
        let mut kept = String::new();
        for line in text.lines() {
            let Ok(read) = serde_json::from_str::<Line>(line) else { continue };
            match read.kind.as_str() {
                "meta" if self.meta.is_none() => self.meta = Some(line.to_string()),
                "blob" => {
                    kept.push_str(line);
                    kept.push('\n');
                }
                "tool" if read.files.is_some() => {
                    let Ok(change) = serde_json::from_str::<Change>(line) else { continue };
                    let Ok(slim) = serde_json::to_string(&change) else { continue };
                    kept.push_str(&slim);
                    kept.push('\n');
                }
                _ => {}
            }
        }
        if kept.is_empty() {
            return Ok(());
        }
        let path = self.file.get_or_insert_with(|| temporary("archive")).clone();
        let cannot = |source| ArchiveError::Write { path: path.clone(), source };
        let mut archive = std::fs::OpenOptions::new().create(true).append(true).open(&path).map_err(cannot)?;
        archive.write_all(kept.as_bytes()).map_err(cannot)
    }

    /// What a travel in the branch whose journal is `branch` is served, and
    /// where the branch's journal starts in it.
    pub fn compose(&self, branch: &Piece) -> Result<(String, u64), ArchiveError> {
        let cannot = |file: &Path, source| ArchiveError::Read { path: file.to_path_buf(), source };
        let mut journal = std::fs::File::open(&branch.file).map_err(|e| cannot(&branch.file, e))?;
        journal.seek(SeekFrom::Start(branch.skip)).map_err(|e| cannot(&branch.file, e))?;
        let mut own = String::new();
        journal.read_to_string(&mut own).map_err(|e| cannot(&branch.file, e))?;
        let Some(meta) = &self.meta else { return Ok((own, 0)) };
        let mut served = format!("{meta}\n");
        if let Some(file) = &self.file {
            served.push_str(&std::fs::read_to_string(file).map_err(|e| cannot(file, e))?);
        }
        served.push_str(MARKER);
        served.push('\n');
        let skip = served.len() as u64;
        served.push_str(&own);
        Ok((served, skip))
    }
}

/// A new temporary file name for the session's journals.
pub fn temporary(what: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::env::temp_dir().join(format!("sr-dap-{what}-{}-{n}.jsonl", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_archive_keeps_file_changes_and_blobs_and_a_travel_serves_the_branch_after_them() {
        let run = temporary("test-run");
        let lines = [
            r#"{"kind":"meta","format":2,"invocation_id":"i","workload":"w.sr","input":""}"#,
            r#"{"at":"main","n":0,"step":1,"name":"write_file","args":{},"kind":"tool_start"}"#,
            r#"{"kind":"blob","sha256":"ab","text":"x"}"#,
            r#"{"at":"main","n":0,"step":1,"name":"write_file","args":{"content":"x"},"kind":"tool","files":[]}"#,
            r#"{"at":"main","n":1,"step":2,"name":"read_file","args":{},"kind":"tool","result":"x"}"#,
            r#"{"kind":"llm","at":"main","n":2,"step":3}"#,
            "not json",
        ];
        std::fs::write(&run, lines.join("\n") + "\n").unwrap();
        let mut archive = Archive::default();
        archive.absorb(&run, 0).unwrap();
        let kept = std::fs::read_to_string(archive.file().unwrap()).unwrap();
        let change = r#"{"kind":"tool","at":"main","n":0,"step":1,"files":[]}"#;
        assert_eq!(kept, format!("{}\n{change}\n", lines[2]), "the changes, without arguments or results");
        // What a run was served is not kept twice.
        let served = std::fs::metadata(&run).unwrap().len();
        let mut more = std::fs::OpenOptions::new().append(true).open(&run).unwrap();
        writeln!(more, r#"{{"kind":"blob","sha256":"cd","text":"y"}}"#).unwrap();
        archive.absorb(&run, served).unwrap();
        let kept = std::fs::read_to_string(archive.file().unwrap()).unwrap();
        assert_eq!(kept.lines().count(), 3);

        let (text, skip) = archive.compose(&Piece { file: run.clone(), skip: 0 }).unwrap();
        assert!(text.starts_with(lines[0]), "a journal starts with its meta");
        let own = &text[skip as usize..];
        assert_eq!(own, std::fs::read_to_string(&run).unwrap());
        assert!(text[..skip as usize].ends_with(&format!("{MARKER}\n")));
        std::fs::remove_file(run).unwrap();
        std::fs::remove_file(archive.file().unwrap()).unwrap();
    }
}
