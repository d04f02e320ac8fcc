//! Hover: what a name denotes, in Markdown.

use std::fmt::Write;

use sr_hir::hir::{AgentTimeout, AuthKind, Backoff, ItemData, ModelData, SandboxBackend, ToolData};
use sr_hir::resolve::Program;
use sr_hir::tool_functions::ToolKind;
use sr_hir::{Db, Item, ItemKind, Name, RootDatabase, item_data};

use crate::defs::{Symbol, file_occurrences, occurrence_at, resolve_item, variable_definition};
use crate::{FilePosition, TextRange, TextSize};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HoverResult {
    /// The name hovered.
    pub range: TextRange,
    pub markdown: String,
}

/// Lines of a prompt body shown in a hover.
const PREVIEW_LINES: usize = 12;

pub(crate) fn hover(db: &RootDatabase, position: &FilePosition) -> Option<HoverResult> {
    let file = db.file(&position.path)?;
    if let Some((range, markdown)) = crate::tool_functions::function_at(db, file, position.offset) {
        return Some(HoverResult { range, markdown });
    }
    if let Some((range, markdown)) = builtin_in_declaration(db, file, position.offset) {
        return Some(HoverResult { range, markdown });
    }
    if let Some(field) = crate::field_refs::field_at(db, position) {
        return Some(HoverResult { range: field.range, markdown: field_hover(db, field.schema, &field.field)? });
    }
    let occurrences = file_occurrences(db, file);
    let occurrence = occurrence_at(&occurrences, position.offset)?;
    let program = crate::namespace::analysis_program(db, file);
    let markdown = match &occurrence.symbol {
        Symbol::Item(kind, name) => match resolve_item(program, *kind, name) {
            Some(item) => item_hover(db, program, item),
            None => builtin_tool_hover(*kind, name)?,
        },
        Symbol::Variable(name) => variable_hover(db, file, occurrence.item, name),
        Symbol::Import(path) => format!("imports `{}`", path.display()),
    };
    Some(HoverResult { range: occurrence.range, markdown })
}

/// How the model of an agent is chosen: its instruction prompt's `using
/// model`, else the model `main`, else the runner's `--model`.
pub(crate) struct AgentModel<'db> {
    pub name: Name,
    pub item: Option<Item<'db>>,
    /// The instruction prompt that names it.
    pub via_prompt: Option<Name>,
}

pub(crate) fn agent_model<'db>(db: &'db dyn Db, program: &Program<'db>, agent: Item<'db>) -> Option<AgentModel<'db>> {
    let ItemData::Agent(data) = &*item_data(db, agent) else { return None };
    let from_prompt = data.instruction.as_ref().and_then(|instruction| {
        let model = program.prompts.get(&instruction.name)?.data(db).model?;
        Some(AgentModel {
            item: program.models.get(&model.name).copied(),
            name: model.name,
            via_prompt: Some(instruction.name.clone()),
        })
    });
    from_prompt.or_else(|| {
        let main = program.models.get("main")?;
        Some(AgentModel { name: Name::new_static("main"), item: Some(*main), via_prompt: None })
    })
}

/// `anthropic/claude` for a model definition.
pub(crate) fn model_value(db: &dyn Db, model: Item<'_>) -> Option<String> {
    match &*item_data(db, model) {
        ItemData::Model(ModelData::Direct(id)) => Some(id.clone()),
        ItemData::Model(ModelData::Alias(alias)) => Some(format!("= {}", alias.name)),
        ItemData::Model(ModelData::Long(long)) => {
            let provider = long.provider.as_deref().unwrap_or("?");
            Some(match &long.name {
                Some(name) => format!("{provider}/{name}"),
                None => provider.to_string(),
            })
        }
        _ => None,
    }
}

/// A builtin named directly in an agent's `tools` (`streetrace.fs`), with no
/// `tool` definition.
fn builtin_tool_hover(kind: ItemKind, name: &str) -> Option<String> {
    let tool = ToolKind::of(name, None);
    if kind != ItemKind::Tool || !name.starts_with("streetrace.") || tool == ToolKind::None {
        return None;
    }
    let mut out = format!("```streetrace\ntool {name}\n```\n\n**tool** built-in `{name}`  ");
    tool_functions(&mut out, tool);
    Some(out)
}

/// `builtin streetrace.fs` in `tool fs = builtin streetrace.fs`: the built-in
/// tool and its functions.
fn builtin_in_declaration(db: &dyn Db, file: sr_hir::File, offset: TextSize) -> Option<(TextRange, String)> {
    let item = sr_hir::item_at(db, file, offset)?;
    let ItemData::Tool(ToolData::Builtin(path)) = &*item_data(db, item) else { return None };
    let start = usize::from(item.offset(db));
    let text = file.text(db);
    let header = text[start..].lines().next()?;
    let keyword = header.find("builtin")?;
    let at = keyword + header[keyword..].find(path.as_str())?;
    let range =
        TextRange::new(TextSize::from((start + keyword) as u32), TextSize::from((start + at + path.len()) as u32));
    if !range.contains_inclusive(offset) {
        return None;
    }
    Some((range, builtin_tool_hover(ItemKind::Tool, path)?))
}

/// The functions a tool gives, by `sr_hir::tool_functions`.
fn tool_functions(out: &mut String, tool: ToolKind) {
    match tool.functions() {
        None => out.push_str("\n\nits functions are known once the server is connected"),
        Some(functions) if functions.is_empty() => out.push_str("\n\ngives no functions"),
        Some(functions) => {
            out.push_str("\n\n**functions**");
            for function in functions {
                let _ = write!(out, "\n- `{}`: {}", function.signature(), function.doc);
                for param in function.params {
                    let optional = if param.required { "" } else { " (optional)" };
                    let _ = write!(out, "\n  - `{}`{optional}: {}", param.name, param.doc);
                }
            }
        }
    }
}

fn names(list: &[sr_hir::hir::Named]) -> String {
    list.iter().map(|n| format!("`{}`", n.name)).collect::<Vec<_>>().join(", ")
}

fn item_hover(db: &dyn Db, program: &Program<'_>, item: Item<'_>) -> String {
    let kind = item.kind(db);
    let name = item.name(db);
    let mut out = format!("```streetrace\n{} {name}\n```\n", kind.describe());
    let line = |out: &mut String, label: &str, value: String| {
        let _ = write!(out, "\n**{label}** {value}  ");
    };
    match &*item_data(db, item) {
        ItemData::Agent(agent) => {
            if let Some(description) = &agent.description {
                let _ = writeln!(out, "\n{description}");
            }
            match agent_model(db, program, item) {
                Some(model) => {
                    let value =
                        model.item.and_then(|m| model_value(db, m)).map(|v| format!(" ({v})")).unwrap_or_default();
                    let via = match &model.via_prompt {
                        Some(prompt) => format!(", from prompt `{prompt}`"),
                        None => ", the default model".to_string(),
                    };
                    line(&mut out, "model", format!("`{}`{value}{via}", model.name));
                }
                None => line(&mut out, "model", "none defined: the runner's `--model`".to_string()),
            }
            if let Some(instruction) = &agent.instruction {
                line(&mut out, "instruction", format!("`{}`", instruction.name));
            }
            if !agent.tools.is_empty() {
                line(&mut out, "tools", names(&agent.tools));
            }
            if !agent.delegate.is_empty() {
                line(&mut out, "delegates to", names(&agent.delegate));
            }
            if !agent.use_.is_empty() {
                line(&mut out, "uses", names(&agent.use_));
            }
            if let Some(produces) = &agent.produces {
                line(&mut out, "produces", format!("`${}`", produces.name));
            }
            if let Some(executor) = &agent.executor {
                line(&mut out, "writes code run by", format!("`{}`", executor.name));
            }
            match &agent.timeout {
                Some(AgentTimeout::Named(t)) => line(&mut out, "timeout", format!("`{}`", t.name)),
                Some(AgentTimeout::Seconds(s)) => line(&mut out, "timeout", format!("{s} s")),
                None => {}
            }
        }
        ItemData::Prompt(_) => {
            let merged = program.prompts.get(name).map(|p| p.data(db));
            if let Some(data) = merged {
                if let Some(model) = &data.model {
                    line(&mut out, "model", format!("`{}`", model.name));
                }
                if let Some(expecting) = &data.expecting {
                    let array = if expecting.array { "[]" } else { "" };
                    line(&mut out, "expecting", format!("`{}{array}`", expecting.schema.name));
                }
                if let Some(body) = &data.body {
                    let preview: Vec<&str> = body.text.lines().take(PREVIEW_LINES).collect();
                    let more = if body.text.lines().count() > PREVIEW_LINES { "\n…" } else { "" };
                    let _ = write!(out, "\n\n```text\n{}{more}\n```", preview.join("\n"));
                } else {
                    let _ = write!(out, "\n\n*declared without a body*");
                }
            }
        }
        ItemData::Schema(schema) => {
            let fields: Vec<String> = schema
                .fields
                .iter()
                .map(|f| format!("    {}: {}", f.name.name, crate::types::type_text(&f.ty)))
                .collect();
            out = format!("```streetrace\nschema {name}:\n{}\n```\n", fields.join("\n"));
        }
        ItemData::Model(_) => {
            if let Some(value) = model_value(db, item) {
                line(&mut out, "model", format!("`{value}`"));
            }
        }
        ItemData::Tool(tool) => {
            let value = match tool {
                ToolData::Mcp { url, auth, .. } => {
                    let auth = match auth.as_ref().map(|a| a.kind) {
                        Some(AuthKind::Bearer) => " with bearer auth",
                        Some(AuthKind::Basic) => " with basic auth",
                        None => "",
                    };
                    format!("MCP server `{url}`{auth}")
                }
                ToolData::A2a { url, auth, .. } => {
                    let auth = match auth.as_ref().map(|a| a.kind) {
                        Some(AuthKind::Bearer) => " with bearer auth",
                        Some(AuthKind::Basic) => " with basic auth",
                        None => "",
                    };
                    format!("remote A2A agent, card `{url}`{auth}")
                }
                ToolData::Builtin(path) => format!("built-in `{path}`"),
                ToolData::Ref(path) => format!("reference `{path}`"),
                ToolData::Long { url, .. } => {
                    format!("long form{}", url.as_ref().map(|u| format!(" `{u}`")).unwrap_or_default())
                }
                ToolData::Missing => "incomplete".to_string(),
            };
            line(&mut out, "tool", value);
            match ToolKind::of(name, Some(tool)) {
                ToolKind::A2a => out
                    .push_str("\n\nagents call it through `use`, `delegate` or `tools`; its card is read at run time"),
                kind => tool_functions(&mut out, kind),
            }
        }
        ItemData::RetryPolicy(retry) => {
            let backoff = match retry.backoff {
                Backoff::None => "",
                Backoff::Exponential => ", exponential backoff",
                Backoff::Linear => ", linear backoff",
                Backoff::Fixed => ", fixed backoff",
            };
            line(&mut out, "retry", format!("{} times{backoff}", retry.times));
        }
        ItemData::TimeoutPolicy(timeout) => {
            if let Some(seconds) = timeout.seconds {
                line(&mut out, "timeout", format!("{seconds} s"));
            }
        }
        ItemData::Policy(policy) => {
            if let Some(strategy) = &policy.strategy {
                line(&mut out, "strategy", format!("`{strategy}`"));
            }
        }
        ItemData::Executor(executor) => {
            let backend = match executor.backend {
                SandboxBackend::Bubblewrap => "bubblewrap sandbox".to_string(),
                SandboxBackend::Container => {
                    format!("container `{}`", executor.image.as_deref().unwrap_or("?"))
                }
                SandboxBackend::Unsandboxed => "unsandboxed (trusted local use only)".to_string(),
            };
            line(&mut out, "runs code in", backend);
            if !executor.allow.is_empty() {
                let modules: Vec<String> = executor.allow.iter().map(|m| format!("`{m}`")).collect();
                line(&mut out, "also allows", modules.join(", "));
            }
            if let Some(timeout) = executor.timeout {
                line(&mut out, "step timeout", format!("{timeout} s"));
            }
        }
        ItemData::Flow => {
            if sr_hir::entry::entry_point(db, program.root).is_some_and(|e| e.item == item) {
                line(&mut out, "entry point", "of this workload".to_string());
            }
        }
        ItemData::Import(_) | ItemData::Handler(_) => {}
    }
    if kind != ItemKind::Schema && item.file(db) != program.root {
        let _ = write!(out, "\n\n*defined in* `{}`", item.file(db).path(db).display());
    }
    out.trim_end().to_string()
}

/// The field's declaration line under its schema's header, and the file.
fn field_hover(db: &dyn Db, schema: Item<'_>, field: &Name) -> Option<String> {
    let range = crate::field_refs::declaration(db, schema, field)?;
    let text = schema.file(db).text(db);
    let start = text[..usize::from(range.start())].rfind('\n').map_or(0, |i| i + 1);
    let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let line = text[start..end].split(" #").next().unwrap_or_default().trim();
    let path = schema.file(db).path(db);
    let file = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
    Some(format!(
        "```streetrace\nschema {}:\n    {line}\n```\n\nfield of schema `{}` ({file})",
        schema.name(db),
        schema.name(db)
    ))
}

fn variable_hover(db: &dyn Db, file: sr_hir::File, item: Item<'_>, name: &Name) -> String {
    let mut out = format!("```streetrace\n${name}\n```\n");
    if sr_hir::diagnostics::BUILTIN_VARIABLES.contains(&name.as_str()) {
        out.push_str("\nbuilt-in variable");
        return out;
    }
    // The first program the file is judged in that assigns it.
    let programs = || crate::namespace::analysis_programs(db, file);
    let found = programs().find_map(|program| Some((program, variable_definition(db, program, item, name)?)));
    let program = found.as_ref().map_or_else(|| crate::namespace::analysis_program(db, file), |(program, _)| *program);
    if let Some(ty) = crate::var_types::VarTypes::new(db, program).of(name) {
        let _ = write!(out, "\n**type** `{}`  ", ty.text());
    }
    match found.map(|(_, def)| def) {
        Some(def) => {
            let owner = def.item;
            let path = owner.file(db).path(db);
            let file =
                path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
            let _ = write!(out, "\nfirst assigned in {} `{}` ({file})", owner.kind(db).describe(), owner.name(db));
        }
        None => out.push_str("\nnever assigned"),
    }
    out
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use crate::tests::{analysis, position};

    fn check(fixture: &str, expect: Expect) {
        let (analysis, fixture) = analysis(fixture);
        crate::tests::at_every_offset(&analysis, &fixture, |analysis, at| {
            analysis.hover(&at).unwrap();
        });
        let hover = analysis.hover(&position(&fixture)).unwrap();
        let out = match hover {
            Some(hover) => {
                let path = fixture.position().0;
                format!("{:?} {:?}\n{}", hover.range, &fixture.text(path)[hover.range], hover.markdown)
            }
            None => "no hover".to_string(),
        };
        expect.assert_eq(&out);
    }

    const FIELDS: &str = r#"
//- /types.sr
schema Finding:
    note: string?  # why
prompt one expecting Finding: """One."""
agent reviewer:
    instruction one
//- /main.sr
import ./types.sr
prompt explain: """Explain ${f.NOTE1}."""
flow main:
    $f = run agent reviewer
    log $f.NOTE2
    log "note: ${f.NOTE3}"
    $e = call llm explain
    return $e
"#;

    /// A schema field hovers the same at its declaration and at each use.
    #[test]
    fn a_schema_field_where_it_is_declared_and_used() {
        let hover = |marker: &str| {
            let fixture = FIELDS.replace("NOTE1", "note").replace("NOTE2", "note").replace("NOTE3", "note");
            let fixture = match marker {
                "declaration" => fixture.replacen("note: string", "no$0te: string", 1),
                _ => FIELDS
                    .replace(marker, "no$0te")
                    .replace("NOTE1", "note")
                    .replace("NOTE2", "note")
                    .replace("NOTE3", "note"),
            };
            let (analysis, fixture) = analysis(&fixture);
            let hover = analysis.hover(&position(&fixture)).unwrap().expect("a hover");
            let path = fixture.position().0;
            format!("{:?}\n{}", &fixture.text(path)[hover.range], hover.markdown)
        };
        let declared = hover("declaration");
        expect![[r#"
            "note"
            ```streetrace
            schema Finding:
                note: string?
            ```

            field of schema `Finding` (types.sr)"#]]
        .assert_eq(&declared);
        for marker in ["NOTE1", "NOTE2", "NOTE3"] {
            assert_eq!(hover(marker), declared, "{marker}");
        }
    }

    #[test]
    fn agent_shows_description_resolved_model_tools_and_targets() {
        check(
            r#"
            model main = anthropic/claude
            model fast = anthropic/haiku
            tool fs = builtin streetrace.fs
            prompt lead_prompt using model "fast": """Lead."""
            prompt p: """Help."""
            agent le$0ad:
                instruction lead_prompt
                tools fs
                delegate helper
                use checker
                description "Leads the team"
            agent helper:
                instruction p
            agent checker:
                instruction p
            "#,
            expect![[r#"
                170..174 "lead"
                ```streetrace
                agent lead
                ```

                Leads the team

                **model** `fast` (anthropic/haiku), from prompt `lead_prompt`  
                **instruction** `lead_prompt`  
                **tools** `fs`  
                **delegates to** `helper`  
                **uses** `checker`"#]],
        );
        check(
            r#"
            model main = anthropic/claude
            prompt p: """Help."""
            agent:
                instruction p
            flow main:
                $x = run agent defa$0ult
            "#,
            expect![[r#"
                107..114 "default"
                ```streetrace
                agent default
                ```

                **model** `main` (anthropic/claude), the default model  
                **instruction** `p`"#]],
        );
    }

    #[test]
    fn executor_shows_its_sandbox() {
        check(
            r#"
            executor sand$0box:
                backend: container
                image: "localhost/py:3.12"
                allow: [json, "numpy.*"]
                timeout: 10
            "#,
            expect![[r#"
                9..16 "sandbox"
                ```streetrace
                executor sandbox
                ```

                **runs code in** container `localhost/py:3.12`  
                **also allows** `json`, `numpy.*`  
                **step timeout** 10 s"#]],
        );
    }

    #[test]
    fn prompt_shows_model_schema_and_body_preview() {
        check(
            r#"
            schema Finding:
                note: string
            prompt review using model "m" expecting Finding[]: """
            Review the code.
            Be brief.
            """
            flow main:
                $r = call llm rev$0iew
            "#,
            expect![[r#"
                148..154 "review"
                ```streetrace
                prompt review
                ```

                **model** `m`  
                **expecting** `Finding[]`  

                ```text
                Review the code.
                Be brief.
                ```"#]],
        );
    }

    #[test]
    fn schema_lists_fields_and_variables_their_assignment() {
        check(
            r#"
            schema Finding:
                file: string
                line: int?
                tags: list[string]
            prompt p expecting Find$0ing: """x"""
            "#,
            expect![[r#"
                90..97 "Finding"
                ```streetrace
                schema Finding:
                    file: string
                    line: int?
                    tags: list[string]
                ```"#]],
        );
        check(
            r#"
            flow main:
                $n = 1
                log $n$0
            "#,
            expect![[r#"
                31..32 "n"
                ```streetrace
                $n
                ```

                **type** `int`  
                first assigned in flow `main` (main.sr)"#]],
        );
        check(
            r#"
            flow main:
                log $input_prompt$0
            "#,
            expect![[r#"
                20..32 "input_prompt"
                ```streetrace
                $input_prompt
                ```

                built-in variable"#]],
        );
    }

    #[test]
    fn variable_shows_its_type_where_known() {
        let defs = "schema Finding:\n    note: string\nschema Report:\n    findings: list[Finding]\n\
            prompt review expecting Report: \"\"\"Review\"\"\"\nprompt plain: \"\"\"Plain\"\"\"\n\
            agent reviewer:\n    instruction review\nagent loose:\n    instruction plain\n";
        check(
            &format!(
                "{defs}flow main:\n    $r = run agent reviewer\n    for $f in $r.findings do\n        log $f$0\n    end\n"
            ),
            expect![[r#"
                302..303 "f"
                ```streetrace
                $f
                ```

                **type** `Finding`  
                first assigned in flow `main` (main.sr)"#]],
        );
        check(
            &format!("{defs}flow main:\n    $r$0 = run agent reviewer\nflow other:\n    $n = $r.findings\n"),
            expect![[r#"
                237..238 "r"
                ```streetrace
                $r
                ```

                **type** `Report`  
                first assigned in flow `main` (main.sr)"#]],
        );
        check(
            &format!("{defs}flow main:\n    $r = run agent loose\n    log $r$0\n"),
            expect![[r#"
                266..267 "r"
                ```streetrace
                $r
                ```

                first assigned in flow `main` (main.sr)"#]],
        );
    }

    #[test]
    fn a_remote_a2a_agent_hovers_as_one_where_it_is_used() {
        check(
            r#"
            tool reviewer = a2a "https://h/.well-known/agent-card.json" with auth bearer "${env:K}"
            prompt p: """x"""
            agent a:
                instruction p
                use revi$0ewer
            "#,
            expect![[r#"
                141..149 "reviewer"
                ```streetrace
                tool reviewer
                ```

                **tool** remote A2A agent, card `https://h/.well-known/agent-card.json` with bearer auth  

                agents call it through `use`, `delegate` or `tools`; its card is read at run time"#]],
        );
    }

    #[test]
    fn builtin_in_a_tool_declaration() {
        check(
            r#"
            tool ro = builtin streetrace.fs_rea$0donly
            "#,
            expect![[r#"
                10..40 "builtin streetrace.fs_readonly"
                ```streetrace
                tool streetrace.fs_readonly
                ```

                **tool** built-in `streetrace.fs_readonly`  

                **functions**
                - `read_file(path)`: Read the contents of a text file.
                  - `path`: Path relative to the working directory.
                - `list_directory(path)`: List the files and directories in a directory.
                  - `path`: Path relative to the working directory.
                - `find_in_files(pattern, search_string)`: Search files matching a glob pattern for a string (case-insensitive).
                  - `pattern`: Glob pattern relative to the working directory, e.g. **/*.py.
                  - `search_string`: Text to find."#]],
        );
        check(
            r#"
            tool ro = bui$0ltin streetrace.nosuch
            "#,
            expect!["no hover"],
        );
    }

    #[test]
    fn builtin_tools_list_their_functions_and_parameters() {
        check(
            r#"
            //- /tools.sr
            tool ro = builtin streetrace.fs_readonly
            tool gh = mcp "https://example.com/mcp"
            tool web = builtin streetrace.web
            //- /main.sr
            import ./tools.sr
            prompt p: """x"""
            agent a:
                instruction p
                tools r$0o, gh, web, streetrace.cli
            "#,
            expect![[r#"
                73..75 "ro"
                ```streetrace
                tool ro
                ```

                **tool** built-in `streetrace.fs_readonly`  

                **functions**
                - `read_file(path)`: Read the contents of a text file.
                  - `path`: Path relative to the working directory.
                - `list_directory(path)`: List the files and directories in a directory.
                  - `path`: Path relative to the working directory.
                - `find_in_files(pattern, search_string)`: Search files matching a glob pattern for a string (case-insensitive).
                  - `pattern`: Glob pattern relative to the working directory, e.g. **/*.py.
                  - `search_string`: Text to find.

                *defined in* `/tools.sr`"#]],
        );
        check(
            r#"
            //- /tools.sr
            tool gh = mcp "https://example.com/mcp"
            tool web = builtin streetrace.web
            //- /main.sr
            import ./tools.sr
            prompt p: """x"""
            agent a:
                instruction p
                tools g$0h, web
            "#,
            expect![[r#"
                73..75 "gh"
                ```streetrace
                tool gh
                ```

                **tool** MCP server `https://example.com/mcp`  

                its functions are known once the server is connected

                *defined in* `/tools.sr`"#]],
        );
        check(
            r#"
            tool we$0b = builtin streetrace.web
            "#,
            expect![[r#"
                5..8 "web"
                ```streetrace
                tool web
                ```

                **tool** built-in `streetrace.web`  

                gives no functions"#]],
        );
        check(
            r#"
            prompt p: """x"""
            agent a:
                instruction p
                tools streetrace.c$0li
            "#,
            expect![[r#"
                55..69 "streetrace.cli"
                ```streetrace
                tool streetrace.cli
                ```

                **tool** built-in `streetrace.cli`  

                **functions**
                - `execute_cli_command(command)`: Run a program with arguments in the working directory (no shell) and return its output.
                  - `command`: Program and arguments."#]],
        );
        check(
            r#"
            prompt p: """x"""
            agent a:
                instruction p
                tools streetrace.nothing$0
            "#,
            expect!["no hover"],
        );
    }

    #[test]
    fn tool_function_shows_signature_doc_and_value() {
        let defs = "tool fs = builtin streetrace.fs\nexecutor box:\n    backend: bubblewrap\n";
        check(
            &format!("{defs}flow main:\n    $t = fs.read_$0file(\"a.txt\")\n"),
            expect![[r#"
            93..102 "read_file"
            ```streetrace
            fs.read_file(path)
            ```

            Read the contents of a text file.

            - `path`: Path relative to the working directory.

            **gives** the file's text (`"<binary>"` when it is not UTF-8)"#]],
        );
        check(
            &format!("{defs}flow main:\n    $r = box.r$0un(\"print(1)\")\n"),
            expect![[r#"
            94..97 "run"
            ```streetrace
            box.run(code, options?)
            ```

            Run Python code in the executor's sandbox.

            - `code`: The Python code.
            - `options` (optional): `{input, timeout}`: a value the code reads as `input`, and the step's time limit in seconds.

            **gives** `{outcome, stdout, stderr, result, error}`: `outcome` is `"ok"`, `"error"` or `"timeout"`"#]],
        );
        // A function the tool does not have, and a name that is no tool.
        check(&format!("{defs}flow main:\n    $t = fs.rea$0d(\"a\")\n"), expect!["no hover"]);
        check(&format!("{defs}flow main:\n    $t = other.read_$0file(\"a\")\n"), expect!["no hover"]);
    }
}
