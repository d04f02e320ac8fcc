//! A seeded workflow from the enabled features: a tree of statements in
//! `flow main` and `flow sub`, rendered with the declarations they need.
//!
//! Every generated effect is observable outside the run: values and replies
//! are written to files of their own (one per statement, so parallel branches
//! never write the same file and a correct run's files do not depend on
//! timing), the cli's exit code goes to its own file (the command is no
//! shell's: `echo` prints its arguments), the MCP server counts its calls on
//! the host.

use super::Feature;
use crate::random::Rng;

/// A stdio MCP server with one tool, `bump(name)`, that appends `NAME KEY`
/// (its idempotency key) to the file named by argv[1] for every call: the
/// host-side count of a workflow's MCP effects.
pub const COUNTER_MCP: &str = r#"import json
import sys

log = sys.argv[1]
KEY = "streetrace.dev/idempotency-key"
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method = message.get("method")
    if method == "initialize":
        result = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "counter", "version": "1.0.0"},
        }
    elif method == "tools/list":
        schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        result = {"tools": [{"name": "bump", "description": "Counts a call", "inputSchema": schema}]}
    elif method == "tools/call":
        key = (message["params"].get("_meta") or {}).get(KEY, "")
        name = message["params"]["arguments"].get("name", "")
        with open(log, "a") as f:
            f.write(name + " " + key + "\n")
        result = {"content": [{"type": "text", "text": "bumped " + name}]}
    else:
        error = {"code": -32601, "message": "no such method"}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"#;

/// One statement of a generated flow.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    /// A simple statement, possibly of several lines (a value and the write
    /// that makes it observable), which shrinking keeps or drops whole.
    Line { feature: Feature, text: String },
    /// A block statement: its head, its body, and whether `end` closes it.
    Block { feature: Feature, head: String, body: Vec<Node>, end: bool },
}

impl Node {
    fn render(&self, indent: usize, out: &mut String) {
        let pad = " ".repeat(indent);
        match self {
            Node::Line { text, .. } => {
                for line in text.lines() {
                    out.push_str(&pad);
                    out.push_str(line);
                    out.push('\n');
                }
            }
            Node::Block { head, body, end, .. } => {
                out.push_str(&pad);
                out.push_str(head);
                out.push('\n');
                for node in body {
                    node.render(indent + 4, out);
                }
                if *end {
                    out.push_str(&pad);
                    out.push_str("end\n");
                }
            }
        }
    }

    /// The statements in this one, itself included.
    pub fn size(&self) -> usize {
        match self {
            Node::Line { .. } => 1,
            Node::Block { body, .. } => 1 + body.iter().map(Node::size).sum::<usize>(),
        }
    }

    fn features(&self, out: &mut Vec<Feature>) {
        match self {
            Node::Line { feature, .. } => out.push(*feature),
            Node::Block { feature, body, .. } => {
                out.push(*feature);
                body.iter().for_each(|n| n.features(out));
            }
        }
    }
}

/// A generated workflow: the bodies of `flow main` and `flow sub`, whether
/// it has the guardrail handlers and whether `sub` ends with `return`.
#[derive(Clone, Debug, PartialEq)]
pub struct Workflow {
    pub main: Vec<Node>,
    pub sub: Vec<Node>,
    pub guardrails: bool,
    pub returns: bool,
}

impl Workflow {
    /// The `.sr` text; `mcp` is the command line of the [`COUNTER_MCP`]
    /// server (`python3 'counter.py' 'counts.txt'`).
    pub fn render(&self, mcp: &str) -> String {
        let used = self.features();
        let has = |f: Feature| used.contains(&f);
        let mut out = String::from("model main = openai/gpt-4o-mini\ntool fs = builtin streetrace.fs\n");
        if has(Feature::Cli) {
            out.push_str("tool sh = builtin streetrace.cli\n");
        }
        if has(Feature::State) {
            out.push_str("tool st = builtin streetrace.state\n");
        }
        if has(Feature::Mcp) {
            out.push_str(&format!("tool counter = mcp \"stdio:{mcp}\"\n"));
        }
        if has(Feature::Executor) {
            out.push_str("executor box:\n    backend: bubblewrap\n    timeout: 20\n");
        }
        out.push_str("prompt helper: \"\"\"You help.\"\"\"\nprompt ask: \"\"\"Say something.\"\"\"\n");
        out.push_str("agent writer:\n    instruction helper\n    tools fs\n");
        if self.guardrails {
            out.push_str(concat!(
                "on output do\n    mask pii\n    block if \"a\" == \"b\"\n    warn if 1 > 2\n",
                "    retry with \"again\" if 1 > 2\n    if 1 > 2: retry step \"x\"\nend\n",
            ));
        }
        out.push_str("flow sub:\n    $pushed = []\n");
        self.sub.iter().for_each(|n| n.render(4, &mut out));
        out.push_str(if self.returns { "    return \"sub done\"\n" } else { "    log \"sub done\"\n" });
        out.push_str("flow main:\n    $pushed = []\n    $state_k = 0\n");
        self.main.iter().for_each(|n| n.render(4, &mut out));
        out.push_str("    fs.write_file(\"pushed.txt\", json_format([$pushed, $state_k]))\n");
        out
    }

    /// Every feature the workflow uses, with repeats.
    pub fn features(&self) -> Vec<Feature> {
        let mut out = Vec::new();
        self.main.iter().chain(&self.sub).for_each(|n| n.features(&mut out));
        if self.guardrails {
            out.push(Feature::Guardrails);
        }
        if self.returns {
            out.push(Feature::Return);
        }
        out
    }

    /// Statements, for the size of a shrunk case.
    pub fn size(&self) -> usize {
        let flags = usize::from(self.guardrails) + usize::from(self.returns);
        self.main.iter().chain(&self.sub).map(Node::size).sum::<usize>() + flags
    }
}

/// Where a statement is generated: what the checker allows there.
#[derive(Clone, Copy)]
struct Place {
    depth: usize,
    in_loop: bool,
    in_parallel: bool,
    in_main: bool,
}

struct Generator<'a> {
    rng: Rng,
    features: &'a [Feature],
    next: usize,
}

/// The workflow of `seed` with about `size` statements, of `features` only.
pub fn generate(seed: u64, features: &[Feature], size: usize) -> Workflow {
    let mut g = Generator { rng: Rng::new(seed), features, next: 0 };
    let top = Place { depth: 0, in_loop: false, in_parallel: false, in_main: true };
    let main = g.body(top, size.max(1));
    let sub = if features.contains(&Feature::RunFlow) {
        g.body(Place { in_main: false, ..top }, (size / 3).max(1))
    } else {
        Vec::new()
    };
    let on = |f| features.contains(&f);
    Workflow { main, sub, guardrails: on(Feature::Guardrails), returns: on(Feature::Return) }
}

impl Generator<'_> {
    fn on(&self, f: Feature) -> bool {
        self.features.contains(&f)
    }

    fn id(&mut self) -> usize {
        self.next += 1;
        self.next
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.rng.below(100) < percent
    }

    fn body(&mut self, place: Place, count: usize) -> Vec<Node> {
        let mut body = Vec::new();
        for _ in 0..count {
            if let Some(node) = self.statement(place) {
                body.push(node);
            }
        }
        if self.on(Feature::OnFailure) && !body.is_empty() && self.chance(30) {
            let id = self.id();
            let text = format!("fs.write_file(\"failed{id}.txt\", str($error))");
            let handler = Node::Line { feature: Feature::FileTools, text };
            body.push(Node::Block {
                feature: Feature::OnFailure,
                head: "on failure:".into(),
                body: vec![handler],
                end: false,
            });
        }
        body
    }

    /// A condition that draws from a value source when one is enabled.
    fn condition(&mut self) -> String {
        if self.on(Feature::Random) && self.chance(60) {
            "random() < 0.5".into()
        } else if self.on(Feature::RandomInt) && self.chance(60) {
            "random_int(0, 1) == 1".into()
        } else {
            ["true", "1 > 2", "len($pushed) < 3"][self.rng.below(3)].into()
        }
    }

    fn statement(&mut self, place: Place) -> Option<Node> {
        let choices: Vec<Feature> = self.features.iter().copied().filter(|&f| self.fits(f, place)).collect();
        if choices.is_empty() {
            return None;
        }
        let feature = choices[self.rng.below(choices.len())];
        let id = self.id();
        // In a `parallel` block each statement is a branch: a value and the
        // write that makes it observable share one.
        let line = |text: String| {
            let node = Node::Line { feature, text };
            match &node {
                Node::Line { text, .. } if place.in_parallel && text.contains('\n') => {
                    Some(Node::Block { feature: Feature::If, head: "if true:".into(), body: vec![node], end: false })
                }
                _ => Some(node),
            }
        };
        let inner = Place { depth: place.depth + 1, ..place };
        let small = 1 + self.rng.below(3);
        match feature {
            Feature::Assign => line(format!("$a{id} = {id} * 2 + len($pushed)")),
            Feature::RunAgent => {
                line(format!("$g{id} = run agent writer with \"task {id}\"\nfs.write_file(\"g{id}.txt\", str($g{id}))"))
            }
            Feature::AgentTools => line(format!("run agent writer with \"WRITE m{id}.txt\"")),
            Feature::ModelRetry => line(format!(
                "$y{id} = run agent writer with \"FLAKY {id}\"\nfs.write_file(\"y{id}.txt\", str($y{id}))"
            )),
            Feature::RunFlow => line(format!("$s{id} = run sub\nfs.write_file(\"s{id}.txt\", str($s{id}))")),
            Feature::CallLlm => line(format!("$l{id} = call llm ask\nfs.write_file(\"l{id}.txt\", str($l{id}))")),
            Feature::Log => line(format!("log \"log {id} ${{pushed}}\"")),
            Feature::Notify => line(format!("notify \"note {id}\"")),
            Feature::Push => line(format!("push \"p{id}\" to $pushed")),
            Feature::Escalate => {
                let text =
                    format!("escalate to human \"Question {id}?\"\nfs.write_file(\"h{id}.txt\", str($human_input))");
                line(text)
            }
            Feature::Uuid => line(format!("$u{id} = uuid()\nfs.write_file(\"u{id}.txt\", $u{id})")),
            Feature::Now => line(format!("$t{id} = now()\nfs.write_file(\"t{id}.txt\", $t{id})")),
            Feature::Random => line(format!("$r{id} = random()\nfs.write_file(\"r{id}.txt\", str($r{id}))")),
            Feature::RandomInt => {
                line(format!("$i{id} = random_int(1, 1000)\nfs.write_file(\"i{id}.txt\", str($i{id}))"))
            }
            Feature::FileTools => line(self.file_tool(id)),
            Feature::Cli => line(format!(
                "$c{id} = sh.execute_cli_command(\"echo c{id} >> c{id}.txt\")\nfs.write_file(\"c{id}.rc\", str($c{id}.return_code))"
            )),
            Feature::Mcp => line(format!("counter.bump(\"m{id}\")")),
            Feature::State => line(if place.in_loop && self.chance(30) {
                "st.exit_loop()".to_string()
            } else {
                format!("st.set_state(\"state_k\", {id})\nfs.write_file(\"k{id}.txt\", str(st.get_state(\"state_k\")))")
            }),
            Feature::Executor => line(format!(
                "$x{id} = box.run(\"print({id})\")\nfs.write_file(\"x{id}.txt\", $x{id}.outcome + $x{id}.stdout)"
            )),
            Feature::ToolFailure => line(format!("fs.read_file(\"missing{id}.txt\")")),
            Feature::Continue | Feature::Break | Feature::Abort => {
                let word = match feature {
                    Feature::Continue => "continue",
                    Feature::Break => "break",
                    _ => "abort",
                };
                let head = format!("if {}:", self.condition());
                let body = vec![Node::Line { feature, text: word.into() }];
                Some(Node::Block { feature: Feature::If, head, body, end: false })
            }
            Feature::If => {
                let head = format!("if {}:", self.condition());
                let body = self.body(inner, small);
                Some(Node::Block { feature, head, body, end: false })
            }
            Feature::For => {
                let list =
                    if self.on(Feature::RandomInt) && self.chance(50) { "range(random_int(0, 2))" } else { "[1, 2]" };
                let head = format!("for $e{id} in {list} do");
                let body = self.body(Place { in_loop: true, in_parallel: false, ..inner }, small);
                Some(Node::Block { feature, head, body, end: true })
            }
            Feature::Loop => {
                let body = self.body(Place { in_loop: true, in_parallel: false, ..inner }, small);
                Some(Node::Block { feature, head: "loop max 2 do".into(), body, end: true })
            }
            Feature::Parallel => {
                let branches = 2 + self.rng.below(2);
                let mut body = self.body(Place { in_loop: false, in_parallel: true, ..inner }, branches);
                // A question's branch comes last, so that the others' calls
                // are under way when it pauses: the pause must let them end.
                body.sort_by_key(|branch| match branch {
                    Node::Block { body, .. } => {
                        body.iter().any(|n| matches!(n, Node::Line { feature: Feature::Escalate, .. }))
                    }
                    Node::Line { .. } => false,
                });
                Some(Node::Block { feature, head: "parallel do".into(), body, end: true })
            }
            Feature::Match => {
                let scrutinee = if self.on(Feature::RandomInt) {
                    "str(random_int(1, 3))".to_string()
                } else {
                    format!("str({id} % 3)")
                };
                line(format!(
                    "match {scrutinee}\n    when \"1\" -> log \"one {id}\"\n    when \"2\" -> notify \"two {id}\"\n    else -> log \"other {id}\"\nend"
                ))
            }
            Feature::Return | Feature::OnFailure | Feature::Guardrails => None,
        }
    }

    /// A file tool call writing or reading files of its own.
    fn file_tool(&mut self, id: usize) -> String {
        match self.rng.below(6) {
            0 => format!("fs.write_file(\"f{id}.txt\", \"written {id}\")"),
            1 => format!(
                "fs.append_to_file(\"a{id}.txt\", \"appended {id}\")\nfs.append_to_file(\"a{id}.txt\", \" again\")"
            ),
            2 => format!("fs.create_directory(\"d{id}\")\nfs.write_file(\"d{id}/in.txt\", \"{id}\")"),
            3 => format!(
                "fs.write_file(\"w{id}.txt\", \"{id}\")\n$b{id} = fs.read_file(\"w{id}.txt\")\nfs.write_file(\"b{id}.txt\", $b{id} + \"!\")"
            ),
            4 => format!(
                "fs.create_directory(\"n{id}\")\nfs.write_file(\"n{id}/x.txt\", \"x\")\nfs.write_file(\"n{id}.txt\", json_format(fs.list_directory(\"n{id}\")))"
            ),
            _ => format!(
                "fs.write_file(\"q{id}.txt\", \"needle {id}\")\nfs.write_file(\"q{id}.json\", str(len(fs.find_in_files(\"q{id}.txt\", \"needle\"))))"
            ),
        }
    }

    /// Whether `f` can be generated at `place`.
    fn fits(&self, f: Feature, place: Place) -> bool {
        let nested = place.depth < 2;
        match f {
            Feature::If | Feature::For | Feature::Loop => nested,
            Feature::Parallel => nested && !place.in_parallel,
            Feature::Continue | Feature::Break => place.in_loop && !place.in_parallel,
            // `sub` assigns no `$state_k` for the state tool to set.
            Feature::RunFlow => place.in_main,
            Feature::State => place.in_main && !place.in_parallel,
            // Parallel branches share `$pushed` and the state: their order
            // would depend on timing.
            Feature::Push | Feature::Match => !place.in_parallel,
            Feature::Return | Feature::OnFailure | Feature::Guardrails => false,
            _ => true,
        }
    }
}
