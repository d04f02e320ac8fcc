//! The variable tables of one program that the body, prompt and suggestion
//! checks share: what its flows and handlers assign, and what each flow sees.

use std::sync::Arc;

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};

use crate::hir::{Event, ItemData, Timing};
use crate::summary::body_summary;
use crate::{Db, File, Name, item_data, program};

/// Variables by where they are assigned, for one program. The sets a flow's
/// check consults are shared (`Arc`): in a program whose `main` runs every
/// other flow, each of them sees `main`'s variables without a copy.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ProgramVars {
    /// What upstream's checker counts as flow variables, in flow order.
    pub upstream_flow_vars: Vec<Name>,
    /// The same names, for lookups. (Not one `IndexSet`: its equality ignores
    /// order, and salsa would then keep a stale order when flows move.)
    pub upstream_flow_var_set: HashSet<Name>,
    /// Assigned in any handler.
    pub handler_vars: HashSet<Name>,
    /// Assigned by `on start` handlers (our runtime runs them first).
    pub on_start_vars: Arc<HashSet<Name>>,
    /// Assigned anywhere in a flow or handler.
    pub all_vars: Arc<HashSet<Name>>,
    /// For each flow: what it and the flows it runs (transitively) assign.
    pub flow_closure: HashMap<Name, Arc<HashSet<Name>>>,
    /// For each flow: the closures of the flows that run it (transitively).
    pub caller_vars: HashMap<Name, Vec<Arc<HashSet<Name>>>>,
}

#[salsa::tracked(returns(clone))]
pub fn program_vars(db: &dyn Db, root: File) -> Arc<ProgramVars> {
    let program = program(db, root);
    let mut vars = ProgramVars::default();
    let mut all_vars = HashSet::new();
    let mut on_start_vars = HashSet::new();
    let mut runs: HashMap<Name, Vec<Name>> = HashMap::new();
    let mut assigned: HashMap<Name, Vec<Name>> = HashMap::new();
    for (name, &flow) in &program.flows {
        let summary = body_summary(db, flow);
        for var in &summary.upstream_assigned {
            if vars.upstream_flow_var_set.insert(var.clone()) {
                vars.upstream_flow_vars.push(var.clone());
            }
        }
        all_vars.extend(summary.assigned.iter().cloned());
        runs.insert(name.clone(), summary.runs_flows.clone());
        assigned.insert(name.clone(), summary.assigned.clone());
    }
    for &handler in &program.handlers {
        let summary = body_summary(db, handler);
        vars.handler_vars.extend(summary.assigned.iter().cloned());
        all_vars.extend(summary.assigned.iter().cloned());
        if let ItemData::Handler(data) = &*item_data(db, handler)
            && data.timing == Timing::On
            && data.event == Event::Start
            && handler.owner(db).is_none()
        {
            on_start_vars.extend(summary.assigned.iter().cloned());
        }
    }
    vars.all_vars = Arc::new(all_vars);
    vars.on_start_vars = Arc::new(on_start_vars);
    let reached: HashMap<&Name, Vec<Name>> = program.flows.keys().map(|name| (name, reachable(name, &runs))).collect();
    for name in program.flows.keys() {
        let closure: HashSet<Name> =
            reached[name].iter().flat_map(|f| assigned.get(f).into_iter().flatten().cloned()).collect();
        vars.flow_closure.insert(name.clone(), Arc::new(closure));
    }
    for caller in program.flows.keys() {
        let closure = &vars.flow_closure[caller];
        for callee in &reached[caller] {
            if callee != caller {
                vars.caller_vars.entry(callee.clone()).or_default().push(Arc::clone(closure));
            }
        }
    }
    Arc::new(vars)
}

/// `start` and every flow it runs, transitively.
fn reachable(start: &Name, runs: &HashMap<Name, Vec<Name>>) -> Vec<Name> {
    let mut seen = vec![start.clone()];
    let mut known: HashSet<&Name> = HashSet::from_iter([start]);
    let mut i = 0;
    while i < seen.len() {
        for next in runs.get(&seen[i]).into_iter().flatten() {
            if known.insert(next) {
                seen.push(next.clone());
            }
        }
        i += 1;
    }
    seen
}
