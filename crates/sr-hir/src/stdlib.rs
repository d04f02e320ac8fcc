//! The standard library of flow expressions: the functions `NAME(args)` can call.
//!
//! This table is the one list of names and arities: the checker reports calls
//! it does not allow (SR112, SR113), the runtime refuses to evaluate a function
//! it lacks an entry for, and the documentation's examples are tested against
//! the runtime from `example` and `result`.

/// One function of the standard library.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Function {
    pub name: &'static str,
    /// The parameters as documented: `text, sep`; `end?` is optional, `...` repeats.
    pub params: &'static str,
    /// The fewest arguments a call takes.
    pub min: usize,
    /// The most arguments a call takes; `None` for any number.
    pub max: Option<usize>,
    pub doc: &'static str,
    /// A call written in the language (strings in it may span lines) …
    pub example: &'static str,
    /// … and its value as JSON (a `now()` or `uuid()` result is described, not given).
    pub result: &'static str,
}

impl Function {
    /// Whether a call with `count` arguments has an allowed number of them.
    pub fn accepts(&self, count: usize) -> bool {
        count >= self.min && self.max.is_none_or(|max| count <= max)
    }

    /// `split(text, sep)`.
    pub fn signature(&self) -> String {
        format!("{}({})", self.name, self.params)
    }

    /// "one argument", "2 or 3 arguments", "at least one argument".
    pub fn arity_text(&self) -> String {
        let n = |n: usize| match n {
            0 => "no arguments".to_string(),
            1 => "one argument".to_string(),
            n => format!("{n} arguments"),
        };
        match self.max {
            Some(max) if max == self.min => n(max),
            Some(max) if max == self.min + 1 => format!("{} or {max} arguments", self.min),
            Some(max) => format!("{} to {max} arguments", self.min),
            None => format!("at least {}", n(self.min)),
        }
    }
}

const fn f(
    name: &'static str,
    params: &'static str,
    min: usize,
    max: Option<usize>,
    doc: &'static str,
    example: &'static str,
    result: &'static str,
) -> Function {
    Function { name, params, min, max, doc, example, result }
}

/// Every function, in the order the documentation lists them.
#[rustfmt::skip]
pub const FUNCTIONS: &[Function] = &[
    f("len", "x", 1, Some(1), "characters of a string, items of a list, keys of an object", r#"len("héllo")"#, "5"),
    f("str", "x?", 0, Some(1), "the text of a value, as `${…}` renders it (`str()` is `\"\"`)", "str(1.5)", r#""1.5""#),
    f("int", "x", 1, Some(1), "a number truncated, or a string read as an integer; `true` is 1", r#"int(" 42 ")"#, "42"),
    f("float", "x", 1, Some(1), "a number, or a string read as a number", r#"float("2.5")"#, "2.5"),
    f("bool", "x", 1, Some(1), "truthiness: `null`, `false`, `0`, `\"\"`, `[]` and `{}` are false", "bool([])", "false"),
    f("lower", "text", 1, Some(1), "the text in lower case", r#"lower("MiXed")"#, r#""mixed""#),
    f("upper", "text", 1, Some(1), "the text in upper case", r#"upper("MiXed")"#, r#""MIXED""#),
    f("trim", "text", 1, Some(1), "the text without leading and trailing white space", r#"trim("  a b  ")"#, r#""a b""#),
    f("split", "text, sep", 2, Some(2), "the pieces of the text between separators", r#"split("a,b,,c", ",")"#, r#"["a","b","","c"]"#),
    f("join", "list, sep", 2, Some(2), "the items' texts with the separator between them", r#"join(["a", 1, true], "-")"#, r#""a-1-True""#),
    f("replace", "text, old, new", 3, Some(3), "the text with every `old` replaced by `new`", r#"replace("a.b.c", ".", "/")"#, r#""a/b/c""#),
    f("starts_with", "text, prefix", 2, Some(2), "whether the text begins with the prefix", r#"starts_with("report.md", "rep")"#, "true"),
    f("ends_with", "text, suffix", 2, Some(2), "whether the text ends with the suffix", r#"ends_with("report.md", ".py")"#, "false"),
    f("slice", "x, start, end?", 2, Some(3), "characters or items from `start` up to `end` (negative counts from the end, as Python)", r#"slice("abcdef", 1, -1)"#, r#""bcde""#),
    f("regex_match", "text, pattern", 2, Some(2), "whether the pattern matches somewhere in the text (Rust `regex` syntax)", r#"regex_match("v1.2.3", "^v\d+")"#, "true"),
    f("regex_find_all", "text, pattern", 2, Some(2), "every match; group 1 of each when the pattern has one group, a list of the groups when it has more", r#"regex_find_all("a=1, b=22", "=(\d+)")"#, r#"["1","22"]"#),
    f("regex_replace", "text, pattern, with", 3, Some(3), "every match replaced; `$1` or `$name` in `with` insert a group (`${…}` would read a variable)", r#"regex_replace("2024-05-01", "(\d+)-(\d+)-(\d+)", "$3/$2/$1")"#, r#""01/05/2024""#),
    f("json_parse", "text", 1, Some(1), "the value JSON text denotes", r#"json_parse('{"a": [1, 2]}')"#, r#"{"a":[1,2]}"#),
    f("json_format", "value, indent?", 1, Some(2), "the value as JSON text, compact or indented by `indent` spaces", r#"json_format({a: [1, "x"]})"#, r#""{\"a\":[1,\"x\"]}""#),
    f("extract_code", "text, lang?", 1, Some(2), "the last fenced block tagged `lang`, else the last fenced block, else the whole text", "extract_code(\"Here:\n```python\nprint(1)\n```\", \"python\")", r#""print(1)""#),
    f("keys", "object", 1, Some(1), "the object's keys in order", "keys({b: 1, a: 2})", r#"["b","a"]"#),
    f("values", "object", 1, Some(1), "the object's values in order", "values({b: 1, a: 2})", "[1,2]"),
    f("range", "start?, end, step?", 1, Some(3), "the integers from `start` (default 0) below `end`, as Python's `range`", "range(1, 10, 3)", "[1,4,7]"),
    f("sum", "list, start?", 1, Some(2), "the items added with `+`, from `start` (default 0)", "sum([1, 2, 3.5])", "6.5"),
    f("min", "list | a, b, ...", 1, None, "the smallest item of a list, or of the arguments", "min([3, 1, 2])", "1"),
    f("max", "list | a, b, ...", 1, None, "the largest item of a list, or of the arguments", "max(3, 9, 2)", "9"),
    f("sort", "list", 1, Some(1), "the items in ascending order (numbers, or strings)", r#"sort(["b", "c", "a"])"#, r#"["a","b","c"]"#),
    f("sorted", "list", 1, Some(1), "the same as `sort` (Python's name)", "sorted([2, 1])", "[1,2]"),
    f("unique", "list", 1, Some(1), "the items without repeats, in first-seen order", "unique([1, 2, 1, 3, 2])", "[1,2,3]"),
    f("abs", "x", 1, Some(1), "the absolute value of a number", "abs(-2.5)", "2.5"),
    f("round", "x, digits?", 1, Some(2), "the number rounded to an integer, or to `digits` decimals; halves go to the even neighbour, as Python's", "round(3.14159, 2)", "3.14"),
    f("uuid", "", 0, Some(0), "a new random UUID (version 4)", "uuid()", r#""a 36-character string such as 1b4e28ba-2fa1-41d2-883f-0016d3cca427""#),
    f("now", "", 0, Some(0), "the current UTC time in RFC 3339 form", "now()", r#""a string such as 2025-01-31T12:00:00.123Z""#),
    f("random", "", 0, Some(0), "a random number from 0 (included) to 1 (excluded)", "random()", "a number such as 0.4170220047"),
    f("random_int", "low, high", 2, Some(2), "a random integer from `low` to `high`, both included", "random_int(1, 6)", "an integer such as 4"),
    f("process", "x", 1, Some(1), "its argument (upstream's `process x`)", "process(7)", "7"),
];

/// The function named `name`.
pub fn function(name: &str) -> Option<&'static Function> {
    FUNCTIONS.iter().find(|f| f.name == name)
}

/// Functions whose value differs from call to call (random, or the clock): their
/// `result` describes a value instead of giving one, and a run journals each
/// value they give, so that a replay or a resumed run gets the same one.
pub const NONDETERMINISTIC: [&str; 4] = ["uuid", "now", "random", "random_int"];

/// Python's builtin functions that are not in [`FUNCTIONS`]: upstream emits calls
/// verbatim into Python, so these run there, and the checker warns rather than
/// fails on them. (`int`, `float`, `bool`, `list`, `filter` and `max` are keywords
/// upstream and cannot be called there at all.)
pub const PYTHON_ONLY: &[&str] = &[
    "aiter",
    "all",
    "anext",
    "any",
    "ascii",
    "bin",
    "breakpoint",
    "bytearray",
    "bytes",
    "callable",
    "chr",
    "classmethod",
    "compile",
    "complex",
    "delattr",
    "dict",
    "dir",
    "divmod",
    "enumerate",
    "eval",
    "exec",
    "format",
    "frozenset",
    "getattr",
    "globals",
    "hasattr",
    "hash",
    "help",
    "hex",
    "id",
    "input",
    "isinstance",
    "issubclass",
    "iter",
    "locals",
    "map",
    "memoryview",
    "next",
    "object",
    "oct",
    "open",
    "ord",
    "pow",
    "print",
    "property",
    "repr",
    "reversed",
    "set",
    "setattr",
    "staticmethod",
    "super",
    "tuple",
    "type",
    "vars",
    "zip",
    "__import__",
];

/// Names upstream lexes as keywords, so that calling them is our extension.
pub const KEYWORD_NAMED: [&str; 4] = ["int", "float", "bool", "max"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_arities_consistent() {
        for (i, f) in FUNCTIONS.iter().enumerate() {
            assert!(FUNCTIONS[..i].iter().all(|g| g.name != f.name), "{} twice", f.name);
            assert!(f.max.is_none_or(|max| max >= f.min), "{}", f.name);
            assert!(f.example.starts_with(&format!("{}(", f.name)), "{}: example calls another function", f.name);
            assert!(!PYTHON_ONLY.contains(&f.name), "{} is also listed as Python-only", f.name);
        }
        assert!(NONDETERMINISTIC.iter().chain(&KEYWORD_NAMED).all(|n| function(n).is_some()));
    }

    /// docs/runtime.md lists every function with its signature and description.
    #[test]
    fn the_documentation_lists_every_function() {
        let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/runtime.md")).unwrap();
        for f in FUNCTIONS {
            let row = format!("| `{}` | {} |", f.signature().replace('|', "\\|"), f.doc.replace('|', "\\|"));
            assert!(docs.contains(&row), "docs/runtime.md lacks the row {row}");
        }
    }

    #[test]
    fn arity_texts() {
        let texts: Vec<String> =
            ["len", "uuid", "slice", "range", "min"].iter().map(|n| function(n).unwrap().arity_text()).collect();
        assert_eq!(
            texts,
            ["one argument", "no arguments", "2 or 3 arguments", "1 to 3 arguments", "at least one argument"]
        );
        assert!(function("slice").unwrap().accepts(3) && !function("slice").unwrap().accepts(1));
        assert!(function("min").unwrap().accepts(40));
    }
}
