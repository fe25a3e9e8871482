//! The tools' arguments: what a model may pass to each tool, their JSON Schemas (generated from
//! these types by schemars, with the bounds the domain sets), and their conversion into the
//! request shapes of `api-types`, so that every field rule and its wording is the REST route's.
//!
//! A tool's arguments differ from its route's request: the idempotency key and the path's id are
//! arguments, a wait lasts at most `MAX_TOOL_WAIT_SECS`, and the fields the service refuses
//! (`reply_to`, `body_html`, `category`) are not offered.

use std::collections::BTreeMap;

use api_types::{
    default_asset, default_chain, read_event_types, read_fields, AttachmentIn, Channel,
    CodesWaitRequest, Direction, EmailForwardRequest, EmailReplyRequest, EmailSendRequest,
    FieldError, FieldErrors, PageLimit, RequestPart, WalletSendRequest,
};
use domain::{
    MAX_ADDRESS_CHARS, MAX_BODY_TEXT_BYTES, MAX_IDEMPOTENCY_KEY_CHARS, MAX_OUTBOUND_ATTACHMENTS,
    MAX_OUTBOUND_FILENAME_CHARS, MAX_RECIPIENTS, MAX_REQUEST_ID_CHARS,
};
use rmcp::handler::server::common::FromContextPart;
use rmcp::handler::server::tool::ToolCallContext;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Value};

/// The longest a wait tool holds its call: under the minute many MCP hosts give a tool call, so
/// a wait answers "still pending" before its host gives up on it.
pub const MAX_TOOL_WAIT_SECS: u32 = 55;

/// A tool's arguments read into `T`, or the first field that does not fit; never a protocol
/// error, so the model reads what to fix in the tool's result.
pub struct Arguments<T>(pub Result<T, FieldError>);

impl<S, T: DeserializeOwned> FromContextPart<ToolCallContext<'_, S>> for Arguments<T> {
    fn from_context_part(context: &mut ToolCallContext<'_, S>) -> Result<Self, rmcp::ErrorData> {
        let arguments = context.arguments.take().unwrap_or_default();
        Ok(Self(read_fields(Value::Object(arguments))))
    }
}

/// A page size within `limit`'s bounds.
fn page_size(asked: Option<i64>, limit: PageLimit) -> Result<usize, FieldError> {
    limit
        .check(
            RequestPart::Body,
            "limit",
            asked.map(i128::from),
            json!(asked),
        )
        .map(|size| size as usize)
}

/// A wait's `timeout`: `MAX_TOOL_WAIT_SECS` when left out, else at least `min` and at most that.
fn wait_seconds(asked: Option<i64>, min: i128) -> Result<i64, FieldError> {
    let timeout = asked.unwrap_or(MAX_TOOL_WAIT_SECS.into());
    FieldError::check_range(
        RequestPart::Body,
        "timeout",
        timeout.into(),
        min,
        MAX_TOOL_WAIT_SECS.into(),
        json!(timeout),
    )?;
    Ok(timeout)
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListInboxArguments {
    /// How many messages to return, newest first: 1 to 100 (20 when left out).
    #[schemars(range(min = PageLimit::PAGE.min, max = PageLimit::PAGE.max))]
    pub limit: Option<i64>,
    /// The `next_cursor` of the previous page, to read the page after it; leave it out for the newest messages.
    pub cursor: Option<String>,
    /// Only mail received (`inbound`) or sent (`outbound`); both when left out.
    pub direction: Option<Direction>,
}

impl ListInboxArguments {
    pub fn limit(&self) -> Result<usize, FieldError> {
        page_size(self.limit, PageLimit::PAGE)
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct MessageArguments {
    /// The id of a message of the agent's inbox, as `list_inbox` shows it.
    pub message_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListThreadsArguments {
    /// How many threads to return, the one with the newest message first: 1 to 100 (20 when left out).
    #[schemars(range(min = PageLimit::PAGE.min, max = PageLimit::PAGE.max))]
    pub limit: Option<i64>,
    /// The `next_cursor` of the previous page; leave it out for the most recent threads.
    pub cursor: Option<String>,
}

impl ListThreadsArguments {
    pub fn limit(&self) -> Result<usize, FieldError> {
        page_size(self.limit, PageLimit::PAGE)
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ThreadArguments {
    /// The `thread_id` of a message, or of a thread as `list_threads` shows it.
    pub thread_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchMessagesArguments {
    /// Words that must all appear (any order, case and accents aside) in the subject, sender, recipients or text, and optionally from:ADDRESS, to:ADDRESS (an address or @domain), has:attachment, after:YYYY-MM-DD, before:YYYY-MM-DD. Example: `invoice march from:billing@acme.example has:attachment`.
    #[schemars(length(min = 1, max = domain::search::MAX_QUERY_CHARS))]
    pub query: String,
    /// How many messages to return, best match first: 1 to 100 (20 when left out).
    #[schemars(range(min = PageLimit::PAGE.min, max = PageLimit::PAGE.max))]
    pub limit: Option<i64>,
    /// The `next_cursor` of the previous page of the same query.
    pub cursor: Option<String>,
    /// Only mail received (`inbound`) or sent (`outbound`); both when left out.
    pub direction: Option<Direction>,
}

impl SearchMessagesArguments {
    pub fn limit(&self) -> Result<usize, FieldError> {
        page_size(self.limit, PageLimit::PAGE)
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct AttachmentArguments {
    /// The id of a message of the agent's inbox.
    pub message_id: String,
    /// The `id` of one of the message's `attachments`, e.g. `att_1`.
    pub attachment_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SendEmailArguments {
    /// Recipient addresses: 1 to 20, over `to`, `cc` and `bcc` together.
    #[schemars(length(min = 1, max = MAX_RECIPIENTS), inner(email, length(max = MAX_ADDRESS_CHARS)))]
    pub to: Vec<String>,
    /// The subject: one line, without line breaks.
    #[schemars(regex(pattern = r"^[^\r\n\u0000]*$"))]
    pub subject: String,
    /// The message, as plain text: at most 262,144 bytes of UTF-8.
    #[schemars(length(max = MAX_BODY_TEXT_BYTES))]
    pub body_text: String,
    /// Addresses copied.
    #[schemars(length(max = MAX_RECIPIENTS), inner(email, length(max = MAX_ADDRESS_CHARS)))]
    pub cc: Option<Vec<String>>,
    /// Addresses copied without the others seeing them.
    #[schemars(length(max = MAX_RECIPIENTS), inner(email, length(max = MAX_ADDRESS_CHARS)))]
    pub bcc: Option<Vec<String>>,
    /// Custom headers, name to value; headers the service or mail servers write (From, To, Subject, Message-ID, Content-*, ...) are refused.
    pub headers: Option<BTreeMap<String, String>>,
    /// Files to attach: at most 10, 10 MiB in all once decoded.
    #[schemars(length(max = MAX_OUTBOUND_ATTACHMENTS))]
    pub attachments: Option<Vec<AttachmentArgument>>,
    /// Any string of 1 to 255 visible ASCII characters you choose for this mail. Calling again with the same key and the same mail returns the first answer and never mails twice: pass one whenever you may retry.
    #[schemars(length(min = 1, max = MAX_IDEMPOTENCY_KEY_CHARS), regex(pattern = "^[!-~]([ -~]*[!-~])?$"))]
    pub idempotency_key: Option<String>,
}

/// A file to attach to a mail.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct AttachmentArgument {
    /// The name it is sent under, e.g. `report.pdf`.
    #[schemars(length(min = 1, max = MAX_OUTBOUND_FILENAME_CHARS))]
    pub filename: String,
    /// Its media type, e.g. `application/pdf`; `application/octet-stream` when left out.
    pub content_type: Option<String>,
    /// Its bytes, in base64.
    pub content_base64: String,
}

/// The route's attachments from a tool's.
fn attachments_in(given: Option<Vec<AttachmentArgument>>) -> Option<Vec<AttachmentIn>> {
    given.map(|list| {
        list.into_iter()
            .map(|attachment| AttachmentIn {
                filename: attachment.filename,
                content_type: attachment.content_type,
                content_base64: attachment.content_base64,
            })
            .collect()
    })
}

impl SendEmailArguments {
    /// The route's request body, and the key's bytes as the route takes them.
    pub fn into_request(self) -> (EmailSendRequest, Option<String>) {
        let body = EmailSendRequest {
            to: self.to,
            subject: self.subject,
            body_text: self.body_text,
            cc: self.cc,
            bcc: self.bcc,
            headers: self.headers,
            category: None,
            reply_to: None,
            body_html: None,
            attachments: attachments_in(self.attachments),
        };
        (body, self.idempotency_key)
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReplyEmailArguments {
    /// The inbound message to answer, as `list_inbox` shows it: the reply goes to its sender, in its thread.
    pub message_id: String,
    /// The reply, as plain text: at most 262,144 bytes of UTF-8.
    #[schemars(length(max = MAX_BODY_TEXT_BYTES))]
    pub body_text: String,
    /// Files to attach, as for `send_email`.
    #[schemars(length(max = MAX_OUTBOUND_ATTACHMENTS))]
    pub attachments: Option<Vec<AttachmentArgument>>,
    /// As for `send_email`: the same key and reply never mail twice.
    #[schemars(length(min = 1, max = MAX_IDEMPOTENCY_KEY_CHARS), regex(pattern = "^[!-~]([ -~]*[!-~])?$"))]
    pub idempotency_key: Option<String>,
}

impl ReplyEmailArguments {
    /// The message answered, the route's request body, and the key.
    pub fn into_request(self) -> (String, EmailReplyRequest, Option<String>) {
        let body = EmailReplyRequest {
            body_text: self.body_text,
            attachments: attachments_in(self.attachments),
        };
        (self.message_id, body, self.idempotency_key)
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ForwardEmailArguments {
    /// The message to forward, of either direction, as `list_inbox` shows it.
    pub message_id: String,
    /// Recipient addresses: 1 to 20, over `to`, `cc` and `bcc` together.
    #[schemars(length(min = 1, max = MAX_RECIPIENTS), inner(email, length(max = MAX_ADDRESS_CHARS)))]
    pub to: Vec<String>,
    /// Addresses copied.
    #[schemars(length(max = MAX_RECIPIENTS), inner(email, length(max = MAX_ADDRESS_CHARS)))]
    pub cc: Option<Vec<String>>,
    /// Addresses copied without the others seeing them.
    #[schemars(length(max = MAX_RECIPIENTS), inner(email, length(max = MAX_ADDRESS_CHARS)))]
    pub bcc: Option<Vec<String>>,
    /// Plain text written above the forwarded message: at most 262,144 bytes of UTF-8.
    #[schemars(length(max = MAX_BODY_TEXT_BYTES))]
    pub body_text: Option<String>,
    /// Files to attach after the forwarded message's own, as for `send_email`.
    #[schemars(length(max = MAX_OUTBOUND_ATTACHMENTS))]
    pub attachments: Option<Vec<AttachmentArgument>>,
    /// As for `send_email`: the same key and forward never mail twice.
    #[schemars(length(min = 1, max = MAX_IDEMPOTENCY_KEY_CHARS), regex(pattern = "^[!-~]([ -~]*[!-~])?$"))]
    pub idempotency_key: Option<String>,
}

impl ForwardEmailArguments {
    /// The message forwarded, the route's request body, and the key.
    pub fn into_request(self) -> (String, EmailForwardRequest, Option<String>) {
        let body = EmailForwardRequest {
            to: self.to,
            cc: self.cc,
            bcc: self.bcc,
            body_text: self.body_text,
            attachments: attachments_in(self.attachments),
        };
        (self.message_id, body, self.idempotency_key)
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListSmsArguments {
    /// How many messages to return, newest first: 0 to 100 (20 when left out).
    #[schemars(range(min = PageLimit::SMS.min, max = PageLimit::SMS.max))]
    pub limit: Option<i64>,
    /// How many of the newest messages to skip.
    #[schemars(range(min = 0, max = u32::MAX))]
    pub offset: Option<i64>,
    /// Only messages received (`inbound`) or sent (`outbound`); both when left out.
    pub direction: Option<Direction>,
}

impl ListSmsArguments {
    /// The page size and the offset, or an error for each that is out of range.
    pub fn window(&self) -> Result<(usize, usize), FieldErrors> {
        let limit = page_size(self.limit, PageLimit::SMS);
        let offset = self.offset.unwrap_or(0);
        let offset = FieldError::check_range(
            RequestPart::Body,
            "offset",
            offset.into(),
            0,
            u32::MAX.into(),
            json!(offset),
        )
        .map(|()| offset.unsigned_abs() as usize);
        match (limit, offset) {
            (Ok(limit), Ok(offset)) => Ok((limit, offset)),
            (limit, offset) => Err(FieldErrors::among([limit.err(), offset.err()])),
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct WaitForCodeArguments {
    /// Only a code from this service, e.g. `Google` or `GitHub`; any service when left out.
    pub service_name: Option<String>,
    /// Seconds to wait for a code that has not arrived yet: 0 to 55 (55 when left out); 0 only looks at what arrived already.
    #[schemars(range(min = 0, max = MAX_TOOL_WAIT_SECS))]
    pub timeout: Option<i64>,
    /// Where to look: `sms`, `email` or both; every channel the agent has when left out.
    #[schemars(length(min = 1))]
    pub channels: Option<Vec<Channel>>,
    /// Any id of at most 128 characters: calling again with it returns the code the first call returned instead of waiting for another.
    #[schemars(length(max = MAX_REQUEST_ID_CHARS))]
    pub request_id: Option<String>,
}

impl WaitForCodeArguments {
    /// The route's request body, its timeout within the tool's bound.
    pub fn into_request(self) -> Result<CodesWaitRequest, FieldError> {
        let timeout = wait_seconds(self.timeout, 0)?;
        Ok(CodesWaitRequest {
            service_name: self.service_name.unwrap_or_default(),
            timeout,
            request_id: self.request_id,
            channels: self.channels.map(|channels| {
                channels
                    .into_iter()
                    .map(|channel| channel.as_str().to_owned())
                    .collect()
            }),
        })
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct CreateTransferArguments {
    /// The recipient's address on Base: 0x and 40 hex digits.
    #[schemars(regex(pattern = "^0x([0-9a-f]{40}|[0-9A-F]{40}|[0-9a-fA-F]{40})$"))]
    pub to: String,
    /// The amount in atomic units, a whole number as a string: USDC has 6 decimals, so `"1000000"` is 1 USDC.
    #[schemars(regex(pattern = "^[0-9]*[1-9][0-9]*$"))]
    pub amount_atomic: String,
    /// `USDC`, the only asset (the default).
    pub asset: Option<String>,
    /// `base`, the only chain (the default).
    pub chain: Option<String>,
    /// Required: any string you choose for this transfer, 1 to 255 characters without control characters. Calling again with the same key and transfer returns the same intent; never create a second intent for one payment.
    #[schemars(length(min = 1, max = MAX_IDEMPOTENCY_KEY_CHARS), regex(pattern = r"^[^\u0000-\u001f\u007f-\u009f]*$"))]
    pub idempotency_key: String,
}

impl CreateTransferArguments {
    pub fn into_request(self) -> WalletSendRequest {
        WalletSendRequest {
            to: self.to,
            amount_atomic: self.amount_atomic,
            asset: self.asset.unwrap_or_else(default_asset),
            chain: self.chain.unwrap_or_else(default_chain),
            idempotency_key: Some(self.idempotency_key),
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct IntentArguments {
    /// The intent's id, as `create_transfer_intent` or `list_transfer_intents` shows it.
    pub intent_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListIntentsArguments {
    /// How many intents to return, newest first: 1 to 100 (20 when left out).
    #[schemars(range(min = PageLimit::PAGE.min, max = PageLimit::PAGE.max))]
    pub limit: Option<i64>,
    /// The `next_cursor` of the previous page, to read the page after it.
    pub cursor: Option<String>,
}

impl ListIntentsArguments {
    pub fn limit(&self) -> Result<usize, FieldError> {
        page_size(self.limit, PageLimit::PAGE)
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct WaitForDecisionArguments {
    /// The intent's id, as `create_transfer_intent` shows it.
    pub intent_id: String,
    /// Seconds to wait for an operator's decision: 1 to 55 (55 when left out).
    #[schemars(range(min = 1, max = MAX_TOOL_WAIT_SECS))]
    pub timeout: Option<i64>,
}

impl WaitForDecisionArguments {
    pub fn timeout(&self) -> Result<std::time::Duration, FieldError> {
        let timeout = wait_seconds(self.timeout, 1)?;
        Ok(std::time::Duration::from_secs(timeout.unsigned_abs()))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListEventsArguments {
    /// Only events after this `seq` (0 when left out): pass the `next_after` of the previous page, or the last `seq` you handled.
    #[schemars(range(min = 0))]
    pub after: Option<i64>,
    /// How many events to return, oldest first: 1 to 100 (20 when left out).
    #[schemars(range(min = PageLimit::PAGE.min, max = PageLimit::PAGE.max))]
    pub limit: Option<i64>,
    /// Only events of these types; every type when left out.
    #[serde(default)]
    #[schemars(schema_with = "event_types_schema")]
    pub types: Option<Vec<String>>,
}

impl ListEventsArguments {
    /// Where the page starts, its size and the types asked for, or an error for each that is wrong.
    pub fn page(&self) -> Result<(u64, usize, domain::EventTypes), FieldErrors> {
        let after = self.after.unwrap_or(0);
        let after = FieldError::check_range(
            RequestPart::Body,
            "after",
            after.into(),
            0,
            i64::MAX.into(),
            json!(after),
        )
        .map(|()| after.unsigned_abs());
        let limit = page_size(self.limit, PageLimit::PAGE);
        let types = match &self.types {
            None => Ok(domain::EventTypes::all()),
            Some(names) => read_event_types(RequestPart::Body, &names.join(",")),
        };
        match (after, limit, types) {
            (Ok(after), Ok(limit), Ok(types)) => Ok((after, limit, types)),
            (after, limit, types) => {
                Err(FieldErrors::among([after.err(), limit.err(), types.err()]))
            }
        }
    }
}

/// A list of event type names, each one of those the log writes.
fn event_types_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let names: Vec<&str> = domain::EventType::ALL
        .iter()
        .map(|kind| kind.as_str())
        .collect();
    schemars::json_schema!({
        "type": ["array", "null"],
        "items": { "type": "string", "enum": names },
        "minItems": 1,
        "description": "Only events of these types; every type when left out.",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read<T: DeserializeOwned>(value: Value) -> T {
        read_fields(value).expect("arguments")
    }

    #[test]
    fn a_code_wait_lasts_55_seconds_at_most_and_by_default() {
        let wait: WaitForCodeArguments = read(json!({}));
        assert_eq!(wait.into_request().expect("within").timeout, 55);
        let wait: WaitForCodeArguments = read(json!({"timeout": 56, "channels": ["sms"]}));
        let refused = wait.into_request().expect_err("beyond");
        assert_eq!(
            (refused.kind, refused.message.as_str()),
            (
                "less_than_equal",
                "Input should be less than or equal to 55"
            )
        );
        let wait: WaitForCodeArguments = read(json!({"timeout": 0, "channels": ["email"]}));
        assert_eq!(
            wait.into_request().expect("within").channels,
            Some(vec!["email".to_owned()])
        );
    }

    #[test]
    fn a_decision_wait_lasts_one_to_55_seconds() {
        let wait: WaitForDecisionArguments = read(json!({"intent_id": "x"}));
        assert_eq!(wait.timeout(), Ok(std::time::Duration::from_secs(55)));
        for timeout in [0, 56] {
            let wait: WaitForDecisionArguments =
                read(json!({"intent_id": "x", "timeout": timeout}));
            assert!(wait.timeout().is_err(), "{timeout}");
        }
    }

    #[test]
    fn pages_are_bounded_as_the_routes_bound_them() {
        let inbox: ListInboxArguments = read(json!({}));
        assert_eq!(inbox.limit(), Ok(20));
        let inbox: ListInboxArguments = read(json!({"limit": 0}));
        assert_eq!(inbox.limit().expect_err("empty").kind, "greater_than_equal");
        let sms: ListSmsArguments = read(json!({"limit": 0, "offset": 3}));
        assert_eq!(sms.window(), Ok((0, 3)));
        let sms: ListSmsArguments = read(json!({"limit": 101, "offset": -1}));
        assert_eq!(sms.window().expect_err("both wrong").0.len(), 2);
    }

    #[test]
    fn event_types_are_those_the_log_writes() {
        let events: ListEventsArguments =
            read(json!({"after": 7, "types": ["sms.received", "email.sent"]}));
        let (after, limit, types) = events.page().expect("a page");
        assert_eq!((after, limit), (7, 20));
        assert!(types.contains(domain::EventType::SmsReceived));
        assert!(!types.contains(domain::EventType::EmailReceived));
        let events: ListEventsArguments = read(json!({"types": ["sms.received", "sms.sent"]}));
        let refused = events.page().expect_err("unknown");
        assert_eq!(refused.0[0].kind, "enum");
        assert_eq!(refused.0[0].input, json!("sms.sent"));
    }

    #[test]
    fn a_transfer_names_usdc_on_base_unless_told_otherwise_and_carries_its_key() {
        let transfer: CreateTransferArguments =
            read(json!({"to": "0x01", "amount_atomic": "5", "idempotency_key": "k"}));
        let request = transfer.into_request();
        assert_eq!(
            (request.asset.as_str(), request.chain.as_str()),
            ("USDC", "base")
        );
        assert_eq!(request.idempotency_key.as_deref(), Some("k"));
        let missing =
            read_fields::<CreateTransferArguments>(json!({"to": "0x01", "amount_atomic": "5"}))
                .expect_err("a key is required");
        assert_eq!(
            missing.path,
            vec![api_types::FieldPath::from("idempotency_key")]
        );
    }
}
