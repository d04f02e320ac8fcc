// The app's pure logic, checked against the tables it mirrors: the runtime's event kinds
// (`EVENT_KINDS`, generated from the runtime's `Payload` by crates/sr-api) and sr-eval's
// findings arithmetic.
import { test, expect } from "@playwright/test";
import { append, summary, totals, type Row } from "../src/lib/timeline";
import { findings, parseResults, type CaseResult } from "../src/lib/results";
import type { RunEvent } from "../src/lib/api";
import { EVENT_KINDS } from "../src/lib/wire";

function event(seq: number, type: string, fields: Record<string, unknown> = {}, path: string[] = ["flow:main"]): RunEvent {
  return { seq, path, type, ...fields };
}

test("every event kind of the runtime has a summary of its own, not the generic one", () => {
  const kinds: readonly string[] = EVENT_KINDS;
  // Kinds the timeline shows with their fields as JSON, on purpose (rare, upstream's).
  const generic = new Set(["text_delta", "llm_call", "llm_response", "flow_result", "escalation", "history_compaction"]);
  const missing = kinds.filter((kind) => !generic.has(kind) && summary(event(1, kind, {})).summary.startsWith("{"));
  expect(missing).toEqual([]);
  // Whatever the fields, no kind throws, and every summary is bounded.
  const huge = "x".repeat(100_000);
  for (const kind of [...kinds, "a_kind_from_the_future"]) {
    for (const fields of [{}, { message: huge, text: huge, args: { huge }, result: [huge], value: null, usage: "bad" }]) {
      const { summary: text } = summary(event(1, kind, fields));
      expect(text.length, kind).toBeLessThanOrEqual(400);
    }
  }
});

test("streamed text of one producer is one growing row; another producer starts a row", () => {
  const rows: Row[] = [];
  append(rows, [
    event(1, "agent_started", { agent: "a", model: "m", input: "hi" }, ["flow:main", "agent:a"]),
    event(2, "text_delta", { text: "Hel" }, ["flow:main", "agent:a"]),
    event(3, "text_delta", { text: "lo" }, ["flow:main", "agent:a"]),
  ]);
  append(rows, [
    event(4, "text_delta", { text: "!" }, ["flow:main", "agent:a"]),
    event(5, "text_delta", { text: "other" }, ["flow:main", "agent:b"]),
    event(6, "tool_call", { tool: "read_file", args: { path: "a" }, call_id: "c" }, ["flow:main", "agent:a"]),
    event(7, "text_delta", { text: "again" }, ["flow:main", "agent:a"]),
  ]);
  expect(rows.map((r) => [r.seq, r.type, r.depth, r.summary])).toEqual([
    [1, "agent_started", 2, "agent a (m): hi"],
    [2, "text", 2, "Hello!"],
    [5, "text", 2, "other"],
    [6, "tool_call", 2, 'read_file({"path":"a"})'],
    [7, "text", 2, "again"],
  ]);
});

test("tokens and cost: the model responses so far, or the run's own usage where it says more", () => {
  const usage = (input: number, output: number, cost?: number) => ({ usage: { input_tokens: input, output_tokens: output, cost_usd: cost } });
  const live = [event(1, "model_response", usage(10, 2)), event(2, "model_response", usage(5, 1, 0.5)), event(3, "agent_finished", usage(99, 99))];
  expect(totals(live)).toEqual({ input: 15, output: 3, cost: 0.5 });
  expect(totals([...live, event(4, "run_finished", usage(20, 4))])).toEqual({ input: 20, output: 4, cost: 0.5 });
  // A pause ends with run_finished too; after the resume the model responses go on counting.
  const resumed = [...live, event(4, "run_finished", usage(15, 3, 0.5)), event(5, "model_response", usage(7, 7, 0.25))];
  expect(totals(resumed)).toEqual({ input: 22, output: 10, cost: 0.75 });
  expect(totals([])).toEqual({ input: 0, output: 0, cost: null });
});

function scored(matched: number, expected: number, reported: number): CaseResult {
  return {
    id: "c", workload: "w", entry: null, model: null, passed: true, score: 1, output: null, error: null,
    tokens: { input: 0, output: 0 }, cost_usd: null, latency_ms: 0, model_calls: 0,
    scores: [{ kind: "findings", passed: true, score: 1, detail: `precision 1.00 recall 1.00 F1 1.00 (${matched} of ${expected} expected, ${reported} reported)` }],
  };
}

test("findings are scored as sr-eval scores them (crates/sr-eval/src/scorer/findings.rs)", () => {
  // The edge cases of sr-eval's own tests: nothing expected nor reported, spurious, missed.
  expect(findings([scored(0, 0, 0)])).toEqual({ precision: 1, recall: 1, f1: 1 });
  expect(findings([scored(0, 0, 2)])).toEqual({ precision: 0, recall: 1, f1: 0 });
  expect(findings([scored(0, 2, 0)])).toEqual({ precision: 0, recall: 0, f1: 0 });
  const f = findings([scored(2, 3, 3)])!;
  expect([f.precision, f.recall, f.f1].map((x) => x.toFixed(4))).toEqual(["0.6667", "0.6667", "0.6667"]);
  // Micro-averaged over cases.
  const m = findings([scored(1, 1, 1), scored(0, 3, 1)])!;
  expect([m.precision, m.recall]).toEqual([0.5, 0.25]);
  // No findings scorer: no numbers.
  const plain = scored(0, 0, 0);
  plain.scores = [{ kind: "exact", passed: true, score: 1, detail: "matched" }];
  expect(findings([plain])).toBeUndefined();
});

test("a file that is not a results.json is refused with a reason", () => {
  for (const text of ["[]", "{}", '{"cases": 1, "summary": []}', "null", "1"]) {
    expect(() => parseResults(text), text).toThrow("not an sr eval results.json");
  }
  expect(() => parseResults("{")).toThrow();
  expect(parseResults('{"cases": [], "summary": []}').cases).toEqual([]);
});

test("the state after an event is every variable's last value up to it", async () => {
  const { momentAt } = await import("../src/lib/timeline");
  const events = [
    event(1, "state_change", { variable: "a", value: 1 }),
    event(2, "model_response", { usage: { input_tokens: 3, output_tokens: 1 } }),
    event(3, "state_change", { variable: "b", value: { x: [1] } }),
    event(4, "state_change", { variable: "a", value: "two" }),
  ];
  expect(momentAt(events, 0)).toEqual({ variables: [], usage: { input: 0, output: 0, cost: null } });
  expect(momentAt(events, 1).variables).toEqual([["a", 1]]);
  expect(momentAt(events, 3)).toEqual({ variables: [["a", 1], ["b", { x: [1] }]], usage: { input: 3, output: 1, cost: null } });
  expect(momentAt(events, 4).variables).toEqual([["a", "two"], ["b", { x: [1] }]]);
  expect(momentAt(events, 99).variables).toEqual(momentAt(events, 4).variables);
});

test("a fork's body sends what the user typed: a reply when not blank, a variable as JSON or text", async () => {
  const { forkBody, REPLY_EVENTS } = await import("../src/lib/travel");
  expect(forkBody(7, "", "", "")).toEqual({ at: 7 });
  expect(forkBody(7, "   ", "", "ignored without a variable")).toEqual({ at: 7 });
  expect(forkBody(7, "new reply", "", "")).toEqual({ at: 7, reply: "new reply" });
  expect(forkBody(3, "", "n", "42")).toEqual({ at: 3, set: { n: 42 } });
  expect(forkBody(3, "", "o", '{"a": [1]}')).toEqual({ at: 3, set: { o: { a: [1] } } });
  expect(forkBody(3, "", "s", "plain words")).toEqual({ at: 3, set: { s: "plain words" } });
  expect(forkBody(3, "", "s", "")).toEqual({ at: 3, set: { s: "" } });
  expect([...REPLY_EVENTS].sort()).toEqual(["model_request", "model_response"]);
});

test("a fork's value box starts with the variable's value, which the body sends back unchanged", async () => {
  const { forkBody, prefill } = await import("../src/lib/travel");
  const variables = { draft: "Dear Ada", n: 42, o: { a: [1, null] }, s: "42", none: null };
  for (const [name, value] of Object.entries(variables)) {
    expect(forkBody(1, "", name, prefill(variables, name)).set, name).toEqual({ [name]: value });
  }
  expect(prefill(variables, "draft")).toBe('"Dear Ada"');
  expect(prefill(variables, "")).toBe("");
  expect(prefill(variables, "missing")).toBe("");
});

test("a fork says what it was given: the reply shortened, each variable set, or nothing", async () => {
  const { forkBrief, forkChanges } = await import("../src/lib/travel");
  const long = "y".repeat(200);
  const cases = [
    [{ run: "r", at: 3 }, "nothing replaced", "nothing replaced"],
    [{ run: "r", at: 3, reply: "Hi" }, "reply replaced", "the model's reply replaced by “Hi”"],
    [{ run: "r", at: 3, reply: "" }, "reply replaced", "the model's reply replaced by “”"],
    [{ run: "r", at: 3, set: { a: 1, b: "x" } }, "$a set, $b set", '$a set to 1; $b set to "x"'],
    [{ run: "r", at: 3, reply: long, set: { c: long } }, "reply replaced, $c set", `the model's reply replaced by “${"y".repeat(80)}…”; $c set to "${"y".repeat(79)}…`],
  ] as const;
  for (const [from, brief, changes] of cases) {
    expect(forkBrief(from), JSON.stringify(from)).toBe(brief);
    expect(forkChanges(from), JSON.stringify(from)).toBe(changes);
  }
});

test("the graph's labels: each kind once per target, three lines at most, none over another or over a node", async () => {
  const { layout, labelLines, fitted, GAP_X, NODE_W, NODE_H } = await import("../src/lib/graph");
  expect(labelLines(["use", "use", "delegate"])).toEqual(["use", "delegate"]);
  expect(labelLines(["a", "b", "c", "d", "e"])).toEqual(["a", "b", "+3 more"]);
  expect(fitted("short")).toBe("short");
  expect(fitted("x".repeat(40))).toBe(`${"x".repeat(19)}…`);
  // Many sources into few targets, every kind, a cycle and a node of its own.
  const kinds = ["run_agent", "run_flow", "call_llm", "delegate", "use", "handler", "instruction"];
  const edges = [];
  for (let i = 0; i < 14; i++) edges.push({ from: `flow f${i % 5}`, to: `agent a${i % 3}`, kind: kinds[i % kinds.length] });
  edges.push({ from: "agent a0", to: "flow f0", kind: "use" }, { from: "agent a1", to: "agent a2", kind: "delegate" });
  const drawn = layout({ nodes: [{ id: "prompt alone", kind: "prompt", label: "alone" }], edges });
  // A label is at most 11 characters of 10 px type (about 6 px each), right-aligned at x.
  const boxes = drawn.labels.map((l) => ({ left: l.x - l.text.length * 6, right: l.x, top: l.y - 10, bottom: l.y }));
  const nodes = [...drawn.at.values()].map((p) => ({ left: p.x, right: p.x + NODE_W, top: p.y, bottom: p.y + NODE_H }));
  const apart = (a: typeof boxes[0], b: typeof boxes[0]) => a.right <= b.left || b.right <= a.left || a.bottom <= b.top || b.bottom <= a.top;
  for (const [i, a] of boxes.entries()) {
    expect(a.right - a.left, drawn.labels[i].text).toBeLessThan(GAP_X - 6);
    for (const b of boxes.slice(i + 1)) expect(apart(a, b), `${JSON.stringify(a)} ${JSON.stringify(b)}`).toBe(true);
    for (const n of nodes) expect(apart(a, n), drawn.labels[i].text).toBe(true);
  }
  for (const [i, a] of nodes.entries()) for (const b of nodes.slice(i + 1)) expect(apart(a, b)).toBe(true);
  expect(drawn.labels.length).toBeGreaterThan(3);
});

test("a parallel block's branches are lanes: next to each other in one column, in a box that holds only them", async () => {
  const { layout, NODE_W, NODE_H } = await import("../src/lib/graph");
  const lane = (block: number, branch: number) => ({ parallel: { block, branch } });
  const drawn = layout({
    edges: [
      { from: "flow main", to: "agent first", kind: "run_agent" },
      { from: "flow main", to: "agent a", kind: "run_agent", ...lane(4, 0) },
      { from: "flow main", to: "agent between", kind: "run_agent" },
      { from: "flow main", to: "flow b", kind: "run_flow", ...lane(4, 1) },
      { from: "flow main", to: "agent c", kind: "run_agent", ...lane(9, 0) },
      { from: "flow main", to: "agent d", kind: "run_agent", ...lane(9, 1) },
      { from: "flow b", to: "agent a", kind: "delegate" },
    ],
  });
  expect(drawn.lanes.map((l) => [l.key, l.nodes])).toEqual([
    ["flow main#4", ["agent a", "flow b"]],
    ["flow main#9", ["agent c", "agent d"]],
  ]);
  const y = (id: string) => drawn.at.get(id)!.y;
  expect(y("flow b") - y("agent a")).toBe(NODE_H + 14);
  expect(y("agent d") - y("agent c")).toBe(NODE_H + 14);
  const rect = (id: string) => ({ left: drawn.at.get(id)!.x, right: drawn.at.get(id)!.x + NODE_W, top: y(id), bottom: y(id) + NODE_H });
  const inside = (r: ReturnType<typeof rect>, l: (typeof drawn.lanes)[0]) =>
    r.left >= l.x && r.right <= l.x + l.width && r.top >= l.y && r.bottom <= l.y + l.height;
  const meets = (r: ReturnType<typeof rect>, l: (typeof drawn.lanes)[0]) =>
    !(r.right <= l.x || l.x + l.width <= r.left || r.bottom <= l.y || l.y + l.height <= r.top);
  for (const l of drawn.lanes) {
    for (const node of drawn.nodes) {
      const r = rect(node.id);
      if (l.nodes.includes(node.id)) expect(inside(r, l), `${node.id} in ${l.key}`).toBe(true);
      else expect(meets(r, l), `${node.id} meets ${l.key}`).toBe(false);
    }
    for (const label of drawn.labels) expect(label.x < l.x || label.x - label.text.length * 6 > l.x + l.width, label.text).toBe(true);
  }
  expect(drawn.labels.filter((l) => l.text.startsWith("∥")).map((l) => l.text)).toEqual(["∥ run_agent", "∥ run_flow", "∥ run_agent", "∥ run_agent"]);
});

test("a flow's calls are a chain in statement order: a step a column further, its arrow from the step before; a block is one step", async () => {
  const { layout, steps, NODE_W, NODE_H } = await import("../src/lib/graph");
  const call = (to: string, kind: string, order: number, block?: number, branch?: number) => ({
    from: "flow main",
    to,
    kind,
    order,
    ...(block === undefined ? {} : { parallel: { block, branch: branch! } }),
  });
  // Listed out of order: the order is the edges' own.
  const edges = [
    call("agent last", "run_agent", 4),
    call("prompt plan", "call_llm", 0),
    call("agent a", "run_agent", 1, 7, 0),
    call("agent b", "run_agent", 2, 7, 1),
    call("flow sub", "run_flow", 3),
    { from: "agent a", to: "agent expert", kind: "delegate" },
  ];
  expect(edges.map((e) => steps(edges).get(e))).toEqual([3, 0, 1, 1, 2, undefined]);
  const drawn = layout({ edges });
  const column = (id: string) => drawn.at.get(id)!.x;
  expect(["flow main", "prompt plan", "agent a", "agent b", "flow sub", "agent last"].map(column)).toEqual(
    [0, 1, 2, 2, 3, 4].map((d) => d * (NODE_W + 90) + 4),
  );
  const from = (to: string) => drawn.arrows.find((a) => a.edge.to === to)!;
  const right = (id: string) => [drawn.at.get(id)!.x + NODE_W, drawn.at.get(id)!.y + NODE_H / 2];
  // The first step from the flow; the block's branches from the prompt; the next step from the block's box.
  expect([from("prompt plan").then, [from("prompt plan").x1, from("prompt plan").y1]]).toEqual([false, right("flow main")]);
  expect([from("agent a").then, [from("agent a").x1, from("agent a").y1]]).toEqual([true, right("prompt plan")]);
  const box = drawn.lanes.find((l) => l.key === "flow main#7")!;
  expect([from("flow sub").x1, from("flow sub").y1]).toEqual([box.x + box.width, box.y + box.height / 2]);
  expect([from("agent last").x1, from("agent last").y1]).toEqual(right("flow sub"));
  // A reference that is no call of a flow is drawn from its source.
  expect([from("agent expert").then, [from("agent expert").x1, from("agent expert").y1]]).toEqual([false, right("agent a")]);
  // Without orders (an older server) the calls fan out from the flow, one column.
  const plain = layout({ edges: edges.map((e) => ({ ...e, order: undefined })) });
  expect(new Set(["prompt plan", "agent a", "flow sub", "agent last"].map((id) => plain.at.get(id)!.x)).size).toBe(1);
  expect(plain.arrows.every((a) => !a.then)).toBe(true);
});

test("the run's path is the nodes its events came from; a node's events are those inside it", async () => {
  const { visited, inNode, nodeOf } = await import("../src/lib/graph");
  const events = [
    event(1, "run_started", {}, []),
    event(2, "flow_started", {}, ["flow:main"]),
    event(3, "agent_started", {}, ["flow:main", "branch:2", "agent:helper"]),
    event(4, "log", {}, ["flow:main", "branch:2", "agent:helper", "agent:expert"]),
    { seq: 5, type: "hostile", path: "not a list" } as unknown as RunEvent,
    event(6, "llm_call", { prompt_name: "plan" }, ["flow:main"]),
  ];
  expect([...visited(events)].sort()).toEqual(["agent expert", "agent helper", "flow main", "prompt plan"]);
  expect(events.filter((e) => inNode(e, "agent helper")).map((e) => e.seq)).toEqual([3, 4]);
  expect(events.filter((e) => inNode(e, "flow main")).map((e) => e.seq)).toEqual([2, 3, 4, 6]);
  expect([nodeOf("branch:2"), nodeOf("agent:"), nodeOf("tool:x"), nodeOf("flow:a b")]).toEqual([undefined, undefined, undefined, "flow a b"]);
});

test("the trace pairs each agent, model call and tool call with its end, and the slowest is a step", async () => {
  const { spans, slowest } = await import("../src/lib/waterfall");
  const agent = ["flow:main", "agent:a"];
  const at = (seq: number, ms: number, type: string, fields: Record<string, unknown> = {}, path = agent): RunEvent => ({
    ...event(seq, type, fields, path),
    at_ms: 1_000_000 + ms,
  });
  const usage = { input_tokens: 5, output_tokens: 2, cost_usd: 0.5 };
  const all = spans([
    at(1, 0, "run_started", {}, []),
    at(2, 10, "agent_started", { agent: "a" }),
    at(3, 20, "model_request", { model: "m" }),
    at(4, 520, "model_response", { model: "m", usage }),
    // Two calls at once, answered in the other order.
    at(5, 530, "tool_call", { tool: "slow", call_id: "c1" }),
    at(6, 531, "tool_call", { tool: "quick", call_id: "c2" }),
    at(7, 600, "tool_result", { tool: "quick", call_id: "c2" }),
    at(8, 1530, "tool_result", { tool: "slow", call_id: "c1" }),
    at(9, 1540, "agent_finished", { agent: "a", usage }),
    at(10, 1600, "model_request", { model: "m" }, ["flow:main", "agent:b"]),
  ]);
  const shown = all.map((s) => [s.label, s.seq, s.start, s.duration ?? "open"]);
  expect(shown).toEqual([
    ["agent a", 2, 10, 1530],
    ["model m", 3, 20, 500],
    ["tool slow", 5, 530, 1000],
    ["tool quick", 6, 531, 69],
    ["model m", 10, 1600, "open"],
  ]);
  expect(all[1].tokens).toEqual({ input: 5, output: 2 });
  expect(all[1].cost).toBe(0.5);
  expect(all[2].tokens).toBeUndefined();
  // The agent took longest, but it holds its steps: the slow tool is the one to look at.
  expect(slowest(all)?.label).toBe("tool slow");
  expect(spans([event(1, "agent_started", { agent: "a" })])).toEqual([]);
});
