//! The files a run wrote, as an artifact `files` of file parts: those its
//! journal (in the store) records it left, by the tool calls of its last
//! attempt's journal (which starts with the lines of the attempts it
//! continues; a fork's, with its original's, whose files it lists too), so
//! any replica answers with them and a later run of the same
//! session changes nothing here. A file a message brought is listed once a
//! tool changed it. Bounds keep a task's JSON small.

use std::sync::Arc;

use sr_runtime::journal::{ParseError, Recorded};

use crate::Server;
use crate::store::{RunRow, StoreError};

/// Why the files a run wrote cannot be read from its journal.
#[derive(Debug, thiserror::Error)]
pub enum WrittenError {
    #[error("cannot read the run's journal: {0}")]
    Read(#[source] StoreError),
    #[error("the run's journal: {0}")]
    Journal(#[source] ParseError),
}

/// The largest file an artifact carries; a larger one is left out (the log says so).
pub const MAX_FILE_BYTES: u64 = 1 << 20;
/// The bytes of all the files together, and how many files, at most.
pub const MAX_TOTAL_BYTES: u64 = 4 << 20;
pub const MAX_FILES: usize = 32;

/// A file the run wrote.
#[derive(Debug, PartialEq)]
pub struct Written {
    /// Relative to the work directory, `/`-separated.
    pub path: String,
    pub media_type: &'static str,
    pub bytes: Vec<u8>,
}

/// The files `run`'s journal records it wrote, in path order, within the bounds.
pub async fn written(server: &Server, run: &RunRow) -> Result<Vec<Written>, WrittenError> {
    let Some(attempt) = run.attempt_run else { return Ok(Vec::new()) };
    let lines = server.store.journal(&run.session, attempt).await.map_err(WrittenError::Read)?;
    let recorded = Recorded::parse(&lines.join("\n")).map_err(WrittenError::Journal)?;
    Ok(bounded(recorded.files_written()))
}

/// `files` (path, bytes when the journal holds them) within the bounds.
fn bounded(files: Vec<(String, Option<Arc<[u8]>>)>) -> Vec<Written> {
    let mut kept = Vec::new();
    let mut total = 0;
    for (path, bytes) in files {
        let Some(bytes) = bytes else {
            tracing::info!(%path, "a file the run wrote is in its journal by hash only; left out of the artifact");
            continue;
        };
        let size = bytes.len() as u64;
        if kept.len() == MAX_FILES || size > MAX_FILE_BYTES || total + size > MAX_TOTAL_BYTES {
            tracing::info!(%path, size, "a file the run wrote is over an artifact's bounds; left out");
            continue;
        }
        total += size;
        kept.push(Written { media_type: media_type(&path), path, bytes: bytes.to_vec() });
    }
    kept
}

/// The media type a file's extension names (`application/octet-stream` when it names none known).
fn media_type(path: &str) -> &'static str {
    let extension = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    match extension.as_str() {
        "txt" | "log" => "text/plain",
        "md" => "text/markdown",
        "json" => "application/json",
        "csv" => "text/csv",
        "html" => "text/html",
        "py" => "text/x-python",
        "yaml" | "yml" => "application/yaml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "pdf" => "application/pdf",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_past_the_bounds_or_kept_by_hash_only_are_left_out() {
        let file = |path: &str, size: usize| (path.to_string(), Some(Arc::from(vec![b'x'; size])));
        let mut files = vec![
            file("out/report.md", 8),
            ("hashed.bin".to_string(), None),
            file("huge.bin", MAX_FILE_BYTES as usize + 1),
            file("data.csv", 3),
        ];
        let listed = |written: &[Written]| -> Vec<(String, &str, usize)> {
            written.iter().map(|w| (w.path.clone(), w.media_type, w.bytes.len())).collect()
        };
        assert_eq!(
            listed(&bounded(files.clone())),
            [("out/report.md".into(), "text/markdown", 8), ("data.csv".into(), "text/csv", 3)]
        );
        // Past the total, or the count: the rest are left out.
        let big = MAX_FILE_BYTES as usize;
        files = (0..5).map(|n| file(&format!("big{n}"), big)).collect();
        assert_eq!(bounded(files).len(), (MAX_TOTAL_BYTES / MAX_FILE_BYTES) as usize);
        files = (0..MAX_FILES + 3).map(|n| file(&format!("f{n:03}.txt"), 1)).collect();
        let kept = bounded(files);
        assert_eq!((kept.len(), kept[MAX_FILES - 1].path.as_str()), (MAX_FILES, "f031.txt"));
    }
}
