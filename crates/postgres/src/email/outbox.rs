//! `EmailOutbox`: accepting a send is one transaction that passes the idempotency key and the
//! agent's and sponsor's buckets as every keyed write does (`idempotency::admit`) and stores the
//! message `queued`; anything refused rolls back whole.

use std::time::Duration;

use async_trait::async_trait;
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Interval};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{AttachmentMeta, Direction, EmailMessageId, EmailMessageRecord, EmailStatus};
use ports::{AcceptError, Acceptance, EmailOutbox, NewOutboundEmail, SendThrottle, StoreError};

use super::attachments::keep_bytes;
use super::{
    address_texts, attachments_column, headers_column, message_record, MessageRow,
    MessageWithBodies, PgEmailStore,
};
use crate::clock::interval;
use crate::errors::TxError;
use crate::idempotency::{admit, Bucket, Earlier, IdempotencyKey, KeyHolders};
use crate::schema::{email_message_facts, email_messages};

/// The bucket action of the sponsor-wide email send rate.
const SEND_ACTION: &str = "email_send";

/// A message under the same key: its row and bodies, the fingerprint of its request, and whether
/// the key is still live.
type EarlierRow = (
    MessageRow,
    Option<String>,
    Option<String>,
    Option<Vec<u8>>,
    bool,
);

/// The messages that took an agent's idempotency key, judged against one send by the fingerprint
/// of its request.
struct MessagesUnderKey<'a>(&'a NewOutboundEmail);

#[async_trait]
impl KeyHolders for MessagesUnderKey<'_> {
    type Row = EmailMessageRecord;
    type Id = EmailMessageId;

    async fn earlier(
        &self,
        connection: &mut AsyncPgConnection,
        key: &str,
        ttl: Duration,
    ) -> Result<Option<Earlier<EmailMessageRecord, EmailMessageId>>, TxError<StoreError>> {
        let key_live =
            sql::<Bool>("email_messages.created_at > now() - ").bind::<Interval, _>(interval(ttl));
        let earlier = email_messages::table
            .filter(email_messages::agent_id.eq(self.0.agent_id.0))
            .filter(email_messages::idempotency_key.eq(key))
            .select((
                MessageRow::as_select(),
                email_messages::body_text,
                email_messages::body_html,
                email_messages::request_fingerprint,
                key_live,
            ))
            .first::<EarlierRow>(connection)
            .await
            .optional()?;
        let Some((row, text, html, fingerprint, live)) = earlier else {
            return Ok(None);
        };
        let row = message_record((row, text, html)).map_err(TxError::Abort)?;
        let fingerprint_now = self
            .0
            .idempotency
            .as_ref()
            .map(|i| i.fingerprint.as_slice());
        Ok(Some(Earlier {
            id: row.id,
            repeated: fingerprint.as_deref() == fingerprint_now,
            live,
            row,
        }))
    }

    async fn release(
        &self,
        connection: &mut AsyncPgConnection,
        id: &EmailMessageId,
    ) -> Result<(), diesel::result::Error> {
        diesel::update(email_messages::table.find(id.0))
            .set((
                email_messages::idempotency_key.eq(None::<String>),
                email_messages::request_fingerprint.eq(None::<Vec<u8>>),
            ))
            .execute(connection)
            .await
            .map(drop)
    }
}

async fn accept_locked(
    connection: &mut AsyncPgConnection,
    message: &NewOutboundEmail,
    throttle: SendThrottle,
) -> Result<Acceptance, TxError<AcceptError>> {
    let key = message
        .idempotency
        .as_ref()
        .map(|idempotency| IdempotencyKey {
            owner: message.agent_id.0,
            namespace: ":email:",
            key: idempotency.key.as_str(),
            ttl: idempotency.ttl,
        });
    // The agent's bucket first, then its sponsor's: every send names them in that order, so no
    // two wait on each other. A refusal rolls back what was taken.
    let buckets = [
        Bucket {
            subject: message.agent_id.0,
            action: SEND_ACTION,
            limit: throttle.agent_limit,
        },
        Bucket {
            subject: throttle.sponsor.0,
            action: SEND_ACTION,
            limit: throttle.sponsor_limit,
        },
    ];
    let holders = MessagesUnderKey(message);
    if let Some(earlier) = admit(connection, key, &holders, &buckets).await? {
        return Ok(Acceptance::Replayed(earlier));
    }
    let EmailMessageId(id) = message.id;
    let idempotency = message.idempotency.as_ref();
    let metas: Vec<AttachmentMeta> = message
        .attachments
        .iter()
        .map(|attachment| attachment.meta.clone())
        .collect();
    let row = diesel::insert_into(email_messages::table)
        .values((
            email_messages::id.eq(id),
            email_messages::agent_id.eq(message.agent_id.0),
            email_messages::inbox_id.eq(message.inbox_id.0),
            email_messages::direction.eq(Direction::Outbound.as_str()),
            email_messages::status.eq(EmailStatus::Queued.as_str()),
            email_messages::thread_id.eq(message.thread_id.0),
            email_messages::internet_message_id.eq(&message.internet_message_id),
            email_messages::in_reply_to.eq(message.in_reply_to.as_deref()),
            email_messages::reference_ids.eq(&message.references),
            email_messages::subject.eq(&message.subject),
            email_messages::from_address.eq(message.from.as_str()),
            email_messages::to_addresses.eq(address_texts(&message.to)),
            email_messages::cc_addresses.eq(address_texts(&message.cc)),
            email_messages::bcc_addresses.eq(address_texts(&message.bcc)),
            email_messages::body_text.eq(&message.text),
            email_messages::headers.eq(headers_column(&message.headers)),
            email_messages::attachments.eq(attachments_column(&metas)),
            email_messages::idempotency_key.eq(idempotency.map(|i| i.key.as_str())),
            email_messages::request_fingerprint.eq(idempotency.map(|i| i.fingerprint.to_vec())),
            email_messages::sent_at.eq(diesel::dsl::now),
            email_messages::next_attempt_at.eq(diesel::dsl::now),
        ))
        .returning((
            MessageRow::as_returning(),
            email_messages::body_text,
            email_messages::body_html,
        ))
        .get_result::<MessageWithBodies>(connection)
        .await?;
    // Past the 32 columns `email_messages` declares (migration 000036).
    if let Some(key) = message.key_id {
        diesel::update(email_message_facts::table.find(id))
            .set(email_message_facts::key_id.eq(key.0))
            .execute(connection)
            .await?;
    }
    keep_bytes(
        connection,
        message.agent_id,
        message.id,
        &message.attachments,
    )
    .await?;
    Ok(Acceptance::Accepted(
        message_record(row).map_err(TxError::store)?,
    ))
}

#[async_trait]
impl EmailOutbox for PgEmailStore {
    #[tracing::instrument(level = "debug", skip_all, fields(agent_id = %message.agent_id, message_id = %message.id))]
    async fn accept(
        &self,
        message: NewOutboundEmail,
        throttle: SendThrottle,
    ) -> Result<Acceptance, AcceptError> {
        self.database
            .in_transaction(|connection| {
                async move { accept_locked(connection, &message, throttle).await }.scope_boxed()
            })
            .await
    }
}
