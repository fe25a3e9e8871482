//! `ResendSender` against Resend's API as wiremock plays it: the request Resend documents, and
//! each kind of answer read the way Resend's error reference means it.

use std::time::Duration;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use email::{ResendSender, ResendSettings};
use ports::{DeliveryError, EmailSender, OutboundEmail};
use secrecy::SecretString;
use serde_json::json;
use wiremock::matchers::{body_json, header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::outbound;

const API_KEY: &str = "re_test_123";

fn sender(server: &MockServer, timeout: Duration) -> ResendSender {
    let settings = ResendSettings::new(SecretString::from(API_KEY), timeout)
        .and_then(|settings| settings.with_base_url(&server.uri()))
        .expect("valid settings");
    ResendSender::new(settings).expect("sender")
}

fn expected_body(email: &OutboundEmail) -> serde_json::Value {
    json!({
        "from": "agent-7@inbox.example.test",
        "to": ["ada@example.org", "bob@example.net"],
        "cc": ["carol@example.com"],
        "bcc": ["hidden@example.com"],
        "subject": email.subject,
        "text": email.text,
        "headers": {
            "Message-ID": email.internet_message_id,
            "In-Reply-To": "<question-2@example.org>",
            "References": "<question-1@example.org> <question-2@example.org>",
            "X-Campaign": "spring",
            "List-Unsubscribe": "<mailto:unsubscribe@inbox.example.test>",
            "X-Note": "naïve café",
        },
    })
}

/// Answers every `POST /emails` with `response`.
async fn answering(response: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/emails"))
        .respond_with(response)
        .mount(&server)
        .await;
    server
}

fn error_body(status: u16, name: &str, message: &str) -> serde_json::Value {
    json!({"statusCode": status, "name": name, "message": message})
}

#[tokio::test]
async fn the_message_is_posted_as_resend_documents_it_and_its_id_kept() {
    let server = MockServer::start().await;
    let email = outbound();
    Mock::given(method("POST"))
        .and(path("/emails"))
        .and(header(
            "authorization",
            format!("Bearer {API_KEY}").as_str(),
        ))
        .and(header(
            "idempotency-key",
            email.message_id.to_string().as_str(),
        ))
        .and(header("content-type", "application/json"))
        .and(body_json(expected_body(&email)))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"id": "49a3999c-0ce1-4ea6-ab68-afcd6dc2e794"})),
        )
        .expect(1)
        .mount(&server)
        .await;

    let delivery = sender(&server, Duration::from_secs(5))
        .send(&email)
        .await
        .expect("sent");

    assert_eq!(
        delivery.provider_message_id,
        "49a3999c-0ce1-4ea6-ab68-afcd6dc2e794"
    );
}

#[tokio::test]
async fn attachments_are_posted_in_base64_with_their_names_and_types() {
    let server = MockServer::start().await;
    let email = crate::outbound_with_attachments();
    let mut expected = expected_body(&email);
    expected["attachments"] = json!([
        {
            "filename": "Rechnung für März.pdf",
            "content": BASE64.encode(b"%PDF-1.7 invoice"),
            "content_type": "application/pdf",
        },
        {
            "filename": "all-bytes.bin",
            "content": BASE64.encode(email.attachments[1].content.as_deref().expect("bytes")),
            "content_type": "application/octet-stream; name=\"all-bytes.bin\"",
        },
    ]);
    Mock::given(method("POST"))
        .and(path("/emails"))
        .and(body_json(expected))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"id": "re-1"})))
        .expect(1)
        .mount(&server)
        .await;

    let delivery = sender(&server, Duration::from_secs(5))
        .send(&email)
        .await
        .expect("sent");

    assert_eq!(delivery.provider_message_id, "re-1");
}

#[tokio::test]
async fn a_message_without_copies_or_threading_sends_only_its_message_id() {
    let server = MockServer::start().await;
    let mut email = outbound();
    email.cc.clear();
    email.bcc.clear();
    email.headers.clear();
    email.in_reply_to = None;
    email.references.clear();
    Mock::given(method("POST"))
        .and(path("/emails"))
        .and(body_json(json!({
            "from": "agent-7@inbox.example.test",
            "to": ["ada@example.org", "bob@example.net"],
            "subject": email.subject,
            "text": email.text,
            "headers": {"Message-ID": email.internet_message_id},
        })))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"id": "e-1"})))
        .expect(1)
        .mount(&server)
        .await;

    let delivery = sender(&server, Duration::from_secs(5))
        .send(&email)
        .await
        .expect("sent");

    assert_eq!(delivery.provider_message_id, "e-1");
}

#[tokio::test]
async fn a_base_url_with_a_path_keeps_it() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/resend/emails"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"id": "e-2"})))
        .expect(1)
        .mount(&server)
        .await;
    let settings = ResendSettings::new(SecretString::from(API_KEY), Duration::from_secs(5))
        .and_then(|settings| settings.with_base_url(&format!("{}/resend/", server.uri())))
        .expect("valid");

    let delivery = ResendSender::new(settings)
        .expect("sender")
        .send(&outbound())
        .await
        .expect("sent");

    assert_eq!(delivery.provider_message_id, "e-2");
}

#[tokio::test]
async fn rate_limits_and_server_trouble_may_pass() {
    let answers = [
        ResponseTemplate::new(429).set_body_json(error_body(
            429,
            "rate_limit_exceeded",
            "Too many requests.",
        )),
        ResponseTemplate::new(500).set_body_json(error_body(
            500,
            "internal_server_error",
            "Unexpected error.",
        )),
        ResponseTemplate::new(502).set_body_string("<html>Bad gateway</html>"),
        ResponseTemplate::new(409).set_body_json(error_body(
            409,
            "concurrent_idempotent_requests",
            "Same idempotency key used while original request is still in progress.",
        )),
        ResponseTemplate::new(200).set_body_string("not json"),
    ];
    for answer in answers {
        let server = answering(answer).await;
        let error = sender(&server, Duration::from_secs(5))
            .send(&outbound())
            .await
            .expect_err("not sent");
        assert!(
            matches!(error, DeliveryError::Transient { .. }),
            "{error:?}"
        );
    }
}

#[tokio::test]
async fn a_rate_limited_send_passes_on_resends_retry_after() {
    let server = answering(
        ResponseTemplate::new(429)
            .insert_header("Retry-After", "12")
            .set_body_json(error_body(429, "rate_limit_exceeded", "Too many requests.")),
    )
    .await;
    let error = sender(&server, Duration::from_secs(5))
        .send(&outbound())
        .await
        .expect_err("not sent");
    assert!(
        matches!(
            error,
            DeliveryError::Transient {
                retry_after: Some(wait),
                ..
            } if wait == Duration::from_secs(12)
        ),
        "{error:?}"
    );
}

#[tokio::test]
async fn an_answer_later_than_the_timeout_may_pass() {
    let server = answering(
        ResponseTemplate::new(200)
            .set_body_json(json!({"id": "late"}))
            .set_delay(Duration::from_secs(3)),
    )
    .await;

    let error = sender(&server, Duration::from_millis(200))
        .send(&outbound())
        .await
        .expect_err("timed out");

    assert!(
        matches!(error, DeliveryError::Transient { .. }),
        "{error:?}"
    );
}

#[tokio::test]
async fn an_api_that_is_not_there_may_pass() {
    // A port just freed: nothing listens there (a dropped MockServer would go back to
    // wiremock's pool and still answer).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let settings = ResendSettings::new(SecretString::from(API_KEY), Duration::from_secs(5))
        .and_then(|settings| settings.with_base_url(&format!("http://127.0.0.1:{port}")))
        .expect("valid");
    let sender = ResendSender::new(settings).expect("sender");

    let error = sender.send(&outbound()).await.expect_err("unreachable");

    assert!(
        matches!(error, DeliveryError::Transient { .. }),
        "{error:?}"
    );
}

#[tokio::test]
async fn refusals_carry_resends_name_and_message() {
    let cases = [
        (422, "validation_error", "Invalid `to` field."),
        (
            400,
            "invalid_idempotency_key",
            "The key must be between 1-256 chars.",
        ),
        (404, "not_found", "The requested endpoint does not exist."),
        (
            409,
            "invalid_idempotent_request",
            "Same idempotency key used with a different request payload.",
        ),
    ];
    for (status, name, message) in cases {
        let server = answering(
            ResponseTemplate::new(status).set_body_json(error_body(status, name, message)),
        )
        .await;
        let error = sender(&server, Duration::from_secs(5))
            .send(&outbound())
            .await
            .expect_err("refused");
        match error {
            DeliveryError::Refused(reason) => {
                assert!(reason.contains(name), "{reason}");
                assert!(reason.contains(message), "{reason}");
            }
            other => panic!("{status} {name}: expected a refusal, got {other:?}"),
        }
    }
}
