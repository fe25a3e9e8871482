//! `MailParserInbound` on MIME fixtures (tests/fixtures/*.eml: every part written by hand, the
//! ISO-8859-1 and Shift_JIS bodies in their own bytes) and on Resend's `email.received` event.

use std::fmt::Write;

use base64::Engine;
use std::sync::Arc;

use domain::{AttachmentId, AttachmentMeta, SenderAuthentication};
use email::MailParserInbound;
use ports::{AttachmentBytes, InboundEmail, InboundFormat, InboundParseError, InboundParser};

use crate::fixture;

async fn parse(format: InboundFormat, body: &[u8]) -> Result<InboundEmail, InboundParseError> {
    MailParserInbound.parse(format, body.to_vec()).await
}

async fn parse_raw(name: &str) -> InboundEmail {
    parse(InboundFormat::Raw, &fixture(name))
        .await
        .unwrap_or_else(|error| panic!("{name}: {error}"))
}

/// What the parser says of the attachment at `index`, before anything is kept.
fn listed(
    index: usize,
    filename: &str,
    content_type: &str,
    size: u64,
    content_id: Option<&str>,
) -> AttachmentMeta {
    AttachmentMeta {
        id: AttachmentId::at_index(index),
        filename: Some(filename.to_owned()),
        content_type: content_type.to_owned(),
        size,
        content_id: content_id.map(str::to_owned),
        stored: false,
        sha256: None,
    }
}

fn metas(email: &InboundEmail) -> Vec<AttachmentMeta> {
    email.attachments.iter().map(|a| a.meta.clone()).collect()
}

fn header<'a>(email: &'a InboundEmail, name: &str) -> Option<&'a str> {
    email
        .headers
        .iter()
        .find(|(known, _)| known.eq_ignore_ascii_case(name))
        .map(|(_, value)| value.as_str())
}

#[tokio::test]
async fn multipart_alternative_gives_both_bodies_and_every_address() {
    let email = parse_raw("alternative.eml").await;

    assert_eq!(email.provider_message_id, None);
    assert_eq!(
        email.internet_message_id.as_deref(),
        Some("<alt-1@example.org>")
    );
    assert_eq!(email.subject.as_deref(), Some("Grüße aus Köln ☕"));
    assert_eq!(email.from.as_deref(), Some("ada@example.org"));
    assert_eq!(
        email.to,
        vec!["agent-7@inbox.example.test", "bob@example.net"]
    );
    // The group is flattened into its members.
    assert_eq!(
        email.cc,
        vec!["carol@example.com", "dave@example.com", "erin@example.com"]
    );
    assert_eq!(email.reply_to, vec!["replies@example.org"]);
    assert_eq!(email.envelope_to, vec!["agent-7@inbox.example.test"]);
    assert_eq!(email.envelope_from.as_deref(), Some("ada@example.org"));
    let text = email.text.as_deref().expect("text");
    assert!(text.starts_with("Hello agent,"), "{text}");
    assert!(text
        .contains("your code is 482913. Café! This line is long enough to need a soft line break"));
    let html = email.html.as_deref().expect("html");
    assert!(html.contains("<code>482913</code>. Café!"), "{html}");
    assert!(email.attachments.is_empty());
}

#[tokio::test]
async fn headers_are_kept_in_order_decoded_and_unfolded() {
    let email = parse_raw("alternative.eml").await;

    let names: Vec<&str> = email
        .headers
        .iter()
        .map(|(name, _)| name.as_str())
        .collect();
    assert_eq!(
        names,
        vec![
            "Return-Path",
            "Delivered-To",
            "X-Original-To",
            "Received",
            "From",
            "To",
            "Cc",
            "Reply-To",
            "Subject",
            "Date",
            "Message-ID",
            "X-Campaign",
            "X-Folded",
            "MIME-Version",
            "Content-Type",
        ]
    );
    assert_eq!(header(&email, "Subject"), Some("Grüße aus Köln ☕"));
    assert_eq!(header(&email, "X-Folded"), Some("first part second part"));
    assert_eq!(header(&email, "X-Campaign"), Some("spring"));
    assert_eq!(header(&email, "Message-ID"), Some("<alt-1@example.org>"));
    let received = header(&email, "Received").expect("Received");
    assert!(received.starts_with("from mx.example.org"), "{received}");
    assert!(!received.contains('\n'), "{received:?}");
}

#[tokio::test]
async fn quoted_printable_and_base64_bodies_are_decoded() {
    let qp = parse_raw("quoted_printable.eml").await;
    assert_eq!(
        qp.text
            .as_deref()
            .map(|text| text.replace("\r\n", "\n"))
            .as_deref(),
        Some(
            "Ünïcödé line: naïve café — \"quotes\" = equals\nA second line that is rather long \
             so that the encoder has to fold it with a soft line break here.\n"
        )
    );
    assert_eq!(qp.html, None);

    let b64 = parse_raw("base64.eml").await;
    assert_eq!(
        b64.text.as_deref(),
        Some("Base64 body: 日本語 and emoji 🚀.\n")
    );
}

#[tokio::test]
async fn iso_8859_1_is_decoded_in_body_and_headers() {
    let email = parse_raw("latin1.eml").await;

    assert_eq!(email.subject.as_deref(), Some("Café crème"));
    assert_eq!(email.from.as_deref(), Some("francois@example.fr"));
    assert_eq!(
        header(&email, "From"),
        Some("François <francois@example.fr>")
    );
    assert_eq!(
        email.text.as_deref().map(str::trim_end),
        Some("Größe: café à la crème, ½ prix.")
    );
}

#[tokio::test]
async fn shift_jis_is_decoded_in_body_and_subject() {
    let raw = fixture("shift_jis.eml");
    // The fixture really is Shift_JIS: こ is 0x82 0xB1 there, not UTF-8's E3 81 93.
    assert!(raw.windows(2).any(|pair| pair == [0x82, 0xB1]));
    assert!(std::str::from_utf8(&raw).is_err());

    let email = parse_raw("shift_jis.eml").await;

    assert_eq!(email.subject.as_deref(), Some("確認コード"));
    assert_eq!(
        email.text.as_deref().map(str::trim_end),
        Some("こんにちは、世界。確認コードは 731904 です。")
    );
}

#[tokio::test]
async fn attachments_are_described_by_name_type_decoded_size_and_content_id() {
    let email = parse_raw("attachments.eml").await;

    let resume = "Résumé: five years of reading mail.\r\n";
    assert_eq!(
        metas(&email),
        vec![
            listed(0, "logo.png", "image/png", 517, Some("logo@example.com")),
            listed(1, "report.pdf", "application/pdf", 3000, None),
            // Its one line ends in the message's CRLF, which quoted-printable keeps.
            listed(2, "résumé.txt", "text/plain", resume.len() as u64, None),
        ]
    );
    let contents: Vec<usize> = email
        .attachments
        .iter()
        .map(|a| a.content.as_deref().map_or(0, <[u8]>::len))
        .collect();
    assert_eq!(contents, [517, 3000, resume.len()], "the decoded bytes");
    assert_eq!(
        email.attachments[2].content.as_deref(),
        Some(resume.as_bytes())
    );
    let html = email.html.as_deref().expect("html body");
    assert!(html.contains("cid:logo@example.com"), "{html}");
    assert!(email
        .text
        .as_deref()
        .expect("text")
        .contains("See the logo"));
}

#[tokio::test]
async fn a_reply_carries_its_thread() {
    let email = parse_raw("reply.eml").await;

    assert_eq!(
        email.internet_message_id.as_deref(),
        Some("<reply-3@example.net>")
    );
    assert_eq!(
        email.in_reply_to.as_deref(),
        Some("<order-2@inbox.example.test>")
    );
    assert_eq!(
        email.references,
        vec!["<order-1@example.net>", "<order-2@inbox.example.test>"]
    );
    assert_eq!(email.subject.as_deref(), Some("Re: Your order"));
    assert_eq!(
        email.text.as_deref().map(str::trim_end),
        Some("Thanks, received.")
    );
}

#[tokio::test]
async fn html_only_mail_is_also_read_as_text() {
    let email = parse_raw("html_only.eml").await;

    let html = email.html.as_deref().expect("html");
    assert!(html.contains("<b>123456</b>"), "{html}");
    let text = email.text.as_deref().expect("text from the html");
    assert!(text.contains("Your code is 123456"), "{text}");
    assert!(!text.contains('<'), "{text}");
}

/// A message of about 10 MB, most of it one base64 attachment.
fn large_message(attachment: &[u8]) -> Vec<u8> {
    let encoded = base64::engine::general_purpose::STANDARD.encode(attachment);
    let mut message = String::with_capacity(encoded.len() + encoded.len() / 38 + 1024);
    message.push_str(
        "From: sender@example.com\r\nTo: agent-7@inbox.example.test\r\nSubject: Large\r\n\
         Message-ID: <large-1@example.com>\r\nMIME-Version: 1.0\r\n\
         Content-Type: multipart/mixed; boundary=\"big\"\r\n\r\n\
         --big\r\nContent-Type: text/plain\r\n\r\nThe archive is attached.\r\n\
         --big\r\nContent-Type: application/zip\r\nContent-Transfer-Encoding: base64\r\n\
         Content-Disposition: attachment; filename=\"archive.zip\"\r\n\r\n",
    );
    for line in encoded.as_bytes().chunks(76) {
        message.push_str(std::str::from_utf8(line).expect("base64 is ASCII"));
        message.push_str("\r\n");
    }
    message.push_str("--big--\r\n");
    message.into_bytes()
}

#[tokio::test]
async fn a_ten_megabyte_message_parses_with_its_attachment_size() {
    let attachment: Vec<u8> = (0..7_500_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let raw = large_message(&attachment);
    assert!(raw.len() > 10_000_000, "{} bytes", raw.len());

    let email = parse(InboundFormat::Raw, &raw).await.expect("parsed");

    assert_eq!(
        email.text.as_deref().map(str::trim_end),
        Some("The archive is attached.")
    );
    assert_eq!(
        email.attachments,
        vec![AttachmentBytes {
            meta: listed(0, "archive.zip", "application/zip", 7_500_000, None),
            content: Some(Arc::from(attachment)),
        }]
    );
}

#[tokio::test]
async fn many_headers_keep_their_order() {
    let mut raw = String::from("From: a@example.com\r\n");
    for i in 0..50 {
        writeln!(raw, "X-Trace-{i}: hop {i}\r").expect("write");
    }
    raw.push_str("\r\nbody\r\n");

    let email = parse(InboundFormat::Raw, raw.as_bytes())
        .await
        .expect("parsed");

    assert_eq!(email.headers.len(), 51);
    assert_eq!(
        email.headers[50],
        ("X-Trace-49".to_owned(), "hop 49".to_owned())
    );
}

#[tokio::test]
async fn resends_event_gives_ids_addresses_and_attachment_metadata() {
    let email = parse(
        InboundFormat::ProviderJson,
        &fixture("resend_received.json"),
    )
    .await
    .expect("parsed");

    assert_eq!(
        email,
        InboundEmail {
            provider_message_id: Some("56761188-7520-42d8-8898-ff6fc54ce618".to_owned()),
            internet_message_id: Some("<invoice-42@acme.example>".to_owned()),
            subject: Some("Your invoice — №42".to_owned()),
            from: Some("billing@acme.example".to_owned()),
            to: vec![
                "agent-7@inbox.example.test".to_owned(),
                "other@example.com".to_owned()
            ],
            cc: vec!["carol@example.com".to_owned()],
            envelope_to: vec![
                "agent-7@inbox.example.test".to_owned(),
                "other@example.com".to_owned(),
                "carol@example.com".to_owned(),
                "agent-9@inbox.example.test".to_owned()
            ],
            // Metadata only: Resend serves the bytes through its API.
            attachments: vec![
                AttachmentBytes {
                    meta: listed(0, "invoice.pdf", "application/pdf", 24576, None),
                    content: None,
                },
                AttachmentBytes {
                    meta: listed(1, "logo.png", "image/png", 0, Some("img001")),
                    content: None,
                },
            ],
            ..InboundEmail::default()
        }
    );
}

#[tokio::test]
async fn resends_event_with_bodies_and_headers_reads_them_too() {
    // Written out, not built with json!, whose object would sort the header names.
    let event = r#"{
        "type": "email.received",
        "created_at": "2026-02-22T23:41:12.126Z",
        "data": {
            "email_id": "e-7",
            "from": "bob@example.net",
            "to": ["agent-7@inbox.example.test"],
            "subject": "Re: Your order",
            "message_id": "reply-9@example.net",
            "text": "Thanks",
            "html": "<p>Thanks</p>",
            "reply_to": ["Bob <replies@example.net>"],
            "headers": {
                "Received": ["from a by b", "from c by d"],
                "In-Reply-To": "<order-2@inbox.example.test>",
                "References": "<order-1@example.net> <order-2@inbox.example.test>",
                "X-Spam-Score": 0.5
            }
        }
    }"#;

    let email = parse(InboundFormat::ProviderJson, event.as_bytes())
        .await
        .expect("parsed");

    assert_eq!(
        email.internet_message_id.as_deref(),
        Some("<reply-9@example.net>")
    );
    assert_eq!(
        email.in_reply_to.as_deref(),
        Some("<order-2@inbox.example.test>")
    );
    assert_eq!(
        email.references,
        vec!["<order-1@example.net>", "<order-2@inbox.example.test>"]
    );
    assert_eq!(email.reply_to, vec!["replies@example.net"]);
    assert_eq!(email.text.as_deref(), Some("Thanks"));
    assert_eq!(email.html.as_deref(), Some("<p>Thanks</p>"));
    assert_eq!(
        email.headers,
        vec![
            ("Received".to_owned(), "from a by b".to_owned()),
            ("Received".to_owned(), "from c by d".to_owned()),
            (
                "In-Reply-To".to_owned(),
                "<order-2@inbox.example.test>".to_owned()
            ),
            (
                "References".to_owned(),
                "<order-1@example.net> <order-2@inbox.example.test>".to_owned()
            ),
            ("X-Spam-Score".to_owned(), "0.5".to_owned()),
        ]
    );
}

#[tokio::test]
async fn a_minimal_resend_event_is_enough() {
    let event = br#"{"type":"email.received","data":{"email_id":"e-8"}}"#;

    let email = parse(InboundFormat::ProviderJson, event)
        .await
        .expect("parsed");

    assert_eq!(
        email,
        InboundEmail {
            provider_message_id: Some("e-8".to_owned()),
            ..InboundEmail::default()
        }
    );
}

/// A message nested `depth` deep in messages of its own (`message/rfc822`, identity-encoded),
/// with `hello 4821` in the innermost.
fn nested_messages(depth: usize) -> Vec<u8> {
    let mut raw = b"From: a@example.org\r\nTo: agent-7@inbox.example.test\r\nSubject: nested\r\n\
                    Content-Type: multipart/mixed; boundary=outer\r\n\r\n--outer\r\n\
                    Content-Type: text/plain\r\n\r\nsee the attached\r\n--outer\r\n"
        .to_vec();
    for _ in 0..depth {
        raw.extend_from_slice(b"Content-Type: message/rfc822\r\n\r\n");
    }
    raw.extend_from_slice(b"Subject: x\r\n\r\nhello 4821\r\n--outer--\r\n");
    raw
}

/// The text of a parsed message, trimmed, or a short word of what it was instead: a failing
/// assertion should not print megabytes.
fn short_text(email: &InboundEmail) -> String {
    match email.text.as_deref().map(str::trim_end) {
        Some(text) if text.len() <= 200 => text.to_owned(),
        Some(text) => format!("{} bytes of text", text.len()),
        None => "no text".to_owned(),
    }
}

// Found by an outside attack: one mail of 1.9 MB with 60,000 nested messages overflowed the stack
// of the thread that dropped its parse, which aborts the whole server; a provider that retries
// makes it a poison message for every instance.
#[tokio::test]
async fn messages_nested_sixty_thousand_deep_are_an_attachment_not_a_crash() {
    let raw = nested_messages(60_000);
    assert!(raw.len() < 2_000_000, "{} bytes", raw.len());
    let email = parse(InboundFormat::Raw, &raw).await.expect("parsed");
    assert_eq!(email.subject.as_deref(), Some("nested"));
    assert_eq!(short_text(&email), "see the attached");
    assert_eq!(email.attachments.len(), 1, "{:?}", email.attachments);
    assert_eq!(email.attachments[0].meta.content_type, "message/rfc822");
}

#[tokio::test]
async fn a_nested_message_bomb_sent_encoded_is_not_parsed_either() {
    let inner = nested_messages(60_000);
    let encoded = base64::engine::general_purpose::STANDARD.encode(&inner);
    let mut raw = String::from(
        "From: a@example.org\r\nTo: agent-7@inbox.example.test\r\nSubject: wrapped\r\n\
         Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\n\
         hi\r\n--b\r\nContent-Type: MESSAGE / RFC822\r\nContent-Transfer-Encoding: base64\r\n\r\n",
    );
    for line in encoded.as_bytes().chunks(76) {
        raw.push_str(std::str::from_utf8(line).expect("base64 is ASCII"));
        raw.push_str("\r\n");
    }
    raw.push_str("--b--\r\n");
    let email = parse(InboundFormat::Raw, raw.as_bytes())
        .await
        .expect("parsed");
    assert_eq!(email.subject.as_deref(), Some("wrapped"));
    assert_eq!(email.attachments.len(), 1, "{:?}", email.attachments);
    assert_eq!(email.attachments[0].meta.content_type, "message/rfc822");
    assert_eq!(email.attachments[0].meta.size, inner.len() as u64);
}

#[tokio::test]
async fn digests_nested_deep_are_not_parsed_as_messages() {
    let mut raw = b"From: a@example.org\r\nSubject: digest\r\n".to_vec();
    for level in 0..50_000 {
        raw.extend_from_slice(
            format!("Content-Type: multipart/digest; boundary=d{level}\r\n\r\n--d{level}\r\n")
                .as_bytes(),
        );
    }
    raw.extend_from_slice(b"\r\nend\r\n");
    let email = parse(InboundFormat::Raw, &raw).await.expect("parsed");
    assert_eq!(email.subject.as_deref(), Some("digest"));
}

#[tokio::test]
async fn a_forwarded_message_is_listed_with_its_type_and_size() {
    let forwarded = "From: b@example.net\r\nSubject: original\r\n\r\nthe original text\r\n";
    let raw = format!(
        "From: a@example.org\r\nTo: agent-7@inbox.example.test\r\nSubject: Fwd: original\r\n\
         Content-Type: multipart/mixed; boundary=f\r\n\r\n--f\r\nContent-Type: text/plain\r\n\r\n\
         see below\r\n--f\r\nContent-Type: message/rfc822; name=\"original.eml\"\r\n\
         Content-Disposition: attachment; filename=\"original.eml\"\r\n\r\n{forwarded}--f--\r\n"
    );
    let email = parse(InboundFormat::Raw, raw.as_bytes())
        .await
        .expect("parsed");
    assert_eq!(short_text(&email), "see below");
    let kept = &forwarded.as_bytes()[..forwarded.len() - 2];
    assert_eq!(
        email.attachments,
        vec![AttachmentBytes {
            meta: listed(0, "original.eml", "message/rfc822", kept.len() as u64, None),
            content: Some(Arc::from(kept)),
        }],
        "kept as it came, never parsed as a message of its own"
    );
}

#[tokio::test]
async fn a_message_of_too_many_parts_is_kept_flattened() {
    let mut raw = String::from(
        "From: a@example.org\r\nTo: agent-7@inbox.example.test\r\nSubject: parts\r\n\
         Content-Type: multipart/mixed; boundary=p\r\n\r\n",
    );
    for _ in 0..200_000 {
        raw.push_str("--p\r\n\r\n");
    }
    raw.push_str("--p\r\n\r\nyour code is 4821\r\n--p--\r\n");
    let email = parse(InboundFormat::Raw, raw.as_bytes())
        .await
        .expect("parsed");
    assert_eq!(email.subject.as_deref(), Some("parts"));
    assert_eq!(email.to, vec!["agent-7@inbox.example.test"]);
    assert!(email.attachments.is_empty());
    let text = email.text.as_deref().expect("the body as text");
    assert!(
        text.starts_with("--p\r\n") && text.contains("your code is 4821"),
        "{}",
        short_text(&email)
    );
}

#[tokio::test]
async fn only_delivery_fields_the_receiving_side_wrote_name_the_envelope() {
    let raw = "Delivered-To: agent-7@inbox.example.test\r\nReceived: by mx.inbox.example.test\r\n\
               Delivered-To: victim@inbox.example.test\r\nFrom: a@example.org\r\n\
               To: agent-7@inbox.example.test\r\n\r\nhi\r\n";
    let email = parse(InboundFormat::Raw, raw.as_bytes())
        .await
        .expect("parsed");
    assert_eq!(email.envelope_to, vec!["agent-7@inbox.example.test"]);
    let forged = "Delivered-To: victim@inbox.example.test\r\nFrom: a@example.org\r\n\
                  To: agent-7@inbox.example.test\r\n\r\nhi\r\n";
    let email = parse(InboundFormat::Raw, forged.as_bytes())
        .await
        .expect("parsed");
    assert!(email.envelope_to.is_empty(), "{:?}", email.envelope_to);
}

#[tokio::test]
async fn only_the_return_path_written_on_top_names_the_envelope_sender() {
    for (raw, sender) in [
        (
            "Return-Path: <bob@other.com>\r\nReceived: by mx.inbox.example.test\r\n\
             Return-Path: <alice@example.org>\r\nFrom: carol@other.com\r\n\r\nhi\r\n",
            Some("bob@other.com"),
        ),
        (
            "Delivered-To: agent-7@inbox.example.test\r\nReceived: by mx.inbox.example.test\r\n\
             Return-Path: <alice@example.org>\r\nFrom: carol@other.com\r\n\r\nhi\r\n",
            None,
        ),
        (
            "Return-Path: <bob@other.com>\r\nReturn-Path: <alice@example.org>\r\n\
             From: carol@other.com\r\n\r\nhi\r\n",
            Some("bob@other.com"),
        ),
    ] {
        let email = parse(InboundFormat::Raw, raw.as_bytes())
            .await
            .expect("parsed");
        assert_eq!(email.envelope_from.as_deref(), sender, "{raw}");
    }
}

#[tokio::test]
async fn a_bounces_empty_return_path_names_no_envelope_sender() {
    let raw =
        "Return-Path: <>\r\nFrom: mailer-daemon@example.net\r\nSubject: failure\r\n\r\nbounced\r\n";
    let email = parse(InboundFormat::Raw, raw.as_bytes())
        .await
        .expect("parsed");
    assert_eq!(email.envelope_from, None);
    assert_eq!(email.from.as_deref(), Some("mailer-daemon@example.net"));
}

#[tokio::test]
async fn the_senders_authentication_is_read_from_the_results_above_the_first_received() {
    let raw = |results_above: &str, results_below: &str| {
        format!(
            "Authentication-Results: {results_above}\r\nReceived: by mx.example.net\r\n\
             Authentication-Results: {results_below}\r\nFrom: Bank <alerts@bank.example>\r\n\
             To: agent@inbox.example.test\r\nSubject: code\r\n\r\n123456\r\n"
        )
    };
    let passed = parse(
        InboundFormat::Raw,
        raw("mx; dmarc=pass header.from=bank.example", "x; dkim=fail").as_bytes(),
    )
    .await
    .expect("parsed");
    assert_eq!(
        passed.sender_authentication,
        SenderAuthentication::Passed {
            domain: "bank.example".into()
        }
    );
    let forged = parse(
        InboundFormat::Raw,
        raw(
            "mx; dkim=fail header.d=bank.example",
            "x; dmarc=pass header.from=bank.example",
        )
        .as_bytes(),
    )
    .await
    .expect("parsed");
    assert_eq!(forged.sender_authentication, SenderAuthentication::Failed);

    let event = r#"{"type": "email.received", "data": {"email_id": "e-8",
        "from": "Bank <alerts@bank.example>", "to": ["agent-7@inbox.example.test"],
        "headers": {"Authentication-Results": "mx; dkim=pass header.d=bank.example",
                    "Received": "by mx.example.net"}}}"#;
    let from_the_provider = parse(InboundFormat::ProviderJson, event.as_bytes())
        .await
        .expect("parsed");
    assert_eq!(
        from_the_provider.sender_authentication,
        SenderAuthentication::Passed {
            domain: "bank.example".into()
        }
    );
}
