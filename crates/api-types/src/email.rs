//! Email: messages of the agent's inbox, and the bodies of send and reply.

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;

use domain::email::{MAX_CUSTOM_HEADERS, MAX_CUSTOM_HEADER_BYTES};
use domain::{
    AttachmentMeta, EmailMessageRecord, SearchQuery, SenderRules, SenderRulesError, ThreadRead,
    ThreadSummary, MAX_ADDRESS_CHARS, MAX_BODY_TEXT_BYTES, MAX_HEADER_NAME_CHARS,
    MAX_OUTBOUND_ATTACHMENTS, MAX_OUTBOUND_FILENAME_CHARS, MAX_RECIPIENTS, MAX_SENDER_RULES,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::openapi::schema::{
    Array, ArrayBuilder, KnownFormat, Object, ObjectBuilder, SchemaFormat, SchemaType, Type,
};
use utoipa::ToSchema;

use crate::enums::{Direction, EmailStatus, SendStatus};
use crate::field_errors::{FieldError, FieldErrors, RequestPart};

/// A message of the inbox, inbound or outbound.
#[derive(Debug, Serialize, ToSchema)]
pub struct EmailMessageOut {
    pub id: String,
    pub direction: Direction,
    /// See `failure_reason` when `failed`.
    pub status: EmailStatus,
    /// Messages of one conversation share it; a reply has the thread of the message it answers.
    pub thread_id: String,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    pub provider_message_id: Option<String>,
    /// The RFC 5322 Message-ID, with its angle brackets.
    pub internet_message_id: Option<String>,
    pub subject: Option<String>,
    /// The sender's address.
    pub from: Option<String>,
    pub to: Vec<String>,
    pub cc: Vec<String>,
    pub bcc: Vec<String>,
    pub reply_to: Vec<String>,
    /// The plain-text body. Inbox pages carry its first 4,096 characters; a message read, all.
    pub text: Option<String>,
    /// The HTML body of inbound mail, cut like `text` in inbox pages.
    pub html: Option<String>,
    /// Each attachment; one `stored` downloads from
    /// `/v1/email/messages/{message_id}/attachments/{id}`.
    pub attachments: Vec<AttachmentOut>,
    /// Header names and values; the values of a repeated header are joined by a line break.
    pub headers: BTreeMap<String, String>,
    pub parsed_data: ParsedDataOut,
    /// Why the provider refused an outbound message for good; null otherwise.
    pub failure_reason: Option<String>,
    /// Null for outbound.
    #[serde(with = "time::serde::rfc3339::option")]
    pub received_at: Option<OffsetDateTime>,
    /// When the message was accepted for sending; null for inbound.
    #[serde(with = "time::serde::rfc3339::option")]
    pub sent_at: Option<OffsetDateTime>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AttachmentOut {
    /// Unique in its message and stable: `att_` and its position, from 1.
    #[schema(example = "att_1")]
    pub id: String,
    /// The name the sender gave, as given (its download's name is made safe to save).
    pub filename: Option<String>,
    /// `type/subtype`.
    pub content_type: String,
    /// Bytes of the decoded content.
    pub size: u64,
    pub content_id: Option<String>,
    /// Whether its bytes are kept and can be downloaded: false for one over
    /// `EMAIL_ATTACHMENT_MAX_BYTES` or one the provider delivered as metadata only.
    pub stored: bool,
}

/// What the service read out of the message.
#[derive(Debug, Serialize, ToSchema)]
pub struct ParsedDataOut {
    /// Verification codes in the subject or text of inbound mail, most likely first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verification_codes: Option<Vec<String>>,
    /// Inbound mail: whether the receiving side verified DKIM or DMARC for the domain of `from`
    /// (`Authentication-Results` it wrote); false when it reported nothing or a failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sender_authenticated: Option<bool>,
    /// The domain authenticated, when one was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub authenticated_domain: Option<String>,
}

impl From<AttachmentMeta> for AttachmentOut {
    fn from(attachment: AttachmentMeta) -> Self {
        Self {
            id: attachment.id.to_string(),
            filename: attachment.filename,
            content_type: attachment.content_type,
            size: attachment.size,
            content_id: attachment.content_id,
            stored: attachment.stored,
        }
    }
}

fn header_object(headers: Vec<(String, String)>) -> BTreeMap<String, String> {
    let mut object: BTreeMap<String, String> = BTreeMap::new();
    for (name, value) in headers {
        match object.entry(name) {
            Entry::Occupied(mut joined) => {
                let joined = joined.get_mut();
                joined.push('\n');
                joined.push_str(&value);
            }
            Entry::Vacant(entry) => {
                entry.insert(value);
            }
        }
    }
    object
}

/// Takes the record by value: a page of mail moves its strings into the answer instead of copying
/// each of them.
impl From<EmailMessageRecord> for EmailMessageOut {
    fn from(message: EmailMessageRecord) -> Self {
        let inbound = message.direction == domain::Direction::Inbound;
        Self {
            id: message.id.to_string(),
            direction: message.direction.into(),
            status: message.status.into(),
            thread_id: message.thread_id.to_string(),
            created_at: message.created_at,
            provider_message_id: message.provider_message_id,
            internet_message_id: message.internet_message_id,
            subject: message.subject,
            from: message.from,
            to: message.to,
            cc: message.cc,
            bcc: message.bcc,
            reply_to: message.reply_to,
            text: message.text,
            html: message.html,
            attachments: message.attachments.into_iter().map(Into::into).collect(),
            headers: header_object(message.headers),
            parsed_data: ParsedDataOut {
                verification_codes: inbound.then_some(message.verification_codes),
                sender_authenticated: inbound
                    .then(|| message.sender_authentication.domain().is_some()),
                authenticated_domain: message.sender_authentication.domain().map(str::to_owned),
            },
            failure_reason: message.failure_reason,
            received_at: message.received_at,
            sent_at: message.sent_at,
        }
    }
}

/// The answer to a send or a reply.
#[derive(Debug, Serialize, ToSchema)]
pub struct EmailSendResponse {
    /// The message was accepted; `data.status` tells where its delivery stands.
    pub status: SendStatus,
    pub data: EmailMessageOut,
}

impl From<EmailMessageRecord> for EmailSendResponse {
    /// The answer to an accepted send, reply or forward, on every way in.
    fn from(message: EmailMessageRecord) -> Self {
        Self {
            status: SendStatus::Sent,
            data: message.into(),
        }
    }
}

/// One page of the inbox, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct EmailInboxPage {
    pub items: Vec<EmailMessageOut>,
    /// Pass as `cursor` for the next page; null on the last one.
    pub next_cursor: Option<String>,
}

/// A conversation of the inbox, as a page of threads shows it.
#[derive(Debug, Serialize, ToSchema)]
pub struct ThreadOut {
    /// The `thread_id` its messages share.
    pub thread_id: String,
    /// The subject of its first message.
    pub subject: Option<String>,
    /// The addresses of its messages' From, To and Cc, lowercased, each once (the first 50).
    pub participants: Vec<String>,
    pub message_count: u64,
    #[serde(with = "time::serde::rfc3339")]
    pub last_message_at: OffsetDateTime,
    /// The first 200 characters of its newest message's text.
    pub last_message_preview: Option<String>,
}

impl From<ThreadSummary> for ThreadOut {
    fn from(thread: ThreadSummary) -> Self {
        Self {
            thread_id: thread.thread_id.to_string(),
            subject: thread.subject,
            participants: thread.participants,
            message_count: thread.message_count,
            last_message_at: thread.last_message_at,
            last_message_preview: thread.last_message_preview,
        }
    }
}

/// One page of the inbox's threads, the one with the newest message first.
#[derive(Debug, Serialize, ToSchema)]
pub struct ThreadPageOut {
    pub items: Vec<ThreadOut>,
    /// Pass as `cursor` for the next page; null on the last one.
    pub next_cursor: Option<String>,
}

/// A thread read whole: its subject and participants as a page of threads gives them, and its
/// messages oldest first, with full bodies.
#[derive(Debug, Serialize, ToSchema)]
pub struct ThreadDetailOut {
    pub thread_id: String,
    /// The subject of its first message (also when that message is among those omitted).
    pub subject: Option<String>,
    /// The addresses of its messages' From, To and Cc, lowercased, each once (the first 50).
    pub participants: Vec<String>,
    /// Its newest 100 messages at most, oldest first.
    pub messages: Vec<EmailMessageOut>,
    /// How many earlier messages of a thread of more than 100 are not in `messages`; 0 otherwise.
    pub earlier_messages_omitted: u64,
}

/// Takes the thread by value: its messages' strings move into the answer.
impl From<ThreadRead> for ThreadDetailOut {
    fn from(thread: ThreadRead) -> Self {
        Self {
            thread_id: thread.thread_id.to_string(),
            earlier_messages_omitted: thread.earlier_omitted(),
            subject: thread.subject,
            participants: thread.participants,
            messages: thread
                .messages
                .into_iter()
                .map(EmailMessageOut::from)
                .collect(),
        }
    }
}

/// A header's text: no control character but the tab (CR or LF would end it and start another,
/// NUL mail cannot carry).
const HEADER_TEXT: &str = "^[^\\u0000-\\u0008\\u000a-\\u001f\\u007f-\\u009f]*$";

/// A list of email addresses; at most `MAX_RECIPIENTS` over `to`, `cc` and `bcc` together.
fn addresses(min_items: Option<usize>, schema_type: SchemaType, description: &str) -> Array {
    ArrayBuilder::new()
        .schema_type(schema_type)
        .items(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .format(Some(SchemaFormat::KnownFormat(KnownFormat::Email)))
                .max_length(Some(MAX_ADDRESS_CHARS)),
        )
        .min_items(min_items)
        .max_items(Some(MAX_RECIPIENTS))
        .description(Some(description))
        .build()
}

fn to_schema() -> Array {
    addresses(
        Some(1),
        SchemaType::Type(Type::Array),
        "Recipient addresses; at most 20 over `to`, `cc` and `bcc` together.",
    )
}

fn copies_schema() -> Array {
    addresses(
        None,
        SchemaType::from_iter([Type::Array, Type::Null]),
        "Addresses copied; at most 20 recipients over `to`, `cc` and `bcc` together.",
    )
}

/// Names are printable ASCII without `:` or spaces, values header text.
fn custom_headers_schema() -> Object {
    let header_text = ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(HEADER_TEXT));
    ObjectBuilder::new()
        .schema_type(SchemaType::from_iter([Type::Object, Type::Null]))
        .property_names(Some(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .pattern(Some(format!("^[!-9;-~]{{1,{MAX_HEADER_NAME_CHARS}}}$"))),
        ))
        .additional_properties(Some(header_text))
        .max_properties(Some(MAX_CUSTOM_HEADERS))
        .description(Some(format!(
            "Custom headers, at most {MAX_CUSTOM_HEADERS} holding at most \
             {MAX_CUSTOM_HEADER_BYTES} bytes of names and values: names of printable ASCII \
             without `:` or spaces, values without control characters but the tab. Headers the \
             service, the provider or receiving servers write (From, To, Subject, Message-ID, \
             Content-*, *-Signature, ARC-*, Resent-*, Received, Authentication-Results...) are \
             refused."
        )))
        .build()
}

fn body_text_schema() -> Object {
    body_text_builder(Type::String.into()).build()
}

fn optional_body_text_schema() -> Object {
    body_text_builder(SchemaType::from_iter([Type::String, Type::Null])).build()
}

fn body_text_builder(schema_type: SchemaType) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(schema_type)
        // In characters, as JSON Schema counts: none over this is within the limit in bytes.
        .max_length(Some(MAX_BODY_TEXT_BYTES))
        .pattern(Some("^[^\\u0000]*$"))
        .description(Some(
            "Plain text without NUL, at most 262,144 bytes of UTF-8.",
        ))
}

// Also the `send_email` tool's arguments but its key. The `schemars` attributes make the tool's
// JSON Schema (descriptions written for a model, and without the fields the service refuses);
// the `schema` ones the route's.
#[derive(Debug, Deserialize, ToSchema, JsonSchema)]
pub struct EmailSendRequest {
    #[schema(schema_with = to_schema)]
    #[schemars(description = "Recipient addresses: 1 to 20, over `to`, `cc` and `bcc` together.")]
    #[schemars(length(min = 1, max = MAX_RECIPIENTS), inner(email, length(max = MAX_ADDRESS_CHARS)))]
    pub to: Vec<String>,
    /// A single line: no CR, LF or NUL.
    #[schema(pattern = "^[^\\r\\n\\u0000]*$")]
    #[schemars(description = "The subject: one line, without line breaks.")]
    #[schemars(regex(pattern = r"^[^\r\n\u0000]*$"))]
    pub subject: String,
    #[schema(schema_with = body_text_schema)]
    #[schemars(description = "The message, as plain text: at most 262,144 bytes of UTF-8.")]
    #[schemars(length(max = MAX_BODY_TEXT_BYTES))]
    pub body_text: String,
    #[schema(schema_with = copies_schema)]
    #[schemars(description = "Addresses copied.")]
    #[schemars(length(max = MAX_RECIPIENTS), inner(email, length(max = MAX_ADDRESS_CHARS)))]
    pub cc: Option<Vec<String>>,
    #[schema(schema_with = copies_schema)]
    #[schemars(description = "Addresses copied without the others seeing them.")]
    #[schemars(length(max = MAX_RECIPIENTS), inner(email, length(max = MAX_ADDRESS_CHARS)))]
    pub bcc: Option<Vec<String>>,
    #[schema(schema_with = custom_headers_schema)]
    #[schemars(
        description = "Custom headers, name to value; headers the service or mail servers write (From, To, Subject, Message-ID, Content-*, ...) are refused."
    )]
    pub headers: Option<BTreeMap<String, String>>,
    /// Only `transactional` (the default) is supported.
    #[schemars(skip)]
    pub category: Option<String>,
    /// Accepted by the schema but unavailable: a request that sets it is refused (400).
    #[schemars(skip)]
    pub reply_to: Option<Vec<String>>,
    /// Unavailable: a request that sets it is refused (400).
    #[schemars(skip)]
    pub body_html: Option<String>,
    #[schema(max_items = 10)]
    #[schemars(description = "Files to attach: at most 10, 10 MiB in all once decoded.")]
    #[schemars(length(max = MAX_OUTBOUND_ATTACHMENTS))]
    pub attachments: Option<Vec<AttachmentIn>>,
}

// Also the `reply_email` tool's arguments but the message and the key.
#[derive(Debug, Deserialize, ToSchema, JsonSchema)]
pub struct EmailReplyRequest {
    #[schema(schema_with = body_text_schema)]
    #[schemars(description = "The reply, as plain text: at most 262,144 bytes of UTF-8.")]
    #[schemars(length(max = MAX_BODY_TEXT_BYTES))]
    pub body_text: String,
    #[schema(max_items = 10)]
    #[schemars(description = "Files to attach, as for `send_email`.")]
    #[schemars(length(max = MAX_OUTBOUND_ATTACHMENTS))]
    pub attachments: Option<Vec<AttachmentIn>>,
}

/// `POST /v1/email/forward/{message_id}`: the message goes to these recipients under `Fwd:`, with
/// `body_text` above it and its stored attachments, then these, attached.
// Also the `forward_email` tool's arguments but the message and the key.
#[derive(Debug, Deserialize, ToSchema, JsonSchema)]
pub struct EmailForwardRequest {
    #[schema(schema_with = to_schema)]
    #[schemars(description = "Recipient addresses: 1 to 20, over `to`, `cc` and `bcc` together.")]
    #[schemars(length(min = 1, max = MAX_RECIPIENTS), inner(email, length(max = MAX_ADDRESS_CHARS)))]
    pub to: Vec<String>,
    #[schema(schema_with = copies_schema)]
    #[schemars(description = "Addresses copied.")]
    #[schemars(length(max = MAX_RECIPIENTS), inner(email, length(max = MAX_ADDRESS_CHARS)))]
    pub cc: Option<Vec<String>>,
    #[schema(schema_with = copies_schema)]
    #[schemars(description = "Addresses copied without the others seeing them.")]
    #[schemars(length(max = MAX_RECIPIENTS), inner(email, length(max = MAX_ADDRESS_CHARS)))]
    pub bcc: Option<Vec<String>>,
    /// Written above the forwarded message.
    #[schema(schema_with = optional_body_text_schema)]
    #[schemars(
        description = "Plain text written above the forwarded message: at most 262,144 bytes of UTF-8."
    )]
    #[schemars(length(max = MAX_BODY_TEXT_BYTES))]
    pub body_text: Option<String>,
    #[schema(max_items = 10)]
    #[schemars(
        description = "Files to attach after the forwarded message's own, as for `send_email`."
    )]
    #[schemars(length(max = MAX_OUTBOUND_ATTACHMENTS))]
    pub attachments: Option<Vec<AttachmentIn>>,
}

/// An attachment to send: at most 10 with one message, 10 MiB decoded in all.
#[derive(Debug, Deserialize, ToSchema, JsonSchema)]
#[schemars(
    rename = "AttachmentArgument",
    description = "A file to attach to a mail."
)]
pub struct AttachmentIn {
    /// The name it is sent under: no control characters or marks that reorder text.
    #[schemars(
        description = "The name it is sent under, e.g. `report.pdf`.",
        length(min = 1, max = MAX_OUTBOUND_FILENAME_CHARS)
    )]
    #[schema(
        min_length = 1,
        max_length = 255,
        pattern = "^[^\\u0000-\\u001f\\u007f-\\u009f\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u2064\\u2066-\\u2069\\ufeff\\ufffd]+$"
    )]
    pub filename: String,
    /// A media type, `type/subtype` with optional parameters; when left out, the type the
    /// filename's extension stands for (`note.txt` is `text/plain`), else
    /// `application/octet-stream`.
    #[schemars(
        description = "Its media type, e.g. `application/pdf`; when left out, the type the filename's extension stands for (`note.txt` is `text/plain`), else `application/octet-stream`."
    )]
    #[schema(
        max_length = 255,
        pattern = "^[A-Za-z0-9!#$%&'*+.^_`|~-]+/[A-Za-z0-9!#$%&'*+.^_`|~-]+$"
    )]
    pub content_type: Option<String>,
    /// The bytes in base64 (RFC 4648, standard alphabet; padding and line breaks optional).
    #[schemars(description = "Its bytes, in base64.")]
    #[schema(pattern = "^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$")]
    pub content_base64: String,
}

/// `PUT /v1/email/rules`: both lists replace the stored ones (a list left out is emptied).
#[derive(Debug, Deserialize, ToSchema)]
pub struct SenderRulesRequest {
    /// Addresses or `@domain`s (exactly that domain, not its subdomains), compared without regard
    /// to case. When any, only mail from them comes into the inbox.
    #[serde(default)]
    #[schema(schema_with = sender_patterns, example = json!(["boss@corp.example", "@partner.example"]))]
    pub allow: Vec<String>,
    /// Addresses or `@domain`s whose mail never comes in, whatever `allow` says.
    #[serde(default)]
    #[schema(schema_with = sender_patterns, example = json!(["@spam.example"]))]
    pub block: Vec<String>,
}

/// A list of sender rules' entries. The pattern is narrower than what the rules accept (any
/// address the API takes, or `@` and its domain), so whatever it allows is accepted.
fn sender_patterns() -> Array {
    ArrayBuilder::new()
        .items(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .pattern(Some(
                    "^([A-Za-z0-9_+-]{1,32}(\\.[A-Za-z0-9_+-]{1,16}){0,2})?@[A-Za-z0-9]{1,30}(\\.[A-Za-z0-9]{1,30}){1,3}$",
                ))
                .max_length(Some(MAX_ADDRESS_CHARS)),
        )
        .max_items(Some(MAX_SENDER_RULES))
        .description(Some("Addresses, or `@` and a domain; at most 1,000."))
        .build()
}

/// An inbox's sender rules, and how much inbound mail they kept out (counted, never stored).
#[derive(Debug, Serialize, ToSchema)]
pub struct SenderRulesOut {
    /// Lowercased, each once, in the order given.
    pub allow: Vec<String>,
    pub block: Vec<String>,
    /// Inbound mails kept out of the inbox by these rules, since the agent was created.
    pub kept_out_count: u64,
}

impl SenderRulesOut {
    pub fn new(rules: &SenderRules, kept_out_count: u64) -> Self {
        let (allow, block) = rules.texts();
        Self {
            allow,
            block,
            kept_out_count,
        }
    }
}

impl TryFrom<SenderRulesRequest> for SenderRules {
    type Error = FieldErrors;

    /// Each wrong entry named by its list and index; a list over `MAX_SENDER_RULES` in
    /// pydantic's `too_long`.
    fn try_from(request: SenderRulesRequest) -> Result<Self, FieldErrors> {
        SenderRules::new(&request.allow, &request.block).map_err(|errors| {
            let list_of = |name: &str| match name {
                "allow" => &request.allow,
                _ => &request.block,
            };
            FieldErrors(
                errors
                    .into_iter()
                    .map(|error| match error {
                        SenderRulesError::Entry { list, index } => FieldError::body(
                            vec![list.into(), index.into()],
                            "value_error",
                            "Value error, must be an email address or @domain",
                            list_of(list)[index].clone().into(),
                        ),
                        SenderRulesError::TooMany { list } => FieldError::body(
                            vec![list.into()],
                            "too_long",
                            format!(
                                "List should have at most {MAX_SENDER_RULES} items after \
                                 validation, not {}",
                                list_of(list).len()
                            ),
                            serde_json::json!(list_of(list)),
                        )
                        .with_context(serde_json::json!({
                            "field_type": "List",
                            "max_length": MAX_SENDER_RULES,
                            "actual_length": list_of(list).len(),
                        })),
                    })
                    .collect(),
            )
        })
    }
}

/// The search query `q` of `/v1/email/search` (and the MCP tool's `query`) read into the
/// domain's `SearchQuery`: pydantic's `missing` when absent, a `value_error` saying what is
/// wrong when empty or malformed.
pub fn search_query(
    part: RequestPart,
    field: &str,
    raw: Option<&str>,
) -> Result<SearchQuery, FieldError> {
    let Some(raw) = raw else {
        return Err(FieldError::new(
            part,
            vec![field.into()],
            "missing",
            "Field required",
            serde_json::Value::Null,
        ));
    };
    SearchQuery::parse(raw).map_err(|reason| {
        FieldError::new(
            part,
            vec![field.into()],
            "value_error",
            format!("Value error, {reason}"),
            raw.into(),
        )
    })
}
