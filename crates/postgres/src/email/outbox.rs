//! `EmailOutbox`: accepting a send is one transaction that replays an idempotency key, takes from
//! the sponsor's bucket and stores the message `queued`; anything refused rolls back whole.

use async_trait::async_trait;
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Interval, Text, Uuid as SqlUuid};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{Direction, EmailMessageId, EmailStatus, RateDecision};
use ports::{AcceptError, Acceptance, EmailOutbox, NewOutboundEmail, SendThrottle};

use super::{
    address_texts, headers_column, message_record, MessageRow, MessageWithBodies, PgEmailStore,
};
use crate::clock::interval;
use crate::errors::TxError;
use crate::limits::take_locked;
use crate::schema::email_messages;

/// The bucket action of the sponsor-wide email send rate.
const SEND_ACTION: &str = "email_send";

#[derive(QueryableByName)]
struct Granted {
    #[diesel(sql_type = Bool)]
    granted: bool,
}

/// A message under the same key: its row and bodies, the fingerprint of its request, and whether
/// the key is still live.
type EarlierRow = (
    MessageRow,
    Option<String>,
    Option<String>,
    Option<Vec<u8>>,
    bool,
);

/// The earlier message of the same live key, or the refusal of the key; `None` when the key is
/// new (or outlived its window, and is then taken off the old message).
async fn replay(
    connection: &mut AsyncPgConnection,
    message: &NewOutboundEmail,
) -> Result<Option<Acceptance>, TxError<AcceptError>> {
    let Some(idempotency) = &message.idempotency else {
        return Ok(None);
    };
    let granted: Granted = diesel::sql_query(
        "SELECT pg_try_advisory_xact_lock(hashtextextended($1::text || ':email:' || $2, 0)) \
         AS granted",
    )
    .bind::<SqlUuid, _>(message.agent_id.0)
    .bind::<Text, _>(idempotency.key.as_str())
    .get_result(connection)
    .await?;
    if !granted.granted {
        return Err(TxError::Abort(AcceptError::KeyInFlight));
    }
    let key_live = sql::<Bool>("email_messages.created_at > now() - ")
        .bind::<Interval, _>(interval(idempotency.ttl));
    let earlier = email_messages::table
        .filter(email_messages::agent_id.eq(message.agent_id.0))
        .filter(email_messages::idempotency_key.eq(idempotency.key.as_str()))
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
    match earlier {
        None => Ok(None),
        Some((row, text, html, fingerprint, true)) => {
            let earlier = message_record((row, text, html)).map_err(TxError::store)?;
            if fingerprint.as_deref() == Some(idempotency.fingerprint.as_slice()) {
                Ok(Some(Acceptance::Replayed(earlier)))
            } else {
                Err(TxError::Abort(AcceptError::IdempotencyMismatch {
                    original: earlier.id,
                }))
            }
        }
        Some((row, _, _, _, false)) => {
            diesel::update(email_messages::table.find(row.id))
                .set((
                    email_messages::idempotency_key.eq(None::<String>),
                    email_messages::request_fingerprint.eq(None::<Vec<u8>>),
                ))
                .execute(connection)
                .await?;
            Ok(None)
        }
    }
}

async fn accept_locked(
    connection: &mut AsyncPgConnection,
    message: &NewOutboundEmail,
    throttle: SendThrottle,
) -> Result<Acceptance, TxError<AcceptError>> {
    if let Some(replayed) = replay(connection, message).await? {
        return Ok(replayed);
    }
    // The agent's bucket first, then its sponsor's: every send locks them in that order, so no
    // two wait on each other. A refusal rolls back what was taken.
    for (subject, limit) in [
        (message.agent_id.0, throttle.agent_limit),
        (throttle.sponsor.0, throttle.sponsor_limit),
    ] {
        let decision = take_locked(connection, subject, SEND_ACTION, limit).await?;
        if let RateDecision::Limited { retry_after } = decision {
            return Err(TxError::Abort(AcceptError::Throttled { retry_after }));
        }
    }
    let EmailMessageId(id) = message.id;
    let idempotency = message.idempotency.as_ref();
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
