//! Spawns the real `agent-runtime` and `agentctl` binaries (built by `cargo build --bins`, which
//! `make test` runs first) against a test database of their own.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use test_support::{workspace_root, TestDatabase};

const START_DEADLINE: Duration = Duration::from_secs(30);

/// How long a spawned server waits for a pool connection: longer than a connection takes on a
/// machine running the whole suite (beside it, 2 s answered a lone request 503), shorter than a
/// client waits. The database outage tests set `QUICK_POOL` instead.
const POOL_TIMEOUT_SECS: &str = "10";

/// The setting for a test of a database outage: requests meanwhile are answered 503 at once.
pub(crate) const QUICK_POOL: (&str, &str) = ("DATABASE_TIMEOUT_SECS", "2");

/// The setting for a test that floods one server: its requests may queue for a connection behind
/// each other on a machine running other tests, as long as a client would wait, and are not
/// refused after the quick timeout.
pub(crate) const PATIENT_POOL: (&str, &str) = ("DATABASE_TIMEOUT_SECS", "30");

/// The setting for a test that sends many writes on one row at once: each waits for the row's
/// lock as long as a client would, and is not answered 429 after the quick `lock_timeout`.
pub(crate) const PATIENT_LOCKS: (&str, &str) = ("DATABASE_LOCK_TIMEOUT_MS", "30000");

/// The harness's HTTP client. It lets an idle connection go well before the server's 15 s
/// keep-alive does: a request sent on a connection the server is closing meets a reset, and on a
/// busy machine the steps of a test may well leave its connection idle that long.
fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .pool_idle_timeout(Duration::from_secs(5))
        .build()
        .expect("an HTTP client")
}

/// Cargo's target directory, where the binaries are and where tests leave what a person may look at.
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace_root().join("target"), PathBuf::from)
}

pub fn binary(name: &str) -> PathBuf {
    let path = target_dir().join("debug").join(name);
    assert!(
        path.is_file(),
        "{} is missing: run `cargo build --bins` first (make test does)",
        path.display()
    );
    path
}

/// The `/metrics` token of the tests' servers, unless a test sets its own: a server with a real
/// chain or provider requires one.
pub const METRICS_TOKEN: &str = "metrics-token-of-the-test-servers";

/// What the server logs once it listens, before the address it took.
const SERVING_ON: &str = "serving on http://";

/// A running server, killed when dropped.
pub struct Server {
    child: Child,
    pub base_url: String,
    log_path: PathBuf,
    pub client: reqwest::Client,
    metrics_token: String,
}

impl Server {
    /// A server on its own fresh, migrated database.
    pub async fn start() -> (Server, TestDatabase) {
        let database = TestDatabase::new().await;
        let server = Server::start_on(&database, &[]).await;
        (server, database)
    }

    /// A server on `database` with these settings besides.
    pub async fn start_on(database: &TestDatabase, settings: &[(&str, &str)]) -> Server {
        let mut env = vec![("DATABASE_URL", database.url())];
        env.extend_from_slice(settings);
        Server::start_with(&env).await
    }

    /// A server with exactly these settings, waiting until it answers. It binds port 0 and
    /// says which port it took, so no other test can take that port between a probe and the bind.
    pub async fn start_with(env: &[(&str, &str)]) -> Server {
        let log_path = std::env::temp_dir().join(format!(
            "agent-runtime-test-{}-{}.log",
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        ));
        let log = std::fs::File::create(&log_path).expect("log file");
        let mut command = Command::new(binary("agent-runtime"));
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("BIND_ADDR", "127.0.0.1:0")
            .env("MIGRATE_ON_START", "false")
            .env("DATABASE_TIMEOUT_SECS", POOL_TIMEOUT_SECS)
            .env("METRICS_TOKEN", METRICS_TOKEN)
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log file"))
            .stderr(log);
        for (name, value) in env {
            command.env(name, value);
        }
        let metrics_token = env
            .iter()
            .find(|(name, _)| *name == "METRICS_TOKEN")
            .map_or(METRICS_TOKEN, |(_, token)| token)
            .to_owned();
        let child = command.spawn().expect("spawning agent-runtime");
        let mut server = Server {
            child,
            base_url: String::new(),
            log_path,
            client: client(),
            metrics_token,
        };
        server.wait_until_up().await;
        server
    }

    /// The address the server logged it listens on, once it has.
    fn logged_address(&self) -> Option<String> {
        let logs = self.logs();
        let after = &logs[logs.find(SERVING_ON)? + SERVING_ON.len()..];
        let address: String = after
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | ':'))
            .collect();
        address.contains(':').then_some(address)
    }

    async fn wait_until_up(&mut self) {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("child status") {
                panic!(
                    "agent-runtime exited with {status} before answering:\n{}",
                    self.logs()
                );
            }
            if self.base_url.is_empty() {
                if let Some(address) = self.logged_address() {
                    self.base_url = format!("http://{address}");
                }
            }
            let answered = match self.base_url.is_empty() {
                true => None,
                false => self.client.get(self.url("/healthz")).send().await.ok(),
            };
            if answered.is_some_and(|response| response.status().is_success()) {
                return;
            }
            assert!(
                started.elapsed() < START_DEADLINE,
                "agent-runtime did not answer:\n{}",
                self.logs()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }

    pub fn logs(&self) -> String {
        std::fs::read_to_string(&self.log_path).unwrap_or_default()
    }

    /// The logs once `appeared` holds for them: lines are written by a background thread.
    pub async fn wait_for_logs(&self, appeared: impl Fn(&str) -> bool) -> String {
        let started = Instant::now();
        loop {
            let logs = self.logs();
            if appeared(&logs) {
                return logs;
            }
            assert!(
                started.elapsed() < START_DEADLINE,
                "expected log lines never came:\n{logs}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    pub async fn get(&self, path: &str, key: Option<&str>) -> (u16, Value) {
        let mut request = self.client.get(self.url(path));
        if let Some(key) = key {
            request = request.bearer_auth(key);
        }
        read(request.send().await.expect("request")).await
    }

    /// `/metrics` as text.
    pub async fn metrics(&self) -> String {
        self.client
            .get(self.url("/metrics"))
            .bearer_auth(&self.metrics_token)
            .send()
            .await
            .expect("metrics")
            .text()
            .await
            .expect("text")
    }

    /// Asks the server to stop, as a service manager does.
    pub fn terminate(&self) {
        let sent = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(sent.success());
    }

    /// Waits for the process to exit by itself and returns whether it exited successfully.
    pub async fn wait_for_exit(&mut self, deadline: Duration) -> bool {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("child status") {
                return status.success();
            }
            assert!(
                started.elapsed() < deadline,
                "agent-runtime did not exit:\n{}",
                self.logs()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// The lines of a server's log a failing test prints: what it did last.
const LOG_LINES_OF_A_FAILURE: usize = 40;

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            let logs = self.logs();
            let lines: Vec<&str> = logs.lines().collect();
            let last = &lines[lines.len().saturating_sub(LOG_LINES_OF_A_FAILURE)..];
            eprintln!(
                "the last lines of the server's log ({}):\n{}",
                self.base_url,
                last.join("\n")
            );
        }
        let _ = std::fs::remove_file(&self.log_path);
    }
}

/// A response header's value, when it is text.
pub fn header(response: &reqwest::Response, name: &str) -> Option<String> {
    response
        .headers()
        .get(name)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned)
}

pub async fn read(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let body = response.text().await.expect("body");
    let json = serde_json::from_str(&body)
        .unwrap_or_else(|_| panic!("status {status}, body is not JSON: {body:?}"));
    (status, json)
}

/// What one `agentctl` run printed.
pub struct CliOutput {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

impl CliOutput {
    pub fn json(&self) -> Value {
        assert!(self.success, "agentctl failed: {}", self.stderr);
        serde_json::from_str(&self.stdout).unwrap_or_else(|_| panic!("not JSON: {}", self.stdout))
    }
}

pub async fn agentctl(database: &TestDatabase, args: &[&str]) -> CliOutput {
    agentctl_with(database, &[], args).await
}

/// `agentctl` with settings beyond the database, e.g. those of a real chain.
pub async fn agentctl_with(
    database: &TestDatabase,
    env: &[(&str, &str)],
    args: &[&str],
) -> CliOutput {
    agentctl_at(database.url(), env, args).await
}

/// `agentctl` on the database at `database_url`.
pub async fn agentctl_at(database_url: &str, env: &[(&str, &str)], args: &[&str]) -> CliOutput {
    let output = tokio::process::Command::new(binary("agentctl"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("DATABASE_URL", database_url)
        .envs(env.iter().copied())
        .args(args)
        .output()
        .await
        .expect("running agentctl");
    CliOutput {
        success: output.status.success(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// The intent as `agentctl intents show` prints it once its status is one of `statuses`, waiting
/// at most `deadline`.
pub async fn intent_reaching(
    database: &TestDatabase,
    env: &[(&str, &str)],
    id: &str,
    statuses: &[&str],
    deadline: Duration,
) -> Value {
    let started = Instant::now();
    loop {
        let intent = agentctl_with(database, env, &["intents", "show", id])
            .await
            .json();
        if statuses.contains(&intent["status"].as_str().unwrap_or_default()) {
            return intent;
        }
        assert!(
            started.elapsed() < deadline,
            "never reached {statuses:?}: {intent}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// An intent's `amount_atomic`, as a number.
pub fn amount_of(intent: &Value) -> u64 {
    intent["amount_atomic"]
        .as_str()
        .expect("amount_atomic")
        .parse()
        .expect("an integer amount")
}

/// Creates an agent with `agentctl agents create` and returns (key, agent JSON).
pub async fn create_agent(database: &TestDatabase, flags: &[&str]) -> (String, Value) {
    let mut args = vec!["agents", "create"];
    args.extend_from_slice(flags);
    let created = agentctl(database, &args).await.json();
    let key = created["agent_key"].as_str().expect("agent_key").to_owned();
    (key, created["agent"].clone())
}
