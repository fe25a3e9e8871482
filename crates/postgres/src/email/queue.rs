//! The outbox's `LeasedQueue`: workers on any instance lease due messages with `SKIP LOCKED`, one at a time,
//! and record the outcome only while their lease holds.

use std::convert::Infallible;
use std::time::Duration;

use async_trait::async_trait;
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Double, Interval, Nullable, Timestamptz};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{EmailAddress, EmailMessageId, EmailStatus, LeaseId};
use ports::{
    AttachmentBytes, ClaimedEmail, Delivery, JobOutcome, LeasedQueue, OutboundEmail, StoreError,
};
use uuid::Uuid;

use super::{attachments_from_column, headers_from_column, PgEmailStore};
use crate::clock::{duration_from_secs, interval, seconds_since};
use crate::errors::{corrupt, from_diesel, TxError};
use crate::schema::email_messages;

/// What a hand-off needs of a queued message.
#[derive(Queryable, Selectable)]
#[diesel(table_name = email_messages, check_for_backend(diesel::pg::Pg))]
struct QueuedRow {
    id: Uuid,
    internet_message_id: Option<String>,
    in_reply_to: Option<String>,
    reference_ids: Vec<String>,
    subject: Option<String>,
    from_address: Option<String>,
    to_addresses: Vec<String>,
    cc_addresses: Vec<String>,
    bcc_addresses: Vec<String>,
    body_text: Option<String>,
    headers: serde_json::Value,
    attachments: serde_json::Value,
    attempts: i32,
}

fn parsed_addresses(stored: &[String]) -> Result<Vec<EmailAddress>, StoreError> {
    stored
        .iter()
        .map(|address| {
            EmailAddress::parse(address)
                .map_err(|error| corrupt(format!("queued address {address:?}: {error}")))
        })
        .collect()
}

fn outbound(row: QueuedRow) -> Result<OutboundEmail, StoreError> {
    let from = row
        .from_address
        .as_deref()
        .ok_or_else(|| corrupt("a queued message has no sender"))?;
    Ok(OutboundEmail {
        message_id: EmailMessageId(row.id),
        from: parsed_addresses(&[from.to_owned()])?.remove(0),
        to: parsed_addresses(&row.to_addresses)?,
        cc: parsed_addresses(&row.cc_addresses)?,
        bcc: parsed_addresses(&row.bcc_addresses)?,
        subject: row.subject.unwrap_or_default(),
        text: row.body_text.unwrap_or_default(),
        headers: headers_from_column(&row.headers)?,
        internet_message_id: row
            .internet_message_id
            .ok_or_else(|| corrupt("a queued message has no Message-ID"))?,
        in_reply_to: row.in_reply_to,
        references: row.reference_ids,
        // Their bytes are read apart, through `AttachmentContent`, for the hand-off alone.
        attachments: attachments_from_column(&row.attachments)?
            .into_iter()
            .map(|meta| AttachmentBytes {
                meta,
                content: None,
            })
            .collect(),
    })
}

async fn claim_locked(
    connection: &mut AsyncPgConnection,
    lease: LeaseId,
    lease_for: Duration,
) -> Result<Option<ClaimedEmail>, TxError<StoreError>> {
    let due = email_messages::table
        .filter(email_messages::status.eq(EmailStatus::Queued.as_str()))
        .filter(sql::<Bool>("email_messages.next_attempt_at <= now()"))
        .filter(sql::<Bool>(
            "(email_messages.lease_until IS NULL OR email_messages.lease_until < now())",
        ))
        .order((email_messages::next_attempt_at, email_messages::id))
        .select(email_messages::id)
        .for_update()
        .skip_locked()
        .first::<Uuid>(connection)
        .await
        .optional()?;
    let Some(id) = due else {
        return Ok(None);
    };
    let (row, age) = diesel::update(email_messages::table.find(id))
        .set((
            email_messages::lease_id.eq(lease.0),
            email_messages::lease_until
                .eq(sql::<Nullable<Timestamptz>>("now() + ")
                    .bind::<Interval, _>(interval(lease_for))),
            email_messages::attempts.eq(email_messages::attempts + 1),
        ))
        .returning((
            QueuedRow::as_returning(),
            seconds_since::<Double>("email_messages.created_at"),
        ))
        .get_result::<(QueuedRow, f64)>(connection)
        .await?;
    let attempts = u32::try_from(row.attempts).unwrap_or_default();
    Ok(Some(ClaimedEmail {
        job: outbound(row).map_err(TxError::store)?,
        lease,
        attempts,
        age: duration_from_secs(age),
    }))
}

/// The message still queued and leased by `lease`, the filter every record goes through.
macro_rules! held {
    ($id:expr, $lease:expr) => {
        email_messages::table
            .find($id.0)
            .filter(email_messages::status.eq(EmailStatus::Queued.as_str()))
            .filter(email_messages::lease_id.eq($lease.0))
    };
}

#[async_trait]
impl LeasedQueue<OutboundEmail> for PgEmailStore {
    #[tracing::instrument(level = "debug", skip(self))]
    async fn claim_due(
        &self,
        lease: LeaseId,
        lease_for: Duration,
        // Empty: messages have no owner (`OutboundEmail::Owner` has no value).
        _full: &[Infallible],
    ) -> Result<Option<ClaimedEmail>, StoreError> {
        self.database
            .in_transaction(|connection| {
                async move { claim_locked(connection, lease, lease_for).await }.scope_boxed()
            })
            .await
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn release(&self, lease: LeaseId) -> Result<(), StoreError> {
        let mut connection = self.database.connection().await?;
        diesel::update(
            email_messages::table
                .filter(email_messages::lease_id.eq(lease.0))
                .filter(email_messages::status.eq(EmailStatus::Queued.as_str())),
        )
        .set((
            email_messages::lease_id.eq(None::<Uuid>),
            email_messages::lease_until.eq(None::<time::OffsetDateTime>),
        ))
        .execute(&mut connection)
        .await
        .map_err(from_diesel)?;
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn record(
        &self,
        id: EmailMessageId,
        lease: LeaseId,
        outcome: &JobOutcome<Delivery>,
    ) -> Result<bool, StoreError> {
        let mut connection = self.database.connection().await?;
        let no_lease = (
            email_messages::lease_id.eq(None::<Uuid>),
            email_messages::lease_until.eq(None::<time::OffsetDateTime>),
        );
        let updated = match outcome {
            JobOutcome::Done(delivery) => {
                diesel::update(held!(id, lease))
                    .set((
                        email_messages::status.eq(EmailStatus::Sent.as_str()),
                        email_messages::provider_message_id.eq(&delivery.provider_message_id),
                        email_messages::last_error.eq(None::<String>),
                        email_messages::next_attempt_at.eq(None::<time::OffsetDateTime>),
                        no_lease,
                    ))
                    .execute(&mut connection)
                    .await
            }
            JobOutcome::Retry { error, wait } => {
                diesel::update(held!(id, lease))
                    .set((
                        email_messages::last_error.eq(error),
                        email_messages::next_attempt_at
                            .eq(sql::<Nullable<Timestamptz>>("now() + ")
                                .bind::<Interval, _>(interval(*wait))),
                        no_lease,
                    ))
                    .execute(&mut connection)
                    .await
            }
            JobOutcome::Failed(reason) => {
                diesel::update(held!(id, lease))
                    .set((
                        email_messages::status.eq(EmailStatus::Failed.as_str()),
                        email_messages::last_error.eq(reason),
                        email_messages::next_attempt_at.eq(None::<time::OffsetDateTime>),
                        no_lease,
                    ))
                    .execute(&mut connection)
                    .await
            }
        }
        .map_err(from_diesel)?;
        Ok(updated == 1)
    }

    async fn oldest_due_wait(&self) -> Result<Option<Duration>, StoreError> {
        let mut connection = self.database.connection().await?;
        let wait = email_messages::table
            .filter(email_messages::status.eq(EmailStatus::Queued.as_str()))
            .filter(sql::<Bool>("email_messages.next_attempt_at <= now()"))
            .select(seconds_since::<Nullable<Double>>(
                "min(email_messages.next_attempt_at)",
            ))
            .first::<Option<f64>>(&mut connection)
            .await
            .map_err(from_diesel)?;
        Ok(wait.map(duration_from_secs))
    }
}
