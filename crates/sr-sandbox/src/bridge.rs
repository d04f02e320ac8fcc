//! The tool bridge: a unix socket in a private directory that is mounted into the
//! sandbox (no network, no TCP port). A driver proves itself with the per-run token,
//! given on its stdin; any other connection is refused. At most one driver is
//! connected at a time, and only while the session is waiting for one.

use std::fmt::Write as _;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::protocol::{DriverMessage, HostMessage, Line, LineReader, PROTOCOL};

pub(crate) const DRIVER_FILE: &str = "driver.py";
pub(crate) const SOCKET_FILE: &str = "bridge.sock";
const DRIVER_SOURCE: &str = include_str!("driver.py");

/// A hello must arrive this soon after connecting.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);
const MAX_HELLO: usize = 4096;

/// Who must be able to connect to the socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SocketAccess {
    /// Processes running as our own user.
    Owner,
    /// Processes running as this host uid and gid (a sandbox that drops privileges).
    User { uid: u32, gid: u32 },
    /// Anyone who can reach the directory (rootless containers, whose users are
    /// mapped to subordinate ids); the token is then the only guard.
    Anyone,
}

type Slot = Arc<Mutex<Option<oneshot::Sender<Connection>>>>;

pub(crate) struct Bridge {
    dir: tempfile::TempDir,
    token: Arc<str>,
    slot: Slot,
    accept: JoinHandle<()>,
}

impl Bridge {
    /// Creates the directory with the driver script and the listening socket.
    pub(crate) fn open(access: SocketAccess, max_message: usize) -> std::io::Result<Bridge> {
        let dir = tempfile::Builder::new().prefix("sr-sandbox-").tempdir()?;
        let ours = std::fs::metadata(dir.path())?;
        let driver = dir.path().join(DRIVER_FILE);
        std::fs::write(&driver, DRIVER_SOURCE)?;
        std::fs::set_permissions(&driver, std::fs::Permissions::from_mode(0o644))?;
        let socket = dir.path().join(SOCKET_FILE);
        let listener = UnixListener::bind(&socket)?;
        // The directory can be traversed but not listed or changed; the socket is
        // reachable by the sandbox's user only.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o711))?;
        let mode = match access {
            SocketAccess::Owner => 0o600,
            SocketAccess::User { uid, gid } => {
                if ours.uid() != uid {
                    std::os::unix::fs::chown(&socket, Some(uid), Some(gid))?;
                }
                0o600
            }
            SocketAccess::Anyone => 0o666,
        };
        std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(mode))?;

        let token: Arc<str> = random_token()?.into();
        let slot: Slot = Arc::new(Mutex::new(None));
        let accept = tokio::spawn(accept_loop(listener, token.clone(), slot.clone(), max_message));
        Ok(Bridge { dir, token, slot, accept })
    }

    pub(crate) fn dir(&self) -> &Path {
        self.dir.path()
    }

    pub(crate) fn token(&self) -> &str {
        &self.token
    }

    /// The next driver that presents the token.
    pub(crate) fn expect_driver(&self) -> oneshot::Receiver<Connection> {
        let (sender, receiver) = oneshot::channel();
        *self.slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(sender);
        receiver
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

async fn accept_loop(listener: UnixListener, token: Arc<str>, slot: Slot, max_message: usize) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                tokio::spawn(admit(stream, token.clone(), slot.clone(), max_message));
            }
            // Out of descriptors, most likely: wait rather than spin.
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

/// Hands the connection to the waiting session if its hello carries the token.
async fn admit(stream: UnixStream, token: Arc<str>, slot: Slot, max_message: usize) {
    let (read, write) = stream.into_split();
    let mut connection =
        Connection { reader: LineReader::new(BufReader::new(read), MAX_HELLO), writer: write, max_message };
    let hello = tokio::time::timeout(HELLO_TIMEOUT, connection.reader.next()).await;
    let refusal = match hello {
        Ok(Ok(Line::Message(line))) => match serde_json::from_slice::<DriverMessage>(&line) {
            Ok(DriverMessage::Hello { token: offered, protocol }) => {
                if !same_secret(offered.as_bytes(), token.as_bytes()) {
                    "wrong token"
                } else if protocol != PROTOCOL {
                    "unsupported protocol version"
                } else {
                    let waiting = slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take();
                    match waiting {
                        Some(sender) => {
                            connection.reader.set_max(max_message);
                            let _ = sender.send(connection);
                            return;
                        }
                        None => "no driver is expected",
                    }
                }
            }
            _ => "expected a hello",
        },
        _ => "expected a hello",
    };
    let _ = connection.send(&HostMessage::Refused { reason: refusal }).await;
}

fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn random_token() -> std::io::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(std::io::Error::other)?;
    Ok(bytes.iter().fold(String::with_capacity(64), |mut hex, byte| {
        let _ = write!(hex, "{byte:02x}");
        hex
    }))
}

/// An authenticated driver connection.
pub(crate) struct Connection {
    reader: LineReader<BufReader<OwnedReadHalf>>,
    writer: OwnedWriteHalf,
    max_message: usize,
}

/// A message from the driver, or why there is none.
pub(crate) enum Received {
    Message(DriverMessage),
    Closed,
    /// Malformed, oversized or unreadable: the driver cannot be trusted any more.
    Violation(String),
}

impl Connection {
    pub(crate) async fn recv(&mut self) -> Received {
        match self.reader.next().await {
            Ok(Line::Message(line)) => match serde_json::from_slice(&line) {
                Ok(message) => Received::Message(message),
                Err(error) => Received::Violation(format!("malformed message from the driver: {error}")),
            },
            Ok(Line::TooLong) => {
                Received::Violation(format!("the driver sent a message over {} bytes", self.max_message))
            }
            Ok(Line::Eof) => Received::Closed,
            Err(error) => Received::Violation(format!("cannot read from the driver: {error}")),
        }
    }

    pub(crate) async fn send(&mut self, message: &HostMessage<'_>) -> std::io::Result<()> {
        self.writer.write_all(&message.to_line()).await
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

    use super::*;

    async fn hello(bridge: &Bridge, token: &str) -> String {
        let mut stream = UnixStream::connect(bridge.dir().join(SOCKET_FILE)).await.unwrap();
        let line = format!("{{\"type\":\"hello\",\"token\":\"{token}\",\"protocol\":{PROTOCOL}}}\n");
        stream.write_all(line.as_bytes()).await.unwrap();
        let mut reply = String::new();
        BufReader::new(stream).read_line(&mut reply).await.unwrap();
        reply
    }

    #[tokio::test]
    async fn refuses_wrong_tokens_and_admits_the_driver_once() {
        let bridge = Bridge::open(SocketAccess::Owner, 1 << 20).unwrap();
        assert_eq!(bridge.token().len(), 64);
        assert_eq!(hello(&bridge, "0123").await, "{\"type\":\"refused\",\"reason\":\"wrong token\"}\n");

        let token = bridge.token().to_string();
        assert_eq!(hello(&bridge, &token).await, "{\"type\":\"refused\",\"reason\":\"no driver is expected\"}\n");

        let waiting = bridge.expect_driver();
        let mut stream = UnixStream::connect(bridge.dir().join(SOCKET_FILE)).await.unwrap();
        let line = format!("{{\"type\":\"hello\",\"token\":\"{token}\",\"protocol\":{PROTOCOL}}}\n");
        stream.write_all(line.as_bytes()).await.unwrap();
        let mut connection = waiting.await.unwrap();
        stream.write_all(b"{\"type\":\"final\",\"value\":[1]}\n").await.unwrap();
        assert!(matches!(connection.recv().await, Received::Message(DriverMessage::Final { .. })));
        stream.write_all(b"not json\n").await.unwrap();
        assert!(matches!(connection.recv().await, Received::Violation(_)));
        drop(stream);
        assert!(matches!(connection.recv().await, Received::Closed));

        let mode = std::fs::metadata(bridge.dir().join(SOCKET_FILE)).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
