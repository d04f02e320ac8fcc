//! Workspace-wide requests grow linearly with the program: references of a
//! variable that every flow assigns and every prompt no flow calls
//! interpolates (each such prompt shares variables with every flow that
//! assigns one of its `${x}`, so a pairwise search is quadratic here; it took
//! minutes on the 9.2 MB benchmark file once). Measured as sr-hir's scaling test
//! measures checking: the input made eight times larger once a request takes
//! 40 ms, best of three when it looks superlinear.
#![allow(clippy::unwrap_used)]

use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use sr_ide::{AnalysisHost, FilePosition, TextSize};
use sr_testing::hostile::{FILE, Generator};
use sr_testing::scaling::{Scaling, growth};

/// Quadratic work doubles to 4 per doubling; linear work with timer noise stays under this.
const MAX_PER_DOUBLING: f64 = 2.6;

fn shared_variable(n: usize) -> String {
    let mut text = String::new();
    for i in 0..n {
        let _ = write!(
            text,
            "flow f{i}:\n    $shared = \"{i}\"\n    log $shared\nprompt p{i}: \"\"\"About ${{shared}}\"\"\"\n"
        );
    }
    text
}

const SHARED_VARIABLE: Generator = Generator::new("shared-variable", "flows and prompts", shared_variable);

fn references_time(files: &[(&str, String)]) -> Duration {
    let (_, text) = files.iter().find(|(name, _)| *name == FILE).unwrap();
    let path = Path::new("/scaling/main.sr");
    let mut host = AnalysisHost::new();
    host.set_file(path, text.as_str());
    let analysis = host.analysis();
    // Parse and check first: the request alone is timed.
    analysis.diagnostics(path, sr_ide::DiagnosticsMode::Default).unwrap();
    let offset = TextSize::from(text.find("$shared").unwrap() as u32 + 1);
    let started = Instant::now();
    let found = analysis.find_references(&FilePosition { path: path.to_path_buf(), offset }, true).unwrap();
    let elapsed = started.elapsed();
    // Every flow's two spellings and every prompt's one.
    let groups = text.matches("\nprompt p").count();
    assert_eq!(found.len(), 3 * groups, "references of $shared in {groups} groups");
    elapsed
}

#[test]
fn references_of_a_variable_shared_by_every_flow_and_prompt_grow_linearly() {
    let measure = |runs| {
        let scaling = Scaling { target: Duration::from_millis(40), factor: 8, max_bytes: 16 << 20, runs };
        growth(&SHARED_VARIABLE, &scaling, &mut references_time)
    };
    let mut growth = measure(1);
    if growth.per_doubling() > MAX_PER_DOUBLING {
        growth = measure(3);
    }
    let per_doubling = growth.per_doubling();
    eprintln!(
        "{} → {} groups: {:?} → {:?}, ×{per_doubling:.2} per doubling",
        growth.small.n, growth.large.n, growth.small.time, growth.large.time
    );
    assert!(
        per_doubling <= MAX_PER_DOUBLING,
        "references grow superlinearly: ×{per_doubling:.2} per doubling ({} → {} groups: {:?} → {:?})",
        growth.small.n,
        growth.large.n,
        growth.small.time,
        growth.large.time
    );
}
