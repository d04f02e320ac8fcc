//! `runs.jsonl`: every finished case run, one JSON line each, appended and
//! synced to disk as the run ends. `results.json` and the reports are made
//! from it, so a process killed at any moment (`kill -9`, the machine going
//! down) keeps every case run that finished and `--resume` runs only the rest.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::results::CaseResult;

/// Why the log could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum RunLogError {
    #[error("cannot write {}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
    #[error("cannot read {}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    /// A line before the last is not a case run: the log was not written by a run.
    #[error("{}:{line}: not a case run: {source}", path.display())]
    NotACaseRun { path: PathBuf, line: usize, source: serde_json::Error },
    #[error("{0}")]
    Encode(serde_json::Error),
}

fn cannot_write(path: &Path) -> impl FnOnce(std::io::Error) -> RunLogError + '_ {
    move |source| RunLogError::Write { path: path.to_path_buf(), source }
}

/// The log's name in the output directory.
pub const FILE: &str = "runs.jsonl";

/// The log, open for appending.
pub struct RunLog {
    file: File,
    path: PathBuf,
}

impl RunLog {
    /// A new, empty log at `path` (one already there is emptied: a new run
    /// into the same directory starts again).
    pub fn create(path: &Path) -> Result<RunLog, RunLogError> {
        let file = File::create(path).map_err(cannot_write(path))?;
        Ok(RunLog { file, path: path.to_path_buf() })
    }

    /// The log at `path`, appended to after what it holds.
    pub fn append_to(path: &Path) -> Result<RunLog, RunLogError> {
        let file = OpenOptions::new().append(true).create(true).open(path).map_err(cannot_write(path))?;
        Ok(RunLog { file, path: path.to_path_buf() })
    }

    /// Appends `case` as one line and syncs it to disk before returning.
    pub fn append(&mut self, case: &CaseResult) -> Result<(), RunLogError> {
        let mut line = serde_json::to_string(case).map_err(RunLogError::Encode)?;
        line.push('\n');
        self.file.write_all(line.as_bytes()).and_then(|()| self.file.sync_data()).map_err(cannot_write(&self.path))
    }
}

/// What a log holds.
#[derive(Debug)]
pub struct Recovered {
    pub cases: Vec<CaseResult>,
    /// The last line was torn (the process died while writing it) and was
    /// cut off the file: which file and line.
    pub dropped: Option<String>,
}

/// Reads the log at `path`. A last line without its newline, or that is not
/// a case run, is what a process killed while writing leaves: it is cut off
/// the file (so appends start on a line of their own) and named in
/// `dropped`. Any other line that is not a case run is an error naming it.
pub fn recover(path: &Path) -> Result<Recovered, RunLogError> {
    let shown = path.display();
    let bytes = std::fs::read(path).map_err(|source| RunLogError::Read { path: path.to_path_buf(), source })?;
    let mut cases = Vec::new();
    let mut at = 0;
    let mut number = 0;
    while at < bytes.len() {
        number += 1;
        let (line, next, whole) = match bytes[at..].iter().position(|&b| b == b'\n') {
            Some(end) => (&bytes[at..at + end], at + end + 1, true),
            None => (&bytes[at..], bytes.len(), false),
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            at = next;
            continue;
        }
        let torn = match serde_json::from_slice::<CaseResult>(line) {
            Ok(case) if whole => {
                cases.push(case);
                None
            }
            // Without its newline the line was not finished, even if it parses.
            Ok(_) => Some("no newline"),
            Err(_) if next == bytes.len() => Some(if whole { "not a case run" } else { "no newline" }),
            Err(source) => return Err(RunLogError::NotACaseRun { path: path.to_path_buf(), line: number, source }),
        };
        if let Some(why) = torn {
            cut(path, at)?;
            let dropped =
                format!("{shown}: line {number} is incomplete ({why}: the run stopped while writing it); dropped it");
            return Ok(Recovered { cases, dropped: Some(dropped) });
        }
        at = next;
    }
    Ok(Recovered { cases, dropped: None })
}

/// Cuts the file at `path` to its first `len` bytes, synced.
fn cut(path: &Path, len: usize) -> Result<(), RunLogError> {
    let file = OpenOptions::new().write(true).open(path).map_err(cannot_write(path))?;
    file.set_len(len as u64).and_then(|()| file.sync_data()).map_err(cannot_write(path))
}

#[cfg(test)]
mod tests;
