//! `InboundMailStore`: routing by address, and storing a message once per inbox however often the
//! provider delivers it.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::Text;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{
    AgentId, AttachmentMeta, Direction, EmailAddress, EmailInboxId, EmailInboxRecord,
    EmailMessageId, EmailMessageRecord, EmailStatus,
};
use ports::{InboundMailStore, NewInboundEmail, StoreError};
use uuid::Uuid;

use super::attachments::keep_bytes;
use super::{
    attachments_column, authentication_columns, headers_column, message_record, MessageRow,
    MessageWithBodies, PgEmailStore,
};
use crate::errors::{from_diesel, TxError};
use crate::rows::EmailInboxRow;
use crate::schema::{email_inboxes, email_message_facts, email_messages};

diesel::define_sql_function!(fn lower(text: Text) -> Text);

/// The stored message of the inbox with this provider id.
async fn stored(
    connection: &mut AsyncPgConnection,
    message: &NewInboundEmail,
) -> Result<Option<EmailMessageRecord>, TxError<StoreError>> {
    let row = email_messages::table
        .filter(email_messages::inbox_id.eq(message.inbox_id.0))
        .filter(email_messages::direction.eq(Direction::Inbound.as_str()))
        .filter(email_messages::provider_message_id.eq(&message.provider_message_id))
        .select((
            MessageRow::as_select(),
            email_messages::body_text,
            email_messages::body_html,
        ))
        .first::<MessageWithBodies>(connection)
        .await
        .optional()?;
    row.map(message_record).transpose().map_err(TxError::store)
}

/// The thread of the message this one answers: its In-Reply-To first, then its References from
/// the nearest back; a thread of its own when the inbox holds none of them.
async fn thread_of(
    connection: &mut AsyncPgConnection,
    message: &NewInboundEmail,
) -> Result<EmailMessageId, TxError<StoreError>> {
    let email = &message.email;
    let answered: Vec<&String> = email
        .in_reply_to
        .iter()
        .chain(email.references.iter().rev())
        .collect();
    if answered.is_empty() {
        return Ok(message.id);
    }
    let known: Vec<(Option<String>, Uuid)> = email_messages::table
        .filter(email_messages::inbox_id.eq(message.inbox_id.0))
        .filter(email_messages::internet_message_id.eq_any(&answered))
        .select((
            email_messages::internet_message_id,
            email_messages::thread_id,
        ))
        .load(connection)
        .await?;
    let thread = answered.iter().find_map(|id| {
        known
            .iter()
            .find(|(known_id, _)| known_id.as_ref() == Some(*id))
            .map(|(_, thread)| EmailMessageId(*thread))
    });
    Ok(thread.unwrap_or(message.id))
}

async fn store_locked(
    connection: &mut AsyncPgConnection,
    message: &NewInboundEmail,
) -> Result<(EmailMessageRecord, bool), TxError<StoreError>> {
    if let Some(earlier) = stored(connection, message).await? {
        return Ok((earlier, false));
    }
    let thread = thread_of(connection, message).await?;
    let email = &message.email;
    let metas: Vec<AttachmentMeta> = email.attachments.iter().map(|a| a.meta.clone()).collect();
    let inserted = diesel::insert_into(email_messages::table)
        .values((
            email_messages::id.eq(message.id.0),
            email_messages::agent_id.eq(message.agent_id.0),
            email_messages::inbox_id.eq(message.inbox_id.0),
            email_messages::direction.eq(Direction::Inbound.as_str()),
            email_messages::status.eq(EmailStatus::Received.as_str()),
            email_messages::thread_id.eq(thread.0),
            email_messages::provider_message_id.eq(&message.provider_message_id),
            email_messages::internet_message_id.eq(email.internet_message_id.as_deref()),
            email_messages::in_reply_to.eq(email.in_reply_to.as_deref()),
            email_messages::reference_ids.eq(&email.references),
            email_messages::subject.eq(email.subject.as_deref()),
            email_messages::from_address.eq(email.from.as_deref()),
            email_messages::to_addresses.eq(&email.to),
            email_messages::cc_addresses.eq(&email.cc),
            email_messages::reply_to_addresses.eq(&email.reply_to),
            email_messages::body_text.eq(email.text.as_deref()),
            email_messages::body_html.eq(email.html.as_deref()),
            email_messages::attachments.eq(attachments_column(&metas)),
            email_messages::headers.eq(headers_column(&email.headers)),
            email_messages::verification_codes.eq(&message.verification_codes),
            email_messages::received_at.eq(diesel::dsl::now),
        ))
        // A concurrent delivery of the same message may have won the unique index meanwhile.
        .on_conflict_do_nothing()
        .returning((
            MessageRow::as_returning(),
            email_messages::body_text,
            email_messages::body_html,
        ))
        .get_result::<MessageWithBodies>(connection)
        .await
        .optional()?;
    match inserted {
        Some(row) => {
            let (kind, domain) = authentication_columns(&email.sender_authentication);
            diesel::update(email_message_facts::table.find(message.id.0))
                .set((
                    email_message_facts::sender_authentication.eq(kind),
                    email_message_facts::authenticated_domain.eq(domain),
                    email_message_facts::service_name.eq(message.service_name.as_deref()),
                ))
                .execute(connection)
                .await?;
            // Waits for a code of the agent wake on every instance when this commits, by the
            // notification of its `email.received` event.
            keep_bytes(connection, message.agent_id, message.id, &email.attachments).await?;
            let mut record = message_record(row).map_err(TxError::store)?;
            // Written after the row it returned.
            record.sender_authentication = email.sender_authentication.clone();
            record.service_name = message.service_name.clone();
            Ok((record, true))
        }
        None => stored(connection, message)
            .await?
            .map(|earlier| (earlier, false))
            .ok_or_else(|| {
                TxError::store(StoreError::Internal(
                    "an inbound message conflicted with none stored".into(),
                ))
            }),
    }
}

#[async_trait]
impl InboundMailStore for PgEmailStore {
    async fn inboxes_at(
        &self,
        addresses: &[EmailAddress],
    ) -> Result<Vec<(AgentId, EmailInboxRecord)>, StoreError> {
        if addresses.is_empty() {
            return Ok(Vec::new());
        }
        let lowered: Vec<String> = addresses
            .iter()
            .map(|address| address.as_str().to_lowercase())
            .collect();
        let mut connection = self.database.connection().await?;
        let rows: Vec<(Uuid, EmailInboxRow)> = email_inboxes::table
            .filter(lower(email_inboxes::address).eq_any(&lowered))
            .select((email_inboxes::agent_id, EmailInboxRow::as_select()))
            .load(&mut connection)
            .await
            .map_err(from_diesel)?;
        rows.into_iter()
            .map(|(agent, inbox)| Ok((AgentId(agent), inbox.into_record()?)))
            .collect()
    }

    async fn holds_delivery(
        &self,
        inbox: EmailInboxId,
        provider_message_id: &str,
    ) -> Result<bool, StoreError> {
        let mut connection = self.database.connection().await?;
        diesel::select(diesel::dsl::exists(
            email_messages::table
                .filter(email_messages::inbox_id.eq(inbox.0))
                .filter(email_messages::direction.eq(Direction::Inbound.as_str()))
                .filter(email_messages::provider_message_id.eq(provider_message_id)),
        ))
        .get_result(&mut connection)
        .await
        .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", skip_all, fields(inbox_id = %message.inbox_id))]
    async fn store_inbound(
        &self,
        message: NewInboundEmail,
    ) -> Result<(EmailMessageRecord, bool), StoreError> {
        self.database
            .in_transaction(|connection| {
                async move { store_locked(connection, &message).await }.scope_boxed()
            })
            .await
    }
}
