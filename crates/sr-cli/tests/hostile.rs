//! Hostile input through `sr check` (JSON and text), `sr fmt --check` and `sr dump
//! syntax`: every expression construct nested 20,000 deep, every block construct
//! nested as deep as the 16 MiB source cap allows, 10 MB lines, names and
//! unterminated strings, NUL bytes, mixed line endings, an 8,000-agent ring,
//! 20,000 prompts, and every diagnostic code and every construct repeated
//! thousands of times. Each run must end by itself with exit code 0, 1 or 2
//! (never a signal), in bounded memory; `check` must still report the error in
//! the well-formed flow after the hostile part, and its text output stays small
//! however many diagnostics there are.
#![allow(clippy::unwrap_used)]

#[allow(dead_code)] // `common` also serves tests that use more of it.
mod common;

use std::process::Command;
use std::time::Instant;

use common::temp_dir;
use sr_testing::hostile;

/// Peak resident memory any one run may reach.
const MAX_RSS_KIB: u64 = 1024 * 1024;

/// How long one run may take (the slowest case takes about 7 s in a debug
/// build): past it a run is a hang, or work growing faster than its input.
const MAX_SECONDS: u32 = 120;

struct Outcome {
    code: i32,
    stdout: String,
    max_rss_kib: u64,
    seconds: f64,
}

/// Runs `sr ARGS` under GNU time for its peak resident memory, and under
/// coreutils' `timeout` (which exits 124 when it stops a run).
fn run(args: &[&str], dir: &std::path::Path) -> Outcome {
    let time = std::path::Path::new("/usr/bin/time");
    assert!(time.exists(), "GNU time is needed for peak memory (apt-get install time)");
    let timeout = Command::new("timeout").arg("--version").output();
    assert!(timeout.is_ok_and(|o| o.status.success()), "coreutils' timeout is needed to stop a hang");
    let report = dir.join("time.txt");
    let started = Instant::now();
    let out = Command::new(time)
        .arg("-f")
        .arg("%M")
        .arg("-o")
        .arg(&report)
        .arg("timeout")
        .arg(MAX_SECONDS.to_string())
        .arg(sr_testing::hostile_binary("sr", env!("CARGO_BIN_EXE_sr")))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        // Only `check`'s output is looked at; a dump is the tokens times the tree's depth.
        .stdout(if args[0] == "check" { std::process::Stdio::piped() } else { std::process::Stdio::null() })
        .output()
        .unwrap();
    let seconds = started.elapsed().as_secs_f64();
    let report = std::fs::read_to_string(&report).unwrap();
    // GNU time writes "Command terminated by signal N" before the figure when killed.
    assert!(!report.contains("signal"), "sr {args:?} was killed: {report}");
    let max_rss_kib = report.lines().last().and_then(|l| l.trim().parse().ok()).unwrap();
    assert_ne!(out.status.code(), Some(124), "sr {args:?} ran over {MAX_SECONDS} s");
    Outcome {
        code: out.status.code().unwrap(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        max_rss_kib,
        seconds,
    }
}

/// A flow after the hostile part with an error `check` must still report.
const TAIL: &str = "\nflow tail:\n    log $nope\n";

/// The most `sr check` may print as text: a hundred diagnostics, each cut to
/// a window of its line.
const MAX_TEXT_BYTES: usize = 512 * 1024;

fn survive(g: &hostile::Generator, n: usize) {
    let mut files = g.files(n);
    files[0].1.push_str(TAIL);
    let name = g.name;
    let named: Vec<(&str, &str)> = files.iter().map(|(name, text)| (*name, text.as_str())).collect();
    let dir = temp_dir(&format!("hostile-{name}"), &named);
    let too_big = files[0].1.len() as u64 > sr_files::MAX_SOURCE_BYTES;
    for args in [
        &["check", "--format", "json", "case.sr"][..],
        &["check", "case.sr"],
        &["fmt", "--check", "case.sr"],
        &["dump", "syntax", "case.sr"],
    ] {
        let outcome = run(args, &dir);
        eprintln!(
            "{name:24} {n:>9} {:8} sr {:19}: exit {}, {:6.2} s, {:7} KiB",
            g.unit,
            args[..args.len() - 1].join(" "),
            outcome.code,
            outcome.seconds,
            outcome.max_rss_kib
        );
        assert!([0, 1, 2].contains(&outcome.code), "{name}: sr {args:?} exited {}", outcome.code);
        assert!(outcome.max_rss_kib < MAX_RSS_KIB, "{name}: sr {args:?} used {} KiB", outcome.max_rss_kib);
        if args == ["check", "case.sr"] {
            assert!(outcome.stdout.len() < MAX_TEXT_BYTES, "{name}: {} bytes of text", outcome.stdout.len());
            assert!(too_big || outcome.stdout.contains("case.sr"), "{name}: {}", outcome.stdout);
        } else if args[0] == "check" {
            if too_big {
                assert_eq!(outcome.code, 2, "{name}: a file over the source cap is refused");
            } else {
                assert!(
                    outcome.stdout.contains("'$nope'"),
                    "{name}: the flow after the hostile part was not checked: {}",
                    &outcome.stdout[..outcome.stdout.len().min(2000)]
                );
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn deeply_nested_expressions() {
    for g in hostile::EXPRESSIONS {
        survive(g, 20_000);
    }
}

/// One space per level: 3,500 levels of blocks with an `end` line take about
/// 12 MB, under the 16 MiB cap; 6,000 levels of `if` are over it and must be
/// refused, not parsed.
#[test]
fn deeply_nested_blocks() {
    for g in hostile::BLOCKS {
        survive(g, 3_500);
    }
    survive(&hostile::BLOCKS[0], 6_000);
}

#[test]
fn huge_and_odd_inputs() {
    for (name, n) in [
        ("long-line", 10_000_000),
        ("unterminated-string", 10_000_000),
        ("unterminated-triple", 2_000_000),
        ("unclosed-interpolations", 100_000),
        ("dotted-name", 10_000_000),
        ("nul-bytes", 1_000_000),
        ("nul-lines", 100_000),
        // Each invalid character is a diagnostic: about 1.1 KB apiece (docs/limits.md).
        ("nul-line", 200_000),
        ("delegate-ring", 8_000),
        ("nested-if-statements", 3_000),
        ("prompts", 20_000),
        ("flow-fan-out", 8_000),
        ("mixed-line-endings", 100_000),
        ("many-errors", 100_000),
    ] {
        survive(hostile::generator(name), n);
    }
}

/// A 10 MB `"""` that is never closed is checked in at most ten times its
/// size, beyond what checking an empty file takes (the program itself); it
/// took 1.0 GB when the text after the quote was lexed as code.
#[test]
fn an_unclosed_triple_quote_is_checked_in_ten_times_its_size() {
    let text = (hostile::generator("unterminated-triple").make)(10_000_000) + TAIL;
    let dir = temp_dir("hostile-unclosed-memory", &[("case.sr", &text), ("empty.sr", "")]);
    let base = run(&["check", "--format", "json", "empty.sr"], &dir).max_rss_kib;
    let outcome = run(&["check", "--format", "json", "case.sr"], &dir);
    let used = (outcome.max_rss_kib - base) * 1024;
    eprintln!("unclosed \"\"\": {used} bytes beyond the {base} KiB of an empty check, {:.2} s", outcome.seconds);
    assert!(used <= 10 * text.len() as u64, "{used} bytes for {} bytes of text", text.len());
    assert!(outcome.stdout.contains("'$nope'"), "the flow after the quote was not checked");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every diagnostic code and every construct, 2,000 times over.
#[test]
fn every_code_and_construct_repeated() {
    for g in hostile::codes::CODES.iter().chain(hostile::constructs::CONSTRUCTS) {
        survive(g, 2_000);
    }
}

/// `sr check | head`: the reader goes away after a few lines; `sr` ends by
/// SIGPIPE as Unix tools do, without a panic message. The report (a file's
/// errors are capped) is many times a pipe's buffer, so `sr` is still
/// writing when the reader leaves, however fast it is.
#[test]
fn closed_output_pipe_is_not_a_panic() {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    let text = (hostile::generator("many-errors").make)(5_000);
    let names: Vec<String> = (0..40).map(|n| format!("case{n}.sr")).collect();
    let files: Vec<(&str, &str)> = names.iter().map(|name| (name.as_str(), text.as_str())).collect();
    let dir = temp_dir("hostile-pipe", &files);
    let mut child = Command::new(sr_testing::hostile_binary("sr", env!("CARGO_BIN_EXE_sr")))
        .args(["check", "."])
        .current_dir(&dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 64];
    child.stdout.as_mut().unwrap().read_exact(&mut first).unwrap();
    drop(child.stdout.take());
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGPIPE), "{status:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}
