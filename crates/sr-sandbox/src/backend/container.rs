//! Containers through the Docker Engine API (Docker, or podman's compatible service):
//! no network, read-only root, tmpfs `/work` and `/tmp`, memory, pids and rlimits, all
//! capabilities dropped, no new privileges, an unprivileged user, and no host mount
//! but the run directory, read-only. The driver is the container's only process.

use std::collections::HashMap;
use std::pin::Pin;

use bollard::Docker;
use bollard::container::LogOutput;
use bollard::models::{ContainerCreateBody, HostConfig, ResourcesUlimits};
use bollard::query_parameters::{AttachContainerOptions, RemoveContainerOptions, WaitContainerOptions};
use futures::StreamExt;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::task::JoinHandle;

use super::{Backend, Launch, MOUNT_POINT, RawOutput, Sandbox, running_as_root};
use crate::bridge::SocketAccess;
use crate::{BoxFuture, SandboxError, Stream};

/// Every container we create carries this label, so leftovers can be found.
pub const LABEL: &str = "streetrace.sandbox";

#[derive(Debug, Clone)]
pub struct Container {
    docker: Docker,
    /// An image with a Python interpreter; it is never pulled.
    pub image: String,
    /// The interpreter's path in the image.
    pub python: String,
    pub uid: u32,
    pub gid: u32,
    /// CPUs the container may use, in billionths.
    pub nano_cpus: i64,
}

impl Container {
    pub fn new(docker: Docker, image: impl Into<String>) -> Container {
        Container {
            docker,
            image: image.into(),
            python: "/usr/bin/python3".to_string(),
            uid: 65534,
            gid: 65534,
            nano_cpus: 1_000_000_000,
        }
    }

    /// Connects to an engine's unix socket and agrees on the API version.
    pub async fn connect(socket: &str, image: impl Into<String>) -> Result<Container, SandboxError> {
        let docker = Docker::connect_with_unix(socket, 120, bollard::API_DEFAULT_VERSION)
            .map_err(|error| SandboxError::Start(format!("cannot connect to {socket}: {error}")))?
            .negotiate_version()
            .await
            .map_err(|error| SandboxError::Start(format!("cannot talk to {socket}: {error}")))?;
        Ok(Container::new(docker, image))
    }

    pub fn docker(&self) -> &Docker {
        &self.docker
    }

    fn body(&self, launch: &Launch) -> ContainerCreateBody {
        let limits = &launch.limits;
        let scratch = format!("rw,nosuid,nodev,size={},mode=1777", limits.scratch_bytes);
        let ulimit = |name: &str, value: u64| ResourcesUlimits {
            name: Some(name.to_string()),
            soft: Some(value as i64),
            hard: Some(value as i64),
        };
        let mut cmd = vec![self.python.clone()];
        cmd.extend(Launch::driver_args(MOUNT_POINT));
        ContainerCreateBody {
            image: Some(self.image.clone()),
            entrypoint: Some(Vec::new()),
            cmd: Some(cmd),
            user: Some(format!("{}:{}", self.uid, self.gid)),
            working_dir: Some("/work".to_string()),
            env: Some(vec!["PATH=/usr/bin:/bin".to_string(), "HOME=/work".to_string(), "LANG=C.UTF-8".to_string()]),
            open_stdin: Some(true),
            stdin_once: Some(true),
            attach_stdin: Some(true),
            attach_stdout: Some(true),
            attach_stderr: Some(true),
            network_disabled: Some(true),
            labels: Some(HashMap::from([(LABEL.to_string(), "1".to_string())])),
            host_config: Some(HostConfig {
                auto_remove: Some(true),
                network_mode: Some("none".to_string()),
                readonly_rootfs: Some(true),
                tmpfs: Some(HashMap::from([("/tmp".to_string(), scratch.clone()), ("/work".to_string(), scratch)])),
                binds: Some(vec![format!("{}:{MOUNT_POINT}:ro", launch.dir.display())]),
                memory: Some(limits.memory_bytes as i64),
                memory_swap: Some(limits.memory_bytes as i64),
                pids_limit: Some(i64::from(limits.processes)),
                nano_cpus: Some(self.nano_cpus),
                cap_drop: Some(vec!["ALL".to_string()]),
                security_opt: Some(vec!["no-new-privileges".to_string()]),
                // All explicit: an engine's defaults may exceed what it may set.
                // All explicit: an engine's defaults may be more than it may set.
                ulimits: Some(
                    [
                        ulimit("nofile", u64::from(limits.open_files)),
                        ulimit("cpu", limits.cpu_seconds),
                        ulimit("core", 0),
                        ulimit("nproc", u64::from(limits.processes)),
                    ]
                    .into(),
                ),
                ..HostConfig::default()
            }),
            ..ContainerCreateBody::default()
        }
    }
}

impl Backend for Container {
    fn name(&self) -> &'static str {
        "container"
    }

    fn socket_access(&self) -> SocketAccess {
        // A rootful engine runs the container user as that host uid; a rootless one
        // maps it to a subordinate uid we cannot name.
        if running_as_root() { SocketAccess::User { uid: self.uid, gid: self.gid } } else { SocketAccess::Anyone }
    }

    fn launch<'a>(&'a self, launch: &'a Launch) -> BoxFuture<'a, Result<Box<dyn Sandbox>, SandboxError>> {
        Box::pin(async move {
            let created = self
                .docker
                .create_container(None, self.body(launch))
                .await
                .map_err(|error| SandboxError::Start(format!("cannot create the container: {error}")))?;
            match self.start(&created.id, launch).await {
                Ok(sandbox) => Ok(Box::new(sandbox) as Box<dyn Sandbox>),
                Err(error) => {
                    remove(&self.docker, &created.id).await;
                    Err(error)
                }
            }
        })
    }
}

impl Container {
    async fn start(&self, id: &str, launch: &Launch) -> Result<ContainerSandbox, SandboxError> {
        let failed = |what: &str, error: bollard::errors::Error| SandboxError::Start(format!("{what}: {error}"));
        let options =
            AttachContainerOptions { stdin: true, stdout: true, stderr: true, stream: true, ..Default::default() };
        let attached = self
            .docker
            .attach_container(id, Some(options))
            .await
            .map_err(|error| failed("cannot attach to the container", error))?;
        let output = tokio::spawn(collect(attached.output, launch.output.clone()));
        // Asked before the driver can exit, so the status arrives even though the
        // engine removes the container as soon as it stops.
        let condition = WaitContainerOptions { condition: "next-exit".to_string() };
        let mut waiting = self.docker.wait_container(id, Some(condition));
        let exit = tokio::spawn(async move {
            match waiting.next().await {
                Some(Ok(response)) => describe(response.status_code),
                Some(Err(bollard::errors::Error::DockerContainerWaitError { code, .. })) => describe(code),
                Some(Err(error)) => format!("cannot wait for the container: {error}"),
                None => "stopped".to_string(),
            }
        });
        let mut sandbox = ContainerSandbox {
            docker: self.docker.clone(),
            id: id.to_string(),
            input: None,
            output,
            exit: Exit::Pending(exit),
            removed: false,
        };
        self.docker.start_container(id, None).await.map_err(|error| failed("cannot start the container", error))?;
        let mut input = attached.input;
        let _ = input.write_all(format!("{}\n", launch.token).as_bytes()).await;
        let _ = input.flush().await;
        sandbox.input = Some(input);
        Ok(sandbox)
    }
}

fn describe(code: i64) -> String {
    match code {
        129..=159 => format!("killed by signal {}", code - 128),
        code => format!("exit status {code}"),
    }
}

async fn remove(docker: &Docker, id: &str) {
    let options = RemoveContainerOptions { force: true, ..Default::default() };
    let _ = docker.remove_container(id, Some(options)).await;
}

type Output = Pin<Box<dyn futures::Stream<Item = Result<LogOutput, bollard::errors::Error>> + Send>>;

async fn collect(mut output: Output, raw: RawOutput) {
    while let Some(Ok(chunk)) = output.next().await {
        match chunk {
            LogOutput::StdOut { message } | LogOutput::Console { message } => raw.push(Stream::Stdout, &message),
            LogOutput::StdErr { message } => raw.push(Stream::Stderr, &message),
            LogOutput::StdIn { .. } => {}
        }
    }
}

struct ContainerSandbox {
    docker: Docker,
    id: String,
    /// Kept open: closing it may end the attach session.
    input: Option<Pin<Box<dyn AsyncWrite + Send>>>,
    output: JoinHandle<()>,
    exit: Exit,
    removed: bool,
}

enum Exit {
    Pending(JoinHandle<String>),
    Known(String),
}

impl Sandbox for ContainerSandbox {
    fn wait(&mut self) -> BoxFuture<'_, String> {
        Box::pin(async move {
            if let Exit::Pending(waiting) = &mut self.exit {
                let status = waiting.await.unwrap_or_else(|error| format!("cannot wait for the container: {error}"));
                self.exit = Exit::Known(status);
            }
            match &self.exit {
                Exit::Known(status) => status.clone(),
                Exit::Pending(_) => "stopped".to_string(),
            }
        })
    }

    fn kill(&mut self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.input = None;
            remove(&self.docker, &self.id).await;
            self.removed = true;
            self.output.abort();
        })
    }
}

impl Drop for ContainerSandbox {
    fn drop(&mut self) {
        self.output.abort();
        if let Exit::Pending(waiting) = &self.exit {
            waiting.abort();
        }
        // The engine removes it once the driver exits, which it does when the bridge
        // closes; this only hurries a driver that is busy.
        if !self.removed
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let docker = self.docker.clone();
            let id = std::mem::take(&mut self.id);
            runtime.spawn(async move { remove(&docker, &id).await });
        }
    }
}
