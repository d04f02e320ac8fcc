//! `report.html` opened in headless Chromium: the report of a real run (the
//! code-review bench replayed offline, two variants with passing and failing
//! cases) as the browser parsed it, and nothing in the browser's console. A
//! control page, the bench's shipped report with a throwing script and a
//! remote image added, shows that the console is really read.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Chromium's whole run on one page, startup included.
const BROWSER_TIMEOUT: Duration = Duration::from_secs(90);

/// A page as Chromium left it: its DOM after load, and what the page wrote to
/// the console (messages, uncaught exceptions, blocked loads).
struct Rendered {
    dom: String,
    console: Vec<String>,
}

fn chromium_available() -> bool {
    Command::new("chromium").arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok()
}

/// Opens `page` in headless Chromium with a fresh profile, offline (every
/// request goes to a proxy where nothing listens), and kills it if it takes
/// longer than BROWSER_TIMEOUT.
fn render(page: &Path, scratch: &Path) -> Rendered {
    std::fs::create_dir_all(scratch).unwrap();
    let profile = scratch.join("profile");
    let (dom_path, log_path) = (scratch.join("dom.html"), scratch.join("chromium.log"));
    let mut child = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--proxy-server=127.0.0.1:9",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&dom_path).unwrap())
        .stderr(std::fs::File::create(&log_path).unwrap())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > BROWSER_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish {} in {BROWSER_TIMEOUT:?}", page.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(status.success(), "chromium failed ({status}):\n{log}");
    // Chromium logs each console message as `[…:INFO:CONSOLE:<line>] "<message>", source: <url> (<line>)`.
    let console = log.lines().filter(|line| line.contains(":CONSOLE")).map(str::to_string).collect();
    Rendered { dom: std::fs::read_to_string(&dom_path).unwrap(), console }
}

/// The part of `text` from the first `start` to the next `end` after it.
fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text.find(start).unwrap_or_else(|| panic!("no {start} in\n{text}"));
    let to = text[from..].find(end).unwrap_or_else(|| panic!("no {end} after {start}")) + from;
    &text[from..to]
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sr-eval-html-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The code-review bench, both workloads, replayed offline into `out`: its results.json.
fn replay_bench(out: &Path) -> Value {
    let bench = sr_testing::workspace_root().join("examples/code-review-bench");
    let args =
        ["eval", "dataset.yaml", "--workload", "review.sr", "--workload", "split.sr", "--replay-from", "cassettes"];
    let run = Command::new(env!("CARGO_BIN_EXE_sr"))
        .args(args)
        .args(["--jobs", "2", "--out", out.to_str().unwrap()])
        .current_dir(bench)
        .env("NO_COLOR", "1")
        .env("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
        .env("OPENAI_API_KEY", "unused")
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap()
}

#[test]
fn the_report_renders_in_chromium_with_its_rows_chart_and_transcripts_and_a_clean_console() {
    if !sr_testing::required(chromium_available(), "chromium (headless) for the HTML report") {
        return;
    }
    let dir = temp("report");
    let results = replay_bench(&dir.join("out"));
    let summary = results["summary"].as_array().unwrap();
    let cases = results["cases"].as_array().unwrap();
    assert_eq!((summary.len(), cases.len()), (2, 16));
    assert!(cases.iter().any(|c| c["passed"] == true) && cases.iter().any(|c| c["passed"] == false));

    let page = dir.join("out/report.html");
    let rendered = render(&page, &dir.join("report-browser"));
    assert!(rendered.console.is_empty(), "the report wrote to the console:\n{}", rendered.console.join("\n"));
    let dom = &rendered.dom;

    // One row per variant, in the table the browser built.
    let body = between(dom, "<table id=\"summary\">", "</table>");
    let body = between(body, "<tbody>", "</tbody>");
    assert_eq!(body.matches("<tr>").count(), summary.len(), "{body}");
    for s in summary {
        let row = format!(
            "<tr><td>{} × default</td><td>{}/{}</td>",
            s["workload"].as_str().unwrap(),
            s["passed"],
            s["total"]
        );
        assert!(body.contains(&row), "no row {row} in {body}");
    }

    // Two bars per variant inside the chart, the pass-rate bar of 300 px at 100%.
    let chart = between(dom, "<svg id=\"chart\"", "</svg>");
    assert_eq!(chart.matches("<rect class=\"pass-rate\"").count(), summary.len(), "{chart}");
    assert_eq!(chart.matches("<rect class=\"cost\"").count(), summary.len(), "{chart}");
    for s in summary {
        let width = format!("width=\"{:.1}\"", 300.0 * s["pass_rate"].as_f64().unwrap());
        assert!(chart.contains(&width), "no pass-rate bar {width} in {chart}");
    }

    // Every case is a collapsed <details> holding its transcript.
    let entries: Vec<&str> = dom.split("<details class=\"case ").skip(1).collect();
    assert_eq!(entries.len(), cases.len());
    for entry in &entries {
        let entry = &entry[..entry.find("</details>").expect("a case entry is closed")];
        assert!(entry.starts_with("pass\"><summary>") || entry.starts_with("fail\"><summary>"), "{entry}");
        assert!(entry.contains("<ol class=\"transcript\"><li><b>"), "a case without its transcript: {entry}");
    }
    let failed = cases.iter().filter(|c| c["passed"] == false).count();
    assert_eq!(dom.matches("<details class=\"case fail\">").count(), failed);
}

#[test]
fn the_console_check_sees_a_throwing_script_and_a_blocked_remote_load() {
    if !sr_testing::required(chromium_available(), "chromium (headless) for the HTML report") {
        return;
    }
    let dir = temp("control");
    let shipped = sr_testing::workspace_root().join("examples/code-review-bench/report.html");
    let report = std::fs::read_to_string(shipped).unwrap();
    // The script comes before the page's policy, which blocks the image after it.
    let broken = report.replacen("<head>", "<head><script>document.title.missing.boom()</script>", 1).replacen(
        "</body>",
        "<img src=\"https://example.com/pixel.png\"></body>",
        1,
    );
    let page = dir.join("broken.html");
    std::fs::write(&page, broken).unwrap();
    let console = render(&page, &dir.join("browser")).console.join("\n");
    assert!(console.contains("Uncaught TypeError"), "{console}");
    assert!(
        console.contains("https://example.com/pixel.png") && console.contains("Content Security Policy"),
        "{console}"
    );
}
