//! Stepping by depth. A model or tool call happens inside the frame that
//! makes it (a `call llm` statement, an agent's turn), so it counts one level
//! deeper than that frame's statements: step over a `run agent` skips the
//! agent's calls, step in stops at its first one, step out of a call stops
//! at the caller's next statement. A model call has two points at its depth,
//! before the request goes and after the reply came (before the agent sees
//! it), so step over or in at the first stops at the second.

use sr_runtime::hook::{Frame, FrameKind, StepPoint};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepKind {
    In,
    Over,
    Out,
}

/// A step in progress, from a point at `depth`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stepping {
    pub kind: StepKind,
    pub depth: usize,
}

impl Stepping {
    /// Whether a point at `depth` ends the step.
    pub fn done(self, depth: usize) -> bool {
        match self.kind {
            StepKind::In => true,
            StepKind::Over => depth <= self.depth,
            StepKind::Out => depth < self.depth,
        }
    }
}

/// The depth of a point.
pub fn depth(frames: usize, point: &StepPoint<'_>) -> usize {
    match point {
        StepPoint::Statement { .. } => frames,
        StepPoint::ModelCall { .. }
        | StepPoint::ModelReply { .. }
        | StepPoint::ModelStreaming { .. }
        | StepPoint::ToolCall { .. } => frames + 1,
    }
}

/// What a thread's stack was at its previous point: kind and name per frame.
pub type Seen = Vec<(FrameKind, String)>;

pub fn seen(frames: &[Frame]) -> Seen {
    frames.iter().map(|f| (f.kind, f.name.clone())).collect()
}

/// The frames entered since the thread's previous point (for function
/// breakpoints): those past the part of the stack that did not change.
pub fn entered<'a>(before: &Seen, frames: &'a [Frame]) -> &'a [Frame] {
    let same = before.iter().zip(frames).take_while(|((kind, name), f)| *kind == f.kind && *name == f.name).count();
    &frames[same..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_end_by_depth() {
        let over = Stepping { kind: StepKind::Over, depth: 2 };
        assert!(!over.done(3), "inside the agent the statement runs");
        assert!(over.done(2) && over.done(1));
        let out = Stepping { kind: StepKind::Out, depth: 2 };
        assert!(!out.done(2) && out.done(1));
        assert!(Stepping { kind: StepKind::In, depth: 2 }.done(5));
    }

    #[test]
    fn entered_frames_are_those_past_the_unchanged_part() {
        let frame = |kind, name: &str| Frame {
            kind,
            name: name.to_string(),
            body: None,
            stmt: None,
            location: None,
            last_exchange: None,
        };
        let handler = [frame(FrameKind::Handler, "start")];
        let main = [frame(FrameKind::Flow, "main")];
        let nested = [frame(FrameKind::Flow, "main"), frame(FrameKind::Agent, "a")];
        assert_eq!(entered(&seen(&handler), &main).len(), 1, "a handler, then the flow, at one depth");
        assert_eq!(entered(&seen(&main), &nested)[0].name, "a");
        assert!(entered(&seen(&nested), &main).is_empty());
        assert_eq!(entered(&Seen::new(), &main).len(), 1);
    }

    #[test]
    fn calls_are_one_level_deeper_than_their_frame() {
        let args = serde_json::json!({});
        let request = sr_llm::ChatRequest::new("m", vec![]);
        assert_eq!(depth(2, &StepPoint::ModelCall { agent: "a", request: &request }), 3);
        assert_eq!(depth(2, &StepPoint::ToolCall { tool: "t", args: &args }), 3);
    }
}
