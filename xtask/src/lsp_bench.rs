//! `cargo xtask bench lsp [--server PATH] [--runs N]`: the language server as
//! a client meets it, the source of every language-server figure in the
//! README. Spawns the release `sr-lsp` binary and speaks LSP to it over its
//! stdin and stdout (`Content-Length` frames), first on the example workload
//! (5 generated files of 10k lines), then on one generated 9.2 MB file, then
//! edits with a pause between them in 5 open files, on two servers at once
//! whose edits alternate: one with no workspace folder, one inside a
//! workspace folder of 20 closed files of 10k lines and the 9.2 MB file; and
//! last, on the second, edits that come while it checks the closed files. It
//! times edits to published diagnostics (percentiles of many edits; with
//! the server's `$/logTrace`, how long its checks took), and for
//! each request reports the wall time from the request's first byte written
//! to the answer's last byte read (fastest and slowest of N runs), the
//! answer's size on the wire, and the server's resident memory after the last
//! run and its peak during any run (`/proc/PID/status`; the peak is reset
//! through `/proc/PID/clear_refs` before each run).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::ci::step;
use crate::{flag, target_dir};

/// The big file's lines: 10 MiB at 26 bytes a line, which the generated
/// workload's lines are not quite (it is 9,235,493 bytes, 378,888 lines).
const BIG_FILE_LINES: usize = (10 << 20) / 26;
/// Edits timed per workload (insert a `$`, take it out again).
const EDITS: [usize; 2] = [200, 4];
/// Edits in the workspace scenario, and the time between two edits of one
/// server (shorter than the pause after which the server checks closed files).
const PACED_EDITS: usize = 120;
const PACE: Duration = Duration::from_millis(500);
/// Edits timed while the server checks closed files.
const AMONG_CLOSED_CHECKS: usize = 20;

pub fn run(args: &[String]) -> Result<(), String> {
    let server = match flag(args, "--server") {
        Some(path) => PathBuf::from(path),
        None => {
            step("cargo", &["build", "--release", "-q", "-p", "sr-lsp", "--bin", "sr-lsp"], &[])?;
            target_dir().join("release/sr-lsp")
        }
    };
    let runs: usize = flag(args, "--runs").map_or(Ok(3), str::parse).map_err(|e| format!("--runs: {e}"))?;
    let mut client = Client::spawn(&server)?;
    let init = json!({
        "processId": null,
        "rootUri": null,
        "capabilities": {"textDocument": {"documentSymbol": {"hierarchicalDocumentSymbolSupport": true}}},
        "initializationOptions": {"streetrace": {"debounceMs": 0}},
    });
    client.request("initialize", init)?;
    client.notify("initialized", json!({}))?;
    println!("sr-lsp through stdio ({}), {runs} runs of each request (fastest / slowest)", server.display());
    println!("{:<44} {:>18} {:>12} {:>10} {:>10}", "", "time", "answer", "RSS after", "peak");
    println!("started: RSS {}", client.memory("VmRSS:"));

    let workloads: [(&str, Vec<(String, String)>); 2] = [
        (
            "example workload, 5 files of 10k lines",
            (0..5).map(|i| (format!("file:///bench/workload{i}.sr"), sr_testing::generated_workload(10_700))).collect(),
        ),
        ("one 9.2 MB file", vec![("file:///bench/big.sr".to_string(), sr_testing::generated_workload(BIG_FILE_LINES))]),
    ];
    for ((title, files), edits) in workloads.into_iter().zip(EDITS) {
        let lines: usize = files.iter().map(|(_, text)| text.lines().count()).sum();
        let bytes: usize = files.iter().map(|(_, text)| text.len()).sum();
        println!("\n{title}: {lines} lines, {bytes} bytes");
        let start = Instant::now();
        for (uri, text) in &files {
            let open = json!({"textDocument": {"uri": uri, "languageId": "streetrace", "version": 0, "text": text}});
            client.notify("textDocument/didOpen", open)?;
        }
        for (uri, _) in &files {
            client.published(uri, 0)?;
        }
        println!("{:<44} {:>18.2?}", "open -> diagnostics published", start.elapsed());
        println!("idle: RSS {}, peak so far {}", client.memory("VmRSS:"), client.memory("VmHWM:"));
        let (uri, text) = &files[0];
        client.edits(uri, text, edits)?;
        for (label, method, params) in requests(uri, text) {
            client.measure(label, method, &params, runs)?;
        }
    }
    client.stop()?;
    workspace(&server)
}

/// Edit -> diagnostics of one of 5 open files of 10k lines, edits [`PACE`]
/// apart, on a server with no workspace folder and one whose folder also
/// holds 20 closed files of 10k lines and the big file, at the same time:
/// open documents' diagnostics must not wait for the workspace's.
fn workspace(server: &PathBuf) -> Result<(), String> {
    let dir = target_dir().join("bench-lsp-workspace");
    let write = |name: String, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok::<_, String>(path)
    };
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let text = sr_testing::generated_workload(10_700);
    for i in 0..20 {
        write(format!("closed{i}.sr"), &text)?;
    }
    write("big.sr".to_string(), &sr_testing::generated_workload(BIG_FILE_LINES))?;
    let mut open = Vec::new();
    for i in 0..5 {
        open.push(format!("file://{}", write(format!("open{i}.sr"), &text)?.display()));
    }
    let folder = format!("file://{}", dir.display());
    let scenarios = [
        ("5 open files, no workspace folder", None),
        ("the same beside 20 closed files of 10k lines and the 9.2 MB file", Some(folder.as_str())),
    ];
    let mut clients = Vec::new();
    for (_, root) in scenarios {
        let mut client = Client::spawn(server)?;
        let folders = root.map(|uri| json!([{"uri": uri, "name": "bench"}]));
        let init = json!({
            "processId": null,
            "rootUri": root,
            "workspaceFolders": folders,
            "capabilities": {},
            "trace": "messages",
            "initializationOptions": {"streetrace": {"debounceMs": 0}},
        });
        client.request("initialize", init)?;
        client.notify("initialized", json!({}))?;
        for uri in &open {
            let open = json!({"textDocument": {"uri": uri, "languageId": "streetrace", "version": 0, "text": text}});
            client.notify("textDocument/didOpen", open)?;
        }
        for uri in &open {
            client.published(uri, 0)?;
        }
        client.checks.clear();
        client.reset_peak();
        clients.push(client);
    }
    // The two servers' edits alternate, so that what else the machine does
    // meanwhile falls on both alike (run one after the other, the second ran
    // up to 20% slower, whichever it was).
    let mut times = vec![Vec::new(); clients.len()];
    let step = PACE / clients.len() as u32;
    for version in 1..=PACED_EDITS as i64 {
        for (client, times) in clients.iter_mut().zip(&mut times) {
            times.push(client.edit(&open[0], &text, version)?);
            std::thread::sleep(step);
        }
    }
    for (((title, root), mut client), times) in scenarios.into_iter().zip(clients).zip(times) {
        println!("\n{title}, {PACED_EDITS} edits {PACE:?} apart (alternating with the other)");
        client.report(times);
        if root.is_some() {
            edits_among_closed_checks(&mut client, &dir, (&open[0], &text))?;
        }
        client.stop()?;
    }
    std::fs::remove_dir_all(&dir).map_err(|e| format!("cannot remove {}: {e}", dir.display()))
}

/// Edit -> diagnostics while the server checks closed files: a closed file
/// changed on disk makes every file stale (the server cannot tell what
/// imported it), and once the server logs a batch of closed files checked,
/// the edit comes while it works through the rest (batches follow one
/// another with no pause): the edit waits for the running one to be cancelled.
fn edits_among_closed_checks(client: &mut Client, dir: &Path, (uri, text): (&str, &str)) -> Result<(), String> {
    let closed = dir.join("closed0.sr");
    let original = std::fs::read_to_string(&closed).map_err(|e| format!("{}: {e}", closed.display()))?;
    let mut times = Vec::new();
    for sample in 0..AMONG_CLOSED_CHECKS {
        let touched = format!("{original}# touched {sample}\n");
        std::fs::write(&closed, touched).map_err(|e| format!("{}: {e}", closed.display()))?;
        let batches = client.closed_batches;
        while client.closed_batches == batches {
            client.next()?;
        }
        times.push(client.edit(uri, text, (PACED_EDITS + 1 + sample) as i64)?);
    }
    // The server's checks here mix the edits' with the rounds the disk
    // changes started (every open document): not one figure.
    client.checks.clear();
    println!("edits while closed files are checked:");
    client.report(times);
    Ok(())
}

/// A duration as `{:?}` prints it: `850.3µs`, `2.1ms`, `1.2s`.
fn parse_duration(text: &str) -> Option<Duration> {
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().ok()?;
    let seconds = match unit {
        "ns" => number / 1e9,
        "µs" => number / 1e6,
        "ms" => number / 1e3,
        "s" => number,
        _ => return None,
    };
    Some(Duration::from_secs_f64(seconds))
}

/// The requests timed on `text`, the first file of a workload.
fn requests(uri: &str, text: &str) -> Vec<(&'static str, &'static str, Value)> {
    let position = |needle: &str, skip: usize| {
        let (line, l) = text.lines().enumerate().find(|(_, l)| l.contains(needle)).expect("the generator writes it");
        json!({"line": line, "character": l.find(needle).expect("found on this line") + skip})
    };
    let document = json!({"uri": uri});
    let at = |position: Value| json!({"textDocument": document, "position": position});
    let references = |position: Value| json!({"textDocument": document, "position": position, "context": {"includeDeclaration": true}});
    vec![
        ("hover on an agent", "textDocument/hover", at(position("run agent reviewer0", "run agent r".len()))),
        ("completion in a flow", "textDocument/completion", at(position("    $count = 0", "    $count = ".len()))),
        ("documentSymbol", "textDocument/documentSymbol", json!({"textDocument": document})),
        ("workspace/symbol \"\"", "workspace/symbol", json!({"query": ""})),
        ("workspace/symbol \"fixer1\"", "workspace/symbol", json!({"query": "fixer1"})),
        ("references of tool fs", "textDocument/references", references(position("tools fs", "tools ".len()))),
        ("references of $input_prompt", "textDocument/references", references(position("$input_prompt", 1))),
        ("references of field Finding0.line", "textDocument/references", references(position("    line: int", 4))),
        ("semanticTokens/full", "textDocument/semanticTokens/full", json!({"textDocument": document})),
        (
            "formatting",
            "textDocument/formatting",
            json!({"textDocument": document, "options": {"tabSize": 4, "insertSpaces": true}}),
        ),
    ]
}

struct Client {
    child: Child,
    stdin: ChildStdin,
    messages: Receiver<(Instant, Vec<u8>)>,
    next_id: i64,
    /// Versions of the diagnostics published per URI, not yet waited for.
    published: Vec<(String, i64)>,
    /// How long the server took to check open documents, per round, from its
    /// `$/logTrace` (with `trace` on), not yet taken.
    checks: Vec<Duration>,
    /// Batches of closed files the server logged having checked.
    closed_batches: usize,
}

impl Client {
    fn spawn(server: &PathBuf) -> Result<Client, String> {
        let mut child = Command::new(server)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", server.display()))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let mut stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        let (tx, messages) = channel();
        std::thread::spawn(move || {
            while let Some(body) = read_frame(&mut stdout) {
                if tx.send((Instant::now(), body)).is_err() {
                    return;
                }
            }
        });
        Ok(Client { child, stdin, messages, next_id: 1, published: Vec::new(), checks: Vec::new(), closed_batches: 0 })
    }

    fn write(&mut self, message: &Value) -> Result<(), String> {
        let body = serde_json::to_vec(message).map_err(|e| e.to_string())?;
        let header = format!("Content-Length: {}\r\n\r\n", body.len());
        self.stdin.write_all(header.as_bytes()).map_err(|e| format!("sr-lsp's stdin: {e}"))?;
        self.stdin.write_all(&body).map_err(|e| format!("sr-lsp's stdin: {e}"))?;
        self.stdin.flush().map_err(|e| format!("sr-lsp's stdin: {e}"))
    }

    fn notify(&mut self, method: &str, params: Value) -> Result<(), String> {
        self.write(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
    }

    /// Sends a request and waits for its answer: (time, bytes, answer).
    fn request(&mut self, method: &str, params: Value) -> Result<(Duration, usize, Value), String> {
        let id = self.next_id;
        self.next_id += 1;
        // From before the write: a quick answer can be read before it returns.
        let sent = Instant::now();
        self.write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        loop {
            let (at, body, message) = self.next()?;
            if message.get("id") == Some(&json!(id)) && message.get("method").is_none() {
                if let Some(error) = message.get("error") {
                    return Err(format!("{method}: {error}"));
                }
                return Ok((at - sent, body, message));
            }
        }
    }

    /// The next message from the server, after recording a publication or
    /// answering a request of the server's.
    fn next(&mut self) -> Result<(Instant, usize, Value), String> {
        let (at, body) = self
            .messages
            .recv_timeout(Duration::from_secs(120))
            .map_err(|e| format!("no message from sr-lsp in 120 s: {e}"))?;
        let message: Value = serde_json::from_slice(&body).map_err(|e| format!("sr-lsp wrote invalid JSON: {e}"))?;
        match (message.get("method").and_then(Value::as_str), message.get("id")) {
            (Some("textDocument/publishDiagnostics"), None) => {
                let params = &message["params"];
                let uri = params["uri"].as_str().unwrap_or_default().to_string();
                self.published.push((uri, params["version"].as_i64().unwrap_or(-1)));
            }
            (Some("$/logTrace"), None) => {
                // "diagnostics: checked 1 open documents in 2.1ms"
                let text = message["params"]["message"].as_str().unwrap_or_default();
                if let Some(took) =
                    text.strip_prefix("diagnostics: checked ").and_then(|t| t.split_once(" open documents in "))
                {
                    self.checks.extend(parse_duration(took.1));
                }
                self.closed_batches += usize::from(text.contains(" closed files in "));
            }
            (Some(_), Some(id)) => self.write(&json!({"jsonrpc": "2.0", "id": id, "result": null}))?,
            _ => {}
        }
        Ok((at, body.len(), message))
    }

    /// Waits until diagnostics of `uri` at `version` are published.
    fn published(&mut self, uri: &str, version: i64) -> Result<Instant, String> {
        let mut at = Instant::now();
        while !self.published.iter().any(|(u, v)| u == uri && *v == version) {
            at = self.next()?.0;
        }
        self.published.retain(|(u, v)| u != uri || *v > version);
        Ok(at)
    }

    fn stop(mut self) -> Result<(), String> {
        self.request("shutdown", Value::Null)?;
        self.notify("exit", Value::Null)?;
        let status = self.child.wait().map_err(|e| e.to_string())?;
        if !status.success() {
            return Err(format!("sr-lsp exited with {status}"));
        }
        Ok(())
    }

    /// Edit -> published diagnostics of the edited file, `samples` times
    /// in a row.
    fn edits(&mut self, uri: &str, text: &str, samples: usize) -> Result<(), String> {
        self.checks.clear();
        self.reset_peak();
        let times = (1..=samples as i64).map(|version| self.edit(uri, text, version)).collect::<Result<_, _>>()?;
        self.report(times);
        Ok(())
    }

    /// One edit (insert a `$` at odd versions, take it out at even ones) and
    /// the time to the edited file's diagnostics of `version`.
    fn edit(&mut self, uri: &str, text: &str, version: i64) -> Result<Duration, String> {
        let (line, character) = text
            .lines()
            .enumerate()
            .find_map(|(i, l)| l.find("return $r0").map(|c| (i, c + "return ".len())))
            .ok_or("no `return $r0` in the workload")?;
        let (end, new_text) = if version % 2 == 1 { (character, "$") } else { (character + 1, "") };
        let range = json!({"start": {"line": line, "character": character}, "end": {"line": line, "character": end}});
        let change = json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"range": range, "text": new_text}]});
        let sent = Instant::now();
        self.notify("textDocument/didChange", change)?;
        Ok(self.published(uri, version)? - sent)
    }

    /// Prints the percentiles of edit `times`, the memory, and (with `trace`
    /// on) how long the server's checks took.
    fn report(&mut self, mut times: Vec<Duration>) {
        times.sort();
        let percentile = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize];
        let label = format!("edit -> diagnostics, {}: p50 / p95", times.len());
        let time = format!("{:.2?} / {:.2?}", percentile(0.5), percentile(0.95));
        println!("{label:<44} {time:>18} {:>12} {:>10} {:>10}", "", self.memory("VmRSS:"), self.memory("VmHWM:"));
        println!("{:<44} {:>18.2?}", "edit -> diagnostics, slowest", times[times.len() - 1]);
        if !self.checks.is_empty() {
            let mut checks = std::mem::take(&mut self.checks);
            checks.sort();
            let at = |p: f64| checks[((checks.len() - 1) as f64 * p).round() as usize];
            let time = format!("{:.2?} / {:.2?}", at(0.5), at(0.95));
            println!("{:<44} {time:>18}", format!("  of which the server checked, {}: p50 / p95", checks.len()));
        }
    }

    fn measure(&mut self, label: &str, method: &str, params: &Value, runs: usize) -> Result<(), String> {
        let mut times = Vec::new();
        let mut bytes = 0;
        let mut peak: f64 = 0.0;
        for _ in 0..runs {
            self.reset_peak();
            let (time, size, answer) = self.request(method, params.clone())?;
            if answer.get("result").is_none_or(Value::is_null) {
                return Err(format!("{label}: answered null"));
            }
            times.push(time);
            bytes = size;
            peak = peak.max(self.mib("VmHWM:"));
        }
        let peak = format!("{peak:.1} MiB");
        times.sort();
        let time = format!("{:.2?} / {:.2?}", times[0], times[times.len() - 1]);
        let bytes = if bytes >= 1 << 20 { format!("{:.1} MB", bytes as f64 / 1e6) } else { format!("{bytes} B") };
        println!("{label:<44} {time:>18} {bytes:>12} {:>10} {peak:>10}", self.memory("VmRSS:"));
        Ok(())
    }

    /// Resets the server's peak resident memory to its current one.
    fn reset_peak(&self) {
        let _ = std::fs::write(format!("/proc/{}/clear_refs", self.child.id()), "5");
    }

    fn memory(&self, field: &str) -> String {
        format!("{:.1} MiB", self.mib(field))
    }

    /// A memory figure of the server's `/proc/PID/status`, in MiB.
    fn mib(&self, field: &str) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        let kb: f64 = status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(f64::NAN);
        kb / 1024.0
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One `Content-Length` frame's body, or `None` at the end of the output.
fn read_frame(reader: &mut impl BufRead) -> Option<Vec<u8>> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    reader.read_exact(&mut body).ok()?;
    Some(body)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    #[test]
    fn a_duration_reads_back_as_debug_prints_it() {
        for micros in [0, 7, 850, 2_100, 1_200_000] {
            let duration = Duration::from_micros(micros);
            let read = super::parse_duration(&format!("{duration:.1?}")).unwrap();
            assert!(read.abs_diff(duration) <= duration / 10, "{duration:?} read as {read:?}");
        }
        assert_eq!(super::parse_duration("2.1 ms"), None);
        assert_eq!(super::parse_duration("ms"), None);
    }
}
