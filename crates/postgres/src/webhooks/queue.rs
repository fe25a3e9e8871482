//! The webhook deliveries' leased queue: claimed round-robin by agent, settled only under the
//! lease, a failing spell disabling its endpoint once it has lasted `DISABLE_FAILING_AFTER`.

use std::time::Duration;

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Integer, Interval, Nullable, Text, Uuid as SqlUuid};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{AgentId, LeaseId, WebhookDeliveryId, WebhookEndpointId, DISABLE_FAILING_AFTER};
use ports::{Claimed, JobOutcome, LeasedQueue, StoreError, WebhookDelivery};
use time::OffsetDateTime;
use uuid::Uuid;

use super::{disable_locked, turn_comes, PgWebhookStore};
use crate::clock::{duration_from_secs, interval};
use crate::errors::from_diesel;
use crate::events::EventRow;
use crate::prepared::Prepared;

#[derive(QueryableByName)]
struct ClaimedRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = SqlUuid)]
    agent_id: Uuid,
    #[diesel(sql_type = SqlUuid)]
    endpoint_id: Uuid,
    #[diesel(sql_type = Integer)]
    attempts: i32,
    #[diesel(sql_type = diesel::sql_types::Double)]
    age: f64,
    #[diesel(sql_type = Text)]
    url: String,
    #[diesel(sql_type = diesel::sql_types::Array<Text>)]
    secrets: Vec<String>,
    #[diesel(sql_type = BigInt)]
    seq: i64,
    #[diesel(sql_type = SqlUuid)]
    event_id: Uuid,
    #[diesel(sql_type = Text)]
    event_type: String,
    #[diesel(sql_type = diesel::sql_types::Jsonb)]
    data: serde_json::Value,
    #[diesel(sql_type = diesel::sql_types::Timestamptz)]
    created_at: OffsetDateTime,
}

/// Leases the next delivery, round-robin by agent (`claim_webhook_delivery`, migration 000030:
/// the agent whose turn is oldest but those in `full`, its oldest due delivery to an enabled
/// endpoint of its key in force), with what its attempt needs (the endpoint's URL and live
/// secrets, newest first, and the event), in one statement: a delivery costs the queue two round
/// trips, its claim and its record. Its age is counted from its first attempt, as the retry
/// schedule is, however late that attempt came (an outage, a backlog).
async fn claim(
    connection: &mut AsyncPgConnection,
    lease: LeaseId,
    lease_for: Duration,
    full: &[AgentId],
) -> Result<Option<Claimed<WebhookDelivery>>, StoreError> {
    let full: Vec<Uuid> = full.iter().map(|agent| agent.0).collect();
    let claimed = Prepared(
        diesel::sql_query(
            "SELECT delivery_id AS id, owner AS agent_id, endpoint AS endpoint_id, attempts, age, \
                 url, secrets, seq, event_id, event_type, data, created_at \
             FROM claim_webhook_delivery($1, $2, $3)",
        )
        .bind::<SqlUuid, _>(lease.0)
        .bind::<Interval, _>(interval(lease_for))
        .bind::<Array<SqlUuid>, _>(full),
    )
    .get_result::<ClaimedRow>(connection)
    .await
    .optional()
    .map_err(from_diesel)?;
    let Some(claimed) = claimed else {
        return Ok(None);
    };
    let event = EventRow {
        seq: claimed.seq,
        id: claimed.event_id,
        event_type: claimed.event_type,
        data: claimed.data,
        created_at: claimed.created_at,
        // A delivery's event is its agent's, which is shown no key id.
        key_id: None,
    }
    .into_record()?;
    let attempts = u32::try_from(claimed.attempts).unwrap_or_default();
    Ok(Some(Claimed {
        job: WebhookDelivery {
            id: WebhookDeliveryId(claimed.id),
            agent: AgentId(claimed.agent_id),
            endpoint: WebhookEndpointId(claimed.endpoint_id),
            url: claimed.url,
            secrets: claimed.secrets,
            event,
            attempt: attempts,
        },
        lease,
        attempts,
        age: duration_from_secs(claimed.age),
    }))
}

/// A failed attempt at the delivery held under `lease`, settled as `status` (`pending` again
/// after `wait`, or `failed`); `false` when the lease passed on. The failure starts or continues
/// the endpoint's failing spell, which disables it once it has lasted `DISABLE_FAILING_AFTER`.
async fn record_failure(
    connection: &mut AsyncPgConnection,
    id: WebhookDeliveryId,
    lease: LeaseId,
    status: &'static str,
    error: &str,
    wait: Option<Duration>,
) -> Result<bool, diesel::result::Error> {
    let settled = Prepared(
        diesel::sql_query(
            "UPDATE webhook_deliveries SET status = $3, last_error = $4, \
             next_attempt_at = coalesce(now() + $5, next_attempt_at), \
             lease_id = NULL, lease_until = NULL \
         WHERE id = $1 AND lease_id = $2 AND status = 'pending' \
         RETURNING endpoint_id, agent_id, next_attempt_at",
        )
        .bind::<SqlUuid, _>(id.0)
        .bind::<SqlUuid, _>(lease.0)
        .bind::<Text, _>(status)
        .bind::<Text, _>(error)
        .bind::<Nullable<Interval>, _>(wait.map(interval)),
    )
    .get_result::<FailedDelivery>(connection)
    .await
    .optional()?;
    let Some(FailedDelivery {
        endpoint_id,
        agent_id,
        next_attempt_at,
    }) = settled
    else {
        return Ok(false);
    };
    if wait.is_some() {
        turn_comes(connection, agent_id, Some(next_attempt_at)).await?;
    }
    let spell = Prepared(
        diesel::sql_query(
            "UPDATE webhook_endpoints SET failing_since = coalesce(failing_since, now()) \
             WHERE id = $1 RETURNING failing_since <= now() - $2 AS long_enough",
        )
        .bind::<SqlUuid, _>(endpoint_id)
        .bind::<Interval, _>(interval(DISABLE_FAILING_AFTER)),
    )
    .get_result::<FailingSpell>(connection)
    .await?;
    if spell.long_enough {
        let days = DISABLE_FAILING_AFTER.as_secs() / 86_400;
        disable_locked(
            connection,
            WebhookEndpointId(endpoint_id),
            &format!("every delivery failed for {days} days"),
        )
        .await?;
    }
    Ok(true)
}

/// Settles a delivered delivery and ends its endpoint's failing spell, if one runs, in one
/// statement; the endpoint's row is written only then, so deliveries to one endpoint do not
/// queue on its lock.
async fn record_delivered(
    connection: &mut AsyncPgConnection,
    id: WebhookDeliveryId,
    lease: LeaseId,
) -> Result<bool, diesel::result::Error> {
    let settled = Prepared(
        diesel::sql_query(
            "WITH settled AS ( \
             UPDATE webhook_deliveries SET status = 'delivered', last_error = NULL, \
                 lease_id = NULL, lease_until = NULL \
             WHERE id = $1 AND lease_id = $2 AND status = 'pending' \
             RETURNING endpoint_id), \
         recovered AS ( \
             UPDATE webhook_endpoints AS endpoint SET failing_since = NULL FROM settled \
             WHERE endpoint.id = settled.endpoint_id AND endpoint.failing_since IS NOT NULL) \
         SELECT count(*) AS settled FROM settled",
        )
        .bind::<SqlUuid, _>(id.0)
        .bind::<SqlUuid, _>(lease.0),
    )
    .get_result::<Settled>(connection)
    .await?;
    Ok(settled.settled == 1)
}

#[derive(QueryableByName)]
struct Settled {
    #[diesel(sql_type = BigInt)]
    settled: i64,
}

#[derive(QueryableByName)]
struct FailedDelivery {
    #[diesel(sql_type = SqlUuid)]
    endpoint_id: Uuid,
    #[diesel(sql_type = SqlUuid)]
    agent_id: Uuid,
    #[diesel(sql_type = diesel::sql_types::Timestamptz)]
    next_attempt_at: OffsetDateTime,
}

#[derive(QueryableByName)]
struct FailingSpell {
    #[diesel(sql_type = diesel::sql_types::Bool)]
    long_enough: bool,
}

#[derive(QueryableByName)]
struct OldestDue {
    #[diesel(sql_type = Nullable<diesel::sql_types::Double>)]
    waited: Option<f64>,
}

#[async_trait]
impl LeasedQueue<WebhookDelivery> for PgWebhookStore {
    #[tracing::instrument(level = "debug", skip(self))]
    async fn claim_due(
        &self,
        lease: LeaseId,
        lease_for: Duration,
        full: &[AgentId],
    ) -> Result<Option<Claimed<WebhookDelivery>>, StoreError> {
        let mut connection = self.database.connection().await?;
        claim(&mut connection, lease, lease_for, full).await
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn release(&self, lease: LeaseId) -> Result<(), StoreError> {
        let mut connection = self.database.connection().await?;
        // Given back, the delivery is due at once: its agent's turn comes now.
        diesel::sql_query(
            "WITH released AS (UPDATE webhook_deliveries SET lease_id = NULL, lease_until = NULL \
                 WHERE lease_id = $1 AND status = 'pending' RETURNING agent_id) \
             SELECT webhook_turn_comes(agent_id, now()) FROM released",
        )
        .bind::<SqlUuid, _>(lease.0)
        .execute(&mut connection)
        .await
        .map_err(from_diesel)?;
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn record(
        &self,
        id: WebhookDeliveryId,
        lease: LeaseId,
        outcome: &JobOutcome<u16>,
    ) -> Result<bool, StoreError> {
        let (status, error, wait) = match outcome {
            JobOutcome::Done(_) => {
                let mut connection = self.database.connection().await?;
                return record_delivered(&mut connection, id, lease)
                    .await
                    .map_err(from_diesel);
            }
            JobOutcome::Retry { error, wait } => ("pending", error, Some(*wait)),
            JobOutcome::Failed(reason) => ("failed", reason, None),
        };
        self.database
            .in_transaction(|connection| {
                async move { Ok(record_failure(connection, id, lease, status, error, wait).await?) }
                    .scope_boxed()
            })
            .await
    }

    async fn oldest_due_wait(&self) -> Result<Option<Duration>, StoreError> {
        let mut connection = self.database.connection().await?;
        let oldest = diesel::sql_query(
            "SELECT extract(epoch FROM now() - min(delivery.next_attempt_at))::float8 AS waited \
             FROM webhook_deliveries AS delivery JOIN webhook_endpoints AS endpoint \
                 ON endpoint.id = delivery.endpoint_id AND endpoint.enabled \
             JOIN agents AS agent ON agent.id = delivery.agent_id AND agent.is_active \
                 AND agent_key_live(agent.id, endpoint.agent_key_hash) \
             WHERE delivery.status = 'pending' AND delivery.next_attempt_at <= now()",
        )
        .get_result::<OldestDue>(&mut connection)
        .await
        .map_err(from_diesel)?;
        Ok(oldest.waited.map(duration_from_secs))
    }
}
