//! The standard library of flow expressions, evaluated from DSL text: every
//! documented example gives its documented result, each function's values and
//! errors (a data-driven table), and hostile arguments stay bounded.
#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use expect_test::{Expect, expect};
use serde_json::Value;
use sr_hir::stdlib::{FUNCTIONS, NONDETERMINISTIC};
use sr_hir::{RootDatabase, Stmt, body, file_items};
use sr_runtime::eval::{Evaluator, Vars};
use sr_runtime::value::display;

/// Evaluates `return EXPR` written in DSL syntax, with `$s` a 256 KiB string.
fn eval(expr: &str) -> Result<Value, String> {
    let mut db = RootDatabase::default();
    let file = db.set_file("/t.sr", format!("flow f:\n    return {expr}\n"));
    let item = file_items(&db, file)[0];
    let body = body(&db, item);
    let Stmt::Return(e) = &body.stmts[body.root[0]] else { panic!("`{expr}` is not a return") };
    let vars: Vars = [("s".to_string(), Value::String("ab".repeat(1 << 17)))].into_iter().collect();
    Evaluator { body: &body, vars: &vars, item: None, tools: None }.eval(*e).map_err(|e| e.0)
}

#[test]
fn every_documented_example_gives_its_documented_result() {
    for f in FUNCTIONS {
        let value = eval(f.example).unwrap_or_else(|e| panic!("{}: {e}", f.example));
        if NONDETERMINISTIC.contains(&f.name) {
            continue;
        }
        let expected: Value = serde_json::from_str(f.result).unwrap_or_else(|e| panic!("{}: {e}", f.result));
        assert_eq!(value, expected, "{} documents {}", f.example, f.result);
    }
}

#[test]
fn uuid_and_now_are_fresh_and_well_formed() {
    let (a, b) = (eval("uuid()").unwrap(), eval("uuid()").unwrap());
    assert_ne!(a, b);
    let a = a.as_str().unwrap();
    let groups: Vec<usize> = a.split('-').map(str::len).collect();
    assert_eq!(groups, [8, 4, 4, 4, 12], "{a}");
    assert!(a.chars().all(|c| c == '-' || c.is_ascii_hexdigit()) && &a[14..15] == "4", "{a}");

    let now = eval("now()").unwrap();
    let now = now.as_str().unwrap();
    let shape = regex::Regex::new(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$").unwrap();
    assert!(shape.is_match(now), "{now}");
    // The date agrees with the clock: days since 1970 computed back from the text.
    let (y, m, d): (i64, i64, i64) =
        (now[0..4].parse().unwrap(), now[5..7].parse().unwrap(), now[8..10].parse().unwrap());
    let days_from_civil = {
        let y = if m <= 2 { y - 1 } else { y };
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
        era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468
    };
    let secs = days_from_civil * 86_400
        + now[11..13].parse::<i64>().unwrap() * 3600
        + now[14..16].parse::<i64>().unwrap() * 60
        + now[17..19].parse::<i64>().unwrap();
    let clock = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    assert!((clock - secs).abs() <= 2, "{now} is {secs}, the clock says {clock}");
}

fn check(cases: &str, expect: Expect) {
    let mut out = String::new();
    for case in cases.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let result = match eval(case) {
            Ok(v) => serde_json::to_string(&v).unwrap(),
            Err(e) => format!("error: {e}"),
        };
        out.push_str(&format!("{case}  =>  {result}\n"));
    }
    expect.assert_eq(&out);
}

#[test]
fn text_functions() {
    check(
        r#"
        len("")
        len([1, [2, 3]])
        len({a: 1})
        len(3)
        str()
        str(true)
        str(null)
        str([1, "a"])
        lower("ÀB")
        upper(1)
        trim("  x y ")
        split("a b", " ")
        split("abc", "")
        split("", ",")
        join([], ",")
        join("ab", ",")
        replace("aaa", "a", "bb")
        replace("ab", "", "-")
        replace("ab", "x", 1)
        starts_with("abc", "")
        starts_with("abc", "b")
        ends_with("abc", "bc")
        ends_with(["c"], "c")
        slice("héllo", 1, 3)
        slice("abc", -2)
        slice("abc", 5)
        slice("abc", 2, 1)
        slice([1, 2, 3, 4], 1, -1)
        slice([1, 2, 3], -10, 10)
        slice("abc", 1.5)
        slice(3, 1)
        "#,
        expect![[r#"
            len("")  =>  0
            len([1, [2, 3]])  =>  2
            len({a: 1})  =>  1
            len(3)  =>  error: len() needs a string, list or object, got an int
            str()  =>  ""
            str(true)  =>  "True"
            str(null)  =>  "None"
            str([1, "a"])  =>  "[1,\"a\"]"
            lower("ÀB")  =>  "àb"
            upper(1)  =>  error: upper() needs a string, got an int
            trim("  x y ")  =>  "x y"
            split("a b", " ")  =>  ["a","b"]
            split("abc", "")  =>  error: split() needs a separator that is not empty
            split("", ",")  =>  [""]
            join([], ",")  =>  ""
            join("ab", ",")  =>  error: join() needs a list, got a string
            replace("aaa", "a", "bb")  =>  "bbbbbb"
            replace("ab", "", "-")  =>  "-a-b-"
            replace("ab", "x", 1)  =>  error: replace() needs a string, got an int
            starts_with("abc", "")  =>  true
            starts_with("abc", "b")  =>  false
            ends_with("abc", "bc")  =>  true
            ends_with(["c"], "c")  =>  error: ends_with() needs a string, got a list
            slice("héllo", 1, 3)  =>  "él"
            slice("abc", -2)  =>  "bc"
            slice("abc", 5)  =>  ""
            slice("abc", 2, 1)  =>  ""
            slice([1, 2, 3, 4], 1, -1)  =>  [2,3]
            slice([1, 2, 3], -10, 10)  =>  [1,2,3]
            slice("abc", 1.5)  =>  error: slice() needs a whole number, got a float
            slice(3, 1)  =>  error: slice() needs a string or a list, got an int
        "#]],
    );
}

#[test]
fn conversions_and_collections() {
    check(
        r#"
        int(3.9)
        int(-3.9)
        int("12x")
        int(true)
        int([1])
        float(2)
        float("nan")
        float(" 1e3 ")
        bool("")
        bool({a: 0})
        keys({})
        keys([1])
        values({a: {b: 1}})
        range(3)
        range(3, 1)
        range(5, 0, -2)
        range(0, 10, 0)
        range(0, 10000000)
        range("3")
        sum([])
        sum(["a", "b"], "")
        sum([1, "a"])
        sum(3)
        min([])
        min(2, 1.5)
        max(["b", "a"])
        max([1, "a"])
        sort([3, 1.5, 2])
        sort({b: 1, a: 2})
        unique([1, 1.0, true, "1", [1], [1], null, null])
        unique("ab")
        abs(-3)
        abs("3")
        round(2.5)
        round(3.5)
        round(-2.567, 1)
        process([1])
        "#,
        expect![[r#"
            int(3.9)  =>  3
            int(-3.9)  =>  -3
            int("12x")  =>  error: int() cannot read '12x'
            int(true)  =>  1
            int([1])  =>  error: int() needs a number, string or bool, got a list
            float(2)  =>  2.0
            float("nan")  =>  error: float() cannot read 'nan'
            float(" 1e3 ")  =>  1000.0
            bool("")  =>  false
            bool({a: 0})  =>  true
            keys({})  =>  []
            keys([1])  =>  error: keys() needs an object, got a list
            values({a: {b: 1}})  =>  [{"b":1}]
            range(3)  =>  [0,1,2]
            range(3, 1)  =>  []
            range(5, 0, -2)  =>  [5,3,1]
            range(0, 10, 0)  =>  error: range() step must not be zero
            range(0, 10000000)  =>  error: range() is limited to 1048576 items, this one has 10000000
            range("3")  =>  error: range() needs a whole number, got a string
            sum([])  =>  0
            sum(["a", "b"], "")  =>  "ab"
            sum([1, "a"])  =>  error: unsupported operand types for +: int and string
            sum(3)  =>  error: sum() needs a list, got an int
            min([])  =>  error: min() of an empty list
            min(2, 1.5)  =>  1.5
            max(["b", "a"])  =>  "b"
            max([1, "a"])  =>  error: max(): '<' is not supported between string and int
            sort([3, 1.5, 2])  =>  [1.5,2,3]
            sort({b: 1, a: 2})  =>  error: sort() needs a list, got an object
            unique([1, 1.0, true, "1", [1], [1], null, null])  =>  [1,"1",[1],null]
            unique("ab")  =>  error: unique() needs a list, got a string
            abs(-3)  =>  3
            abs("3")  =>  error: abs() needs a number, got a string
            round(2.5)  =>  2
            round(3.5)  =>  4
            round(-2.567, 1)  =>  -2.6
            process([1])  =>  [1]
        "#]],
    );
}

#[test]
fn regex_json_and_code() {
    check(
        r#"
        regex_match("abc", "B")
        regex_match("abc", "(?i)B")
        regex_match("abc", "(")
        regex_match(1, "a")
        regex_find_all("a1b22", "\d+")
        regex_find_all("k=v, x=", "(\w)=(\w?)")
        regex_find_all("none", "\d")
        regex_replace("a-b", "-", "$$")
        regex_replace("john smith", "(?P<first>\w+) (?P<last>\w+)", "$last, $first")
        json_parse('[1, 2.5, "x", null]')
        json_parse("{bad")
        json_parse(3)
        json_format({a: 1}, 2)
        json_format([1], 99)
        json_format("x")
        "#,
        expect![[r#"
            regex_match("abc", "B")  =>  false
            regex_match("abc", "(?i)B")  =>  true
            regex_match("abc", "(")  =>  error: invalid regular expression: regex parse error:
                (
                ^
            error: unclosed group
            regex_match(1, "a")  =>  error: regex_match() needs a string, got an int
            regex_find_all("a1b22", "\d+")  =>  ["1","22"]
            regex_find_all("k=v, x=", "(\w)=(\w?)")  =>  [["k","v"],["x",""]]
            regex_find_all("none", "\d")  =>  []
            regex_replace("a-b", "-", "$$")  =>  "a$b"
            regex_replace("john smith", "(?P<first>\w+) (?P<last>\w+)", "$last, $first")  =>  "smith, john"
            json_parse('[1, 2.5, "x", null]')  =>  [1,2.5,"x",null]
            json_parse("{bad")  =>  error: json_parse(): not JSON: key must be a string at line 1 column 2
            json_parse(3)  =>  error: json_parse() needs a string, got an int
            json_format({a: 1}, 2)  =>  "{\n  \"a\": 1\n}"
            json_format([1], 99)  =>  error: json_format() indents by 0 to 16 spaces
            json_format("x")  =>  "\"x\""
        "#]],
    );
}

#[test]
fn extract_code_takes_the_last_fenced_block() {
    let reply = "Plan:\n```json\n{}\n```\nthen\n  ```Python extra\nx = 1\n\n```\ntail";
    for (args, expected) in
        [("", "x = 1\n"), (", \"json\"", "{}"), (", \"PYTHON\"", "x = 1\n"), (", \"rust\"", "x = 1\n")]
    {
        let value = eval(&format!("extract_code(\"{reply}\"{args})")).unwrap();
        assert_eq!(value, Value::String(expected.trim_end().to_string()), "{args}");
    }
    // No block, or an unclosed one: the whole text.
    for text in ["no fences", "```python\nunclosed"] {
        assert_eq!(eval(&format!("extract_code(\"{text}\", \"python\")")).unwrap(), Value::String(text.into()));
    }
    assert_eq!(eval("extract_code(3)").unwrap_err(), "extract_code() needs a string, got an int");
}

#[test]
fn arity_is_checked_from_the_table() {
    check(
        r#"
        len()
        len(1, 2)
        uuid(1)
        slice("a")
        split("a b")
        min()
        nope(1)
        "#,
        expect![[r#"
            len()  =>  error: len() takes one argument, 0 given
            len(1, 2)  =>  error: len() takes one argument, 2 given
            uuid(1)  =>  error: uuid() takes no arguments, 1 given
            slice("a")  =>  error: slice() takes 2 or 3 arguments, 1 given
            split("a b")  =>  error: split() takes 2 arguments, 1 given
            min()  =>  error: min() takes at least one argument, 0 given
            nope(1)  =>  error: unknown function 'nope'
        "#]],
    );
}

/// Hostile arguments fail fast with a message instead of exhausting memory or time.
#[test]
fn hostile_arguments_stay_bounded() {
    let started = Instant::now();
    // `$s` is 256 KiB: putting 600 bytes at each of its 128 Ki `a`s would pass the 64 MiB limit.
    let huge = "\"".to_string() + &"x".repeat(600) + "\"";
    for (expr, message) in [
        (format!("replace($s, \"a\", {huge})"), "replace() would make a string longer than"),
        (format!("replace($s, \"\", {huge})"), "replace() would make a string longer than"),
        (format!("regex_replace($s, \"a\", {huge})"), "regex_replace() would make a string longer than"),
        (format!("regex_replace($s, \"\", {huge})"), "regex_replace() would make a string longer than"),
        ("range(-9223372036854775807, 9223372036854775807)".to_string(), "range() is limited to"),
        // A pattern that compiles to more than the size limit.
        ("regex_match(\"a\", \"\\w{1000}{1000}\")".to_string(), "invalid regular expression"),
        (format!("regex_match(\"a\", \"{}\")", "(".repeat(200) + &")".repeat(200)), "invalid regular expression"),
        (format!("regex_match(\"a\", \"{}\")", "a".repeat(5000)), "limited to 4096 bytes"),
    ] {
        let error = eval(&expr).expect_err(&expr);
        assert!(error.contains(message), "{expr}: {error}");
    }
    // Backtracking-prone patterns run in linear time on the long string.
    assert_eq!(eval("regex_match($s, \"^(a|ab|b)*c$\")").unwrap(), Value::Bool(false));
    assert_eq!(display(&eval("len(regex_find_all($s, \"(a+)+b\"))").unwrap()), (1 << 17).to_string());
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
}

#[test]
fn days_become_civil_dates() {
    use sr_runtime::stdlib::civil;
    assert_eq!(civil(0), (1970, 1, 1));
    assert_eq!(civil(11_016), (2000, 2, 29));
    assert_eq!(civil(11_017), (2000, 3, 1));
    assert_eq!(civil(19_722), (2023, 12, 31));
    assert_eq!(civil(-1), (1969, 12, 31));
}
