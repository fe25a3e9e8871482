//! `WebhookDeliveryLog`: an endpoint's attempts as its agent or an operator reads them, and
//! replays of its events.

use std::time::Duration;

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text, Uuid as SqlUuid};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::RunQueryDsl;
use domain::{
    AgentId, CursorPosition, EventId, EventType, RateDecision, RateLimit, WebhookAttemptRecord,
    WebhookDeliveryId, WebhookEndpointId,
};
use ports::{Replayed, RequestKey, StoreError, WebhookDeliveryLog};
use time::OffsetDateTime;
use uuid::Uuid;

use super::{endpoint_of, notify_deliveries, turn_comes, PgWebhookStore};
use crate::errors::{corrupt, from_diesel, TxError};
use crate::idempotent_requests::{admit, remember, KeyedError, Operation, Refused};
use crate::limits::take_locked;
use crate::schema::webhook_attempts;

/// The bucket an agent's replays of one endpoint take from (`rate_limit_buckets`, by endpoint).
const REPLAY_ACTION: &str = "webhook_replay";

#[derive(Queryable, Selectable)]
#[diesel(table_name = webhook_attempts, check_for_backend(diesel::pg::Pg))]
struct AttemptRow {
    id: Uuid,
    delivery_id: Uuid,
    event_id: Uuid,
    event_type: String,
    attempt: i32,
    status_code: Option<i32>,
    error: Option<String>,
    duration_ms: i32,
    attempted_at: OffsetDateTime,
}

impl AttemptRow {
    fn into_record(self) -> Result<WebhookAttemptRecord, StoreError> {
        Ok(WebhookAttemptRecord {
            attempt_id: self.id,
            delivery_id: WebhookDeliveryId(self.delivery_id),
            event_id: EventId(self.event_id),
            event_type: EventType::parse(&self.event_type)
                .ok_or_else(|| corrupt(format!("attempt event type {:?}", self.event_type)))?,
            attempt: u32::try_from(self.attempt).unwrap_or_default(),
            status_code: self.status_code.and_then(|code| u16::try_from(code).ok()),
            error: self.error,
            duration: Duration::from_millis(u64::try_from(self.duration_ms).unwrap_or_default()),
            attempted_at: self.attempted_at,
        })
    }
}

#[async_trait]
impl WebhookDeliveryLog for PgWebhookStore {
    #[tracing::instrument(level = "debug", skip(self))]
    async fn attempts(
        &self,
        agent: AgentId,
        id: WebhookEndpointId,
        after: Option<CursorPosition>,
        limit: usize,
    ) -> Result<Option<Vec<WebhookAttemptRecord>>, StoreError> {
        let mut connection = self.database.connection().await?;
        if endpoint_of(&mut connection, agent, id).await?.is_none() {
            return Ok(None);
        }
        let mut query = webhook_attempts::table
            .filter(webhook_attempts::endpoint_id.eq(id.0))
            .order((
                webhook_attempts::attempted_at.desc(),
                webhook_attempts::id.desc(),
            ))
            .limit(i64::try_from(limit).unwrap_or(i64::MAX))
            .select(AttemptRow::as_select())
            .into_boxed();
        if let Some(position) = &after {
            query = query.filter(crate::keyset::before(
                webhook_attempts::attempted_at,
                webhook_attempts::id,
                position,
            )?);
        }
        let rows = query
            .load::<AttemptRow>(&mut connection)
            .await
            .map_err(from_diesel)?;
        rows.into_iter()
            .map(AttemptRow::into_record)
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn replay(
        &self,
        agent: AgentId,
        id: WebhookEndpointId,
        after: u64,
        rate: Option<RateLimit>,
        keyed: Option<RequestKey>,
    ) -> Result<Option<Replayed>, StoreError> {
        self.database
            .in_transaction(|connection| {
                async move {
                    if endpoint_of(connection, agent, id)
                        .await
                        .map_err(TxError::store)?
                        .is_none()
                    {
                        return Ok(None);
                    }
                    // The key before the rate: a retry of a replay made is answered, and free.
                    let operation = Operation::WebhookReplay;
                    match admit::<KeyedError>(connection, agent, keyed.as_ref(), operation).await {
                        Ok(None) => {}
                        Ok(Some(first)) => {
                            let queued = first
                                .get("queued")
                                .and_then(serde_json::Value::as_u64)
                                .and_then(|queued| usize::try_from(queued).ok())
                                .ok_or_else(|| {
                                    TxError::store(corrupt("a kept replay answer has no count"))
                                })?;
                            return Ok(Some(Replayed::Again(queued)));
                        }
                        Err(TxError::Abort(KeyedError::Refused(Refused::InFlight))) => {
                            return Ok(Some(Replayed::KeyInFlight));
                        }
                        Err(TxError::Abort(KeyedError::Refused(Refused::Reused))) => {
                            return Ok(Some(Replayed::KeyReused));
                        }
                        Err(TxError::Abort(KeyedError::Store(error))) => {
                            return Err(TxError::store(error));
                        }
                        Err(TxError::Diesel(error)) => return Err(TxError::Diesel(error)),
                    }
                    if let Some(rate) = rate {
                        if let RateDecision::Limited { retry_after } =
                            take_locked(connection, id.0, REPLAY_ACTION, rate).await?
                        {
                            return Ok(Some(Replayed::Limited { retry_after }));
                        }
                    }
                    // One replay of the endpoint at a time (the operator's take no bucket), so
                    // two cannot both find an event without a waiting delivery and queue it.
                    diesel::sql_query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))")
                        .bind::<Text, _>(format!("webhook_replay:{id}"))
                        .execute(connection)
                        .await?;
                    let after = i64::try_from(after).unwrap_or(i64::MAX);
                    // A delivery waiting for its next attempt is due now; one under way (its
                    // lease in force) may be settled a moment later, as delivered, so its event
                    // is queued anew below like any other.
                    let brought_forward = diesel::sql_query(
                        "UPDATE webhook_deliveries SET next_attempt_at = now() \
                         WHERE id IN (SELECT id FROM webhook_deliveries \
                             WHERE endpoint_id = $1 AND agent_id = $2 AND event_seq > $3 \
                               AND status = 'pending' AND next_attempt_at > now() \
                               AND (lease_until IS NULL OR lease_until < now()) \
                             ORDER BY id FOR UPDATE)",
                    )
                    .bind::<SqlUuid, _>(id.0)
                    .bind::<SqlUuid, _>(agent.0)
                    .bind::<BigInt, _>(after)
                    .execute(connection)
                    .await?;
                    let queued = diesel::sql_query(
                        "INSERT INTO webhook_deliveries \
                             (id, endpoint_id, agent_id, event_seq, next_attempt_at, created_at) \
                         SELECT gen_random_uuid(), endpoint.id, event.agent_id, event.seq, \
                             clock_timestamp(), clock_timestamp() \
                         FROM events AS event JOIN webhook_endpoints AS endpoint \
                             ON endpoint.id = $1 AND endpoint.agent_id = event.agent_id \
                         WHERE event.agent_id = $2 AND event.seq > $3 \
                           AND (endpoint.types IS NULL OR event.type = ANY (endpoint.types)) \
                           AND NOT EXISTS (SELECT 1 FROM webhook_deliveries AS waiting \
                               WHERE waiting.agent_id = event.agent_id \
                                 AND waiting.event_seq = event.seq \
                                 AND waiting.endpoint_id = endpoint.id \
                                 AND waiting.status = 'pending' \
                                 AND (waiting.lease_until IS NULL \
                                      OR waiting.lease_until < now()))",
                    )
                    .bind::<SqlUuid, _>(id.0)
                    .bind::<SqlUuid, _>(agent.0)
                    .bind::<BigInt, _>(after)
                    .execute(connection)
                    .await?;
                    let due = brought_forward + queued;
                    if due > 0 {
                        turn_comes(connection, agent.0, None).await?;
                        notify_deliveries().execute(connection).await?;
                    }
                    if let Some(keyed) = &keyed {
                        let answer = serde_json::json!({ "queued": due });
                        remember(connection, agent, keyed, operation, &answer).await?;
                    }
                    Ok(Some(Replayed::Queued(due)))
                }
                .scope_boxed()
            })
            .await
    }
}
