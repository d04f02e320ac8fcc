//! `report.html` opened in headless Chromium: the report of a real run (the
//! code-review bench replayed offline, two variants with passing and failing
//! cases) as the browser parsed it, and nothing in the browser's console. A
//! control page, the bench's shipped report with a throwing script and a
//! remote image added, shows that the console is really read. The report's
//! screenshot in docs/eval.md is taken here (`UPDATE_EXPECT=1` writes it to
//! docs/images/eval-report.png), and so is the compare page's (`sr eval
//! compare --html`, review.sr against split.sr: docs/images/eval-compare.png).
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

/// The screenshot's size in pixels.
const SHOT: (u32, u32) = (1000, 1150);

/// A PNG of `page` as headless Chromium draws it in a SHOT-sized window, offline.
fn screenshot(page: &Path, scratch: &Path) -> Vec<u8> {
    std::fs::create_dir_all(scratch).unwrap();
    let shot = scratch.join("shot.png");
    let mut child = Command::new("chromium")
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars"])
        .args(["--disable-background-networking", "--disable-component-update", "--proxy-server=127.0.0.1:9"])
        .arg(format!("--user-data-dir={}", scratch.join("profile").display()))
        .arg(format!("--window-size={},{}", SHOT.0, SHOT.1))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > BROWSER_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not take the screenshot of {} in {BROWSER_TIMEOUT:?}", page.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    std::fs::read(&shot).unwrap()
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

/// The code-review bench, both workloads, three epochs, replayed offline
/// into `out`: its results.json.
fn replay_bench(out: &Path) -> Value {
    let bench = sr_testing::workspace_root().join("examples/code-review-bench");
    let args = [
        "eval",
        "dataset.yaml",
        "--workload",
        "review.sr",
        "--workload",
        "split.sr",
        "--epochs",
        "3",
        "--replay-from",
        "cassettes",
    ];
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
    assert_eq!((summary.len(), cases.len()), (2, 48));
    assert!(cases.iter().any(|c| c["passed"] == true) && cases.iter().any(|c| c["passed"] == false));

    let page = dir.join("out/report.html");
    let rendered = render(&page, &dir.join("report-browser"));
    assert!(rendered.console.is_empty(), "the report wrote to the console:\n{}", rendered.console.join("\n"));
    let dom = &rendered.dom;

    // The verdict of split.sr against review.sr first.
    assert!(
        dom.contains(
            "<p class=\"verdict\">split vs review: no significant difference in pass rate (+25.0 points, p = 0.31)"
        ),
        "{dom}"
    );
    let markdown = std::fs::read_to_string(dir.join("out/report.md")).unwrap();
    assert!(markdown.contains("\n\nsplit vs review: no significant difference in pass rate"), "{markdown}");

    // One row per variant, in the table the browser built, under its short
    // label (the file stem) with the full name to hover.
    let body = between(dom, "<table id=\"summary\">", "</table>");
    let body = between(body, "<tbody>", "</tbody>");
    assert_eq!(body.matches("<tr>").count(), summary.len(), "{body}");
    for s in summary {
        let workload = s["workload"].as_str().unwrap();
        let stem = workload.trim_end_matches(".sr");
        let row = format!(
            "<tr><td><span title=\"{workload} × default\">{stem}</span></td><td>8</td><td>{}/{}</td>",
            s["passed"], s["total"]
        );
        assert!(body.contains(&row), "no row {row} in {body}");
    }
    // Precision, recall and F1 per variant, micro and macro, with intervals.
    let findings = between(dom, "<table id=\"findings\">", "</table>");
    assert_eq!(findings.matches("<td>micro</td>").count(), 2, "{findings}");
    assert!(findings.contains("<td>0.74 [0.47, 0.95]</td>"), "review.sr's micro F1: {findings}");

    // Per variant: its label on a line of its own, then bars of 400 px at
    // 100% for pass rate, mean score and F1, each with its interval drawn.
    let chart = between(dom, "<svg id=\"chart\"", "</svg>");
    for class in ["pass-rate", "mean-score", "f1", "cost"] {
        assert_eq!(chart.matches(&format!("<rect class=\"{class}\"")).count(), summary.len(), "{class}: {chart}");
    }
    assert_eq!(chart.matches("<g class=\"ci\"").count(), 3 * summary.len(), "{chart}");
    for s in summary {
        let width = format!("width=\"{:.1}\"", 400.0 * s["pass_rate"].as_f64().unwrap());
        assert!(chart.contains(&width), "no pass-rate bar {width} in {chart}");
        let low = 100.0 + 400.0 * s["pass_rate_ci"]["low"].as_f64().unwrap();
        assert!(chart.contains(&format!("<line x1=\"{low:.1}\"")), "no interval from {low:.1} in {chart}");
    }

    // Every case run is a collapsed <details> holding its transcript, the
    // model and tool steps first.
    let entries: Vec<&str> = dom.split("<details class=\"case ").skip(1).collect();
    assert_eq!(entries.len(), cases.len());
    for entry in &entries {
        let entry = &entry[..entry.find("</details>").expect("a case entry is closed")];
        assert!(entry.starts_with("pass") || entry.starts_with("fail"), "{entry}");
        assert!(
            entry.contains("<ol class=\"steps\"><li class=\"step-model\"><b>model</b>"),
            "a case without its steps: {entry}"
        );
    }
    let failed = cases.iter().filter(|c| c["passed"] == false).count();
    assert_eq!(dom.matches("<details class=\"case fail").count(), failed);

    // The screenshot: a PNG of the window's size.
    let png = screenshot(&page, &dir.join("shot-browser"));
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let size = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
    assert_eq!((size(16), size(20)), SHOT);
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(sr_testing::workspace_root().join("docs/images/eval-report.png"), &png).unwrap();
    }
}

#[test]
fn the_compare_page_renders_in_chromium_with_the_verdict_gate_and_transcripts_side_by_side() {
    if !sr_testing::required(chromium_available(), "chromium (headless) for the HTML report") {
        return;
    }
    let dir = temp("compare");
    replay_bench(&dir.join("out"));
    let results = dir.join("out/results.json");
    let page = dir.join("out/compare.html");
    let compare = Command::new(env!("CARGO_BIN_EXE_sr"))
        .args(["eval", "compare"])
        .args([&results, &results])
        .args(["--base-variant", "review", "--new-variant", "split", "--gate", "f1 drop > 0.03"])
        .args(["--gate", "tokens rise > 50%", "--html"])
        .arg(&page)
        .output()
        .unwrap();
    // split.sr doubles the tokens in every case (p = 2 / 2^8): the tokens rule fails.
    assert_eq!(compare.status.code(), Some(1), "{}", String::from_utf8_lossy(&compare.stdout));
    let rendered = render(&page, &dir.join("compare-browser"));
    assert!(rendered.console.is_empty(), "the page wrote to the console:\n{}", rendered.console.join("\n"));
    let dom = &rendered.dom;
    assert!(dom.contains("<h1>Comparison: the gate fails</h1>"), "{dom}");
    assert!(
        dom.contains(
            "<p class=\"verdict\">split vs review: no significant difference in pass rate (+25.0 points, p = 0.31)"
        ),
        "{dom}"
    );
    let gate = between(dom, "<table id=\"gate\">", "</table>");
    assert!(gate.contains("<td>f1 drop &gt; 0.03</td><td>split.sr × default</td><td>-0.194</td>"), "{gate}");
    assert!(gate.contains("<td>tokens rise &gt; 50%</td><td>split.sr × default</td><td>100.000</td><td>0.0078</td><td class=\"gate-fail\">FAIL</td>"), "{gate}");
    let differences = between(dom, "<table class=\"differences\">", "</table>");
    assert!(differences.contains("<tr><td>pass rate</td><td>62.500</td><td>87.500</td><td>+25.000</td><td>[-22.222, +66.667]</td><td>0.31</td><td>paired-permutation</td></tr>"), "{differences}");
    // Five cases changed; each shows review's runs beside split's, with their steps.
    let changed: Vec<&str> = dom.split("<div class=\"sides\">").skip(1).collect();
    assert_eq!(changed.len(), 5, "{dom}");
    for sides in changed {
        let (base, new) = sides.split_at(sides.find("<h3>new: ").expect("a new side"));
        assert!(base.trim_start().starts_with("<div><h3>base: review.sr × default</h3>"), "{base}");
        assert!(new.starts_with("<h3>new: split.sr × default</h3>"), "{new}");
        for side in [base, new] {
            assert_eq!(side.matches("<ol class=\"steps\">").count(), 3, "three epochs' transcripts: {side}");
        }
    }
    let png = screenshot(&page, &dir.join("compare-shot"));
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(sr_testing::workspace_root().join("docs/images/eval-compare.png"), &png).unwrap();
    }
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
