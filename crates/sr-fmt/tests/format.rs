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
