//! `make run` as someone meets it the first time: `scripts/run.sh` itself, with the server `make
//! test` built (`AGENT_RUNTIME_BIN`) and a test database of its own, in a process group of its
//! own as a terminal would run it. Its banner names the console at `localhost` and the command
//! that invites its first operator, whose link opens the console; the console asked for at
//! `127.0.0.1` is sent there; a webhook receiver on this machine gets its deliveries, which a
//! server with production's settings refuses; Ctrl-C stops it with status 0 after its message.

use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use serde_json::{json, Value};
use test_support::{workspace_root, TestDatabase};

use crate::sms::{phone_agent, sandbox_sms};
use crate::support::fake_http::FakeServer;
use crate::support::harness::{binary, read, Server};

/// What the banner ends with, once the server answers.
const BANNER_END: &str = "Stop with Ctrl-C.";
/// Long enough for the script to start the server and the server to answer on a busy machine.
const START_DEADLINE: Duration = Duration::from_secs(60);
/// How long a delivery or a stop may take.
const DEADLINE: Duration = Duration::from_secs(30);

/// `make run`'s script, running.
struct MakeRun {
    child: tokio::process::Child,
    log: PathBuf,
    port: u16,
}

impl MakeRun {
    /// `scripts/run.sh` on `database`, once it printed its banner.
    async fn start(database: &TestDatabase) -> MakeRun {
        let log = std::env::temp_dir().join(format!(
            "agent-runtime-make-run-{}-{}.log",
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        ));
        let output = std::fs::File::create(&log).expect("log file");
        let port = free_port();
        let child = tokio::process::Command::new("bash")
            .arg(workspace_root().join("scripts/run.sh"))
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("DATABASE_URL", database.url())
            .env("BIND_ADDR", format!("127.0.0.1:{port}"))
            .env("AGENT_RUNTIME_BIN", binary("agent-runtime"))
            .stdin(Stdio::null())
            .stdout(output.try_clone().expect("log file"))
            .stderr(output)
            // A terminal's Ctrl-C reaches every process of the group: the script and its server.
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .expect("running scripts/run.sh");
        let mut run = MakeRun { child, log, port };
        let started = Instant::now();
        while !run.output().contains(BANNER_END) {
            if let Some(status) = run.child.try_wait().expect("status") {
                panic!("make run exited with {status}:\n{}", run.output());
            }
            assert!(
                started.elapsed() < START_DEADLINE,
                "make run printed no banner:\n{}",
                run.output()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        run
    }

    fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn url(&self, host: &str, path: &str) -> String {
        format!("http://{host}:{}{path}", self.port)
    }

    /// Sends `signal` to the script's process group, as a terminal does.
    fn signal_group(&self, signal: &str) {
        let group = self.child.id().expect("running").to_string();
        let sent = std::process::Command::new("kill")
            .args([&format!("-{signal}"), "--", &format!("-{group}")])
            .status()
            .expect("kill");
        assert!(sent.success());
    }

    async fn exit_status(&mut self) -> ExitStatus {
        tokio::time::timeout(DEADLINE, self.child.wait())
            .await
            .unwrap_or_else(|_| panic!("make run did not stop:\n{}", self.output()))
            .expect("status")
    }
}

impl Drop for MakeRun {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.signal_group("KILL");
        }
        if std::thread::panicking() {
            eprintln!("make run's output:\n{}", self.output());
        }
        let _ = std::fs::remove_file(&self.log);
    }
}

/// A port free now. `make run` binds the port it is given (it prints it for people to use), so
/// the test picks one rather than ask for port 0.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}

/// A client that shows redirects instead of following them.
fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("an HTTP client")
}

/// The status `GET url` is answered with, redirects not followed.
async fn status_of(url: &str) -> u16 {
    client()
        .get(url)
        .send()
        .await
        .unwrap_or_else(|error| panic!("{url}: {error}"))
        .status()
        .as_u16()
}

#[tokio::test]
async fn the_banner_names_the_console_at_localhost_and_its_first_command_which_works() {
    let database = TestDatabase::new().await;
    let run = MakeRun::start(&database).await;
    let banner = run.output();
    let console = run.url("localhost", "/console");
    assert!(
        banner.contains(&format!("The operator console is at {console} ")),
        "{banner}"
    );
    let invite = banner
        .lines()
        .map(str::trim)
        .find(|line| line.contains("scripts/agentctl operators invite"))
        .unwrap_or_else(|| panic!("no command for the console: {banner}"));
    // The banner's command as a person pastes it, with the database's URL where it says so.
    let command = invite.replace("<the same URL>", &format!("'{}'", database.url()));
    let output = tokio::process::Command::new("bash")
        .args(["-c", &command])
        .current_dir(workspace_root())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("AGENTCTL_BIN", binary("agentctl"))
        .output()
        .await
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{command}: {stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let invited: Value = serde_json::from_str(&stdout).expect("JSON");
    let enroll_url = invited["enroll_url"].as_str().expect("enroll_url");
    assert!(
        enroll_url.starts_with(&format!("{console}/enroll/")),
        "{enroll_url}"
    );
    assert_eq!(status_of(enroll_url).await, 200, "{enroll_url}");
}

#[tokio::test]
async fn the_console_asked_for_at_127_0_0_1_is_sent_to_localhost() {
    let database = TestDatabase::new().await;
    let run = MakeRun::start(&database).await;
    for path in ["/console", "/console/pending?agent=x"] {
        let answer = client()
            .get(run.url("127.0.0.1", path))
            .send()
            .await
            .expect("console");
        assert_eq!(answer.status().as_u16(), 307, "{path}");
        assert_eq!(
            answer
                .headers()
                .get("location")
                .and_then(|location| location.to_str().ok()),
            Some(run.url("localhost", path).as_str())
        );
    }
    // At localhost the console answers itself, and the API still answers at 127.0.0.1.
    assert_eq!(
        status_of(&run.url("localhost", "/console/sign-in")).await,
        200
    );
    assert_eq!(status_of(&run.url("127.0.0.1", "/healthz")).await, 200);
}

/// A webhook receiver on this machine: every body it was posted.
type Posted = Mutex<Vec<Bytes>>;

async fn receive(
    posted: Arc<Posted>,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let body = request.into_body().collect().await?.to_bytes();
    posted.lock().expect("posted").push(body);
    Ok(Response::new(Full::new(Bytes::new())))
}

/// `POST /v1/webhooks` for `url` with the agent's key at `base_url`.
async fn create_webhook(base_url: &str, key: &str, url: &str) -> (u16, Value) {
    let answer = reqwest::Client::new()
        .post(format!("{base_url}/v1/webhooks"))
        .bearer_auth(key)
        .json(&json!({"url": url, "types": ["sms.received"]}))
        .send()
        .await
        .expect("request");
    read(answer).await
}

#[tokio::test]
async fn the_sandbox_delivers_to_a_receiver_on_this_machine_and_production_refuses_it() {
    let (receiver, receiving) = FakeServer::start(Posted::default(), receive).await;
    let hook = format!("{receiver}/hook");
    let database = TestDatabase::new().await;
    let (key, number) = phone_agent(&database).await;

    let production = Server::start_on(&database, &[]).await;
    let (status, refused) = create_webhook(&production.base_url, &key, &hook).await;
    assert_eq!(status, 422, "{refused}");
    drop(production);

    let run = MakeRun::start(&database).await;
    let (status, created) = create_webhook(&run.url("127.0.0.1", ""), &key, &hook).await;
    assert_eq!(status, 201, "{created}");
    sandbox_sms(&database, &number, "Your code is 482913").await;
    let started = Instant::now();
    let delivered = loop {
        if let Some(body) = receiving.state().lock().expect("posted").first() {
            break serde_json::from_slice::<Value>(body).expect("an event");
        }
        assert!(started.elapsed() < DEADLINE, "nothing was delivered");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(delivered["type"], "sms.received", "{delivered}");
}

#[tokio::test]
async fn ctrl_c_stops_it_with_status_0_after_its_message() {
    let database = TestDatabase::new().await;
    let mut run = MakeRun::start(&database).await;
    run.signal_group("INT");
    let status = run.exit_status().await;
    let output = run.output();
    assert_eq!(
        (status.code(), status.signal()),
        (Some(0), None),
        "{output}"
    );
    assert!(
        output.trim_end().ends_with("run: the server stopped"),
        "{output}"
    );
    let refused = client().get(run.url("127.0.0.1", "/healthz")).send().await;
    assert!(refused.is_err(), "the server still answers");
}
