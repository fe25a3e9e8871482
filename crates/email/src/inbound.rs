//! `InboundParser` with mail-parser: raw RFC 5322 mail of any charset and transfer encoding, and
//! Resend's `email.received` webhook event.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::Arc;

use async_trait::async_trait;
use domain::{json_items_within, AttachmentId, AttachmentMeta, MAX_JSON_ITEMS};
use mail_parser::parsers::MessageStream;
use mail_parser::{
    Address, HeaderName, HeaderValue, Message, MessageParser, MessagePart, MimeHeaders,
};
use ports::{AttachmentBytes, InboundEmail, InboundFormat, InboundParseError, InboundParser};
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;

use crate::authentication::sender_authentication;

/// The headers that name the mailbox a message was delivered to, added by the receiving MTA.
const ENVELOPE_HEADERS: [&str; 2] = ["Delivered-To", "X-Original-To"];

/// The only Resend event that carries inbound mail.
const RESEND_RECEIVED: &str = "email.received";

/// The most MIME parts a message may become: past it (or past the header and list bounds below)
/// its structure is not parsed and it is kept flattened. mail-parser's memory grows with every
/// part, header and list item (about 25 bytes of it for every byte of a message made of them).
const MAX_MIME_PARTS: usize = 5_000;
/// The most header fields a message may have in all its parts (each needs a colon).
const MAX_HEADER_FIELDS: usize = 100_000;
/// The most list items (addresses, ids) its headers may hold (each but the first needs a comma).
const MAX_LIST_ITEMS: usize = 200_000;
/// The most bracketed items its header blocks may hold: message ids, which `References` lists
/// with no comma between them, and addresses.
const MAX_HEADER_BRACKETS: usize = 200_000;
/// How much of a flattened message's header block is read.
const FLATTENED_HEADER_BYTES: usize = 64 * 1024;

/// What a nested message's type `message` is rewritten to before parsing, so that mail-parser
/// keeps the part as an attachment instead of parsing it as a message of its own (and, were it
/// encoded, decoding and parsing that one too): one message nested 60,000 deep overflowed the
/// stack of whichever thread dropped it. Same length, so every offset stays.
const NESTED_MESSAGE_TYPE: &[u8; 7] = b"nested-";
/// What `multipart/digest`'s subtype is rewritten to, since a digest's untyped parts are messages.
const DIGEST_SUBTYPE: &[u8; 6] = b"x-dgst";

/// Reads inbound mail, raw or as Resend's JSON event, on the blocking threads: a large message
/// takes a second or more of CPU, which would stall every request of the worker it ran on.
#[derive(Debug, Clone, Copy, Default)]
pub struct MailParserInbound;

#[async_trait]
impl InboundParser for MailParserInbound {
    async fn parse(
        &self,
        format: InboundFormat,
        body: Vec<u8>,
    ) -> Result<InboundEmail, InboundParseError> {
        tokio::task::spawn_blocking(move || parse_now(format, &body))
            .await
            .map_err(|error| unreadable(format!("the parser stopped: {error}")))?
    }
}

fn parse_now(format: InboundFormat, body: &[u8]) -> Result<InboundEmail, InboundParseError> {
    match format {
        InboundFormat::Raw => parse_mime(body),
        InboundFormat::ProviderJson => parse_resend_event(body),
    }
}

fn unreadable(reason: impl Into<String>) -> InboundParseError {
    InboundParseError(reason.into())
}

/// Counts, in one pass, what bounds the structure mail-parser can make of a message. Each is an
/// upper bound, so a message within all of them is safe to parse whole: a part after the first
/// begins at a boundary, `--` and at least one more byte, so a run of n dashes begins at most n/2
/// of them; a header field needs a colon; a list item after the first needs a comma.
#[derive(Debug, Default, PartialEq, Eq)]
struct Shape {
    parts: usize,
    colons: usize,
    commas: usize,
    /// `<` in header blocks, where each may open a message id or an address.
    header_brackets: usize,
}

impl Shape {
    fn of(raw: &[u8]) -> Self {
        let mut shape = Shape {
            parts: 1,
            ..Shape::default()
        };
        let mut dashes = 0;
        for &byte in raw {
            if byte == b'-' {
                dashes += 1;
                continue;
            }
            shape.parts += dashes / 2;
            dashes = 0;
            match byte {
                b':' => shape.colons += 1,
                b',' => shape.commas += 1,
                _ => {}
            }
        }
        shape.parts += dashes / 2;
        shape.header_brackets = header_brackets(raw);
        shape
    }

    fn parsable(&self) -> bool {
        self.parts <= MAX_MIME_PARTS
            && self.colons <= MAX_HEADER_FIELDS
            && self.commas <= MAX_LIST_ITEMS
            && self.header_brackets <= MAX_HEADER_BRACKETS
    }
}

/// `<` in the message's header blocks: the top one, and each that follows a line starting with
/// `--` (a part's boundary, or body text that looks like one, counted too), to its blank line.
/// A body's `<` (HTML) costs the parser nothing and is not counted.
fn header_brackets(raw: &[u8]) -> usize {
    let mut count = 0;
    let mut in_header = true;
    for line in raw.split(|&byte| byte == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if in_header {
            if line.is_empty() {
                in_header = false;
            } else {
                count += line.iter().filter(|&&byte| byte == b'<').count();
            }
        } else if line.starts_with(b"--") {
            in_header = true;
        }
    }
    count
}

/// `needle` (lower-case ASCII) at `at` in `haystack`, in any case.
fn word_at(haystack: &[u8], at: usize, needle: &[u8]) -> bool {
    haystack
        .get(at..at + needle.len())
        .is_some_and(|found| found.eq_ignore_ascii_case(needle))
}

/// Where the next byte after `at` that is not white space (folding included) is.
fn skip_space(raw: &[u8], mut at: usize) -> usize {
    while raw
        .get(at)
        .is_some_and(|byte| matches!(byte, b' ' | b'\t' | b'\r' | b'\n'))
    {
        at += 1;
    }
    at
}

/// Where a content type's subtype begins, when a `/` follows its type ending at `type_end`.
fn subtype_at(raw: &[u8], type_end: usize) -> Option<usize> {
    let slash = skip_space(raw, type_end);
    (raw.get(slash) == Some(&b'/')).then(|| skip_space(raw, slash + 1))
}

/// The message with every `message/rfc822` and `message/global` type and every `multipart/digest`
/// subtype rewritten (anywhere, headers or not: the bytes a content type is read from are the
/// message's own), so that no part is parsed as a nested message.
fn without_nested_messages(raw: &[u8]) -> Cow<'_, [u8]> {
    let mut rewritten: Option<Vec<u8>> = None;
    let mut at = 0;
    while at < raw.len() {
        let nested = word_at(raw, at, b"message")
            && subtype_at(raw, at + 7)
                .is_some_and(|sub| word_at(raw, sub, b"rfc822") || word_at(raw, sub, b"global"));
        if nested {
            rewritten.get_or_insert_with(|| raw.to_vec())[at..at + 7]
                .copy_from_slice(NESTED_MESSAGE_TYPE);
            at += 7;
            continue;
        }
        let digest = word_at(raw, at, b"multipart")
            .then(|| subtype_at(raw, at + 9))
            .flatten()
            .filter(|&sub| word_at(raw, sub, b"digest"));
        if let Some(sub) = digest {
            rewritten.get_or_insert_with(|| raw.to_vec())[sub..sub + 6]
                .copy_from_slice(DIGEST_SUBTYPE);
            at = sub + 6;
            continue;
        }
        at += 1;
    }
    rewritten.map_or(Cow::Borrowed(raw), Cow::Owned)
}

fn parse_mime(raw: &[u8]) -> Result<InboundEmail, InboundParseError> {
    if !Shape::of(raw).parsable() {
        return parse_flattened(raw);
    }
    let raw = without_nested_messages(raw);
    let raw = raw.as_ref();
    let message = with_header_fields(MessageParser::default().parse(raw))?;
    let mut email = from_headers(&message, raw);
    // mail-parser renders an HTML-only message's body as text here.
    email.text = message.body_text(0).map(Cow::into_owned);
    // Only a real HTML part: a text-only message has no HTML to show.
    email.html = message
        .html_bodies()
        .find(|part| part.is_text_html())
        .and_then(MessagePart::text_contents)
        .map(str::to_owned);
    email.attachments = message
        .attachments()
        .enumerate()
        .map(|(index, part)| attachment(index, part))
        .collect();
    Ok(email)
}

/// A message whose structure is too large to parse: its top header block (the first
/// `FLATTENED_HEADER_BYTES` of it) parsed, and everything after it kept as its text, undecoded.
fn parse_flattened(raw: &[u8]) -> Result<InboundEmail, InboundParseError> {
    let body_start = [&b"\r\n\r\n"[..], b"\n\n"]
        .iter()
        .filter_map(|blank| {
            raw.windows(blank.len())
                .position(|window| window == *blank)
                .map(|at| at + blank.len())
        })
        .min()
        .unwrap_or(raw.len());
    let head = &raw[..body_start.min(FLATTENED_HEADER_BYTES)];
    let message = with_header_fields(MessageParser::default().parse_headers(head))?;
    let mut email = from_headers(&message, head);
    email.text = Some(String::from_utf8_lossy(&raw[body_start..]).into_owned());
    tracing::info!(
        bytes = raw.len(),
        "inbound mail too intricate to parse whole; kept flattened"
    );
    Ok(email)
}

/// The parsed message, when it has a well-named header field: mail-parser reads any leading bytes
/// as some header, and one such field tells mail from garbage.
fn with_header_fields(parsed: Option<Message<'_>>) -> Result<Message<'_>, InboundParseError> {
    parsed
        .filter(|message| {
            message
                .headers()
                .iter()
                .any(|header| is_field_name(header.name()))
        })
        .ok_or_else(|| unreadable("not an RFC 5322 message: no header fields"))
}

/// What the top header block of a message says.
fn from_headers(message: &Message<'_>, raw: &[u8]) -> InboundEmail {
    let from = message.from().and_then(first_address);
    let headers = headers(message, raw);
    InboundEmail {
        provider_message_id: None,
        internet_message_id: message.message_id().map(bracketed),
        in_reply_to: ids(message.in_reply_to()).into_iter().next(),
        references: ids(message.references()),
        subject: message.subject().map(str::to_owned),
        sender_authentication: sender_authentication(&headers, from.as_deref()),
        from,
        to: message.all_to().flat_map(addresses).collect(),
        cc: message.all_cc().flat_map(addresses).collect(),
        reply_to: message.reply_to().map(addresses).unwrap_or_default(),
        envelope_to: envelope_recipients(message, raw),
        envelope_from: envelope_sender(message),
        headers,
        ..InboundEmail::default()
    }
}

/// The envelope sender the receiving server wrote (`Return-Path`), when it names an address:
/// a bounce's empty `<>` names none. The receiving server writes it at the top, above every
/// `Received` line: a `Return-Path` below one, or below another, came with the message from its
/// sender, who may write anything there.
fn envelope_sender(message: &Message<'_>) -> Option<String> {
    let written = message
        .headers()
        .iter()
        .take_while(|header| header.name != HeaderName::Received)
        .find(|header| header.name == HeaderName::ReturnPath)?;
    let text = match &written.value {
        HeaderValue::Text(text) => text.as_ref(),
        HeaderValue::TextList(list) => list.first().map(AsRef::as_ref)?,
        _ => return None,
    };
    let address = text
        .trim()
        .trim_start_matches('<')
        .trim_end_matches('>')
        .trim();
    address.contains('@').then(|| address.to_owned())
}

/// A header field name as RFC 5322 allows it: printable ASCII but the colon.
fn is_field_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_graphic() && b != b':')
}

/// Message ids as RFC 5322 writes them: mail-parser drops the angle brackets.
fn bracketed(id: &str) -> String {
    format!("<{}>", id.trim_start_matches('<').trim_end_matches('>'))
}

fn ids(value: &HeaderValue<'_>) -> Vec<String> {
    match value {
        HeaderValue::Text(id) => vec![bracketed(id)],
        HeaderValue::TextList(ids) => ids.iter().map(|id| bracketed(id)).collect(),
        _ => Vec::new(),
    }
}

/// Every address of the list, those of groups included, without display names.
fn addresses(list: &Address<'_>) -> Vec<String> {
    list.iter()
        .filter_map(|addr| addr.address())
        .map(str::to_owned)
        .collect()
}

fn first_address(list: &Address<'_>) -> Option<String> {
    list.iter()
        .find_map(|addr| addr.address())
        .map(str::to_owned)
}

/// The header's value as it is written in the message (folded, still encoded).
fn raw_value<'a>(raw: &'a [u8], header: &mail_parser::Header<'_>) -> &'a [u8] {
    raw.get(header.offset_start() as usize..header.offset_end() as usize)
        .unwrap_or_default()
}

/// The mailboxes the receiving side says it delivered the message to: `Delivered-To` and
/// `X-Original-To` written above a `Received` field, each address once. Every mail server on the
/// way writes its `Received` above what it got, so a field below the first one may be the
/// sender's own and names nothing; a message without any names nothing either.
fn envelope_recipients(message: &Message<'_>, raw: &[u8]) -> Vec<String> {
    let fields = message.headers();
    let Some(first_received) = fields
        .iter()
        .position(|header| header.name().eq_ignore_ascii_case("Received"))
    else {
        return Vec::new();
    };
    let mut recipients: Vec<String> = Vec::new();
    // Each address once, in any case: a set, as the fields may name many thousands.
    let mut seen: HashSet<String> = HashSet::new();
    let delivery_headers = fields[..first_received].iter().filter(|header| {
        ENVELOPE_HEADERS
            .iter()
            .any(|name| header.name().eq_ignore_ascii_case(name))
    });
    for header in delivery_headers {
        if let HeaderValue::Address(list) =
            MessageStream::new(raw_value(raw, header)).parse_address()
        {
            for address in addresses(&list) {
                if seen.insert(address.to_ascii_lowercase()) {
                    recipients.push(address);
                }
            }
        }
    }
    recipients
}

/// Each header of the message's top level, RFC 2047 words decoded and folding undone.
fn headers(message: &Message<'_>, raw: &[u8]) -> Vec<(String, String)> {
    message
        .headers()
        .iter()
        .map(|header| {
            let value = match MessageStream::new(raw_value(raw, header)).parse_unstructured() {
                HeaderValue::Text(text) => text.into_owned(),
                _ => String::new(),
            };
            (header.name().to_owned(), value)
        })
        .collect()
}

/// An attachment's part: what it says of itself, and its decoded bytes.
fn attachment(index: usize, part: &MessagePart<'_>) -> AttachmentBytes {
    let content_type = match part.content_type() {
        Some(kind) => {
            // A nested message's type was rewritten before parsing (`without_nested_messages`).
            let ctype = match kind
                .ctype()
                .as_bytes()
                .eq_ignore_ascii_case(NESTED_MESSAGE_TYPE)
            {
                true => "message",
                false => kind.ctype(),
            };
            match kind.subtype() {
                Some(subtype) => format!("{ctype}/{subtype}"),
                None => ctype.to_owned(),
            }
        }
        // MIME reads a part without a type as text, but an attachment that names none is
        // served as bytes (mail-plus.md).
        None => "application/octet-stream".to_owned(),
    };
    let content = part.contents();
    AttachmentBytes {
        meta: AttachmentMeta {
            id: AttachmentId::at_index(index),
            filename: part.attachment_name().map(str::to_owned),
            content_type: content_type.to_ascii_lowercase(),
            // The decoded content's length: what the attachment weighs once saved.
            size: content.len() as u64,
            content_id: part.content_id().map(str::to_owned),
            stored: false,
            sha256: None,
        },
        content: Some(Arc::from(content)),
    }
}

/// Resend's webhook event. The event itself carries metadata only (Resend serves the body,
/// headers and attachments through its Received emails API); `text`, `html`, `headers`,
/// `reply_to` and attachment sizes are read when a payload has them.
#[derive(Deserialize)]
struct ResendEvent {
    #[serde(rename = "type")]
    kind: String,
    data: ResendReceived,
}

#[derive(Deserialize)]
struct ResendReceived {
    #[serde(alias = "id")]
    email_id: Option<String>,
    from: Option<String>,
    #[serde(default)]
    to: Vec<String>,
    #[serde(default)]
    cc: Vec<String>,
    #[serde(default)]
    bcc: Vec<String>,
    #[serde(default)]
    reply_to: Vec<String>,
    subject: Option<String>,
    message_id: Option<String>,
    text: Option<String>,
    html: Option<String>,
    #[serde(default)]
    headers: OrderedHeaders,
    #[serde(default)]
    attachments: Vec<ResendAttachment>,
}

#[derive(Deserialize)]
struct ResendAttachment {
    filename: Option<String>,
    content_type: Option<String>,
    content_id: Option<String>,
    #[serde(default)]
    size: u64,
}

/// A JSON object of headers read in the order it is written (a name given as an array of
/// values yields one header per value).
#[derive(Default)]
struct OrderedHeaders(Vec<(String, String)>);

impl<'de> Deserialize<'de> for OrderedHeaders {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct InOrder;

        impl<'de> Visitor<'de> for InOrder {
            type Value = OrderedHeaders;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object of header names and values")
            }

            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(OrderedHeaders::default())
            }

            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                let mut headers = Vec::new();
                while let Some((name, value)) = map.next_entry::<String, serde_json::Value>()? {
                    match value {
                        serde_json::Value::Array(values) => headers.extend(
                            values
                                .into_iter()
                                .map(|value| (name.clone(), json_text(value))),
                        ),
                        value => headers.push((name, json_text(value))),
                    }
                }
                Ok(OrderedHeaders(headers))
            }
        }

        deserializer.deserialize_any(InOrder)
    }
}

fn json_text(value: serde_json::Value) -> String {
    match value {
        serde_json::Value::String(text) => text,
        other => other.to_string(),
    }
}

fn parse_resend_event(body: &[u8]) -> Result<InboundEmail, InboundParseError> {
    // Counted before parsing: a parsed value costs tens of bytes an item, whatever its text.
    if !json_items_within(body, MAX_JSON_ITEMS) {
        return Err(unreadable(format!(
            "a Resend event holds at most {MAX_JSON_ITEMS} JSON items"
        )));
    }
    let event: ResendEvent = serde_json::from_slice(body)
        .map_err(|error| unreadable(format!("not a Resend event: {error}")))?;
    if event.kind != RESEND_RECEIVED {
        return Err(unreadable(format!(
            "Resend event {:?} carries no inbound mail (expected {RESEND_RECEIVED})",
            event.kind
        )));
    }
    let data = event.data;
    let header = |name: &str| {
        data.headers
            .0
            .iter()
            .find(|(known, _)| known.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    };
    let in_reply_to = header("In-Reply-To").and_then(|value| message_ids(value).into_iter().next());
    let references = header("References").map(message_ids).unwrap_or_default();
    let from = data
        .from
        .as_deref()
        .and_then(|from| parsed_addresses(from).into_iter().next());
    let sender_authentication = sender_authentication(&data.headers.0, from.as_deref());
    Ok(InboundEmail {
        sender_authentication,
        provider_message_id: data.email_id,
        internet_message_id: data.message_id.as_deref().map(bracketed),
        in_reply_to,
        references,
        subject: data.subject,
        // Resend's event reports no envelope sender of its own.
        envelope_from: header("Return-Path")
            .map(|path| {
                path.trim()
                    .trim_start_matches('<')
                    .trim_end_matches('>')
                    .trim()
            })
            .filter(|path| path.contains('@'))
            .map(str::to_owned),
        from,
        to: address_list(&data.to),
        cc: address_list(&data.cc),
        reply_to: address_list(&data.reply_to),
        // What the provider reports it received the message for, Bcc recipients (in no
        // header) included.
        envelope_to: address_list(&[data.to.as_slice(), &data.cc, &data.bcc].concat()),
        text: data.text,
        html: data.html,
        attachments: data
            .attachments
            .into_iter()
            .enumerate()
            .map(|(index, attachment)| resend_attachment(index, attachment))
            .collect(),
        headers: data.headers.0,
    })
}

fn address_list(values: &[String]) -> Vec<String> {
    values
        .iter()
        .flat_map(|value| parsed_addresses(value))
        .collect()
}

/// The addresses of a header value such as `"Acme" <a@example.com>, b@example.com`.
fn parsed_addresses(value: &str) -> Vec<String> {
    match MessageStream::new(header_line(value).as_bytes()).parse_address() {
        HeaderValue::Address(list) => addresses(&list),
        _ => Vec::new(),
    }
}

fn message_ids(value: &str) -> Vec<String> {
    ids(&MessageStream::new(header_line(value).as_bytes()).parse_id())
}

/// mail-parser's field parsers read up to the end of the header line.
fn header_line(value: &str) -> String {
    format!("{value}\r\n")
}

/// An attachment of Resend's event: metadata only (Resend serves the bytes through its API).
fn resend_attachment(index: usize, attachment: ResendAttachment) -> AttachmentBytes {
    AttachmentBytes {
        meta: AttachmentMeta {
            id: AttachmentId::at_index(index),
            filename: attachment.filename,
            content_type: attachment
                .content_type
                .unwrap_or_else(|| "application/octet-stream".to_owned()),
            size: attachment.size,
            content_id: attachment.content_id,
            stored: false,
            sha256: None,
        },
        content: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_are_dropped_from_addresses() {
        assert_eq!(
            parsed_addresses(r#""Acme, Inc." <news@acme.example>, plain@x.example"#),
            vec!["news@acme.example", "plain@x.example"]
        );
        assert_eq!(
            parsed_addresses("team: a@x.example, b@x.example;"),
            vec!["a@x.example", "b@x.example"]
        );
        assert_eq!(parsed_addresses(""), Vec::<String>::new());
    }

    #[test]
    fn message_ids_keep_their_brackets() {
        assert_eq!(
            message_ids("<a@x.example>  <b@x.example>"),
            vec!["<a@x.example>", "<b@x.example>"]
        );
        assert_eq!(bracketed("a@x"), "<a@x>");
        assert_eq!(bracketed("<a@x>"), "<a@x>");
    }

    #[test]
    fn garbage_is_refused_with_a_reason() {
        for body in [&b""[..], b"\r\n\r\n", b"\x00\x01\x02", b"just some words"] {
            let error = parse_now(InboundFormat::Raw, body).expect_err("refused");
            assert!(error.0.contains("RFC 5322"), "{error}");
        }
        for body in [
            &b""[..],
            b"[]",
            b"{\"type\":\"email.received\"}",
            b"not json",
        ] {
            let error = parse_now(InboundFormat::ProviderJson, body).expect_err("refused");
            assert!(error.0.contains("Resend event"), "{error}");
        }
        let other = br#"{"type":"email.delivered","data":{}}"#;
        let error = parse_now(InboundFormat::ProviderJson, other).expect_err("refused");
        assert!(error.0.contains("email.delivered"), "{error}");
    }

    #[test]
    fn the_shape_bounds_parts_by_dash_runs_and_fields_by_colons_and_commas() {
        assert_eq!(
            Shape::of(b"a:b, c\n--x\n---\n------\n"),
            Shape {
                parts: 1 + 1 + 1 + 3,
                colons: 1,
                commas: 1,
                header_brackets: 0,
            }
        );
        let references = format!(
            "References: {}\n\nhi",
            "<a@b> ".repeat(MAX_HEADER_BRACKETS + 1)
        );
        assert!(
            !Shape::of(references.as_bytes()).parsable(),
            "ids with no comma between"
        );
        let html = format!("From: a@b\n\n{}", "<p>".repeat(MAX_HEADER_BRACKETS + 1));
        assert!(
            Shape::of(html.as_bytes()).parsable(),
            "a body's tags cost nothing"
        );
        let part_header = format!(
            "Content-Type: multipart/mixed; boundary=b\n\n--b\nReferences: {}\n\nhi\n--b--\n",
            "<a@b> ".repeat(MAX_HEADER_BRACKETS + 1)
        );
        assert!(
            !Shape::of(part_header.as_bytes()).parsable(),
            "a part's header block counts"
        );
        assert!(Shape::of(b"From: a@b\n\nhi").parsable());
        assert!(!Shape::of("--b\n".repeat(MAX_MIME_PARTS).as_bytes()).parsable());
        assert!(!Shape::of(":".repeat(MAX_HEADER_FIELDS + 1).as_bytes()).parsable());
        assert!(!Shape::of(",".repeat(MAX_LIST_ITEMS + 1).as_bytes()).parsable());
    }

    #[test]
    fn nested_message_types_and_digests_are_rewritten_in_any_case_and_spacing() {
        let raw = b"Content-Type: Message/RFC822\r\nX: message /\r\n global\r\n\
                    Content-Type: multipart/Digest; boundary=d\r\nmessage/rfc822x\r\n\
                    a message / reply\r\n";
        let rewritten = without_nested_messages(raw);
        let text = String::from_utf8_lossy(&rewritten);
        assert_eq!(
            text,
            "Content-Type: nested-/RFC822\r\nX: nested- /\r\n global\r\n\
             Content-Type: multipart/x-dgst; boundary=d\r\nnested-/rfc822x\r\n\
             a message / reply\r\n"
        );
        assert!(matches!(
            without_nested_messages(b"plain mail"),
            Cow::Borrowed(_)
        ));
    }
}
