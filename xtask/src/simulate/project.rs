//! One directory a generated workflow runs in: the `.sr` file, the work
//! directory, the state directory and the host-side MCP counts, and the `sr`
//! processes run there.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// The session every run of a project uses.
pub const SESSION: &str = "sim";

pub struct Project {
    pub dir: PathBuf,
    sr: PathBuf,
    model_url: String,
}

/// How a run's processes ended, and what they printed.
pub struct Ended {
    /// The last process's exit code (`None`: killed by a signal).
    pub code: Option<i32>,
    /// The events (`--events jsonl`) of the last process: a resumed process
    /// emits the run's events from its start again, served.
    pub events: Vec<Value>,
    /// The events of each process before it that paused, in order.
    pub paused: Vec<Vec<Value>>,
    pub stderr: String,
    /// Pauses answered.
    pub answers: usize,
}

impl Ended {
    /// What the processes said about how they ended: their standard error,
    /// then the message of each `error` event (with `--events jsonl` a
    /// failed run says why there, not on standard error).
    pub fn why(&self) -> String {
        let errors = self.events.iter().filter(|e| e["type"] == "error").filter_map(|e| e["message"].as_str());
        std::iter::once(self.stderr.trim()).chain(errors).filter(|s| !s.is_empty()).collect::<Vec<_>>().join("; ")
    }
}

impl Project {
    pub fn new(dir: PathBuf, sr: &Path, model_url: &str, source_of: impl Fn(&str) -> String) -> Project {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("work")).expect("a scratch directory");
        let counter = dir.join("counter.py");
        std::fs::write(&counter, sr_testing::simulate::COUNTER_MCP).expect("a scratch file");
        let mcp = format!("python3 '{}' '{}'", counter.display(), dir.join("counts.txt").display());
        std::fs::write(dir.join("w.sr"), source_of(&mcp)).expect("a scratch file");
        Project { dir, sr: sr.to_owned(), model_url: model_url.to_owned() }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.sr);
        command
            .args(args)
            .current_dir(&self.dir)
            .env("NO_COLOR", "1")
            .env("OPENAI_BASE_URL", format!("{}/v1", self.model_url))
            .env("OPENAI_API_KEY", "test-key-0000")
            .env("STREETRACE_STATE_DIR", self.dir.join("state"))
            .env_remove("SR_SIM_KILL_AFTER_JOURNAL_LINES");
        command
    }

    fn sr(&self, args: &[&str], env: &[(&str, String)]) -> Output {
        let mut command = self.command(args);
        command.envs(env.iter().map(|(k, v)| (*k, v)));
        command.output().expect("sr runs")
    }

    /// `sr check`'s complaint, if the workflow is not valid.
    pub fn check(&self) -> Result<(), String> {
        let out = self.sr(&["check", "w.sr"], &[]);
        if out.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr))
        }
    }

    /// Runs `first` and then resumes the session, answering every pause,
    /// until a process ends other than paused (exit code 3). `env` goes to
    /// the first process only.
    pub fn run_to_end(&self, first: &[&str], env: &[(&str, String)]) -> Ended {
        let mut out = self.sr(first, env);
        let mut ended = Ended { code: None, events: Vec::new(), paused: Vec::new(), stderr: String::new(), answers: 0 };
        loop {
            ended.paused.extend((!ended.events.is_empty()).then(|| std::mem::take(&mut ended.events)));
            ended.events = events(&out.stdout);
            ended.stderr.push_str(&String::from_utf8_lossy(&out.stderr));
            ended.code = out.status.code();
            if ended.code != Some(3) || ended.answers > 50 {
                return ended;
            }
            ended.answers += 1;
            let answer = format!("answer {}", ended.answers);
            out = self.sr(
                &["run", "w.sr", "--resume", SESSION, "--events", "jsonl", "--work-dir", "work", "--input", &answer],
                &[],
            );
        }
    }

    /// The live run: a new session.
    pub fn run_live(&self, env: &[(&str, String)]) -> Ended {
        let args = ["run", "w.sr", "--session", SESSION, "--events", "jsonl", "--work-dir", "work", "--prompt", "go"];
        self.run_to_end(&args, env)
    }

    /// Resumes an interrupted run to its end; a cut-off tool call is made
    /// again with its idempotency key.
    pub fn resume(&self) -> Ended {
        let args =
            ["run", "w.sr", "--resume", SESSION, "--events", "jsonl", "--in-doubt", "retry", "--work-dir", "work"];
        self.run_to_end(&args, &[])
    }

    /// Replays `journal` in this project's (empty) work directory.
    pub fn replay(&self, journal: &Path) -> Ended {
        let journal = journal.display().to_string();
        let args = ["run", "w.sr", "--replay", &journal, "--events", "jsonl", "--work-dir", "work", "--prompt", "go"];
        self.run_to_end(&args, &[])
    }

    /// Forks the session's run at `step`.
    pub fn fork(&self, step: u64) -> Ended {
        let step = step.to_string();
        let args = ["run", "w.sr", "--resume", SESSION, "--from", &step, "--events", "jsonl", "--work-dir", "work"];
        self.run_to_end(&args, &[])
    }

    /// The journal of the session's run.
    pub fn journal(&self) -> Option<PathBuf> {
        let dir = self.dir.join("state/journal").join(SESSION);
        // Runs are numbered: `10.jsonl` follows `9.jsonl`.
        let run = |path: &PathBuf| path.file_stem().and_then(|s| s.to_str()?.parse::<u64>().ok()).unwrap_or(0);
        let files = std::fs::read_dir(dir).ok()?.filter_map(|e| e.ok().map(|e| e.path()));
        files.max_by_key(run)
    }

    /// Every file under the work directory, by relative path.
    pub fn files(&self) -> BTreeMap<String, Vec<u8>> {
        let mut files = BTreeMap::new();
        walk(&self.dir.join("work"), "", &mut files);
        files
    }

    /// The MCP server's calls: `NAME KEY` lines.
    pub fn mcp_calls(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.join("counts.txt"))
            .map(|text| text.lines().map(str::to_owned).collect())
            .unwrap_or_default()
    }
}

fn walk(dir: &Path, prefix: &str, files: &mut BTreeMap<String, Vec<u8>>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = format!("{prefix}{}", entry.file_name().to_string_lossy());
        let path = entry.path();
        if path.is_dir() {
            files.insert(format!("{name}/"), Vec::new());
            walk(&path, &format!("{name}/"), files);
        } else {
            files.insert(name, std::fs::read(&path).unwrap_or_default());
        }
    }
}

fn events(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

/// The lines of a journal, parsed.
pub fn journal_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .map(|text| text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect())
        .unwrap_or_default()
}
