//! A PostgreSQL cluster of one test's own, to stop, restart and kill while a server uses it: the
//! shared test cluster serves every other test and must never go down.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A running cluster in a temporary folder, stopped and removed when dropped.
pub struct PrivateCluster {
    /// As root, PostgreSQL's programs run as `postgres`, who owns the cluster.
    as_root: bool,
    bin_dir: PathBuf,
    data_dir: PathBuf,
    port: u16,
}

/// How the cluster is stopped, as `pg_ctl stop -m` takes it.
#[derive(Debug, Clone, Copy)]
pub enum StopMode {
    /// Sessions are ended and the cluster shuts down cleanly.
    Fast,
    /// Every server process is killed at once; the next start recovers from the WAL.
    Immediate,
}

impl StopMode {
    pub fn as_str(self) -> &'static str {
        match self {
            StopMode::Fast => "fast",
            StopMode::Immediate => "immediate",
        }
    }
}

fn running_as_root() -> bool {
    let output = Command::new("id").arg("-u").output().expect("id -u");
    String::from_utf8_lossy(&output.stdout).trim() == "0"
}

/// The newest installed PostgreSQL's programs (`make test` installs them when missing).
fn bin_dir() -> PathBuf {
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL's programs under /usr/lib/postgresql")
        .filter_map(|entry| entry.ok().map(|entry| entry.path().join("bin")))
        .filter(|bin| bin.join("initdb").is_file())
        .collect();
    versions.sort_by_key(|bin| {
        bin.parent()
            .and_then(Path::file_name)
            .and_then(|name| name.to_str()?.parse::<u32>().ok())
    });
    versions.pop().expect("an installed initdb")
}

impl PrivateCluster {
    /// Creates and starts a cluster on a free port, with PostgreSQL's durable defaults: a killed
    /// cluster must keep every commit it acknowledged.
    pub fn start() -> PrivateCluster {
        let bin_dir = bin_dir();
        // As root the cluster belongs to `postgres`, who cannot reach a folder under /root.
        let data_dir = std::env::temp_dir().join(format!(
            "agent-runtime-private-pg-{}-{}",
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        ));
        std::fs::create_dir_all(&data_dir).expect("cluster folder");
        let as_root = running_as_root();
        if as_root {
            let owned = Command::new("chown")
                .arg("postgres:postgres")
                .arg(&data_dir)
                .status()
                .expect("chown");
            assert!(owned.success(), "chown of {}", data_dir.display());
        }
        let cluster = PrivateCluster {
            as_root,
            bin_dir,
            data_dir,
            port: std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|listener| listener.local_addr())
                .expect("a free port")
                .port(),
        };
        cluster.pg(
            "initdb",
            &[
                "-D",
                cluster.data_path(),
                "-U",
                "postgres",
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C.UTF-8",
            ],
        );
        cluster.start_again();
        cluster
    }

    fn data_path(&self) -> &str {
        self.data_dir.to_str().expect("a UTF-8 path")
    }

    /// One of PostgreSQL's programs, to run as the user the cluster belongs to.
    fn command(&self, program: &str) -> Command {
        let program = self.bin_dir.join(program);
        if self.as_root {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(&program);
            command
        } else {
            Command::new(&program)
        }
    }

    fn pg(&self, program: &str, args: &[&str]) {
        let output = self
            .command(program)
            .args(args)
            .output()
            .expect("running PostgreSQL");
        assert!(
            output.status.success(),
            "{program} {args:?} failed:\n{}{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr),
            self.log_tail()
        );
    }

    fn log_path(&self) -> PathBuf {
        self.data_dir.join("server.log")
    }

    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(self.log_path()).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }

    /// Starts the stopped cluster and waits until it accepts connections.
    pub fn start_again(&self) {
        let options = format!(
            "-c listen_addresses=127.0.0.1 -p {} -c unix_socket_directories=''",
            self.port
        );
        let log = self.log_path();
        self.pg(
            "pg_ctl",
            &[
                "-D",
                self.data_path(),
                "-l",
                log.to_str().expect("a UTF-8 path"),
                "-o",
                &options,
                "-w",
                "-t",
                "60",
                "start",
            ],
        );
    }

    /// Stops the cluster in `mode`, waiting until it is down.
    pub fn stop(&self, mode: StopMode) {
        self.pg(
            "pg_ctl",
            &["-D", self.data_path(), "-m", mode.as_str(), "-w", "stop"],
        );
    }

    /// A URL of `database` on this cluster, without TLS.
    pub fn url(&self, database: &str) -> String {
        format!(
            "postgres://postgres@127.0.0.1:{}/{database}?sslmode=disable",
            self.port
        )
    }

    /// Creates an empty database.
    pub fn create_database(&self, name: &str) {
        let port = self.port.to_string();
        self.pg(
            "createdb",
            &["-h", "127.0.0.1", "-p", &port, "-U", "postgres", name],
        );
    }
}

impl Drop for PrivateCluster {
    fn drop(&mut self) {
        let _ = self
            .command("pg_ctl")
            .args(["-D", self.data_path(), "-m", "immediate", "stop"])
            .output();
        let _ = std::fs::remove_dir_all(&self.data_dir);
    }
}
