//! The event log seen from outside: the feed, the live stream (SSE) across instances, resumes,
//! caps, retention, slow readers, shutdown, and a change cut off by a killed server.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use test_support::TestDatabase;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::email::{email_agent, email_server, plain, send};
use crate::support::harness::{agentctl, create_agent, Server};

/// One message of a stream: its fields as sent, or a comment.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Message {
    id: Option<String>,
    event: Option<String>,
    data: Option<String>,
    retry: Option<String>,
    comment: bool,
}

impl Message {
    fn json(&self) -> Value {
        serde_json::from_str(self.data.as_deref().expect("data")).expect("JSON data")
    }
}

/// A stream's reader that parses messages as an SSE client does.
pub(crate) struct Stream {
    response: reqwest::Response,
    pending: String,
}

impl Stream {
    pub(crate) async fn open(
        server: &Server,
        key: &str,
        query: &str,
        last_event_id: Option<&str>,
    ) -> Stream {
        let response = Stream::request(server, key, query, last_event_id).await;
        assert_eq!(response.status(), 200);
        assert_eq!(
            crate::support::harness::header(&response, "content-type").as_deref(),
            Some("text/event-stream")
        );
        Stream {
            response,
            pending: String::new(),
        }
    }

    async fn request(
        server: &Server,
        key: &str,
        query: &str,
        last_event_id: Option<&str>,
    ) -> reqwest::Response {
        let mut request = server
            .client
            .get(server.url(&format!("/v1/events/stream{query}")))
            .bearer_auth(key);
        if let Some(id) = last_event_id {
            request = request.header("Last-Event-ID", id);
        }
        request.send().await.expect("stream request")
    }

    /// The next message within `deadline`; `None` when the stream ended.
    pub(crate) async fn next(&mut self, deadline: Duration) -> Option<Message> {
        let started = Instant::now();
        loop {
            if let Some(end) = self.pending.find("\n\n") {
                let block: String = self.pending.drain(..end + 2).collect();
                let mut message = Message::default();
                for line in block.lines().filter(|line| !line.is_empty()) {
                    match line.split_once(": ") {
                        _ if line.starts_with(':') => message.comment = true,
                        Some(("id", value)) => message.id = Some(value.into()),
                        Some(("event", value)) => message.event = Some(value.into()),
                        Some(("data", value)) => message.data = Some(value.into()),
                        Some(("retry", value)) => message.retry = Some(value.into()),
                        _ => panic!("not an SSE line: {line:?}"),
                    }
                }
                return Some(message);
            }
            let left = deadline.saturating_sub(started.elapsed());
            let chunk = tokio::time::timeout(left, self.response.chunk())
                .await
                .unwrap_or_else(|_| {
                    panic!("nothing within {deadline:?}; holding {:?}", self.pending)
                })
                .expect("stream read")?;
            self.pending
                .push_str(std::str::from_utf8(&chunk).expect("UTF-8"));
        }
    }

    /// The next event, past comments and the `retry:` advice.
    async fn next_event(&mut self) -> Message {
        loop {
            let message = self.next(Duration::from_secs(20)).await.expect("open");
            if message.data.is_some() {
                return message;
            }
        }
    }
}

async fn sms(database: &TestDatabase, number: &str, body: &str) {
    crate::sms::sandbox_sms(database, number, body).await;
}

fn number_of(agent: &Value) -> String {
    agent["phone_number"]["number"]
        .as_str()
        .expect("number")
        .to_owned()
}

/// A send of 5 atomic units under `idempotency_key`, to run apart from the server's lifetime.
fn wallet_send(
    server: &Server,
    key: &str,
    idempotency_key: &str,
) -> impl std::future::Future<Output = reqwest::Result<reqwest::Response>> + Send + 'static {
    server
        .client
        .post(server.url("/v1/wallet/send"))
        .bearer_auth(key)
        .json(&json!({
            "to": "0x2222222222222222222222222222222222222222",
            "amount_atomic": "5",
            "idempotency_key": idempotency_key
        }))
        .send()
}

async fn feed(server: &Server, key: &str, query: &str) -> Value {
    let (status, page) = server.get(&format!("/v1/events{query}"), Some(key)).await;
    assert_eq!(status, 200, "{page}");
    page
}

#[tokio::test]
async fn a_stream_says_retry_first_replays_then_goes_live_and_keeps_alive() {
    let database = TestDatabase::new().await;
    let server = Server::start_on(&database, &[("EVENT_STREAM_KEEPALIVE_SECS", "1")]).await;
    let (key, agent) = create_agent(&database, &["--phone"]).await;
    let number = number_of(&agent);
    sms(&database, &number, "code 111111").await;
    sms(&database, &number, "code 222222").await;
    let mut stream = Stream::open(&server, &key, "", None).await;
    let first = stream.next(Duration::from_secs(10)).await.expect("open");
    assert_eq!(first.retry.as_deref(), Some("3000"), "{first:?}");
    let replayed = [stream.next_event().await, stream.next_event().await];
    assert_eq!(
        replayed
            .iter()
            .map(|m| m.id.clone().unwrap_or_default())
            .collect::<Vec<_>>(),
        ["1", "2"]
    );
    let page = feed(&server, &key, "").await;
    for (message, item) in replayed
        .iter()
        .zip(page["items"].as_array().expect("items"))
    {
        assert_eq!(message.event.as_deref(), Some("sms.received"));
        assert_eq!(
            message.json(),
            *item,
            "the stream and the feed carry one event alike"
        );
    }
    sms(&database, &number, "code 333333").await;
    let live = stream.next_event().await;
    assert_eq!(live.id.as_deref(), Some("3"));
    assert_eq!(live.json()["data"]["code"], "333333");
    let mut kept_alive = false;
    for _ in 0..3 {
        kept_alive |= stream
            .next(Duration::from_secs(5))
            .await
            .expect("open")
            .comment;
    }
    assert!(kept_alive, "a comment line keeps an idle stream open");
}

#[tokio::test]
async fn a_stream_resumes_after_the_last_event_id_with_no_gap_and_no_duplicate() {
    let database = TestDatabase::new().await;
    let server = Server::start_on(&database, &[]).await;
    let (key, agent) = create_agent(&database, &["--phone"]).await;
    let number = number_of(&agent);
    for n in 0..5 {
        sms(&database, &number, &format!("code 10000{n}")).await;
    }
    let mut resumed = Stream::open(&server, &key, "?after=1", Some("3")).await;
    let ids = [resumed.next_event().await, resumed.next_event().await];
    assert_eq!(
        ids.iter()
            .map(|m| m.id.clone().unwrap_or_default())
            .collect::<Vec<_>>(),
        ["4", "5"],
        "Last-Event-ID wins over ?after, and what follows it comes once"
    );
    let mut from_query = Stream::open(&server, &key, "?after=4&types=sms.received", None).await;
    assert_eq!(from_query.next_event().await.id.as_deref(), Some("5"));
    let bad = Stream::request(&server, &key, "?types=sms.bounced", None).await;
    assert_eq!(bad.status(), 422);
    // A list naming no type would match nothing, silently.
    for none in ["?types=", "?types=,%20,"] {
        assert_eq!(
            Stream::request(&server, &key, none, None).await.status(),
            422
        );
        let (status, refused) = server.get(&format!("/v1/events{none}"), Some(&key)).await;
        assert_eq!(status, 422, "{refused}");
        assert_eq!(refused["detail"][0]["loc"], json!(["query", "types"]));
    }
    let bad = Stream::request(&server, &key, "", Some("not-a-number")).await;
    assert_eq!(bad.status(), 422);
    let page = feed(&server, &key, "?after=1&limit=2").await;
    assert_eq!(page["items"][0]["seq"], 2);
    assert_eq!(page["next_after"], 3);
    let rest = feed(&server, &key, "?after=3&limit=2").await;
    assert_eq!(rest["next_after"], Value::Null);
    let (status, refused) = server
        .get("/v1/events?limit=101&after=-1", Some(&key))
        .await;
    assert_eq!(status, 422);
    assert_eq!(refused["detail"].as_array().expect("items").len(), 2);
}

#[tokio::test]
async fn an_event_committed_on_one_instance_reaches_streams_on_another() {
    let database = TestDatabase::new().await;
    let listening = Server::start_on(&database, &[]).await;
    let writing = Server::start_on(&database, &[]).await;
    let (key, _) = create_agent(&database, &["--wallet"]).await;
    let mut stream = Stream::open(&listening, &key, "", None).await;
    stream.next(Duration::from_secs(10)).await.expect("retry");
    let sent_at = Instant::now();
    let intent: Value = wallet_send(&writing, &key, "one")
        .await
        .expect("send")
        .json()
        .await
        .expect("intent");
    let created = stream.next_event().await;
    println!(
        "a send on one instance reached a stream on the other in {:?}",
        sent_at.elapsed()
    );
    assert_eq!(created.event.as_deref(), Some("transfer_intent.created"));
    assert_eq!(
        created.json()["data"],
        intent,
        "the event carries the intent as its route shows it"
    );
}

#[tokio::test]
async fn streams_beyond_the_agents_cap_are_refused_until_one_closes() {
    let database = TestDatabase::new().await;
    let server = Server::start_on(&database, &[("EVENT_STREAMS_PER_AGENT", "2")]).await;
    let (key, _) = create_agent(&database, &["--phone"]).await;
    let (other, _) = create_agent(&database, &["--phone"]).await;
    let first = Stream::open(&server, &key, "", None).await;
    let _second = Stream::open(&server, &key, "", None).await;
    let refused = Stream::request(&server, &key, "", None).await;
    assert_eq!(refused.status(), 429);
    assert!(crate::support::harness::header(&refused, "retry-after").is_some());
    let _others = Stream::open(&server, &other, "", None).await;
    drop(first);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let again = Stream::request(&server, &key, "", None).await;
        if again.status() == 200 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the closed stream's place never came back"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let metrics = server.metrics().await;
    assert!(
        metrics.contains(r#"long_lived_requests_refused_total{kind="event_stream"} 1"#)
            || metrics.contains(r#"long_lived_requests_refused_total{kind="event_stream"} 2"#),
        "{metrics}"
    );
}

#[tokio::test]
async fn a_position_older_than_what_is_kept_starts_with_a_reset() {
    let database = TestDatabase::new().await;
    let (key, agent) = create_agent(&database, &["--phone"]).await;
    let number = number_of(&agent);
    for n in 0..3 {
        sms(&database, &number, &format!("code 20000{n}")).await;
    }
    database
        .execute("UPDATE events SET created_at = now() - interval '40 days' WHERE seq <= 2")
        .await;
    // The retention job's first round runs as the server starts.
    let server = Server::start_on(&database, &[]).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    while feed(&server, &key, "").await["items"]
        .as_array()
        .map(Vec::len)
        != Some(1)
    {
        assert!(
            Instant::now() < deadline,
            "the old events were never pruned"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut stream = Stream::open(&server, &key, "", None).await;
    stream.next(Duration::from_secs(10)).await.expect("retry");
    let reset = stream.next_event().await;
    assert_eq!(reset.event.as_deref(), Some("reset"), "{reset:?}");
    assert_eq!(reset.json(), json!({"after": 2}));
    assert_eq!(stream.next_event().await.id.as_deref(), Some("3"));
    let mut caught_up = Stream::open(&server, &key, "", Some("2")).await;
    caught_up
        .next(Duration::from_secs(10))
        .await
        .expect("retry");
    assert_eq!(
        caught_up.next_event().await.id.as_deref(),
        Some("3"),
        "no reset owed"
    );
}

#[tokio::test]
async fn a_reader_that_takes_nothing_is_cut_instead_of_buffered() {
    let database = TestDatabase::new().await;
    let server = Server::start_on(
        &database,
        &[
            ("EVENT_STREAM_BUFFER_BYTES", "4096"),
            ("EVENT_STREAM_STALL_SECS", "1"),
            ("EVENT_STREAMS_PER_AGENT", "1"),
        ],
    )
    .await;
    let (key, agent) = create_agent(&database, &["--phone"]).await;
    let address = server.base_url.trim_start_matches("http://").to_owned();
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket.set_recv_buffer_size(4096).expect("small buffer");
    let mut reader = socket
        .connect(address.parse().expect("address"))
        .await
        .expect("connect");
    reader
        .write_all(
            format!(
                "GET /v1/events/stream HTTP/1.1\r\nHost: {address}\r\n\
                 Authorization: Bearer {key}\r\n\r\n"
            )
            .as_bytes(),
        )
        .await
        .expect("request");
    let mut head = [0u8; 64];
    let read = reader.read(&mut head).await.expect("head");
    assert!(
        head[..read].starts_with(b"HTTP/1.1 200"),
        "{:?}",
        &head[..read]
    );
    // Far more than the socket buffers hold, committed at once.
    database
        .execute(&format!(
            "INSERT INTO sms_messages (id, agent_id, phone_number_id, direction, provider, \
             provider_message_id, source, from_number, to_number, body) \
             SELECT gen_random_uuid(), '{agent_id}', number.id, 'inbound', 'sandbox', \
                 'SMbulk' || n, 'webhook', '+15550001111', number.number, 'bulk' \
             FROM generate_series(1, 30000) AS n, phone_numbers AS number \
             WHERE number.agent_id = '{agent_id}'",
            agent_id = agent["id"].as_str().expect("id"),
        ))
        .await;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let metrics = server.metrics().await;
        let buffered = metric(&metrics, "event_stream_buffered_bytes");
        assert!(
            buffered <= 4096.0,
            "the stream holds {buffered} bytes for a reader that takes nothing"
        );
        if metrics.contains("event_streams_cut_total 1") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the reader was never cut:\n{metrics}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // The cut reader's connection keeps its place while it stays: one agent cannot pile up
    // connections the server cannot close.
    let (status, _) = server.get("/v1/events/stream", Some(&key)).await;
    assert_eq!(
        status, 429,
        "the stalled connection still holds the agent's one stream"
    );
    drop(reader);
    loop {
        let metrics = server.metrics().await;
        if metrics.contains(r#"long_lived_requests{kind="event_stream"} 0"#) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the reader went and its place stayed:\n{metrics}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn streams_end_when_the_server_stops_or_the_key_stops_working() {
    let database = TestDatabase::new().await;
    let mut server = Server::start_on(&database, &[]).await;
    let (key, agent) = create_agent(&database, &["--phone"]).await;
    let (rotated, rotated_agent) = create_agent(&database, &["--phone"]).await;
    let mut revoked = Stream::open(&server, &rotated, "", None).await;
    revoked.next(Duration::from_secs(10)).await.expect("retry");
    agentctl(
        &database,
        &[
            "agents",
            "rotate-key",
            rotated_agent["id"].as_str().expect("id"),
        ],
    )
    .await
    .json();
    assert_eq!(
        revoked.next(Duration::from_secs(10)).await,
        None,
        "the stream of a key that no longer works ends"
    );
    let mut stream = Stream::open(&server, &key, "", None).await;
    stream.next(Duration::from_secs(10)).await.expect("retry");
    let stopping = Instant::now();
    server.terminate();
    assert_eq!(
        stream.next(Duration::from_secs(10)).await,
        None,
        "the stream ends"
    );
    assert!(server.wait_for_exit(Duration::from_secs(15)).await);
    println!(
        "a server with an open stream stopped in {:?}",
        stopping.elapsed()
    );
    drop(agent);
}

/// The value of a metric without labels in a Prometheus text.
fn metric(metrics: &str, name: &str) -> f64 {
    metrics
        .lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no {name} in:\n{metrics}"))
        .parse()
        .expect("a number")
}

#[tokio::test]
async fn an_outsiders_mail_makes_no_event_large() {
    use crate::attachments::{deliver, mail_with, Part};

    let database = TestDatabase::new().await;
    let server = email_server(&database, &[]).await;
    let (key, address) = email_agent(&database, "thin-events").await;
    let names: Vec<String> = (0..60)
        .map(|n| format!("filename=\"{n:03}{}.pdf\"", "n".repeat(240)))
        .collect();
    let parts: Vec<Part<'_>> = names
        .iter()
        .map(|name| Part {
            disposition_name: name,
            content_type: "application/pdf",
            bytes: b"%PDF",
        })
        .collect();
    let mail = String::from_utf8(mail_with(&address, "<large@example.org>", &parts))
        .expect("text")
        .replace(
            "Subject: Your files",
            &format!("Subject: Your code 482913 {}", "s".repeat(1500)),
        );
    let id = deliver(&server, "msg_large_event", mail.as_bytes()).await;

    let page = feed(&server, &key, "").await;
    let received = &page["items"][0];
    assert_eq!(received["data"]["message_id"], id.as_str());
    assert_eq!(
        received["data"]["attachment_count"], 50,
        "the attachments kept are counted: {received}"
    );
    assert!(received["data"].get("attachments").is_none());
    assert_eq!(
        received["data"]["subject"]
            .as_str()
            .expect("subject")
            .chars()
            .count(),
        256
    );
    assert_eq!(received["data"]["verification_codes"], json!(["482913"]));
    let rendered = received.to_string();
    assert!(
        rendered.len() < 1024,
        "{} bytes: {rendered}",
        rendered.len()
    );
    let (status, message) = server
        .get(&format!("/v1/email/messages/{id}"), Some(&key))
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        message["attachments"]
            .as_array()
            .expect("attachments")
            .len(),
        50,
        "the message names them"
    );
}

#[tokio::test]
async fn mail_received_and_sent_are_events_with_their_facts() {
    let database = TestDatabase::new().await;
    let server = email_server(&database, &[]).await;
    let (key, address) = email_agent(&database, "events-sponsor").await;
    let sent = send(&server, &key, plain("someone@example.com")).await;
    assert_eq!(sent.status, 200, "{}", sent.body);
    agentctl(
        &database,
        &[
            "sandbox",
            "email",
            "--to",
            &address,
            "--from",
            "noreply@github.example",
            "--subject",
            "Your code",
            "--text",
            "Verification code: 719302",
        ],
    )
    .await
    .json();
    let deadline = Instant::now() + Duration::from_secs(20);
    let events = loop {
        let page = feed(&server, &key, "").await;
        let items = page["items"].as_array().expect("items").clone();
        if items.len() == 2 {
            break items;
        }
        assert!(Instant::now() < deadline, "{page}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let of = |kind: &str| {
        events
            .iter()
            .find(|event| event["type"] == kind)
            .unwrap_or_else(|| panic!("no {kind} in {events:?}"))
            .clone()
    };
    let sent_event = of("email.sent");
    assert_eq!(sent_event["data"]["message_id"], sent.body["data"]["id"]);
    assert!(sent_event["data"]["provider_message_id"].is_string());
    let received = of("email.received");
    assert_eq!(received["data"]["subject"], "Your code");
    assert_eq!(received["data"]["from"], "noreply@github.example");
    assert_eq!(received["data"]["verification_codes"], json!(["719302"]));
    let (status, message) = server
        .get(
            &format!(
                "/v1/email/messages/{}",
                received["data"]["message_id"].as_str().expect("id")
            ),
            Some(&key),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(message["thread_id"], received["data"]["thread_id"]);
}

#[tokio::test]
async fn a_change_cut_off_by_a_killed_server_leaves_neither_it_nor_its_event() {
    let database = TestDatabase::new().await;
    let server = Server::start_on(&database, &[]).await;
    let (key, agent) = create_agent(&database, &["--wallet"]).await;
    let agent_id = agent["id"].as_str().expect("id").to_owned();
    // The send stops mid-transaction at the wallet's lock, held here.
    let held = database
        .hold(&format!(
            "SELECT 1 FROM wallets WHERE agent_id = '{agent_id}' FOR UPDATE"
        ))
        .await;
    let send = tokio::spawn(wallet_send(&server, &key, "cut"));
    let deadline = Instant::now() + Duration::from_secs(20);
    while !database
        .sessions()
        .await
        .iter()
        .any(|session| session.waiting_for_lock)
    {
        assert!(
            Instant::now() < deadline,
            "the send never reached the wallet's lock"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    drop(server);
    assert!(
        send.await.expect("task").is_err(),
        "the killed server answered nothing"
    );
    drop(held);
    let deadline = Instant::now() + Duration::from_secs(20);
    while database
        .sessions()
        .await
        .iter()
        .any(|session| session.waiting_for_lock)
    {
        assert!(
            Instant::now() < deadline,
            "the cut-off transaction never ended"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let restarted = Server::start_on(&database, &[]).await;
    assert_eq!(
        feed(&restarted, &key, "").await["items"],
        json!([]),
        "no event"
    );
    let (_, intents) = restarted.get("/v1/wallet/intents", Some(&key)).await;
    assert_eq!(intents["items"], json!([]), "no change");
    let again = wallet_send(&restarted, &key, "cut").await.expect("send");
    assert_eq!(again.status(), 200);
    let page = feed(&restarted, &key, "").await;
    assert_eq!(
        page["items"][0]["seq"], 1,
        "the cut-off change took no number"
    );
}

#[tokio::test]
async fn operators_read_an_agents_events_and_replay_or_disable_its_endpoints() {
    let database = TestDatabase::new().await;
    let server = Server::start_on(&database, &[("WEBHOOK_DELIVERY_ENABLED", "false")]).await;
    let (key, agent) = create_agent(&database, &["--phone"]).await;
    let agent_id = agent["id"].as_str().expect("id");
    sms(&database, &number_of(&agent), "code 424242").await;
    let mut listed = agentctl(
        &database,
        &["events", "list", agent_id, "--types", "sms.received"],
    )
    .await
    .json();
    for item in listed["items"].as_array_mut().expect("items") {
        let item = item.as_object_mut().expect("an event");
        let key_id = item.remove("key_id").expect("key_id");
        assert_eq!(key_id, Value::Null, "no key caused an SMS received");
    }
    assert_eq!(
        listed,
        feed(&server, &key, "").await,
        "as the agent's feed shows them, with the key that caused each"
    );
    let unknown = agentctl(&database, &["events", "list", agent_id, "--types", "nope"]).await;
    assert!(
        !unknown.success && unknown.stderr.contains("sms.received"),
        "{}",
        unknown.stderr
    );
    let created = server
        .client
        .post(server.url("/v1/webhooks"))
        .bearer_auth(&key)
        .json(&json!({"url": "https://hooks.example.com/in", "description": "mine"}))
        .send()
        .await
        .expect("create");
    assert_eq!(created.status(), 201);
    let created: Value = created.json().await.expect("endpoint");
    assert!(created["secret"]
        .as_str()
        .expect("secret")
        .starts_with("whsec_"));
    let id = created["id"].as_str().expect("id");
    let endpoints = agentctl(&database, &["webhooks", "list", agent_id])
        .await
        .json();
    assert_eq!(endpoints[0]["id"], created["id"]);
    assert!(
        endpoints[0].get("secret").is_none(),
        "a secret is shown once"
    );
    let replayed = agentctl(&database, &["webhooks", "replay", id, "--after", "0"])
        .await
        .json();
    assert_eq!(replayed, json!({"queued": 1}));
    let disabled = agentctl(&database, &["webhooks", "disable", id, "--reason", "abuse"])
        .await
        .json();
    assert_eq!(disabled["enabled"], false);
    assert!(disabled["disabled_reason"]
        .as_str()
        .expect("reason")
        .ends_with(": abuse"));
    let (_, seen) = server.get(&format!("/v1/webhooks/{id}"), Some(&key)).await;
    assert_eq!(seen["enabled"], false, "the agent sees it disabled");
    let shown = agentctl(&database, &["webhooks", "show", id]).await.json();
    assert_eq!(shown["agent_id"], agent["id"]);
    let missing = agentctl(
        &database,
        &["webhooks", "show", "01a21408-7897-7124-8d0e-f41415831cc3"],
    )
    .await;
    assert!(
        missing.stderr.contains("no webhook endpoint"),
        "{}",
        missing.stderr
    );
}

#[tokio::test]
async fn every_path_that_moves_an_intent_writes_its_event() {
    let database = TestDatabase::new().await;
    let server = Server::start_on(&database, &[("EXECUTOR_INTERVAL_MS", "50")]).await;
    let (key, agent) = create_agent(&database, &["--wallet"]).await;
    let wallet = agent["wallet"]["address"].as_str().expect("wallet");
    agentctl(&database, &["sandbox", "fund", wallet, "1000"])
        .await
        .json();
    let mut intents = Vec::new();
    for name in ["executed", "rejected", "expired"] {
        let intent: Value = wallet_send(&server, &key, name)
            .await
            .expect("send")
            .json()
            .await
            .expect("intent");
        intents.push(intent["id"].as_str().expect("id").to_owned());
    }
    // The operator decides two (agentctl), the executor settles one, and expiry takes the last.
    agentctl(&database, &["intents", "confirm", &intents[0]])
        .await
        .json();
    agentctl(&database, &["intents", "reject", &intents[1]])
        .await
        .json();
    agentctl(&database, &["intents", "expire", "--pending-for-secs", "0"])
        .await
        .json();
    let deadline = Instant::now() + Duration::from_secs(30);
    let events = loop {
        let page = feed(&server, &key, "?limit=100").await;
        let items = page["items"].as_array().expect("items").clone();
        if items
            .iter()
            .any(|event| event["type"] == "transfer_intent.executed")
        {
            break items;
        }
        assert!(Instant::now() < deadline, "never executed: {page}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let of = |intent: &str| -> Vec<String> {
        events
            .iter()
            .filter(|event| event["data"]["id"] == intent)
            .map(|event| {
                let kind = event["type"].as_str().expect("type").to_owned();
                assert_eq!(
                    kind.strip_prefix("transfer_intent.")
                        .expect("an intent's event"),
                    match event["data"]["status"].as_str().expect("status") {
                        "pending_confirmation" => "created",
                        status => status,
                    },
                    "each event carries the intent as it entered that state"
                );
                kind
            })
            .collect()
    };
    assert_eq!(
        of(&intents[0]),
        [
            "transfer_intent.created",
            "transfer_intent.confirmed",
            "transfer_intent.submitted",
            "transfer_intent.executed"
        ]
    );
    assert_eq!(
        of(&intents[1]),
        ["transfer_intent.created", "transfer_intent.rejected"]
    );
    assert_eq!(
        of(&intents[2]),
        ["transfer_intent.created", "transfer_intent.expired"]
    );
    let seqs: Vec<u64> = events
        .iter()
        .map(|event| event["seq"].as_u64().expect("seq"))
        .collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>(), "no gap");
}
