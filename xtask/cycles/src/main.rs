//! `cargo cycles`: the module-cycle check of the workspace this binary was built in;
//! `cargo cycles string-errors [--list]`: the count of `String` errors in shipped code.
// A developer tool: its verdict goes to stdout.
#![allow(clippy::print_stdout)]

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2).expect("the package sits at xtask/cycles");
    let result = match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        [] => xtask_cycles::check(root),
        ["string-errors", rest @ ..] if rest.iter().all(|a| *a == "--list") => string_errors(root, !rest.is_empty()),
        _ => Err("usage: cargo cycles [string-errors [--list]]".to_string()),
    };
    match result {
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

/// One line per crate with any, then the totals; with `list`, every site first.
fn string_errors(root: &Path, list: bool) -> Result<String, String> {
    let counts = xtask_cycles::string_errors::count(root)?;
    let mut out = String::new();
    if list {
        for count in counts.values() {
            count.sites.iter().for_each(|site| out.push_str(&format!("{site}\n")));
        }
    }
    out.push_str("crate: Result<_, String>, map_err(|e| format!(…))\n");
    for (name, count) in counts.iter().filter(|(_, c)| c.results + c.format_map_errs > 0) {
        out.push_str(&format!("{name}: {}, {}\n", count.results, count.format_map_errs));
    }
    let results: usize = counts.values().map(|c| c.results).sum();
    let map_errs: usize = counts.values().map(|c| c.format_map_errs).sum();
    out.push_str(&format!("total: {results}, {map_errs}"));
    Ok(out)
}
