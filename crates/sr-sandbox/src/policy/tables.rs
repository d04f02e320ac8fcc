//! The names the policy knows: what it refuses, and what it lets modules and
//! attribute look-ups be used with.

/// Builtins that run or import code from strings, or stop in a debugger.
pub(super) const DYNAMIC_BUILTINS: &[&str] = &["__import__", "exec", "eval", "compile", "breakpoint"];

/// Builtins that return a namespace, where every module the code imported is
/// a key (`globals()["random"]`): they may only be subscripted with a literal
/// name that is no module's.
pub(super) const NAMESPACE_BUILTINS: &[&str] = &["globals", "locals", "vars"];

/// Names that hand out the builtins or the import machinery.
pub(super) const FORBIDDEN_NAMES: &[&str] = &["__builtins__", "__loader__", "__spec__"];

/// Attributes that lead from any object to classes, globals, builtins or frames, the
/// steps of `().__class__.__bases__[0].__subclasses__()` and its relatives.
pub(super) const TRAVERSAL_ATTRIBUTES: &[&str] = &[
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

/// Builtins whose second argument is an attribute name. They, and `vars`, may
/// only be called, never stored or passed: called elsewhere under another name,
/// they would escape the checks on their arguments.
pub(super) const ATTRIBUTE_BUILTINS: &[&str] = &["getattr", "setattr", "delattr", "hasattr"];

/// Functions of `operator` that make a function looking up the attributes (or
/// the method) their arguments name; only called, with literal names.
pub(super) const ATTRIBUTE_GETTERS: &[&str] = &["attrgetter", "methodcaller"];

/// Builtins that only read or print their arguments: a module may be one.
pub(super) const READ_ONLY_BUILTINS: &[&str] =
    &["dir", "hash", "help", "id", "isinstance", "issubclass", "print", "repr", "str", "type"];

/// Standard-library modules that reach files, processes, the network, the
/// interpreter or the import machinery. Allowed modules import some of them
/// (`uuid.os`, `typing.sys`): reaching one as an attribute of a module is
/// importing it.
pub(super) const SYSTEM_MODULES: &[&str] = &[
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
