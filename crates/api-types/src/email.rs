//! Email: messages of the agent's inbox, and the bodies of send and reply.

use std::collections::BTreeMap;

use domain::{AttachmentMeta, Direction, EmailMessageRecord};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::ToSchema;

/// A message of the inbox, inbound or outbound.
#[derive(Debug, Serialize, ToSchema)]
pub struct EmailMessageOut {
    pub id: String,
    /// `inbound` or `outbound`.
    pub direction: String,
    /// `queued` (accepted, waiting for the provider), `sent` (the provider took it), `failed`
    /// (the provider refused it; see `failure_reason`), or `received` (inbound).
    pub status: String,
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
    /// What is known of each attachment; the content is not kept.
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
    pub filename: Option<String>,
    /// `type/subtype`.
    pub content_type: String,
    /// Bytes of the decoded content.
    pub size: u64,
    pub content_id: Option<String>,
}

/// What the service read out of the message.
#[derive(Debug, Serialize, ToSchema)]
pub struct ParsedDataOut {
    /// Verification codes in the subject or text of inbound mail, most likely first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verification_codes: Option<Vec<String>>,
}

impl From<&AttachmentMeta> for AttachmentOut {
    fn from(attachment: &AttachmentMeta) -> Self {
        Self {
            filename: attachment.filename.clone(),
            content_type: attachment.content_type.clone(),
            size: attachment.size,
            content_id: attachment.content_id.clone(),
        }
    }
}

fn header_object(headers: &[(String, String)]) -> BTreeMap<String, String> {
    let mut object: BTreeMap<String, String> = BTreeMap::new();
    for (name, value) in headers {
        object
            .entry(name.clone())
            .and_modify(|joined| {
                joined.push('\n');
                joined.push_str(value);
            })
            .or_insert_with(|| value.clone());
    }
    object
}

impl From<&EmailMessageRecord> for EmailMessageOut {
    fn from(message: &EmailMessageRecord) -> Self {
        let inbound = message.direction == Direction::Inbound;
        Self {
            id: message.id.to_string(),
            direction: message.direction.as_str().to_owned(),
            status: message.status.as_str().to_owned(),
            thread_id: message.thread_id.to_string(),
            created_at: message.created_at,
            provider_message_id: message.provider_message_id.clone(),
            internet_message_id: message.internet_message_id.clone(),
            subject: message.subject.clone(),
            from: message.from.clone(),
            to: message.to.clone(),
            cc: message.cc.clone(),
            bcc: message.bcc.clone(),
            reply_to: message.reply_to.clone(),
            text: message.text.clone(),
            html: message.html.clone(),
            attachments: message.attachments.iter().map(Into::into).collect(),
            headers: header_object(&message.headers),
            parsed_data: ParsedDataOut {
                verification_codes: inbound.then(|| message.verification_codes.clone()),
            },
            failure_reason: message.failure_reason.clone(),
            received_at: message.received_at,
            sent_at: message.sent_at,
        }
    }
}

/// The answer to a send or a reply.
#[derive(Debug, Serialize, ToSchema)]
pub struct EmailSendResponse {
    /// `sent`: the message was accepted; `data.status` tells where its delivery stands.
    pub status: String,
    pub data: EmailMessageOut,
}

/// One page of the inbox, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct EmailInboxPage {
    pub items: Vec<EmailMessageOut>,
    /// Pass as `cursor` for the next page; null on the last one.
    pub next_cursor: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct EmailSendRequest {
    /// Recipient addresses; at most 20 over `to`, `cc` and `bcc` together.
    pub to: Vec<String>,
    pub subject: String,
    /// Plain text, at most 262,144 bytes of UTF-8.
    pub body_text: String,
    #[serde(default)]
    pub cc: Option<Vec<String>>,
    #[serde(default)]
    pub bcc: Option<Vec<String>>,
    /// Custom headers. Headers the service or the provider writes (From, To, Subject,
    /// Message-ID, Content-Type, DKIM-Signature, ARC-*, Received...) and any CR or LF are refused.
    #[serde(default)]
    pub headers: Option<BTreeMap<String, String>>,
    /// Only `transactional` (the default) is supported.
    #[serde(default)]
    pub category: Option<String>,
    /// Accepted by the schema but unavailable: a request that sets it is refused (400).
    #[serde(default)]
    pub reply_to: Option<Vec<String>>,
    /// Unavailable: a request that sets it is refused (400).
    #[serde(default)]
    pub body_html: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct EmailReplyRequest {
    /// Plain text, at most 262,144 bytes of UTF-8.
    pub body_text: String,
}
