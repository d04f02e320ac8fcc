//! `sr graph`: the agent/flow graph of a workload (`delegate`, `use`, `run`,
//! `call llm`) as Mermaid or Graphviz text, to paste into docs.
//!
//! The picture is sr-hir's [`program_graph`] drawn by sr-ide, exactly as the
//! editor's graph view draws it, so imported files take part and both agree
//! with what `sr check` and the editor's call hierarchy see.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use sr_hir::Diagnostic;
use sr_hir::graph::program_graph;
use sr_hir::{File, RootDatabase, file_diagnostics, program};
use sr_ide::graph::Drawing;
use sr_syntax::Severity;

use crate::report::{self, FileReport, Stats};
use crate::{Color, files};

#[derive(clap::Args)]
pub struct Args {
    /// The workload (a .sr file); its imports are included.
    file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Mermaid)]
    format: Format,
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    color: Color,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A Mermaid `flowchart LR` (renders in GitHub Markdown).
    Mermaid,
    /// Graphviz: `sr graph f.sr --format dot | dot -Tsvg > f.svg`.
    Dot,
}

pub fn run(args: Args) -> ExitCode {
    args.color.apply();
    if let Err(message) = files::read(&args.file) {
        eprintln!("error: {message}");
        return ExitCode::from(2);
    }
    let mut db = RootDatabase::default();
    let root = match db.load_with_imports(&args.file) {
        Ok(root) => root,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", args.file.display());
            return ExitCode::from(2);
        }
    };
    // A graph of a broken program would silently lack edges: refuse, as `sr run` does.
    let reports = error_reports(&db, root, &args.file);
    if !reports.is_empty() {
        for report in &reports {
            anstream::eprint!("{}", report::text(report, reports.len() > 1, report::DEFAULT_MAX_DRAWN));
        }
        return ExitCode::from(1);
    }
    let graph = Drawing::of(&db, &program_graph(&db, root));
    match args.format {
        Format::Mermaid => print!("{}", graph.mermaid()),
        Format::Dot => print!("{}", graph.dot()),
    }
    ExitCode::SUCCESS
}

/// Errors of every file of the program, rendered as `sr check` renders them.
fn error_reports(db: &RootDatabase, root: File, root_path: &Path) -> Vec<FileReport> {
    program(db, root)
        .files
        .iter()
        .filter_map(|&file| {
            let diagnostics: Vec<Diagnostic> = file_diagnostics(db, file)
                .iter()
                .filter(|d| d.severity == Severity::Error && d.in_mode(false))
                .cloned()
                .collect();
            let path = if file == root { root_path.display().to_string() } else { file.path(db).display().to_string() };
            (!diagnostics.is_empty()).then(|| FileReport {
                path,
                index: sr_hir::line_index(db, file).clone(),
                diagnostics,
                stats: Stats::default(),
            })
        })
        .collect()
}
