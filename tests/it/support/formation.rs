//! A pg_auto_failover formation of one test's own (a monitor and two synchronous data nodes, by
//! `scripts/ha.sh` with `HA_DIR` in a temporary folder, so a developer's `make ha-up` is left
//! alone), the faults a failover test puts it through, and a probe of which node takes writes.
//! Destroyed when dropped, a panic included; one a killed test left behind is destroyed by the
//! next test that starts a formation.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use test_support::workspace_root;

/// The folders of formations start so, then the creating process's id.
const PREFIX: &str = "agent-runtime-failover-";
/// How long one probe of a node may take.
const PROBE: Duration = Duration::from_secs(3);

/// A failover, of the kinds the high-availability spec names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Fault {
    /// `pg_autoctl perform failover`: the standby promoted, the primary demoted.
    Planned,
    /// `kill -9` of the primary's postmaster alone: its pg_autoctl starts it again in place.
    PostmasterKilled,
    /// The primary paused (SIGSTOP: it accepts TCP and never answers) until the other node takes
    /// writes, then let go on (SIGCONT), to come back as the standby.
    PrimaryPaused,
    /// The primary's machine lost (its pg_autoctl and Postgres killed), brought back as standby.
    PrimaryCrashed,
    /// The standby's machine lost: commits wait for it until the monitor lets the primary go on
    /// alone; brought back.
    StandbyLost,
}

impl Fault {
    pub fn name(self) -> &'static str {
        match self {
            Fault::Planned => "planned failover",
            Fault::PostmasterKilled => "postmaster kill -9",
            Fault::PrimaryPaused => "primary SIGSTOP",
            Fault::PrimaryCrashed => "primary lost",
            Fault::StandbyLost => "standby lost",
        }
    }

    /// Whether writes come back on the other node (otherwise on the same one).
    pub fn moves_the_primary(self) -> bool {
        matches!(
            self,
            Fault::Planned | Fault::PrimaryPaused | Fault::PrimaryCrashed
        )
    }
}

/// A fault under way, until the formation is whole again.
pub(crate) struct Injected {
    pub fault: Fault,
    /// The port of the node that took writes before.
    pub old_primary: u16,
    /// The node the fault struck.
    node: String,
    /// `scripts/ha.sh failover`, which returns once the old primary follows the new one.
    planned: Option<tokio::process::Child>,
}

pub(crate) struct Formation {
    /// The folder of the test's own; the formation is `ha` in it.
    folder: PathBuf,
    /// The formation's URL: its nodes in the formation's order, `target_session_attrs=read-write`.
    pub url: String,
}

fn ha_dir(folder: &Path) -> PathBuf {
    folder.join("ha")
}

/// `scripts/ha.sh ARGS` on the formation in `folder`: its stdout, or a panic with its stderr.
fn ha(folder: &Path, args: &[&str]) -> String {
    let output = Command::new(workspace_root().join("scripts/ha.sh"))
        .args(args)
        .env("HA_DIR", ha_dir(folder))
        .current_dir(workspace_root())
        .output()
        .expect("running scripts/ha.sh");
    assert!(
        output.status.success(),
        "scripts/ha.sh {args:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// The processes whose `DATABASE_URL` names the formation of `url` (its hosts in any order).
fn served_by(url: &str) -> Vec<u32> {
    let hosts = |url: &str| -> Option<Vec<String>> {
        let (_, rest) = url.split_once('@')?;
        let (hosts, _) = rest.split_once('/')?;
        let mut hosts: Vec<String> = hosts.split(',').map(str::to_owned).collect();
        hosts.sort();
        Some(hosts)
    };
    let Some(ours) = hosts(url) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            environ.split(|byte| *byte == 0).any(|variable| {
                String::from_utf8_lossy(variable)
                    .strip_prefix("DATABASE_URL=")
                    .and_then(hosts)
                    .is_some_and(|theirs| theirs == ours)
            })
        })
        .collect()
}

/// Destroys the formations of test processes that are gone (killed before their Drop ran), and
/// the servers they left on them.
fn destroy_leftovers() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(PREFIX)
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !alive(pid) {
            if let Ok(url) = std::fs::read_to_string(entry.path().join("url")) {
                for server in served_by(url.trim()) {
                    let _ = Command::new("kill")
                        .args(["-KILL", &server.to_string()])
                        .output();
                }
            }
            destroy(&entry.path());
        }
    }
}

impl Formation {
    /// A folder for a formation of this process's own, named so that `start` destroys it once
    /// this process is gone, should its Drop never run.
    pub fn folder() -> PathBuf {
        std::env::temp_dir().join(format!(
            "{PREFIX}{}-{}",
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        ))
    }

    /// Creates and starts the formation in `folder` (installing pg_auto_failover first when
    /// missing, as root), waiting until it has a primary and a synchronous standby. Blocking: a
    /// minute at most on a loaded machine.
    pub fn start(folder: PathBuf) -> Formation {
        destroy_leftovers();
        std::fs::create_dir_all(&folder).expect("the formation's folder");
        let mut formation = Formation {
            folder,
            url: String::new(),
        };
        formation.url = formation.ha(&["up"]);
        assert!(
            formation.url.starts_with("postgres://"),
            "not a URL: {}",
            formation.url
        );
        // For the next test, should this process be killed before its Drop runs.
        std::fs::write(formation.folder.join("url"), &formation.url).expect("the URL kept");
        formation
    }

    fn ha(&self, args: &[&str]) -> String {
        ha(&self.folder, args)
    }

    /// The URL with its hosts in the other order.
    pub fn reversed_url(&self) -> String {
        let (scheme_user, rest) = self.url.split_once('@').expect("user@hosts");
        let (hosts, path) = rest.split_once('/').expect("hosts/database");
        let reversed: Vec<&str> = hosts.split(',').rev().collect();
        format!("{scheme_user}@{}/{path}", reversed.join(","))
    }

    /// The ports of the data nodes, as the URL lists them.
    fn ports(&self) -> Vec<u16> {
        let (_, rest) = self.url.split_once('@').expect("user@hosts");
        let (hosts, _) = rest.split_once('/').expect("hosts/database");
        hosts
            .split(',')
            .map(|host| {
                let (_, port) = host.rsplit_once(':').expect("host:port");
                port.parse().expect("a port")
            })
            .collect()
    }

    /// Whether the node on `port` takes a write now: a new connection to it alone, with the
    /// URL's read-write check, and a commit that writes WAL (so it waits for the synchronous
    /// standby, as any write does), within `PROBE`.
    async fn takes_writes(&self, port: u16) -> Result<u16, ()> {
        let (_, rest) = self.url.split_once('@').expect("user@hosts");
        let (_, path) = rest.split_once('/').expect("hosts/database");
        let url = self.url.replace(rest, &format!("127.0.0.1:{port}/{path}"));
        let probe = tokio::process::Command::new("psql")
            .args([
                "-X",
                "-At",
                &url,
                "-c",
                "SELECT current_setting('port') FROM pg_logical_emit_message(true, 'failover', 'probe')",
            ])
            .env("PGCONNECT_TIMEOUT", "2")
            .kill_on_drop(true)
            .output();
        match tokio::time::timeout(PROBE, probe).await {
            Ok(Ok(output)) if output.status.success() => Ok(port),
            _ => Err(()),
        }
    }

    /// The port of a node that takes writes now (each node probed apart, so that a frozen one
    /// delays no other), or `None` within `PROBE`.
    pub async fn writable_port(&self) -> Option<u16> {
        let probes = self
            .ports()
            .into_iter()
            .map(|port| Box::pin(self.takes_writes(port)));
        futures_util::future::select_ok(probes)
            .await
            .ok()
            .map(|(port, _)| port)
    }

    /// Probes until a node takes writes (another than `old` when `other`): when it first did, and
    /// its port. Panics past `deadline`.
    pub async fn writes_taken(&self, old: u16, other: bool, deadline: Duration) -> (Instant, u16) {
        let started = Instant::now();
        loop {
            if let Some(port) = self.writable_port().await {
                if !other || port != old {
                    return (Instant::now(), port);
                }
            }
            assert!(
                started.elapsed() < deadline,
                "no node took writes {deadline:?} after the fault:\n{}",
                self.ha(&["status"])
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Runs SQL on the primary, e.g. to remove a row behind the service's back.
    pub fn sql(&self, sql: &str) -> String {
        let output = Command::new("psql")
            .args(["-X", "-At", "-v", "ON_ERROR_STOP=1", &self.url, "-c", sql])
            .env("PGCONNECT_TIMEOUT", "2")
            .output()
            .expect("psql");
        assert!(
            output.status.success(),
            "{sql}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    }

    /// Strikes the formation with `fault` and returns at once (a planned failover goes on in
    /// the background).
    pub async fn inject(&self, fault: Fault) -> Injected {
        let primary = self.ha(&["primary"]);
        let old_primary = primary
            .split(' ')
            .next()
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("scripts/ha.sh primary: {primary}"));
        let mut injected = Injected {
            fault,
            old_primary,
            node: String::new(),
            planned: None,
        };
        match fault {
            Fault::Planned => {
                injected.planned = Some(
                    tokio::process::Command::new(workspace_root().join("scripts/ha.sh"))
                        .arg("failover")
                        .env("HA_DIR", ha_dir(&self.folder))
                        .current_dir(workspace_root())
                        .stdout(std::process::Stdio::null())
                        .stderr(std::process::Stdio::piped())
                        .kill_on_drop(true)
                        .spawn()
                        .expect("scripts/ha.sh failover"),
                );
            }
            Fault::PostmasterKilled => injected.node = self.ha(&["kill", "primary"]),
            Fault::PrimaryPaused => injected.node = self.ha(&["pause", "primary"]),
            Fault::PrimaryCrashed => injected.node = self.ha(&["crash", "primary"]),
            Fault::StandbyLost => injected.node = self.ha(&["crash", "standby"]),
        }
        injected
    }

    /// Once writes are taken again: lets a paused node go on; the formation's other steps are
    /// `whole`'s.
    pub fn writes_back(&self, injected: &Injected) {
        if injected.fault == Fault::PrimaryPaused {
            self.ha(&["resume", &injected.node]);
        }
    }

    /// Waits until the formation is whole again (a lost node started as the standby, a demoted
    /// one following), with synchronous replication, so that it can fail over again.
    pub async fn whole(&self, injected: Injected) {
        if let Some(planned) = injected.planned {
            let output = planned
                .wait_with_output()
                .await
                .expect("scripts/ha.sh failover");
            assert!(
                output.status.success(),
                "scripts/ha.sh failover: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        let folder = self.folder.clone();
        tokio::task::spawn_blocking(move || ha(&folder, &["up"]))
            .await
            .expect("scripts/ha.sh up");
    }

    /// The monitor's view, for a failure's message.
    pub fn status(&self) -> String {
        self.ha(&["status"])
    }
}

/// Kills the formation in `folder` and removes it.
pub(crate) fn destroy(folder: &Path) {
    let _ = Command::new(workspace_root().join("scripts/ha.sh"))
        .arg("destroy")
        .env("HA_DIR", ha_dir(folder))
        .current_dir(workspace_root())
        .output();
    let _ = std::fs::remove_dir_all(folder);
}

impl Drop for Formation {
    fn drop(&mut self) {
        if std::thread::panicking() {
            keep_logs(&ha_dir(&self.folder));
        }
        destroy(&self.folder);
    }
}

/// Where the failover test leaves what a person reads after it: its report, and the logs of a
/// formation whose test failed.
pub(crate) fn failover_folder() -> PathBuf {
    crate::support::harness::target_dir().join("failover")
}

/// Copies the logs of a formation whose test failed (the monitor's and each node's, pg_autoctl's
/// and PostgreSQL's) to target/failover/logs, since the formation itself goes.
fn keep_logs(ha: &Path) {
    let kept = failover_folder().join("logs");
    let _ = std::fs::remove_dir_all(&kept);
    let _ = std::fs::create_dir_all(&kept);
    let Ok(entries) = std::fs::read_dir(ha) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.extension().is_some_and(|extension| extension == "log") {
            let _ = std::fs::copy(&path, kept.join(&name));
        }
        // A node's data folder: PostgreSQL's own logs, in its `log` folder.
        for log in std::fs::read_dir(path.join("log"))
            .into_iter()
            .flatten()
            .flatten()
        {
            let file = log.file_name().to_string_lossy().into_owned();
            let _ = std::fs::copy(log.path(), kept.join(format!("{name}-{file}")));
        }
    }
    eprintln!("the formation's logs are kept in {}", kept.display());
}
