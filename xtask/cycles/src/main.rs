//! `cargo cycles`: the module-cycle check of the workspace this binary was built in;
//! `cargo cycles string-errors [--list] [--max N]`: the count of `String` errors in
//! shipped code; with `--max`, a failure when more than N `Result<_, String>` remain.
// A developer tool: its verdict goes to stdout.
#![allow(clippy::print_stdout)]

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2).expect("the package sits at xtask/cycles");
    let result = match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        [] => xtask_cycles::check(root),
        ["string-errors", rest @ ..] => match string_error_options(rest) {
            Some((list, max)) => string_errors(root, list, max),
            None => Err(USAGE.to_string()),
        },
        _ => Err(USAGE.to_string()),
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

const USAGE: &str = "usage: cargo cycles [string-errors [--list] [--max N]]";

/// `--list` and `--max N`, in any order; `None` for anything else.
fn string_error_options(args: &[&str]) -> Option<(bool, Option<usize>)> {
    let (mut list, mut max) = (false, None);
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match *arg {
            "--list" => list = true,
            "--max" => max = Some(args.next()?.parse().ok()?),
            _ => return None,
        }
    }
    Some((list, max))
}

/// One line per crate with any, then the totals; with `list`, every site
/// first. More `Result<_, String>` than `max` is a failure, with the same text.
fn string_errors(root: &Path, list: bool, max: Option<usize>) -> Result<String, String> {
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
    match max {
        Some(max) if results > max => {
            Err(format!("{out}\n{results} `Result<_, String>` in shipped code, more than --max {max}"))
        }
        _ => Ok(out),
    }
}

#[cfg(test)]
mod tests {
    use super::string_error_options;

    #[test]
    fn string_errors_takes_list_and_a_maximum_in_any_order() {
        assert_eq!(string_error_options(&[]), Some((false, None)));
        assert_eq!(string_error_options(&["--max", "123", "--list"]), Some((true, Some(123))));
        assert_eq!(string_error_options(&["--list", "--max", "0"]), Some((true, Some(0))));
        assert_eq!(string_error_options(&["--max"]), None, "a maximum needs its number");
        assert_eq!(string_error_options(&["--max", "many"]), None);
        assert_eq!(string_error_options(&["--all"]), None);
    }
}
