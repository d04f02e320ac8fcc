// A workload's graph as the studio draws it: nodes in columns by distance from the
// entries, a flow's calls in statement order as a chain (each step a column further,
// an arrow from one step to the next), the branches of a `parallel` block as lanes in
// one box (one step), each edge's kind written once per target (never over another
// label), and which nodes a run's events came from (the path a run took).

import type { GraphEdge, GraphNode, RunEvent } from "./api";

export const NODE_W = 150;
export const NODE_H = 36;
/** Room between columns for the arrows and their kinds' labels. */
export const GAP_X = 90;
export const GAP_Y = 14;
/** A label's line height, and how many lines fit beside a node. */
const LINE = 11;
const LINES = 3;
/** Characters of a node's name that fit in its box at 12 px. */
const NAME_FITS = 20;

export interface Label {
  x: number;
  y: number;
  text: string;
}

/** The branches of one `parallel` block that sit in one column: drawn as lanes in a box. */
export interface Lanes {
  /** `FROM#BLOCK`: the flow (or handler) and its block. */
  key: string;
  from: string;
  nodes: string[];
  x: number;
  y: number;
  width: number;
  height: number;
}

/** An edge as drawn: from its flow, or, for a later step of a flow's sequence, from the step before. */
export interface Arrow {
  edge: GraphEdge;
  x1: number;
  y1: number;
  x2: number;
  y2: number;
  /** Drawn from the previous step of its flow's sequence, not from the flow. */
  then: boolean;
}

export interface Layout {
  nodes: GraphNode[];
  at: Map<string, { x: number; y: number }>;
  arrows: Arrow[];
  /** The kinds of each node's incoming edges, left of the node, one line each. */
  labels: Label[];
  lanes: Lanes[];
  width: number;
  height: number;
}

/** Room between a lane box and its nodes. */
const PAD = 5;
/** Marks the kind of an edge that is a `parallel` branch. */
export const PARALLEL_MARK = "∥";

/** The nodes the server listed, and every end of an edge (`agent reviewer`: kind, name). */
export function nodesOf(graph: { nodes?: GraphNode[]; edges: GraphEdge[] }): GraphNode[] {
  const all = new Map<string, GraphNode>();
  for (const node of graph.nodes ?? []) all.set(node.id, node);
  for (const edge of graph.edges) {
    for (const id of [edge.from, edge.to]) {
      if (all.has(id)) continue;
      const space = id.indexOf(" ");
      all.set(id, space > 0 ? { id, kind: id.slice(0, space), label: id.slice(space + 1) } : { id, kind: "item", label: id });
    }
  }
  return [...all.values()];
}

/**
 * Each call of a flow (an edge with an `order`) and its step in the flow's sequence, from
 * 0: calls one after another are steps one after another, the branches of one `parallel`
 * block one step.
 */
export function steps(edges: GraphEdge[]): Map<GraphEdge, number> {
  const out = new Map<GraphEdge, number>();
  const byFlow = new Map<string, GraphEdge[]>();
  for (const edge of edges) {
    if (edge.order == null) continue;
    byFlow.set(edge.from, [...(byFlow.get(edge.from) ?? []), edge]);
  }
  for (const calls of byFlow.values()) {
    calls.sort((a, b) => (a.order ?? 0) - (b.order ?? 0));
    let step = -1;
    let block: number | undefined;
    for (const call of calls) {
      if (!call.parallel || call.parallel.block !== block) step++;
      block = call.parallel?.block;
      out.set(call, step);
    }
  }
  return out;
}

/**
 * Columns by breadth-first distance from the nodes with no incoming edge (each node
 * placed once, so a cycle cannot loop), a flow's later steps a column further each,
 * rows in the order met. A node's label lines sit
 * in the gap left of it, within its own height, so no two labels share a place.
 */
export function layout(graph: { nodes?: GraphNode[]; edges: GraphEdge[] }): Layout {
  const nodes = nodesOf(graph);
  const step = steps(graph.edges);
  const depth = new Map<string, number>();
  const incoming = new Set(graph.edges.map((e) => e.to));
  const queue = nodes.filter((n) => !incoming.has(n.id)).map((n) => n.id);
  if (!queue.length && nodes.length) queue.push(nodes[0].id);
  for (const id of queue) depth.set(id, 0);
  for (let i = 0; i < queue.length; i++) {
    for (const edge of graph.edges) {
      if (edge.from === queue[i] && !depth.has(edge.to)) {
        depth.set(edge.to, (depth.get(queue[i]) ?? 0) + 1 + (step.get(edge) ?? 0));
        queue.push(edge.to);
      }
    }
  }
  // The branches of a block: each node in the first block that reaches it.
  const blockOf = new Map<string, string>();
  const members = new Map<string, string[]>();
  for (const edge of graph.edges) {
    if (!edge.parallel || blockOf.has(edge.to)) continue;
    const key = `${edge.from}#${edge.parallel.block}`;
    blockOf.set(edge.to, key);
    members.set(key, [...(members.get(key) ?? []), edge.to]);
  }
  // Rows in the order met, a block's branches of one column in rows next to each other.
  const rows = new Map<number, number>();
  const at = new Map<string, { x: number; y: number }>();
  const place = (id: string) => {
    if (at.has(id)) return;
    const d = depth.get(id) ?? 0;
    const r = rows.get(d) ?? 0;
    rows.set(d, r + 1);
    at.set(id, { x: d * (NODE_W + GAP_X) + 4, y: r * (NODE_H + GAP_Y) + 4 + PAD });
  };
  for (const node of nodes) {
    place(node.id);
    const key = blockOf.get(node.id);
    for (const other of key ? (members.get(key) ?? []) : []) {
      if ((depth.get(other) ?? 0) === (depth.get(node.id) ?? 0)) place(other);
    }
  }
  const lanes: Lanes[] = [];
  for (const [key, ids] of members) {
    const column = depth.get(ids[0]) ?? 0;
    const placed = ids.filter((id) => (depth.get(id) ?? 0) === column).map((id) => at.get(id)!);
    const top = Math.min(...placed.map((p) => p.y));
    const bottom = Math.max(...placed.map((p) => p.y)) + NODE_H;
    const from = key.slice(0, key.lastIndexOf("#"));
    lanes.push({ key, from, nodes: ids, x: placed[0].x - PAD, y: top - PAD, width: NODE_W + 2 * PAD, height: bottom - top + 2 * PAD });
  }
  const arrows = graph.edges.flatMap((edge) => arrow(edge, graph.edges, step, at, lanes));
  const labels: Label[] = [];
  for (const node of nodes) {
    const p = at.get(node.id);
    const kinds = graph.edges
      .filter((e) => e.to === node.id && at.has(e.from))
      .map((e) => (e.parallel ? `${PARALLEL_MARK} ${e.kind}` : e.kind));
    if (!p || !kinds.length) continue;
    labelLines(kinds).forEach((text, i) => labels.push({ x: p.x - PAD - 3, y: p.y + 10 + i * LINE, text }));
  }
  const width = Math.max(1, ...[...depth.values()].map((d) => d + 1)) * (NODE_W + GAP_X);
  const height = Math.max(1, ...rows.values()) * (NODE_H + GAP_Y) + 8 + 2 * PAD;
  return { nodes, at, arrows, labels, lanes, width, height };
}

/**
 * The edge's arrow to its target: from the previous step of its flow's sequence (the
 * right of that step's node, or of its lanes' box) when that step is drawn left of the
 * target, otherwise from the edge's own source.
 */
function arrow(
  edge: GraphEdge,
  edges: GraphEdge[],
  step: Map<GraphEdge, number>,
  at: Map<string, { x: number; y: number }>,
  lanes: Lanes[],
): Arrow[] {
  const a = at.get(edge.from);
  const b = at.get(edge.to);
  if (!a || !b) return [];
  const to = { x2: b.x, y2: b.y + NODE_H / 2 };
  const k = step.get(edge) ?? 0;
  const before = k > 0 ? edges.find((e) => e.from === edge.from && step.get(e) === k - 1) : undefined;
  if (before) {
    const box = before.parallel && lanes.find((l) => l.key === `${before.from}#${before.parallel!.block}`);
    const p = at.get(before.to);
    const start = box ? { x1: box.x + box.width, y1: box.y + box.height / 2 } : p && { x1: p.x + NODE_W, y1: p.y + NODE_H / 2 };
    if (start && start.x1 < b.x) return [{ edge, ...start, ...to, then: true }];
  }
  return [{ edge, x1: a.x + NODE_W, y1: a.y + NODE_H / 2, ...to, then: false }];
}

/** The lines of a node's label: each kind once, at most three lines (the last says how many more). */
export function labelLines(kinds: string[]): string[] {
  const unique = [...new Set(kinds)];
  if (unique.length <= LINES) return unique;
  return [...unique.slice(0, LINES - 1), `+${unique.length - LINES + 1} more`];
}

/** A node's name as its box shows it: cut to fit, the whole name in its title. */
export function fitted(name: string): string {
  return name.length > NAME_FITS ? `${name.slice(0, NAME_FITS - 1)}…` : name;
}

/** The graph node an event path's segment names (`agent:writer` is `agent writer`). */
export function nodeOf(segment: string): string | undefined {
  const match = /^(agent|flow):(.+)$/.exec(segment);
  return match ? `${match[1]} ${match[2]}` : undefined;
}

/** Whether `event` came from node `id` or from inside it (an agent its flow ran). */
export function inNode(event: RunEvent, id: string): boolean {
  return Array.isArray(event.path) && event.path.some((segment) => nodeOf(String(segment)) === id);
}

/** Every node a run's events came from, and the prompts its flows called: the path the run took. */
export function visited(events: RunEvent[]): Set<string> {
  const nodes = new Set<string>();
  for (const event of events) {
    if (event.type === "llm_call" && typeof event.prompt_name === "string") nodes.add(`prompt ${event.prompt_name}`);
    if (!Array.isArray(event.path)) continue;
    for (const segment of event.path) {
      const node = nodeOf(String(segment));
      if (node) nodes.add(node);
    }
  }
  return nodes;
}
