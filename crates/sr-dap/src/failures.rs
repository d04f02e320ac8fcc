//! Failures in the debug console: every failure the step hook hears of
//! (`on_failure`, once per failure, with whether something handles it) shows
//! where it happens, whether or not an exception filter stops the thread. A
//! divergence (a run served from its recording asked for something else
//! than the recording has there) also shows the statement's text: its
//! message says what differs, the statement what asked for it.

use std::sync::Arc;

use futures::future::BoxFuture;
use sr_runtime::hook::{Control, Failure, Step, StepHook, StepPoint};

use crate::debugger::{Debugger, State};
use crate::protocol::{Event, OutputEvent};
use crate::source::frame_position;

/// How the runtime's divergences begin (`Runtime::diverged`).
const DIVERGED: &str = "the run diverged from its journal: ";
/// The most of a statement's text a divergence shows.
const STATEMENT: usize = 120;

/// The hook of a `noDebug` run: nothing stops, failures still show.
pub struct ReportHook(pub Arc<Debugger>);

impl StepHook for ReportHook {
    fn on_step<'a>(&'a self, _step: Step<'a>) -> BoxFuture<'a, Control> {
        Box::pin(std::future::ready(Control::Continue))
    }

    fn on_failure<'a>(&'a self, step: Step<'a>, failure: Failure<'a>) -> BoxFuture<'a, Control> {
        self.0.report_failure(&self.0.lock(), &step, failure);
        Box::pin(std::future::ready(Control::Continue))
    }
}

impl Debugger {
    /// Shows a failure in the debug console where it happens, caught or not
    /// (`stderr` when nothing handles it, else `console`), at the statement
    /// it comes from: a model or tool call's is the statement that made it.
    pub fn report_failure(&self, st: &State, step: &Step<'_>, failure: Failure<'_>) {
        let loaded = st.loaded.as_ref();
        // The flow statement that made a call (an agent's frame has none).
        let caller = || step.frames.iter().rev().find(|f| f.body.is_some() && f.stmt.is_some());
        let at = match step.point {
            StepPoint::Statement { body, stmt } => loaded.map(|l| {
                let at = l.program.stmt_location(&body.source, stmt);
                (Some(body.source.file), at.line, at.column)
            }),
            _ => caller().or(step.frames.last()).map(|frame| frame_position(loaded, frame)),
        };
        let statement = match step.point {
            StepPoint::Statement { body, stmt } => Some((&body.source, stmt)),
            _ => caller().and_then(|f| Some((&f.body.as_ref()?.source, f.stmt?))),
        };
        let statement = statement
            .filter(|_| failure.message.starts_with(DIVERGED))
            .and_then(|(source, stmt)| {
                let program = &loaded?.program;
                let text = program.sources.get(source.file)?.index.text();
                let range = program.stmt_range(source, stmt);
                let text = text.get(usize::from(range.start())..usize::from(range.end()))?;
                Some(first_line(text))
            })
            .map(|text| format!(" in `{text}`"))
            .unwrap_or_default();
        let (category, handled) = match (step.point, failure.caught) {
            (_, false) => ("stderr", ""),
            (StepPoint::ToolCall { .. }, true) => ("console", " (the model gets the error)"),
            (_, true) => ("console", " (handled by `on failure:`)"),
        };
        let (source, line, column, place) = match at {
            Some((file, line, column)) => {
                let source = file.and_then(|f| loaded?.source(f));
                let name = source.as_ref().map_or("", |s| s.name.as_str());
                let place = format!(" at {name}:{line}:{column}");
                (source, Some(st.positions.line_out(line)), Some(st.positions.column_out(column)), place)
            }
            None => (None, None, None, String::new()),
        };
        let output = format!("failure{place}{statement}{handled}: {}\n", failure.message);
        let category = category.to_string();
        self.client.event(Event::Output(OutputEvent { category, output, source, line, column }));
    }
}

/// A statement's first line, cut to [`STATEMENT`] characters.
fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default().trim_end();
    match line.char_indices().nth(STATEMENT) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line.to_string(),
    }
}
