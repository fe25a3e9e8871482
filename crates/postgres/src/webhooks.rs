//! Webhook endpoints, their secrets, the delivery queue and its log (migration 000017, decision
//! 0058). Deliveries are queued by the trigger that writes each event; workers on any instance
//! lease them with `SKIP LOCKED` and record outcomes only under their lease (decision 0052).

use std::time::Duration;

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Integer, Interval, Nullable, Text, Uuid as SqlUuid};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{
    AgentId, CursorPosition, EventId, EventType, EventTypes, LeaseId, WebhookAttemptRecord,
    WebhookDeliveryId, WebhookEndpointId, WebhookEndpointRecord, DISABLE_FAILING_AFTER,
};
use ports::{
    Claimed, EndpointRefusal, JobOutcome, LeasedQueue, NewWebhookEndpoint, StoreError,
    WebhookDelivery, WebhookEndpointChanges, WebhookEndpoints, WEBHOOK_DELIVERIES_TOPIC,
};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::clock::{duration_from_secs, interval};
use crate::database::Database;
use crate::errors::{corrupt, from_diesel, TxError};
use crate::events::{type_names, EventRow};
use crate::notifications::CHANNEL;
use crate::prepared::Prepared;
use crate::schema::{webhook_attempts, webhook_endpoints, webhook_secrets};

pub struct PgWebhookStore {
    database: Database,
}

impl PgWebhookStore {
    pub fn new(database: Database) -> Self {
        Self { database }
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = webhook_endpoints, check_for_backend(diesel::pg::Pg))]
struct EndpointRow {
    id: Uuid,
    agent_id: Uuid,
    url: String,
    types: Option<Vec<String>>,
    description: Option<String>,
    enabled: bool,
    disabled_reason: Option<String>,
    created_at: OffsetDateTime,
}

fn stored_types(types: Option<Vec<String>>) -> Result<Option<EventTypes>, StoreError> {
    types
        .map(|names| {
            names
                .iter()
                .map(|name| {
                    EventType::parse(name)
                        .ok_or_else(|| corrupt(format!("endpoint event type {name:?}")))
                })
                .collect::<Result<Vec<_>, _>>()
                .map(EventTypes::of)
        })
        .transpose()
}

impl EndpointRow {
    fn into_record(self) -> Result<WebhookEndpointRecord, StoreError> {
        Ok(WebhookEndpointRecord {
            id: WebhookEndpointId(self.id),
            agent_id: AgentId(self.agent_id),
            url: self.url,
            types: stored_types(self.types)?,
            description: self.description,
            enabled: self.enabled,
            disabled_reason: self.disabled_reason,
            created_at: self.created_at,
        })
    }
}

fn types_column(types: Option<EventTypes>) -> Option<Vec<String>> {
    types.map(|types| type_names(types).into_iter().map(str::to_owned).collect())
}

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

async fn endpoint_of(
    connection: &mut AsyncPgConnection,
    agent: AgentId,
    id: WebhookEndpointId,
) -> Result<Option<WebhookEndpointRecord>, StoreError> {
    webhook_endpoints::table
        .find(id.0)
        .filter(webhook_endpoints::agent_id.eq(agent.0))
        .select(EndpointRow::as_select())
        .first(connection)
        .await
        .optional()
        .map_err(from_diesel)?
        .map(EndpointRow::into_record)
        .transpose()
}

/// Fails what is queued for an endpoint that no longer takes deliveries; kept for replay.
async fn fail_queued(
    connection: &mut AsyncPgConnection,
    id: WebhookEndpointId,
    reason: &str,
) -> Result<(), diesel::result::Error> {
    diesel::sql_query(
        "UPDATE webhook_deliveries SET status = 'failed', last_error = $2, lease_id = NULL, \
         lease_until = NULL WHERE endpoint_id = $1 AND status = 'pending'",
    )
    .bind::<SqlUuid, _>(id.0)
    .bind::<Text, _>(reason)
    .execute(connection)
    .await
    .map(drop)
}

async fn disable_locked(
    connection: &mut AsyncPgConnection,
    id: WebhookEndpointId,
    reason: &str,
) -> Result<(), diesel::result::Error> {
    diesel::update(webhook_endpoints::table.find(id.0))
        .set((
            webhook_endpoints::enabled.eq(false),
            webhook_endpoints::disabled_reason.eq(reason),
        ))
        .execute(connection)
        .await?;
    fail_queued(
        connection,
        id,
        &format!("the endpoint was disabled: {reason}"),
    )
    .await
}

fn notify_deliveries() -> diesel::query_builder::SqlQuery {
    diesel::sql_query(format!(
        "SELECT pg_notify('{CHANNEL}', '{WEBHOOK_DELIVERIES_TOPIC}')"
    ))
}

#[async_trait]
impl WebhookEndpoints for PgWebhookStore {
    #[tracing::instrument(level = "debug", skip(self, endpoint), fields(endpoint_id = %endpoint.id))]
    async fn create(
        &self,
        agent: AgentId,
        endpoint: NewWebhookEndpoint,
        max: usize,
    ) -> Result<WebhookEndpointRecord, EndpointRefusal> {
        self.database
            .in_transaction(|connection| {
                async move {
                    // One creation at a time per agent, so that two cannot both pass the count.
                    diesel::sql_query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))")
                        .bind::<Text, _>(format!("webhook_endpoints:{agent}"))
                        .execute(connection)
                        .await?;
                    let held: i64 = webhook_endpoints::table
                        .filter(webhook_endpoints::agent_id.eq(agent.0))
                        .count()
                        .get_result(connection)
                        .await?;
                    if usize::try_from(held).unwrap_or(usize::MAX) >= max {
                        return Err(TxError::Abort(EndpointRefusal::TooMany));
                    }
                    let row = diesel::insert_into(webhook_endpoints::table)
                        .values((
                            webhook_endpoints::id.eq(endpoint.id.0),
                            webhook_endpoints::agent_id.eq(agent.0),
                            webhook_endpoints::url.eq(endpoint.url.as_str()),
                            webhook_endpoints::types.eq(types_column(endpoint.types)),
                            webhook_endpoints::description.eq(&endpoint.description),
                        ))
                        .returning(EndpointRow::as_returning())
                        .get_result(connection)
                        .await?;
                    diesel::insert_into(webhook_secrets::table)
                        .values((
                            webhook_secrets::endpoint_id.eq(endpoint.id.0),
                            webhook_secrets::secret.eq(&endpoint.secret),
                        ))
                        .execute(connection)
                        .await?;
                    row.into_record().map_err(TxError::store)
                }
                .scope_boxed()
            })
            .await
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn owner(&self, id: WebhookEndpointId) -> Result<Option<AgentId>, StoreError> {
        let mut connection = self.database.connection().await?;
        let owner = webhook_endpoints::table
            .find(id.0)
            .select(webhook_endpoints::agent_id)
            .first::<Uuid>(&mut connection)
            .await
            .optional()
            .map_err(from_diesel)?;
        Ok(owner.map(AgentId))
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn list(&self, agent: AgentId) -> Result<Vec<WebhookEndpointRecord>, StoreError> {
        let mut connection = self.database.connection().await?;
        webhook_endpoints::table
            .filter(webhook_endpoints::agent_id.eq(agent.0))
            .order((webhook_endpoints::created_at, webhook_endpoints::id))
            .select(EndpointRow::as_select())
            .load(&mut connection)
            .await
            .map_err(from_diesel)?
            .into_iter()
            .map(EndpointRow::into_record)
            .collect()
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn get(
        &self,
        agent: AgentId,
        id: WebhookEndpointId,
    ) -> Result<Option<WebhookEndpointRecord>, StoreError> {
        let mut connection = self.database.connection().await?;
        endpoint_of(&mut connection, agent, id).await
    }

    #[tracing::instrument(level = "debug", skip(self, changes))]
    async fn update(
        &self,
        agent: AgentId,
        id: WebhookEndpointId,
        changes: WebhookEndpointChanges,
    ) -> Result<Option<WebhookEndpointRecord>, StoreError> {
        self.database
            .in_transaction(|connection| {
                async move {
                    let found = webhook_endpoints::table
                        .find(id.0)
                        .filter(webhook_endpoints::agent_id.eq(agent.0))
                        .select(webhook_endpoints::enabled)
                        .for_update()
                        .first::<bool>(connection)
                        .await
                        .optional()?;
                    let Some(was_enabled) = found else {
                        return Ok(None);
                    };
                    let target = webhook_endpoints::table.find(id.0);
                    if let Some(url) = &changes.url {
                        diesel::update(target)
                            .set(webhook_endpoints::url.eq(url.as_str()))
                            .execute(connection)
                            .await?;
                    }
                    if let Some(types) = changes.types {
                        diesel::update(target)
                            .set(webhook_endpoints::types.eq(types_column(types)))
                            .execute(connection)
                            .await?;
                    }
                    if let Some(description) = &changes.description {
                        diesel::update(target)
                            .set(webhook_endpoints::description.eq(description))
                            .execute(connection)
                            .await?;
                    }
                    match changes.enabled {
                        Some(true) if !was_enabled => {
                            diesel::update(target)
                                .set((
                                    webhook_endpoints::enabled.eq(true),
                                    webhook_endpoints::disabled_reason.eq(None::<String>),
                                    webhook_endpoints::failing_since.eq(None::<OffsetDateTime>),
                                ))
                                .execute(connection)
                                .await?;
                        }
                        Some(false) if was_enabled => {
                            disable_locked(connection, id, "disabled by the agent").await?;
                        }
                        _ => {}
                    }
                    endpoint_of(connection, agent, id)
                        .await
                        .map_err(TxError::store)
                }
                .scope_boxed()
            })
            .await
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn delete(&self, agent: AgentId, id: WebhookEndpointId) -> Result<bool, StoreError> {
        self.database
            .in_transaction(|connection| {
                async move {
                    // A failed attempt's settlement holds its delivery's row, then takes the
                    // endpoint's (record_failure); deleting takes the endpoint's, then its
                    // deliveries' as it cascades. Taking the deliveries' rows first keeps that
                    // order, so the two wait for each other instead of deadlocking.
                    diesel::sql_query(
                        "SELECT id FROM webhook_deliveries \
                         WHERE endpoint_id = $1 AND agent_id = $2 ORDER BY id FOR UPDATE",
                    )
                    .bind::<SqlUuid, _>(id.0)
                    .bind::<SqlUuid, _>(agent.0)
                    .execute(connection)
                    .await?;
                    let deleted = diesel::delete(
                        webhook_endpoints::table
                            .find(id.0)
                            .filter(webhook_endpoints::agent_id.eq(agent.0)),
                    )
                    .execute(connection)
                    .await?;
                    Ok(deleted == 1)
                }
                .scope_boxed()
            })
            .await
    }

    #[tracing::instrument(level = "debug", skip(self, secret))]
    async fn rotate_secret(
        &self,
        agent: AgentId,
        id: WebhookEndpointId,
        secret: String,
        old_signs_for: Duration,
    ) -> Result<Option<WebhookEndpointRecord>, StoreError> {
        self.database
            .in_transaction(|connection| {
                async move {
                    let Some(endpoint) = endpoint_of(connection, agent, id)
                        .await
                        .map_err(TxError::store)?
                    else {
                        return Ok(None);
                    };
                    diesel::sql_query(
                        "UPDATE webhook_secrets SET signs_until = now() + $2 \
                         WHERE endpoint_id = $1 \
                           AND (signs_until IS NULL OR signs_until > now() + $2)",
                    )
                    .bind::<SqlUuid, _>(id.0)
                    .bind::<Interval, _>(interval(old_signs_for))
                    .execute(connection)
                    .await?;
                    diesel::insert_into(webhook_secrets::table)
                        .values((
                            webhook_secrets::endpoint_id.eq(id.0),
                            webhook_secrets::secret.eq(&secret),
                        ))
                        .execute(connection)
                        .await?;
                    Ok(Some(endpoint))
                }
                .scope_boxed()
            })
            .await
    }

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
    ) -> Result<Option<usize>, StoreError> {
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
                    let queued = diesel::sql_query(
                        "INSERT INTO webhook_deliveries \
                             (id, endpoint_id, agent_id, event_seq, next_attempt_at, created_at) \
                         SELECT gen_random_uuid(), endpoint.id, event.agent_id, event.seq, \
                             clock_timestamp(), clock_timestamp() \
                         FROM events AS event JOIN webhook_endpoints AS endpoint \
                             ON endpoint.id = $1 AND endpoint.agent_id = event.agent_id \
                         WHERE event.agent_id = $2 AND event.seq > $3 \
                           AND (endpoint.types IS NULL OR event.type = ANY (endpoint.types)) \
                           AND NOT EXISTS (SELECT 1 FROM webhook_deliveries AS queued \
                               WHERE queued.agent_id = event.agent_id \
                                 AND queued.event_seq = event.seq \
                                 AND queued.endpoint_id = endpoint.id \
                                 AND queued.status = 'pending')",
                    )
                    .bind::<SqlUuid, _>(id.0)
                    .bind::<SqlUuid, _>(agent.0)
                    .bind::<BigInt, _>(i64::try_from(after).unwrap_or(i64::MAX))
                    .execute(connection)
                    .await?;
                    if queued > 0 {
                        notify_deliveries().execute(connection).await?;
                    }
                    Ok(Some(queued))
                }
                .scope_boxed()
            })
            .await
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn disable(&self, id: WebhookEndpointId, reason: &str) -> Result<(), StoreError> {
        self.database
            .in_transaction(|connection| {
                async move { Ok(disable_locked(connection, id, reason).await?) }.scope_boxed()
            })
            .await
    }

    #[tracing::instrument(level = "debug", skip(self, attempt))]
    async fn log_attempt(
        &self,
        endpoint: WebhookEndpointId,
        attempt: &WebhookAttemptRecord,
    ) -> Result<(), StoreError> {
        let mut connection = self.database.connection().await?;
        diesel::insert_into(webhook_attempts::table)
            .values((
                webhook_attempts::id.eq(attempt.attempt_id),
                webhook_attempts::delivery_id.eq(attempt.delivery_id.0),
                webhook_attempts::endpoint_id.eq(endpoint.0),
                webhook_attempts::event_id.eq(attempt.event_id.0),
                webhook_attempts::event_type.eq(attempt.event_type.as_str()),
                webhook_attempts::attempt.eq(i32::try_from(attempt.attempt).unwrap_or(i32::MAX)),
                webhook_attempts::status_code.eq(attempt.status_code.map(i32::from)),
                webhook_attempts::error.eq(&attempt.error),
                webhook_attempts::duration_ms
                    .eq(i32::try_from(attempt.duration.as_millis()).unwrap_or(i32::MAX)),
                webhook_attempts::attempted_at.eq(attempt.attempted_at),
            ))
            .execute(&mut connection)
            .await
            .map_err(from_diesel)?;
        Ok(())
    }
}

#[derive(QueryableByName)]
struct ClaimedRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
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

/// Leases the oldest due delivery of an enabled endpoint and reads what its attempt needs (the
/// endpoint's URL and live secrets, newest first, and the event) in one statement: a delivery
/// costs the queue two round trips, its claim and its record. Its age is counted from its first
/// attempt, as the retry schedule is, however late that attempt came (an outage, a backlog).
async fn claim(
    connection: &mut AsyncPgConnection,
    lease: LeaseId,
    lease_for: Duration,
) -> Result<Option<Claimed<WebhookDelivery>>, StoreError> {
    let claimed = Prepared(
        diesel::sql_query(
            "WITH due AS ( \
             SELECT delivery.id FROM webhook_deliveries AS delivery \
             JOIN webhook_endpoints AS endpoint \
                 ON endpoint.id = delivery.endpoint_id AND endpoint.enabled \
             WHERE delivery.status = 'pending' AND delivery.next_attempt_at <= now() \
               AND (delivery.lease_until IS NULL OR delivery.lease_until < now()) \
             ORDER BY delivery.next_attempt_at, delivery.id LIMIT 1 \
             FOR UPDATE OF delivery SKIP LOCKED), \
         leased AS ( \
             UPDATE webhook_deliveries AS delivery \
             SET lease_id = $1, lease_until = now() + $2, attempts = delivery.attempts + 1, \
                 first_attempted_at = coalesce(delivery.first_attempted_at, now()) \
             FROM due WHERE delivery.id = due.id \
             RETURNING delivery.id, delivery.endpoint_id, delivery.agent_id, \
                 delivery.event_seq, delivery.attempts, \
                 extract(epoch FROM now() - delivery.first_attempted_at)::float8 AS age) \
         SELECT leased.id, leased.endpoint_id, leased.attempts, leased.age, endpoint.url, \
             ARRAY(SELECT secret.secret FROM webhook_secrets AS secret \
                   WHERE secret.endpoint_id = leased.endpoint_id \
                     AND (secret.signs_until IS NULL OR secret.signs_until > now()) \
                   ORDER BY secret.created_at DESC) AS secrets, \
             event.seq, event.id AS event_id, event.type AS event_type, event.data, \
             event.created_at \
         FROM leased \
         JOIN webhook_endpoints AS endpoint ON endpoint.id = leased.endpoint_id \
         JOIN events AS event \
             ON event.agent_id = leased.agent_id AND event.seq = leased.event_seq",
        )
        .bind::<SqlUuid, _>(lease.0)
        .bind::<Interval, _>(interval(lease_for)),
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
    }
    .into_record()?;
    let attempts = u32::try_from(claimed.attempts).unwrap_or_default();
    Ok(Some(Claimed {
        job: WebhookDelivery {
            id: WebhookDeliveryId(claimed.id),
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
    let endpoint = Prepared(
        diesel::sql_query(
            "UPDATE webhook_deliveries SET status = $3, last_error = $4, \
             next_attempt_at = coalesce(now() + $5, next_attempt_at), \
             lease_id = NULL, lease_until = NULL \
         WHERE id = $1 AND lease_id = $2 AND status = 'pending' \
         RETURNING endpoint_id",
        )
        .bind::<SqlUuid, _>(id.0)
        .bind::<SqlUuid, _>(lease.0)
        .bind::<Text, _>(status)
        .bind::<Text, _>(error)
        .bind::<Nullable<Interval>, _>(wait.map(interval)),
    )
    .get_result::<EndpointOf>(connection)
    .await
    .optional()?;
    let Some(EndpointOf { endpoint_id }) = endpoint else {
        return Ok(false);
    };
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
struct EndpointOf {
    #[diesel(sql_type = SqlUuid)]
    endpoint_id: Uuid,
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
    ) -> Result<Option<Claimed<WebhookDelivery>>, StoreError> {
        let mut connection = self.database.connection().await?;
        claim(&mut connection, lease, lease_for).await
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn release(&self, lease: LeaseId) -> Result<(), StoreError> {
        let mut connection = self.database.connection().await?;
        diesel::sql_query(
            "UPDATE webhook_deliveries SET lease_id = NULL, lease_until = NULL \
             WHERE lease_id = $1 AND status = 'pending'",
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
             WHERE delivery.status = 'pending' AND delivery.next_attempt_at <= now()",
        )
        .get_result::<OldestDue>(&mut connection)
        .await
        .map_err(from_diesel)?;
        Ok(oldest.waited.map(duration_from_secs))
    }
}
