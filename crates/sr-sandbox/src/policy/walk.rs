//! One walk over the module collecting every violation with its offset.

use std::collections::HashSet;

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{Expr, ExprContext, InterpolatedStringElement, Stmt};
use ruff_text_size::{Ranged, TextSize};

use super::{ImportPolicy, ViolationKind};

/// Builtins that run or import code from strings, or stop in a debugger.
const DYNAMIC_BUILTINS: &[&str] = &["__import__", "exec", "eval", "compile", "breakpoint"];

/// Names that hand out the builtins or the import machinery.
const FORBIDDEN_NAMES: &[&str] = &["__builtins__", "__loader__", "__spec__"];

/// Attributes that lead from any object to classes, globals, builtins or frames, the
/// steps of `().__class__.__bases__[0].__subclasses__()` and its relatives.
const TRAVERSAL_ATTRIBUTES: &[&str] = &[
    "__base__",
    "__bases__",
    "__builtins__",
    "__closure__",
    "__code__",
    "__func__",
    "__getattribute__",
    "__globals__",
    "__import__",
    "__loader__",
    "__mro__",
    "__reduce__",
    "__reduce_ex__",
    "__self__",
    "__spec__",
    "__subclasses__",
    "ag_code",
    "ag_frame",
    "cr_code",
    "cr_frame",
    "f_back",
    "f_builtins",
    "f_code",
    "f_globals",
    "f_locals",
    "gi_code",
    "gi_frame",
    "tb_frame",
];

/// Builtins whose second argument is an attribute name.
const ATTRIBUTE_BUILTINS: &[&str] = &["getattr", "setattr", "delattr", "hasattr"];

/// Standard-library modules that reach files, processes, the network, the
/// interpreter or the import machinery. Allowed modules import some of them
/// (`uuid.os`, `typing.sys`): reaching one as an attribute of a module is
/// importing it.
const SYSTEM_MODULES: &[&str] = &[
    "_io",
    "_thread",
    "asyncio",
    "builtins",
    "code",
    "codeop",
    "concurrent",
    "ctypes",
    "dbm",
    "fcntl",
    "ftplib",
    "gc",
    "glob",
    "http",
    "importlib",
    "inspect",
    "io",
    "linecache",
    "marshal",
    "mmap",
    "multiprocessing",
    "nt",
    "os",
    "pathlib",
    "pdb",
    "pickle",
    "pkgutil",
    "platform",
    "posix",
    "pty",
    "resource",
    "runpy",
    "select",
    "selectors",
    "shelve",
    "shutil",
    "signal",
    "smtplib",
    "socket",
    "sqlite3",
    "ssl",
    "subprocess",
    "sys",
    "sysconfig",
    "tempfile",
    "threading",
    "trace",
    "traceback",
    "types",
    "urllib",
    "webbrowser",
    "zipimport",
];

pub(super) fn violations(policy: &ImportPolicy, suite: &[Stmt]) -> Vec<(TextSize, ViolationKind)> {
    let mut walk = Walk { policy, modules: HashSet::new(), found: Vec::new() };
    walk.visit_body(suite);
    walk.found.sort_by_key(|(offset, _)| *offset);
    walk.found
}

struct Walk<'p> {
    policy: &'p ImportPolicy,
    /// Names bound by imports, for the private-attribute check.
    modules: HashSet<String>,
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
    fn check_dunder_key(&mut self, expr: &Expr) {
        if let Expr::StringLiteral(literal) = expr {
            let value = literal.value.to_str();
            let already = TRAVERSAL_ATTRIBUTES.iter().any(|name| name.starts_with("__") && value.contains(name));
            if is_dunder(value) && !already {
                self.report(expr.start(), ViolationKind::DunderString { value: value.to_string() });
            }
        }
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
                    self.modules.insert(bound.to_string());
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
                        if name.starts_with('_') {
                            let kind = ViolationKind::PrivateAttribute {
                                module: module.to_string(),
                                attribute: name.to_string(),
                            };
                            self.report(alias.start(), kind);
                        }
                        self.modules.insert(alias.asname.as_ref().map_or(name, |asname| asname.as_str()).to_string());
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
                if dynamic || FORBIDDEN_NAMES.contains(&id) {
                    self.report(expr.start(), ViolationKind::Builtin { name: id.to_string() });
                }
            }
            Expr::Attribute(attribute) => {
                let attr = attribute.attr.as_str();
                let module = match attribute.value.as_ref() {
                    Expr::Name(base) if self.modules.contains(base.id.as_str()) => Some(base.id.as_str()),
                    _ => None,
                };
                if TRAVERSAL_ATTRIBUTES.contains(&attr) || (attr == "__dict__" && module.is_some()) {
                    self.report(attribute.attr.start(), ViolationKind::Traversal { attribute: attr.to_string() });
                } else if let Some(module) = module
                    && SYSTEM_MODULES.contains(&attr)
                    && !self.policy.allows(attr)
                {
                    let kind =
                        ViolationKind::ModuleAttribute { module: module.to_string(), attribute: attr.to_string() };
                    self.report(attribute.attr.start(), kind);
                } else if attr.starts_with('_')
                    && !is_dunder(attr)
                    && let Expr::Name(base) = attribute.value.as_ref()
                    && self.modules.contains(base.id.as_str())
                {
                    let kind =
                        ViolationKind::PrivateAttribute { module: base.id.to_string(), attribute: attr.to_string() };
                    self.report(attribute.attr.start(), kind);
                }
            }
            Expr::Call(call) => {
                if let Expr::Name(func) = call.func.as_ref() {
                    let function = func.id.as_str();
                    if ATTRIBUTE_BUILTINS.contains(&function)
                        && let Some(name) = call.arguments.find_positional(1)
                    {
                        // `getattr(print, "__se" + "lf__")`: a name built at run time
                        // escapes every check on names.
                        if !matches!(name, Expr::StringLiteral(_)) {
                            let kind = ViolationKind::ComputedAttribute { function: function.to_string() };
                            self.report(name.start(), kind);
                        }
                        self.check_dunder_key(name);
                    }
                    if function == "vars"
                        && let Some(Expr::Name(argument)) = call.arguments.find_positional(0)
                        && self.modules.contains(argument.id.as_str())
                    {
                        let kind = ViolationKind::Traversal { attribute: format!("vars({})", argument.id) };
                        self.report(call.start(), kind);
                    }
                }
            }
            Expr::Subscript(subscript) => self.check_dunder_key(&subscript.slice),
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
