//! The way to the client: one ordered queue of responses and events, written
//! by a single writer, so that a response always precedes the events its
//! request causes.

use tokio::sync::mpsc;

use crate::protocol::{Event, Outgoing, OutputEvent, Response, SourceBody};

#[derive(Clone)]
pub struct Client {
    tx: mpsc::UnboundedSender<Outgoing>,
}

impl Client {
    pub fn channel() -> (Client, mpsc::UnboundedReceiver<Outgoing>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Client { tx }, rx)
    }

    /// Queues a message; one sent after the writer stopped is dropped.
    pub fn send(&self, message: Outgoing) {
        let _ = self.tx.send(message);
    }

    pub fn event(&self, event: Event) {
        self.send(Outgoing::Event(event));
    }

    pub fn respond(&self, response: Response) {
        self.send(Outgoing::Response(response));
    }

    pub fn output(&self, category: &str, text: impl Into<String>) {
        self.output_at(category, text, None, None);
    }

    pub fn output_at(&self, category: &str, text: impl Into<String>, source: Option<SourceBody>, line: Option<i64>) {
        let mut output = text.into();
        if !output.ends_with('\n') && category != "stdout" {
            output.push('\n');
        }
        self.event(Event::Output(OutputEvent { category: category.to_string(), output, source, line, column: None }));
    }
}
