//! Cycles in the agent graph (E0011), without recursion and in bounded time:
//! a delegate ring of thousands of agents is one cycle found in linear time,
//! and a dense graph with exponentially many cycles stops after [`LIMIT`]
//! cycles or [`STEP_BUDGET`] edge visits. Nodes are indexes; a graph lists
//! each node's successors in upstream's order.

/// At most this many cycles are reported.
pub(super) const LIMIT: usize = 64;
/// Edge visits the enumeration of further cycles may take in all.
const STEP_BUDGET: usize = 1_000_000;

/// The cycle upstream's depth-first search meets first, closed (`[a, b, a]`).
pub(super) fn upstream_first_cycle(graph: &[Vec<usize>]) -> Option<Vec<usize>> {
    let mut visited = vec![false; graph.len()];
    let mut on_path = vec![false; graph.len()];
    for root in 0..graph.len() {
        if visited[root] {
            continue;
        }
        visited[root] = true;
        on_path[root] = true;
        let mut path = vec![root];
        // Each frame: a node and the index of its next edge to follow.
        let mut stack = vec![(root, 0)];
        while let Some((node, next_edge)) = stack.last_mut() {
            let Some(&next) = graph[*node].get(*next_edge) else {
                on_path[*node] = false;
                stack.pop();
                path.pop();
                continue;
            };
            *next_edge += 1;
            if on_path[next] {
                let start = path.iter().position(|&n| n == next).unwrap_or(0);
                let mut cycle = path[start..].to_vec();
                cycle.push(next);
                return Some(cycle);
            }
            if !visited[next] {
                visited[next] = true;
                on_path[next] = true;
                path.push(next);
                stack.push((next, 0));
            }
        }
    }
    None
}

/// Elementary cycles, closed, each starting at its lowest node, in order of
/// that node, at most [`LIMIT`]. As in Johnson's algorithm, the search from a
/// node stays inside its strongly connected component among the nodes not
/// below it, and skips nodes whose component has no cycle.
pub(super) fn elementary_cycles(graph: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut budget = STEP_BUDGET;
    let mut from = 0;
    while from < graph.len() && out.len() < LIMIT && budget > 0 {
        let component = components(graph, from);
        let mut sizes = vec![0usize; graph.len()];
        for &c in &component[from..] {
            sizes[c] += 1;
        }
        let cyclic = |node: usize| sizes[component[node]] > 1 || graph[node].contains(&node);
        let Some(start) = (from..graph.len()).find(|&n| cyclic(n)) else { break };
        let inside = |node: usize| node >= start && component[node] == component[start];
        cycles_through(start, graph, inside, &mut out, &mut budget);
        from = start + 1;
    }
    out
}

/// Simple cycles through `start` over nodes above it that are `inside`.
fn cycles_through(
    start: usize,
    graph: &[Vec<usize>],
    inside: impl Fn(usize) -> bool,
    out: &mut Vec<Vec<usize>>,
    budget: &mut usize,
) {
    let mut on_path = vec![false; graph.len()];
    on_path[start] = true;
    let mut path = vec![start];
    let mut stack = vec![(start, 0)];
    while let Some((node, next_edge)) = stack.last_mut() {
        if out.len() >= LIMIT || *budget == 0 {
            return;
        }
        let Some(&next) = graph[*node].get(*next_edge) else {
            on_path[*node] = false;
            stack.pop();
            path.pop();
            continue;
        };
        *next_edge += 1;
        *budget -= 1;
        if next == start {
            let mut cycle = path.clone();
            cycle.push(start);
            // Two edges between the same agents (`delegate` and `use`) make one cycle.
            if !out.contains(&cycle) {
                out.push(cycle);
            }
        } else if next > start && inside(next) && !on_path[next] {
            on_path[next] = true;
            path.push(next);
            stack.push((next, 0));
        }
    }
}

/// Strongly connected components (Tarjan's, iterative) of the subgraph of
/// nodes `from..`: a component number per node (nodes below `from` get
/// `usize::MAX`).
fn components(graph: &[Vec<usize>], from: usize) -> Vec<usize> {
    const UNSEEN: usize = usize::MAX;
    let n = graph.len();
    let (mut index, mut low, mut component) = (vec![UNSEEN; n], vec![0; n], vec![UNSEEN; n]);
    let mut on_stack = vec![false; n];
    let (mut next_index, mut next_component) = (0, 0);
    let mut stack = Vec::new();
    for root in from..n {
        if index[root] != UNSEEN {
            continue;
        }
        let mut frames = vec![(root, 0)];
        index[root] = next_index;
        low[root] = next_index;
        next_index += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some((node, next_edge)) = frames.last_mut() {
            let node = *node;
            if let Some(&next) = graph[node].get(*next_edge) {
                *next_edge += 1;
                if next < from {
                    continue;
                }
                if index[next] == UNSEEN {
                    index[next] = next_index;
                    low[next] = next_index;
                    next_index += 1;
                    stack.push(next);
                    on_stack[next] = true;
                    frames.push((next, 0));
                } else if on_stack[next] {
                    low[node] = low[node].min(index[next]);
                }
                continue;
            }
            frames.pop();
            if let Some(&(parent, _)) = frames.last() {
                low[parent] = low[parent].min(low[node]);
            }
            if low[node] == index[node] {
                while let Some(member) = stack.pop() {
                    on_stack[member] = false;
                    component[member] = next_component;
                    if member == node {
                        break;
                    }
                }
                next_component += 1;
            }
        }
    }
    component
}

/// A closed cycle without its repeated end, rotated to start at its lowest node.
pub(super) fn canonical(cycle: &[usize]) -> Vec<usize> {
    let open = &cycle[..cycle.len().saturating_sub(1)];
    let lowest = (0..open.len()).min_by_key(|&i| open[i]).unwrap_or(0);
    open[lowest..].iter().chain(&open[..lowest]).copied().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(n: usize) -> Vec<Vec<usize>> {
        (0..n).map(|i| vec![(i + 1) % n]).collect()
    }

    #[test]
    fn small_graphs() {
        // 0 → 1 → 0, 1 → 2 → 1, 3 → 3, 4 alone.
        let graph = vec![vec![1], vec![0, 2], vec![1], vec![3], vec![]];
        assert_eq!(upstream_first_cycle(&graph), Some(vec![0, 1, 0]));
        assert_eq!(elementary_cycles(&graph), [vec![0, 1, 0], vec![1, 2, 1], vec![3, 3]]);
        assert_eq!(elementary_cycles(&[vec![1], vec![2], vec![]]), Vec::<Vec<usize>>::new());
        assert_eq!(upstream_first_cycle(&[vec![1], vec![]]), None);
    }

    #[test]
    fn a_long_ring_is_one_cycle_without_deep_recursion() {
        let graph = ring(200_000);
        let first = upstream_first_cycle(&graph).unwrap();
        assert_eq!((first.len(), first[0], first[first.len() - 1]), (200_001, 0, 0));
        let all = elementary_cycles(&graph);
        assert_eq!(all.len(), 1);
        assert_eq!(canonical(&all[0]), canonical(&first));
    }

    #[test]
    fn a_complete_graph_stops_at_the_limit() {
        let n = 40;
        let graph: Vec<Vec<usize>> = (0..n).map(|i| (0..n).filter(|&j| j != i).collect()).collect();
        assert_eq!(elementary_cycles(&graph).len(), LIMIT);
    }

    #[test]
    fn rotations_are_one_cycle() {
        assert_eq!(canonical(&[2, 0, 1, 2]), canonical(&[0, 1, 2, 0]));
        assert_ne!(canonical(&[0, 2, 1, 0]), canonical(&[0, 1, 2, 0]));
    }
}
