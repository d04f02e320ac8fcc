//! `cargo cycles`: the module-cycle check of the workspace this binary was built in.
// A developer tool: its verdict goes to stdout.
#![allow(clippy::print_stdout)]

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    if std::env::args().len() > 1 {
        eprintln!("usage: cargo cycles");
        return ExitCode::FAILURE;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2).expect("the package sits at xtask/cycles");
    match xtask_cycles::check(root) {
        Ok(summary) => {
            println!("{summary}");
            ExitCode::SUCCESS
        }
        Err(report) => {
            eprintln!("{report}");
            ExitCode::FAILURE
        }
    }
}
