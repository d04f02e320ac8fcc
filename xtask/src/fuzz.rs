//! `cargo xtask fuzz [--seconds N] [TARGET...]`: builds the cargo-fuzz targets
//! of `fuzz/` (address sanitizer, debug assertions) and runs each for N
//! seconds on a corpus seeded from the repository's `.sr` files, failing on
//! the first crash, timeout or out-of-memory with the reproducer's path.
//!
//! cargo-fuzz needs nightly compiler flags; `RUSTC_BOOTSTRAP=1` lets the stable
//! toolchain accept them. A missing cargo-fuzz is an error, never a skip.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Instant, SystemTime};

use crate::{flag, root};

/// Every target, in the order they run.
const TARGETS: &[&str] = &["parse", "format", "lsp_gate"];
/// The cargo-fuzz `.ci/run` installs.
const CARGO_FUZZ: &str = "0.13.2";
/// Seconds per target unless `--seconds` says otherwise.
const DEFAULT_SECONDS: u64 = 30;
/// Longest input tried: deep enough for any nesting limit (256), short
/// enough for thousands of runs a second.
const MAX_LEN: usize = 4 << 10;
/// Seconds one input may take before it counts as a hang.
const INPUT_TIMEOUT: u64 = 10;

pub fn run(args: &[String]) -> Result<(), String> {
    let seconds = match flag(args, "--seconds") {
        Some(n) => n.parse::<u64>().map_err(|_| format!("--seconds wants a number of seconds, not '{n}'"))?,
        None => DEFAULT_SECONDS,
    };
    let named: Vec<&str> = args
        .iter()
        .enumerate()
        .filter(|&(i, a)| a != "--seconds" && (i == 0 || args[i - 1] != "--seconds"))
        .map(|(_, a)| a.as_str())
        .collect();
    if let Some(unknown) = named.iter().find(|t| !TARGETS.contains(t)) {
        return Err(format!("no fuzz target '{unknown}'; the targets are {}", TARGETS.join(", ")));
    }
    let targets = if named.is_empty() { TARGETS.to_vec() } else { named };
    check_cargo_fuzz()?;

    let started = Instant::now();
    let mut build = cargo_fuzz(&["build", "-O", "--debug-assertions"]);
    let status = build.status().map_err(|e| format!("cannot run cargo fuzz: {e}"))?;
    if !status.success() {
        return Err(format!("building the fuzz targets failed ({status})"));
    }
    println!("fuzz: built {} targets in {:.0} s", TARGETS.len(), started.elapsed().as_secs_f64());

    let work = std::env::temp_dir().join(format!("sr-fuzz-{}", std::process::id()));
    let result = targets.iter().try_for_each(|target| fuzz(target, seconds, &work));
    let _ = std::fs::remove_dir_all(&work);
    result
}

fn cargo_fuzz(args: &[&str]) -> Command {
    let mut command = Command::new("cargo");
    command.arg("fuzz").args(args).env("RUSTC_BOOTSTRAP", "1").current_dir(root());
    command
}

fn check_cargo_fuzz() -> Result<(), String> {
    let missing = || {
        format!(
            "cargo-fuzz is not installed; install it with `cargo install cargo-fuzz --version {CARGO_FUZZ} --locked`"
        )
    };
    let output = Command::new("cargo").args(["fuzz", "--version"]).output().map_err(|_| missing())?;
    if !output.status.success() {
        return Err(missing());
    }
    Ok(())
}

/// Seeds a corpus for `target`, runs it for `seconds` and reports.
fn fuzz(target: &str, seconds: u64, work: &Path) -> Result<(), String> {
    let corpus = work.join(target);
    std::fs::create_dir_all(&corpus).map_err(|e| format!("{}: {e}", corpus.display()))?;
    let seeds = seeds(target)?;
    for (i, seed) in seeds.iter().enumerate() {
        std::fs::write(corpus.join(format!("seed-{i:05}")), seed).map_err(|e| format!("{}: {e}", corpus.display()))?;
    }
    let artifacts = root().join("fuzz/artifacts").join(target);
    std::fs::create_dir_all(&artifacts).map_err(|e| format!("{}: {e}", artifacts.display()))?;
    let log_path = work.join(format!("{target}.log"));
    let log = std::fs::File::create(&log_path).map_err(|e| format!("{}: {e}", log_path.display()))?;
    let since = SystemTime::now();
    let started = Instant::now();
    let status = cargo_fuzz(&["run", "-O", "--debug-assertions", target])
        .arg(&corpus)
        .arg("--")
        .arg(format!("-max_total_time={seconds}"))
        .arg(format!("-max_len={MAX_LEN}"))
        .arg(format!("-timeout={INPUT_TIMEOUT}"))
        .arg("-rss_limit_mb=2048")
        .arg(format!("-artifact_prefix={}/", artifacts.display()))
        .stdout(Stdio::null())
        .stderr(log)
        .status()
        .map_err(|e| format!("cannot run cargo fuzz: {e}"))?;
    let log = std::fs::read_to_string(&log_path).unwrap_or_default();
    if status.success() {
        let done = log.lines().rfind(|l| l.contains("DONE")).unwrap_or("(no summary)");
        println!("fuzz: {target:9} {} seeds, {:.0} s: {}", seeds.len(), started.elapsed().as_secs_f64(), done.trim());
        return Ok(());
    }
    // The end of libFuzzer's report, without the lines the code under test logs.
    let report: Vec<&str> = log.lines().filter(|l| !l.starts_with("sr-lsp: ")).collect();
    eprintln!("{}", report[report.len().saturating_sub(60)..].join("\n"));
    let found = new_files(&artifacts, since);
    if found.is_empty() {
        return Err(format!("fuzz target {target} failed ({status}) without leaving an input"));
    }
    let mut message = format!("fuzz target {target} failed ({status}); reproduce with:");
    for path in found {
        message.push_str(&format!(
            "\n  RUSTC_BOOTSTRAP=1 cargo fuzz run -O --debug-assertions {target} {}",
            path.display()
        ));
    }
    Err(message)
}

/// Files in `dir` written since `since`.
fn new_files(dir: &Path, since: SystemTime) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    entries
        .filter_map(Result::ok)
        .filter(|e| e.metadata().and_then(|m| m.modified()).is_ok_and(|t| t >= since))
        .map(|e| e.path())
        .collect()
}

/// The seed inputs of `target`: the `.sr` texts of the repository (the
/// upstream conformance corpus and its snippets, the parser fixtures and the
/// examples; not the differential cases, which are mutants of the corpus and
/// would take most of a short run to load); for `lsp_gate`, the corpus files as
/// language-server sessions and every malformed message the torture test sends.
fn seeds(target: &str) -> Result<Vec<Vec<u8>>, String> {
    let texts = sources()?;
    if target != "lsp_gate" {
        return Ok(texts.into_iter().map(String::into_bytes).collect());
    }
    let mut seeds = malformed();
    for text in texts.iter().filter(|t| t.len() <= MAX_LEN) {
        seeds.push(session(text));
    }
    Ok(seeds)
}

/// The seed texts.
fn sources() -> Result<Vec<String>, String> {
    let root = root();
    let mut texts = Vec::new();
    for dir in ["fixtures/upstream/files", "crates/sr-syntax/test_data", "examples"] {
        sr_files(&root.join(dir), &mut texts)?;
    }
    let path = root.join("fixtures/upstream/snippets.jsonl");
    let jsonl = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    texts.extend(jsonl.lines().filter_map(|line| {
        let case: serde_json::Value = serde_json::from_str(line).ok()?;
        Some(case.get("source")?.as_str()?.to_string())
    }));
    if texts.len() < 300 {
        return Err(format!("only {} seed texts: the fixtures moved?", texts.len()));
    }
    Ok(texts)
}

fn sr_files(dir: &Path, out: &mut Vec<String>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if path.is_dir() {
            sr_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "sr") {
            out.push(std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?);
        }
    }
    Ok(())
}

fn frame(body: &str) -> Vec<u8> {
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

/// A session that opens `text`, asks for symbols and hover, and ends.
fn session(text: &str) -> Vec<u8> {
    let uri = "file:///fuzz/a.sr";
    let document = serde_json::json!({"uri": uri});
    let messages = [
        serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"capabilities": {}}}),
        serde_json::json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
        serde_json::json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "streetrace", "version": 1, "text": text}}}),
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "textDocument/documentSymbol", "params": {"textDocument": document}}),
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {"textDocument": document, "position": {"line": 1, "character": 4}}}),
        serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}),
        serde_json::json!({"jsonrpc": "2.0", "method": "exit"}),
    ];
    messages.iter().flat_map(|m| frame(&m.to_string())).collect()
}

/// The malformed messages of the language server's torture test, and a
/// lifecycle's end.
fn malformed() -> Vec<Vec<u8>> {
    let mut seeds: Vec<Vec<u8>> = [
        "{not json",
        "[1, 2]",
        "\"x\"",
        r#"{"id": 7, "method": "x"}"#,
        r#"{"jsonrpc": "2.0", "id": 8, "method": "$/x", "params": {}}"#,
        r#"{"jsonrpc": "2.0", "id": 1.5, "method": "shutdown"}"#,
        r#"{"jsonrpc": "2.0", "id": 10, "method": "x", "params": 3}"#,
        r#"{"jsonrpc": "2.0", "method": "x", "params": "\ud800"}"#,
        r#"{"jsonrpc": "2.0", "id": "s", "result": {}}"#,
    ]
    .iter()
    .map(|body| frame(body))
    .collect();
    let body = r#"{"jsonrpc": "2.0", "method": "initialized"}"#;
    seeds.push(
        format!(
            "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
    );
    seeds.push(format!("content-length: {}\r\ncontent-type: application/json\r\n\r\n{body}", body.len()).into_bytes());
    seeds.push(b"garbage without a colon\r\n\r\nContent-Type: x\r\n\r\nContent-Length: -5\r\n\r\n".to_vec());
    let mut oversized = b"Content-Length: 99999999999\r\n\r\n{\"jsonrpc\": \"2.0\"}".to_vec();
    oversized.extend(frame(body));
    seeds.push(oversized);
    let raw_surrogate = b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": \"\xed\xa0\x80\"}";
    let mut framed = format!("Content-Length: {}\r\n\r\n", raw_surrogate.len()).into_bytes();
    framed.extend_from_slice(raw_surrogate);
    seeds.push(framed);
    let mut end = frame(r#"{"jsonrpc": "2.0", "id": 3, "method": "shutdown"}"#);
    end.extend(frame(r#"{"jsonrpc": "2.0", "method": "exit"}"#));
    seeds.push(end);
    seeds
}
