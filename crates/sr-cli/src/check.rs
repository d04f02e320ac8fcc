//! `sr check`: report every problem in `.sr` files.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use sr_hir::Diagnostic;
use sr_hir::{RootDatabase, file_diagnostics, file_diagnostics_alone, line_index, parse, program};
use sr_syntax::{Severity, ast};

use crate::report::{self, FileReport, Stats};
use crate::{Color, files};

#[derive(clap::Args)]
pub struct Args {
    /// Files or directories (searched recursively for *.sr). Default: the current directory.
    paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// `upstream`: report exactly what upstream's `streetrace check` reports
    /// (its codes, its scoping rules and positions, the first syntax error only).
    #[arg(long, value_enum)]
    compat: Option<Compat>,
    /// Prefix each success line with the file name.
    #[arg(short, long)]
    verbose: bool,
    /// Treat warnings as errors.
    #[arg(long)]
    strict: bool,
    /// Text output: draw at most N diagnostics per file (and 5 per line); the
    /// others are counted. JSON lists every one.
    #[arg(long, value_name = "N", default_value_t = report::DEFAULT_MAX_DRAWN)]
    max_diagnostics: usize,
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    color: Color,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Compat {
    Upstream,
}

pub fn run(args: Args) -> ExitCode {
    args.color.apply();
    let upstream = args.compat == Some(Compat::Upstream);
    let paths = if args.paths.is_empty() { vec![PathBuf::from(".")] } else { args.paths.clone() };
    let mut targets = Vec::new();
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
    // Load everything first, so that imports resolve between the files checked.
    let mut db = RootDatabase::default();
    let loaded: Vec<_> = targets
        .iter()
        .map(|path| {
            files::read(path)
                .and_then(|_| db.load_with_imports(path).map_err(|e| format!("cannot read {}: {e}", path.display())))
        })
        .collect();
    // By default a file is judged as part of the programs that import it, and
    // checking a file reports the errors of the files it imports (those with
    // something to report), after it.
    let mut units: Vec<(PathBuf, Result<sr_hir::File, String>)> = Vec::new();
    let mut reported: HashSet<sr_hir::File> = loaded.iter().filter_map(|l| l.as_ref().ok().copied()).collect();
    for (path, loaded) in targets.iter().zip(loaded) {
        let imported = match &loaded {
            Ok(file) if !upstream => program(&db, *file).files.clone(),
            _ => Vec::new(),
        };
        units.push((path.clone(), loaded));
        for file in imported {
            let has_findings = file_diagnostics(&db, file).iter().any(|d| d.in_mode(false));
            if has_findings && reported.insert(file) {
                units.push((display_path(file.path(&db)), Ok(file)));
            }
        }
    }
    let many = units.len() > 1;
    // Several files' JSON documents make one array; upstream prints one
    // document per file, one after another, and `--compat upstream` does too.
    let mut json = report::JsonOut::new(many && !upstream);
    let mut failed = false;
    let mut file_errors = false;
    for (path, loaded) in units {
        let written = match loaded {
            Ok(file) => {
                let report = report_for(&db, file, &path, upstream);
                failed |= report.diagnostics.iter().any(|d| d.severity == Severity::Error || args.strict);
                match args.format {
                    Format::Json => json.report(&report, upstream),
                    Format::Text => {
                        anstream::print!("{}", report::text(&report, args.verbose || many, args.max_diagnostics));
                        Ok(())
                    }
                }
            }
            Err(message) => {
                file_errors = true;
                match args.format {
                    Format::Json => json.file_error(&path, &message),
                    Format::Text => {
                        eprintln!("error: {message}");
                        Ok(())
                    }
                }
            }
        };
        if let Err(e) = written {
            eprintln!("error: cannot write the report: {e}");
            file_errors = true;
        }
    }
    if args.format == Format::Json
        && let Err(e) = json.finish()
    {
        eprintln!("error: cannot write the report: {e}");
        file_errors = true;
    }
    if file_errors {
        ExitCode::from(2)
    } else if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// A path as the user would write it: relative to the current directory when
/// under it.
fn display_path(path: &Path) -> PathBuf {
    let relative = std::env::current_dir().ok().and_then(|dir| path.strip_prefix(dir).ok().map(Path::to_path_buf));
    relative.unwrap_or_else(|| path.to_path_buf())
}

/// The file's report: as the programs that import it judge it, with its
/// program's counts, or with `--compat upstream` alone, as upstream's checker
/// judges each file.
fn report_for(db: &RootDatabase, file: sr_hir::File, path: &Path, upstream: bool) -> FileReport {
    let all = if upstream { file_diagnostics_alone(db, file) } else { file_diagnostics(db, file) };
    let mut diagnostics: Vec<Diagnostic> = all.iter().filter(|d| d.in_mode(upstream)).cloned().collect();
    let syntax_error = diagnostics.iter().position(|d| d.code().is_syntax());
    let mut stats = if upstream { stats(&parse(db, file).tree()) } else { program_stats(db, file) };
    if upstream && let Some(first) = syntax_error {
        // Upstream stops at its first syntax error and counts nothing.
        diagnostics = vec![diagnostics.swap_remove(first)];
        stats = Stats::default();
    }
    FileReport { path: path.display().to_string(), index: line_index(db, file).clone(), diagnostics, stats }
}

/// The program rooted at the file: its definitions and those of its imports
/// (upstream counts the file's own, [`stats`]). Handlers include agent-scoped ones.
fn program_stats(db: &RootDatabase, file: sr_hir::File) -> Stats {
    let program = program(db, file);
    Stats {
        models: program.models.len(),
        agents: program.agents.len(),
        flows: program.flows.len(),
        handlers: program.handlers.len(),
    }
}

/// The file's own definitions, as upstream counts them: handlers include
/// agent-scoped ones.
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
