//! `HttpWebhookPoster` against a receiver on a local port: what arrives, where it may not go,
//! and how each kind of answer is read.

mod receiver;

use std::io::Write;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use api_types::EventOut;
use domain::{
    AgentId, AttemptFailure, EmailMessageId, EventId, EventPayload, EventRecord, EventType,
    Targets, WebhookDeliveryId, WebhookEndpointId,
};
use ports::{PostAnswer, WebhookDelivery, WebhookPoster};
use receiver::{Receiver, Reply};
use reqwest::header::{HeaderMap, HeaderValue};
use standard_webhooks::{ID_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER};
use time::macros::datetime;
use uuid::Uuid;
use webhook_delivery::{HttpWebhookPoster, PosterSettings};

/// The Standard Webhooks specification's example secret.
const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
/// Base64 of the bytes 1 to 32.
const OTHER_SECRET: &str = "whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=";
/// Not base64: skipped, never printed.
const BROKEN_SECRET: &str = "whsec_not*base64*at*all";

fn delivery(url: String, secrets: &[&str]) -> WebhookDelivery {
    WebhookDelivery {
        id: WebhookDeliveryId(Uuid::from_u128(1)),
        agent: AgentId(Uuid::from_u128(5)),
        endpoint: WebhookEndpointId(Uuid::from_u128(2)),
        url,
        secrets: secrets.iter().map(|secret| secret.to_string()).collect(),
        event: EventRecord {
            key_id: None,
            id: EventId(Uuid::from_u128(0x0193_0000_0000_7000_8000_0000_0000_0003)),
            seq: 7,
            event_type: EventType::EmailSent,
            timestamp: datetime!(2026-11-25 10:00:00 UTC),
            payload: EventPayload::EmailSent {
                message_id: EmailMessageId(Uuid::from_u128(4)),
                provider_message_id: Some("re_123".into()),
            },
        },
        attempt: 1,
    }
}

fn poster(targets: Targets) -> HttpWebhookPoster {
    HttpWebhookPoster::new(PosterSettings {
        targets,
        ..PosterSettings::default()
    })
    .expect("a poster")
}

fn header<'a>(request: &'a receiver::Recorded, name: &str) -> &'a str {
    request
        .headers
        .get(name)
        .unwrap_or_else(|| panic!("a {name} header"))
        .to_str()
        .expect("ASCII")
}

/// What the poster logs, as text.
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<u8>>>);

impl Write for Logs {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("the log").extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Logs {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().expect("the log")).into_owned()
    }
}

#[tokio::test]
async fn a_delivery_arrives_signed_by_every_secret_that_parses() {
    let logs = Logs::default();
    let writer = logs.clone();
    let _logging = tracing::subscriber::set_default(
        tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish(),
    );
    let mut receiver = Receiver::start(Reply::status(204)).await;
    let poster = poster(Targets::PrivateAllowed);
    let delivery = delivery(
        receiver.url("/hooks/in?agent=1"),
        &[SECRET, BROKEN_SECRET, OTHER_SECRET],
    );

    let answer = poster.post(&delivery).await;
    let request = receiver.next_request().await;

    assert_eq!(
        (
            answer.status,
            answer.failure,
            answer.detail,
            answer.retry_after
        ),
        (Some(204), None, None, None)
    );
    assert_eq!(request.method, "POST");
    assert_eq!(request.target, "/hooks/in?agent=1");
    assert_eq!(header(&request, "content-type"), "application/json");
    assert_eq!(
        request.body,
        EventOut::to_json(&delivery.event).into_bytes()
    );
    assert_eq!(
        header(&request, ID_HEADER),
        "evt_01930000000070008000000000000003"
    );
    let timestamp: u64 = header(&request, TIMESTAMP_HEADER).parse().expect("seconds");
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs();
    assert!(now.abs_diff(timestamp) < 60, "{timestamp} against {now}");

    // Each signature verifies alone, by the standard's own implementation, with its secret.
    let signatures: Vec<&str> = header(&request, SIGNATURE_HEADER).split(' ').collect();
    assert_eq!(signatures.len(), 2, "{signatures:?}");
    for (signature, secret) in signatures.iter().zip([SECRET, OTHER_SECRET]) {
        let mut headers: HeaderMap = request.headers.clone();
        headers.insert(
            SIGNATURE_HEADER,
            HeaderValue::from_str(signature).expect("ASCII"),
        );
        let webhook = standardwebhooks::Webhook::new(secret).expect("a secret");
        webhook
            .verify(&request.body, &headers)
            .unwrap_or_else(|error| panic!("{signature} by its secret: {error}"));
        let other = if secret == SECRET {
            OTHER_SECRET
        } else {
            SECRET
        };
        assert!(standardwebhooks::Webhook::new(other)
            .expect("a secret")
            .verify(&request.body, &headers)
            .is_err());
    }

    let logged = logs.text();
    assert!(logged.contains("does not parse"), "{logged}");
    assert!(!logged.contains("not*base64"), "{logged}");

    // Another attempt at the same delivery carries the same id.
    assert_eq!(poster.post(&delivery).await.status, Some(204));
    let again = receiver.next_request().await;
    assert_eq!(header(&again, ID_HEADER), header(&request, ID_HEADER));
    // On a connection of its own: each attempt resolves, and checks, the host anew.
    assert_eq!(receiver.connections(), 2);
}

/// Refused in the agent's fixed words; the log's account names the host and its address.
fn assert_refused(answer: &PostAnswer, host: &str) {
    let detail = answer.detail.as_deref().unwrap_or_default();
    assert_eq!(answer.status, None, "{answer:?}");
    assert_eq!(
        answer.failure,
        Some(AttemptFailure::NotPubliclyRoutable),
        "{answer:?}"
    );
    assert!(
        detail.starts_with(&format!("target refused: {host} resolves to "))
            && detail.ends_with(", which is not publicly routable"),
        "{detail}"
    );
}

#[tokio::test]
async fn loopback_targets_are_refused_without_a_connection() {
    let mut receiver = Receiver::start(Reply::status(200)).await;
    let port = receiver.addr.port();
    let public_only = poster(Targets::PublicOnly);

    let literal = public_only
        .post(&delivery(format!("http://127.0.0.1:{port}/"), &[SECRET]))
        .await;
    assert_refused(&literal, "127.0.0.1");
    assert_eq!(
        literal.detail.as_deref(),
        Some("target refused: 127.0.0.1 resolves to 127.0.0.1, which is not publicly routable")
    );
    let named = public_only
        .post(&delivery(format!("http://localhost:{port}/"), &[SECRET]))
        .await;
    assert_refused(&named, "localhost");

    let mut v6 = Receiver::start_on(
        SocketAddr::from(([0u16, 0, 0, 0, 0, 0, 0, 1], 0)),
        Reply::status(200),
    )
    .await
    .ok();
    let v6_port = v6.as_ref().map_or(port, |receiver| receiver.addr.port());
    let literal_v6 = public_only
        .post(&delivery(format!("http://[::1]:{v6_port}/"), &[SECRET]))
        .await;
    assert_refused(&literal_v6, "[::1]");

    // A connection made now is accepted after any the refused attempts could have made.
    let allowed = poster(Targets::PrivateAllowed);
    let sentinel = allowed.post(&delivery(receiver.url("/"), &[SECRET])).await;
    assert_eq!(sentinel.status, Some(200));
    receiver.next_request().await;
    assert_eq!(receiver.connections(), 1);
    if let Some(v6) = v6.as_mut() {
        let sentinel = allowed.post(&delivery(v6.url("/"), &[SECRET])).await;
        assert_eq!(sentinel.status, Some(200));
        v6.next_request().await;
        assert_eq!(v6.connections(), 1);
    }
}

#[tokio::test]
async fn a_redirect_is_the_answer_not_followed() {
    let mut receiver = Receiver::start(Reply::Answer {
        status: 302,
        headers: vec![("location", "/elsewhere".into())],
        body: Vec::new(),
    })
    .await;

    let answer = poster(Targets::PrivateAllowed)
        .post(&delivery(receiver.url("/hook"), &[SECRET]))
        .await;

    assert_eq!(answer.status, Some(302));
    assert_eq!(answer.failure, Some(AttemptFailure::Answered(302)));
    assert_eq!(answer.detail.as_deref(), Some("HTTP 302"));
    assert_eq!(receiver.next_request().await.target, "/hook");
    // Had the redirect been followed, its request would have been made before the answer.
    assert!(receiver.request_so_far().is_none());
    assert_eq!(receiver.connections(), 1);
}

#[tokio::test]
async fn a_receiver_that_never_answers_times_the_attempt_out() {
    let mut receiver = Receiver::start(Reply::Silence).await;
    let poster = HttpWebhookPoster::new(PosterSettings {
        timeout: Duration::from_millis(300),
        targets: Targets::PrivateAllowed,
        ..PosterSettings::default()
    })
    .expect("a poster");

    let started = Instant::now();
    let answer = poster.post(&delivery(receiver.url("/"), &[SECRET])).await;
    let took = started.elapsed();

    assert_eq!(answer.status, None);
    assert_eq!(answer.failure, Some(AttemptFailure::TimedOut));
    assert_eq!(answer.detail.as_deref(), Some("timed out after 300 ms"));
    assert!(took >= Duration::from_millis(300), "{took:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert!(answer.duration >= Duration::from_millis(300), "{answer:?}");
    // The request had arrived: it was the answer that never came.
    receiver.next_request().await;
}

#[tokio::test]
async fn only_the_start_of_a_huge_answer_is_read() {
    const BODY_BYTES: usize = 10 * 1024 * 1024;
    let mut receiver = Receiver::start(Reply::Answer {
        status: 500,
        headers: Vec::new(),
        body: vec![b'e'; BODY_BYTES],
    })
    .await;

    let answer = poster(Targets::PrivateAllowed)
        .post(&delivery(receiver.url("/"), &[SECRET]))
        .await;

    assert_eq!(answer.status, Some(500));
    assert_eq!(answer.failure, Some(AttemptFailure::Answered(500)));
    let detail = answer.detail.as_deref().unwrap_or_default();
    assert_eq!(detail, format!("HTTP 500: {}", "e".repeat(200)));
    // The client left: the receiver could not write the rest.
    let written = receiver.next_write().await;
    assert!(!written.finished, "{written:?}");
    assert!(written.bytes < BODY_BYTES, "{written:?}");
}

#[tokio::test]
async fn retry_after_is_read_on_429_and_503() {
    let answer_to = |status, retry_after: String| async move {
        let mut receiver = Receiver::start(Reply::Answer {
            status,
            headers: vec![("retry-after", retry_after)],
            body: b"slow down".to_vec(),
        })
        .await;
        let answer = poster(Targets::PrivateAllowed)
            .post(&delivery(receiver.url("/"), &[SECRET]))
            .await;
        receiver.next_request().await;
        answer
    };

    let limited = answer_to(429, "7".into()).await;
    assert_eq!(limited.status, Some(429));
    assert_eq!(limited.retry_after, Some(Duration::from_secs(7)));
    assert_eq!(limited.failure, Some(AttemptFailure::Answered(429)));
    assert_eq!(limited.detail.as_deref(), Some("HTTP 429: slow down"));

    let in_two_minutes = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(120));
    let unavailable = answer_to(503, in_two_minutes).await;
    assert_eq!(unavailable.status, Some(503));
    let wait = unavailable.retry_after.expect("a wait");
    assert!(
        (Duration::from_secs(100)..=Duration::from_secs(120)).contains(&wait),
        "{wait:?}"
    );

    let failed = answer_to(500, "7".into()).await;
    assert_eq!((failed.status, failed.retry_after), (Some(500), None));
}

#[tokio::test]
async fn a_receiver_that_is_down_is_an_attempt_without_a_status() {
    // A port that was free a moment ago: nothing listens on it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();

    let answer = poster(Targets::PrivateAllowed)
        .post(&delivery(format!("http://127.0.0.1:{port}/"), &[SECRET]))
        .await;

    assert_eq!(answer.status, None);
    assert_eq!(answer.failure, Some(AttemptFailure::ConnectionFailed));
    let detail = answer.detail.as_deref().unwrap_or_default();
    assert!(detail.starts_with("error sending request: "), "{detail}");
    assert!(
        !detail.contains("127.0.0.1"),
        "the URL is the log's: {detail}"
    );
}
