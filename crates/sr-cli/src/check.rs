//! `sr check`: report every problem in `.sr` files.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use sr_syntax::{Diagnostic, Severity, ast};

use crate::report::{self, FileReport, Stats};
use crate::{Color, files};

#[derive(clap::Args)]
pub struct Args {
    /// Files or directories (searched recursively for *.sr). Default: the current directory.
    paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Prefix each success line with the file name.
    #[arg(short, long)]
    verbose: bool,
    /// Treat warnings as errors.
    #[arg(long)]
    strict: bool,
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    color: Color,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

pub fn run(args: Args) -> ExitCode {
    args.color.apply();
    let paths = if args.paths.is_empty() { vec![PathBuf::from(".")] } else { args.paths.clone() };
    let mut targets = Vec::new();
    let mut file_errors = false;
    for path in &paths {
        if path.is_dir() {
            let found = files::sr_files(path);
            if found.is_empty() && args.verbose {
                println!("no .sr files found in {}", path.display());
            }
            targets.extend(found);
        } else {
            targets.push(path.clone());
        }
    }
    let many = targets.len() > 1;
    let mut failed = false;
    for path in &targets {
        match files::read(path) {
            Ok(text) => {
                let report = check_text(path, text);
                failed |= report.diagnostics.iter().any(|d| d.severity == Severity::Error || args.strict);
                match args.format {
                    Format::Json => println!("{}", report::json(&report)),
                    Format::Text => {
                        anstream::print!("{}", report::text(&report, args.verbose || many))
                    }
                }
            }
            Err(message) => {
                file_errors = true;
                match args.format {
                    Format::Json => println!("{}", report::json_file_error(path, &message)),
                    Format::Text => eprintln!("error: {message}"),
                }
            }
        }
    }
    if file_errors {
        ExitCode::from(2)
    } else if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Diagnostics and statistics for one file.
pub fn check_text(path: &Path, text: String) -> FileReport {
    let parse = sr_syntax::parse(&text);
    let diagnostics: Vec<Diagnostic> = parse.errors().to_vec();
    let stats = stats(&parse.tree());
    FileReport { path: path.display().to_string(), text, diagnostics, stats }
}

/// Counts as upstream prints them: handlers include agent-scoped ones.
fn stats(file: &ast::SourceFile) -> Stats {
    let mut stats = Stats::default();
    for item in file.items() {
        match item {
            ast::Item::ModelDef(_) => stats.models += 1,
            ast::Item::AgentDef(agent) => {
                stats.agents += 1;
                stats.handlers += agent.handlers().count();
            }
            ast::Item::FlowDef(_) => stats.flows += 1,
            ast::Item::EventHandler(_) => stats.handlers += 1,
            _ => {}
        }
    }
    stats
}
