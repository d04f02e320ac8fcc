//! What the formatter does, on small inputs.

use expect_test::{Expect, expect};

fn check(input: &str, expect: Expect) {
    let formatted = sr_fmt::format(input).unwrap_or_else(|e| format!("error: {e}"));
    expect.assert_eq(&formatted);
}

#[test]
fn indentation_and_spacing() {
    check(
        "model main=anthropic/claude\n\n\n\nschema S :\n  f : list [ string ] ?\n  g:int\nagent a :\n\ttools fs ,web\n\tinstruction p\n\ton tool-call do\n\t\tlog \"x\"\n\tend\nflow main:\n  $x=len( $y )+1\n  $z = - $x\n  if $x>=2 :\n        log $x\n  $o = { a : 1,b :[1 ,2] }\n  $c = $a . b\n  return f(x)\n\n\n",
        expect![[r#"
            model main = anthropic/claude

            schema S:
                f: list[string]?
                g: int
            agent a:
                tools fs, web
                instruction p
                on tool-call do
                    log "x"
                end
            flow main:
                $x = len($y) + 1
                $z = -$x
                if $x >= 2:
                    log $x
                $o = { a: 1, b: [1, 2] }
                $c = $a . b
                return f(x)
        "#]],
    );
}

#[test]
fn comments_and_prompts_stay() {
    check(
        "# head\n\n\n  # indented top comment\nprompt p   using model \"m\"  expecting S[]: \"\"\"  keep   this\n   exactly   \n\"\"\"\n      escalate if ~ \"DONE\"\nflow main:\n    for $i in [1,\n  2] do\n          # inside\n      log $i   # aligned\n    # after the body\n    end\n  # end of flow\n",
        expect![[r##"
            # head

            # indented top comment
            prompt p using model "m" expecting S[]: """  keep   this
               exactly   
            """
                escalate if ~ "DONE"
            flow main:
                for $i in [1,
                    2] do
                    # inside
                    log $i   # aligned
                # after the body
                end
            # end of flow
        "##]],
    );
}

#[test]
fn multi_line_brackets_and_matches() {
    check(
        "flow main:\n    $full = {\n  pr: $a,\n      nested: [\n 1,\n   2\n  ]\n        }\n    match $x\n      when \"a\" -> log \"a\"\n      else -> abort\n    end\n",
        expect![[r#"
            flow main:
                $full = {
                    pr: $a,
                    nested: [
                        1,
                        2
                    ]
                }
                match $x
                    when "a" -> log "a"
                    else -> abort
                end
        "#]],
    );
}

#[test]
fn refuses_files_with_syntax_errors_and_keeps_glued_tokens() {
    check(
        "prompt p \"\"\"x\"\"\"\n",
        expect![[r#"error: cannot format a file with syntax errors: E0007 unexpected token '"""x"""'"#]],
    );
    // `$x-1` is one name, `a.b` one dotted name: spacing never splits or glues tokens.
    check(
        "flow main:\n    $y = $x-1\n    $z = $a .b\n",
        expect![[r#"
        flow main:
            $y = $x-1
            $z = $a .b
    "#]],
    );
}

#[test]
fn crlf_is_kept_and_range_formatting_picks_lines() {
    assert_eq!(sr_fmt::format("flow main:\r\n  return  1\r\n").unwrap(), "flow main:\r\n    return 1\r\n");
    let text = "flow a:\n  return  1\nflow b:\n  return  2\n";
    let start = text.find("flow b").unwrap() as u32;
    let end = text.find("2").unwrap() as u32;
    let edits = sr_fmt::format_range(text, sr_fmt::TextRange::new(start.into(), end.into())).unwrap();
    expect![[r#"
        [
            Edit {
                range: 28..40,
                new_text: "    return 2\n",
            },
        ]
    "#]]
    .assert_debug_eq(&edits);
}

/// A line that starts inside one string spanning lines and ends inside
/// another: its text stops at its own end (it used to take the second
/// string's following line along, which then appeared twice). Found by the
/// format fuzz target.
#[test]
fn a_line_between_two_strings_that_span_lines() {
    let input = "\nflow test:\n YES\":s\n        log \"C\":s\n        log \"Co\n";
    check(
        input,
        expect![[r#"
            flow test:
                YES ":s
                    log "C ":s
                    log "Co
        "#]],
    );
    let formatted = sr_fmt::format(input).unwrap();
    assert_eq!(sr_syntax::parse(&formatted).errors(), &[]);
    assert_eq!(sr_fmt::shape(&formatted), sr_fmt::shape(input));
    assert_eq!(sr_fmt::format(&formatted).as_ref(), Ok(&formatted));
}

/// A comment after the last statement of a file without a final line break
/// stays in that statement when formatting adds the break (the parser used to
/// leave it at the file's top level there, and in the statement once the break
/// was added). Found by the format fuzz target.
#[test]
fn a_trailing_comment_at_the_end_of_the_file_stays_in_its_statement() {
    let input = "model main = a/b\r\n\r\nflow main:\r\n\t$x = 1  # com  returngetfa";
    let formatted = sr_fmt::format(input).unwrap();
    assert_eq!(formatted, "model main = a/b\r\n\r\nflow main:\r\n    $x = 1  # com  returngetfa\r\n");
    assert_eq!(sr_fmt::shape(&formatted), sr_fmt::shape(input));
}
