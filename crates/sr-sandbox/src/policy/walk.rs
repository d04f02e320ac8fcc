//! One walk over the module collecting every violation with its offset.

use std::collections::HashSet;

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{Expr, ExprCall, ExprContext, ExprName, InterpolatedStringElement, Stmt};
use ruff_text_size::{Ranged, TextRange, TextSize};

use super::names::Names;
use super::tables::{
    ATTRIBUTE_BUILTINS, ATTRIBUTE_GETTERS, DYNAMIC_BUILTINS, FORBIDDEN_NAMES, NAMESPACE_BUILTINS, READ_ONLY_BUILTINS,
    SYSTEM_MODULES, TRAVERSAL_ATTRIBUTES,
};
use super::{ImportPolicy, ViolationKind};

pub(super) fn violations(policy: &ImportPolicy, suite: &[Stmt]) -> Vec<(TextSize, ViolationKind)> {
    let names = Names::of(suite);
    let mut walk = Walk { policy, names, used: HashSet::new(), found: Vec::new() };
    walk.visit_body(suite);
    walk.found.sort_by_key(|(offset, _)| *offset);
    walk.found
}

struct Walk<'p> {
    policy: &'p ImportPolicy,
    names: Names,
    /// Module names and attribute look-ups seen where they are used as meant:
    /// a module as the base of an attribute or the argument of a read-only
    /// builtin, `getattr` and its kin as the function of a call. Marked by the
    /// enclosing expression, which the walk visits first.
    used: HashSet<TextRange>,
    found: Vec<(TextSize, ViolationKind)>,
}

impl Walk<'_> {
    fn report(&mut self, at: TextSize, kind: ViolationKind) {
        self.found.push((at, kind));
    }

    fn check_module(&mut self, at: TextSize, module: &str) {
        if !self.policy.allows(module) {
            self.report(at, ViolationKind::Import { module: module.to_string() });
        }
    }

    fn check_string(&mut self, at: TextSize, value: &str) {
        if TRAVERSAL_ATTRIBUTES.iter().any(|name| name.starts_with("__") && value.contains(name)) {
            let value = value.chars().take(80).collect();
            self.report(at, ViolationKind::DunderString { value });
        }
    }

    /// A dunder string where an attribute name or a namespace key is expected.
    fn check_dunder_key(&mut self, at: TextSize, value: &str) {
        let already = TRAVERSAL_ATTRIBUTES.iter().any(|name| name.starts_with("__") && value.contains(name));
        if is_dunder(value) && !already {
            self.report(at, ViolationKind::DunderString { value: value.to_string() });
        }
    }

    /// `module.attribute`, however it is spelled: a private attribute, or a
    /// system module the policy does not allow.
    fn check_module_attribute(&mut self, at: TextSize, module: &str, attribute: &str) {
        if SYSTEM_MODULES.contains(&attribute) && !self.policy.allows(attribute) {
            let kind = ViolationKind::ModuleAttribute { module: module.to_string(), attribute: attribute.to_string() };
            self.report(at, kind);
        } else if attribute.starts_with('_') && !is_dunder(attribute) {
            let kind = ViolationKind::PrivateAttribute { module: module.to_string(), attribute: attribute.to_string() };
            self.report(at, kind);
        }
    }

    /// `getattr(object, name)` and its kin: the name must be a literal, and
    /// neither a dunder nor, on a module, what `module.name` may not be.
    fn check_attribute_builtin(&mut self, function: &str, call: &ExprCall) {
        let object = call.arguments.find_positional(0);
        let module = object.and_then(|object| self.module_name(object));
        if let Some(object) = object
            && module.is_some()
        {
            self.used.insert(object.range());
        }
        let Some(name) = call.arguments.find_positional(1) else { return };
        // `getattr(print, "__se" + "lf__")`: a name built at run time escapes
        // every check on names.
        let Expr::StringLiteral(literal) = name else {
            let kind = ViolationKind::ComputedAttribute { function: function.to_string() };
            return self.report(name.start(), kind);
        };
        let value = literal.value.to_str();
        self.check_dunder_key(name.start(), value);
        if let Some(base) = module {
            self.check_module_attribute(name.start(), &base.id, value);
        }
    }

    /// `operator.attrgetter(names…)` and `methodcaller(name, …)`: literal names,
    /// none of them private or a dunder (attrgetter's may be dotted).
    fn check_attribute_getter(&mut self, function: &str, call: &ExprCall) {
        // methodcaller's further arguments are the method's.
        let count = if function.ends_with("methodcaller") { 1 } else { usize::MAX };
        for name in call.arguments.args.iter().take(count) {
            let Expr::StringLiteral(literal) = name else {
                let kind = ViolationKind::ComputedAttribute { function: function.to_string() };
                self.report(name.start(), kind);
                continue;
            };
            for part in literal.value.to_str().split('.') {
                if is_dunder(part) {
                    self.check_dunder_key(name.start(), part);
                } else if part.starts_with('_') {
                    let kind = ViolationKind::PrivateName { function: function.to_string(), name: part.to_string() };
                    self.report(name.start(), kind);
                }
            }
        }
    }

    /// The name of the module `expr` is, when it is a name holding one or an
    /// assignment expression giving one (`(r := random)` is `r`, which holds
    /// `random`).
    fn module_name<'e>(&self, expr: &'e Expr) -> Option<&'e ExprName> {
        match expr {
            Expr::Name(name) if self.names.is_module(&name.id) => Some(name),
            Expr::Named(named) => self.module_name(&named.target),
            _ => None,
        }
    }

    /// `globals()`, `locals()` or `vars()` (without an argument).
    fn namespace_call(expr: &Expr) -> Option<&ExprCall> {
        let Expr::Call(call) = expr else { return None };
        let Expr::Name(func) = call.func.as_ref() else { return None };
        (NAMESPACE_BUILTINS.contains(&func.id.as_str()) && call.arguments.is_empty()).then_some(call)
    }

    /// `module.attrgetter` or `module.methodcaller` (for `operator` under any name).
    fn attribute_getter(&self, expr: &Expr) -> Option<String> {
        let Expr::Attribute(attribute) = expr else { return None };
        let Expr::Name(base) = attribute.value.as_ref() else { return None };
        (self.names.is_module(&base.id) && ATTRIBUTE_GETTERS.contains(&attribute.attr.as_str()))
            .then(|| format!("{}.{}", base.id, attribute.attr))
    }
}

fn is_dunder(name: &str) -> bool {
    name.len() > 4 && name.starts_with("__") && name.ends_with("__")
}

impl<'a> Visitor<'a> for Walk<'_> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::Import(import) => {
                for alias in &import.names {
                    let name = alias.name.as_str();
                    self.check_module(alias.start(), name);
                    let bound = match &alias.asname {
                        Some(asname) => asname.as_str(),
                        None => name.split('.').next().unwrap_or(name),
                    };
                    if alias.asname.is_none() && bound != name {
                        // `import a.b` binds `a`.
                        self.check_module(alias.start(), bound);
                    }
                }
            }
            Stmt::ImportFrom(import) => {
                if import.level > 0 {
                    self.report(import.start(), ViolationKind::RelativeImport);
                } else if let Some(module) = &import.module {
                    let module = module.as_str();
                    let names: Vec<&str> = import.names.iter().map(|alias| alias.name.as_str()).collect();
                    let submodules_only = !names.contains(&"*")
                        && names.iter().all(|name| self.policy.allows(&format!("{module}.{name}")));
                    if !self.policy.allows(module) && !submodules_only {
                        self.report(import.start(), ViolationKind::Import { module: module.to_string() });
                    }
                    for alias in &import.names {
                        let name = alias.name.as_str();
                        if module == "string" && name == "Formatter" {
                            self.report(alias.start(), ViolationKind::Formatter);
                        } else if name.starts_with('_') || !self.policy.allows(&format!("{module}.{name}")) {
                            // `from uuid import os` is `uuid.os`.
                            self.check_module_attribute(alias.start(), module, name);
                        }
                    }
                }
            }
            _ => {}
        }
        visitor::walk_stmt(self, stmt);
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Name(name) if name.ctx == ExprContext::Load => {
                let id = name.id.as_str();
                let dynamic = DYNAMIC_BUILTINS.contains(&id) || (id == "open" && !self.policy.allows_open());
                let looks_up = ATTRIBUTE_BUILTINS.contains(&id) || id == "vars" || self.names.getters.contains(id);
                if dynamic || FORBIDDEN_NAMES.contains(&id) {
                    self.report(expr.start(), ViolationKind::Builtin { name: id.to_string() });
                } else if looks_up && !self.used.contains(&name.range) {
                    self.report(expr.start(), ViolationKind::IndirectCall { function: id.to_string() });
                } else if self.names.modules.contains(id)
                    && !self.used.contains(&name.range)
                    && !self.names.alias_sources.contains(&name.range)
                {
                    self.report(expr.start(), ViolationKind::ModuleValue { module: id.to_string() });
                }
            }
            Expr::Attribute(attribute) => {
                let attr = attribute.attr.as_str();
                let module = self.module_name(&attribute.value).map(|base| {
                    self.used.insert(attribute.value.range());
                    base.id.as_str()
                });
                if TRAVERSAL_ATTRIBUTES.contains(&attr) || (attr == "__dict__" && module.is_some()) {
                    self.report(attribute.attr.start(), ViolationKind::Traversal { attribute: attr.to_string() });
                } else if let Some(module) = module {
                    if attr == "Formatter" {
                        self.report(attribute.attr.start(), ViolationKind::Formatter);
                    } else if let Some(function) = self.attribute_getter(expr)
                        && !self.used.contains(&attribute.range)
                    {
                        self.report(attribute.attr.start(), ViolationKind::IndirectCall { function });
                    } else {
                        self.check_module_attribute(attribute.attr.start(), module, attr);
                    }
                }
            }
            Expr::Call(call) => match call.func.as_ref() {
                Expr::Name(func) => {
                    let function = func.id.as_str();
                    if Walk::namespace_call(expr).is_some() {
                        self.used.insert(func.range());
                        if !self.used.contains(&call.range()) {
                            self.report(call.start(), ViolationKind::Namespace { function: function.to_string() });
                        }
                    } else if ATTRIBUTE_BUILTINS.contains(&function) {
                        self.used.insert(func.range());
                        self.check_attribute_builtin(function, call);
                    } else if function == "vars" {
                        self.used.insert(func.range());
                        if let Some(Expr::Name(argument)) = call.arguments.find_positional(0)
                            && self.names.is_module(&argument.id)
                        {
                            self.used.insert(argument.range());
                            let kind = ViolationKind::Traversal { attribute: format!("vars({})", argument.id) };
                            self.report(call.start(), kind);
                        }
                    } else if self.names.getters.contains(function) {
                        self.used.insert(func.range());
                        self.check_attribute_getter(function, call);
                    } else if READ_ONLY_BUILTINS.contains(&function) {
                        for argument in &call.arguments.args {
                            if let Expr::Name(name) = argument {
                                self.used.insert(name.range());
                            }
                        }
                    }
                }
                func => {
                    if let Some(function) = self.attribute_getter(func) {
                        self.used.insert(func.range());
                        self.check_attribute_getter(&function, call);
                    }
                }
            },
            Expr::Subscript(subscript) => {
                let namespace = Walk::namespace_call(&subscript.value);
                if let Expr::StringLiteral(literal) = subscript.slice.as_ref() {
                    let key = literal.value.to_str();
                    self.check_dunder_key(literal.start(), key);
                    if let Some(call) = namespace {
                        self.used.insert(call.range());
                        if self.names.is_module(key) {
                            self.report(subscript.start(), ViolationKind::ModuleValue { module: key.to_string() });
                        }
                    }
                }
            }
            Expr::Named(named) if !self.used.contains(&named.range) => {
                if let Some(base) = self.module_name(&named.target) {
                    self.report(named.start(), ViolationKind::ModuleValue { module: base.id.to_string() });
                }
            }
            Expr::StringLiteral(literal) => self.check_string(expr.start(), literal.value.to_str()),
            _ => {}
        }
        visitor::walk_expr(self, expr);
    }

    fn visit_interpolated_string_element(&mut self, element: &'a InterpolatedStringElement) {
        if let InterpolatedStringElement::Literal(literal) = element {
            self.check_string(literal.start(), &literal.value);
        }
        visitor::walk_interpolated_string_element(self, element);
    }
}
