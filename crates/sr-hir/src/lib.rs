//! The analysis database shared by `sr check`, the language server, the runtime
//! and the debugger.
//!
//! Layers, each a salsa query over the one below:
//! - [`File`] inputs (path, text) and the [`Workspace`] that lists them;
//! - [`parse`]: the green tree and syntax errors of a file;
//! - [`file_items`]: the file split into [`Item`]s (tracked structs whose green
//!   subtree and offset are tracked fields, so an edit inside one item leaves the
//!   others' queries untouched);
//! - [`item_data`] / [`body`] / [`source_map`]: span-free lowered data of an item
//!   (agents, prompts, …, and the HIR of flow and handler bodies) and, beside it,
//!   the ranges of its parts relative to the item;
//! - [`program`]: name resolution over a file and its imports, with prompt
//!   declarations merged;
//! - [`programs_of`]: the programs a file belongs to (the roots that import it);
//! - diagnostics: span-free per item and per program, mapped to byte ranges last
//!   by [`file_diagnostics`] (a file as its programs judge it) and
//!   [`file_diagnostics_alone`] (a file as its own root, as upstream checks it).

mod anchor;
mod db;
pub mod diagnostic_kinds;
pub mod diagnostics;
pub mod entry;
pub mod graph;
pub mod hir;
mod items;
mod last_pieces;
mod lower;
pub mod membership;
mod name;
pub mod playground;
pub mod resolve;
pub mod start;
pub mod stdlib;
pub mod summary;
pub mod template;
pub mod tool_functions;

pub use crate::db::{Db, File, RootDatabase, Workspace};
pub use crate::diagnostics::{Diagnostic, DiagnosticKind, file_diagnostics, file_diagnostics_alone};
pub use crate::hir::*;
pub use crate::items::{
    Item, ItemKind, file_items, item_at, item_name_range, item_syntax, line_index, parse, syntax_errors,
};
pub use crate::last_pieces::LastPieces;
pub use crate::lower::{body, item_data, source_map};
pub use crate::membership::programs_of;
pub use crate::name::Name;
pub use crate::resolve::{Program, program};
