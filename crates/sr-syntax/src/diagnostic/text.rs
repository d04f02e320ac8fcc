//! A [`DiagnosticKind`]'s message, help and quick fixes, built from its data.
//! Upstream's codes keep upstream's exact message text.

use super::{
    ArgumentProblem, DefinitionKind, DiagnosticKind, ExecutorProblem, Extension, Fix, Found, Suggestion, SyntaxHelp,
};
use crate::ItemKind;

impl DiagnosticKind {
    pub fn message(&self) -> String {
        use DiagnosticKind::*;
        match self {
            UndefinedReference { kind, name, .. } => format!("undefined reference to {} '{name}'", kind.describe()),
            UndefinedPromptOrVariable { name, .. } => format!("undefined reference to prompt or variable '{name}'"),
            UsedBeforeDefinition { name } => format!("variable '${name}' used before definition"),
            DuplicateDefinition { kind, name, .. } => format!("duplicate definition of {} '{name}'", kind.describe()),
            Syntax { found, .. } => match found {
                Found::EndOfInput => "unexpected end of input".to_string(),
                Found::EndOfLine => "unexpected end of line".to_string(),
                Found::Indentation => "unexpected indentation".to_string(),
                Found::EndOfBlock => "unexpected end of block".to_string(),
                Found::InvalidCharacter => "invalid character".to_string(),
                Found::Token(text) => format!("unexpected token '{text}'"),
            },
            InvalidCharacter { .. } | UnclosedString { .. } => "invalid character".to_string(),
            Extension(extension) => match extension {
                self::Extension::Executor => "unexpected token 'executor'".to_string(),
                self::Extension::KeywordCall(function) => {
                    format!("unexpected token '{}'", if function == "max" { "(" } else { function })
                }
                self::Extension::Break => "unexpected end of line".to_string(),
                self::Extension::A2aTool => "unexpected token 'a2a'".to_string(),
            },
            InvalidYamlAgent { problem } => problem.clone(),
            MismatchedIndentation { .. } => "mismatched indentation".to_string(),
            MissingInstruction { agent } => format!("missing required property 'instruction' in agent '{agent}'"),
            CircularAgentReference { agents } => format!("circular agent reference detected: {}", agents.join(" -> ")),
            ContinueOutsideLoop => "'on escalate continue' can only be used inside a loop".to_string(),
            PromptWithoutBody { prompt } => format!("prompt '{prompt}' has no body after merging all definitions"),
            ConflictingPromptModifier { modifier, prompt, first, second } => {
                format!("conflicting {modifier} for prompt '{prompt}': '{first}' vs '{second}'")
            }
            UndefinedPromptVariable { prompt, variable, .. } => {
                format!("prompt '{prompt}' references undefined variable '${variable}'")
            }
            InstructionRuntimeVariable { instruction, agent, variable } => {
                format!("instruction '{instruction}' (used by agent '{agent}') references runtime variable '${variable}'")
            }
            DelegateAndUse { agent } => format!("agent '{agent}' has both delegate and use - this is unusual"),
            Unused { kind, name } => format!("{} '{name}' is never used", kind.describe()),
            UndefinedVariable { name } => format!("undefined variable '${name}'"),
            UndefinedInstruction { name, .. } => format!("instruction '{name}' names no prompt"),
            Unreachable { .. } => "unreachable statement".to_string(),
            UnknownField { schema, field, .. } => format!("schema '{schema}' has no field '{field}'"),
            NoEntryPoint { .. } => {
                "no entry point: define `flow main`, `flow default`, agent `main`, an unnamed agent, or a single agent"
                    .to_string()
            }
            DuplicateField { field, schema } => format!("duplicate field '{field}' in schema '{schema}'"),
            ImportNotFound { import, .. } => format!("cannot find imported file '{import}'"),
            Unreadable { path, error } => format!("cannot read {path}: {error}"),
            ImportCycle { files } => format!("import cycle: {}", files.join(" -> ")),
            GuardrailNotEnforced { name, .. } => {
                format!("guardrail '{name}' is not enforced by this runtime: it never triggers")
            }
            UnknownGuardrail { name, .. } => format!("unknown guardrail '{name}'"),
            InvalidExecutor(problem) => problem.message(),
            DelegateIgnored => "a coding agent does not hand over the conversation: its `delegate` is ignored (`use` agents become functions its code can call)".to_string(),
            TooDeep { what } => format!("{what} nested more than {} levels deep", crate::MAX_NESTING),
            PythonBuiltin { function } => format!("'{function}' is a Python builtin that flows cannot call"),
            UnknownFunction { function, .. } => format!("unknown function '{function}'"),
            ArgumentCount { function, takes, given, .. } => format!("{function}() takes {takes}, {given} given"),
            BreakOutsideLoop => "`break` outside a loop".to_string(),
            RecursiveFlow { flow } => format!(
                "flow '{flow}' runs itself: unless a condition stops it, the run fails when flows nest too deep"
            ),
            ImportedLocalProgram { tool, command } => {
                format!("imported tool '{tool}' starts a local program: {command}")
            }
            UnknownTool { tool, function, .. } => format!("unknown tool '{tool}' in `{tool}.{function}(…)`"),
            UnknownToolFunction { tool, function, .. } => format!("tool '{tool}' has no function '{function}'"),
            ToolArguments { tool, function, problem, .. } => {
                let problem = match problem {
                    ArgumentProblem::UnknownParameter(key) => format!("no parameter named '{key}'"),
                    ArgumentProblem::Missing(names) => format!("missing {}", names.join(", ")),
                    ArgumentProblem::Count { takes, given } => format!("takes {takes}, {given} given"),
                };
                format!("{tool}.{function}(): {problem}")
            }
        }
    }

    /// What to do about it, or what was expected instead.
    pub fn help(&self) -> Option<String> {
        use DiagnosticKind::*;
        let help = match self {
            UndefinedReference { kind, suggestion, .. } => return suggestion.help(kind.describe()),
            UndefinedPromptOrVariable { suggestion, .. } | UndefinedInstruction { suggestion, .. } => {
                return suggestion.help("prompt");
            }
            DuplicateDefinition { name, first_file, .. } => {
                format!("'{name}' is already defined in {}", first_file.as_ref()?)
            }
            Syntax { help, .. } => match help.as_ref()? {
                SyntaxHelp::Expected(expected) => format!("expected {expected}"),
                SyntaxHelp::Explain(text) => text.clone(),
            },
            InvalidCharacter { character } => format!("unexpected character '{character}'"),
            UnclosedString { delimiter } => {
                format!("this `{delimiter}` is never closed: the string runs to the next line that starts a definition")
            }
            Extension(extension) => match extension {
                self::Extension::Executor => "`executor` is a StreetRace-rs extension for coding agents".to_string(),
                self::Extension::KeywordCall(function) => format!("calling `{function}` is a StreetRace-rs extension"),
                self::Extension::Break => "`break` is a StreetRace-rs extension".to_string(),
                self::Extension::A2aTool => "`a2a` tools (remote A2A agents) are a StreetRace-rs extension".to_string(),
            },
            MismatchedIndentation { column, block_columns } => format!(
                "this line starts at column {column}, but the enclosing blocks start at columns {}; align it with the lines of its block",
                join(block_columns)
            ),
            MissingInstruction { .. } => {
                "add 'instruction <prompt_name>' to specify the agent's instruction prompt".to_string()
            }
            PromptWithoutBody { prompt } => format!("add a body definition: prompt {prompt}: \"\"\"...\"\"\""),
            UndefinedPromptVariable { suggestion, .. } => format!("did you mean '${{{}}}'?", suggestion.as_ref()?),
            InstructionRuntimeVariable { variable, .. } => {
                format!("move '${variable}' to a prompt field, or use prompt composition with other prompts")
            }
            Unused { .. } => "remove it, or refer to it from an agent or a flow".to_string(),
            Unreachable { after } => format!("it follows `{after}`, so it never runs"),
            UnknownField { schema, fields, .. } => format!("fields of '{schema}': {fields}"),
            NoEntryPoint { runs_instead: Some(first) } => format!(
                "upstream fails with \"No entry point found in workflow\"; `sr run` starts the first agent, '{first}'. Name an agent or flow `main` to choose"
            ),
            NoEntryPoint { runs_instead: None } => {
                "add `flow main:` or an agent; upstream fails with \"No entry point found in workflow\"".to_string()
            }
            ImportNotFound { looked_for, .. } => format!("looked for {looked_for}"),
            GuardrailNotEnforced { enforced, .. } => format!("enforced guardrails: {}", enforced.join(", ")),
            UnknownGuardrail { known, .. } => format!("known guardrails: {}", known.join(", ")),
            TooDeep { .. } => {
                "split it up, e.g. assign inner parts to variables or move inner blocks into flows".to_string()
            }
            PythonBuiltin { .. } => {
                "upstream runs it as Python's builtin; here the call fails when it runs".to_string()
            }
            UnknownFunction { closest: Some(signature), .. } => format!("did you mean `{signature}`?"),
            UnknownFunction { closest: None, known, .. } => format!("the functions are: {}", known.join(", ")),
            ArgumentCount { signature, doc, .. } => format!("`{signature}`: {doc}"),
            BreakOutsideLoop => {
                "`break` ends the innermost `loop` or `for`, and only from its own body (not from a `parallel` branch)"
                    .to_string()
            }
            RecursiveFlow { .. } => "stop the recursion with a condition, or repeat with `loop`".to_string(),
            ImportedLocalProgram { .. } => "it runs with your rights the first time an agent uses the tool".to_string(),
            UnknownTool { tool, declared, .. } if declared.is_empty() => {
                format!("declare it, e.g. `tool {tool} = builtin streetrace.fs`")
            }
            UnknownTool { declared, .. } => format!("the declared tools and executors are: {declared}"),
            UnknownToolFunction { tool, closest: Some(signature), .. } => format!("did you mean `{tool}.{signature}`?"),
            UnknownToolFunction { tool, known, .. } if known.is_empty() => format!("tool '{tool}' gives no functions"),
            UnknownToolFunction { tool, known, .. } => format!("the functions of '{tool}' are: {}", known.join(", ")),
            ToolArguments { tool, signature, .. } => format!("`{tool}.{signature}`"),
            UsedBeforeDefinition { .. }
            | InvalidYamlAgent { .. }
            | CircularAgentReference { .. }
            | ContinueOutsideLoop
            | ConflictingPromptModifier { .. }
            | DelegateAndUse { .. }
            | UndefinedVariable { .. }
            | DuplicateField { .. }
            | Unreadable { .. }
            | ImportCycle { .. }
            | InvalidExecutor(_)
            | DelegateIgnored => return None,
        };
        Some(help)
    }

    /// The quick fixes: a "did you mean" replaces the name, an undefined
    /// prompt, agent or tool can be defined.
    pub fn fixes(&self) -> Vec<Fix> {
        use DiagnosticKind::*;
        let (suggestion, define) = match self {
            UndefinedReference { kind, name, suggestion } => (suggestion, definition(*kind, name)),
            UndefinedPromptOrVariable { name, suggestion } | UndefinedInstruction { name, suggestion } => {
                (suggestion, Some(Fix::Define(DefinitionKind::Prompt, name.clone())))
            }
            UndefinedPromptVariable { suggestion: Some(variable), .. } => {
                return vec![Fix::Replace(format!("${{{variable}}}"))];
            }
            _ => return Vec::new(),
        };
        let replace = match suggestion {
            Suggestion::DidYouMean(name) => Some(Fix::Replace(name.clone())),
            Suggestion::None | Suggestion::Listed(_) => None,
        };
        replace.into_iter().chain(define).collect()
    }
}

impl Suggestion {
    /// Upstream's help: "did you mean 'x'?", else "defined {kind}s are: …".
    fn help(&self, kind: &str) -> Option<String> {
        match self {
            Suggestion::None => None,
            Suggestion::DidYouMean(name) => Some(format!("did you mean '{name}'?")),
            Suggestion::Listed(names) => Some(format!("defined {kind}s are: {names}")),
        }
    }
}

impl ExecutorProblem {
    fn message(&self) -> String {
        match self {
            ExecutorProblem::Backend { backends } => format!("the backend is one of {}", backends.join(", ")),
            ExecutorProblem::ImageNotString => "the image is a string, e.g. \"localhost/sr-python:3.12\"".to_string(),
            ExecutorProblem::SocketNotString => {
                "the socket is a string, e.g. \"unix:///run/podman/podman.sock\"".to_string()
            }
            ExecutorProblem::AllowNotList => "`allow` takes a list of modules, e.g. [json, \"numpy.*\"]".to_string(),
            ExecutorProblem::NotModule { text } => format!("`{text}` is not a module name or a `pkg.*` pattern"),
            ExecutorProblem::NotBool { key } => format!("`{key}` is `true` or `false`"),
            ExecutorProblem::ExamplesNotName => {
                "`examples` names a prompt, e.g. `examples: worked_examples`".to_string()
            }
            ExecutorProblem::NotPositive { key } => format!("`{key}` is a positive whole number"),
            ExecutorProblem::UnknownProperty { key, known } => {
                format!("executors have no property `{key}`; they have {}", known.join(", "))
            }
            ExecutorProblem::ContainerWithoutImage => "the `container` backend needs an `image`".to_string(),
            ExecutorProblem::NoExamplesPrompt { prompt } => {
                format!("`examples` names no prompt: there is no prompt '{prompt}'")
            }
        }
    }
}

/// The fix that defines an undefined name, for the kinds a fix can define.
fn definition(kind: ItemKind, name: &str) -> Option<Fix> {
    let kind = match kind {
        ItemKind::Prompt => DefinitionKind::Prompt,
        ItemKind::Agent => DefinitionKind::Agent,
        ItemKind::Tool => DefinitionKind::Tool,
        _ => return None,
    };
    Some(Fix::Define(kind, name.to_string()))
}

fn join(numbers: &[u32]) -> String {
    numbers.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::Severity;
    use crate::diagnostic::Listing;

    fn render(kind: &DiagnosticKind) -> String {
        format!(
            "{} {:?}: {} | help: {} | fixes: {:?}",
            kind.code(),
            kind.severity(),
            kind.message(),
            kind.help().unwrap_or_default(),
            kind.fixes()
        )
    }

    #[test]
    fn fixes_come_from_the_data() {
        let kinds = [
            DiagnosticKind::UndefinedReference {
                kind: ItemKind::Agent,
                name: "helpr".into(),
                suggestion: Suggestion::DidYouMean("helper".into()),
            },
            DiagnosticKind::UndefinedReference {
                kind: ItemKind::Model,
                name: "fas".into(),
                suggestion: Suggestion::Listed(Listing::new(["fast", "slow"], 2)),
            },
            DiagnosticKind::UndefinedReference {
                kind: ItemKind::Agent,
                name: "zz".into(),
                suggestion: Suggestion::Listed(Listing::new((0..30).map(|i| format!("a{i}")), 30)),
            },
            DiagnosticKind::UndefinedPromptVariable {
                prompt: "p".into(),
                variable: "usr".into(),
                suggestion: Some("user".into()),
            },
            DiagnosticKind::UndefinedInstruction { name: "greeting".into(), suggestion: Suggestion::None },
            DiagnosticKind::Unused { kind: ItemKind::RetryPolicy, name: "r".into() },
        ];
        let out: Vec<String> = kinds.iter().map(render).collect();
        expect![[r#"
            E0001 Error: undefined reference to agent 'helpr' | help: did you mean 'helper'? | fixes: [Replace("helper"), Define(Agent, "helpr")]
            E0001 Error: undefined reference to model 'fas' | help: defined models are: fast, slow | fixes: []
            E0001 Error: undefined reference to agent 'zz' | help: defined agents are: a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19 and 10 more | fixes: [Define(Agent, "zz")]
            E0015 Error: prompt 'p' references undefined variable '$usr' | help: did you mean '${user}'? | fixes: [Replace("${user}")]
            SR102 Error: instruction 'greeting' names no prompt | help:  | fixes: [Define(Prompt, "greeting")]
            SR100 Warning: retry policy 'r' is never used | help: remove it, or refer to it from an agent or a flow | fixes: []"#]]
        .assert_eq(&out.join("\n"));
    }

    #[test]
    fn two_kinds_differ_from_their_codes_severity() {
        let builtin = DiagnosticKind::PythonBuiltin { function: "print".into() };
        let unknown = DiagnosticKind::UnknownFunction { function: "f".into(), closest: None, known: Vec::new() };
        assert_eq!((builtin.code(), builtin.severity()), (crate::Code::SR112, Severity::Warning));
        assert_eq!((unknown.code(), unknown.severity()), (crate::Code::SR112, Severity::Error));
        assert_eq!(DiagnosticKind::DelegateIgnored.severity(), Severity::Warning);
        assert_eq!(DiagnosticKind::DelegateIgnored.code().severity(), Severity::Error);
    }
}
