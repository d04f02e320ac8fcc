//! Where things are: the files of the loaded program, the statements a
//! breakpoint can stand on, the lines of flows and agents, and the client's
//! line and column numbering.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use sr_runtime::compile::{BodySpec, Compiled, SourceRef};
use sr_runtime::hook::Frame;
use sr_syntax::TextSize;

use crate::protocol::SourceBody;

/// A program being debugged, with its files as the client names them.
pub struct Loaded {
    pub program: Arc<Compiled>,
    /// The identity of each of `program.sources`, to compare with the client's paths.
    paths: Vec<PathBuf>,
}

impl Loaded {
    pub fn new(program: Arc<Compiled>) -> Loaded {
        let paths = program.sources.iter().map(|s| identity(&s.path)).collect();
        Loaded { program, paths }
    }

    /// The index of a file of the program, however the client spells it.
    pub fn file_of(&self, path: &Path) -> Option<usize> {
        self.files_of(&identity(path)).first().copied()
    }

    /// The files of the program that are the file of identity `key`: more
    /// than one when imports reach it under two spellings.
    pub fn files_of(&self, key: &Path) -> Vec<usize> {
        (0..self.paths.len()).filter(|i| self.paths[*i] == key).collect()
    }

    pub fn source(&self, file: usize) -> Option<SourceBody> {
        let path = &self.program.sources.get(file)?.path;
        Some(SourceBody {
            name: path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            path: path.display().to_string(),
        })
    }

    /// The 1-based line and column of an item's name (of the item when it
    /// has none).
    pub fn item_position(&self, source: &SourceRef) -> (u32, u32) {
        let range = source.map.name.unwrap_or(source.map.item);
        let at = self.program.location(source, range);
        (at.line, at.column)
    }

    /// The statements of `file`, body by body.
    pub fn sites(&self, file: usize) -> Vec<BodySites> {
        let program = &self.program;
        let Some(index) = program.sources.get(file).map(|s| &s.index) else { return Vec::new() };
        bodies(program)
            .filter(|spec| spec.source.file == file)
            .map(|spec| {
                let item = spec.source.map.item + spec.source.offset;
                let mut sites: Vec<Site> = spec
                    .body
                    .stmts
                    .iter()
                    .filter(|(_, stmt)| !matches!(stmt, sr_hir::Stmt::OnFailure { .. }))
                    .map(|(id, _)| {
                        let at = program.stmt_location(&spec.source, id);
                        Site { line: at.line, column: at.column, offset: program.stmt_range(&spec.source, id).start() }
                    })
                    .collect();
                sites.sort_by_key(|s| (s.line, s.column));
                BodySites {
                    first_line: index.line_col(item.start()).line + 1,
                    last_line: index.line_col(item.end()).line + 1,
                    sites,
                }
            })
            .collect()
    }
}

/// Every body whose statements the runtime executes (and so calls the hook
/// for): flows, top-level handlers and agents' handlers.
fn bodies(program: &Compiled) -> impl Iterator<Item = &BodySpec> {
    program
        .flows
        .values()
        .chain(program.handlers.iter().map(|h| &h.body))
        .chain(program.agents.values().flat_map(|a| a.handlers.iter().map(|h| &h.body)))
}

/// What identifies a file however it is spelled: its canonical path
/// (absolute, symlinks and `..` resolved); a path that cannot be
/// canonicalised (no such file) keeps its spelling.
pub fn identity(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

/// Where a frame is: the statement a flow or handler is at, an agent's name.
pub fn frame_position(loaded: Option<&Loaded>, frame: &Frame) -> (Option<usize>, u32, u32) {
    let Some(loaded) = loaded else { return (None, 1, 1) };
    match (&frame.body, frame.stmt) {
        (Some(body), Some(stmt)) => {
            let at = loaded.program.stmt_location(&body.source, stmt);
            (Some(body.source.file), at.line, at.column)
        }
        (Some(body), None) => {
            let (line, column) = loaded.item_position(&body.source);
            (Some(body.source.file), line, column)
        }
        (None, _) => match loaded.program.agents.get(frame.name.as_str()) {
            Some(agent) => {
                let (line, column) = loaded.item_position(&agent.source);
                (Some(agent.source.file), line, column)
            }
            None => (None, 1, 1),
        },
    }
}

/// A statement a breakpoint can stand on; `offset` identifies it at run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Site {
    pub line: u32,
    pub column: u32,
    pub offset: TextSize,
}

/// The statements of one body and the lines the body spans.
#[derive(Debug, Clone)]
pub struct BodySites {
    pub first_line: u32,
    pub last_line: u32,
    pub sites: Vec<Site>,
}

/// The statement a breakpoint on `line` stands on: with a `column`, the
/// statement starting on the line closest before or at the column (an inline
/// statement after `if …:`); without one, the outermost statement starting on
/// the line; else (on a blank line, a comment or a header inside a body) the
/// next statement of the same body.
pub fn resolve(bodies: &[BodySites], line: u32, column: Option<u32>) -> Option<Site> {
    let mut on_line: Vec<Site> = bodies.iter().flat_map(|b| &b.sites).filter(|s| s.line == line).copied().collect();
    on_line.sort_by_key(|s| s.column);
    let at_column = column.and_then(|column| on_line.iter().rev().find(|s| s.column <= column));
    at_column.or(on_line.first()).copied().or_else(|| {
        let body = bodies.iter().find(|b| b.first_line <= line && line <= b.last_line)?;
        body.sites.iter().find(|s| s.line > line).copied()
    })
}

/// The client's numbering (`linesStartAt1`, `columnsStartAt1`); we count from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Positions {
    pub line_base: i64,
    pub column_base: i64,
}

impl Default for Positions {
    fn default() -> Self {
        Positions { line_base: 1, column_base: 1 }
    }
}

impl Positions {
    pub fn line_out(self, line: u32) -> i64 {
        line as i64 - 1 + self.line_base
    }

    pub fn column_out(self, column: u32) -> i64 {
        column as i64 - 1 + self.column_base
    }

    /// A client's line as ours (1-based), if it is a line at all.
    pub fn line_in(self, line: i64) -> Option<u32> {
        u32::try_from(line - self.line_base + 1).ok().filter(|l| *l >= 1)
    }

    /// A client's column as ours (1-based), if it is a column at all.
    pub fn column_in(self, column: i64) -> Option<u32> {
        u32::try_from(column - self.column_base + 1).ok().filter(|c| *c >= 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(line: u32, column: u32) -> Site {
        Site { line, column, offset: TextSize::from(line * 100 + column) }
    }

    #[test]
    fn lines_resolve_to_the_outermost_statement_or_the_next_in_the_body() {
        let bodies = vec![
            BodySites { first_line: 3, last_line: 6, sites: vec![site(4, 5), site(6, 5), site(6, 12)] },
            BodySites { first_line: 9, last_line: 10, sites: vec![site(10, 5)] },
        ];
        assert_eq!(resolve(&bodies, 4, None), Some(site(4, 5)));
        assert_eq!(resolve(&bodies, 6, None), Some(site(6, 5)), "an inline `if` and its statement: the `if`");
        assert_eq!(resolve(&bodies, 6, Some(12)), Some(site(6, 12)), "at the inline statement's column: it");
        assert_eq!(resolve(&bodies, 6, Some(30)), Some(site(6, 12)), "past it: still it");
        assert_eq!(resolve(&bodies, 6, Some(8)), Some(site(6, 5)), "inside the `if` header: the `if`");
        assert_eq!(resolve(&bodies, 6, Some(1)), Some(site(6, 5)), "before both: the first");
        assert_eq!(resolve(&bodies, 3, Some(9)), Some(site(4, 5)), "the header: the first statement");
        assert_eq!(resolve(&bodies, 5, None), Some(site(6, 5)), "a blank line: the next statement");
        assert_eq!(resolve(&bodies, 7, None), None, "between items");
        assert_eq!(resolve(&bodies, 1, None), None);
    }

    /// A file imported under two spellings is two files of the program,
    /// both of which a breakpoint in it stands on.
    #[test]
    fn an_imported_file_is_found_under_every_spelling() {
        let dir = std::env::temp_dir().join(format!("sr-dap-source-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("lib.sr"), "streetrace v1\n\nflow helper:\n    return 1\n").unwrap();
        std::os::unix::fs::symlink(dir.join("lib.sr"), dir.join("link.sr")).unwrap();
        // Imported through the symlink; the editor names the file by its target.
        let main = "streetrace v1\n\nimport ./link.sr\n\nflow main:\n    $r = run helper\n    return $r\n";
        std::fs::write(dir.join("main.sr"), main).unwrap();
        let program =
            sr_runtime::compile::compile_path(&mut sr_hir::RootDatabase::default(), &dir.join("main.sr")).unwrap();
        let loaded = Loaded::new(program);
        assert_eq!(loaded.program.sources.len(), 2);
        let lib = loaded.files_of(&identity(&dir.join("lib.sr")));
        assert_eq!(lib.len(), 1, "{:?}", loaded.paths);
        assert_eq!(loaded.files_of(&identity(&dir.join("link.sr"))), lib);
        let missing = dir.join("sub/../lib.sr");
        assert_eq!(identity(&missing), missing, "no `sub`: it cannot be canonicalised and keeps its spelling");
        assert!(loaded.files_of(&identity(&missing)).is_empty());
        assert_eq!(loaded.file_of(&dir.join("./lib.sr")), Some(lib[0]));
        assert_eq!(loaded.file_of(&dir.join("other.sr")), None);
    }

    #[test]
    fn client_numbering_is_converted_both_ways() {
        let zero = Positions { line_base: 0, column_base: 0 };
        assert_eq!(zero.line_out(1), 0);
        assert_eq!(zero.line_in(0), Some(1));
        assert_eq!(Positions::default().line_in(0), None);
        assert_eq!(Positions::default().column_out(7), 7);
    }
}
