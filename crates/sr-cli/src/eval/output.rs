//! What `sr eval` writes and prints. Results and reports are written first;
//! what is printed afterwards ignores a closed stdout or stderr (`sr eval … |
//! head` ends the reader, not the evaluation), so nothing is lost to a pipe.

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use sr_eval::names::variant_name;
use sr_eval::report::estimate;
use sr_eval::results::Results;

/// A line on stdout; a closed stdout is not an error.
pub fn say(line: &str) {
    let _ = writeln!(std::io::stdout(), "{line}");
}

/// A line on stderr; a closed stderr is not an error.
pub fn tell(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

pub fn fail(message: impl std::fmt::Display, code: u8) -> ExitCode {
    tell(&format!("error: {message}"));
    ExitCode::from(code)
}

/// `results.json`, `report.md` and `report.html` in `out`; transcripts are
/// read from the events files under `events`.
pub fn write_results(results: &Results, out: &Path) -> Result<(), String> {
    write_json(results, out)?;
    write_reports(results, out, out)
}

/// `results.json` in `out`, replaced whole: a process killed while writing
/// it leaves the old one (written beside it, then renamed over it).
pub fn write_json(results: &Results, out: &Path) -> Result<(), String> {
    let json = serde_json::to_string_pretty(results).map_err(|e| e.to_string())?;
    let path = out.join("results.json");
    let next = out.join("results.json.tmp");
    write(&next, json)?;
    std::fs::rename(&next, &path).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

pub fn write_reports(results: &Results, events: &Path, out: &Path) -> Result<(), String> {
    write(&out.join("report.md"), sr_eval::report::markdown(results))?;
    write(&out.join("report.html"), sr_eval::html::report(results, events))
}

fn write(path: &Path, text: String) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

pub fn read_results(path: &Path) -> Result<Results, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Results::read(&text).map_err(|e| format!("{}:{}:{}: not eval results: {e}", path.display(), e.line(), e.column()))
}

/// Whether the run is complete, then per variant its figures with their 95%
/// intervals, the verdict of each variant against the first, then where the
/// results are.
pub fn print_summary(results: &Results, out: &Path) {
    if let Some(partial) = results.partial() {
        say(&partial);
    }
    for s in &results.summary {
        let mut line = format!(
            "{}: {}/{} passed, pass rate {:.1}% [{:.1}, {:.1}], mean score {:.3}",
            variant_name(&s.variant()),
            s.passed,
            s.total,
            s.pass_rate * 100.0,
            s.pass_rate_ci.low * 100.0,
            s.pass_rate_ci.high * 100.0,
            s.mean_score
        );
        if let Some(i) = s.mean_score_ci {
            let _ = write!(line, " [{:.2}, {:.2}]", i.low, i.high);
        }
        if let Some(f) = &s.findings {
            let _ = write!(
                line,
                ", F1 {}, precision {}, recall {}",
                estimate(&f.micro.f1),
                estimate(&f.micro.precision),
                estimate(&f.micro.recall)
            );
        }
        say(&line);
    }
    for sentence in sr_eval::compare::verdicts(results) {
        say(&sentence);
    }
    say(&format!("results: {}", out.join("results.json").display()));
    say(&format!("report: {} (and report.html)", out.join("report.md").display()));
}
