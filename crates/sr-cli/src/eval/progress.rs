//! What `sr eval` shows while cases run: a progress bar on stderr (cases
//! done/total, pass rate, elapsed, ETA) when stderr is a terminal, else one
//! plain line per finished case.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use sr_eval::harness::Progress;
use sr_eval::names::variant_name;
use sr_eval::results::CaseResult;

pub struct Display {
    /// `None` when stderr is not a terminal.
    bar: Option<ProgressBar>,
}

impl Display {
    pub fn new(total: usize) -> Display {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(total as u64);
            let style =
                ProgressStyle::with_template("{bar:30} {pos}/{len} cases · {msg} · {elapsed} elapsed · ETA {eta}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar());
            bar.set_style(style);
            bar.set_message("pass rate -");
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        });
        Display { bar }
    }

    pub fn case_done(&self, progress: &Progress) {
        let line = line(progress);
        match &self.bar {
            Some(bar) => {
                bar.set_position(progress.done as u64);
                let rate = 100.0 * progress.passed as f64 / progress.done as f64;
                bar.set_message(format!("pass rate {rate:.1}%"));
                if !progress.case.passed {
                    bar.println(line);
                }
            }
            None => super::output::tell(&line),
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// `[3/10] PASS c1 (review.sr × default) score 1.00, 120 ms`, the epoch of
/// a case's second and later runs, and the reason of a failure.
fn line(progress: &Progress) -> String {
    let case = progress.case;
    let verdict = if case.passed { "PASS" } else { "FAIL" };
    let epoch = if case.epoch > 1 { format!(" epoch {}", case.epoch) } else { String::new() };
    let mut line = format!(
        "[{}/{}] {verdict} {}{epoch} ({}) score {:.2}, {} ms",
        progress.done,
        progress.total,
        case.id,
        variant_name(&case.variant()),
        case.score,
        case.latency_ms
    );
    if let Some(reason) = reason(case) {
        line.push_str(": ");
        line.push_str(&reason);
    }
    line
}

fn reason(case: &CaseResult) -> Option<String> {
    let text = case
        .error
        .clone()
        .or_else(|| case.scores.iter().find(|s| !s.passed).map(|s| format!("{}: {}", s.kind, s.detail)))?;
    Some(text.split_whitespace().collect::<Vec<_>>().join(" "))
}
