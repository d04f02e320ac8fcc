//! A podman API service for the container tests, and a Python image built from the
//! host's interpreter without any registry.
//!
//! The service runs rootful with runc and cgroupfs on a socket in a private
//! directory; a shell watchdog stops it when this test process exits (its stdin, a
//! pipe held here, closes).
#![allow(clippy::unwrap_used)]

use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use bollard::Docker;
use bollard::query_parameters::CreateImageOptions;
use futures::StreamExt;

struct Service {
    socket: PathBuf,
    _dir: tempfile::TempDir,
    _watchdog: Mutex<Child>,
}

static SERVICE: OnceLock<Option<Service>> = OnceLock::new();
static IMAGE: tokio::sync::Mutex<Option<String>> = tokio::sync::Mutex::const_new(None);

/// The service's socket path, or None when podman is not installed.
pub fn socket() -> Option<&'static Path> {
    SERVICE.get_or_init(start).as_ref().map(|service| service.socket.as_path())
}

fn start() -> Option<Service> {
    let installed = Command::new("podman").arg("--version").stdout(Stdio::null()).status().is_ok_and(|s| s.success());
    if !installed {
        return None;
    }
    let dir = tempfile::Builder::new().prefix("sr-podman-").tempdir().expect("temp dir");
    let socket = dir.path().join("podman.sock");
    let script = "podman --runtime runc --cgroup-manager cgroupfs --events-backend file \
                  system service --time=0 \"unix://$0\" 2>\"$0.log\" & pid=$!; read _; kill $pid; wait $pid";
    // In the temp dir: conmon leaves an `oom` file in its working directory
    // after the memory test's container is killed.
    let watchdog = Command::new("sh")
        .args(["-c", script])
        .arg(&socket)
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("sh runs");
    let started = Instant::now();
    while std::os::unix::net::UnixStream::connect(&socket).is_err() {
        if started.elapsed() > Duration::from_secs(30) {
            let mut log = String::new();
            let _ = std::fs::File::open(socket.with_extension("sock.log")).map(|mut f| f.read_to_string(&mut log));
            panic!("the podman service did not start: {log}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Some(Service { socket, _dir: dir, _watchdog: Mutex::new(watchdog) })
}

/// An image with the host's Python, imported through the API (`docker import`).
pub async fn image(docker: &Docker) -> String {
    let mut built = IMAGE.lock().await;
    if let Some(tag) = built.as_ref() {
        return tag.clone();
    }
    let python = std::fs::canonicalize("/usr/bin/python3").expect("the host has /usr/bin/python3");
    let version = python.file_name().unwrap().to_string_lossy().into_owned();
    let repo = "localhost/sr-sandbox-python";
    let image = format!("{repo}:{version}");
    if docker.inspect_image(&image).await.is_err() {
        let rootfs = tokio::task::spawn_blocking(move || rootfs(&python)).await.unwrap();
        // The tag goes in `repo`: podman ignores the `tag` parameter of an import.
        let options =
            CreateImageOptions { from_src: Some("-".to_string()), repo: Some(image.clone()), ..Default::default() };
        let mut progress = docker.create_image(Some(options), Some(bollard::body_full(rootfs.into())), None);
        while let Some(step) = progress.next().await {
            step.expect("the image imports");
        }
        docker.inspect_image(&image).await.expect("the imported image exists");
    }
    *built = Some(image.clone());
    image
}

/// A tar of the interpreter, its standard library and the shared libraries it and
/// its extension modules load, laid out like the host (merged `/usr` or not).
fn rootfs(python: &Path) -> Vec<u8> {
    let version = python.file_name().unwrap().to_string_lossy().into_owned();
    let stdlib = Path::new("/usr/lib").join(&version);
    let mut tar = tar::Builder::new(Vec::new());
    tar.follow_symlinks(true);
    // No `/work`: the engine would give the tmpfs mounted there this directory's mode.
    for dir in ["tmp", "run/sr", "etc", "usr/bin"] {
        append_dir(&mut tar, dir);
    }
    tar.append_path_with_name(python, format!("usr/bin/{version}")).unwrap();
    symlink(&mut tar, "usr/bin/python3", Path::new(&version));
    for top in ["bin", "lib", "lib64", "sbin"] {
        if let Ok(target) = std::fs::read_link(Path::new("/").join(top)) {
            symlink(&mut tar, top, &target);
        }
    }

    let mut objects = vec![python.to_path_buf()];
    let mut files = Vec::new();
    walk(&stdlib, &mut files);
    const SKIP: &[&str] = &["test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3", "site-packages"];
    for file in files {
        let relative = file.strip_prefix(&stdlib).unwrap();
        let first = relative.components().next().unwrap().as_os_str().to_string_lossy();
        if SKIP.contains(&first.as_ref()) || first.starts_with("config-") {
            continue;
        }
        if file.extension().is_some_and(|ext| ext == "so") {
            objects.push(file.clone());
        }
        tar.append_path_with_name(&file, file.strip_prefix("/").unwrap()).unwrap();
    }

    let mut libraries = std::collections::BTreeSet::new();
    for object in &objects {
        let output = Command::new("ldd").arg(object).output().expect("ldd runs");
        for line in String::from_utf8_lossy(&output.stdout).lines() {
            let path = match line.split_once("=>") {
                Some((_, rest)) => rest.split_whitespace().next(),
                None => line.split_whitespace().next(),
            };
            if let Some(path) = path.filter(|path| path.starts_with('/')) {
                libraries.insert(PathBuf::from(path));
            }
        }
    }
    for library in libraries {
        // Stored under its directory's real path, so no path crosses a symlink.
        let dir = std::fs::canonicalize(library.parent().unwrap()).unwrap();
        let name = dir.join(library.file_name().unwrap());
        tar.append_path_with_name(&library, name.strip_prefix("/").unwrap()).unwrap();
    }
    tar.into_inner().unwrap()
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        if meta.is_dir() {
            walk(&path, files);
        } else if std::fs::metadata(&path).is_ok() {
            files.push(path);
        }
    }
}

fn append_dir(tar: &mut tar::Builder<Vec<u8>>, path: &str) {
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(tar::EntryType::Directory);
    header.set_mode(if path == "tmp" { 0o1777 } else { 0o755 });
    header.set_size(0);
    header.set_mtime(std::fs::metadata("/usr").map_or(0, |meta| meta.mtime() as u64));
    tar.append_data(&mut header, path, std::io::empty()).unwrap();
}

fn symlink(tar: &mut tar::Builder<Vec<u8>>, path: &str, target: &Path) {
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(tar::EntryType::Symlink);
    header.set_mode(0o777);
    header.set_size(0);
    tar.append_link(&mut header, path, target).unwrap();
}

/// Removes containers the tests left behind.
pub async fn remove_leftovers(docker: &Docker) {
    use bollard::query_parameters::{ListContainersOptions, RemoveContainerOptions};
    let filters =
        std::collections::HashMap::from([("label".to_string(), vec![sr_sandbox::backend::LABEL.to_string()])]);
    let options = ListContainersOptions { all: true, filters: Some(filters), ..Default::default() };
    for container in docker.list_containers(Some(options)).await.unwrap_or_default() {
        if let Some(id) = container.id {
            let _ =
                docker.remove_container(&id, Some(RemoveContainerOptions { force: true, ..Default::default() })).await;
        }
    }
}
