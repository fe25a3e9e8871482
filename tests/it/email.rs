//! `/v1/email` and the inbound webhook, black-box: send rules, the outbox's refusals and giving
//! up, idempotent sends, signed ingestion, replies in thread, reads. A provider outage is in
//! `outages.rs`.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};
use test_support::TestDatabase;

use crate::support::fake_mail_api::FakeMailApi;
use crate::support::harness::{agentctl, create_agent, header, read, Server};

pub(crate) const SECRET: &str = "whsec_dGVzdC1zZWNyZXQtb2YtdGhlLWluYm91bmQtd2ViaG9vaw==";
const ROTATED_IN: &str = "whsec_YW5vdGhlci1zZWNyZXQtZm9yLXRoZS1yb3RhdGlvbg==";
const WEBHOOK: &str = "/webhooks/email/inbound";
pub(crate) const DEADLINE: Duration = Duration::from_secs(20);

/// Settings every email test server runs with: a quick outbox and the webhook secret.
pub(crate) const QUICK: [(&str, &str); 3] = [
    ("EMAIL_WEBHOOK_SECRETS", SECRET),
    ("EMAIL_OUTBOX_INTERVAL_MS", "50"),
    ("EMAIL_RETRY_BASE_MS", "100"),
];

pub(crate) async fn email_server(database: &TestDatabase, extra: &[(&str, &str)]) -> Server {
    let mut settings = QUICK.to_vec();
    settings.extend_from_slice(extra);
    Server::start_on(database, &settings).await
}

/// An agent with an inbox: its key and its address.
pub(crate) async fn email_agent(database: &TestDatabase, sponsor: &str) -> (String, String) {
    let (key, agent) = create_agent(database, &["--email", "--sponsor", sponsor]).await;
    let address = agent["email_inbox"]["address"]
        .as_str()
        .expect("an inbox address")
        .to_owned();
    (key, address)
}

pub(crate) struct Answer {
    pub(crate) status: u16,
    replayed: bool,
    retry_after: Option<String>,
    pub(crate) body: Value,
}

pub(crate) async fn post(
    server: &Server,
    path: &str,
    key: &str,
    body: &Value,
    idempotency_key: Option<&str>,
) -> Answer {
    let mut request = server
        .client
        .post(server.url(path))
        .bearer_auth(key)
        .json(body);
    if let Some(idempotency_key) = idempotency_key {
        request = request.header("Idempotency-Key", idempotency_key);
    }
    let response = request.send().await.expect("request");
    let header = |name: &str| header(&response, name);
    let replayed = header("idempotent-replayed").as_deref() == Some("true");
    let retry_after = header("retry-after");
    let (status, body) = read(response).await;
    Answer {
        status,
        replayed,
        retry_after,
        body,
    }
}

pub(crate) async fn send(server: &Server, key: &str, body: Value) -> Answer {
    post(server, "/v1/email/send", key, &body, None).await
}

pub(crate) fn plain(to: &str) -> Value {
    json!({"to": [to], "subject": "Hello", "body_text": "Hi there"})
}

pub(crate) fn now() -> i64 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).expect("clock");
    i64::try_from(since.as_secs()).expect("seconds")
}

/// Posts a webhook signed with `secret` at `timestamp`.
pub(crate) async fn webhook_signed(
    server: &Server,
    secret: &str,
    id: &str,
    timestamp: i64,
    content_type: &str,
    body: &[u8],
) -> (u16, Value) {
    let signature = email::sign(secret, id, timestamp, body);
    let response = server
        .client
        .post(server.url(WEBHOOK))
        .header("content-type", content_type)
        .header("webhook-id", id)
        .header("webhook-timestamp", timestamp.to_string())
        .header("webhook-signature", signature)
        .body(body.to_vec())
        .send()
        .await
        .expect("request");
    read(response).await
}

pub(crate) fn raw_mail(
    from: &str,
    to: &str,
    subject: &str,
    message_id: &str,
    text: &str,
) -> Vec<u8> {
    format!(
        "From: Sender <{from}>\r\nTo: {to}\r\nSubject: {subject}\r\nMessage-ID: {message_id}\r\n\
         Date: Sun, 22 Nov 2026 10:00:00 +0000\r\nMIME-Version: 1.0\r\n\
         Content-Type: text/plain; charset=utf-8\r\n\r\n{text}\r\n"
    )
    .into_bytes()
}

pub(crate) async fn get(server: &Server, path: &str, key: &str) -> (u16, Value) {
    server.get(path, Some(key)).await
}

/// The message as the API shows it once its status is `status`.
pub(crate) async fn message_reaching(server: &Server, key: &str, id: &str, status: &str) -> Value {
    let started = Instant::now();
    loop {
        let (code, message) = get(server, &format!("/v1/email/messages/{id}"), key).await;
        assert_eq!(code, 200, "{message}");
        if message["status"] == status {
            return message;
        }
        assert!(
            started.elapsed() < DEADLINE,
            "never reached {status}: {message}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// What the sandbox provider was handed for `to`.
async fn sandbox_outbox(database: &TestDatabase, to: &str) -> Vec<Value> {
    let listed = agentctl(database, &["sandbox", "outbox", "--to", to])
        .await
        .json();
    listed.as_array().expect("a list").clone()
}

fn locs(body: &Value) -> Vec<Value> {
    body["detail"]
        .as_array()
        .expect("a validation list")
        .iter()
        .map(|item| item["loc"].clone())
        .collect()
}

// Issue 41: the outbox looked for queued mail every EMAIL_OUTBOX_INTERVAL_MS; a queued message
// now wakes it on every instance, and its interval only brings retries that came due.
#[tokio::test]
async fn a_queued_message_wakes_the_outbox_without_waiting_for_its_interval() {
    let database = TestDatabase::new().await;
    let server = Server::start_on(
        &database,
        &[
            ("EMAIL_WEBHOOK_SECRETS", SECRET),
            ("EMAIL_OUTBOX_INTERVAL_MS", "600000"),
        ],
    )
    .await;
    let (key, _) = email_agent(&database, "acme").await;
    for subject in ["first", "second"] {
        let answer = send(
            &server,
            &key,
            json!({"to": ["bob@example.com"], "subject": subject, "body_text": "Hello."}),
        )
        .await;
        assert_eq!(answer.status, 200, "{}", answer.body);
        let id = answer.body["data"]["id"].as_str().expect("id");
        message_reaching(&server, &key, id, "sent").await;
    }
}

#[tokio::test]
async fn a_send_is_queued_then_handed_to_the_provider_once_with_its_headers() {
    let database = TestDatabase::new().await;
    let server = email_server(&database, &[]).await;
    let (key, address) = email_agent(&database, "acme").await;
    let answer = send(
        &server,
        &key,
        json!({
            "to": ["bob@example.com"], "cc": ["carol@example.com"], "bcc": ["dave@example.com"],
            "subject": "Quarterly numbers", "body_text": "See attached figures.",
            "headers": {"X-Campaign": "q3"}, "category": "transactional"
        }),
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.body["status"], "sent");
    let data = &answer.body["data"];
    assert_eq!(data["status"], "queued");
    assert_eq!(data["direction"], "outbound");
    assert_eq!(data["from"], address.as_str());
    assert!(data["sent_at"].is_string());
    assert!(data["received_at"].is_null());
    let id = data["id"].as_str().expect("id");

    let sent = message_reaching(&server, &key, id, "sent").await;
    assert!(sent["provider_message_id"].is_string(), "{sent}");
    let handed = sandbox_outbox(&database, "bob@example.com").await;
    assert_eq!(handed.len(), 1, "{handed:?}");
    let mail = &handed[0];
    assert_eq!(mail["message_id"], id);
    assert_eq!(mail["cc"], json!(["carol@example.com"]));
    assert_eq!(mail["bcc"], json!(["dave@example.com"]));
    assert_eq!(mail["internet_message_id"], sent["internet_message_id"]);
    assert_eq!(mail["headers"], json!([["X-Campaign", "q3"]]));
}

#[tokio::test]
async fn invalid_sends_are_422_pointing_at_the_field() {
    let database = TestDatabase::new().await;
    let server = email_server(&database, &[]).await;
    let (key, _) = email_agent(&database, "acme").await;

    let bad_address = send(
        &server,
        &key,
        json!({"to": ["ok@example.com", "not-an-address"], "subject": "s", "body_text": "b", "cc": ["x@@y"]}),
    )
    .await;
    assert_eq!(bad_address.status, 422);
    assert_eq!(
        locs(&bad_address.body),
        vec![json!(["body", "to", 1]), json!(["body", "cc", 0])]
    );

    let many: Vec<String> = (0..15).map(|i| format!("r{i}@example.com")).collect();
    let too_many = send(
        &server,
        &key,
        json!({"to": many, "cc": many[..6].to_vec(), "subject": "s", "body_text": "b"}),
    )
    .await;
    assert_eq!(too_many.status, 422, "{}", too_many.body);
    assert_eq!(locs(&too_many.body), vec![json!(["body", "cc"])]);
    let twenty = send(
        &server,
        &key,
        json!({"to": many, "cc": many[..5].to_vec(), "subject": "s", "body_text": "b"}),
    )
    .await;
    assert_eq!(twenty.status, 200, "{}", twenty.body);

    let limit = 262_144;
    let at_limit = send(
        &server,
        &key,
        json!({"to": ["a@example.com"], "subject": "s", "body_text": "é".repeat(limit / 2)}),
    )
    .await;
    assert_eq!(at_limit.status, 200, "{}", at_limit.body);
    let over = send(
        &server,
        &key,
        json!({"to": ["a@example.com"], "subject": "s", "body_text": "x".repeat(limit + 1)}),
    )
    .await;
    assert_eq!(over.status, 422);
    assert_eq!(locs(&over.body), vec![json!(["body", "body_text"])]);

    for (name, value) in [
        ("X-Note", "one\r\nBcc: victim@example.com"),
        ("X-Note", "one\ntwo"),
        ("bcc", "victim@example.com"),
        ("FROM", "ceo@example.com"),
        ("Message-Id", "<x@y>"),
        ("ARC-Seal", "i=1"),
        ("dkim-signature", "v=1"),
        ("Content-Type", "text/html"),
        ("Received", "from x"),
        ("References", "<x@y>"),
    ] {
        let refused = send(
            &server,
            &key,
            json!({"to": ["a@example.com"], "subject": "s", "body_text": "b", "headers": {name: value}}),
        )
        .await;
        assert_eq!(refused.status, 422, "{name}: {}", refused.body);
        assert_eq!(locs(&refused.body), vec![json!(["body", "headers", name])]);
    }

    let injected = send(
        &server,
        &key,
        json!({"to": ["a@example.com"], "subject": "Hi\r\nBcc: victim@example.com", "body_text": "b"}),
    )
    .await;
    assert_eq!(injected.status, 422);
    assert_eq!(locs(&injected.body), vec![json!(["body", "subject"])]);

    let no_recipient = send(
        &server,
        &key,
        json!({"to": [], "subject": "s", "body_text": "b"}),
    )
    .await;
    assert_eq!(no_recipient.status, 422);
    let missing = send(&server, &key, json!({"to": ["a@example.com"]})).await;
    assert_eq!(missing.status, 422);
    assert_eq!(missing.body["detail"][0]["loc"], json!(["body", "subject"]));
}

#[tokio::test]
async fn sends_outside_what_the_service_offers_are_400_and_store_nothing() {
    let database = TestDatabase::new().await;
    let server = email_server(&database, &[]).await;
    let (key, _) = email_agent(&database, "acme").await;
    let (no_inbox_key, _) = create_agent(&database, &[]).await;
    for (caller, body, says) in [
        (&no_inbox_key, plain("a@example.com"), "No email inbox"),
        (
            &key,
            json!({"to": ["a@example.com"], "subject": "s", "body_text": "b", "category": "marketing"}),
            "category",
        ),
        (
            &key,
            json!({"to": ["a@example.com"], "subject": "s", "body_text": "b", "reply_to": ["r@example.com"]}),
            "reply_to",
        ),
        (
            &key,
            json!({"to": ["a@example.com"], "subject": "s", "body_text": "b", "body_html": "<p>b</p>"}),
            "body_html",
        ),
    ] {
        let refused = send(&server, caller, body).await;
        assert_eq!(refused.status, 400, "{}", refused.body);
        let detail = refused.body["detail"].as_str().expect("detail");
        assert!(detail.contains(says), "{detail}");
    }
    database
        .execute("UPDATE email_domains SET verified_at = NULL")
        .await;
    let unverified = send(&server, &key, plain("a@example.com")).await;
    assert_eq!(unverified.status, 400);
    assert!(unverified.body["detail"]
        .as_str()
        .expect("detail")
        .contains("not verified"));
    let (_, inbox) = get(&server, "/v1/email/inbox", &key).await;
    assert_eq!(inbox["items"], json!([]), "nothing refused was stored");
}

/// How many of `count` sends of `key` are accepted, one after the other.
async fn accepted_of(server: &Server, key: &str, count: usize) -> usize {
    let mut accepted = 0;
    for _ in 0..count {
        if send(server, key, plain("a@example.com")).await.status == 200 {
            accepted += 1;
        }
    }
    accepted
}

// Found by an outside attack: every agent `agentctl agents create` made shared the sponsor
// `default`, whose one bucket let one agent's flood turn away 29 of another's 30 sends.
#[tokio::test]
async fn one_agents_flood_takes_only_its_share_of_the_sponsors_sends() {
    let database = TestDatabase::new().await;
    let server = email_server(
        &database,
        &[
            ("EMAIL_SEND_RATE_PER_MINUTE", "1"),
            ("EMAIL_SEND_BURST", "15"),
            ("EMAIL_AGENT_SEND_RATE_PER_MINUTE", "1"),
            ("EMAIL_AGENT_SEND_BURST", "10"),
        ],
    )
    .await;
    let (flooder, _) = email_agent(&database, "acme").await;
    let (other, _) = email_agent(&database, "acme").await;
    assert_eq!(accepted_of(&server, &flooder, 30).await, 10, "its share");
    assert_eq!(
        accepted_of(&server, &other, 10).await,
        5,
        "the rest of the sponsor's 15 is left to the others"
    );
    let (unnamed, _) = create_agent(&database, &["--email"]).await;
    let (unnamed_too, _) = create_agent(&database, &["--email"]).await;
    assert_eq!(accepted_of(&server, &unnamed, 30).await, 10);
    assert_eq!(
        accepted_of(&server, &unnamed_too, 10).await,
        10,
        "an agent made without a sponsor shares none"
    );
}

#[tokio::test]
async fn the_send_rate_is_shared_by_a_sponsors_agents_and_a_throttled_send_stores_nothing() {
    let database = TestDatabase::new().await;
    let server = email_server(
        &database,
        &[
            ("EMAIL_SEND_RATE_PER_MINUTE", "1"),
            ("EMAIL_SEND_BURST", "3"),
        ],
    )
    .await;
    let (first, _) = email_agent(&database, "acme").await;
    let (second, _) = email_agent(&database, "acme").await;
    let (other_sponsor, _) = email_agent(&database, "globex").await;
    for key in [&first, &second, &first] {
        assert_eq!(send(&server, key, plain("a@example.com")).await.status, 200);
    }
    let throttled = send(&server, &second, plain("a@example.com")).await;
    assert_eq!(throttled.status, 429, "{}", throttled.body);
    assert_eq!(throttled.retry_after.as_deref(), Some("5"));
    assert!(throttled.body["detail"].is_string());
    let (_, inbox) = get(&server, "/v1/email/inbox", &second).await;
    assert_eq!(
        inbox["items"].as_array().expect("items").len(),
        1,
        "the throttled send stored nothing"
    );
    assert_eq!(
        send(&server, &other_sponsor, plain("a@example.com"))
            .await
            .status,
        200,
        "another sponsor has its own rate"
    );
}

#[tokio::test]
async fn an_idempotency_key_replays_the_same_message_and_refuses_another_body() {
    let database = TestDatabase::new().await;
    let server = email_server(&database, &[]).await;
    let (key, _) = email_agent(&database, "acme").await;
    let body = plain("once@example.com");
    let first = post(&server, "/v1/email/send", &key, &body, Some("order-42")).await;
    assert_eq!(first.status, 200);
    assert!(!first.replayed);
    let again = post(&server, "/v1/email/send", &key, &body, Some("order-42")).await;
    assert_eq!(again.status, 200);
    assert!(again.replayed);
    assert_eq!(again.body["data"]["id"], first.body["data"]["id"]);
    let other = post(
        &server,
        "/v1/email/send",
        &key,
        &plain("twice@example.com"),
        Some("order-42"),
    )
    .await;
    assert_eq!(other.status, 409, "{}", other.body);
    let bad_key = post(
        &server,
        "/v1/email/send",
        &key,
        &body,
        Some(&"k".repeat(300)),
    )
    .await;
    assert_eq!(bad_key.status, 422);
    assert_eq!(
        locs(&bad_key.body),
        vec![json!(["header", "idempotency-key"])]
    );
    let id = first.body["data"]["id"].as_str().expect("id");
    message_reaching(&server, &key, id, "sent").await;
    assert_eq!(sandbox_outbox(&database, "once@example.com").await.len(), 1);
}

#[tokio::test]
async fn a_refusal_fails_the_message_with_its_reason_and_a_long_outage_gives_up() {
    let database = TestDatabase::new().await;
    let api = FakeMailApi::start().await;
    let refusing = email_server(
        &database,
        &[
            ("EMAIL_PROVIDER", "resend"),
            ("RESEND_API_KEY", "re_test_key"),
            ("RESEND_BASE_URL", api.url.as_str()),
        ],
    )
    .await;
    let (key, _) = email_agent(&database, "acme").await;
    api.refuse_everything();
    let answer = send(&refusing, &key, plain("a@example.com")).await;
    let id = answer.body["data"]["id"].as_str().expect("id");
    let failed = message_reaching(&refusing, &key, id, "failed").await;
    let reason = failed["failure_reason"].as_str().expect("a reason");
    assert!(reason.contains("The to address is invalid"), "{reason}");
    drop(refusing);

    // Nothing listens on port 9: every hand-off is a transient failure, until the message is old
    // enough to give up on.
    let unreachable = email_server(
        &database,
        &[
            ("EMAIL_PROVIDER", "resend"),
            ("RESEND_API_KEY", "re_test_key"),
            ("RESEND_BASE_URL", "http://127.0.0.1:9"),
            ("EMAIL_GIVE_UP_AFTER_SECS", "1"),
        ],
    )
    .await;
    let answer = send(&unreachable, &key, plain("a@example.com")).await;
    let id = answer.body["data"]["id"].as_str().expect("id");
    let failed = message_reaching(&unreachable, &key, id, "failed").await;
    let reason = failed["failure_reason"].as_str().expect("a reason");
    assert!(reason.starts_with("gave up after"), "{reason}");
}

#[tokio::test]
async fn signed_inbound_mail_is_stored_once_and_bad_signatures_are_401() {
    let database = TestDatabase::new().await;
    let server = email_server(
        &database,
        &[("EMAIL_WEBHOOK_SECRETS", &format!("{SECRET},{ROTATED_IN}"))],
    )
    .await;
    let (key, address) = email_agent(&database, "acme").await;
    let mail = raw_mail(
        "alice@example.org",
        &address,
        "Your sign-in code",
        "<m-1@example.org>",
        "Your verification code is 385 920. It expires in 10 minutes.",
    );
    let (status, stored) =
        webhook_signed(&server, SECRET, "msg_1", now(), "message/rfc822", &mail).await;
    assert_eq!(status, 200, "{stored}");
    let (status, again) =
        webhook_signed(&server, SECRET, "msg_1", now(), "message/rfc822", &mail).await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["duplicates"], 1);
    let (status, rotated) =
        webhook_signed(&server, ROTATED_IN, "msg_1", now(), "message/rfc822", &mail).await;
    assert_eq!(
        status, 200,
        "the rotated-in secret is accepted too: {rotated}"
    );

    let (_, inbox) = get(&server, "/v1/email/inbox?direction=inbound", &key).await;
    let items = inbox["items"].as_array().expect("items");
    assert_eq!(items.len(), 1, "stored once: {inbox}");
    let message = &items[0];
    assert_eq!(message["status"], "received");
    assert_eq!(message["direction"], "inbound");
    assert_eq!(message["from"], "alice@example.org");
    assert!(message["received_at"].is_string());
    assert!(message["sent_at"].is_null());
    assert_eq!(message["internet_message_id"], "<m-1@example.org>");
    assert!(message["parsed_data"]["verification_codes"].is_array());

    let stale = now() - 6 * 60;
    let future = now() + 6 * 60;
    for (secret, timestamp, body) in [
        (
            "whsec_bm90LXRoZS1zZWNyZXQtb2YtdGhpcy1zZXJ2aWNl",
            now(),
            mail.clone(),
        ),
        (SECRET, stale, mail.clone()),
        (SECRET, future, mail.clone()),
    ] {
        let (status, refused) =
            webhook_signed(&server, secret, "msg_2", timestamp, "message/rfc822", &body).await;
        assert_eq!(status, 401, "{refused}");
    }
    let signature = email::sign(SECRET, "msg_3", now(), &mail);
    let mut tampered = mail.clone();
    tampered.extend_from_slice(b"P.S. send the money elsewhere\r\n");
    let response = server
        .client
        .post(server.url(WEBHOOK))
        .header("webhook-id", "msg_3")
        .header("webhook-timestamp", now().to_string())
        .header("webhook-signature", signature)
        .body(tampered)
        .send()
        .await
        .expect("request");
    assert_eq!(response.status().as_u16(), 401);
    let unsigned = server
        .client
        .post(server.url(WEBHOOK))
        .body(mail.clone())
        .send()
        .await
        .expect("request");
    assert_eq!(unsigned.status().as_u16(), 401);

    let stranger = raw_mail(
        "a@example.org",
        "nobody@elsewhere.example",
        "s",
        "<m-9@x>",
        "b",
    );
    let (status, ignored) =
        webhook_signed(&server, SECRET, "msg_9", now(), "message/rfc822", &stranger).await;
    assert_eq!(status, 202, "{ignored}");
}

#[tokio::test]
async fn the_providers_json_event_is_taken_in_and_routed_by_recipient() {
    let database = TestDatabase::new().await;
    let server = email_server(&database, &[]).await;
    let (key, address) = email_agent(&database, "acme").await;
    let (other_key, _) = email_agent(&database, "acme").await;
    let event = json!({
        "type": "email.received",
        "created_at": "2026-11-22T10:00:00.000Z",
        "data": {
            "email_id": "4ef9a417-02e9-4d39-ad75-9611e0fcc33c",
            "created_at": "2026-11-22T10:00:00.000Z",
            "from": "Acme Billing <billing@acme.example>",
            "to": [address],
            "cc": [],
            "subject": "Invoice 2026-11",
            "message_id": "<invoice-2026-11@acme.example>",
            "text": "Your invoice is attached.",
            "html": "<p>Your invoice is attached.</p>",
            "attachments": []
        }
    });
    let body = serde_json::to_vec(&event).expect("json");
    let (status, stored) =
        webhook_signed(&server, SECRET, "evt_1", now(), "application/json", &body).await;
    assert_eq!(status, 200, "{stored}");
    let (_, inbox) = get(&server, "/v1/email/inbox", &key).await;
    let message = &inbox["items"][0];
    assert_eq!(
        message["provider_message_id"],
        "4ef9a417-02e9-4d39-ad75-9611e0fcc33c"
    );
    assert_eq!(message["from"], "billing@acme.example");
    assert_eq!(message["subject"], "Invoice 2026-11");
    let (_, other) = get(&server, "/v1/email/inbox", &other_key).await;
    assert_eq!(other["items"], json!([]), "nothing leaks to another inbox");
}

#[tokio::test]
async fn a_reply_goes_to_the_sender_in_the_same_thread_with_threading_headers() {
    let database = TestDatabase::new().await;
    let server = email_server(&database, &[]).await;
    let (key, address) = email_agent(&database, "acme").await;
    let mail = raw_mail(
        "alice@example.org",
        &address,
        "Lunch on Friday?",
        "<lunch-1@example.org>",
        "Are you free?",
    );
    let (status, stored) =
        webhook_signed(&server, SECRET, "msg_l", now(), "message/rfc822", &mail).await;
    assert_eq!(status, 200, "{stored}");
    let source = stored["stored"][0].as_str().expect("stored id").to_owned();

    let reply = post(
        &server,
        &format!("/v1/email/reply/{source}"),
        &key,
        &json!({"body_text": "Yes, noon works."}),
        None,
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let data = &reply.body["data"];
    assert_eq!(data["status"], "queued");
    assert_eq!(data["to"], json!(["alice@example.org"]));
    assert_eq!(data["subject"], "Re: Lunch on Friday?");
    let (_, original) = get(&server, &format!("/v1/email/messages/{source}"), &key).await;
    assert_eq!(data["thread_id"], original["thread_id"]);
    message_reaching(&server, &key, data["id"].as_str().expect("id"), "sent").await;
    let handed = sandbox_outbox(&database, "alice@example.org").await;
    assert_eq!(handed[0]["in_reply_to"], "<lunch-1@example.org>");
    assert_eq!(handed[0]["references"], json!(["<lunch-1@example.org>"]));

    // Alice answers the reply: it joins the thread, and a reply to it is not "Re: Re:".
    let answer = format!(
        "From: alice@example.org\r\nTo: {address}\r\nSubject: Re: Lunch on Friday?\r\n\
         Message-ID: <lunch-2@example.org>\r\nIn-Reply-To: {id}\r\nReferences: <lunch-1@example.org> {id}\r\n\r\nGreat!\r\n",
        id = handed[0]["internet_message_id"].as_str().expect("id")
    );
    let (_, stored) = webhook_signed(
        &server,
        SECRET,
        "msg_l2",
        now(),
        "message/rfc822",
        answer.as_bytes(),
    )
    .await;
    let second = stored["stored"][0].as_str().expect("stored").to_owned();
    let (_, joined) = get(&server, &format!("/v1/email/messages/{second}"), &key).await;
    assert_eq!(joined["thread_id"], original["thread_id"]);
    let again = post(
        &server,
        &format!("/v1/email/reply/{second}"),
        &key,
        &json!({"body_text": "See you."}),
        None,
    )
    .await;
    assert_eq!(again.body["data"]["subject"], "Re: Lunch on Friday?");

    let outbound = data["id"].as_str().expect("id");
    let not_inbound = post(
        &server,
        &format!("/v1/email/reply/{outbound}"),
        &key,
        &json!({"body_text": "x"}),
        None,
    )
    .await;
    assert_eq!(not_inbound.status, 400, "{}", not_inbound.body);
    let (other_key, _) = email_agent(&database, "acme").await;
    for (caller, id) in [
        (&other_key, source.as_str()),
        (&key, "01a20000-0000-7000-8000-000000000000"),
        (&key, "not-an-id"),
    ] {
        let missing = post(
            &server,
            &format!("/v1/email/reply/{id}"),
            caller,
            &json!({"body_text": "x"}),
            None,
        )
        .await;
        assert_eq!(missing.status, 404, "{id}: {}", missing.body);
    }
    let (no_inbox, _) = create_agent(&database, &[]).await;
    let refused = post(
        &server,
        &format!("/v1/email/reply/{source}"),
        &no_inbox,
        &json!({"body_text": "x"}),
        None,
    )
    .await;
    assert_eq!(refused.status, 400);
}

#[tokio::test]
async fn the_inbox_pages_by_cursor_filters_by_direction_and_never_shows_another_agents_mail() {
    let database = TestDatabase::new().await;
    let server = email_server(
        &database,
        &[
            ("EMAIL_SEND_BURST", "100"),
            ("EMAIL_AGENT_SEND_BURST", "100"),
        ],
    )
    .await;
    let (key, address) = email_agent(&database, "acme").await;
    let (other_key, _) = email_agent(&database, "acme").await;
    for n in 0..5 {
        assert_eq!(
            send(&server, &key, plain(&format!("r{n}@example.com")))
                .await
                .status,
            200
        );
    }
    for n in 0..3 {
        let mail = raw_mail("a@example.org", &address, "in", &format!("<in-{n}@x>"), "b");
        let (status, _) = webhook_signed(
            &server,
            SECRET,
            &format!("w{n}"),
            now(),
            "message/rfc822",
            &mail,
        )
        .await;
        assert_eq!(status, 200);
    }
    let mut seen = Vec::new();
    let mut path = "/v1/email/inbox?limit=3".to_owned();
    loop {
        let (status, page) = get(&server, &path, &key).await;
        assert_eq!(status, 200, "{page}");
        for item in page["items"].as_array().expect("items") {
            seen.push((
                item["created_at"].as_str().expect("time").to_owned(),
                item["id"].as_str().expect("id").to_owned(),
            ));
        }
        match page["next_cursor"].as_str() {
            Some(cursor) => path = format!("/v1/email/inbox?limit=3&cursor={cursor}"),
            None => break,
        }
    }
    assert_eq!(seen.len(), 8);
    let mut newest_first = seen.clone();
    newest_first.sort_by(|a, b| b.cmp(a));
    assert_eq!(seen, newest_first);

    let (_, inbound) = get(&server, "/v1/email/inbox?direction=inbound", &key).await;
    assert_eq!(inbound["items"].as_array().expect("items").len(), 3);
    let (_, outbound) = get(
        &server,
        "/v1/email/inbox?direction=outbound&limit=100",
        &key,
    )
    .await;
    assert_eq!(outbound["items"].as_array().expect("items").len(), 5);

    for (path, status) in [
        ("/v1/email/inbox?cursor=bogus", 400),
        ("/v1/email/inbox?limit=0", 422),
        ("/v1/email/inbox?limit=101", 422),
        ("/v1/email/inbox?direction=sideways", 422),
    ] {
        assert_eq!(get(&server, path, &key).await.0, status, "{path}");
    }
    let (_, first_page) = get(&server, "/v1/email/inbox?limit=3", &key).await;
    let cursor = first_page["next_cursor"].as_str().expect("cursor");
    let (status, _) = get(
        &server,
        &format!("/v1/email/inbox?cursor={cursor}"),
        &other_key,
    )
    .await;
    assert_eq!(status, 400, "a cursor is bound to its agent");

    let (_, others) = get(&server, "/v1/email/inbox", &other_key).await;
    assert_eq!(others["items"], json!([]));
    let mine = &seen[0].1;
    let (status, body) = get(&server, &format!("/v1/email/messages/{mine}"), &other_key).await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(get(&server, "/v1/email/messages/nope", &key).await.0, 404);
    let (no_inbox, _) = create_agent(&database, &[]).await;
    assert_eq!(get(&server, "/v1/email/inbox", &no_inbox).await.0, 400);
    assert_eq!(
        get(&server, &format!("/v1/email/messages/{mine}"), &no_inbox)
            .await
            .0,
        400
    );
}

#[tokio::test]
async fn agentctl_delivers_sandbox_mail_through_ingestion_with_its_codes() {
    let database = TestDatabase::new().await;
    let server = email_server(&database, &[]).await;
    let (key, address) = email_agent(&database, "acme").await;
    let delivered = agentctl(
        &database,
        &[
            "sandbox",
            "email",
            "--to",
            &address,
            "--from",
            "noreply@github.example",
            "--subject",
            "[GitHub] Please verify your device",
            "--text",
            "Verification code: 719302\n\nIf you did not try to sign in, change your password.",
        ],
    )
    .await
    .json();
    let id = delivered["delivered"][0]["id"].as_str().expect("id");
    let (_, message) = get(&server, &format!("/v1/email/messages/{id}"), &key).await;
    assert_eq!(message["status"], "received");
    assert_eq!(message["parsed_data"]["verification_codes"][0], "719302");

    let nobody = agentctl(
        &database,
        &[
            "sandbox",
            "email",
            "--to",
            "nobody@inbox.agent-runtime.test",
            "--from",
            "a@b.example",
            "--subject",
            "s",
            "--text",
            "t",
        ],
    )
    .await;
    assert!(!nobody.success);
    assert!(nobody.stderr.contains("no inbox"), "{}", nobody.stderr);
}

#[tokio::test]
async fn a_key_whose_first_send_is_still_in_flight_is_409_at_once() {
    let database = TestDatabase::new().await;
    let server = email_server(&database, &[("DATABASE_LOCK_TIMEOUT_MS", "20000")]).await;
    let (key, _) = email_agent(&database, "acme").await;
    // A first send makes the sponsor's bucket; holding its row makes the next sends wait there,
    // one of them holding the idempotency key.
    assert_eq!(
        send(&server, &key, plain("a@example.com")).await.status,
        200
    );
    let bucket = database
        .hold("SELECT * FROM rate_limit_buckets FOR UPDATE")
        .await;
    let body = plain("keyed@example.com");
    let keyed = |server: &Server| {
        let request = server
            .client
            .post(server.url("/v1/email/send"))
            .bearer_auth(&key)
            .header("Idempotency-Key", "invoice-7")
            .json(&body);
        tokio::spawn(async move { read(request.send().await.expect("request")).await })
    };
    let mut sends = vec![keyed(&server), keyed(&server)];
    let (first_done, index, _) = futures_util::future::select_all(sends.iter_mut()).await;
    let (status, detail) = first_done.expect("send task");
    assert_eq!(status, 409, "{detail}");
    drop(bucket);
    let (status, sent) = sends.remove(1 - index).await.expect("send task");
    assert_eq!(status, 200, "{sent}");
}

#[tokio::test]
async fn a_ten_megabyte_message_with_an_attachment_comes_in_through_the_webhook() {
    let database = TestDatabase::new().await;
    let server = email_server(&database, &[]).await;
    let (key, address) = email_agent(&database, "acme").await;
    let attachment = vec![b'A'; 7 * 1024 * 1024];
    let encoded: Vec<String> = base64_lines(&attachment);
    let mail = format!(
        "From: scanner@example.org\r\nTo: {address}\r\nSubject: Scan\r\nMessage-ID: <scan-1@example.org>\r\n\
         MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n\
         --b1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nThe scan is attached.\r\n\
         --b1\r\nContent-Type: application/pdf; name=\"scan.pdf\"\r\n\
         Content-Disposition: attachment; filename=\"scan.pdf\"\r\nContent-Transfer-Encoding: base64\r\n\r\n\
         {}\r\n--b1--\r\n",
        encoded.join("\r\n")
    );
    assert!(mail.len() > 9_500_000, "{}", mail.len());
    let (status, stored) = webhook_signed(
        &server,
        SECRET,
        "msg_big",
        now(),
        "message/rfc822",
        mail.as_bytes(),
    )
    .await;
    assert_eq!(status, 200, "{stored}");
    let id = stored["stored"][0].as_str().expect("stored id");
    let (_, message) = get(&server, &format!("/v1/email/messages/{id}"), &key).await;
    assert_eq!(message["text"], "The scan is attached.");
    let attachments = message["attachments"].as_array().expect("attachments");
    assert_eq!(attachments.len(), 1);
    assert_eq!(attachments[0]["filename"], "scan.pdf");
    assert_eq!(attachments[0]["content_type"], "application/pdf");
    assert_eq!(attachments[0]["size"], attachment.len());
    assert_eq!(attachments[0]["stored"], true);
    let response = server
        .client
        .get(server.url(&format!("/v1/email/messages/{id}/attachments/att_1")))
        .bearer_auth(&key)
        .send()
        .await
        .expect("download");
    assert_eq!(response.status(), 200);
    let downloaded = response.bytes().await.expect("bytes");
    assert!(downloaded == attachment, "the 7 MiB come back as sent");
}

/// Base64 in the 76-character lines of MIME.
fn base64_lines(bytes: &[u8]) -> Vec<String> {
    use base64::Engine as _;
    let text = base64::engine::general_purpose::STANDARD.encode(bytes);
    text.as_bytes()
        .chunks(76)
        .map(|line| String::from_utf8_lossy(line).into_owned())
        .collect()
}

#[test]
fn agentctl_extracts_codes_from_stdin_without_a_database() {
    use std::io::Write as _;
    use std::process::{Command, Stdio};
    let mut child = Command::new(crate::support::harness::binary("agentctl"))
        .env_clear()
        .args(["codes", "extract"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all("您的验证码是 385920，5分钟内有效。".as_bytes())
        .expect("write");
    let output = child.wait_with_output().expect("agentctl");
    assert!(output.status.success());
    let codes: Value = serde_json::from_slice(&output.stdout).expect("json");
    assert_eq!(codes, json!(["385920"]));
}

// Found by the fuzz run (make fuzz): a NUL character in a subject, a body or a header value was
// a 500, PostgreSQL refusing to store it. Mail cannot carry NUL (RFC 5322), so it is a 422.
#[tokio::test]
async fn a_nul_character_in_the_text_of_a_mail_is_422_and_stores_nothing() {
    let database = TestDatabase::new().await;
    let server = email_server(&database, &[]).await;
    let (key, _) = email_agent(&database, "acme").await;
    for (body, loc) in [
        (
            json!({"to": ["bob@example.org"], "subject": "a\u{0}b", "body_text": "Hi"}),
            json!(["body", "subject"]),
        ),
        (
            json!({"to": ["bob@example.org"], "subject": "Hi", "body_text": "a\u{0}b"}),
            json!(["body", "body_text"]),
        ),
        (
            json!({"to": ["bob@example.org"], "subject": "Hi", "body_text": "Hi",
                   "headers": {"X-Campaign": "a\u{0}b"}}),
            json!(["body", "headers", "X-Campaign"]),
        ),
    ] {
        let refused = send(&server, &key, body.clone()).await;
        assert_eq!(refused.status, 422, "{body}: {}", refused.body);
        assert_eq!(locs(&refused.body), vec![loc], "{}", refused.body);
    }
    let reply = post(
        &server,
        "/v1/email/reply/any-message",
        &key,
        &json!({"body_text": "a\u{0}b"}),
        None,
    )
    .await;
    assert_eq!(reply.status, 422, "{}", reply.body);
    assert_eq!(locs(&reply.body), vec![json!(["body", "body_text"])]);
    assert!(sandbox_outbox(&database, "bob@example.org")
        .await
        .is_empty());
    let (status, inbox) = get(&server, "/v1/email/inbox", &key).await;
    assert_eq!((status, inbox["items"].clone()), (200, json!([])));
}

/// The first page of the inbox, read on `server` until its newest message has `status`.
async fn first_page_reaching(server: &Server, key: &str, status: &str) -> Value {
    let started = Instant::now();
    loop {
        let (code, page) = get(server, "/v1/email/inbox", key).await;
        assert_eq!(code, 200, "{page}");
        if page["items"][0]["status"] == status {
            return page;
        }
        assert!(
            started.elapsed() < DEADLINE,
            "the newest message never showed {status}: {page}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_first_page_read_again_shows_every_change_since_on_every_instance() {
    let database = TestDatabase::new().await;
    let first = email_server(&database, &[]).await;
    let second = email_server(&database, &[("EMAIL_OUTBOX_ENABLED", "false")]).await;
    let (key, address) = email_agent(&database, "acme").await;
    // Each instance renders the empty page and keeps it.
    for server in [&first, &second] {
        for _ in 0..2 {
            let (status, page) = get(server, "/v1/email/inbox", &key).await;
            assert_eq!((status, &page["items"]), (200, &json!([])));
        }
    }

    let mail = raw_mail(
        "alice@example.org",
        &address,
        "Hello",
        "<page-1@example.org>",
        "Hi",
    );
    let (status, stored) =
        webhook_signed(&first, SECRET, "msg_page", now(), "message/rfc822", &mail).await;
    assert_eq!(status, 200, "{stored}");
    // The next read, on either instance, shows the mail: no wait for a notification.
    for server in [&second, &first] {
        let (_, page) = get(server, "/v1/email/inbox", &key).await;
        assert_eq!(page["items"].as_array().map(Vec::len), Some(1), "{page}");
        assert_eq!(page["items"][0]["status"], "received");
    }
    let (_, outbound_only) = get(&second, "/v1/email/inbox?direction=outbound", &key).await;
    assert_eq!(
        outbound_only["items"],
        json!([]),
        "each query keeps its own page"
    );

    // A send through the instance without an outbox: the other one hands it to the provider.
    let answer = send(&second, &key, plain("bob@example.com")).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    for server in [&second, &first] {
        let page = first_page_reaching(server, &key, "sent").await;
        assert_eq!(page["items"].as_array().map(Vec::len), Some(2), "{page}");
    }
}
