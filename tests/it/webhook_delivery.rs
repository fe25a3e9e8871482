//! Webhook delivery, black-box: the real server posts events to a receiver of the test's own,
//! which answers each request as the test scripts it and records what arrived and when.
//! Signatures are checked with `standardwebhooks`, an implementation of the scheme not ours.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use futures_util::future::join_all;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::HeaderValue;
use hyper::{HeaderMap, Request, Response};
use serde_json::{json, Value};
use test_support::TestDatabase;
use tokio::net::TcpListener;

use crate::sms::phone_agent;
use crate::support::fake_http::FakeServer;
use crate::support::harness::Server;
use crate::wallet::{send_amount, wallet_agent, UNLIMITED_SENDS};

/// How long a test waits for what should come.
const DEADLINE: Duration = Duration::from_secs(30);
/// How long a test watches for what should not come: several of the server's 0.5 s polls.
const QUIET: Duration = Duration::from_secs(3);

/// The types of an endpoint that hears only of new transfer intents.
const CREATED: &[&str] = &["transfer_intent.created"];

/// How the receiver answers one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reply {
    Status(u16),
    /// The status with `Retry-After: <seconds>`.
    RetryAfter(u16, u64),
    /// Reads the request and never answers.
    Hang,
    /// Reads the request and closes the connection without an answer, as a receiver that is down.
    Close,
    /// The status with an error page that tells of the receiver's insides.
    Page(u16),
}

/// What a receiver's error page gives away, which no agent's deliveries log may show.
const ERROR_PAGE: &str =
    "Traceback (most recent call last): File \"/srv/internal/hooks.py\", line 7";

#[derive(Debug, Clone)]
struct Received {
    headers: HeaderMap,
    body: Bytes,
    /// When the request's head arrived.
    at: Instant,
    reply: Reply,
}

impl Received {
    fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_else(|| panic!("no {name} header: {:?}", self.headers))
    }

    fn webhook_id(&self) -> &str {
        self.header("webhook-id")
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }

    fn delivered(&self) -> bool {
        matches!(self.reply, Reply::Status(status) if (200..300).contains(&status))
    }

    /// Whether `signature`, one of the header's, verifies with `secret` by `standardwebhooks`.
    fn verifies(&self, signature: &str, secret: &str) -> bool {
        let mut headers = self.headers.clone();
        headers.insert(
            "webhook-signature",
            HeaderValue::from_str(signature).expect("ASCII"),
        );
        standardwebhooks::Webhook::new(secret)
            .expect("a secret")
            .verify(&self.body, &headers)
            .is_ok()
    }
}

/// What the receiver answers: `script` in order, then `then` to every request.
struct Script {
    script: VecDeque<Reply>,
    then: Reply,
}

struct Receiving {
    script: Mutex<Script>,
    received: Mutex<Vec<Received>>,
}

/// The test's webhook receiver.
struct Receiver {
    url: String,
    server: FakeServer<Receiving>,
}

impl Receiver {
    async fn start(script: &[Reply], then: Reply) -> Self {
        let state = Receiving {
            script: Mutex::new(Script {
                script: script.iter().copied().collect(),
                then,
            }),
            received: Mutex::new(Vec::new()),
        };
        let (base, server) = FakeServer::start(state, answer).await;
        Self {
            url: format!("{base}/hook"),
            server,
        }
    }

    /// Answers every request from now on with `reply`.
    fn answer_all(&self, reply: Reply) {
        let mut script = self.server.state().script.lock().expect("script");
        script.script.clear();
        script.then = reply;
    }

    fn received(&self) -> Vec<Received> {
        self.server
            .state()
            .received
            .lock()
            .expect("received")
            .clone()
    }

    fn delivered(&self) -> Vec<Received> {
        self.received()
            .into_iter()
            .filter(Received::delivered)
            .collect()
    }

    /// What arrived once `enough` holds for it, waiting at most `deadline`.
    async fn wait_until(
        &self,
        deadline: Duration,
        enough: impl Fn(&[Received]) -> bool,
    ) -> Vec<Received> {
        let started = Instant::now();
        loop {
            let received = self.received();
            if enough(&received) {
                return received;
            }
            assert!(
                started.elapsed() < deadline,
                "the receiver got {} requests: {}",
                received.len(),
                account(&received)
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    async fn wait_for_requests(&self, count: usize) -> Vec<Received> {
        self.wait_until(DEADLINE, |received| received.len() >= count)
            .await
    }

    /// Waits until requests for `count` different events have come.
    async fn wait_for_ids(&self, count: usize) {
        self.wait_until(DEADLINE, |received| {
            let ids: HashSet<&str> = received.iter().map(Received::webhook_id).collect();
            ids.len() >= count
        })
        .await;
    }

    async fn wait_for_deliveries(&self, count: usize, deadline: Duration) -> Vec<Received> {
        self.wait_until(deadline, |received| {
            received.iter().filter(|r| r.delivered()).count() >= count
        })
        .await
        .into_iter()
        .filter(Received::delivered)
        .collect()
    }

    /// Asserts that no request beyond the `count` already seen arrives for `QUIET`.
    async fn assert_quiet_at(&self, count: usize) {
        tokio::time::sleep(QUIET).await;
        let received = self.received();
        assert_eq!(
            received.len(),
            count,
            "more requests came: {}",
            account(&received)
        );
    }
}

/// Each request's event, answer and arrival after the first, for a failure's message.
fn account(received: &[Received]) -> String {
    let lines: Vec<String> = received
        .iter()
        .map(|r| {
            format!(
                "{} {:?} at {:.2} s",
                r.webhook_id(),
                r.reply,
                gap(&received[0], r)
            )
        })
        .collect();
    lines.join("; ")
}

async fn answer(
    state: Arc<Receiving>,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, std::io::Error> {
    let at = Instant::now();
    let (parts, body) = request.into_parts();
    let body = body
        .collect()
        .await
        .map_err(std::io::Error::other)?
        .to_bytes();
    let reply = {
        let mut script = state.script.lock().expect("script");
        let then = script.then;
        script.script.pop_front().unwrap_or(then)
    };
    state.received.lock().expect("received").push(Received {
        headers: parts.headers,
        body,
        at,
        reply,
    });
    let status = match reply {
        Reply::Status(status) => status,
        Reply::Page(status) => {
            return Ok(Response::builder()
                .status(status)
                .body(Full::new(Bytes::from_static(ERROR_PAGE.as_bytes())))
                .expect("a response"));
        }
        Reply::RetryAfter(status, seconds) => {
            return Ok(Response::builder()
                .status(status)
                .header("retry-after", seconds.to_string())
                .body(Full::new(Bytes::new()))
                .expect("a response"));
        }
        Reply::Hang => {
            std::future::pending::<()>().await;
            unreachable!("pending never ends")
        }
        Reply::Close => return Err(std::io::Error::other("the receiver is down")),
    };
    Ok(Response::builder()
        .status(status)
        .body(Full::new(Bytes::new()))
        .expect("a response"))
}

/// A server that delivers to local receivers, at the attempt times of `schedule`.
async fn hook_server(database: &TestDatabase, schedule: &str, extra: &[(&str, &str)]) -> Server {
    let mut settings = vec![
        ("WEBHOOK_ALLOW_PRIVATE_TARGETS", "true"),
        ("WEBHOOK_RETRY_SCHEDULE", schedule),
    ];
    settings.extend_from_slice(extra);
    Server::start_on(database, &settings).await
}

/// A request with the agent's key; an empty answer reads as `null`.
async fn call(
    server: &Server,
    method: reqwest::Method,
    path: &str,
    key: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut request = server
        .client
        .request(method, server.url(path))
        .bearer_auth(key);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.expect("request");
    let status = response.status().as_u16();
    let text = response.text().await.expect("body");
    let json = match text.is_empty() {
        true => Value::Null,
        false => serde_json::from_str(&text)
            .unwrap_or_else(|_| panic!("status {status}, body is not JSON: {text:?}")),
    };
    (status, json)
}

/// A webhook endpoint of the agent: its id and secret.
struct Endpoint {
    id: String,
    secret: String,
}

impl Endpoint {
    async fn create(server: &Server, key: &str, url: &str, types: Option<&[&str]>) -> Self {
        let mut body = json!({"url": url});
        if let Some(types) = types {
            body["types"] = json!(types);
        }
        let (status, created) = call(
            server,
            reqwest::Method::POST,
            "/v1/webhooks",
            key,
            Some(body),
        )
        .await;
        assert_eq!(status, 201, "{created}");
        let secret = created["secret"].as_str().expect("secret").to_owned();
        assert!(secret.starts_with("whsec_"), "{secret}");
        Self {
            id: created["id"].as_str().expect("id").to_owned(),
            secret,
        }
    }

    fn path(&self, rest: &str) -> String {
        format!("/v1/webhooks/{}{rest}", self.id)
    }

    async fn show(&self, server: &Server, key: &str) -> Value {
        let (status, shown) = server.get(&self.path(""), Some(key)).await;
        assert_eq!(status, 200, "{shown}");
        shown
    }

    /// The endpoint once it is disabled.
    async fn wait_until_disabled(&self, server: &Server, key: &str) -> Value {
        let started = Instant::now();
        loop {
            let shown = self.show(server, key).await;
            if shown["enabled"] == false {
                return shown;
            }
            assert!(started.elapsed() < DEADLINE, "still enabled: {shown}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The logged attempts, newest first.
    async fn attempts(&self, server: &Server, key: &str) -> Vec<Value> {
        let (status, page) = server
            .get(&self.path("/deliveries?limit=100"), Some(key))
            .await;
        assert_eq!(status, 200, "{page}");
        page["items"].as_array().expect("items").clone()
    }

    /// The logged attempts once there are `count`, newest first.
    async fn wait_for_attempts(&self, server: &Server, key: &str, count: usize) -> Vec<Value> {
        let started = Instant::now();
        loop {
            let attempts = self.attempts(server, key).await;
            if attempts.len() >= count {
                return attempts;
            }
            assert!(
                started.elapsed() < DEADLINE,
                "{} attempts logged: {attempts:?}",
                attempts.len()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// An SMS with a code to the agent's number, through the sandbox provider.
async fn send_sms(database: &TestDatabase, number: &str) {
    crate::sms::sandbox_sms(database, number, "code 123456").await;
}

/// The agent's whole feed, oldest first.
async fn feed(server: &Server, key: &str) -> Vec<Value> {
    let mut items = Vec::new();
    let mut after = 0;
    loop {
        let (status, page) = server
            .get(&format!("/v1/events?limit=100&after={after}"), Some(key))
            .await;
        assert_eq!(status, 200, "{page}");
        items.extend(page["items"].as_array().expect("items").iter().cloned());
        match page["next_after"].as_u64() {
            Some(next) => after = next,
            None => return items,
        }
    }
}

/// The ids of the agent's `transfer_intent.created` events.
async fn created_intents(server: &Server, key: &str) -> HashSet<String> {
    feed(server, key)
        .await
        .iter()
        .filter(|event| event["type"] == "transfer_intent.created")
        .map(|event| event["id"].as_str().expect("id").to_owned())
        .collect()
}

/// Seconds between two arrivals.
fn gap(earlier: &Received, later: &Received) -> f64 {
    later.at.duration_since(earlier.at).as_secs_f64()
}

/// Each webhook-id with how many times it was delivered.
fn deliveries_by_id(received: &[Received]) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for request in received.iter().filter(|r| r.delivered()) {
        *counts.entry(request.webhook_id().to_owned()).or_insert(0) += 1;
    }
    counts
}

/// Asserts that the requests came at `schedule`'s offsets after the first: never before a step's
/// 10 % spread, and no later than the spread, the server's 0.5 s poll and some load allow.
fn assert_at_offsets(received: &[Received], schedule: &[f64]) -> Vec<f64> {
    let offsets: Vec<f64> = received.iter().map(|r| gap(&received[0], r)).collect();
    assert_eq!(offsets.len(), schedule.len(), "{offsets:?}");
    for k in 1..schedule.len() {
        let spread = 0.1 * (schedule[k] - schedule[k - 1]);
        let (earliest, latest) = (schedule[k] - spread - 0.05, schedule[k] + spread + 2.5);
        assert!(
            (earliest..latest).contains(&offsets[k]),
            "attempt {} came at {:.2} s, due at {} s: {offsets:.2?}",
            k + 1,
            offsets[k],
            schedule[k]
        );
    }
    offsets
}

fn statuses(attempts: &[Value]) -> Vec<Value> {
    attempts.iter().map(|a| a["status_code"].clone()).collect()
}

fn numbers(attempts: &[Value]) -> Vec<u64> {
    attempts
        .iter()
        .map(|a| a["attempt"].as_u64().expect("attempt"))
        .collect()
}

#[tokio::test]
async fn a_delivery_is_signed_carries_the_feeds_event_and_only_types_the_endpoint_wants() {
    let database = TestDatabase::new().await;
    let server = hook_server(&database, "0,1", &[]).await;
    let (key, number) = phone_agent(&database).await;
    let all = Receiver::start(&[], Reply::Status(200)).await;
    let transfers = Receiver::start(&[], Reply::Status(200)).await;
    let endpoint = Endpoint::create(&server, &key, &all.url, None).await;
    let other = Endpoint::create(&server, &key, &transfers.url, Some(CREATED)).await;

    send_sms(&database, &number).await;
    let received = all.wait_for_requests(1).await;
    let request = &received[0];
    let events = feed(&server, &key).await;
    assert_eq!(events.len(), 1, "{events:?}");
    let event = &events[0];
    assert_eq!(event["type"], "sms.received", "{event}");
    assert_eq!(request.webhook_id(), event["id"].as_str().expect("id"));
    assert_eq!(request.json(), *event, "the body is the feed's item");
    assert_eq!(request.header("content-type"), "application/json");
    let timestamp: u64 = request
        .header("webhook-timestamp")
        .parse()
        .expect("unix seconds");
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs();
    assert!(now.abs_diff(timestamp) < 60, "{timestamp} against {now}");
    let signature = request.header("webhook-signature");
    assert!(signature.starts_with("v1,"), "{signature}");
    assert!(!signature.contains(' '), "one secret, one signature");
    assert!(request.verifies(signature, &endpoint.secret));
    assert!(
        !request.verifies(signature, &other.secret),
        "another endpoint's secret does not verify it"
    );
    let attempts = endpoint.wait_for_attempts(&server, &key, 1).await;
    assert_eq!(attempts[0]["status_code"], 200, "{attempts:?}");
    assert_eq!(attempts[0]["event_id"], event["id"]);

    // The transfers-only endpoint was queued nothing: it hears of no SMS.
    all.assert_quiet_at(1).await;
    assert!(transfers.received().is_empty());
    assert!(other.attempts(&server, &key).await.is_empty());
}

#[tokio::test]
async fn failed_attempts_are_retried_at_the_schedules_times_with_the_same_id() {
    let database = TestDatabase::new().await;
    let server = hook_server(&database, "0,2,4", &[]).await;
    let (key, number) = phone_agent(&database).await;
    let receiver = Receiver::start(
        &[Reply::Status(500), Reply::Status(500)],
        Reply::Status(200),
    )
    .await;
    let endpoint = Endpoint::create(&server, &key, &receiver.url, None).await;

    send_sms(&database, &number).await;
    let received = receiver.wait_for_requests(3).await;
    let event_id = feed(&server, &key).await[0]["id"].clone();
    for request in &received {
        assert_eq!(request.webhook_id(), event_id.as_str().expect("id"));
    }
    let gaps = [
        gap(&received[0], &received[1]),
        gap(&received[1], &received[2]),
    ];
    let offsets = assert_at_offsets(&received, &[0.0, 2.0, 4.0]);
    println!("retry timeline: arrivals at {offsets:.2?} s after the first, gaps {gaps:.2?} s");
    // Attempts are due at 2 s and 4 s after the first try, each step spread ±10 % (so ±0.2 s),
    // and start up to a 0.5 s poll late. The third is timed from the first try, not from the
    // second, so the second gap may be as short as 2 - 0.2 - 0.2 - 0.5 s.
    for gap in gaps {
        assert!((1.1..4.0).contains(&gap), "{gaps:?}");
    }

    let attempts = endpoint.wait_for_attempts(&server, &key, 3).await;
    assert_eq!(statuses(&attempts), [json!(200), json!(500), json!(500)]);
    assert_eq!(numbers(&attempts), [3, 2, 1]);
    for attempt in &attempts {
        assert_eq!(attempt["event_id"], event_id, "{attempt}");
    }
    assert!(attempts[0]["error"].is_null(), "{attempts:?}");
    assert!(attempts[1]["error"].is_string(), "{attempts:?}");
    receiver.assert_quiet_at(3).await;
    assert_eq!(endpoint.attempts(&server, &key).await.len(), 3);
}

#[tokio::test]
async fn retries_are_timed_from_the_first_try_even_when_it_comes_late() {
    let database = TestDatabase::new().await;
    // This instance serves the API and delivers nothing: the delivery waits in the queue.
    let api = hook_server(&database, "0,2,4", &[("WEBHOOK_DELIVERY_ENABLED", "false")]).await;
    let (key, number) = phone_agent(&database).await;
    let receiver = Receiver::start(&[], Reply::Status(500)).await;
    Endpoint::create(&api, &key, &receiver.url, None).await;
    send_sms(&database, &number).await;
    // The first try comes 4 s after the event, past the whole schedule, when an instance that
    // delivers starts (as after an outage, or behind a backlog).
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert!(receiver.received().is_empty());
    let _deliverer = hook_server(&database, "0,2,4", &[]).await;
    let received = receiver.wait_for_requests(3).await;
    let offsets: Vec<f64> = received.iter().map(|r| gap(&received[0], r)).collect();
    println!("a first try 4 s late, then attempts at {offsets:.2?} s after it");
    assert_at_offsets(&received, &[0.0, 2.0, 4.0]);
}

#[tokio::test]
async fn a_429s_retry_after_is_honoured_over_an_earlier_scheduled_attempt() {
    let database = TestDatabase::new().await;
    let server = hook_server(&database, "0,1,2", &[]).await;
    let (key, number) = phone_agent(&database).await;
    let receiver = Receiver::start(&[Reply::RetryAfter(429, 4)], Reply::Status(200)).await;
    let endpoint = Endpoint::create(&server, &key, &receiver.url, None).await;

    send_sms(&database, &number).await;
    let received = receiver.wait_for_requests(2).await;
    let waited = gap(&received[0], &received[1]);
    println!("after a 429 with Retry-After: 4 the next attempt came {waited:.2} s later");
    assert!(waited >= 3.6, "{waited}");
    assert_eq!(received[0].webhook_id(), received[1].webhook_id());
    let attempts = endpoint.wait_for_attempts(&server, &key, 2).await;
    assert_eq!(statuses(&attempts), [json!(200), json!(429)]);
    receiver.assert_quiet_at(2).await;
}

#[tokio::test]
async fn a_410_disables_the_endpoint_at_once() {
    let database = TestDatabase::new().await;
    let server = hook_server(&database, "0,1,2", &[]).await;
    let (key, number) = phone_agent(&database).await;
    let receiver = Receiver::start(&[], Reply::Status(410)).await;
    let endpoint = Endpoint::create(&server, &key, &receiver.url, None).await;

    send_sms(&database, &number).await;
    receiver.wait_for_requests(1).await;
    let attempts = endpoint.wait_for_attempts(&server, &key, 1).await;
    assert_eq!(statuses(&attempts), [json!(410)]);
    // The attempt is logged before the endpoint is disabled, in a transaction of its own.
    let shown = endpoint.wait_until_disabled(&server, &key).await;
    assert!(
        shown["disabled_reason"]
            .as_str()
            .is_some_and(|reason| !reason.is_empty()),
        "{shown}"
    );
    println!("disabled_reason after a 410: {}", shown["disabled_reason"]);

    // A later event is not sent to it, and the first is not retried.
    send_sms(&database, &number).await;
    assert_eq!(feed(&server, &key).await.len(), 2);
    receiver.assert_quiet_at(1).await;
    assert_eq!(endpoint.attempts(&server, &key).await.len(), 1);
}

#[tokio::test]
async fn an_attempt_that_times_out_is_logged_and_retried() {
    let database = TestDatabase::new().await;
    let server = hook_server(&database, "0,1", &[("WEBHOOK_TIMEOUT_MS", "500")]).await;
    let (key, number) = phone_agent(&database).await;
    let receiver = Receiver::start(&[Reply::Hang], Reply::Status(200)).await;
    let endpoint = Endpoint::create(&server, &key, &receiver.url, None).await;

    send_sms(&database, &number).await;
    let delivered = receiver.wait_for_deliveries(1, DEADLINE).await;
    let received = receiver.received();
    assert_eq!(received[0].webhook_id(), delivered[0].webhook_id());
    let offsets = assert_at_offsets(&received, &[0.0, 1.0]);
    println!("a hung attempt then a delivery, at {offsets:.2?} s after the first");
    let attempts = endpoint.wait_for_attempts(&server, &key, 2).await;
    assert_eq!(statuses(&attempts), [json!(200), Value::Null]);
    let error = attempts[1]["error"].as_str().expect("an error");
    println!("the timed-out attempt: {}", attempts[1]);
    assert!(error.contains("timed out"), "{error}");
    let duration = attempts[1]["duration_ms"].as_u64().expect("duration_ms");
    assert!((450..5_000).contains(&duration), "{duration}");
}

#[tokio::test]
async fn a_receiver_that_hangs_holds_back_no_other_delivery() {
    let database = TestDatabase::new().await;
    // Far longer than the deadline below: a delivery that waited for the hung one would miss it.
    let server = hook_server(&database, "0,2,4", &[("WEBHOOK_TIMEOUT_MS", "120000")]).await;
    let (slow_key, slow_number) = phone_agent(&database).await;
    let (key, number) = phone_agent(&database).await;
    let hung = Receiver::start(&[], Reply::Hang).await;
    let failing = Receiver::start(&[], Reply::Status(500)).await;
    let prompt = Receiver::start(&[], Reply::Status(200)).await;
    Endpoint::create(&server, &slow_key, &hung.url, None).await;
    Endpoint::create(&server, &slow_key, &failing.url, None).await;
    Endpoint::create(&server, &key, &prompt.url, None).await;

    send_sms(&database, &slow_number).await;
    hung.wait_for_requests(1).await;
    send_sms(&database, &number).await;
    let deadline = Duration::from_secs(10);
    prompt.wait_for_deliveries(1, deadline).await;
    // The failing endpoint's retries keep their times beside the hung attempt.
    let retried = failing
        .wait_until(deadline, |received| received.len() >= 3)
        .await;
    let offsets = assert_at_offsets(&retried, &[0.0, 2.0, 4.0]);
    println!("beside a hung receiver: retries at {offsets:.2?} s after the first");
    assert_eq!(hung.received().len(), 1, "the hung attempt is still open");
}

#[tokio::test]
async fn a_receiver_down_for_a_while_gets_the_delivery_once_it_is_up() {
    let database = TestDatabase::new().await;
    // Times to the millisecond, as the schedule may be given.
    let server = hook_server(&database, "0,1.5,3,4.5,6", &[]).await;
    let (key, number) = phone_agent(&database).await;
    let receiver = Receiver::start(&[], Reply::Close).await;
    let endpoint = Endpoint::create(&server, &key, &receiver.url, None).await;

    send_sms(&database, &number).await;
    // Up once the attempt due at 3 s has failed: the next, due at 4.5 s, gets through.
    receiver.wait_for_requests(3).await;
    receiver.answer_all(Reply::Status(200));
    let delivered = receiver.wait_for_deliveries(1, DEADLINE).await;
    let received = receiver.received();
    let offsets = assert_at_offsets(&received, &[0.0, 1.5, 3.0, 4.5]);
    println!("down then up after the third: requests at {offsets:.2?} s after the first");
    assert!(received
        .iter()
        .all(|r| r.webhook_id() == delivered[0].webhook_id()));

    let attempts = endpoint.wait_for_attempts(&server, &key, 4).await;
    assert_eq!(
        statuses(&attempts),
        [json!(200), Value::Null, Value::Null, Value::Null]
    );
    assert_eq!(numbers(&attempts), [4, 3, 2, 1]);
    for attempt in &attempts[1..] {
        assert!(attempt["error"].is_string(), "{attempt}");
    }
    println!("an attempt at a receiver that was down: {}", attempts[1]);
    receiver.assert_quiet_at(4).await;
    assert_eq!(receiver.delivered().len(), 1);
}

#[tokio::test]
async fn a_failed_delivery_stops_after_the_last_attempt_and_a_replay_sends_the_same_id() {
    let database = TestDatabase::new().await;
    let server = hook_server(&database, "0,1", &[]).await;
    let (key, number) = phone_agent(&database).await;
    let receiver = Receiver::start(&[], Reply::Status(500)).await;
    let endpoint = Endpoint::create(&server, &key, &receiver.url, None).await;

    send_sms(&database, &number).await;
    let attempts = endpoint.wait_for_attempts(&server, &key, 2).await;
    assert_eq!(statuses(&attempts), [json!(500), json!(500)]);
    let received = receiver.received();
    assert_eq!(received[0].webhook_id(), received[1].webhook_id());
    let offsets = assert_at_offsets(&received, &[0.0, 1.0]);
    println!("two failed attempts at {offsets:.2?} s after the first");
    receiver.assert_quiet_at(2).await;
    assert_eq!(endpoint.attempts(&server, &key).await.len(), 2);

    receiver.answer_all(Reply::Status(200));
    let (status, replayed) = call(
        &server,
        reqwest::Method::POST,
        &endpoint.path("/replay"),
        &key,
        Some(json!({"after": 0})),
    )
    .await;
    assert_eq!(status, 202, "{replayed}");
    println!("replay answered {replayed}");
    let delivered = receiver.wait_for_deliveries(1, DEADLINE).await;
    let received = receiver.received();
    assert_eq!(received.len(), 3);
    assert_eq!(delivered[0].webhook_id(), received[0].webhook_id());
    assert_eq!(
        delivered[0].webhook_id(),
        feed(&server, &key).await[0]["id"].as_str().expect("id")
    );
    let attempts = endpoint.wait_for_attempts(&server, &key, 3).await;
    assert_eq!(statuses(&attempts)[0], json!(200), "{attempts:?}");
    tokio::time::sleep(QUIET).await;
    let received = receiver.received();
    assert_eq!(
        received.len(),
        3,
        "more requests came: {}\nattempts: {:#?}\nlogs:\n{}",
        account(&received),
        endpoint.attempts(&server, &key).await,
        server.logs()
    );
}

#[tokio::test]
async fn after_a_rotation_each_delivery_is_signed_by_the_old_and_the_new_secret() {
    let database = TestDatabase::new().await;
    let server = hook_server(&database, "0,1", &[]).await;
    let (key, number) = phone_agent(&database).await;
    let receiver = Receiver::start(&[], Reply::Status(200)).await;
    let endpoint = Endpoint::create(&server, &key, &receiver.url, None).await;
    let (status, rotated) = call(
        &server,
        reqwest::Method::POST,
        &endpoint.path("/rotate-secret"),
        &key,
        None,
    )
    .await;
    assert_eq!(status, 200, "{rotated}");
    let new = rotated["secret"].as_str().expect("secret");
    assert_ne!(new, endpoint.secret);

    send_sms(&database, &number).await;
    let request = receiver.wait_for_requests(1).await.remove(0);
    let header = request.header("webhook-signature");
    let signatures: Vec<&str> = header.split(' ').collect();
    assert_eq!(signatures.len(), 2, "{header}");
    assert!(signatures.iter().all(|s| s.starts_with("v1,")), "{header}");
    for secret in [endpoint.secret.as_str(), new] {
        let verifying = signatures
            .iter()
            .filter(|signature| request.verifies(signature, secret))
            .count();
        assert_eq!(verifying, 1, "{header} by {secret}");
    }
}

#[tokio::test]
async fn however_often_the_secret_is_rotated_the_newest_and_the_one_before_sign() {
    let database = TestDatabase::new().await;
    let server = hook_server(&database, "0,1", &[]).await;
    let (key, number) = phone_agent(&database).await;
    let receiver = Receiver::start(&[], Reply::Status(200)).await;
    let endpoint = Endpoint::create(&server, &key, &receiver.url, None).await;
    let mut secrets = vec![endpoint.secret.clone()];
    for _ in 0..6 {
        let (status, rotated) = call(
            &server,
            reqwest::Method::POST,
            &endpoint.path("/rotate-secret"),
            &key,
            None,
        )
        .await;
        assert_eq!(status, 200, "{rotated}");
        secrets.push(rotated["secret"].as_str().expect("secret").to_owned());
    }

    send_sms(&database, &number).await;
    let request = receiver.wait_for_requests(1).await.remove(0);
    let header = request.header("webhook-signature");
    let signatures: Vec<&str> = header.split(' ').collect();
    println!("after 6 rotations: {} signatures", signatures.len());
    assert_eq!(signatures.len(), 2, "{header}");
    let signing: Vec<usize> = secrets
        .iter()
        .enumerate()
        .filter(|(_, secret)| signatures.iter().any(|s| request.verifies(s, secret)))
        .map(|(position, _)| position)
        .collect();
    assert_eq!(signing, [5, 6], "the previous secret and the newest");
}

#[tokio::test]
async fn a_replay_takes_a_whole_position_and_is_rate_limited_per_endpoint() {
    let database = TestDatabase::new().await;
    let server = hook_server(&database, "0,1", &[]).await;
    let (key, _) = phone_agent(&database).await;
    let receiver = Receiver::start(&[], Reply::Status(200)).await;
    let endpoint = Endpoint::create(&server, &key, &receiver.url, None).await;
    let other = Endpoint::create(&server, &key, &receiver.url, None).await;
    let replay = |endpoint: &Endpoint, body: Value| {
        let path = endpoint.path("/replay");
        let server = &server;
        let key = &key;
        async move { call(server, reqwest::Method::POST, &path, key, Some(body)).await }
    };

    for (after, kind) in [
        (json!(1000.0), "int_type"),
        (json!(0.5), "int_type"),
        (json!("3"), "int_type"),
        (json!(-1), "greater_than_equal"),
    ] {
        let (status, refused) = replay(&endpoint, json!({ "after": after })).await;
        assert_eq!(status, 422, "{after}: {refused}");
        assert_eq!(refused["detail"][0]["type"], kind, "{after}: {refused}");
        assert_eq!(refused["detail"][0]["loc"], json!(["body", "after"]));
    }

    let mut answered = Vec::new();
    for _ in 0..4 {
        answered.push(replay(&endpoint, json!({"after": 0})).await.0);
    }
    assert_eq!(answered, [202, 202, 202, 429]);
    let limited = server
        .client
        .post(server.url(&endpoint.path("/replay")))
        .bearer_auth(&key)
        .json(&json!({"after": 0}))
        .send()
        .await
        .expect("request");
    assert_eq!(limited.status().as_u16(), 429);
    let retry_after: u64 = limited.headers()["retry-after"]
        .to_str()
        .expect("ASCII")
        .parse()
        .expect("seconds");
    assert!((1..=60).contains(&retry_after), "{retry_after}");
    println!("a fifth replay in a row: 429, Retry-After: {retry_after}");
    // Each endpoint has its own allowance.
    assert_eq!(replay(&other, json!({"after": 0})).await.0, 202);
}

#[tokio::test]
async fn a_private_target_is_refused_at_creation_or_at_the_attempt_without_a_connection() {
    let database = TestDatabase::new().await;
    let server = Server::start_on(&database, &[("WEBHOOK_RETRY_SCHEDULE", "0,60")]).await;
    let (key, number) = phone_agent(&database).await;
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let connections = Arc::new(AtomicUsize::new(0));
    let counting = connections.clone();
    let accepting = tokio::spawn(async move {
        while listener.accept().await.is_ok() {
            counting.fetch_add(1, Ordering::SeqCst);
        }
    });

    let (status, refused) = call(
        &server,
        reqwest::Method::POST,
        "/v1/webhooks",
        &key,
        Some(json!({"url": format!("http://127.0.0.1:{port}/")})),
    )
    .await;
    assert_eq!(status, 422, "{refused}");
    println!("http to 127.0.0.1: {refused}");
    let endpoint =
        Endpoint::create(&server, &key, &format!("https://localhost:{port}/"), None).await;

    send_sms(&database, &number).await;
    let attempts = endpoint.wait_for_attempts(&server, &key, 1).await;
    println!("the refused attempt: {}", attempts[0]);
    assert!(attempts[0]["status_code"].is_null(), "{attempts:?}");
    // The agent reads why in fixed words; what the name resolved to is the server's log's.
    assert_eq!(attempts[0]["error"], "refused: not publicly routable");
    let logs = server.logs();
    assert!(
        logs.contains("target refused: localhost resolves to "),
        "{logs}"
    );
    assert_eq!(connections.load(Ordering::SeqCst), 0);
    accepting.abort();
}

#[tokio::test]
async fn the_deliveries_log_says_why_in_fixed_words_and_the_server_log_has_the_rest() {
    let database = TestDatabase::new().await;
    let server = hook_server(&database, "0,60", &[("WEBHOOK_TIMEOUT_MS", "500")]).await;
    let (key, number) = phone_agent(&database).await;
    let paged = Receiver::start(&[], Reply::Page(500)).await;
    let hung = Receiver::start(&[], Reply::Hang).await;
    // Nothing listens there: the port was free a moment ago.
    let down = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let endpoints = [
        Endpoint::create(&server, &key, &paged.url, None).await,
        Endpoint::create(&server, &key, &hung.url, None).await,
        Endpoint::create(
            &server,
            &key,
            &format!("http://127.0.0.1:{down}/hook"),
            None,
        )
        .await,
    ];

    send_sms(&database, &number).await;
    let mut shown = Vec::new();
    for endpoint in &endpoints {
        let attempts = endpoint.wait_for_attempts(&server, &key, 1).await;
        println!("as the agent reads it: {}", attempts[0]);
        shown.push(attempts[0]["error"].clone());
    }
    assert_eq!(
        shown,
        [
            json!("HTTP 500"),
            json!("timed out"),
            json!("connection failed")
        ]
    );
    let logs = server.logs();
    assert!(logs.contains("srv/internal/hooks.py"), "{logs}");
    assert!(logs.contains("timed out after 500 ms"), "{logs}");
}

/// The sum of the instance's `job_webhook_deliveries_total` by outcome.
async fn delivery_counts(server: &Server) -> HashMap<String, u64> {
    let mut counts = HashMap::new();
    for line in server.metrics().await.lines() {
        let Some(labels) = line.strip_prefix("job_webhook_deliveries_total{") else {
            continue;
        };
        let outcome = labels
            .split("outcome=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .expect("an outcome label");
        let value: u64 = line
            .rsplit(' ')
            .next()
            .and_then(|value| value.parse().ok())
            .expect("a count");
        *counts.entry(outcome.to_owned()).or_insert(0) += value;
    }
    counts
}

/// `count` transfers to one side, alternating between `servers`, `at_once` at a time.
async fn sends(servers: &[&Server], key: &str, count: usize, at_once: usize) {
    let mut sent = 0;
    while sent < count {
        let batch = (sent..count.min(sent + at_once))
            .map(|n| send_amount(servers[n % servers.len()], key, "1"));
        for (status, intent) in join_all(batch).await {
            assert_eq!(status, 200, "{intent}");
        }
        sent = count.min(sent + at_once);
    }
}

#[tokio::test]
async fn two_instances_deliver_two_hundred_events_each_once() {
    let database = TestDatabase::new().await;
    let mut settings = UNLIMITED_SENDS.to_vec();
    settings.push(("WEBHOOK_ALLOW_PRIVATE_TARGETS", "true"));
    settings.push(("WEBHOOK_RETRY_SCHEDULE", "0,1,2"));
    let first = Server::start_on(&database, &settings).await;
    let second = Server::start_on(&database, &settings).await;
    let (key, _) = wallet_agent(&database).await;
    let receiver = Receiver::start(&[], Reply::Status(200)).await;
    Endpoint::create(&first, &key, &receiver.url, Some(CREATED)).await;

    let started = Instant::now();
    sends(&[&first, &second], &key, 200, 10).await;
    let events = created_intents(&first, &key).await;
    assert_eq!(events.len(), 200);
    receiver
        .wait_until(DEADLINE, |received| {
            deliveries_by_id(received).len() >= events.len()
        })
        .await;
    let took = started.elapsed();
    receiver.assert_quiet_at(receiver.received().len()).await;
    let counts = deliveries_by_id(&receiver.received());
    let delivered: HashSet<String> = counts.keys().cloned().collect();
    let duplicates: usize = counts.values().map(|n| n - 1).sum();
    let (on_first, on_second) = (
        delivery_counts(&first).await,
        delivery_counts(&second).await,
    );
    println!(
        "two instances, 200 events: all delivered {took:.2?} after the first send; \
         duplicates {duplicates}; first instance counted {on_first:?}, second {on_second:?}"
    );
    assert_eq!(delivered, events, "every event delivered, none other");
    assert_eq!(duplicates, 0, "{counts:?}");
    let delivered_by_instances = on_first.get("delivered").copied().unwrap_or(0)
        + on_second.get("delivered").copied().unwrap_or(0);
    assert_eq!(delivered_by_instances, 200);
}

#[tokio::test]
async fn a_server_killed_with_deliveries_queued_loses_none_after_restart() {
    let database = TestDatabase::new().await;
    let mut settings = UNLIMITED_SENDS.to_vec();
    settings.extend([
        ("WEBHOOK_ALLOW_PRIVATE_TARGETS", "true"),
        (
            "WEBHOOK_RETRY_SCHEDULE",
            "0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30",
        ),
        // Leases of the killed server's attempts end this long after they began, plus a margin.
        ("WEBHOOK_TIMEOUT_MS", "2000"),
    ]);
    let server = Server::start_on(&database, &settings).await;
    let (key, _) = wallet_agent(&database).await;
    let receiver = Receiver::start(&[], Reply::Close).await;
    Endpoint::create(&server, &key, &receiver.url, Some(CREATED)).await;
    sends(&[&server], &key, 50, 10).await;
    let events = created_intents(&server, &key).await;
    assert_eq!(events.len(), 50);
    // Every delivery has been tried, and failed, at least once before the kill.
    receiver.wait_for_ids(50).await;
    let tried = receiver.received().len();

    drop(server); // SIGKILL
    let restarted = Server::start_on(&database, &settings).await;
    let up = Instant::now();
    receiver.answer_all(Reply::Status(200));
    receiver
        .wait_until(Duration::from_secs(60), |received| {
            deliveries_by_id(received).len() >= 50
        })
        .await;
    let took = up.elapsed();
    receiver.assert_quiet_at(receiver.received().len()).await;
    let received = receiver.received();
    // Those the killed server was posting stay leased until their lease ends: the attempt's
    // timeout and 30 s beyond.
    let late: Vec<f64> = received
        .iter()
        .filter(|r| r.delivered() && r.at.duration_since(up) > Duration::from_secs(10))
        .map(|r| r.at.duration_since(up).as_secs_f64())
        .collect();
    println!("delivered more than 10 s after the restart: {late:.2?} s");
    let counts = deliveries_by_id(&received);
    let delivered: HashSet<String> = counts.keys().cloned().collect();
    let lost = events.difference(&delivered).count();
    let duplicates: usize = counts.values().map(|n| n - 1).sum();
    println!(
        "killed with 50 deliveries queued ({tried} failed attempts before the kill): \
         all delivered {took:.2?} after the restart; lost {lost}, duplicates {duplicates}; \
         the new instance counted {:?}",
        delivery_counts(&restarted).await
    );
    assert_eq!(lost, 0);
    assert_eq!(delivered, events);
    assert_eq!(duplicates, 0, "{counts:?}");
}

#[tokio::test]
async fn deleting_an_endpoint_stops_its_queued_deliveries() {
    let database = TestDatabase::new().await;
    let server = hook_server(&database, "0,1,2,3,4,5,6,7,8,9", &[]).await;
    let (key, number) = phone_agent(&database).await;
    let receiver = Receiver::start(&[], Reply::Close).await;
    let endpoint = Endpoint::create(&server, &key, &receiver.url, None).await;
    for _ in 0..3 {
        send_sms(&database, &number).await;
    }
    receiver.wait_for_ids(3).await;

    let (status, deleted) = call(
        &server,
        reqwest::Method::DELETE,
        &endpoint.path(""),
        &key,
        None,
    )
    .await;
    assert_eq!(status, 204, "{deleted}");
    receiver.answer_all(Reply::Status(200));
    let before = receiver.received().len();
    receiver.assert_quiet_at(before).await;
    assert!(receiver.delivered().is_empty());
    let (status, gone) = server.get(&endpoint.path("/deliveries"), Some(&key)).await;
    assert_eq!(status, 404, "{gone}");
    println!("{before} failed attempts before the delete, none after");
}

/// The id of the agent whose key `key` is.
async fn agent_id(server: &Server, key: &str) -> String {
    let (status, me) = server.get("/v1/agents/me", Some(key)).await;
    assert_eq!(status, 200, "{me}");
    me["id"].as_str().expect("id").to_owned()
}

#[tokio::test]
async fn an_endpoint_stops_with_the_key_that_made_it_until_the_new_key_enables_it() {
    let database = TestDatabase::new().await;
    let server = hook_server(&database, "0,1", &[]).await;
    let (old_key, number) = phone_agent(&database).await;
    let receiver = Receiver::start(&[], Reply::Status(200)).await;
    let endpoint = Endpoint::create(&server, &old_key, &receiver.url, None).await;
    let id = agent_id(&server, &old_key).await;

    let rotated = crate::support::harness::agentctl(&database, &["agents", "rotate-key", &id])
        .await
        .json();
    println!(
        "agentctl agents rotate-key: {}",
        rotated["disabled_webhooks"]
    );
    let disabled = rotated["disabled_webhooks"]
        .as_array()
        .expect("the endpoints the rotation disabled");
    assert_eq!(disabled.len(), 1, "{rotated}");
    assert_eq!(disabled[0]["id"], endpoint.id.as_str());
    assert_eq!(disabled[0]["enabled"], false);
    let key = rotated["agent_key"].as_str().expect("agent_key");
    let shown = endpoint.show(&server, key).await;
    assert_eq!(shown["enabled"], false, "{shown}");
    assert_eq!(
        shown["disabled_reason"],
        "the agent key that created it was rotated"
    );

    // What the agent hears of now reaches no endpoint the old key made.
    send_sms(&database, &number).await;
    assert_eq!(feed(&server, key).await.len(), 1);
    receiver.assert_quiet_at(0).await;

    // Enabled again by the new key, it is the new key's: deliveries resume.
    let (status, enabled) = call(
        &server,
        reqwest::Method::PATCH,
        &endpoint.path(""),
        key,
        Some(json!({"enabled": true})),
    )
    .await;
    assert_eq!(status, 200, "{enabled}");
    assert_eq!(enabled["disabled_reason"], Value::Null);
    send_sms(&database, &number).await;
    let delivered = receiver.wait_for_deliveries(1, DEADLINE).await;
    assert_eq!(
        delivered[0].webhook_id(),
        feed(&server, key).await[1]["id"].as_str().expect("id")
    );
    receiver.assert_quiet_at(1).await;
}

#[tokio::test]
async fn a_deactivated_agents_queued_deliveries_are_not_sent() {
    let database = TestDatabase::new().await;
    let server = hook_server(&database, "0,1,2,3,4,5,6,7,8,9", &[]).await;
    let (key, number) = phone_agent(&database).await;
    let receiver = Receiver::start(&[], Reply::Close).await;
    let endpoint = Endpoint::create(&server, &key, &receiver.url, None).await;
    let id = agent_id(&server, &key).await;
    send_sms(&database, &number).await;
    receiver.wait_for_requests(1).await;

    crate::support::harness::agentctl(&database, &["agents", "deactivate", &id])
        .await
        .json();
    // An attempt under way when the agent was deactivated may still come; no retry after it.
    let before = receiver.received().len();
    tokio::time::sleep(QUIET).await;
    let received = receiver.received();
    assert!(received.len() <= before + 1, "{}", account(&received));
    let shown = crate::support::harness::agentctl(&database, &["webhooks", "show", &endpoint.id])
        .await
        .json();
    println!("after the deactivation: {}", shown["webhook"]);
    assert_eq!(shown["webhook"]["enabled"], false);
    assert_eq!(
        shown["webhook"]["disabled_reason"],
        "the agent was deactivated"
    );
}

/// The victim's delivery, with another agent's ten endpoints that never answer holding every
/// place they may: it comes at once, not when their attempts time out.
#[tokio::test]
async fn an_agent_whose_receivers_hang_holds_only_its_places_and_delays_no_other_agent() {
    let database = TestDatabase::new().await;
    // Each hung attempt holds its place 10 s: a delivery queued behind them would wait as long.
    let server = hook_server(&database, "0,60", &[("WEBHOOK_TIMEOUT_MS", "10000")]).await;
    // The defaults: 32 places, 8 of them at most for one agent.
    const PLACES_PER_AGENT: usize = 8;
    let (attacker_key, attacker_number) = phone_agent(&database).await;
    let (victim_key, victim_number) = phone_agent(&database).await;
    let mut hung = Vec::new();
    for _ in 0..10 {
        let receiver = Receiver::start(&[], Reply::Hang).await;
        Endpoint::create(&server, &attacker_key, &receiver.url, None).await;
        hung.push(receiver);
    }
    let prompt = Receiver::start(&[], Reply::Status(200)).await;
    Endpoint::create(&server, &victim_key, &prompt.url, None).await;
    let hung_requests = |hung: &[Receiver]| hung.iter().map(|r| r.received().len()).sum::<usize>();

    // Forty deliveries queued, more than every place of the instance.
    for _ in 0..4 {
        send_sms(&database, &attacker_number).await;
    }
    let started = Instant::now();
    while hung_requests(&hung) < PLACES_PER_AGENT {
        assert!(
            started.elapsed() < DEADLINE,
            "{} requests",
            hung_requests(&hung)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let sent = Instant::now();
    send_sms(&database, &victim_number).await;
    let delivered = prompt
        .wait_until(Duration::from_secs(60), |received| !received.is_empty())
        .await;
    let latency = delivered[0].at.duration_since(sent);
    let held = hung_requests(&hung);
    println!(
        "the victim's delivery came {:.2} s after its SMS was sent; the attacker's hung \
         receivers had {held} requests (10 endpoints, 40 deliveries queued, attempts time out \
         at 10 s)",
        latency.as_secs_f64()
    );
    assert!(latency < Duration::from_secs(3), "{latency:?}");
    assert_eq!(
        held, PLACES_PER_AGENT,
        "the attacker holds its places and no more"
    );
}

/// A request with the agent's key and an `Idempotency-Key`: its status, body and whether it was
/// answered `Idempotent-Replayed: true`.
pub(crate) async fn keyed(
    server: &Server,
    path: &str,
    key: &str,
    idempotency_key: &str,
    body: Value,
) -> (u16, Value, bool) {
    let response = server
        .client
        .post(server.url(path))
        .bearer_auth(key)
        .header("Idempotency-Key", idempotency_key)
        .json(&body)
        .send()
        .await
        .expect("request");
    let replayed = crate::support::harness::header(&response, "idempotent-replayed").as_deref()
        == Some("true");
    let (status, body) = crate::support::harness::read(response).await;
    (status, body, replayed)
}

#[tokio::test]
async fn a_retried_create_rotation_and_replay_under_one_key_happen_once_and_answer_the_first() {
    let database = TestDatabase::new().await;
    let server = hook_server(&database, "0,1,2", &[]).await;
    let (key, number) = phone_agent(&database).await;
    let receiver = Receiver::start(&[], Reply::Status(200)).await;
    let body = json!({"url": receiver.url, "description": "in doubt"});

    let (status, first, replayed) =
        keyed(&server, "/v1/webhooks", &key, "hook-1", body.clone()).await;
    assert_eq!((status, replayed), (201, false), "{first}");
    let (status, again, replayed) = keyed(&server, "/v1/webhooks", &key, "hook-1", body).await;
    assert_eq!((status, replayed), (201, true), "{again}");
    assert_eq!(again, first, "the first answer, secret included");
    let (status, listed) = server.get("/v1/webhooks", Some(&key)).await;
    assert_eq!(
        (status, listed.as_array().map(Vec::len)),
        (200, Some(1)),
        "{listed}"
    );
    let other = json!({"url": receiver.url, "description": "another"});
    let (status, refused, _) = keyed(&server, "/v1/webhooks", &key, "hook-1", other).await;
    assert_eq!(status, 409, "{refused}");
    assert!(refused["detail"].as_str().is_some(), "{refused}");

    let endpoint = Endpoint {
        id: first["id"].as_str().expect("id").to_owned(),
        secret: first["secret"].as_str().expect("secret").to_owned(),
    };
    let rotate = endpoint.path("/rotate-secret");
    let (status, rotated, replayed) = keyed(&server, &rotate, &key, "rotate-1", json!({})).await;
    assert_eq!((status, replayed), (200, false), "{rotated}");
    assert_ne!(rotated["secret"], json!(endpoint.secret));
    let (status, again, replayed) = keyed(&server, &rotate, &key, "rotate-1", json!({})).await;
    assert_eq!((status, replayed), (200, true), "{again}");
    assert_eq!(again, rotated, "rotated once");

    send_sms(&database, &number).await;
    receiver.wait_for_requests(1).await;
    let replay = endpoint.path("/replay");
    let (status, queued, replayed) =
        keyed(&server, &replay, &key, "replay-1", json!({"after": 0})).await;
    assert_eq!(
        (status, replayed, queued["queued"].clone()),
        (202, false, json!(1)),
        "{queued}"
    );
    receiver.wait_for_requests(2).await;
    let (status, again, replayed) =
        keyed(&server, &replay, &key, "replay-1", json!({"after": 0})).await;
    assert_eq!((status, replayed), (202, true), "{again}");
    assert_eq!(again, queued);
    receiver.assert_quiet_at(2).await;
    let (status, refused, _) = keyed(&server, &replay, &key, "replay-1", json!({"after": 1})).await;
    assert_eq!(status, 409, "{refused}");
}
