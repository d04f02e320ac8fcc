//! `sr eval compare`, `merge` and `report`: result sets in, a verdict or
//! results and reports out.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use sr_eval::compare::{Comparison, Options};
use sr_eval::merge::Part;
use sr_eval::results::Results;

use super::output::{fail, read_results, say, tell, write_reports};

/// The directory a results file is in (its events paths are relative to it).
fn dir_of(path: &Path) -> PathBuf {
    path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf()
}

pub fn compare(base_path: &Path, new_path: &Path, options: &Options, json: bool, html: Option<&Path>) -> ExitCode {
    let (base, new) = match (read_results(base_path), read_results(new_path)) {
        (Ok(base), Ok(new)) => (base, new),
        (Err(e), _) | (_, Err(e)) => return fail(e, 2),
    };
    let comparison = match sr_eval::compare::compare(&base, &new, options) {
        Ok(comparison) => comparison,
        Err(e) => return fail(e, 2),
    };
    if let Some(page) = html {
        let text = sr_eval::html::compare::page(&comparison, (&base, &dir_of(base_path)), (&new, &dir_of(new_path)));
        if let Err(e) = std::fs::write(page, text) {
            return fail(format!("cannot write {}: {e}", page.display()), 2);
        }
    }
    if json {
        say(&serde_json::to_string_pretty(&comparison).unwrap_or_default());
    } else {
        let text = comparison.text();
        say(text.trim_end());
    }
    if comparison.regressed {
        explain(&comparison, options);
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// Why the gate failed, on stderr.
fn explain(comparison: &Comparison, options: &Options) {
    let missing = &comparison.missing;
    if (!missing.runs.is_empty() || !missing.variants.is_empty()) && !options.allow_missing {
        tell(&format!(
            "missing: {} case run(s) and {} variant(s) of the base are not in the new results \
             (--allow-missing compares what there is)",
            missing.runs.len(),
            missing.variants.len()
        ));
    }
    let failed = comparison.gate.iter().filter(|j| j.failed).count();
    if failed > 0 {
        tell(&format!("regression: {failed} gate rule(s) failed (the FAIL lines above)"));
    }
}

/// `sr eval --baseline`: the run's results against the baseline's, the
/// verdict and the gate printed, `compare.html` written in `out`; whether
/// the gate failed.
pub fn gate(base: &Results, base_path: &Path, new: &Results, out: &Path, options: &Options) -> Result<bool, String> {
    let comparison = sr_eval::compare::compare(base, new, options)?;
    let page = out.join("compare.html");
    let text = sr_eval::html::compare::page(&comparison, (base, &dir_of(base_path)), (new, out));
    std::fs::write(&page, text).map_err(|e| format!("cannot write {}: {e}", page.display()))?;
    say(&format!("against the baseline {}:", base_path.display()));
    for sentence in &comparison.verdict {
        say(sentence);
    }
    for judgement in &comparison.gate {
        say(&format!("  {}", sr_eval::compare::judgement_line(judgement)));
    }
    say(&format!("compare: {}", page.display()));
    if comparison.regressed {
        explain(&comparison, options);
    }
    Ok(comparison.regressed)
}

pub fn merge(parts: &[PathBuf], out: &Path) -> ExitCode {
    let mut read = Vec::new();
    for path in parts {
        match read_results(path) {
            Ok(results) => read.push(Part { results, dir: dir_of(path) }),
            Err(e) => return fail(e, 2),
        }
    }
    let merged = match sr_eval::merge::merge(read, &dir_of(out)) {
        Ok(merged) => merged,
        Err(e) => return fail(e, 2),
    };
    let text = serde_json::to_string_pretty(&merged).unwrap_or_default();
    if let Err(e) = std::fs::write(out, text) {
        return fail(format!("cannot write {}: {e}", out.display()), 2);
    }
    if let Some(partial) = merged.partial() {
        say(&partial);
    }
    say(&format!(
        "merged: {} ({} case runs); `sr eval report {}` writes its reports",
        out.display(),
        merged.finished,
        out.display()
    ));
    ExitCode::SUCCESS
}

pub fn report(results: &Path, out: Option<&Path>) -> ExitCode {
    let read = match read_results(results) {
        Ok(read) => read,
        Err(e) => return fail(e, 2),
    };
    let events = dir_of(results);
    let out = out.map_or_else(|| events.clone(), Path::to_path_buf);
    if let Err(e) = std::fs::create_dir_all(&out) {
        return fail(format!("cannot make {}: {e}", out.display()), 2);
    }
    if let Err(e) = write_reports(&read, &events, &out) {
        return fail(e, 2);
    }
    if let Some(partial) = read.partial() {
        say(&partial);
    }
    say(&format!("report: {} (and report.html)", out.join("report.md").display()));
    ExitCode::SUCCESS
}
