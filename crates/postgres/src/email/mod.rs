//! Email on PostgreSQL: one `PgEmailStore` behind the outbox, the outbox worker's queue, the
//! mailbox reads and the inbound store, one module per port; and the sandbox provider's side.

mod attachments;
mod backfill;
mod codes;
mod inbound;
mod mailbox;
mod outbox;
mod queue;
mod rules;
mod sandbox;

pub use backfill::{fill_inbound_mail_facts, InboundMailText};
pub use sandbox::{PgSandboxMailer, SandboxMail};

use std::time::Duration;

use diesel::dsl::sql;
use diesel::expression::SqlLiteral;
use diesel::prelude::*;
use diesel::sql_types::{Nullable, Text};
use domain::{
    AgentId, AttachmentId, AttachmentMeta, Direction, EmailAddress, EmailInboxId, EmailMessageId,
    EmailMessageRecord, EmailStatus, SenderAuthentication,
};
use ports::StoreError;
use serde_json::{json, Value};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::database::Database;
use crate::errors::corrupt;
use crate::schema::email_messages;

pub struct PgEmailStore {
    database: Database,
    /// The longest a search's statements may run.
    search_timeout: Duration,
}

/// How long a search's statements may run unless told otherwise.
pub const DEFAULT_SEARCH_TIMEOUT: Duration = Duration::from_secs(3);

impl PgEmailStore {
    pub fn new(database: Database) -> Self {
        Self {
            database,
            search_timeout: DEFAULT_SEARCH_TIMEOUT,
        }
    }

    /// The same store, its searches' statements cancelled past `timeout`.
    pub fn with_search_timeout(self, timeout: Duration) -> Self {
        Self {
            search_timeout: timeout,
            ..self
        }
    }
}

/// Every column of a message but its two bodies, which pages read cut short and a message read
/// in full; those past `email_messages`' 32 (`schema::email_message_facts`) by name.
#[derive(Queryable, Selectable)]
#[diesel(table_name = email_messages, check_for_backend(diesel::pg::Pg))]
pub(crate) struct MessageRow {
    id: Uuid,
    agent_id: Uuid,
    inbox_id: Uuid,
    direction: String,
    status: String,
    thread_id: Uuid,
    provider_message_id: Option<String>,
    internet_message_id: Option<String>,
    in_reply_to: Option<String>,
    reference_ids: Vec<String>,
    subject: Option<String>,
    from_address: Option<String>,
    to_addresses: Vec<String>,
    cc_addresses: Vec<String>,
    bcc_addresses: Vec<String>,
    reply_to_addresses: Vec<String>,
    attachments: Value,
    headers: Value,
    verification_codes: Vec<String>,
    last_error: Option<String>,
    created_at: OffsetDateTime,
    received_at: Option<OffsetDateTime>,
    sent_at: Option<OffsetDateTime>,
    #[diesel(
        select_expression = sql::<Nullable<Text>>("email_messages.sender_authentication"),
        select_expression_type = SqlLiteral<Nullable<Text>>
    )]
    sender_authentication: Option<String>,
    #[diesel(
        select_expression = sql::<Nullable<Text>>("email_messages.authenticated_domain"),
        select_expression_type = SqlLiteral<Nullable<Text>>
    )]
    authenticated_domain: Option<String>,
    #[diesel(
        select_expression = sql::<Nullable<Text>>("email_messages.service_name"),
        select_expression_type = SqlLiteral<Nullable<Text>>
    )]
    service_name: Option<String>,
}

/// A message's row and its bodies, as one query reads them.
pub(crate) type MessageWithBodies = (MessageRow, Option<String>, Option<String>);

pub(crate) fn message_record(
    (row, text, html): MessageWithBodies,
) -> Result<EmailMessageRecord, StoreError> {
    let direction = Direction::parse(&row.direction)
        .ok_or_else(|| corrupt(format!("email direction {:?}", row.direction)))?;
    let status = EmailStatus::parse(&row.status)
        .ok_or_else(|| corrupt(format!("email status {:?}", row.status)))?;
    let headers = headers_from_column(&row.headers)?;
    let sender_authentication = match direction {
        Direction::Inbound => read_authentication(
            row.sender_authentication.as_deref(),
            row.authenticated_domain,
        )?,
        Direction::Outbound => SenderAuthentication::Unreported,
    };
    Ok(EmailMessageRecord {
        id: EmailMessageId(row.id),
        inbox_id: EmailInboxId(row.inbox_id),
        agent_id: AgentId(row.agent_id),
        direction,
        status,
        thread_id: EmailMessageId(row.thread_id),
        provider_message_id: row.provider_message_id,
        internet_message_id: row.internet_message_id,
        in_reply_to: row.in_reply_to,
        references: row.reference_ids,
        subject: row.subject,
        from: row.from_address,
        to: row.to_addresses,
        cc: row.cc_addresses,
        bcc: row.bcc_addresses,
        reply_to: row.reply_to_addresses,
        text,
        html,
        attachments: attachments_from_column(&row.attachments)?,
        sender_authentication,
        service_name: row.service_name,
        headers,
        verification_codes: row.verification_codes,
        // The last error of a queued message is a passing one; only a failed message has a reason.
        failure_reason: row.last_error.filter(|_| status == EmailStatus::Failed),
        created_at: row.created_at,
        received_at: row.received_at,
        sent_at: row.sent_at,
    })
}

/// The columns an inbound row keeps its sender's authentication in: its kind and the domain.
pub(crate) fn authentication_columns(
    authentication: &SenderAuthentication,
) -> (&'static str, Option<&str>) {
    match authentication {
        SenderAuthentication::Unreported => ("unreported", None),
        SenderAuthentication::Failed => ("failed", None),
        SenderAuthentication::Passed { domain } => ("passed", Some(domain)),
    }
}

/// An inbound row's sender authentication; a row not yet filled (migration 000034) as unreported.
fn read_authentication(
    kind: Option<&str>,
    domain: Option<String>,
) -> Result<SenderAuthentication, StoreError> {
    match (kind, domain) {
        (None | Some("unreported"), _) => Ok(SenderAuthentication::Unreported),
        (Some("failed"), _) => Ok(SenderAuthentication::Failed),
        (Some("passed"), Some(domain)) => Ok(SenderAuthentication::Passed { domain }),
        (kind, _) => Err(corrupt(format!("sender authentication {kind:?}"))),
    }
}

pub(crate) fn address_texts(list: &[EmailAddress]) -> Vec<String> {
    list.iter()
        .map(|address| address.as_str().to_owned())
        .collect()
}

pub(crate) fn headers_column(headers: &[(String, String)]) -> Value {
    Value::Array(
        headers
            .iter()
            .map(|(name, value)| json!([name, value]))
            .collect(),
    )
}

pub(crate) fn headers_from_column(column: &Value) -> Result<Vec<(String, String)>, StoreError> {
    let pairs = column
        .as_array()
        .ok_or_else(|| corrupt("email headers are not an array"))?;
    pairs
        .iter()
        .map(|pair| match pair.as_array().map(Vec::as_slice) {
            Some([Value::String(name), Value::String(value)]) => Ok((name.clone(), value.clone())),
            _ => Err(corrupt("an email header is not a [name, value] pair")),
        })
        .collect()
}

pub(crate) fn attachments_column(attachments: &[AttachmentMeta]) -> Value {
    Value::Array(
        attachments
            .iter()
            .map(|attachment| {
                json!({
                    "id": attachment.id.position(),
                    "filename": attachment.filename,
                    "content_type": attachment.content_type,
                    "size": attachment.size,
                    "content_id": attachment.content_id,
                    "stored": attachment.stored,
                    "sha256": attachment.sha256.map(hex::encode),
                })
            })
            .collect(),
    )
}

/// The attachments listed in the column. Rows written before attachments were kept have no id
/// (theirs is their position) and no bytes (`stored` false).
pub(crate) fn attachments_from_column(column: &Value) -> Result<Vec<AttachmentMeta>, StoreError> {
    let items = column
        .as_array()
        .ok_or_else(|| corrupt("email attachments are not an array"))?;
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let text = |key: &str| item.get(key).and_then(Value::as_str).map(str::to_owned);
            let id = match item.get("id").and_then(Value::as_u64) {
                None => AttachmentId::at_index(index),
                Some(position) => u32::try_from(position)
                    .ok()
                    .and_then(AttachmentId::from_position)
                    .ok_or_else(|| corrupt("an attachment's id is not a position"))?,
            };
            let sha256 = text("sha256")
                .map(|digest| {
                    hex::decode(digest)
                        .ok()
                        .and_then(|bytes| <[u8; 32]>::try_from(bytes).ok())
                        .ok_or_else(|| corrupt("an attachment's digest is not SHA-256"))
                })
                .transpose()?;
            Ok(AttachmentMeta {
                id,
                filename: text("filename"),
                content_type: text("content_type")
                    .ok_or_else(|| corrupt("an attachment has no content type"))?,
                size: item
                    .get("size")
                    .and_then(Value::as_u64)
                    .ok_or_else(|| corrupt("an attachment has no size"))?,
                content_id: text("content_id"),
                stored: item.get("stored").and_then(Value::as_bool).unwrap_or(false),
                sha256,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_and_attachments_survive_their_columns() {
        let headers = vec![
            ("Received".to_owned(), "a".to_owned()),
            ("Received".to_owned(), "b".to_owned()),
            ("X-Ünïcode".to_owned(), "✓".to_owned()),
        ];
        assert_eq!(
            headers_from_column(&headers_column(&headers)).expect("pairs"),
            headers
        );
        let attachments = vec![
            AttachmentMeta {
                id: AttachmentId::at_index(0),
                filename: Some("a.pdf".into()),
                content_type: "application/pdf".into(),
                size: 10,
                content_id: None,
                stored: true,
                sha256: Some([0xab; 32]),
            },
            AttachmentMeta {
                id: AttachmentId::at_index(1),
                filename: None,
                content_type: "image/png".into(),
                size: 0,
                content_id: Some("logo".into()),
                stored: false,
                sha256: None,
            },
        ];
        assert_eq!(
            attachments_from_column(&attachments_column(&attachments)).expect("items"),
            attachments
        );
        let listed_before = json!([{"filename": null, "content_type": "a/b", "size": 3}]);
        let read = attachments_from_column(&listed_before).expect("items");
        assert_eq!(
            (read[0].id.to_string(), read[0].stored, read[0].sha256),
            ("att_1".to_owned(), false, None),
            "a row written before attachments were kept"
        );
        assert!(headers_from_column(&json!([["only-a-name"]])).is_err());
    }
}
