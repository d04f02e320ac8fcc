// The graph view's drawing: the server's Mermaid text (`streetrace.showGraph`,
// see crates/sr-ide/src/graph.rs) parsed back into nodes and edges and laid
// out left to right in layers as an SVG, so that the view needs no script and
// no network.

export type NodeKind = 'flow' | 'agent' | 'handler' | 'prompt';

export interface GraphNode {
  id: string;
  label: string;
  kind: NodeKind;
  /** The imported file the node is declared in (its `subgraph`); absent for the root file. */
  file?: string;
  /** The program's entry point (`class ID entry`). */
  entry?: boolean;
}

export interface GraphEdge {
  from: string;
  to: string;
  label: string;
  /** A dotted tie (`-.-`) from an agent to its own handler, not a call. */
  tie?: boolean;
}

export interface Graph {
  nodes: GraphNode[];
  edges: GraphEdge[];
}

const NODE = /^\s*(\w+)(?:\("(.*)"\)|\["(.*)"\]|\{\{"(.*)"\}\}|\[\/"(.*)"\/\])\s*$/;
const EDGE = /^\s*(\w+)\s*-->\|([^|]*)\|\s*(\w+)\s*$/;
const TIE = /^\s*(\w+)\s*-\.-\s*(\w+)\s*$/;
const SUBGRAPH = /^\s*subgraph\s+\w+\s*\["(.*)"\]\s*$/;
const CLASS = /^\s*class\s+(\w+)\s+entry\s*$/;

/** The nodes and edges of the `flowchart` the server writes; an error names a line it cannot read. */
export function parseMermaid(text: string): Graph {
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  if (!/^flowchart\b/.test(lines[0] ?? '')) {
    throw new Error(`not a Mermaid flowchart: ${JSON.stringify(lines[0] ?? '')}`);
  }
  const graph: Graph = { nodes: [], edges: [] };
  let file: string | undefined;
  for (const line of lines.slice(1)) {
    const node = NODE.exec(line);
    const edge = EDGE.exec(line);
    const tie = TIE.exec(line);
    const subgraph = SUBGRAPH.exec(line);
    const entry = CLASS.exec(line);
    if (node) {
      const [, id, flow, agent, handler, prompt] = node;
      const kind: NodeKind = flow !== undefined ? 'flow' : agent !== undefined ? 'agent' : handler !== undefined ? 'handler' : 'prompt';
      const label = unescape(flow ?? agent ?? handler ?? prompt ?? '');
      graph.nodes.push(file === undefined ? { id, kind, label } : { id, kind, label, file });
    } else if (edge) {
      graph.edges.push({ from: edge[1], label: edge[2], to: edge[3] });
    } else if (tie) {
      graph.edges.push({ from: tie[1], label: '', to: tie[2], tie: true });
    } else if (subgraph) {
      file = unescape(subgraph[1]);
    } else if (line.trim() === 'end') {
      file = undefined;
    } else if (entry) {
      const marked = graph.nodes.find((n) => n.id === entry[1]);
      if (!marked) throw new Error(`the entry ${JSON.stringify(entry[1])} is not a node of the graph`);
      marked.entry = true;
    } else if (!/^\s*classDef\s/.test(line)) {
      throw new Error(`cannot read the graph's line ${JSON.stringify(line)}`);
    }
  }
  return graph;
}

/** Mermaid's `#NN;` character entities. */
function unescape(label: string): string {
  return label.replace(/#(\d+);/g, (_, code: string) => String.fromCodePoint(Number(code)));
}

const CHAR_WIDTH = 7.5;
const NODE_HEIGHT = 34;
const ROW_GAP = 26;
const COLUMN_GAP = 90;
const MARGIN = 20;

interface Placed extends GraphNode {
  x: number;
  y: number;
  width: number;
}

/** The graph as an SVG: each node in the column of its longest path from a root. */
export function renderSvg(graph: Graph): string {
  const placed = layout(graph);
  const byId = new Map(placed.map((n) => [n.id, n]));
  const width = Math.max(...placed.map((n) => n.x + n.width), 0) + MARGIN;
  const height = Math.max(...placed.map((n) => n.y + NODE_HEIGHT), 0) + MARGIN;
  const edges = graph.edges.map((e) => {
    const from = byId.get(e.from);
    const to = byId.get(e.to);
    return from && to ? edge(from, to, e.label, e.tie === true) : '';
  });
  const nodes = placed.map(node);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img">`,
    '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse">',
    '<path d="M 0 0 L 10 5 L 0 10 z" class="arrow"/></marker></defs>',
    ...edges,
    ...nodes,
    '</svg>',
  ].join('\n');
}

function layout(graph: Graph): Placed[] {
  const column = columns(graph);
  const byColumn: GraphNode[][] = [];
  for (const n of graph.nodes) {
    (byColumn[column.get(n.id) ?? 0] ??= []).push(n);
  }
  orderByNeighbours(byColumn, graph.edges);
  const tallest = Math.max(...byColumn.map((c) => c?.length ?? 0), 0);
  const placed: Placed[] = [];
  let x = MARGIN;
  for (const nodes of byColumn) {
    if (!nodes) continue;
    const widths = nodes.map((n) => Math.max(60, n.label.length * CHAR_WIDTH + 28));
    const offset = ((tallest - nodes.length) * (NODE_HEIGHT + ROW_GAP)) / 2;
    nodes.forEach((n, i) =>
      placed.push({ ...n, x, y: MARGIN + offset + i * (NODE_HEIGHT + ROW_GAP), width: widths[i] }),
    );
    x += Math.max(...widths) + COLUMN_GAP;
  }
  return placed;
}

/** Each node's column: the longest path to it from a node without callers, edges that close a cycle left out. */
function columns(graph: Graph): Map<string, number> {
  const out = new Map<string, string[]>();
  for (const e of graph.edges) {
    (out.get(e.from) ?? out.set(e.from, []).get(e.from)!).push(e.to);
  }
  // Depth-first finishing order without the edges that point back into the current path.
  const state = new Map<string, 'open' | 'done'>();
  const forward: GraphEdge[] = [];
  const order: string[] = [];
  const visit = (id: string): void => {
    state.set(id, 'open');
    for (const to of out.get(id) ?? []) {
      if (state.get(to) === 'open') continue;
      forward.push({ from: id, to, label: '' });
      if (!state.has(to)) visit(to);
    }
    state.set(id, 'done');
    order.push(id);
  };
  const targets = new Set(graph.edges.map((e) => e.to));
  for (const n of [...graph.nodes.filter((n) => !targets.has(n.id)), ...graph.nodes]) {
    if (!state.has(n.id)) visit(n.id);
  }
  const column = new Map<string, number>();
  for (const id of order.reverse()) {
    const here = column.get(id) ?? 0;
    column.set(id, here);
    for (const e of forward.filter((e) => e.from === id)) {
      column.set(e.to, Math.max(column.get(e.to) ?? 0, here + 1));
    }
  }
  return column;
}

/** Two sweeps of the barycentre heuristic, so that edges cross less. */
function orderByNeighbours(byColumn: GraphNode[][], edges: GraphEdge[]): void {
  for (let sweep = 0; sweep < 2; sweep++) {
    for (let c = 1; c < byColumn.length; c++) {
      const previous = byColumn[c - 1]?.map((n) => n.id) ?? [];
      const nodes = byColumn[c];
      if (!nodes) continue;
      const centre = (n: GraphNode, i: number): number => {
        const rows = edges.filter((e) => e.to === n.id).map((e) => previous.indexOf(e.from)).filter((r) => r >= 0);
        return rows.length ? rows.reduce((a, b) => a + b, 0) / rows.length : i;
      };
      const keyed = nodes.map((n, i) => ({ n, key: centre(n, i) }));
      keyed.sort((a, b) => a.key - b.key);
      byColumn[c] = keyed.map((k) => k.n);
    }
  }
}

function node(n: Placed): string {
  const { x, y, width: w } = n;
  const h = NODE_HEIGHT;
  const shape = {
    flow: `<rect x="${x}" y="${y}" width="${w}" height="${h}" rx="${h / 2}"/>`,
    agent: `<rect x="${x}" y="${y}" width="${w}" height="${h}" rx="3"/>`,
    handler: `<polygon points="${x + 12},${y} ${x + w - 12},${y} ${x + w},${y + h / 2} ${x + w - 12},${y + h} ${x + 12},${y + h} ${x},${y + h / 2}"/>`,
    prompt: `<polygon points="${x + 10},${y} ${x + w},${y} ${x + w - 10},${y + h} ${x},${y + h}"/>`,
  }[n.kind];
  const where = n.file === undefined ? '' : ` (${escapeXml(n.file)})`;
  const classes = n.entry ? `node ${n.kind} entry` : `node ${n.kind}`;
  return (
    `<g class="${classes}" data-name="${escapeXml(n.label)}"><title>${n.kind} ${escapeXml(n.label)}${where}</title>${shape}` +
    `<text x="${x + w / 2}" y="${y + h / 2}">${escapeXml(n.label)}</text></g>`
  );
}

function edge(from: Placed, to: Placed, label: string, tie: boolean): string {
  const [x1, y1] = [from.x + from.width, from.y + NODE_HEIGHT / 2];
  const [x2, y2] = to.x > from.x ? [to.x, to.y + NODE_HEIGHT / 2] : [to.x + to.width / 2, to.y + NODE_HEIGHT];
  const bend = Math.max(40, Math.abs(x2 - x1) / 2);
  const back = to.x <= from.x;
  const path = back
    ? `M ${x1} ${y1} C ${x1 + bend} ${y1 + 60}, ${x2} ${y2 + 60}, ${x2} ${y2}`
    : `M ${x1} ${y1} C ${x1 + bend} ${y1}, ${x2 - bend} ${y2}, ${x2} ${y2}`;
  const [lx, ly] = back ? [(x1 + x2) / 2, Math.max(y1, y2) + 45] : [(x1 + x2) / 2, (y1 + y2) / 2];
  const ends = tie ? '' : ' marker-end="url(#arrow)"';
  return (
    `<g class="${tie ? 'edge tie' : 'edge'}"><path d="${path}"${ends}/>` +
    `<text x="${lx}" y="${ly - 6}">${escapeXml(label)}</text></g>`
  );
}

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
