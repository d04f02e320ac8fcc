//! The StreetRace language server: the only crate that speaks LSP. It turns
//! `sr_ide`'s plain data into protocol types on tower-lsp-server, over stdio.
//!
//! Concurrency: [`ordered::Ordered`] sees messages in wire order and sends
//! every document change to the owner thread ([`owner`]); requests read
//! snapshots from the owner on blocking threads; diagnostics are pushed by a
//! debounced task ([`publish`]) and pulled through [`diagnostics`]; files
//! changed on disk come from the client's watcher or, for clients without
//! one, from [`poll`].

mod change;
mod command_names;
mod commands;
mod config;
mod convert;
mod diagnostics;
mod gate;
mod handlers;
mod memory;
mod ordered;
mod owner;
mod poll;
mod publish;
mod raw;
mod runnable;
mod semantic;
mod server;
mod shared;

use std::sync::{Arc, Mutex};

use sr_ide::Encoding;
use tower_lsp_server::{ClientSocket, LspService};

pub use crate::ordered::Ordered;
pub use crate::server::Server;
pub use tower_lsp_server;

/// Handlers that may run at once (tower-lsp-server's default of 4 is too
/// low once requests wait on snapshots).
const CONCURRENCY: usize = 32;

/// Builds the service (with its owner thread and diagnostics task; call
/// within a Tokio runtime) and the socket of messages to the client.
pub fn service() -> (Ordered<LspService<Server>>, ClientSocket) {
    service_with(None)
}

/// [`service`], answering big requests into `raw` when it is given.
fn service_with(raw: Option<Arc<raw::RawAnswers>>) -> (Ordered<LspService<Server>>, ClientSocket) {
    let encoding = Arc::new(Mutex::new(Encoding::Utf16));
    let (owner_tx, owner_rx) = std::sync::mpsc::channel();
    let (events_tx, events_rx) = tokio::sync::mpsc::unbounded_channel();
    let owner = owner::Owner::new(encoding.clone(), events_tx.clone());
    std::thread::Builder::new()
        .name("sr-lsp-owner".to_string())
        .spawn(move || owner.run(owner_rx))
        .expect("cannot start the owner thread");
    let shared = Arc::new(shared::Shared::new(owner_tx, encoding, events_tx, raw));
    let for_service = shared.clone();
    let (service, socket) = LspService::new(move |client| {
        tokio::spawn(publish::run(client.clone(), for_service.clone(), events_rx));
        Server::new(client, for_service)
    });
    (Ordered::new(service, shared), socket)
}

/// Stack of the threads requests run on: analysis walks trees whose depth the
/// parser bounds (`sr_syntax::MAX_NESTING`), with room to spare.
const STACK_SIZE: usize = 16 << 20;

/// Serves LSP on stdin/stdout until the client says `exit` or closes stdin.
/// Every message passes through [`gate`] first. Returns the process exit
/// code: 0 after `shutdown` and `exit`, otherwise 1.
pub fn run_stdio() -> i32 {
    memory::one_arena();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_stack_size(STACK_SIZE)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("sr-lsp: cannot start the runtime: {e}");
            return 1;
        }
    };
    let lifecycle = Arc::new(gate::Lifecycle::default());
    let for_gate = lifecycle.clone();
    runtime.block_on(async move {
        let raw = Arc::new(raw::RawAnswers::default());
        let (service, socket) = service_with(Some(raw.clone()));
        let (gate_out, server_in) = tokio::io::duplex(1 << 16);
        let (server_out, forward_in) = tokio::io::duplex(1 << 16);
        let (replies_tx, replies_rx) = tokio::sync::mpsc::unbounded_channel();
        let stdin = tokio::io::BufReader::new(tokio::io::stdin());
        tokio::spawn(gate::run(stdin, gate_out, replies_tx, for_gate));
        let forward =
            tokio::spawn(gate::forward(tokio::io::BufReader::new(forward_in), tokio::io::stdout(), replies_rx, raw));
        tower_lsp_server::Server::new(server_in, server_out, socket)
            .concurrency_level(CONCURRENCY)
            .serve(service)
            .await;
        // The server's output has ended; let what it wrote reach the client.
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), forward).await;
    });
    // The gate may still wait on stdin, which no runtime can interrupt.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    lifecycle.exit_code()
}
