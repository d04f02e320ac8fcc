//! No `match` over a statement (`Stmt`) or a tool's definition (`ToolData`) ends in
//! a catch-all arm (`_ =>` or `other =>`): a new statement kind or tool kind must
//! make the compiler name every place that decides something about it, which a
//! catch-all silently answers instead. `matches!` and `if let` ask about one kind
//! and are fine; a `match` that picks a few kinds lists the others. A file that
//! imports another crate's `Stmt` (the sandbox's Python syntax tree) is not checked
//! for it.

use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// The enums whose matches must list every variant.
const EXHAUSTIVE: [&str; 2] = ["Stmt", "ToolData"];

/// Every catch-all arm of a match over [`EXHAUSTIVE`] enums in the `.rs` files
/// under `root/crates`, as ``path: fn name: match over Stmt ends in `_ =>` ``.
pub fn wildcard_arms(root: &Path) -> Result<Vec<String>, String> {
    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files)?;
    files.sort();
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let shown = file.strip_prefix(root).unwrap_or(&file).display().to_string();
        found.extend(
            in_source(&text).map_err(|e| format!("{shown}: {e}"))?.into_iter().map(|at| format!("{shown}: {at}")),
        );
    }
    Ok(found)
}

/// The catch-all arms in one file's text, each named by the function it is in.
pub fn in_source(text: &str) -> Result<Vec<String>, syn::Error> {
    let file = syn::parse_file(text)?;
    let mut finder = Finder::default();
    for item in &file.items {
        if let syn::Item::Use(item) = item {
            foreign_imports(&item.tree, None, &mut finder.foreign);
        }
    }
    finder.visit_file(&file);
    Ok(finder.found)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    for entry in std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if path.is_dir() {
            rust_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// The [`EXHAUSTIVE`] names a `use` tree imports from a crate other than sr-hir.
fn foreign_imports(tree: &syn::UseTree, root: Option<&syn::Ident>, out: &mut Vec<&'static str>) {
    let foreign = |ident: &syn::Ident| {
        root.is_some_and(|root| !["sr_hir", "crate", "super", "self"].iter().any(|own| root == own))
            .then(|| EXHAUSTIVE.into_iter().find(|name| ident == name))
            .flatten()
    };
    match tree {
        syn::UseTree::Path(path) => foreign_imports(&path.tree, root.or(Some(&path.ident)), out),
        syn::UseTree::Group(group) => group.items.iter().for_each(|tree| foreign_imports(tree, root, out)),
        syn::UseTree::Name(name) => out.extend(foreign(&name.ident)),
        syn::UseTree::Rename(rename) => out.extend(foreign(&rename.ident)),
        syn::UseTree::Glob(_) => {}
    }
}

#[derive(Default)]
struct Finder {
    found: Vec<String>,
    /// Names of [`EXHAUSTIVE`] that this file imports from another crate.
    foreign: Vec<&'static str>,
    /// The innermost function being read.
    function: Option<String>,
}

impl Finder {
    fn in_function(&mut self, name: &syn::Ident, visit: impl FnOnce(&mut Self)) {
        let outer = self.function.replace(name.to_string());
        visit(self);
        self.function = outer;
    }
}

impl<'ast> Visit<'ast> for Finder {
    fn visit_item_fn(&mut self, node: &'ast syn::ItemFn) {
        self.in_function(&node.sig.ident, |f| syn::visit::visit_item_fn(f, node));
    }
    fn visit_impl_item_fn(&mut self, node: &'ast syn::ImplItemFn) {
        self.in_function(&node.sig.ident, |f| syn::visit::visit_impl_item_fn(f, node));
    }
    fn visit_expr_match(&mut self, node: &'ast syn::ExprMatch) {
        let over = node.arms.iter().find_map(|arm| {
            let mut names = VariantOf::default();
            names.visit_pat(&arm.pat);
            names.found
        });
        if let Some(over) = over.filter(|over| !self.foreign.contains(over)) {
            for arm in &node.arms {
                let catch_all = match &arm.pat {
                    syn::Pat::Wild(_) => Some("_".to_string()),
                    // A lowercase name binds anything; `None` is a variant.
                    syn::Pat::Ident(ident)
                        if ident.subpat.is_none()
                            && ident.ident.to_string().starts_with(|c: char| c.is_lowercase()) =>
                    {
                        Some(ident.ident.to_string())
                    }
                    _ => None,
                };
                if let Some(pattern) = catch_all {
                    let function = self.function.as_deref().unwrap_or("(no function)");
                    self.found.push(format!("fn {function}: match over {over} ends in `{pattern} =>`"));
                }
            }
        }
        syn::visit::visit_expr_match(self, node);
    }
}

/// The first [`EXHAUSTIVE`] enum a pattern names a variant of (`Stmt::Run(..)`,
/// `hir::ToolData::Mcp { .. }`), nested patterns included.
#[derive(Default)]
struct VariantOf {
    found: Option<&'static str>,
}

impl VariantOf {
    fn path(&mut self, path: &syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if let [.., owner, _variant] = segments.as_slice() {
            self.found = self.found.or_else(|| EXHAUSTIVE.into_iter().find(|name| name == owner));
        }
    }
}

impl<'ast> Visit<'ast> for VariantOf {
    fn visit_expr_path(&mut self, node: &'ast syn::ExprPath) {
        self.path(&node.path);
    }
    fn visit_pat_tuple_struct(&mut self, node: &'ast syn::PatTupleStruct) {
        self.path(&node.path);
        syn::visit::visit_pat_tuple_struct(self, node);
    }
    fn visit_pat_struct(&mut self, node: &'ast syn::PatStruct) {
        self.path(&node.path);
        syn::visit::visit_pat_struct(self, node);
    }
}

#[cfg(test)]
mod tests {
    use super::in_source;

    fn check(source: &str, expect: &[&str]) {
        assert_eq!(in_source(source).unwrap(), expect, "{source}");
    }

    #[test]
    fn catch_all_arms_over_statements_and_tools_are_found() {
        check(
            "fn f(s: &Stmt) -> bool { match s { Stmt::Run(_) => true, _ => false } }",
            &["fn f: match over Stmt ends in `_ =>`"],
        );
        check(
            "impl A { fn g() { match t {\n hir::ToolData::Mcp { .. } => 1,\n other => 2 } } }",
            &["fn g: match over ToolData ends in `other =>`"],
        );
        check(
            "fn f() { match s.get(i) { Some(Stmt::Abort) => 1, _ => 2 } }",
            &["fn f: match over Stmt ends in `_ =>`"],
        );
    }

    #[test]
    fn exhaustive_matches_and_other_enums_pass() {
        check("fn f() { match s { Stmt::Run(_) => 1, Stmt::Abort | Stmt::Missing => 2 } }", &[]);
        check("fn f() { match e { Expr::Missing => 1, _ => 2 } }", &[]);
        check("fn f() { match s { Some(Stmt::Abort) => 1, Some(Stmt::Missing) => 2, None => 3 } }", &[]);
        check("fn f() { let b = matches!(s, Stmt::Run(_)); if let Stmt::Abort = s {} }", &[]);
        // Another crate's `Stmt`; sr-hir's, imported, is checked.
        check("use ruff_python_ast::{Expr, Stmt};\nfn f() { match s { Stmt::Pass(_) => 1, _ => 2 } }", &[]);
        check(
            "use sr_hir::hir::{Body, Stmt};\nfn f() { match s { Stmt::Abort => 1, _ => 2 } }",
            &["fn f: match over Stmt ends in `_ =>`"],
        );
        // A wildcard inside an arm is not a catch-all of the match.
        check("fn f() { match s { Stmt::Run(_) => 1, Stmt::Call(_) => 2 } }", &[]);
    }
}
