//! The events seen by clients that share no code with the server (issue 24, item 6): PyPI's
//! `httpx-sse` follows the stream across a restart, reconnecting by itself with `Last-Event-ID`,
//! and PyPI's `standardwebhooks`, the reference library, verifies every webhook attempt. Both run
//! from scripts/ with the interpreter of scripts/event-clients.sh (`EVENT_CLIENTS_PYTHON`).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use test_support::{workspace_root, TestDatabase};

use crate::email::post;
use crate::support::harness::{create_agent, Server};

/// One of the Python clients of scripts/, killed when dropped; what it printed, one JSON value a
/// line, is collected as it comes.
struct PythonClient {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Arc<Mutex<Vec<Value>>>,
    stderr: Arc<Mutex<String>>,
}

impl PythonClient {
    fn start(script: &str, args: &[&str]) -> PythonClient {
        let python = std::env::var("EVENT_CLIENTS_PYTHON").unwrap_or_else(|_| {
            panic!(
                "EVENT_CLIENTS_PYTHON is not set: run \
                 `export EVENT_CLIENTS_PYTHON=$(scripts/event-clients.sh)` (make test does) to \
                 install httpx-sse and standardwebhooks, the independent clients of these tests"
            )
        });
        let path = workspace_root().join("scripts").join(script);
        let mut child = Command::new(&python)
            .arg(&path)
            .args(args)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("PYTHONUNBUFFERED", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|error| panic!("starting {python} {}: {error}", path.display()));
        let lines = Arc::new(Mutex::new(Vec::new()));
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let collected = lines.clone();
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                let value = serde_json::from_str(&line).unwrap_or(Value::String(line));
                collected.lock().expect("lines").push(value);
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut errors = child.stderr.take().expect("stderr");
        let written = stderr.clone();
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = errors.read_to_string(&mut text);
            written.lock().expect("stderr").push_str(&text);
        });
        PythonClient {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr,
        }
    }

    fn lines(&self) -> Vec<Value> {
        self.lines.lock().expect("lines").clone()
    }

    /// The lines of this kind.
    fn of_kind(&self, kind: &str) -> Vec<Value> {
        self.lines()
            .into_iter()
            .filter(|line| line["kind"] == kind)
            .collect()
    }

    fn write_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin");
        writeln!(stdin, "{line}").expect("writing to the client");
        stdin.flush().expect("flushing");
    }

    /// What `found` makes of the lines once it makes something, waiting at most `deadline`.
    async fn wait_for<T>(
        &mut self,
        what: &str,
        deadline: Duration,
        found: impl Fn(&[Value]) -> Option<T>,
    ) -> T {
        let started = Instant::now();
        loop {
            if let Some(value) = found(&self.lines()) {
                return value;
            }
            let exited = self.child.try_wait().expect("client status");
            assert!(
                exited.is_none() && started.elapsed() < deadline,
                "{what} never came (client {}):\n{}\nstderr: {}",
                exited.map_or("running".to_owned(), |status| status.to_string()),
                self.lines()
                    .iter()
                    .map(Value::to_string)
                    .collect::<Vec<_>>()
                    .join("\n"),
                self.stderr.lock().expect("stderr")
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for PythonClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An SMS from +15550001111 to `to`, delivered at the sandbox provider by `agentctl`, which
/// writes to the database itself: one `sms.received` event, whether a server runs or not.
async fn sandbox_sms(database: &TestDatabase, to: &str) {
    crate::sms::sandbox_sms(database, to, "code 123456").await;
}

/// The agent's events as the feed lists them (at most 100).
async fn feed(server: &Server, key: &str) -> Vec<Value> {
    let (status, page) = server.get("/v1/events?limit=100", Some(key)).await;
    assert_eq!(status, 200, "{page}");
    page["items"].as_array().expect("items").clone()
}

#[tokio::test]
async fn httpx_sse_follows_the_stream_across_a_restart_with_no_gap_and_no_duplicate() {
    let database = TestDatabase::new().await;
    let mut first = Server::start_on(&database, &[]).await;
    let address = first.base_url.trim_start_matches("http://").to_owned();
    let (key, agent) = create_agent(&database, &["--phone"]).await;
    let number = agent["phone_number"]["number"]
        .as_str()
        .expect("number")
        .to_owned();
    let mut follower = PythonClient::start(
        "event_follower.py",
        &[
            "--url",
            &first.base_url,
            "--key",
            &key,
            "--count",
            "60",
            "--deadline",
            "170",
        ],
    );
    let seen = |count: usize| {
        move |lines: &[Value]| {
            let events = lines.iter().filter(|line| line["kind"] == "event").count();
            (events >= count).then_some(())
        }
    };
    let opened = |lines: &[Value]| {
        lines
            .iter()
            .any(|line| line["kind"] == "first")
            .then_some(())
    };
    follower
        .wait_for(
            "the stream's first message",
            Duration::from_secs(30),
            opened,
        )
        .await;

    for _ in 0..20 {
        sandbox_sms(&database, &number).await;
    }
    follower
        .wait_for("events 1 to 20", Duration::from_secs(30), seen(20))
        .await;

    // The server stops while the follower reads; 20 changes are made while none runs.
    let stopping = Instant::now();
    first.terminate();
    assert!(
        first.wait_for_exit(Duration::from_secs(40)).await,
        "server 1 did not exit cleanly:\n{}",
        first.logs()
    );
    let stopped_in = stopping.elapsed();
    let cut = |lines: &[Value]| {
        let kinds = ["disconnected", "connect_failed"];
        lines
            .iter()
            .any(|line| kinds.contains(&line["kind"].as_str().unwrap_or_default()))
            .then_some(())
    };
    follower
        .wait_for("the end of the first stream", Duration::from_secs(10), cut)
        .await;
    for _ in 0..20 {
        sandbox_sms(&database, &number).await;
    }
    // The follower finds no server at least once, and keeps trying.
    let first_refusal = |lines: &[Value]| {
        let kind = |line: &&Value| line["kind"] == "connect_failed";
        lines.iter().find(kind).cloned()
    };
    let refused = follower
        .wait_for(
            "a refused reconnection",
            Duration::from_secs(15),
            first_refusal,
        )
        .await;

    // Server 2, on the same database and the same address, which the follower keeps trying.
    let second = Server::start_on(&database, &[("BIND_ADDR", &address)]).await;
    assert_eq!(second.base_url, format!("http://{address}"));
    follower
        .wait_for("events 21 to 40", Duration::from_secs(30), seen(40))
        .await;
    for _ in 0..20 {
        sandbox_sms(&database, &number).await;
    }
    follower
        .wait_for("events 41 to 60", Duration::from_secs(30), seen(60))
        .await;
    follower
        .wait_for("the follower's end", Duration::from_secs(10), |lines| {
            lines
                .iter()
                .any(|line| line["kind"] == "done")
                .then_some(())
        })
        .await;

    let lines = follower.lines();
    let events = follower.of_kind("event");
    let ids: Vec<&str> = events
        .iter()
        .map(|event| event["id"].as_str().expect("id"))
        .collect();
    let expected: Vec<String> = (1..=60).map(|seq| seq.to_string()).collect();
    assert_eq!(
        ids, expected,
        "the follower's events, in the order it got them"
    );
    let kept = feed(&second, &key).await;
    assert_eq!(kept.len(), 60);
    for (event, item) in events.iter().zip(&kept) {
        assert_eq!(event["event"], "sms.received");
        assert_eq!(event["data"], *item, "the stream's data is the feed's item");
        assert_eq!(
            event["data"]["seq"].to_string(),
            event["id"].as_str().expect("id")
        );
    }

    // Every connection began with `retry: 3000`, alone; the follower waited that long.
    let connections: Vec<Value> = lines
        .iter()
        .filter(|line| line["kind"] == "connected")
        .cloned()
        .collect();
    let firsts = follower.of_kind("first");
    assert_eq!(firsts.len(), connections.len(), "{lines:#?}");
    for first in &firsts {
        assert_eq!(first["retry"], 3000, "{first}");
        assert_eq!(first["data"], "", "{first}");
        assert_eq!(first["id"], "", "{first}");
    }
    assert_eq!(connections[0]["last_event_id"], Value::Null);
    // The follower reconnected to server 2 once, resuming after the last event it had.
    assert_eq!(connections.len(), 2, "{lines:#?}");
    assert_eq!(connections[1]["status"], 200);
    assert_eq!(connections[1]["last_event_id"], "20");
    let on_second = events
        .iter()
        .filter(|event| event["attempt"] == connections[1]["attempt"])
        .count();
    assert_eq!(on_second, 40, "21 to 60 came on the second connection");
    // It waited the `retry:` the server sent before each reconnection.
    let at = |line: &Value| line["at"].as_f64().expect("at");
    let ended = lines
        .iter()
        .find(|line| line["kind"] == "disconnected")
        .expect("the first stream ended");
    let waited = at(&refused) - at(ended);
    assert!(waited >= 2.9, "reconnected {waited:.3} s after the end");
    let failed = follower.of_kind("connect_failed");
    let resumed = at(&connections[1]) - at(&failed[failed.len() - 1]);
    assert!(resumed >= 2.9, "reconnected {resumed:.3} s after a refusal");
    println!(
        "server 1 exited {:.2} s after SIGTERM; the follower retried {waited:.2} s after the \
         end of its stream ({}), was refused {} times, then resumed after Last-Event-ID 20",
        stopped_in.as_secs_f64(),
        ended["reason"],
        failed.len()
    );
}

/// How long after the last 2xx a further attempt could still come if the server were to repeat
/// a delivered event: the schedule's last offset (4 s) with its 10 % jitter, the 0.5 s poll and
/// a margin.
const QUIET_AFTER_DELIVERY: Duration = Duration::from_secs(6);

#[tokio::test]
async fn standardwebhooks_verifies_every_attempt_and_each_event_is_delivered_once() {
    let database = TestDatabase::new().await;
    let server = Server::start_on(
        &database,
        &[
            ("WEBHOOK_ALLOW_PRIVATE_TARGETS", "true"),
            ("WEBHOOK_RETRY_SCHEDULE", "0,2,4"),
        ],
    )
    .await;
    let (key, agent) = create_agent(&database, &["--phone"]).await;
    let number = agent["phone_number"]["number"]
        .as_str()
        .expect("number")
        .to_owned();
    let mut receiver = PythonClient::start("webhook_receiver.py", &["--answers", "500,200"]);
    let port = receiver
        .wait_for("the receiver's port", Duration::from_secs(30), |lines| {
            lines.iter().find(|line| line["kind"] == "listening")?["port"].as_u64()
        })
        .await;
    let created = post(
        &server,
        "/v1/webhooks",
        &key,
        &json!({"url": format!("http://127.0.0.1:{port}/hooks"), "description": "python"}),
        None,
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let endpoint = created.body["id"].as_str().expect("id").to_owned();
    receiver.write_line(created.body["secret"].as_str().expect("secret shown once"));

    // The first event alone, so the receiver's first answer, 500, is its.
    sandbox_sms(&database, &number).await;
    let requests_at_least = |count: usize| {
        move |lines: &[Value]| {
            let requests = lines
                .iter()
                .filter(|line| line["kind"] == "request")
                .count();
            (requests >= count).then_some(())
        }
    };
    receiver
        .wait_for(
            "the first attempt",
            Duration::from_secs(30),
            requests_at_least(1),
        )
        .await;
    for _ in 0..4 {
        sandbox_sms(&database, &number).await;
    }
    let delivered_all = |lines: &[Value]| {
        let delivered: std::collections::BTreeSet<&str> = lines
            .iter()
            .filter(|line| line["kind"] == "request" && line["status"] == 200)
            .filter_map(|line| line["webhook_id"].as_str())
            .collect();
        (delivered.len() >= 5).then_some(())
    };
    receiver
        .wait_for("a 2xx for 5 events", Duration::from_secs(60), delivered_all)
        .await;
    // Nothing comes after each event had its 2xx.
    tokio::time::sleep(QUIET_AFTER_DELIVERY).await;

    let events = feed(&server, &key).await;
    assert_eq!(events.len(), 5);
    let requests = receiver.of_kind("request");
    let mut by_id: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for request in &requests {
        assert_eq!(
            request["verified"], true,
            "standardwebhooks refused: {request}"
        );
        assert_eq!(request["method"], "POST");
        assert_eq!(request["path"], "/hooks");
        assert_eq!(request["content_type"], "application/json");
        let id = request["webhook_id"].as_str().expect("webhook-id");
        assert_eq!(request["body"]["id"], id, "webhook-id is the event's id");
        by_id.entry(id.to_owned()).or_default().push(request);
    }
    assert_eq!(requests.len(), 6, "{requests:#?}");
    assert_eq!(
        requests[0]["body"], events[0],
        "the first answer, 500, was event 1's"
    );
    for (seq, event) in events.iter().enumerate() {
        let id = event["id"].as_str().expect("id");
        let attempts = by_id.get(id).map(Vec::as_slice).unwrap_or_default();
        let statuses: Vec<u64> = attempts
            .iter()
            .map(|attempt| attempt["status"].as_u64().expect("status"))
            .collect();
        let expected = if seq == 0 { vec![500, 200] } else { vec![200] };
        assert_eq!(statuses, expected, "the attempts of event {}", seq + 1);
        for attempt in attempts {
            assert_eq!(
                attempt["body"], *event,
                "the body is the event as the feed has it"
            );
        }
    }

    // Event 1 was tried again at the schedule's 2 s (±10 %), with a signature of its own time.
    let retried = &by_id[events[0]["id"].as_str().expect("id")];
    let received = |attempt: &Value| attempt["received_at"].as_f64().expect("received_at");
    let timestamp = |attempt: &Value| -> i64 {
        attempt["webhook_timestamp"]
            .as_str()
            .expect("webhook-timestamp")
            .parse()
            .expect("unix seconds")
    };
    let spacing = received(retried[1]) - received(retried[0]);
    assert!(
        spacing >= 1.7,
        "the retry came {spacing:.3} s after the first try"
    );
    assert!(timestamp(retried[1]) > timestamp(retried[0]));
    for request in &requests {
        let lag = received(request) - timestamp(request) as f64;
        assert!(
            (-1.0..5.0).contains(&lag),
            "webhook-timestamp is this attempt's time: {request}"
        );
    }

    // The server's own log of the attempts says the same.
    let (status, log) = server
        .get(
            &format!("/v1/webhooks/{endpoint}/deliveries?limit=100"),
            Some(&key),
        )
        .await;
    assert_eq!(status, 200, "{log}");
    let logged = log["items"].as_array().expect("items");
    assert_eq!(logged.len(), 6, "{log}");
    let first_event: Vec<(u64, u64)> = logged
        .iter()
        .filter(|attempt| attempt["event_id"] == events[0]["id"])
        .map(|attempt| {
            (
                attempt["attempt"].as_u64().expect("attempt"),
                attempt["status_code"].as_u64().expect("status_code"),
            )
        })
        .collect();
    assert_eq!(first_event, [(2, 200), (1, 500)], "newest first: {log}");

    let start = received(&requests[0]);
    println!(
        "webhook timeline (s after the first attempt): {}",
        requests
            .iter()
            .map(|request| format!(
                "{:.3} seq {} → {}",
                received(request) - start,
                request["body"]["seq"],
                request["status"]
            ))
            .collect::<Vec<_>>()
            .join(", ")
    );
}
