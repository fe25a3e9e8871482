//! The email adapters against real counterparts: a real SMTP server (aiosmtpd) on loopback,
//! Resend's API played by wiremock, MIME fixtures of many charsets and encodings, and webhooks
//! signed per Standard Webhooks.

mod inbound;
mod resend;
mod smtp;
mod webhook;

use std::path::PathBuf;
use std::sync::Arc;

use domain::{content_digest, AttachmentId, AttachmentMeta, EmailAddress, EmailMessageId};
use ports::{AttachmentBytes, OutboundEmail};
use uuid::Uuid;

pub fn address(text: &str) -> EmailAddress {
    EmailAddress::parse(text).expect("valid address")
}

/// A reply with every field set: recipients of each kind, threading, custom headers, and text
/// beyond ASCII.
pub fn outbound() -> OutboundEmail {
    OutboundEmail {
        message_id: EmailMessageId(Uuid::now_v7()),
        from: address("agent-7@inbox.example.test"),
        to: vec![address("ada@example.org"), address("bob@example.net")],
        cc: vec![address("carol@example.com")],
        bcc: vec![address("hidden@example.com")],
        subject: "Grüße — 日本語の件名".to_owned(),
        text: "Hello Ada,\n\nthe café opens at 9. 確認しました。\n".to_owned(),
        headers: vec![
            ("X-Campaign".to_owned(), "spring".to_owned()),
            (
                "List-Unsubscribe".to_owned(),
                "<mailto:unsubscribe@inbox.example.test>".to_owned(),
            ),
            ("X-Note".to_owned(), "naïve café".to_owned()),
        ],
        internet_message_id: "<0190-reply@inbox.example.test>".to_owned(),
        in_reply_to: Some("<question-2@example.org>".to_owned()),
        references: vec![
            "<question-1@example.org>".to_owned(),
            "<question-2@example.org>".to_owned(),
        ],
        attachments: Vec::new(),
    }
}

/// The reply with two attachments: a PDF named beyond ASCII, and binary bytes of every value
/// under a type with a parameter.
pub fn outbound_with_attachments() -> OutboundEmail {
    let attachment =
        |index: usize, name: &str, content_type: &str, bytes: Vec<u8>| AttachmentBytes {
            meta: AttachmentMeta {
                id: AttachmentId::at_index(index),
                filename: Some(name.to_owned()),
                content_type: content_type.to_owned(),
                size: bytes.len() as u64,
                content_id: None,
                stored: true,
                sha256: Some(content_digest(&bytes)),
            },
            content: Some(Arc::from(bytes)),
        };
    OutboundEmail {
        attachments: vec![
            attachment(
                0,
                "Rechnung für März.pdf",
                "application/pdf",
                b"%PDF-1.7 invoice".to_vec(),
            ),
            attachment(
                1,
                "all-bytes.bin",
                "application/octet-stream; name=\"all-bytes.bin\"",
                (0..=255u8).cycle().take(70_000).collect(),
            ),
        ],
        ..outbound()
    }
}

pub fn fixture_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

pub fn fixture(name: &str) -> Vec<u8> {
    let path = fixture_path(name);
    std::fs::read(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}
