// The graph view's parsing and layout (src/graphLayout.ts), on the Mermaid
// text the server writes (crates/sr-ide/src/graph.rs). `npm run test:unit`.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { parseMermaid, renderSvg } from '../../out/test/graphLayout.js';

const PROGRAM = `flowchart LR
    n0("main")
    n1["helper"]
    n2["lead"]
    n3[/"p"/]
    n4{{"on#32;start"}}
    n2 -->|delegate| n1
    n0 -->|run| n2
    n0 -->|call llm| n3
`;

test('reads every node shape and edge the server writes', () => {
  assert.deepEqual(parseMermaid(PROGRAM), {
    nodes: [
      { id: 'n0', kind: 'flow', label: 'main' },
      { id: 'n1', kind: 'agent', label: 'helper' },
      { id: 'n2', kind: 'agent', label: 'lead' },
      { id: 'n3', kind: 'prompt', label: 'p' },
      { id: 'n4', kind: 'handler', label: 'on start' },
    ],
    edges: [
      { from: 'n2', label: 'delegate', to: 'n1' },
      { from: 'n0', label: 'run', to: 'n2' },
      { from: 'n0', label: 'call llm', to: 'n3' },
    ],
  });
});

// What `sr graph` and the server write for a program with an import, a handler and an entry point.
const WITH_FILES = `flowchart LR
    agent_lead["lead"]
    handler_lead_on_tool_call{{"on tool-call"}}
    flow_main("main")
    subgraph file_1 ["lib/helpers.sr"]
        agent_helper["helper"]
    end
    agent_lead -->|delegate| agent_helper
    agent_lead -.- handler_lead_on_tool_call
    flow_main -->|run| agent_lead
    classDef entry stroke-width:3px
    class flow_main entry
`;

test('reads files, handler ties and the entry point', () => {
  const graph = parseMermaid(WITH_FILES);
  assert.deepEqual(graph.nodes, [
    { id: 'agent_lead', kind: 'agent', label: 'lead' },
    { id: 'handler_lead_on_tool_call', kind: 'handler', label: 'on tool-call' },
    { id: 'flow_main', kind: 'flow', label: 'main', entry: true },
    { id: 'agent_helper', kind: 'agent', label: 'helper', file: 'lib/helpers.sr' },
  ]);
  assert.deepEqual(graph.edges[1], { from: 'agent_lead', label: '', to: 'handler_lead_on_tool_call', tie: true });
  const svg = renderSvg(graph);
  assert.match(svg, /<g class="node flow entry" data-name="main">/);
  assert.match(svg, /<title>agent helper \(lib\/helpers\.sr\)<\/title>/);
  assert.equal((svg.match(/<g class="edge tie"><path d="[^"]*"\/>/g) ?? []).length, 1, 'a tie has no arrow');
});

test('refuses what it cannot read, naming the line', () => {
  assert.throws(() => parseMermaid('flowchart LR\n    class nobody entry\n'), /the entry "nobody" is not a node/);
  assert.throws(() => parseMermaid('graph TD\n'), /not a Mermaid flowchart: "graph TD"/);
  assert.throws(() => parseMermaid('flowchart LR\n    n0 --> n1\n'), /cannot read the graph's line "    n0 --> n1"/);
});

/** Each node's name and its shape's left edge, from the SVG. */
function positions(svg) {
  return Object.fromEntries(
    [...svg.matchAll(/data-name="([^"]*)"><title>[^<]*<\/title><(?:rect x="([\d.]+)"|polygon points="([^"]+)")/g)].map(
      ([, name, rect, polygon]) => [
        name,
        rect !== undefined ? Number(rect) : Math.min(...polygon.split(' ').map((point) => Number(point.split(',')[0]))),
      ],
    ),
  );
}

test('lays out callers left of what they call, a cycle included', () => {
  const x = positions(renderSvg(parseMermaid(PROGRAM + '    n1 -->|use| n2\n')));
  assert.ok(x.main < x.lead && x.lead < x.helper, JSON.stringify(x));
  assert.equal(x.lead, x.p, 'both called by main: one column');
  assert.equal(x['on start'], x.main, 'no callers: the first column');
});

test('escapes labels and draws every edge once with its label', () => {
  const svg = renderSvg(parseMermaid('flowchart LR\n    n0("a#60;b")\n    n1["c"]\n    n0 -->|run| n1\n'));
  assert.match(svg, /<text [^>]*>a&#60;b<\/text>/);
  assert.equal([...svg.matchAll(/<g class="edge">/g)].length, 1);
  assert.match(svg, /<text [^>]*>run<\/text><\/g>/);
});
