//! The statement facts of `hir/facts.rs`, read back from lowered bodies: one
//! line per statement with what each fact says of it.

use expect_test::{Expect, expect};
use sr_hir::{GuardrailAction, PlaceUse, RootDatabase, Stmt, body, file_items};

fn check(source: &str, expect: Expect) {
    let mut db = RootDatabase::default();
    let file = db.set_file("/ws/main.sr", source.to_string());
    let mut out = Vec::new();
    for &item in file_items(&db, file) {
        let body = body(&db, item);
        body.walk_stmts(&mut |_, stmt| out.push(facts(stmt)));
    }
    expect.assert_eq(&out.join("\n"));
}

fn facts(stmt: &Stmt) -> String {
    let debug = format!("{stmt:?}");
    let kind = debug.split(|c: char| !c.is_alphanumeric()).next().unwrap_or_default();
    let mut facts = vec![kind.to_string()];
    if let Some((how, name)) = stmt.invokes() {
        facts.push(format!("invokes {how:?} {} ({:?})", name.name, how.item_kind()));
    }
    for (place, used) in stmt.places() {
        let used = match used {
            PlaceUse::Bind => "binds",
            PlaceUse::Update => "updates",
        };
        let path: Vec<&str> =
            std::iter::once(place.name.as_str()).chain(place.fields.iter().map(|f| f.as_str())).collect();
        facts.push(format!("{used} ${}", path.join(".")));
    }
    if let Some(keyword) = stmt.ends_block() {
        facts.push(format!("ends block ({keyword})"));
    }
    match stmt.guardrail_action() {
        Some(GuardrailAction::Mask(name)) => facts.push(format!("guardrail mask {}", name.name)),
        Some(GuardrailAction::Block { .. }) => facts.push("guardrail block".to_string()),
        Some(GuardrailAction::Warn { condition, message }) => {
            facts.push(format!("guardrail warn (condition: {}, message: {message:?})", condition.is_some()))
        }
        Some(GuardrailAction::RetryWith { .. }) => facts.push("guardrail retry with".to_string()),
        None => {}
    }
    facts.join(", ")
}

#[test]
fn flow_statements() {
    check(
        r#"
flow helper:
    return 1

flow main:
    $x = run agent a with "hi"
    $y = run helper
    $z = call llm p with $x
    $h = []
    $r = run agent a with "again" history $h
    $x.note = "n"
    push $y to $h
    for $item in $h do
        continue
    end
    loop max 2 do
        break
    end
    log $z
    abort
"#,
        expect![[r#"
            Return, ends block (return)
            Run, invokes RunAgent a (Agent), binds $x
            Run, invokes RunFlow helper (Flow), binds $y
            Call, invokes CallLlm p (Prompt), binds $z
            Assign, binds $h
            Run, invokes RunAgent a (Agent), binds $r, updates $h
            Assign, binds $x.note
            Push, updates $h
            For, binds $item
            Continue, ends block (continue)
            Loop
            Break, ends block (break)
            Log
            Abort, ends block (abort)"#]],
    );
}

#[test]
fn guardrail_actions() {
    check(
        r#"
on input do
    mask pii
    block if jailbreak
    warn "careful"
    warn if $flagged
    retry with "again" if $bad
end
"#,
        expect![[r#"
            Mask, guardrail mask pii
            Block, guardrail block
            Warn, guardrail warn (condition: false, message: Some("careful"))
            Warn, guardrail warn (condition: true, message: None)
            RetryWith, guardrail retry with"#]],
    );
}
