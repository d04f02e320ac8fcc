//! `sr graph` end to end: Mermaid and dot output of a fixture with every edge
//! kind, names with `-` and an imported file; both formats checked for
//! well-formedness (dot by Graphviz itself); errors reported as `sr check` does.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{sr, temp_dir};
use expect_test::expect;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/graph")
}

#[test]
fn mermaid_shows_every_edge_kind_and_the_imported_file() {
    let (code, stdout, stderr) = sr(&["graph", "main.sr"], &fixtures());
    assert_eq!(code, 0, "{stderr}");
    expect![[r#"
        flowchart LR
            prompt_summary_prompt[/"summary_prompt"/]
            prompt_guard_prompt[/"guard_prompt"/]
            agent_triage["triage"]
            agent_code_expert["code-expert"]
            handler_code_expert_on_tool_call{{"on tool-call"}}
            agent_doc_writer["doc-writer"]
            flow_main("main")
            handler_on_input{{"on input"}}
            subgraph file_1 ["lib/research.sr"]
                agent_fact_checker["fact-checker"]
                agent_researcher["researcher"]
                flow_gather("gather")
            end
            flow_gather -->|run| agent_researcher
            agent_triage -->|delegate| agent_code_expert
            agent_triage -->|delegate| agent_doc_writer
            agent_code_expert -->|use| agent_fact_checker
            agent_code_expert -.- handler_code_expert_on_tool_call
            handler_code_expert_on_tool_call -->|call llm| prompt_guard_prompt
            flow_main -->|run| agent_triage
            flow_main -->|run| flow_gather
            flow_main -->|call llm| prompt_summary_prompt
            handler_on_input -->|call llm| prompt_guard_prompt
            classDef entry stroke-width:3px
            class flow_main entry
    "#]]
    .assert_eq(&stdout);
    let labels = check_mermaid(&stdout);
    assert_eq!(labels, HashSet::from(["delegate", "use", "run", "call llm"].map(String::from)));
}

#[test]
fn dot_renders_with_graphviz() {
    let (code, stdout, stderr) = sr(&["graph", "--format", "dot", "main.sr"], &fixtures());
    assert_eq!(code, 0, "{stderr}");
    expect![[r#"
        digraph streetrace {
            rankdir=LR;
            prompt_summary_prompt [label="summary_prompt", shape=parallelogram];
            prompt_guard_prompt [label="guard_prompt", shape=parallelogram];
            agent_triage [label="triage", shape=box];
            agent_code_expert [label="code-expert", shape=box];
            handler_code_expert_on_tool_call [label="on tool-call", shape=hexagon];
            agent_doc_writer [label="doc-writer", shape=box];
            flow_main [label="main", shape=box, style=rounded, penwidth=3];
            handler_on_input [label="on input", shape=hexagon];
            subgraph cluster_1 {
                label="lib/research.sr";
                agent_fact_checker [label="fact-checker", shape=box];
                agent_researcher [label="researcher", shape=box];
                flow_gather [label="gather", shape=box, style=rounded];
            }
            flow_gather -> agent_researcher [label="run"];
            agent_triage -> agent_code_expert [label="delegate"];
            agent_triage -> agent_doc_writer [label="delegate"];
            agent_code_expert -> agent_fact_checker [label="use"];
            agent_code_expert -> handler_code_expert_on_tool_call [style=dashed, arrowhead=none];
            handler_code_expert_on_tool_call -> prompt_guard_prompt [label="call llm"];
            flow_main -> agent_triage [label="run"];
            flow_main -> flow_gather [label="run"];
            flow_main -> prompt_summary_prompt [label="call llm"];
            handler_on_input -> prompt_guard_prompt [label="call llm"];
        }
    "#]]
    .assert_eq(&stdout);
    if let Some(svg) = render_dot(&stdout) {
        assert_eq!(svg.matches("class=\"node\"").count(), 11, "{svg}");
        assert_eq!(svg.matches("class=\"edge\"").count(), 10, "{svg}");
    }
}

#[test]
fn names_that_clash_after_escaping_get_distinct_ids() {
    let source = "model main = openai/gpt-4o\nprompt p: \"\"\"Hi\"\"\"\n\
                  agent a-b:\n    instruction p\nagent a_b:\n    instruction p\n\
                  flow end:\n    run agent a-b\n    run agent a_b\n";
    let dir = temp_dir("clash", &[("w.sr", source)]);
    let (code, stdout, stderr) = sr(&["graph", "w.sr"], &dir);
    assert_eq!(code, 0, "{stderr}");
    expect![[r#"
        flowchart LR
            agent_a_b["a-b"]
            agent_a_b_2["a_b"]
            flow_end("end")
            flow_end -->|run| agent_a_b
            flow_end -->|run| agent_a_b_2
            classDef entry stroke-width:3px
            class agent_a_b entry
    "#]]
    .assert_eq(&stdout);
    check_mermaid(&stdout);
}

#[test]
fn remote_agents_are_nodes_of_their_own_kind_in_both_formats() {
    let source = "model main = openai/gpt-4o\nprompt p: \"\"\"Hi\"\"\"\n\
                  tool reviewer = a2a \"https://review.example.com/.well-known/agent-card.json\"\n\
                  tool check-bot = a2a \"http://127.0.0.1:9/.well-known/agent-card.json\"\n\
                  agent lead:\n    instruction p\n    use reviewer\n\
                  agent triage:\n    instruction p\n    delegate check-bot\n    tools reviewer\n\
                  flow main:\n    run agent lead\n    run agent triage\n";
    let dir = temp_dir("remote", &[("w.sr", source)]);
    let (code, mermaid, stderr) = sr(&["graph", "w.sr"], &dir);
    assert_eq!(code, 0, "{stderr}");
    expect![[r#"
        flowchart LR
            remote_agent_reviewer[["reviewer"]]
            remote_agent_check_bot[["check-bot"]]
            agent_lead["lead"]
            agent_triage["triage"]
            flow_main("main")
            agent_lead -->|use| remote_agent_reviewer
            agent_triage -->|delegate| remote_agent_check_bot
            agent_triage -->|use| remote_agent_reviewer
            flow_main -->|run| agent_lead
            flow_main -->|run| agent_triage
            classDef entry stroke-width:3px
            class flow_main entry
    "#]]
    .assert_eq(&mermaid);
    assert_eq!(check_mermaid(&mermaid), HashSet::from(["delegate", "use", "run"].map(String::from)));
    let (code, dot, stderr) = sr(&["graph", "--format", "dot", "w.sr"], &dir);
    assert_eq!(code, 0, "{stderr}");
    expect![[r#"
        digraph streetrace {
            rankdir=LR;
            remote_agent_reviewer [label="reviewer", shape=component];
            remote_agent_check_bot [label="check-bot", shape=component];
            agent_lead [label="lead", shape=box];
            agent_triage [label="triage", shape=box];
            flow_main [label="main", shape=box, style=rounded, penwidth=3];
            agent_lead -> remote_agent_reviewer [label="use"];
            agent_triage -> remote_agent_check_bot [label="delegate"];
            agent_triage -> remote_agent_reviewer [label="use"];
            flow_main -> agent_lead [label="run"];
            flow_main -> agent_triage [label="run"];
        }
    "#]]
    .assert_eq(&dot);
    if let Some(svg) = render_dot(&dot) {
        assert_eq!(svg.matches("class=\"node\"").count(), 5, "{svg}");
        assert_eq!(svg.matches("class=\"edge\"").count(), 5, "{svg}");
    }
}

#[test]
fn every_upstream_example_that_checks_gives_a_well_formed_graph() {
    let root = sr_testing::upstream_corpus().join("files");
    let mut drawn = 0;
    for (path, _) in sr_testing::upstream_files() {
        let (code, mermaid, _) = sr(&["graph", &path], &root);
        if code == 1 {
            continue; // the two upstream files with errors
        }
        assert_eq!(code, 0, "{path}");
        check_mermaid(&mermaid);
        let (_, dot, _) = sr(&["graph", "--format", "dot", &path], &root);
        render_dot(&dot);
        drawn += 1;
    }
    assert_eq!(drawn, 33);
}

#[test]
fn a_generated_workload_gives_a_well_formed_graph() {
    let dir = temp_dir("generated", &[("big.sr", &sr_testing::generated_workload(600))]);
    let (code, mermaid, stderr) = sr(&["graph", "big.sr"], &dir);
    assert_eq!(code, 0, "{stderr}");
    assert!(check_mermaid(&mermaid).len() >= 3, "{mermaid}");
}

#[test]
fn a_file_with_errors_prints_them_as_check_does_and_exits_1() {
    let main = "import ./lib.sr\nmodel main = openai/gpt-4o\nflow main:\n    run agent helper\n";
    let lib = "prompt p: \"\"\"Answer ${input_prompt}\"\"\"\nagent helper:\n    instruction p\n";
    let dir = temp_dir("errors", &[("main.sr", main), ("lib.sr", lib)]);
    let (code, stdout, stderr) = sr(&["graph", "main.sr"], &dir);
    assert_eq!((code, stdout.as_str()), (1, ""));
    let stderr = stderr.replace(&dir.canonicalize().unwrap().display().to_string(), "DIR");
    expect![[r#"
        error[E0016]: instruction 'p' (used by agent 'helper') references runtime variable '$input_prompt'
         --> DIR/lib.sr:1:21
          |
        1 | prompt p: """Answer ${input_prompt}"""
          |                     ^^^^^^^^^^^^^^^
          |
          = help: move '$input_prompt' to a prompt field, or use prompt composition with other prompts

        Found 1 error in DIR/lib.sr
    "#]]
    .assert_eq(&stderr);
}

#[test]
fn a_missing_file_exits_with_2() {
    let (code, stdout, stderr) = sr(&["graph", "nope.sr"], &fixtures());
    assert_eq!((code, stdout.as_str(), stderr.as_str()), (2, "", "error: file not found: nope.sr\n"));
}

/// Checks the output line by line against the Mermaid forms `sr graph` emits
/// (so anything else fails), that ids are plain and declared once, that every
/// edge and class names a declared node, and that subgraphs are closed.
/// Returns the edge labels.
fn check_mermaid(text: &str) -> HashSet<String> {
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("flowchart LR"), "{text}");
    let plain_id = |id: &str| {
        id.starts_with(|c: char| c.is_ascii_alphabetic()) && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let quoted = |label: &str| {
        label.len() >= 2 && label.starts_with('"') && label.ends_with('"') && {
            !label[1..label.len() - 1].contains('"')
        }
    };
    let mut nodes = HashSet::new();
    let mut references = Vec::new();
    let mut labels = HashSet::new();
    let mut open_subgraphs = 0;
    for line in lines {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("subgraph ") {
            let (id, title) = rest.split_once(' ').unwrap();
            assert!(plain_id(id) && title.starts_with('[') && title.ends_with(']'), "{line}");
            assert!(quoted(&title[1..title.len() - 1]), "{line}");
            open_subgraphs += 1;
        } else if line == "end" {
            open_subgraphs -= 1;
            assert!(open_subgraphs >= 0, "{text}");
        } else if line.starts_with("classDef ") {
        } else if let Some(id) = line.strip_prefix("class ") {
            references.push(id.strip_suffix(" entry").unwrap().to_string());
        } else if let Some((from, rest)) = line.split_once(" -->|") {
            let (label, to) = rest.split_once("| ").unwrap();
            labels.insert(label.to_string());
            references.extend([from.to_string(), to.to_string()]);
        } else if let Some((from, to)) = line.split_once(" -.- ") {
            references.extend([from.to_string(), to.to_string()]);
        } else {
            let split = line.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap();
            let (id, shape) = line.split_at(split);
            let label = [("(", ")"), ("[/", "/]"), ("{{", "}}"), ("[[", "]]"), ("[", "]")]
                .into_iter()
                .find_map(|(open, close)| shape.strip_prefix(open)?.strip_suffix(close))
                .unwrap_or_else(|| panic!("not a node: {line}"));
            assert!(quoted(label), "{line}");
            assert!(nodes.insert(id.to_string()), "declared twice: {id}");
        }
    }
    assert_eq!(open_subgraphs, 0, "{text}");
    for id in nodes.iter().chain(&references) {
        assert!(plain_id(id), "bad id {id}");
    }
    for id in &references {
        assert!(nodes.contains(id), "{id} is not declared:\n{text}");
    }
    labels
}

/// Renders with Graphviz, failing on any error or warning. Without Graphviz
/// the check is skipped loudly, except in CI, where it must be installed.
fn render_dot(dot: &str) -> Option<String> {
    let child =
        Command::new("dot").arg("-Tsvg").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) if std::env::var_os("CI").is_none() => {
            eprintln!("SKIPPED: Graphviz `dot` is not installed ({e}); apt-get install graphviz");
            return None;
        }
        Err(e) => panic!("Graphviz `dot` is required in CI: {e}"),
    };
    child.stdin.take().unwrap().write_all(dot.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.is_empty(), "dot failed: {stderr}\n{dot}");
    Some(String::from_utf8(out.stdout).unwrap())
}
