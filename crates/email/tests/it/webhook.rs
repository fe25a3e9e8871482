//! `MailWebhook` through the `InboundMailWebhook` port: Resend's webhooks as it posts them, signed
//! per Standard Webhooks, and what is refused before and after the body is read. How signatures
//! are told apart is `standard-webhooks`'s own tests.

use email::{sign, MailWebhook};
use ports::{
    InboundMailWebhook, ProviderWebhookHeaders, ProviderWebhookRefusal, ProviderWebhookRequest,
};
use secrecy::SecretString;

use crate::fixture;

const OLD_SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const NEW_SECRET: &str = "whsec_bmV3LXNlY3JldC1rZXktMDEyMzQ1Njc4OQ==";
const ID: &str = "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W";
const NOW: i64 = 1_767_225_600;
const EVENT: &[u8] = br#"{"type":"email.received","data":{"email_id":"e-1"}}"#;

fn webhook(secrets: &[&str]) -> MailWebhook {
    MailWebhook::new(secrets.iter().map(|secret| SecretString::from(*secret)))
        .expect("valid secrets")
}

fn headers(pairs: &[(&str, &str)]) -> ProviderWebhookHeaders {
    ProviderWebhookHeaders::new(
        pairs
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned())),
    )
}

/// A webhook as Resend posts it: `body` of `content_type`, signed now with `secret`.
fn posted(secret: &str, content_type: &str, body: &[u8]) -> ProviderWebhookRequest {
    let signature = sign(secret, ID, NOW, body);
    ProviderWebhookRequest {
        path_and_query: "/webhooks/email/inbound".to_owned(),
        headers: headers(&[
            ("Content-Type", content_type),
            ("Webhook-Id", ID),
            ("Webhook-Timestamp", &NOW.to_string()),
            ("Webhook-Signature", &signature),
        ]),
        body: body.to_vec(),
    }
}

#[tokio::test]
async fn resends_json_event_is_read_as_its_event_keyed_by_the_webhook_id() {
    let mail = webhook(&[OLD_SECRET])
        .receive(
            posted(OLD_SECRET, "application/json; charset=utf-8", EVENT),
            NOW,
        )
        .await
        .expect("received");

    assert_eq!(mail.delivery_id, ID);
    assert_eq!(mail.email.provider_message_id.as_deref(), Some("e-1"));
}

#[tokio::test]
async fn any_other_type_is_a_raw_message() {
    let raw = fixture("reply.eml");
    let mail = webhook(&[OLD_SECRET])
        .receive(posted(OLD_SECRET, "message/rfc822", &raw), NOW)
        .await
        .expect("received");

    assert_eq!(mail.email.subject.as_deref(), Some("Re: Your order"));
}

#[tokio::test]
async fn during_rotation_either_secret_is_received_and_a_removed_one_is_refused() {
    let both = webhook(&[OLD_SECRET, NEW_SECRET]);
    for secret in [OLD_SECRET, NEW_SECRET] {
        let received = both
            .receive(posted(secret, "application/json", EVENT), NOW)
            .await;
        assert!(received.is_ok(), "{secret}: {received:?}");
    }

    let refused = webhook(&[NEW_SECRET])
        .receive(posted(OLD_SECRET, "application/json", EVENT), NOW)
        .await;
    assert_eq!(
        refused,
        Err(ProviderWebhookRefusal::Signature(
            "Invalid webhook signature: no webhook signature matches".to_owned()
        ))
    );
}

#[tokio::test]
async fn a_tampered_body_is_refused_before_it_is_parsed() {
    let mut request = posted(OLD_SECRET, "application/json", EVENT);
    request.body = b"not json".to_vec();

    let refused = webhook(&[OLD_SECRET]).receive(request, NOW).await;
    assert!(
        matches!(refused, Err(ProviderWebhookRefusal::Signature(_))),
        "{refused:?}"
    );
}

#[tokio::test]
async fn a_signed_body_that_cannot_be_read_is_malformed() {
    let refused = webhook(&[OLD_SECRET])
        .receive(posted(OLD_SECRET, "application/json", b"not json"), NOW)
        .await;

    assert!(
        matches!(&refused, Err(ProviderWebhookRefusal::Malformed(detail)) if detail.starts_with("unreadable inbound message")),
        "{refused:?}"
    );
}

#[test]
fn headers_that_could_never_verify_are_refused_before_the_body() {
    let webhook = webhook(&[OLD_SECRET]);
    let signed = posted(OLD_SECRET, "application/json", EVENT);
    assert_eq!(webhook.could_verify(&signed.headers, NOW), Ok(()));

    let stale = (NOW - 3600).to_string();
    for (missing, detail) in [
        (
            headers(&[]),
            "the webhook signature headers are missing or malformed",
        ),
        (
            headers(&[
                ("webhook-id", ID),
                ("webhook-timestamp", &NOW.to_string()),
                ("webhook-signature", "v1,AAAA"),
            ]),
            "the webhook signature headers are missing or malformed",
        ),
        (
            headers(&[
                ("webhook-id", ID),
                ("webhook-timestamp", &stale),
                (
                    "webhook-signature",
                    &sign(OLD_SECRET, ID, NOW - 3600, EVENT),
                ),
            ]),
            "the webhook timestamp is outside the tolerance",
        ),
    ] {
        assert_eq!(
            webhook.could_verify(&missing, NOW),
            Err(ProviderWebhookRefusal::Signature(format!(
                "Invalid webhook signature: {detail}"
            ))),
            "{missing:?}"
        );
    }
}
