//! What outside senders can write, black-box: mail built to crash or bloat the server, text the
//! database cannot hold, forged routing and redelivery keys, webhooks refused before their body is
//! read, and Twilio forms altered under a valid signature. Each was found by an outside attack.

use std::time::Duration;

use serde_json::{json, Value};
use test_support::TestDatabase;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::email::{email_agent, email_server, get, now, raw_mail, webhook_signed, SECRET};
use crate::sms::{message_sid, phone_agent, twilio_params, twilio_server, twilio_webhook, TOKEN};
use crate::support::harness::Server;

/// Posts `raw` as inbound mail under the webhook id `id`, signed now.
async fn deliver(server: &Server, id: &str, raw: &[u8]) -> (u16, Value) {
    webhook_signed(server, SECRET, id, now(), "message/rfc822", raw).await
}

/// The inbox page of `key`, and the bytes of its answer.
async fn inbox(server: &Server, key: &str) -> (Value, usize) {
    let response = server
        .client
        .get(server.url("/v1/email/inbox?limit=100"))
        .bearer_auth(key)
        .send()
        .await
        .expect("request");
    assert_eq!(response.status().as_u16(), 200);
    let text = response.text().await.expect("text");
    let bytes = text.len();
    (serde_json::from_str(&text).expect("JSON"), bytes)
}

#[tokio::test]
async fn a_mail_nested_sixty_thousand_deep_is_stored_and_the_server_lives() {
    let database = TestDatabase::new().await;
    let server = email_server(&database, &[]).await;
    let (key, address) = email_agent(&database, "default").await;
    let mut raw = format!(
        "From: a@example.org\r\nTo: {address}\r\nSubject: nested\r\n\
         Content-Type: multipart/mixed; boundary=o\r\n\r\n--o\r\nContent-Type: text/plain\r\n\r\n\
         look inside\r\n--o\r\n"
    )
    .into_bytes();
    for _ in 0..60_000 {
        raw.extend_from_slice(b"Content-Type: message/rfc822\r\n\r\n");
    }
    raw.extend_from_slice(b"Subject: deep\r\n\r\nhello\r\n--o--\r\n");
    let (status, stored) = deliver(&server, "msg_nested", &raw).await;
    assert_eq!(status, 200, "{stored}");
    let (status, _) = server.get("/healthz", None).await;
    assert_eq!(status, 200, "the server is alive");
    let (page, _) = inbox(&server, &key).await;
    let message = &page["items"][0];
    assert_eq!(message["subject"], "nested");
    assert_eq!(message["attachments"][0]["content_type"], "message/rfc822");
}

#[tokio::test]
async fn a_mail_of_huge_headers_and_countless_attachments_is_stored_bounded() {
    let database = TestDatabase::new().await;
    let server = email_server(&database, &[]).await;
    let (key, address) = email_agent(&database, "default").await;
    let mut raw = format!("From: a@example.org\r\nTo: {address}\r\nSubject: heavy\r\n");
    raw.push_str(&format!("X-Huge: {}\r\n", "h".repeat(3 * 1024 * 1024)));
    raw.push_str("Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n\r\nhi\r\n");
    for n in 0..4_000 {
        raw.push_str(&format!(
            "--b\r\nContent-Type: application/octet-stream\r\n\
             Content-Disposition: attachment; filename=\"f{n}.bin\"\r\n\r\n\r\n"
        ));
    }
    raw.push_str("--b--\r\n");
    let (status, stored) = deliver(&server, "msg_heavy", raw.as_bytes()).await;
    assert_eq!(status, 200, "{stored}");
    let id = stored["stored"][0].as_str().expect("an id").to_owned();
    for n in 0..30 {
        let (status, _) = deliver(
            &server,
            &format!("msg_light_{n}"),
            &raw_mail("b@example.org", &address, "light", "<l@x>", "hi"),
        )
        .await;
        assert_eq!(status, 200);
    }
    let (page, bytes) = inbox(&server, &key).await;
    assert_eq!(page["items"].as_array().map(Vec::len), Some(31));
    assert!(bytes < 256 * 1024, "an inbox page of {bytes} bytes");
    let (status, message) = get(&server, &format!("/v1/email/messages/{id}"), &key).await;
    assert_eq!(status, 200);
    let attachments = message["attachments"].as_array().expect("a list").len();
    assert!(attachments <= 50, "{attachments} attachments kept");
    let huge = message["headers"]["X-Huge"].as_str().unwrap_or_default();
    assert!(huge.len() <= 4096, "a header of {} bytes kept", huge.len());
}

#[tokio::test]
async fn nul_characters_and_overlong_message_ids_are_stored_not_a_500() {
    let database = TestDatabase::new().await;
    let server = email_server(&database, &[]).await;
    let (key, address) = email_agent(&database, "default").await;
    let long_id = format!("<{}@example.org>", "i".repeat(3000));
    let mails = [
        format!(
            "From: a@example.org\r\nTo: {address}\r\nSubject: =?utf-8?q?code=00_482913?=\r\n\r\nhi\r\n"
        )
        .into_bytes(),
        format!(
            "From: a@example.org\r\nTo: {address}\r\nSubject: qp\r\n\
             Content-Transfer-Encoding: quoted-printable\r\n\r\nyour=00code 482913\r\n"
        )
        .into_bytes(),
        [
            format!("From: a@example.org\r\nTo: {address}\r\nX-Nul: a").into_bytes(),
            b"\0b\r\nSubject: raw\r\n\r\nraw\0body\r\n".to_vec(),
        ]
        .concat(),
        format!(
            "From: a@example.org\r\nTo: {address}\r\nSubject: named\r\n\
             Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n\r\nhi\r\n--b\r\n\
             Content-Disposition: attachment; filename*=utf-8''a%00b.txt\r\n\r\nx\r\n--b--\r\n"
        )
        .into_bytes(),
        raw_mail("a@example.org", &address, "long id", &long_id, "hi"),
    ];
    for (n, raw) in mails.iter().enumerate() {
        let (status, answer) = deliver(&server, &format!("msg_nul_{n}"), raw).await;
        assert_eq!(status, 200, "mail {n}: {answer}");
    }
    let (page, _) = inbox(&server, &key).await;
    assert_eq!(page["items"].as_array().map(Vec::len), Some(mails.len()));
    let long_webhook_id = "w".repeat(3000);
    let (status, answer) = deliver(
        &server,
        &long_webhook_id,
        &raw_mail("a@example.org", &address, "long webhook id", "<w@x>", "hi"),
    )
    .await;
    assert_eq!(status, 401, "an id no provider sends: {answer}");
}

#[tokio::test]
async fn a_message_id_sent_earlier_suppresses_nothing_and_forged_delivery_fields_route_nothing() {
    let database = TestDatabase::new().await;
    let server = email_server(&database, &[]).await;
    let (attacker, attacker_address) = email_agent(&database, "default").await;
    let (victim, victim_address) = email_agent(&database, "default").await;
    let forged = raw_mail(
        "a@evil.example",
        &victim_address,
        "first",
        "<expected@bank.example>",
        "Your code is 111111",
    );
    let (status, _) = deliver(&server, "msg_forged", &forged).await;
    assert_eq!(status, 200);
    let real = raw_mail(
        "noreply@bank.example",
        &victim_address,
        "real",
        "<expected@bank.example>",
        "Your code is 222222",
    );
    let (status, stored) = deliver(&server, "msg_real", &real).await;
    assert_eq!(
        (status, stored["stored"].as_array().map(Vec::len)),
        (200, Some(1))
    );
    let (page, _) = inbox(&server, &victim).await;
    let subjects: Vec<&str> = page["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|item| item["subject"].as_str())
        .collect();
    assert_eq!(subjects, ["real", "first"]);
    let routed = format!(
        "Delivered-To: {victim_address}\r\nFrom: a@evil.example\r\nTo: {attacker_address}\r\n\
         Subject: sideways\r\n\r\nYour code is 333333\r\n"
    );
    let (status, _) = deliver(&server, "msg_sideways", routed.as_bytes()).await;
    assert_eq!(status, 200);
    let (page, _) = inbox(&server, &victim).await;
    assert_eq!(page["items"].as_array().map(Vec::len), Some(2), "{page}");
    let (page, _) = inbox(&server, &attacker).await;
    assert_eq!(page["items"][0]["subject"], "sideways");
}

/// Sends `head` and nothing of the body it announces; what the server answers, within a deadline.
async fn answer_without_body(server: &Server, head: &str) -> String {
    let address = server.base_url.trim_start_matches("http://");
    let mut stream = TcpStream::connect(address).await.expect("connect");
    stream.write_all(head.as_bytes()).await.expect("write");
    let mut answer = vec![0_u8; 4096];
    let read = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut answer))
        .await
        .expect("answered before the body came")
        .expect("read");
    String::from_utf8_lossy(&answer[..read]).into_owned()
}

#[tokio::test]
async fn webhooks_without_a_possible_signature_are_refused_before_their_body_is_read() {
    let database = TestDatabase::new().await;
    let mut settings = crate::sms::TWILIO_UNREACHABLE.to_vec();
    settings.push(("EMAIL_WEBHOOK_SECRETS", SECRET));
    let server = Server::start_on(&database, &settings).await;
    let length = 40 * 1024 * 1024;
    let stale = now() - 3600;
    for headers in [
        String::new(),
        format!(
            "webhook-id: m1\r\nwebhook-timestamp: {}\r\nwebhook-signature: v1,AAAA\r\n",
            now()
        ),
        format!(
            "webhook-id: m1\r\nwebhook-timestamp: {stale}\r\nwebhook-signature: v1,{}\r\n",
            "A".repeat(43) + "="
        ),
    ] {
        let answer = answer_without_body(
            &server,
            &format!(
                "POST /webhooks/email/inbound HTTP/1.1\r\nHost: x\r\n{headers}\
                 Content-Type: message/rfc822\r\nContent-Length: {length}\r\n\r\n"
            ),
        )
        .await;
        assert!(answer.starts_with("HTTP/1.1 401"), "{headers}: {answer}");
    }
    let answer = answer_without_body(
        &server,
        "POST /webhooks/sms/twilio HTTP/1.1\r\nHost: x\r\nX-Twilio-Signature: nope\r\n\
         Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 60000\r\n\r\n",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
}

#[tokio::test]
async fn a_twilio_form_with_two_fields_merged_under_its_signature_is_refused() {
    let database = TestDatabase::new().await;
    let server = twilio_server(&database, &[]).await;
    let (key, number) = phone_agent(&database).await;
    let sid = message_sid(7);
    let params = twilio_params(&sid, "+15550001111", &number, "Your code is 482913");
    let delivered = twilio_webhook(&server, TOKEN, &params).await;
    assert_eq!(delivered.status().as_u16(), 200);
    // `MessageSid` swallows `NumMedia`: the names and values written together are the same, so
    // the signature still matches.
    let merged: Vec<(String, String)> = params
        .iter()
        .filter(|(name, _)| name != "NumMedia")
        .map(|(name, value)| match name.as_str() {
            "MessageSid" => (name.clone(), format!("{value}NumMedia0")),
            _ => (name.clone(), value.clone()),
        })
        .collect();
    let replayed = twilio_webhook(&server, TOKEN, &merged).await;
    assert_eq!(replayed.status().as_u16(), 400);
    let unknown = [
        params.clone(),
        vec![("Injected".to_owned(), "1".to_owned())],
    ]
    .concat();
    let refused = twilio_webhook(&server, TOKEN, &unknown).await;
    assert_eq!(refused.status().as_u16(), 400);
    let nul = twilio_params(&message_sid(8), "+15550001111", &number, "code\0 123456");
    let stored = twilio_webhook(&server, TOKEN, &nul).await;
    assert_eq!(stored.status().as_u16(), 200, "a NUL in the body is no 500");
    let (status, history) = get(&server, "/v1/sms/messages", &key).await;
    assert_eq!(status, 200);
    assert_eq!(history.as_array().map(Vec::len), Some(2), "{history}");
    assert_eq!(
        json!(history[0]["raw_payload"]["raw_message"]),
        json!("code\u{fffd} 123456")
    );
}

/// A mail to `to` from `from` saying `text`, with `results` as the receiving side's
/// `Authentication-Results` (above its `Received`) when given.
fn mail_with_results(from: &str, to: &str, text: &str, results: Option<&str>) -> Vec<u8> {
    let results = results.map_or(String::new(), |results| {
        format!("Authentication-Results: mx.inbox.example; {results}\r\n")
    });
    format!(
        "{results}Received: by mx.inbox.example\r\nFrom: {from}\r\nTo: {to}\r\n\
         Subject: Sign in\r\n\r\n{text}\r\n"
    )
    .into_bytes()
}

async fn wait_email(server: &Server, key: &str, service: &str) -> (u16, Value) {
    let response = server
        .client
        .post(server.url("/v1/codes/wait"))
        .bearer_auth(key)
        .json(&json!({"timeout": 0, "service_name": service, "channels": ["email"]}))
        .send()
        .await
        .expect("request");
    crate::support::harness::read(response).await
}

// Found by an outside attack: a mail from no-reply@evil.example saying "Your Google verification
// code is 666999" satisfied a wait for "Google".
#[tokio::test]
async fn a_named_service_is_bound_to_the_senders_authenticated_domain() {
    let database = TestDatabase::new().await;
    let server = email_server(&database, &[]).await;
    let (key, address) = email_agent(&database, "default").await;
    let forged = mail_with_results(
        "no-reply@evil.example",
        &address,
        "Your Google verification code is 666999",
        Some("dkim=pass header.d=evil.example; dmarc=pass header.from=evil.example"),
    );
    assert_eq!(deliver(&server, "msg_forged_google", &forged).await.0, 200);
    let (status, answer) = wait_email(&server, &key, "Google").await;
    assert_eq!(status, 408, "evil.example is not Google's: {answer}");
    let genuine = mail_with_results(
        "no-reply@accounts.google.com",
        &address,
        "Your Google verification code is 482913",
        Some("dkim=pass header.i=@accounts.google.com; dmarc=pass header.from=google.com"),
    );
    assert_eq!(deliver(&server, "msg_google", &genuine).await.0, 200);
    let (status, answer) = wait_email(&server, &key, "Google").await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        (
            &answer["code"],
            &answer["sender_authenticated"],
            &answer["authenticated_domain"]
        ),
        (
            &json!("482913"),
            &json!(true),
            &json!("accounts.google.com")
        )
    );
    let unreported = mail_with_results(
        "no-reply@evil.example",
        &address,
        "Your Google verification code is 777888",
        None,
    );
    assert_eq!(deliver(&server, "msg_unreported", &unreported).await.0, 200);
    let (status, answer) = wait_email(&server, &key, "Google").await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        (
            &answer["code"],
            &answer["sender_authenticated"],
            &answer["from"]
        ),
        (
            &json!("777888"),
            &json!(false),
            &json!("no-reply@evil.example")
        ),
        "without results the name is a hint, and the answer says so"
    );
    let (status, answer) = wait_email(&server, &key, "").await;
    assert_eq!(
        (status, &answer["code"]),
        (200, &json!("666999")),
        "a wait naming no service takes any"
    );
}

#[tokio::test]
async fn an_sms_sender_id_must_name_the_wanted_service() {
    let database = TestDatabase::new().await;
    let server = twilio_server(&database, &[]).await;
    let (key, number) = phone_agent(&database).await;
    let wait = |service: &'static str| {
        let request = server
            .client
            .post(server.url("/v1/sms/wait-for-code"))
            .bearer_auth(&key)
            .json(&json!({"timeout": 0, "service_name": service}));
        async move { crate::support::harness::read(request.send().await.expect("request")).await }
    };
    let forged = twilio_params(
        &message_sid(30),
        "EVILCO",
        &number,
        "Your Google code is 123456",
    );
    assert_eq!(
        twilio_webhook(&server, TOKEN, &forged)
            .await
            .status()
            .as_u16(),
        200
    );
    assert_eq!(wait("Google").await.0, 408, "EVILCO is not Google");
    let genuine = twilio_params(
        &message_sid(31),
        "GOOGLE",
        &number,
        "G-654321 is your Google code",
    );
    assert_eq!(
        twilio_webhook(&server, TOKEN, &genuine)
            .await
            .status()
            .as_u16(),
        200
    );
    let (status, answer) = wait("Google").await;
    assert_eq!(
        (status, &answer["code"]),
        (200, &json!("654321")),
        "{answer}"
    );
}

// Found by an outside attack: a reply's subject carried the CR LF decoded from the inbound one,
// which would end the header and start another.
#[tokio::test]
async fn a_reply_subject_built_from_an_inbound_one_stays_one_line() {
    let database = TestDatabase::new().await;
    let server = email_server(&database, &[]).await;
    let (key, address) = email_agent(&database, "default").await;
    let raw = format!(
        "From: a@example.org\r\nTo: {address}\r\n\
         Subject: =?utf-8?q?Hi=0D=0ABcc:_victim@example.com?=\r\n\r\nhello\r\n"
    );
    let (status, stored) = deliver(&server, "msg_crlf_subject", raw.as_bytes()).await;
    assert_eq!(status, 200, "{stored}");
    let id = stored["stored"][0].as_str().expect("an id");
    let reply = crate::email::post(
        &server,
        &format!("/v1/email/reply/{id}"),
        &key,
        &json!({"body_text": "Thanks"}),
        None,
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        reply.body["data"]["subject"],
        "Re: Hi Bcc: victim@example.com"
    );
}

#[tokio::test]
async fn a_body_of_countless_tiny_items_is_refused_before_it_is_parsed() {
    let database = TestDatabase::new().await;
    let server = email_server(&database, &[]).await;
    let (key, _) = email_agent(&database, "acme").await;
    // 8 MiB of `0,`: parsed, some 200 MiB of values; refused on its count of items.
    let zeros = format!("{{\"to\":[{}0]}}", "0,".repeat(4 * 1024 * 1024));
    let response = server
        .client
        .post(server.url("/v1/email/send"))
        .bearer_auth(&key)
        .header("content-type", "application/json")
        .body(zeros)
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), 422);
    let body: Value = response.json().await.expect("JSON");
    assert_eq!(body["detail"][0]["loc"], json!(["body"]), "{body}");
    let msg = body["detail"][0]["msg"].as_str().expect("msg");
    assert!(msg.contains("JSON items"), "{msg}");

    // A refusal echoes a bounded input: a missing name beside 3 MB of base64 is no 4 MB answer.
    let bulky = json!({
        "to": ["ada@example.org"], "subject": "s", "body_text": "t",
        "attachments": [{"content_base64": "QUFB".repeat(750_000)}],
    });
    let response = server
        .client
        .post(server.url("/v1/email/send"))
        .bearer_auth(&key)
        .json(&bulky)
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), 422);
    let answer = response.bytes().await.expect("body");
    assert!(answer.len() < 64 * 1024, "{} bytes", answer.len());
}

/// What `/metrics` says the agents' bodies being read hold, in bytes.
async fn body_bytes_held(server: &Server) -> u64 {
    let metrics = server.metrics().await;
    metrics
        .lines()
        .find_map(|line| line.strip_prefix(r#"long_lived_requests{kind="request_body_bytes"} "#))
        .unwrap_or_else(|| panic!("no request_body_bytes in:\n{metrics}"))
        .parse()
        .expect("a number")
}

/// A connection that sent a request's head and the first kilobyte of the body it announces,
/// and holds the rest back.
async fn trickling(server: &Server, head: &str) -> TcpStream {
    let address = server.base_url.trim_start_matches("http://");
    let mut stream = TcpStream::connect(address).await.expect("connect");
    stream.write_all(head.as_bytes()).await.expect("head");
    stream
        .write_all(&[b' '; 1024])
        .await
        .expect("a first piece");
    stream
}

#[tokio::test]
async fn the_bodies_of_one_agent_being_read_are_bounded_and_other_agents_go_on() {
    let database = TestDatabase::new().await;
    let server = email_server(&database, &[]).await;
    let (key, _) = email_agent(&database, "bodies").await;
    let (other_key, _) = email_agent(&database, "bodies-other").await;
    let large = 15 * 1024 * 1024;
    let send_head = |key: &str, length: usize| {
        format!(
            "POST /v1/email/send HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n\
             Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
        )
    };
    let mcp_head = |key: &str, length: usize| {
        format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n\
             Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n\
             Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
        )
    };

    // A body declared larger than any request may have is refused before it is read.
    let too_large = 16 * 1024 * 1024 + 1;
    let answer = answer_without_body(&server, &send_head(&key, too_large)).await;
    assert!(answer.starts_with("HTTP/1.1 422"), "{answer}");
    assert!(answer.contains("body must be at most"), "{answer}");
    let answer = answer_without_body(&server, &mcp_head(&key, too_large)).await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");

    // Two large bodies trickling in hold the agent's share (32 MiB); a third, by REST or MCP, is
    // refused at once.
    let held = [
        trickling(&server, &send_head(&key, large)).await,
        trickling(&server, &mcp_head(&key, large)).await,
    ];
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while body_bytes_held(&server).await < 2 * large as u64 {
        assert!(
            std::time::Instant::now() < deadline,
            "the bodies were never read"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for head in [send_head(&key, large), mcp_head(&key, large)] {
        let answer = answer_without_body(&server, &head).await;
        assert!(answer.starts_with("HTTP/1.1 429"), "{answer}");
        assert!(
            answer.to_ascii_lowercase().contains("retry-after: 1"),
            "{answer}"
        );
    }

    // Another agent is not held up by them.
    let sent = server
        .client
        .post(server.url("/v1/email/send"))
        .bearer_auth(&other_key)
        .json(&json!({"to": ["bob@example.org"], "subject": "Hi", "body_text": "Hello"}))
        .send()
        .await
        .expect("send");
    assert_eq!(sent.status().as_u16(), 200);

    // Bodies whose clients went away give their bytes back.
    drop(held);
    while body_bytes_held(&server).await != 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the bytes were never given back"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
