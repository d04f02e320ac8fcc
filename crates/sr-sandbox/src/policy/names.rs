//! Which names hold modules, found before the checks: names bound by imports,
//! and names assigned one of those (`r = random`, `a, b = json, math`,
//! `(r := random)`), wherever the assignment is. The rule is flow-insensitive
//! (a name once assigned a module is one everywhere, above the assignment and
//! in every function too), so an alias cannot hide a module from the checks by
//! where it is made.

use std::collections::HashSet;

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{Expr, Stmt};
use ruff_text_size::{Ranged, TextRange};

use super::tables::ATTRIBUTE_GETTERS;

#[derive(Default)]
pub(super) struct Names {
    /// Bound by `import`, or assigned such a name: modules for certain.
    pub modules: HashSet<String>,
    /// Bound by `from … import`, or assigned such a name: a module or anything else.
    pub imported: HashSet<String>,
    /// Bound to `operator.attrgetter` or `methodcaller` by `from operator import`.
    pub getters: HashSet<String>,
    /// The names on the right of those assignments: they are not a module used
    /// as a value, since the name they are assigned to is checked as one.
    pub alias_sources: HashSet<TextRange>,
}

impl Names {
    pub fn of(suite: &[Stmt]) -> Names {
        let mut collect = Collect::default();
        collect.visit_body(suite);
        let Collect { mut names, aliases } = collect;
        // `a = b` before `b = random` still makes `a` a module: repeat until
        // nothing changes (each round adds a name, or stops).
        loop {
            let mut changed = false;
            for (target, source) in &aliases {
                for set in [&mut names.modules, &mut names.imported] {
                    if set.contains(source.as_str()) && !set.contains(target.as_str()) {
                        set.insert(target.clone());
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        names
    }

    /// Whether `name` may hold a module.
    pub fn is_module(&self, name: &str) -> bool {
        self.modules.contains(name) || self.imported.contains(name)
    }
}

#[derive(Default)]
struct Collect {
    names: Names,
    /// `(target, source)` of every name-to-name assignment.
    aliases: Vec<(String, String)>,
}

impl Collect {
    fn assign(&mut self, target: &Expr, value: &Expr) {
        if let (Expr::Name(target), Expr::Name(source)) = (target, value) {
            self.aliases.push((target.id.to_string(), source.id.to_string()));
            self.names.alias_sources.insert(source.range());
        } else if let (Some(targets), Some(values)) = (elements(target), elements(value))
            && targets.len() == values.len()
        {
            targets.iter().zip(values).for_each(|(target, value)| self.assign(target, value));
        }
    }
}

/// The items of a tuple or list display.
fn elements(expr: &Expr) -> Option<&[Expr]> {
    match expr {
        Expr::Tuple(tuple) => Some(&tuple.elts),
        Expr::List(list) => Some(&list.elts),
        _ => None,
    }
}

impl<'a> Visitor<'a> for Collect {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::Import(import) => {
                for alias in &import.names {
                    let name = alias.name.as_str();
                    let bound =
                        alias.asname.as_ref().map_or_else(|| name.split('.').next().unwrap_or(name), |a| a.as_str());
                    self.names.modules.insert(bound.to_string());
                }
            }
            Stmt::ImportFrom(import) => {
                let operator = import.module.as_ref().is_some_and(|module| module.as_str() == "operator");
                for alias in &import.names {
                    let bound = alias.asname.as_ref().unwrap_or(&alias.name);
                    self.names.imported.insert(bound.to_string());
                    if operator && ATTRIBUTE_GETTERS.contains(&alias.name.as_str()) {
                        self.names.getters.insert(bound.to_string());
                    }
                }
            }
            Stmt::Assign(assign) => assign.targets.iter().for_each(|target| self.assign(target, &assign.value)),
            Stmt::AnnAssign(assign) => {
                if let Some(value) = &assign.value {
                    self.assign(&assign.target, value);
                }
            }
            _ => {}
        }
        visitor::walk_stmt(self, stmt);
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Named(named) = expr {
            self.assign(&named.target, &named.value);
        }
        visitor::walk_expr(self, expr);
    }
}
