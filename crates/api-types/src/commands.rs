//! The request shapes the API accepts, turned into the commands the use cases take
//! (`domain::commands`), or into every field that is wrong. No transport here: a way in reads its
//! input into these shapes, converts with `try_into`, and renders `FieldErrors` its own way.

use std::sync::Arc;

use base64::alphabet::STANDARD;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::Engine;
use domain::commands::{
    ChannelsWait, CodeChannel, CodeWait, ForwardMail, ReplyMail, SendMail, SendRequest, X402Check,
    X402Fetch, X402Request,
};
use domain::email::{MAX_CUSTOM_HEADERS, MAX_CUSTOM_HEADER_BYTES};
use domain::x402::{
    check_fetch_headers, ChallengeError, FetchMethod, PaymentChallenge, MAX_FETCH_BODY_BYTES,
};
use domain::{
    check_custom_header, check_custom_headers_size, check_no_nul, AtomicAmount, EmailAddress,
    EvmAddress, IdempotencyKey, IdempotencyKeyError, NewAttachment, Targets, WebhookUrl,
    MAX_BODY_TEXT_BYTES, MAX_IDEMPOTENCY_KEY_CHARS, MAX_OUTBOUND_ATTACHMENTS,
    MAX_OUTBOUND_ATTACHMENT_BYTES, MAX_RECIPIENTS, MAX_REQUEST_ID_CHARS, MAX_WAIT_SECS,
};
use serde_json::{json, Value};

use crate::field_errors::{FieldError, FieldErrors, FieldPath, RequestPart};
use crate::{
    AttachmentIn, CodesWaitRequest, EmailForwardRequest, EmailReplyRequest, EmailSendRequest,
    WaitForCodeRequest, WalletSendRequest, X402AuthorizeRequest, X402CheckRequest,
    X402FetchRequest,
};

/// Where a mail send or reply carries its idempotency key: the `Idempotency-Key` header.
pub const IDEMPOTENCY_KEY_HEADER: &str = "idempotency-key";

/// A mail send as received: its body, and the bytes of its idempotency key when one came.
#[derive(Debug)]
pub struct EmailSend<'a> {
    pub body: EmailSendRequest,
    pub idempotency_key: Option<&'a [u8]>,
}

/// A reply as received: its body, and the bytes of its idempotency key when one came.
#[derive(Debug)]
pub struct EmailReply<'a> {
    pub body: EmailReplyRequest,
    pub idempotency_key: Option<&'a [u8]>,
}

/// A forward as received: its body, and the bytes of its idempotency key when one came.
#[derive(Debug)]
pub struct EmailForward<'a> {
    pub body: EmailForwardRequest,
    pub idempotency_key: Option<&'a [u8]>,
}

/// Base64 as agents write it: the standard alphabet, padded or not, bits past the last byte
/// ignored (line breaks are taken out before).
const LENIENT_BASE64: GeneralPurpose = GeneralPurpose::new(
    &STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

/// The error of `attachments` given (`count` of `bytes` decoded) when a message would carry more
/// than it may; a forward names what it carries of the original's (`(count, bytes)`) beside.
pub fn attachments_too_large(
    count: usize,
    bytes: u64,
    forwarded: Option<(usize, u64)>,
) -> FieldError {
    let limits = format!(
        "at most {MAX_OUTBOUND_ATTACHMENTS} attachments of {MAX_OUTBOUND_ATTACHMENT_BYTES} bytes \
         in all (decoded) go with one message"
    );
    let mut context = json!({
        "max_attachments": MAX_OUTBOUND_ATTACHMENTS,
        "max_bytes": MAX_OUTBOUND_ATTACHMENT_BYTES,
    });
    let reason = match forwarded {
        Some((carried, carried_bytes)) => {
            context["forwarded_attachments"] = json!(carried);
            context["forwarded_bytes"] = json!(carried_bytes);
            format!(
                "{limits}, the original's {carried} stored attachments ({carried_bytes} bytes) \
                 with those given"
            )
        }
        None => limits,
    };
    FieldError::value_error(
        "attachments",
        json!({ "attachments": count, "bytes": bytes }),
        reason,
    )
    .with_context(context)
}

/// The attachments of a send, reply or forward, decoded; an error for their count or their
/// size in all (told before anything is decoded when the text alone is too long), and one per
/// attachment that is wrong.
fn parse_attachments(
    given: Option<Vec<AttachmentIn>>,
    failures: &mut Vec<FieldError>,
) -> Vec<NewAttachment> {
    let given = given.unwrap_or_default();
    let too_large = |bytes: usize| attachments_too_large(given.len(), bytes as u64, None);
    // Four characters of base64 hold three bytes (less up to two of padding): no work is spent
    // decoding what cannot fit. The text's length bounds that from above; only text it does not
    // clear is counted without its whitespace.
    let least_bytes = |count_characters: fn(&str) -> usize| -> usize {
        given
            .iter()
            .map(|attachment| {
                (count_characters(&attachment.content_base64) / 4 * 3).saturating_sub(2)
            })
            .sum()
    };
    if given.len() > MAX_OUTBOUND_ATTACHMENTS {
        failures.push(too_large(least_bytes(base64_characters)));
        return Vec::new();
    }
    if least_bytes(str::len) > MAX_OUTBOUND_ATTACHMENT_BYTES {
        let least_bytes = least_bytes(base64_characters);
        if least_bytes > MAX_OUTBOUND_ATTACHMENT_BYTES {
            failures.push(too_large(least_bytes));
            return Vec::new();
        }
    }
    let mut attachments = Vec::with_capacity(given.len());
    let mut total = 0;
    for (index, attachment) in given.iter().enumerate() {
        let at = |field: &str| vec!["attachments".into(), index.into(), field.into()];
        let content = match decode_base64_text(&attachment.content_base64) {
            Ok(bytes) => bytes,
            Err(error) => {
                failures.push(FieldError::body(
                    at("content_base64"),
                    "value_error",
                    format!("Value error, content_base64 is not base64: {error}"),
                    json!({ "chars": attachment.content_base64.len() }),
                ));
                continue;
            }
        };
        total += content.len();
        match NewAttachment::new(
            attachment.filename.clone(),
            attachment.content_type.clone(),
            Arc::from(content),
        ) {
            Ok(attachment) => attachments.push(attachment),
            Err(refused) => {
                let (field, input) = match refused {
                    domain::NewAttachmentError::ContentType => {
                        ("content_type", json!(attachment.content_type))
                    }
                    _ => ("filename", json!(attachment.filename)),
                };
                failures.push(FieldError::body(
                    at(field),
                    "value_error",
                    format!("Value error, {refused}"),
                    input,
                ));
            }
        }
    }
    if total > MAX_OUTBOUND_ATTACHMENT_BYTES {
        failures.push(too_large(total));
    }
    attachments
}

/// The characters of base64 text that are not whitespace.
fn base64_characters(text: &str) -> usize {
    text.bytes()
        .filter(|byte| !byte.is_ascii_whitespace())
        .count()
}

/// Base64 text decoded, whitespace between its characters allowed. Text without whitespace, as
/// clients send it, is decoded as it is: byte by byte filtering costs far more than decoding.
fn decode_base64_text(text: &str) -> Result<Vec<u8>, base64::DecodeError> {
    LENIENT_BASE64.decode(text).or_else(|error| {
        let characters: Vec<u8> = text
            .bytes()
            .filter(|byte| !byte.is_ascii_whitespace())
            .collect();
        if characters.len() == text.len() {
            return Err(error);
        }
        LENIENT_BASE64.decode(characters)
    })
}

/// The `Idempotency-Key` header of a creating route (a webhook endpoint, its secret, its
/// replay, a key), read as a mail send reads it; `None` without the header.
pub fn idempotency_key_header(raw: Option<&[u8]>) -> Result<Option<IdempotencyKey>, FieldErrors> {
    header_key(raw).map_err(FieldErrors::from)
}

/// The idempotency key of a mail send, or pydantic's words for what is wrong with it. The key
/// travels as header text: visible ASCII and the tab, as HTTP reads a header's value.
fn header_key(raw: Option<&[u8]>) -> Result<Option<IdempotencyKey>, FieldError> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    let path = vec![FieldPath::from(IDEMPOTENCY_KEY_HEADER)];
    let header_text = raw
        .iter()
        .all(|byte| (b' '..=b'~').contains(byte) || *byte == b'\t');
    let text = std::str::from_utf8(raw)
        .ok()
        .filter(|_| header_text)
        .ok_or_else(|| {
            FieldError::new(
                RequestPart::Header,
                path.clone(),
                "value_error",
                "Value error, the idempotency key must be visible ASCII",
                Value::Null,
            )
        })?;
    IdempotencyKey::parse(text).map(Some).map_err(|error| {
        FieldError::new(
            RequestPart::Header,
            path,
            "value_error",
            format!("Value error, {error}"),
            json!(text),
        )
    })
}

/// Each address of one recipient field, or an error per invalid one.
fn parse_addresses(
    field: &str,
    raw: &[String],
    failures: &mut Vec<FieldError>,
) -> Vec<EmailAddress> {
    raw.iter()
        .enumerate()
        .filter_map(
            |(index, candidate)| match EmailAddress::parse(candidate.trim()) {
                Ok(address) => Some(address),
                Err(error) => {
                    failures.push(FieldError::body(
                        vec![field.into(), index.into()],
                        "value_error",
                        format!("value is not a valid email address: {error}"),
                        json!(candidate),
                    ));
                    None
                }
            },
        )
        .collect()
}

/// The addresses of `to`, `cc` and `bcc`, or an error per invalid one, for an empty `to`, and at
/// the field where the recipients in all pass `MAX_RECIPIENTS`.
fn parse_recipients(
    to_raw: &[String],
    cc_raw: Option<Vec<String>>,
    bcc_raw: Option<Vec<String>>,
    failures: &mut Vec<FieldError>,
) -> (Vec<EmailAddress>, Vec<EmailAddress>, Vec<EmailAddress>) {
    if to_raw.is_empty() {
        failures.push(FieldError::empty_list(vec!["to".into()]));
    }
    let cc_raw = cc_raw.unwrap_or_default();
    let bcc_raw = bcc_raw.unwrap_or_default();
    let to = parse_addresses("to", to_raw, failures);
    let cc = parse_addresses("cc", &cc_raw, failures);
    let bcc = parse_addresses("bcc", &bcc_raw, failures);
    let mut counted = 0;
    for (field, list) in [("to", to_raw), ("cc", &cc_raw), ("bcc", &bcc_raw)] {
        let before = counted;
        counted += list.len();
        if before <= MAX_RECIPIENTS && counted > MAX_RECIPIENTS {
            failures.push(
                FieldError::value_error(
                    field,
                    json!(list),
                    format!(
                        "at most {MAX_RECIPIENTS} recipients are allowed over to, cc and bcc \
                             together"
                    ),
                )
                .with_context(json!({ "max_recipients": MAX_RECIPIENTS })),
            );
        }
    }
    (to, cc, bcc)
}

fn check_body_text(text: &str) -> Option<FieldError> {
    if text.len() > MAX_BODY_TEXT_BYTES {
        return Some(
            FieldError::value_error(
                "body_text",
                // The text itself is not echoed back: it is over the limit by definition.
                json!({ "bytes": text.len() }),
                format!(
                    "body_text must be at most {MAX_BODY_TEXT_BYTES} bytes of UTF-8, got {}",
                    text.len()
                ),
            )
            .with_context(json!({ "max_bytes": MAX_BODY_TEXT_BYTES })),
        );
    }
    check_no_nul(text)
        .err()
        .map(|refused| FieldError::value_error("body_text", text, format!("body_text {refused}")))
}

fn check_subject(subject: &str) -> Option<FieldError> {
    if subject.contains(['\r', '\n']) {
        return Some(FieldError::value_error(
            "subject",
            subject,
            "the subject is a header: it must not contain CR or LF",
        ));
    }
    check_no_nul(subject).err().map(|refused| {
        FieldError::value_error("subject", subject, format!("the subject {refused}"))
    })
}

/// The custom headers, or an error for their total size and one per header refused.
fn check_headers(headers: &[(String, String)], failures: &mut Vec<FieldError>) {
    if let Err(refused) = check_custom_headers_size(
        headers
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_str())),
    ) {
        failures.push(
            FieldError::value_error("headers", json!({ "headers": headers.len() }), refused)
                .with_context(json!({
                    "max_headers": MAX_CUSTOM_HEADERS,
                    "max_bytes": MAX_CUSTOM_HEADER_BYTES,
                })),
        );
    }
    for (name, value) in headers {
        if let Err(refused) = check_custom_header(name, value) {
            failures.push(FieldError::body(
                vec!["headers".into(), name.as_str().into()],
                "value_error",
                format!("Value error, {refused}"),
                json!(value),
            ));
        }
    }
}

/// A key that is wrong is the only error told: the body is looked at once the key is right.
impl TryFrom<EmailSend<'_>> for SendMail {
    type Error = FieldErrors;

    fn try_from(send: EmailSend<'_>) -> Result<Self, FieldErrors> {
        let idempotency_key = header_key(send.idempotency_key)?;
        let body = send.body;
        let mut failures = Vec::new();
        let (to, cc, bcc) = parse_recipients(&body.to, body.cc, body.bcc, &mut failures);
        failures.extend(check_subject(&body.subject));
        failures.extend(check_body_text(&body.body_text));
        let headers: Vec<(String, String)> = body.headers.unwrap_or_default().into_iter().collect();
        check_headers(&headers, &mut failures);
        let attachments = parse_attachments(body.attachments, &mut failures);
        if !failures.is_empty() {
            return Err(FieldErrors(failures));
        }
        Ok(SendMail {
            to,
            cc,
            bcc,
            subject: body.subject,
            text: body.body_text,
            headers,
            category: body.category,
            attachments,
            reply_to_given: body.reply_to.is_some_and(|list| !list.is_empty()),
            html_given: body.body_html.is_some_and(|html| !html.is_empty()),
            idempotency_key,
        })
    }
}

/// As for a send, a key that is wrong is the only error told.
impl TryFrom<EmailReply<'_>> for ReplyMail {
    type Error = FieldErrors;

    fn try_from(reply: EmailReply<'_>) -> Result<Self, FieldErrors> {
        let idempotency_key = header_key(reply.idempotency_key)?;
        let mut failures: Vec<FieldError> =
            check_body_text(&reply.body.body_text).into_iter().collect();
        let attachments = parse_attachments(reply.body.attachments, &mut failures);
        if !failures.is_empty() {
            return Err(FieldErrors(failures));
        }
        Ok(ReplyMail {
            text: reply.body.body_text,
            attachments,
            idempotency_key,
        })
    }
}

/// As for a send, a key that is wrong is the only error told.
impl TryFrom<EmailForward<'_>> for ForwardMail {
    type Error = FieldErrors;

    fn try_from(forward: EmailForward<'_>) -> Result<Self, FieldErrors> {
        let idempotency_key = header_key(forward.idempotency_key)?;
        let body = forward.body;
        let mut failures = Vec::new();
        let (to, cc, bcc) = parse_recipients(&body.to, body.cc, body.bcc, &mut failures);
        let text = body.body_text.unwrap_or_default();
        failures.extend(check_body_text(&text));
        let attachments = parse_attachments(body.attachments, &mut failures);
        if !failures.is_empty() {
            return Err(FieldErrors(failures));
        }
        Ok(ForwardMail {
            to,
            cc,
            bcc,
            text,
            attachments,
            idempotency_key,
        })
    }
}

/// The idempotency key of a wallet send, a body field, or pydantic's words for what is wrong.
fn body_key(raw: &str) -> Result<IdempotencyKey, FieldError> {
    IdempotencyKey::parse(raw).map_err(|error| match error {
        IdempotencyKeyError::Empty | IdempotencyKeyError::TooLong => {
            match FieldError::check_length("idempotency_key", raw, 1, MAX_IDEMPOTENCY_KEY_CHARS) {
                Err(refused) => refused,
                Ok(()) => FieldError::value_error("idempotency_key", raw, error),
            }
        }
        IdempotencyKeyError::ControlCharacter => {
            FieldError::value_error("idempotency_key", raw, error)
        }
    })
}

impl TryFrom<WalletSendRequest> for SendRequest {
    type Error = FieldErrors;

    fn try_from(body: WalletSendRequest) -> Result<Self, FieldErrors> {
        let to = EvmAddress::parse(&body.to)
            .map_err(|error| FieldError::value_error("to", body.to.as_str(), error));
        let amount = AtomicAmount::parse(&body.amount_atomic).map_err(|error| {
            FieldError::value_error("amount_atomic", body.amount_atomic.as_str(), error)
        });
        let key = body.idempotency_key.as_deref().map(body_key).transpose();
        match (to, amount, key) {
            (Ok(to), Ok(amount), Ok(idempotency_key)) => Ok(SendRequest {
                to,
                amount,
                asset: body.asset,
                chain: body.chain,
                idempotency_key,
            }),
            (to, amount, key) => Err(FieldErrors::among([to.err(), amount.err(), key.err()])),
        }
    }
}

/// The longest resource URL an x402 payment records.
pub const MAX_RESOURCE_URL_CHARS: usize = 2_048;

/// The challenge a body carries in `payment_required`: a header's base64 or the decoded object.
fn challenge_field(payment_required: Value) -> Result<PaymentChallenge, FieldError> {
    match payment_required {
        Value::String(header) => PaymentChallenge::from_header(&header),
        object @ Value::Object(_) => PaymentChallenge::from_value(object),
        _ => Err(ChallengeError::NotAnObject),
    }
    .map_err(|error| FieldError::value_error("payment_required", Value::Null, error))
}

/// The agent's own ceiling, `max_amount_atomic`, when given.
fn max_amount_field(max_amount_atomic: Option<String>) -> Result<Option<AtomicAmount>, FieldError> {
    max_amount_atomic
        .map(|max| {
            AtomicAmount::parse(&max)
                .map_err(|error| FieldError::value_error("max_amount_atomic", max.as_str(), error))
        })
        .transpose()
}

impl TryFrom<X402AuthorizeRequest> for X402Request {
    type Error = FieldErrors;

    fn try_from(body: X402AuthorizeRequest) -> Result<Self, FieldErrors> {
        let challenge = challenge_field(body.payment_required);
        let resource_url = body
            .resource_url
            .map(|url| {
                FieldError::check_length("resource_url", &url, 1, MAX_RESOURCE_URL_CHARS)?;
                if url.chars().any(char::is_control) {
                    return Err(FieldError::value_error(
                        "resource_url",
                        url.as_str(),
                        "resource_url holds a control character",
                    ));
                }
                Ok(url)
            })
            .transpose();
        let max_amount = max_amount_field(body.max_amount_atomic);
        let key = body_key(&body.idempotency_key);
        match (challenge, resource_url, max_amount, key) {
            (Ok(challenge), Ok(resource_url), Ok(max_amount), Ok(idempotency_key)) => {
                Ok(X402Request {
                    challenge,
                    resource_url,
                    max_amount,
                    idempotency_key,
                })
            }
            (challenge, resource_url, max_amount, key) => Err(FieldErrors::among([
                challenge.err(),
                resource_url.err(),
                max_amount.err(),
                key.err(),
            ])),
        }
    }
}

impl TryFrom<X402FetchRequest> for X402Fetch {
    type Error = FieldErrors;

    /// The fetch the body asks for, its URL well formed; whether its target is allowed is the
    /// service's to say, under the deployment's rule.
    fn try_from(body: X402FetchRequest) -> Result<Self, FieldErrors> {
        fetch_command(body)
    }
}

fn fetch_command(body: X402FetchRequest) -> Result<X402Fetch, FieldErrors> {
    let url = WebhookUrl::parse(&body.url, Targets::PrivateAllowed)
        .map_err(|error| FieldError::value_error("url", body.url.as_str(), error));
    let method = match body.method.as_deref() {
        None => Ok(FetchMethod::Get),
        Some(text) => FetchMethod::parse(text).ok_or_else(|| {
            FieldError::value_error("method", text, "method must be GET, POST, PUT or DELETE")
        }),
    };
    let headers = check_fetch_headers(body.headers.unwrap_or_default())
        .map_err(|error| FieldError::value_error("headers", Value::Null, error));
    let request_body = match body.body {
        Some(text) if text.len() > MAX_FETCH_BODY_BYTES => Err(FieldError::value_error(
            "body",
            Value::Null,
            format!("body should have at most {MAX_FETCH_BODY_BYTES} bytes"),
        )),
        other => Ok(other),
    };
    let max_amount =
        max_amount_field(Some(body.max_amount_atomic)).map(|max| max.expect("a ceiling was given"));
    let key = body_key(&body.idempotency_key);
    match (url, method, headers, request_body, max_amount, key) {
        (Ok(url), Ok(method), Ok(headers), Ok(body), Ok(max_amount), Ok(idempotency_key)) => {
            Ok(X402Fetch {
                url,
                method,
                headers,
                body,
                max_amount,
                idempotency_key,
            })
        }
        (url, method, headers, body, max_amount, key) => Err(FieldErrors::among([
            url.err(),
            method.err(),
            headers.err(),
            body.err(),
            max_amount.err(),
            key.err(),
        ])),
    }
}

impl TryFrom<X402CheckRequest> for X402Check {
    type Error = FieldErrors;

    fn try_from(body: X402CheckRequest) -> Result<Self, FieldErrors> {
        match (
            challenge_field(body.payment_required),
            max_amount_field(body.max_amount_atomic),
        ) {
            (Ok(challenge), Ok(max_amount)) => Ok(X402Check {
                challenge,
                max_amount,
            }),
            (challenge, max_amount) => Err(FieldErrors::among([challenge.err(), max_amount.err()])),
        }
    }
}

/// The fields every wait for a code has, or an error for each that is wrong.
fn wait_fields(
    service_name: String,
    timeout: i64,
    request_id: Option<String>,
) -> Result<CodeWait, FieldErrors> {
    let seconds = FieldError::check_range(
        RequestPart::Body,
        "timeout",
        timeout.into(),
        0,
        MAX_WAIT_SECS.into(),
        json!(timeout),
    )
    .map(|()| timeout.unsigned_abs());
    let request_id_checked = match &request_id {
        Some(id) => {
            FieldError::check_length("request_id", id, 0, MAX_REQUEST_ID_CHARS).and_then(|()| {
                check_no_nul(id).map_err(|refused| {
                    FieldError::value_error(
                        "request_id",
                        id.as_str(),
                        format!("request_id {refused}"),
                    )
                })
            })
        }
        None => Ok(()),
    };
    match (seconds, request_id_checked) {
        (Ok(seconds), Ok(())) => Ok(CodeWait {
            service_name,
            timeout: std::time::Duration::from_secs(seconds),
            request_id,
        }),
        (seconds, request_id) => Err(FieldErrors::among([seconds.err(), request_id.err()])),
    }
}

impl TryFrom<WaitForCodeRequest> for CodeWait {
    type Error = FieldErrors;

    fn try_from(body: WaitForCodeRequest) -> Result<Self, FieldErrors> {
        wait_fields(body.service_name, body.timeout, body.request_id)
    }
}

/// The channels a wait names, or what is wrong with them; `None` for every channel.
fn channels(names: Option<Vec<String>>) -> Result<Option<Vec<CodeChannel>>, FieldError> {
    let Some(names) = names else {
        return Ok(None);
    };
    if names.is_empty() {
        // Waiting on no channel would wait for nothing until the timeout.
        return Err(FieldError::empty_list(vec!["channels".into()]));
    }
    names
        .iter()
        .enumerate()
        .map(|(index, name)| {
            CodeChannel::parse(name).ok_or_else(|| {
                FieldError::body(
                    vec!["channels".into(), index.into()],
                    "enum",
                    "Input should be 'sms' or 'email'",
                    json!(name),
                )
                .with_context(json!({"expected": "'sms' or 'email'"}))
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

impl TryFrom<CodesWaitRequest> for ChannelsWait {
    type Error = FieldErrors;

    fn try_from(body: CodesWaitRequest) -> Result<Self, FieldErrors> {
        let channels = channels(body.channels);
        let wait = wait_fields(body.service_name, body.timeout, body.request_id);
        match (wait, channels) {
            (Ok(wait), Ok(channels)) => Ok(ChannelsWait { wait, channels }),
            (wait, channels) => {
                let FieldErrors(mut errors) = wait.err().unwrap_or(FieldErrors(Vec::new()));
                errors.extend(channels.err());
                Err(FieldErrors(errors))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn send_body(fields: Value) -> EmailSendRequest {
        let mut body = json!({"to": ["ann@example.com"], "subject": "Hi", "body_text": "Hello"});
        body.as_object_mut()
            .expect("object")
            .extend(fields.as_object().expect("object").clone());
        serde_json::from_value(body).expect("a send body")
    }

    fn send(fields: Value, key: Option<&[u8]>) -> Result<SendMail, FieldErrors> {
        SendMail::try_from(EmailSend {
            body: send_body(fields),
            idempotency_key: key,
        })
    }

    fn refused(result: Result<impl std::fmt::Debug, FieldErrors>) -> Vec<FieldError> {
        result.expect_err("refused").0
    }

    fn body_error(
        path: Vec<FieldPath>,
        kind: &'static str,
        message: &str,
        input: Value,
    ) -> FieldError {
        FieldError::body(path, kind, message, input)
    }

    fn address(text: &str) -> EmailAddress {
        EmailAddress::parse(text).expect("an address")
    }

    fn paths(errors: &[FieldError]) -> Vec<String> {
        errors
            .iter()
            .map(|error| serde_json::to_string(&error.path).expect("a path"))
            .collect()
    }

    #[test]
    fn attachments_are_decoded_as_agents_write_base64() {
        let mail = send(
            json!({"attachments": [
                {"filename": "a.txt", "content_base64": "aGVsbG8="},
                {"filename": "b.bin", "content_type": "image/png", "content_base64": "aGVs\nbG8"},
                {"filename": "empty", "content_base64": ""},
            ]}),
            None,
        )
        .expect("valid");
        let contents: Vec<&[u8]> = mail.attachments.iter().map(|a| &a.content()[..]).collect();
        assert_eq!(contents, [&b"hello"[..], b"hello", b""]);
        assert_eq!(
            mail.attachments[0].content_type(),
            "text/plain",
            "a type left out is the name's"
        );
        assert_eq!(
            mail.attachments[2].content_type(),
            "application/octet-stream",
            "a name without an extension says nothing"
        );
        assert_eq!(mail.attachments[1].content_type(), "image/png");
    }

    #[test]
    fn each_wrong_attachment_is_told_at_its_field() {
        let errors = refused(send(
            json!({"attachments": [
                {"filename": "ok.txt", "content_base64": "aGVsbG8="},
                {"filename": "a\u{0}b", "content_base64": "aGVsbG8="},
                {"filename": "c.txt", "content_type": "text", "content_base64": "aGVsbG8="},
                {"filename": "d.txt", "content_base64": "not base64!"},
            ]}),
            None,
        ));
        assert_eq!(
            paths(&errors),
            [
                r#"["attachments",1,"filename"]"#,
                r#"["attachments",2,"content_type"]"#,
                r#"["attachments",3,"content_base64"]"#,
            ]
        );
        assert!(
            !serde_json::to_string(&errors[2].input)
                .expect("json")
                .contains("not base64"),
            "content is told by its size, not echoed"
        );
    }

    #[test]
    fn more_than_ten_attachments_or_ten_mib_in_all_are_refused_before_decoding() {
        let one = json!({"filename": "a", "content_base64": "aGVsbG8="});
        let eleven = refused(send(json!({"attachments": vec![one; 11]}), None));
        assert_eq!(paths(&eleven), [r#"["attachments"]"#]);
        let half = base64::engine::general_purpose::STANDARD.encode(vec![
            0u8;
            MAX_OUTBOUND_ATTACHMENT_BYTES
                / 2
                + 1
        ]);
        let two_halves = json!({"attachments": [
            {"filename": "a", "content_base64": half},
            {"filename": "b", "content_base64": half},
        ]});
        assert_eq!(
            paths(&refused(send(two_halves, None))),
            [r#"["attachments"]"#]
        );
        let exactly = base64::engine::general_purpose::STANDARD
            .encode(vec![0u8; MAX_OUTBOUND_ATTACHMENT_BYTES]);
        let at_the_limit = json!({"attachments": [{"filename": "a", "content_base64": exactly}]});
        assert_eq!(
            send(at_the_limit, None).expect("at the limit").attachments[0]
                .content()
                .len(),
            MAX_OUTBOUND_ATTACHMENT_BYTES
        );
    }

    #[test]
    fn base64_wrapped_in_lines_is_measured_without_its_line_breaks() {
        let encoded = base64::engine::general_purpose::STANDARD
            .encode(vec![7u8; MAX_OUTBOUND_ATTACHMENT_BYTES]);
        let lines: Vec<&str> = encoded
            .as_bytes()
            .chunks(76)
            .map(|line| std::str::from_utf8(line).expect("ascii"))
            .collect();
        let wrapped = lines.join("\r\n");
        let at_the_limit = json!({"attachments": [{"filename": "a", "content_base64": wrapped}]});
        let mail =
            send(at_the_limit, None).expect("at the limit once the line breaks are left out");
        assert_eq!(
            mail.attachments[0].content().len(),
            MAX_OUTBOUND_ATTACHMENT_BYTES
        );
        let over = format!("{wrapped}AAAA");
        let over = json!({"attachments": [{"filename": "a", "content_base64": over}]});
        assert_eq!(paths(&refused(send(over, None))), [r#"["attachments"]"#]);
    }

    #[test]
    fn a_forward_needs_recipients_and_takes_an_optional_text() {
        let forward = |body: Value| {
            ForwardMail::try_from(EmailForward {
                body: serde_json::from_value(body).expect("a forward body"),
                idempotency_key: Some(b"k-1"),
            })
        };
        let mail =
            forward(json!({"to": ["ann@example.com"], "bcc": ["bob@example.com"]})).expect("valid");
        assert_eq!(mail.text, "");
        assert_eq!(mail.bcc, [address("bob@example.com")]);
        assert_eq!(mail.idempotency_key.expect("a key").as_str(), "k-1");
        let errors = refused(forward(json!({"to": [], "body_text": "a\u{0}"})));
        assert_eq!(paths(&errors), [r#"["to"]"#, r#"["body_text"]"#]);
    }

    #[test]
    fn a_valid_send_becomes_the_command_with_its_addresses_trimmed() {
        let mail = send(
            json!({
                "cc": [" bob@example.com "],
                "headers": {"X-Campaign": "spring"},
                "category": "transactional",
                "reply_to": [],
                "body_html": "<p>x</p>",
            }),
            Some(b"key-1"),
        )
        .expect("valid");
        assert_eq!(
            mail,
            SendMail {
                to: vec![address("ann@example.com")],
                cc: vec![address("bob@example.com")],
                bcc: Vec::new(),
                subject: "Hi".into(),
                text: "Hello".into(),
                headers: vec![("X-Campaign".into(), "spring".into())],
                category: Some("transactional".into()),
                attachments: Vec::new(),
                reply_to_given: false,
                html_given: true,
                idempotency_key: Some(IdempotencyKey::parse("key-1").expect("a key")),
            }
        );
    }

    #[test]
    fn an_empty_to_is_too_short() {
        assert_eq!(
            refused(send(json!({"to": []}), None)),
            vec![body_error(
                vec!["to".into()],
                "too_short",
                "List should have at least 1 item after validation, not 0",
                json!([]),
            )
            .with_context(json!({"field_type": "List", "min_length": 1, "actual_length": 0}))]
        );
    }

    #[test]
    fn each_invalid_address_is_located_by_field_and_index() {
        let reason = EmailAddress::parse("nobody").expect_err("invalid");
        assert_eq!(
            refused(send(
                json!({"to": ["ann@example.com", "nobody"], "bcc": ["nobody"]}),
                None
            )),
            vec![
                body_error(
                    vec!["to".into(), 1.into()],
                    "value_error",
                    &format!("value is not a valid email address: {reason}"),
                    json!("nobody"),
                ),
                body_error(
                    vec!["bcc".into(), 0.into()],
                    "value_error",
                    &format!("value is not a valid email address: {reason}"),
                    json!("nobody"),
                ),
            ]
        );
    }

    #[test]
    fn too_many_recipients_are_told_at_the_field_that_crosses_the_limit() {
        let to: Vec<String> = (0..15).map(|n| format!("to{n}@example.com")).collect();
        let cc: Vec<String> = (0..6).map(|n| format!("cc{n}@example.com")).collect();
        assert_eq!(
            refused(send(
                json!({"to": to, "cc": cc, "bcc": ["b@example.com"]}),
                None
            )),
            vec![body_error(
                vec!["cc".into()],
                "value_error",
                "Value error, at most 20 recipients are allowed over to, cc and bcc together",
                json!(cc),
            )
            .with_context(json!({"max_recipients": 20}))]
        );
    }

    #[test]
    fn a_subject_with_a_line_break_or_a_nul_is_refused() {
        assert_eq!(
            refused(send(json!({"subject": "a\r\nBcc: x@y.z"}), None)),
            vec![body_error(
                vec!["subject".into()],
                "value_error",
                "Value error, the subject is a header: it must not contain CR or LF",
                json!("a\r\nBcc: x@y.z"),
            )]
        );
        assert_eq!(
            refused(send(json!({"subject": "a\u{0}b"}), None)),
            vec![body_error(
                vec!["subject".into()],
                "value_error",
                "Value error, the subject must not contain the NUL character (U+0000)",
                json!("a\u{0}b"),
            )]
        );
    }

    #[test]
    fn a_body_text_over_the_limit_is_told_by_its_size_not_echoed() {
        let text = "x".repeat(MAX_BODY_TEXT_BYTES + 1);
        assert_eq!(
            refused(send(json!({"body_text": text}), None)),
            vec![body_error(
                vec!["body_text".into()],
                "value_error",
                &format!(
                    "Value error, body_text must be at most {MAX_BODY_TEXT_BYTES} bytes of UTF-8, \
                     got {}",
                    MAX_BODY_TEXT_BYTES + 1
                ),
                json!({"bytes": MAX_BODY_TEXT_BYTES + 1}),
            )
            .with_context(json!({"max_bytes": MAX_BODY_TEXT_BYTES}))]
        );
        assert_eq!(
            refused(send(json!({"body_text": "a\u{0}"}), None)),
            vec![body_error(
                vec!["body_text".into()],
                "value_error",
                "Value error, body_text must not contain the NUL character (U+0000)",
                json!("a\u{0}"),
            )]
        );
    }

    #[test]
    fn too_many_headers_and_each_refused_header_are_told() {
        let many: serde_json::Map<String, Value> = (0..=MAX_CUSTOM_HEADERS)
            .map(|n| (format!("X-H{n:02}"), json!("v")))
            .collect();
        let errors = refused(send(json!({"headers": many}), None));
        assert_eq!(
            errors,
            vec![FieldError::value_error(
                "headers",
                json!({"headers": MAX_CUSTOM_HEADERS + 1}),
                format!("at most {MAX_CUSTOM_HEADERS} custom headers are allowed"),
            )
            .with_context(json!({
                "max_headers": MAX_CUSTOM_HEADERS,
                "max_bytes": MAX_CUSTOM_HEADER_BYTES,
            }))]
        );
        let sensitive = check_custom_header("From", "x@y.z").expect_err("sensitive");
        assert_eq!(
            refused(send(json!({"headers": {"From": "x@y.z"}}), None)),
            vec![body_error(
                vec!["headers".into(), "From".into()],
                "value_error",
                &format!("Value error, {sensitive}"),
                json!("x@y.z"),
            )]
        );
    }

    #[test]
    fn a_key_that_is_not_header_text_is_refused_without_echoing_it() {
        for key in [&b"caf\xc3\xa9"[..], b"a\x7fb", b"a\nb"] {
            assert_eq!(
                refused(send(json!({}), Some(key))),
                vec![FieldError::new(
                    RequestPart::Header,
                    vec!["idempotency-key".into()],
                    "value_error",
                    "Value error, the idempotency key must be visible ASCII",
                    Value::Null,
                )],
                "{key:?}"
            );
        }
    }

    #[test]
    fn a_wrong_key_is_the_only_error_told() {
        assert_eq!(
            refused(send(json!({"to": [], "subject": "a\nb"}), Some(b"  "))),
            vec![FieldError::new(
                RequestPart::Header,
                vec!["idempotency-key".into()],
                "value_error",
                "Value error, idempotency key must not be empty or blank",
                json!("  "),
            )]
        );
    }

    #[test]
    fn a_tab_in_a_key_is_header_text_but_a_control_character() {
        assert_eq!(
            refused(send(json!({}), Some(b"a\tb"))),
            vec![FieldError::new(
                RequestPart::Header,
                vec!["idempotency-key".into()],
                "value_error",
                "Value error, idempotency key must not contain control or invisible characters",
                json!("a\tb"),
            )]
        );
    }

    #[test]
    fn a_reply_checks_its_key_then_its_text() {
        let reply = |text: &str, key: Option<&[u8]>| {
            ReplyMail::try_from(EmailReply {
                body: serde_json::from_value(json!({ "body_text": text })).expect("a reply"),
                idempotency_key: key,
            })
        };
        assert_eq!(
            reply("Thanks", Some(b"k")).expect("valid"),
            ReplyMail {
                text: "Thanks".into(),
                attachments: Vec::new(),
                idempotency_key: Some(IdempotencyKey::parse("k").expect("a key")),
            }
        );
        assert_eq!(refused(reply("a\u{0}", Some(b""))).len(), 1);
        assert_eq!(
            refused(reply("a\u{0}", Some(b"")))[0].part,
            RequestPart::Header
        );
        assert_eq!(
            refused(reply("a\u{0}", None)),
            vec![body_error(
                vec!["body_text".into()],
                "value_error",
                "Value error, body_text must not contain the NUL character (U+0000)",
                json!("a\u{0}"),
            )]
        );
    }

    fn wallet_send(fields: Value) -> Result<SendRequest, FieldErrors> {
        let mut body = json!({"to": format!("0x{}", "ab".repeat(20)), "amount_atomic": "100"});
        body.as_object_mut()
            .expect("object")
            .extend(fields.as_object().expect("object").clone());
        SendRequest::try_from(serde_json::from_value::<WalletSendRequest>(body).expect("a body"))
    }

    #[test]
    fn a_valid_wallet_send_becomes_the_command() {
        let request = wallet_send(json!({"idempotency_key": "order-7"})).expect("valid");
        assert_eq!(
            request,
            SendRequest {
                to: EvmAddress::parse(&format!("0x{}", "ab".repeat(20))).expect("an address"),
                amount: AtomicAmount::parse("100").expect("an amount"),
                asset: "USDC".into(),
                chain: "base".into(),
                idempotency_key: Some(IdempotencyKey::parse("order-7").expect("a key")),
            }
        );
    }

    #[test]
    fn every_wrong_field_of_a_wallet_send_is_told_in_order() {
        let to = EvmAddress::parse("0x12").expect_err("invalid");
        let amount = AtomicAmount::parse("0").expect_err("invalid");
        assert_eq!(
            refused(wallet_send(
                json!({"to": "0x12", "amount_atomic": "0", "idempotency_key": ""})
            )),
            vec![
                FieldError::value_error("to", "0x12", to),
                FieldError::value_error("amount_atomic", "0", amount),
                body_error(
                    vec!["idempotency_key".into()],
                    "string_too_short",
                    "String should have at least 1 character",
                    json!(""),
                )
                .with_context(json!({"min_length": 1})),
            ]
        );
    }

    #[test]
    fn a_wallet_key_too_long_blank_or_with_a_control_character_is_told_as_pydantic_does() {
        let long = "k".repeat(MAX_IDEMPOTENCY_KEY_CHARS + 1);
        assert_eq!(
            refused(wallet_send(json!({ "idempotency_key": long }))),
            vec![body_error(
                vec!["idempotency_key".into()],
                "string_too_long",
                "String should have at most 255 characters",
                json!(long),
            )
            .with_context(json!({"max_length": 255}))]
        );
        assert_eq!(
            refused(wallet_send(json!({"idempotency_key": "   "}))),
            vec![FieldError::value_error(
                "idempotency_key",
                "   ",
                "idempotency key must not be empty or blank"
            )]
        );
        assert_eq!(
            refused(wallet_send(json!({"idempotency_key": "a\u{1}"}))),
            vec![FieldError::value_error(
                "idempotency_key",
                "a\u{1}",
                "idempotency key must not contain control or invisible characters"
            )]
        );
    }

    fn wait(fields: Value) -> Result<CodeWait, FieldErrors> {
        CodeWait::try_from(serde_json::from_value::<WaitForCodeRequest>(fields).expect("a body"))
    }

    #[test]
    fn a_valid_wait_becomes_the_command() {
        assert_eq!(
            wait(json!({"service_name": "Google", "timeout": 30, "request_id": "r1"}))
                .expect("valid"),
            CodeWait {
                service_name: "Google".into(),
                timeout: Duration::from_secs(30),
                request_id: Some("r1".into()),
            }
        );
    }

    #[test]
    fn a_timeout_out_of_range_and_a_bad_request_id_are_both_told() {
        assert_eq!(
            refused(wait(json!({"timeout": -1, "request_id": "a\u{0}"}))),
            vec![
                body_error(
                    vec!["timeout".into()],
                    "greater_than_equal",
                    "Input should be greater than or equal to 0",
                    json!(-1),
                )
                .with_context(json!({"ge": 0})),
                FieldError::value_error(
                    "request_id",
                    "a\u{0}",
                    "request_id must not contain the NUL character (U+0000)"
                ),
            ]
        );
        let long = "r".repeat(MAX_REQUEST_ID_CHARS + 1);
        assert_eq!(
            refused(wait(json!({"timeout": 301, "request_id": long}))),
            vec![
                body_error(
                    vec!["timeout".into()],
                    "less_than_equal",
                    "Input should be less than or equal to 300",
                    json!(301),
                )
                .with_context(json!({"le": 300})),
                body_error(
                    vec!["request_id".into()],
                    "string_too_long",
                    "String should have at most 128 characters",
                    json!(long),
                )
                .with_context(json!({"max_length": 128})),
            ]
        );
    }

    fn channels_wait(fields: Value) -> Result<ChannelsWait, FieldErrors> {
        ChannelsWait::try_from(serde_json::from_value::<CodesWaitRequest>(fields).expect("a body"))
    }

    #[test]
    fn a_wait_over_channels_names_them_or_every_one() {
        let named =
            channels_wait(json!({"timeout": 0, "channels": ["email", "sms"]})).expect("valid");
        assert_eq!(
            named.channels,
            Some(vec![CodeChannel::Email, CodeChannel::Sms])
        );
        assert_eq!(named.wait.timeout, Duration::ZERO);
        assert_eq!(channels_wait(json!({})).expect("valid").channels, None);
    }

    #[test]
    fn an_empty_or_unknown_channel_is_told_after_the_wait_fields() {
        assert_eq!(
            refused(channels_wait(json!({"channels": []}))),
            vec![FieldError::empty_list(vec!["channels".into()])]
        );
        assert_eq!(
            refused(channels_wait(
                json!({"timeout": -5, "channels": ["sms", "fax"]})
            )),
            vec![
                body_error(
                    vec!["timeout".into()],
                    "greater_than_equal",
                    "Input should be greater than or equal to 0",
                    json!(-5),
                )
                .with_context(json!({"ge": 0})),
                body_error(
                    vec!["channels".into(), 1.into()],
                    "enum",
                    "Input should be 'sms' or 'email'",
                    json!("fax"),
                )
                .with_context(json!({"expected": "'sms' or 'email'"})),
            ]
        );
    }
}
