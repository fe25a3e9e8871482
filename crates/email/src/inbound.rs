//! `InboundParser` with mail-parser: raw RFC 5322 mail of any charset and transfer encoding, and
//! Resend's `email.received` webhook event.

use std::borrow::Cow;

use domain::AttachmentMeta;
use mail_parser::parsers::MessageStream;
use mail_parser::{Address, HeaderValue, Message, MessageParser, MessagePart, MimeHeaders};
use ports::{InboundEmail, InboundFormat, InboundParseError, InboundParser};
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;

/// The headers that name the mailbox a message was delivered to, added by the receiving MTA.
const ENVELOPE_HEADERS: [&str; 2] = ["Delivered-To", "X-Original-To"];

/// The only Resend event that carries inbound mail.
const RESEND_RECEIVED: &str = "email.received";

/// Reads inbound mail, raw or as Resend's JSON event. Holds nothing: share one freely.
#[derive(Debug, Clone, Copy, Default)]
pub struct MailParserInbound;

impl InboundParser for MailParserInbound {
    fn parse(&self, format: InboundFormat, body: &[u8]) -> Result<InboundEmail, InboundParseError> {
        match format {
            InboundFormat::Raw => parse_mime(body),
            InboundFormat::ProviderJson => parse_resend_event(body),
        }
    }
}

fn unreadable(reason: impl Into<String>) -> InboundParseError {
    InboundParseError(reason.into())
}

fn parse_mime(raw: &[u8]) -> Result<InboundEmail, InboundParseError> {
    let message = MessageParser::default()
        .parse(raw)
        .filter(|message| {
            message
                .headers()
                .iter()
                .any(|header| is_field_name(header.name()))
        })
        .ok_or_else(|| unreadable("not an RFC 5322 message: no header fields"))?;
    let email = InboundEmail {
        provider_message_id: None,
        internet_message_id: message.message_id().map(bracketed),
        in_reply_to: ids(message.in_reply_to()).into_iter().next(),
        references: ids(message.references()),
        subject: message.subject().map(str::to_owned),
        from: message.from().and_then(first_address),
        to: message.all_to().flat_map(addresses).collect(),
        cc: message.all_cc().flat_map(addresses).collect(),
        reply_to: message.reply_to().map(addresses).unwrap_or_default(),
        envelope_to: envelope_recipients(&message, raw),
        // mail-parser renders an HTML-only message's body as text here.
        text: message.body_text(0).map(Cow::into_owned),
        // Only a real HTML part: a text-only message has no HTML to show.
        html: message
            .html_bodies()
            .find(|part| part.is_text_html())
            .and_then(MessagePart::text_contents)
            .map(str::to_owned),
        attachments: message.attachments().map(attachment).collect(),
        headers: headers(&message, raw),
    };
    Ok(email)
}

/// A header field name as RFC 5322 allows it: printable ASCII but the colon. mail-parser reads
/// any leading bytes as some header; one well-named field tells mail from garbage.
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

/// `Delivered-To` and `X-Original-To`, each address once, in the order they came.
fn envelope_recipients(message: &Message<'_>, raw: &[u8]) -> Vec<String> {
    let mut recipients: Vec<String> = Vec::new();
    let delivery_headers = message.headers().iter().filter(|header| {
        ENVELOPE_HEADERS
            .iter()
            .any(|name| header.name().eq_ignore_ascii_case(name))
    });
    for header in delivery_headers {
        if let HeaderValue::Address(list) =
            MessageStream::new(raw_value(raw, header)).parse_address()
        {
            for address in addresses(&list) {
                if !recipients
                    .iter()
                    .any(|known| known.eq_ignore_ascii_case(&address))
                {
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

fn attachment(part: &MessagePart<'_>) -> AttachmentMeta {
    let content_type = match part.content_type() {
        Some(kind) => match kind.subtype() {
            Some(subtype) => format!("{}/{}", kind.ctype(), subtype),
            None => kind.ctype().to_owned(),
        },
        None if part.is_text() => "text/plain".to_owned(),
        None => "application/octet-stream".to_owned(),
    };
    AttachmentMeta {
        filename: part.attachment_name().map(str::to_owned),
        content_type: content_type.to_ascii_lowercase(),
        // The decoded content's length: what the attachment weighs once saved.
        size: part.len() as u64,
        content_id: part.content_id().map(str::to_owned),
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
    Ok(InboundEmail {
        provider_message_id: data.email_id,
        internet_message_id: data.message_id.as_deref().map(bracketed),
        in_reply_to,
        references,
        subject: data.subject,
        from: data
            .from
            .as_deref()
            .and_then(|from| parsed_addresses(from).into_iter().next()),
        to: address_list(&data.to),
        cc: address_list(&data.cc),
        reply_to: address_list(&data.reply_to),
        // Resend lists the Bcc recipients it received the message for: in no header.
        envelope_to: address_list(&data.bcc),
        text: data.text,
        html: data.html,
        attachments: data
            .attachments
            .into_iter()
            .map(resend_attachment)
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

fn resend_attachment(attachment: ResendAttachment) -> AttachmentMeta {
    AttachmentMeta {
        filename: attachment.filename,
        content_type: attachment
            .content_type
            .unwrap_or_else(|| "application/octet-stream".to_owned()),
        size: attachment.size,
        content_id: attachment.content_id,
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
        let parser = MailParserInbound;
        for body in [&b""[..], b"\r\n\r\n", b"\x00\x01\x02", b"just some words"] {
            let error = parser.parse(InboundFormat::Raw, body).expect_err("refused");
            assert!(error.0.contains("RFC 5322"), "{error}");
        }
        for body in [
            &b""[..],
            b"[]",
            b"{\"type\":\"email.received\"}",
            b"not json",
        ] {
            let error = parser
                .parse(InboundFormat::ProviderJson, body)
                .expect_err("refused");
            assert!(error.0.contains("Resend event"), "{error}");
        }
        let other = br#"{"type":"email.delivered","data":{}}"#;
        let error = parser
            .parse(InboundFormat::ProviderJson, other)
            .expect_err("refused");
        assert!(error.0.contains("email.delivered"), "{error}");
    }
}
