//! The `flow` scorer: a `.sr` flow grades the run. It starts with the JSON
//! text of `{case: {prompt}, output, files}` as its message (`files` maps
//! each text file the run left in its work directory, up to 64 KiB each, to
//! its content), reads it with `json_parse($input_prompt)`, and returns a
//! score in 0..1, or `{score, reason}`. Its file tools read the case's work
//! directory (read-only); its model calls go where the case's judge calls go.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::StreamExt;
use serde_json::{Value, json};
use sr_hir::RootDatabase;
use sr_llm::{ChatRequest, ChatStream, LlmError, Provider};
use sr_runtime::RunOptions;
use sr_runtime::compile::{Compiled, compile_path};
use sr_runtime::event::RunStatus;
use sr_runtime::hook::NoHook;
use sr_runtime::human::Unattended;
use sr_runtime::launch::{LaunchSpec, Models, launch};
use sr_runtime::tools::{Entry, Jail, Opened};

use super::{JudgeModel, Score, text_of};
use crate::relative::DATASET_DIR;

/// Files the grading flow is shown, and the largest of each.
const MAX_FILES: usize = 200;
const MAX_FILE_BYTES: u64 = 64 << 10;

#[derive(Debug)]
pub struct FlowScorer {
    /// As the dataset wrote it, until `load` resolves it.
    pub path: PathBuf,
    pub entry: Option<String>,
    /// The lowest passing score.
    pub min_score: f64,
    pub program: Option<Arc<Compiled>>,
}

impl FlowScorer {
    /// Resolves the path against the dataset's directory and compiles the
    /// file, so a broken scorer is a dataset error before anything runs.
    pub fn load(&mut self, base: &Path) -> Result<(), String> {
        let jail = Jail::read_only(base)
            .map_err(|e| format!("expect: flow: cannot open the dataset's directory {}: {e}", base.display()))?;
        match jail.open_read(&self.path) {
            Ok(Opened::File(_)) => {}
            Ok(Opened::Dir(_)) => return Err(format!("expect: flow: {} is a directory", self.path.display())),
            Err(e) => {
                return Err(format!("expect: flow: {} is not a file inside {DATASET_DIR}: {e}", self.path.display()));
            }
        }
        self.path = jail.root().join(&self.path);
        let program = compile_path(&mut RootDatabase::default(), &self.path).map_err(|e| {
            let first = e.diagnostics.first().map(|(file, d)| format!("{}: {}", file.display(), d.message()));
            format!("expect: flow: {} does not compile: {}", self.path.display(), first.unwrap_or_default())
        })?;
        if let Some(entry) = &self.entry
            && !program.flows.contains_key(entry.as_str())
        {
            return Err(format!("expect: flow: {} has no flow named '{entry}'", self.path.display()));
        }
        self.program = Some(program);
        Ok(())
    }

    pub async fn score(&self, judge: &JudgeModel, prompt: &str, output: &Value, work_dir: &Path) -> Score {
        let failed = |detail: String| Score::new("flow", false, detail);
        let Some(program) = &self.program else { return failed("the scorer's flow was not loaded".to_string()) };
        let jail = match Jail::read_only(work_dir) {
            Ok(jail) => jail,
            Err(e) => return failed(format!("cannot open the work directory: {e}")),
        };
        let provider: Arc<dyn Provider> = match judge {
            Ok(provider) => provider.clone(),
            Err(why) => Arc::new(NoModel(why.to_string())),
        };
        let input = json!({"case": {"prompt": prompt}, "output": output, "files": files(&jail)});
        // Launched like any run, without a session: its file tools read the
        // case's work directory, and nothing is recorded.
        let launched = launch(LaunchSpec {
            program: program.clone(),
            message: input.to_string(),
            work_dir: work_dir.to_path_buf(),
            read_only: true,
            storage: None,
            models: Models::Provider { provider, record: None },
            options: RunOptions { entry: self.entry.clone(), ..RunOptions::default() },
            human: Arc::new(Unattended),
            in_doubt: sr_runtime::in_doubt::skip_all(),
        });
        let finished = match launched {
            Ok(launched) => launched.run(Arc::new(NoHook), Vec::new()).await,
            Err(e) => return failed(format!("the scoring flow cannot start: {e}")),
        };
        let finished = match finished {
            Ok(finished) if finished.status == Some(RunStatus::Completed) => finished,
            Ok(finished) => {
                let why = finished.error.unwrap_or_else(|| "it did not complete".to_string());
                return failed(format!("the scoring flow failed: {why}"));
            }
            Err(e) => return failed(format!("the scoring flow failed: {e}")),
        };
        let result = finished.result.unwrap_or(Value::Null);
        let (score, reason) = match &result {
            Value::Object(fields) => (fields.get("score").and_then(Value::as_f64), fields.get("reason").map(text_of)),
            other => (other.as_f64(), None),
        };
        match score.filter(|s| (0.0..=1.0).contains(s)) {
            Some(score) => Score {
                kind: "flow".to_string(),
                passed: score >= self.min_score,
                score,
                detail: format!(
                    "{score:.2} (pass at {:.2}){}",
                    self.min_score,
                    reason.map(|r| format!(": {r}")).unwrap_or_default()
                ),
                findings: None,
            },
            None => failed(format!("the scoring flow returned no score in 0..1: {}", text_of(&result))),
        }
    }
}

/// The text files in the jail (hidden ones left out), by relative path, read
/// through it: symlinks are not followed, only regular files are read.
fn files(jail: &Jail) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut pending = vec![PathBuf::from(".")];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = jail.entries(&dir) else { continue };
        for Entry { name, is_dir, is_file } in entries {
            if out.len() >= MAX_FILES {
                return out;
            }
            if name.starts_with('.') {
                continue;
            }
            let path = if dir == Path::new(".") { PathBuf::from(&name) } else { dir.join(&name) };
            if is_dir {
                pending.push(path);
            } else if is_file
                && let Ok(bytes) = jail.read(&path, MAX_FILE_BYTES)
                && let Ok(text) = String::from_utf8(bytes)
            {
                out.insert(path.to_string_lossy().into_owned(), text);
            }
        }
    }
    out
}

/// Model calls of a scoring flow when the case has no judge model.
struct NoModel(String);

impl Provider for NoModel {
    fn chat(&self, _: ChatRequest) -> ChatStream {
        let error = LlmError::Transport {
            provider: "none".to_string(),
            message: format!("the scoring flow has no model: {}", self.0),
        };
        futures::stream::once(async move { Err(error) }).boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the grading flow is shown: text files, also in subdirectories;
    /// not hidden ones, not what a symlink points at (even outside the work
    /// directory), not files over the cap or that are not text.
    #[test]
    fn files_are_the_runs_text_files_and_nothing_a_symlink_reaches() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "outside").unwrap();
        let work = tempfile::tempdir().unwrap();
        let dir = work.path();
        std::fs::create_dir_all(dir.join("src/.cache")).unwrap();
        std::fs::write(dir.join("a.txt"), "top").unwrap();
        std::fs::write(dir.join("src/b.py"), "nested").unwrap();
        std::fs::write(dir.join(".env"), "TOKEN=x").unwrap();
        std::fs::write(dir.join("src/.cache/c"), "hidden dir").unwrap();
        std::fs::write(dir.join("big.txt"), "x".repeat(MAX_FILE_BYTES as usize + 1)).unwrap();
        std::fs::write(dir.join("bin.dat"), [0xff, 0xfe, 0x00]).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.txt"), dir.join("link.txt")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.join("linked_dir")).unwrap();
        let seen = files(&Jail::read_only(dir).unwrap());
        let names: Vec<&str> = seen.keys().map(String::as_str).collect();
        assert_eq!(names, ["a.txt", "src/b.py"]);
        assert_eq!(seen["src/b.py"], "nested");
    }
}
