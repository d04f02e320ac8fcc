//! `cargo xtask string-errors`: how many errors at the workspace's seams are
//! plain `String`s. Counts, in shipped code (each crate's module tree from its
//! `lib.rs`, `main.rs` and `src/bin/`, without `#[cfg(test)]` modules and items
//! or `#[test]` functions; not sr-testing, which is test support), every type
//! `Result<_, String>` written and every `map_err` whose closure is a `format!`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// What was found in one crate.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Count {
    /// `Result<_, String>` types written.
    pub results: usize,
    /// `.map_err(|e| format!(…))` calls.
    pub format_map_errs: usize,
    /// Where each was found: `file: fn name: what`.
    pub sites: Vec<String>,
}

/// The count for each crate under `root/crates`, by crate directory name.
pub fn count(root: &Path) -> Result<BTreeMap<String, Count>, String> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(root.join("crates")).map_err(|e| format!("crates/: {e}"))? {
        let dir = entry.map_err(|e| format!("crates/: {e}"))?.path();
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if name == "sr-testing" || !dir.join("src").is_dir() {
            continue;
        }
        let mut roots: Vec<PathBuf> =
            ["src/lib.rs", "src/main.rs"].iter().map(|f| dir.join(f)).filter(|f| f.is_file()).collect();
        if let Ok(bins) = std::fs::read_dir(dir.join("src/bin")) {
            roots.extend(
                bins.filter_map(|b| b.ok().map(|b| b.path())).filter(|p| p.extension().is_some_and(|e| e == "rs")),
            );
        }
        let mut count = Count::default();
        for file in roots {
            let child_dir = file.parent().unwrap_or(&dir).to_path_buf();
            read_module(root, &file, child_dir, &mut count)?;
        }
        out.insert(name, count);
    }
    Ok(out)
}

/// Counts in `source` alone (its `mod x;` declarations are not followed).
pub fn count_source(source: &str) -> Result<Count, syn::Error> {
    let file = syn::parse_file(source)?;
    let mut counter = Counter { file: String::new(), function: None, count: Count::default() };
    counter.visit_file(&file);
    Ok(counter.count)
}

fn read_module(root: &Path, file: &Path, child_dir: PathBuf, count: &mut Count) -> Result<(), String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let parsed = syn::parse_file(&text).map_err(|e| format!("{}: {e}", file.display()))?;
    let shown = file.strip_prefix(root).unwrap_or(file).display().to_string();
    let mut counter = Counter { file: shown, function: None, count: std::mem::take(count) };
    counter.visit_file(&parsed);
    *count = counter.count;
    modules(root, &parsed.items, &child_dir, count)
}

/// Follows the `mod x;` declarations of `items` (inline modules' too), but not test modules.
fn modules(root: &Path, items: &[syn::Item], child_dir: &Path, count: &mut Count) -> Result<(), String> {
    for item in items {
        let syn::Item::Mod(module) = item else { continue };
        if crate::is_cfg_test(&module.attrs) {
            continue;
        }
        let name = module.ident.to_string();
        match &module.content {
            Some((_, inner)) => modules(root, inner, &child_dir.join(&name), count)?,
            None => {
                let path = crate::module_file(&module.attrs, child_dir, &name)
                    .ok_or_else(|| format!("{}: no file for `mod {name};`", child_dir.display()))?;
                let grandchildren = if path.file_name().is_some_and(|n| n == "mod.rs") {
                    path.parent().unwrap_or(child_dir).to_path_buf()
                } else {
                    child_dir.join(&name)
                };
                read_module(root, &path, grandchildren, count)?;
            }
        }
    }
    Ok(())
}

struct Counter {
    file: String,
    /// The innermost function being read.
    function: Option<String>,
    count: Count,
}

impl Counter {
    fn site(&mut self, what: &str) {
        let function = self.function.as_deref().unwrap_or("(item)");
        self.count.sites.push(format!("{}: {function}: {what}", self.file));
    }

    fn in_function(&mut self, attrs: &[syn::Attribute], name: &syn::Ident, visit: impl FnOnce(&mut Self)) {
        if is_test(attrs) {
            return;
        }
        let outer = self.function.replace(name.to_string());
        visit(self);
        self.function = outer;
    }
}

/// `#[cfg(test)]` or `#[test]`.
fn is_test(attrs: &[syn::Attribute]) -> bool {
    crate::is_cfg_test(attrs) || attrs.iter().any(|a| a.path().is_ident("test"))
}

impl<'ast> Visit<'ast> for Counter {
    fn visit_item(&mut self, node: &'ast syn::Item) {
        let attrs = match node {
            syn::Item::Mod(m) => &m.attrs,
            syn::Item::Fn(f) => &f.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Struct(s) => &s.attrs,
            syn::Item::Enum(e) => &e.attrs,
            syn::Item::Type(t) => &t.attrs,
            syn::Item::Trait(t) => &t.attrs,
            syn::Item::Const(c) => &c.attrs,
            syn::Item::Static(s) => &s.attrs,
            syn::Item::Use(u) => &u.attrs,
            _ => return syn::visit::visit_item(self, node),
        };
        if !crate::is_cfg_test(attrs) {
            syn::visit::visit_item(self, node);
        }
    }
    fn visit_item_fn(&mut self, node: &'ast syn::ItemFn) {
        self.in_function(&node.attrs, &node.sig.ident, |c| syn::visit::visit_item_fn(c, node));
    }
    fn visit_impl_item_fn(&mut self, node: &'ast syn::ImplItemFn) {
        self.in_function(&node.attrs, &node.sig.ident, |c| syn::visit::visit_impl_item_fn(c, node));
    }
    fn visit_type_path(&mut self, node: &'ast syn::TypePath) {
        if let Some(last) = node.path.segments.last()
            && last.ident == "Result"
            && let syn::PathArguments::AngleBracketed(args) = &last.arguments
            && let [_, syn::GenericArgument::Type(syn::Type::Path(error))] =
                args.args.iter().collect::<Vec<_>>().as_slice()
            && error.path.is_ident("String")
        {
            self.count.results += 1;
            self.site("Result<_, String>");
        }
        syn::visit::visit_type_path(self, node);
    }
    fn visit_expr_method_call(&mut self, node: &'ast syn::ExprMethodCall) {
        if node.method == "map_err"
            && let Some(syn::Expr::Closure(closure)) = node.args.first()
            && let syn::Expr::Macro(body) = &*closure.body
            && body.mac.path.is_ident("format")
        {
            self.count.format_map_errs += 1;
            self.site("map_err(|e| format!(…))");
        }
        syn::visit::visit_expr_method_call(self, node);
    }
}

#[cfg(test)]
mod tests {
    use super::count_source;

    #[test]
    fn string_results_and_format_map_errs_are_counted_outside_tests() {
        let count = count_source(
            r#"
            type R = Result<(), String>;
            fn f() -> Result<u8, String> { g().map_err(|e| format!("f: {e}")) }
            fn g() -> Result<u8, std::io::Error> { h().map_err(|e| e.into()) }
            fn h() -> std::result::Result<u8, String> { Ok(1) }
            #[test]
            fn t() -> Result<(), String> { Ok(()) }
            #[cfg(test)]
            fn u() -> Result<(), String> { Ok(()) }
            "#,
        )
        .unwrap();
        assert_eq!((count.results, count.format_map_errs), (3, 1), "{:?}", count.sites);
        assert_eq!(count.sites[1], ": f: Result<_, String>");
    }
}
