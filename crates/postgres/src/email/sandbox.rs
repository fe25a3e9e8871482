//! The sandbox email provider: takes every message handed to it and keeps it in its own table,
//! where `agentctl sandbox outbox` reads it. It never delivers anywhere, so `make run` needs no
//! mail server; a hand-off made twice is kept twice, so a test can tell.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use domain::AttachmentMeta;
use ports::{Delivery, DeliveryError, EmailSender, OutboundEmail, StoreError};
use time::OffsetDateTime;
use uuid::Uuid;

use super::{
    address_texts, attachments_column, attachments_from_column, headers_column, headers_from_column,
};
use crate::database::Database;
use crate::errors::from_diesel;
use crate::rows::row_limit;
use crate::schema::sandbox_email_outbox;

pub struct PgSandboxMailer {
    database: Database,
}

impl PgSandboxMailer {
    pub fn new(database: Database) -> Self {
        Self { database }
    }

    /// What the sandbox provider received, newest first; only mail to `to` (in To, Cc or Bcc)
    /// when given.
    pub async fn outbox(
        &self,
        to: Option<&str>,
        limit: usize,
    ) -> Result<Vec<SandboxMail>, StoreError> {
        let mut connection = self.database.connection().await?;
        let mut query = sandbox_email_outbox::table
            .select(SandboxMailRow::as_select())
            .order((
                sandbox_email_outbox::created_at.desc(),
                sandbox_email_outbox::provider_message_id.desc(),
            ))
            .limit(row_limit(limit))
            .into_boxed();
        if let Some(to) = to {
            let to = to.to_owned();
            query = query.filter(
                sandbox_email_outbox::to_addresses
                    .contains(vec![to.clone()])
                    .or(sandbox_email_outbox::cc_addresses.contains(vec![to.clone()]))
                    .or(sandbox_email_outbox::bcc_addresses.contains(vec![to])),
            );
        }
        let rows: Vec<SandboxMailRow> = query.load(&mut connection).await.map_err(from_diesel)?;
        rows.into_iter().map(SandboxMailRow::into_mail).collect()
    }
}

/// A message as the sandbox provider received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxMail {
    pub provider_message_id: Uuid,
    /// The service's id of the message.
    pub message_id: Uuid,
    pub internet_message_id: String,
    pub from: String,
    pub to: Vec<String>,
    pub cc: Vec<String>,
    pub bcc: Vec<String>,
    pub subject: String,
    pub text: String,
    pub in_reply_to: Option<String>,
    pub references: Vec<String>,
    pub headers: Vec<(String, String)>,
    /// What was attached (the bytes stay with the message).
    pub attachments: Vec<AttachmentMeta>,
    pub received_at: OffsetDateTime,
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = sandbox_email_outbox, check_for_backend(diesel::pg::Pg))]
struct SandboxMailRow {
    provider_message_id: Uuid,
    message_id: Uuid,
    internet_message_id: String,
    from_address: String,
    to_addresses: Vec<String>,
    cc_addresses: Vec<String>,
    bcc_addresses: Vec<String>,
    subject: String,
    body_text: String,
    in_reply_to: Option<String>,
    reference_ids: Vec<String>,
    headers: serde_json::Value,
    created_at: OffsetDateTime,
    attachments: serde_json::Value,
}

impl SandboxMailRow {
    fn into_mail(self) -> Result<SandboxMail, StoreError> {
        Ok(SandboxMail {
            provider_message_id: self.provider_message_id,
            message_id: self.message_id,
            internet_message_id: self.internet_message_id,
            from: self.from_address,
            to: self.to_addresses,
            cc: self.cc_addresses,
            bcc: self.bcc_addresses,
            subject: self.subject,
            text: self.body_text,
            in_reply_to: self.in_reply_to,
            references: self.reference_ids,
            headers: headers_from_column(&self.headers)?,
            attachments: attachments_from_column(&self.attachments)?,
            received_at: self.created_at,
        })
    }
}

#[async_trait]
impl EmailSender for PgSandboxMailer {
    fn provider(&self) -> &'static str {
        "sandbox"
    }

    async fn send(&self, email: &OutboundEmail) -> Result<Delivery, DeliveryError> {
        let unavailable = |error: StoreError| DeliveryError::transient(error.to_string());
        let mut connection = self.database.connection().await.map_err(unavailable)?;
        let provider_message_id = Uuid::now_v7();
        let metas: Vec<AttachmentMeta> = email.attachments.iter().map(|a| a.meta.clone()).collect();
        diesel::insert_into(sandbox_email_outbox::table)
            .values((
                sandbox_email_outbox::provider_message_id.eq(provider_message_id),
                sandbox_email_outbox::message_id.eq(email.message_id.0),
                sandbox_email_outbox::internet_message_id.eq(&email.internet_message_id),
                sandbox_email_outbox::from_address.eq(email.from.as_str()),
                sandbox_email_outbox::to_addresses.eq(address_texts(&email.to)),
                sandbox_email_outbox::cc_addresses.eq(address_texts(&email.cc)),
                sandbox_email_outbox::bcc_addresses.eq(address_texts(&email.bcc)),
                sandbox_email_outbox::subject.eq(&email.subject),
                sandbox_email_outbox::body_text.eq(&email.text),
                sandbox_email_outbox::in_reply_to.eq(email.in_reply_to.as_deref()),
                sandbox_email_outbox::reference_ids.eq(&email.references),
                sandbox_email_outbox::headers.eq(headers_column(&email.headers)),
                sandbox_email_outbox::attachments.eq(attachments_column(&metas)),
            ))
            .execute(&mut connection)
            .await
            .map_err(|error| unavailable(from_diesel(error)))?;
        Ok(Delivery {
            provider_message_id: provider_message_id.to_string(),
        })
    }
}
