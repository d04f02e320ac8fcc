//! `cargo cycles` (also `cargo xtask cycles`): no module cycle inside any crate.
//! A package of its own that needs only `syn`, so the check builds in seconds
//! instead of after the analysis stack and the HTTP server that `xtask` links.
//!
//! The rule is rust-analyzer's "sibling modules form a DAG": a path written in module
//! `a::b::c` that names `a::d::…` is an edge `b → d` between the children of `a`. Every
//! crate's module tree is read with `syn` from its `lib.rs`/`main.rs`; a strongly connected
//! set of two or more siblings is a cycle, reported with one reference per edge so that
//! the fix is obvious. `#[cfg(test)]` modules are skipped: tests may reach anywhere.
//! Paths through re-exports (`crate::Foo` where the root says `pub use b::Foo`) count as
//! edges to the root, not to `b`; the check is about the module files a reader opens.
//!
//! [`wildcards`] is the package's other source check: no catch-all arm in a `match`
//! over a statement or a tool definition (run by the package's `workspace` test).
//! [`string_errors`] counts the `String` errors of shipped code (`cargo xtask string-errors`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

pub mod string_errors;
pub mod wildcards;

/// Checks every crate under `root/crates` and `root/xtask`; `Ok` is the summary line,
/// `Err` lists each cycle with one reference per edge.
pub fn check(root: &Path) -> Result<String, String> {
    let mut crates: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .map_err(|e| format!("crates/: {e}"))?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .collect();
    crates.push(root.join("xtask"));
    crates.push(root.join("xtask/cycles"));
    crates.sort();
    let mut report = String::new();
    let mut modules = 0;
    for dir in crates {
        for entry in ["src/lib.rs", "src/main.rs"] {
            let file = dir.join(entry);
            if !file.is_file() {
                continue;
            }
            let tree = ModuleTree::read(&file)?;
            modules += tree.modules.len();
            for cycle in tree.cycles(root) {
                report.push_str(&format!("{}: {cycle}\n", file.strip_prefix(root).unwrap_or(&file).display()));
            }
        }
    }
    if report.is_empty() {
        Ok(format!("cycles: {modules} modules, no cycle between sibling modules"))
    } else {
        Err(format!("module cycles (sibling modules must form a DAG):\n{report}"))
    }
}

type ModPath = Vec<String>;

/// A reference from one module to another, kept for the report.
struct Reference {
    file: PathBuf,
    text: String,
}

#[derive(Default)]
struct ModuleTree {
    modules: BTreeSet<ModPath>,
    /// (from, to) module paths, as written, with where they were written.
    references: Vec<(ModPath, ModPath, Reference)>,
}

impl ModuleTree {
    fn read(root_file: &Path) -> Result<ModuleTree, String> {
        let mut tree = ModuleTree::default();
        tree.modules.insert(Vec::new());
        tree.read_file(root_file, Vec::new(), root_file.parent().unwrap_or(Path::new(".")).to_path_buf())?;
        Ok(tree)
    }

    /// Reads the module at `module` from `file`; `child_dir` is where its `mod x;` live.
    fn read_file(&mut self, file: &Path, module: ModPath, child_dir: PathBuf) -> Result<(), String> {
        let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let parsed = syn::parse_file(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        self.read_items(file, &parsed.items, &module, &child_dir)
    }

    fn read_items(
        &mut self,
        file: &Path,
        items: &[syn::Item],
        module: &ModPath,
        child_dir: &Path,
    ) -> Result<(), String> {
        for item in items {
            if let syn::Item::Mod(item_mod) = item {
                if is_cfg_test(&item_mod.attrs) {
                    continue;
                }
                let name = item_mod.ident.to_string();
                let mut child = module.clone();
                child.push(name.clone());
                self.modules.insert(child.clone());
                match &item_mod.content {
                    Some((_, inner)) => self.read_items(file, inner, &child, &child_dir.join(&name))?,
                    None => {
                        let path = module_file(&item_mod.attrs, child_dir, &name)
                            .ok_or_else(|| format!("{}: no file for `mod {name};`", file.display()))?;
                        let grandchildren = if path.file_name().is_some_and(|n| n == "mod.rs") {
                            path.parent().unwrap_or(child_dir).to_path_buf()
                        } else {
                            child_dir.join(&name)
                        };
                        self.read_file(&path, child, grandchildren)?;
                    }
                }
            }
        }
        let mut collector = PathCollector { module, paths: Vec::new() };
        for item in items {
            if !matches!(item, syn::Item::Mod(_)) {
                collector.visit_item(item);
            }
        }
        for (target, text) in collector.paths {
            self.references.push((module.clone(), target, Reference { file: file.to_path_buf(), text }));
        }
        Ok(())
    }

    /// Every strongly connected set of sibling modules, as `a → b → a` with references
    /// (their files relative to `root`).
    fn cycles(&self, root: &Path) -> Vec<String> {
        // parent → child → (child it refers to → first reference)
        let mut edges: BTreeMap<ModPath, BTreeMap<String, BTreeMap<String, &Reference>>> = BTreeMap::new();
        for (from, to, reference) in &self.references {
            let to = self.longest_module_prefix(to);
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if from.len() > common && to.len() > common {
                let parent = from[..common].to_vec();
                edges
                    .entry(parent)
                    .or_default()
                    .entry(from[common].clone())
                    .or_default()
                    .entry(to[common].clone())
                    .or_insert(reference);
            }
        }
        let mut found = Vec::new();
        for (parent, graph) in &edges {
            for component in strongly_connected(graph) {
                let mut lines = vec![format!(
                    "cycle in `{}` between {}",
                    if parent.is_empty() { "crate".to_string() } else { parent.join("::") },
                    component.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ")
                )];
                for from in &component {
                    for (to, reference) in &graph[from] {
                        if component.contains(to) {
                            lines.push(format!(
                                "    {from} → {to}: {} `{}`",
                                reference.file.strip_prefix(root).unwrap_or(&reference.file).display(),
                                reference.text
                            ));
                        }
                    }
                }
                found.push(lines.join("\n"));
            }
        }
        found
    }

    fn longest_module_prefix(&self, path: &ModPath) -> ModPath {
        (0..=path.len()).rev().map(|n| path[..n].to_vec()).find(|p| self.modules.contains(p)).unwrap_or_default()
    }
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg") && attr.meta.require_list().is_ok_and(|list| list.tokens.to_string() == "test")
    })
}

fn module_file(attrs: &[syn::Attribute], dir: &Path, name: &str) -> Option<PathBuf> {
    for attr in attrs {
        if attr.path().is_ident("path")
            && let syn::Meta::NameValue(syn::MetaNameValue { value: syn::Expr::Lit(lit), .. }) = &attr.meta
            && let syn::Lit::Str(path) = &lit.lit
        {
            return Some(dir.join(path.value()));
        }
    }
    [dir.join(format!("{name}.rs")), dir.join(name).join("mod.rs")].into_iter().find(|p| p.is_file())
}

/// Collects every path that starts at `crate`, `super` or `self`, resolved to an absolute
/// module path. Bare paths (`foo::bar`) name children of the current module only in
/// `use` trees written that way, which rustfmt'd code in this workspace does not do.
struct PathCollector<'a> {
    module: &'a ModPath,
    paths: Vec<(ModPath, String)>,
}

impl PathCollector<'_> {
    fn resolve(&mut self, segments: &[String]) {
        let mut absolute = match segments.first().map(String::as_str) {
            Some("crate") => Vec::new(),
            Some("self") => self.module.clone(),
            Some("super") => {
                let mut m = self.module.clone();
                m.pop();
                m
            }
            _ => return,
        };
        let mut rest = &segments[1..];
        while rest.first().is_some_and(|s| s == "super") {
            absolute.pop();
            rest = &rest[1..];
        }
        absolute.extend(rest.iter().cloned());
        self.paths.push((absolute, segments.join("::")));
    }
}

impl<'ast> Visit<'ast> for PathCollector<'_> {
    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        self.resolve(&segments);
        syn::visit::visit_path(self, path);
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        let mut leaves = Vec::new();
        use_leaves(&item.tree, Vec::new(), &mut leaves);
        for segments in leaves {
            self.resolve(&segments);
        }
    }

    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {}
}

fn use_leaves(tree: &syn::UseTree, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let extend = |name: &syn::Ident| {
        let mut p = prefix.clone();
        p.push(name.to_string());
        p
    };
    match tree {
        syn::UseTree::Path(path) => use_leaves(&path.tree, extend(&path.ident), out),
        syn::UseTree::Name(name) => out.push(extend(&name.ident)),
        syn::UseTree::Rename(rename) => out.push(extend(&rename.ident)),
        syn::UseTree::Glob(_) => out.push(prefix),
        syn::UseTree::Group(group) => {
            for tree in &group.items {
                use_leaves(tree, prefix.clone(), out);
            }
        }
    }
}

/// Tarjan's algorithm, restricted to components of two or more nodes.
fn strongly_connected<V>(graph: &BTreeMap<String, BTreeMap<String, V>>) -> Vec<Vec<String>> {
    struct State<'g> {
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'g, V>(node: &'g str, graph: &'g BTreeMap<String, BTreeMap<String, V>>, s: &mut State<'g>) {
        let n = s.index.len();
        s.index.insert(node, n);
        s.low.insert(node, n);
        s.stack.push(node);
        s.on_stack.insert(node);
        for next in graph.get(node).into_iter().flat_map(|targets| targets.keys()) {
            if !s.index.contains_key(next.as_str()) {
                visit(next, graph, s);
                let low = s.low[next.as_str()].min(s.low[node]);
                s.low.insert(node, low);
            } else if s.on_stack.contains(next.as_str()) {
                let low = s.index[next.as_str()].min(s.low[node]);
                s.low.insert(node, low);
            }
        }
        if s.low[node] == s.index[node] {
            let mut component = Vec::new();
            while let Some(top) = s.stack.pop() {
                s.on_stack.remove(top);
                component.push(top.to_string());
                if top == node {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.out.push(component);
            }
        }
    }
    let mut state = State {
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for node in graph.keys() {
        if !state.index.contains_key(node.as_str()) {
            visit(node, graph, &mut state);
        }
    }
    state.out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `files` to a scratch tree of its own (tests run in parallel) and
    /// returns the cycles found from its `lib.rs`.
    fn tree(files: &[(&str, &str)]) -> Vec<String> {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("xtask-cycles-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (path, text) in files {
            let path = dir.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let cycles = ModuleTree::read(&dir.join("lib.rs")).unwrap().cycles(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        cycles
    }

    #[test]
    fn sibling_cycle_is_found_with_its_references() {
        let cycles = tree(&[
            ("lib.rs", "mod a; mod b; mod c;"),
            ("a.rs", "use crate::b::B; pub struct A;"),
            ("b.rs", "pub struct B; fn f() -> super::c::C { todo!() }"),
            ("c.rs", "pub struct C(crate::a::A);"),
        ]);
        assert_eq!(cycles.len(), 1, "{cycles:?}");
        assert!(cycles[0].starts_with("cycle in `crate` between `a`, `b`, `c`"), "{}", cycles[0]);
        assert!(cycles[0].contains("a → b") && cycles[0].contains("b → c") && cycles[0].contains("c → a"));
    }

    #[test]
    fn nested_children_count_for_their_top_sibling_and_tests_are_skipped() {
        let cycles = tree(&[
            ("lib.rs", "mod run; mod exec;"),
            ("run/mod.rs", "mod state; pub use state::State;"),
            ("run/state.rs", "pub struct State(crate::exec::flow::Flow);"),
            ("exec.rs", "pub mod flow { pub struct Flow; } #[cfg(test)] mod tests { use crate::run::State; }"),
        ]);
        assert!(cycles.is_empty(), "{cycles:?}");
        let cycles = tree(&[
            ("lib.rs", "mod run; mod exec;"),
            ("run/mod.rs", "mod state;"),
            ("run/state.rs", "pub struct State(crate::exec::flow::Flow);"),
            ("exec.rs", "pub mod flow { pub struct Flow(super::super::run::state::State); }"),
        ]);
        assert_eq!(cycles.len(), 1, "{cycles:?}");
    }
}
