//! Webhook endpoints, their secrets, the delivery queue and its log (migration 000017, decision
//! 0058). Deliveries are queued by the trigger that writes each event; workers on any instance
//! lease them with `SKIP LOCKED` and record outcomes only under their lease (decision 0052).

use std::time::Duration;

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Integer, Interval, Nullable, Text, Uuid as SqlUuid};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{
    AgentId, AgentKeyHash, CursorPosition, EventId, EventType, EventTypes, LeaseId, RateDecision,
    RateLimit, WebhookAttemptRecord, WebhookDeliveryId, WebhookEndpointId, WebhookEndpointRecord,
    DISABLE_FAILING_AFTER,
};
use ports::{
    Claimed, EndpointRefusal, JobOutcome, LeasedQueue, NewWebhookEndpoint, Replayed, StoreError,
    WebhookDelivery, WebhookEndpointChanges, WebhookEndpoints, WEBHOOK_DELIVERIES_TOPIC,
};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::clock::{duration_from_secs, interval};
use crate::database::Database;
use crate::errors::{corrupt, from_diesel, TxError};
use crate::events::{type_names, EventRow};
use crate::limits::take_locked;
use crate::notifications::CHANNEL;
use crate::prepared::Prepared;
use crate::schema::{agents, webhook_attempts, webhook_endpoints, webhook_secrets};

/// The bucket an agent's replays of one endpoint take from (`rate_limit_buckets`, by endpoint).
const REPLAY_ACTION: &str = "webhook_replay";

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

/// Takes the rows of the deliveries still queued for the endpoints `ids`, in one order. Every
/// writer that holds a delivery's row and then wants its endpoint's (a failed attempt's
/// settlement) or takes several deliveries' rows (a delete, a replay) goes in this order, so
/// disabling an endpoint waits for them instead of deadlocking.
async fn lock_queued(
    connection: &mut AsyncPgConnection,
    ids: &[Uuid],
) -> Result<(), diesel::result::Error> {
    diesel::sql_query(
        "SELECT id FROM webhook_deliveries WHERE endpoint_id = ANY ($1) AND status = 'pending' \
         ORDER BY id FOR UPDATE",
    )
    .bind::<Array<SqlUuid>, _>(ids)
    .execute(connection)
    .await
    .map(drop)
}

/// Fails what is queued for endpoints that no longer take deliveries; kept for replay.
async fn fail_queued(
    connection: &mut AsyncPgConnection,
    ids: &[Uuid],
    reason: &str,
) -> Result<(), diesel::result::Error> {
    diesel::sql_query(
        "UPDATE webhook_deliveries SET status = 'failed', last_error = $2, lease_id = NULL, \
         lease_until = NULL WHERE endpoint_id = ANY ($1) AND status = 'pending'",
    )
    .bind::<Array<SqlUuid>, _>(ids)
    .bind::<Text, _>(format!("the endpoint was disabled: {reason}"))
    .execute(connection)
    .await
    .map(drop)
}

/// Disables the endpoint with `reason` and fails what is queued for it, its deliveries' rows
/// taken first (`lock_queued`).
async fn disable_locked(
    connection: &mut AsyncPgConnection,
    id: WebhookEndpointId,
    reason: &str,
) -> Result<(), diesel::result::Error> {
    lock_queued(connection, &[id.0]).await?;
    diesel::update(webhook_endpoints::table.find(id.0))
        .set((
            webhook_endpoints::enabled.eq(false),
            webhook_endpoints::disabled_reason.eq(reason),
        ))
        .execute(connection)
        .await?;
    fail_queued(connection, &[id.0], reason).await
}

/// Disables every endpoint the agent has enabled, with `reason`, and fails what is queued for
/// them, inside the caller's transaction (a key rotation's, a deactivation's, after the agent's
/// row); the endpoints it disabled.
pub(crate) async fn disable_agents_endpoints<E: From<StoreError>>(
    connection: &mut AsyncPgConnection,
    agent: AgentId,
    reason: &str,
) -> Result<Vec<WebhookEndpointRecord>, TxError<E>> {
    let enabled: Vec<Uuid> = webhook_endpoints::table
        .filter(webhook_endpoints::agent_id.eq(agent.0))
        .filter(webhook_endpoints::enabled)
        .select(webhook_endpoints::id)
        .load(connection)
        .await?;
    if enabled.is_empty() {
        return Ok(Vec::new());
    }
    lock_queued(connection, &enabled).await?;
    let disabled: Vec<EndpointRow> = diesel::update(
        webhook_endpoints::table
            .filter(webhook_endpoints::id.eq_any(&enabled))
            .filter(webhook_endpoints::enabled),
    )
    .set((
        webhook_endpoints::enabled.eq(false),
        webhook_endpoints::disabled_reason.eq(reason),
    ))
    .returning(EndpointRow::as_returning())
    .get_results(connection)
    .await?;
    let ids: Vec<Uuid> = disabled.iter().map(|row| row.id).collect();
    fail_queued(connection, &ids, reason).await?;
    let mut disabled = disabled
        .into_iter()
        .map(EndpointRow::into_record)
        .collect::<Result<Vec<_>, _>>()
        .map_err(TxError::store)?;
    disabled.sort_by_key(|endpoint| (endpoint.created_at, endpoint.id.0));
    Ok(disabled)
}

/// Whether `key` is the agent's key in force, the agent active, its row shared until the
/// transaction ends: a rotation or a deactivation waits for the change in hand, or comes first
/// and refuses it.
async fn key_in_force(
    connection: &mut AsyncPgConnection,
    agent: AgentId,
    key: &AgentKeyHash,
) -> Result<bool, diesel::result::Error> {
    let stored = agents::table
        .find(agent.0)
        .filter(agents::is_active)
        .select(agents::key_hash)
        .for_share()
        .first::<Vec<u8>>(connection)
        .await
        .optional()?;
    Ok(stored.is_some_and(|hash| hash.as_slice() == key.as_bytes()))
}

/// Brings the agent's turn at the deliverers forward to `due`, by the database's clock `now()`
/// when `None` (migration 000030).
async fn turn_comes(
    connection: &mut AsyncPgConnection,
    agent: Uuid,
    due: Option<OffsetDateTime>,
) -> Result<(), diesel::result::Error> {
    Prepared(
        diesel::sql_query("SELECT webhook_turn_comes($1, coalesce($2, now()))")
            .bind::<SqlUuid, _>(agent)
            .bind::<Nullable<diesel::sql_types::Timestamptz>, _>(due),
    )
    .execute(connection)
    .await
    .map(drop)
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
                    if !key_in_force(connection, agent, &endpoint.key).await? {
                        return Err(TxError::Abort(EndpointRefusal::KeyRevoked));
                    }
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
                            webhook_endpoints::agent_key_hash
                                .eq(endpoint.key.as_bytes().as_slice()),
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

    #[tracing::instrument(level = "debug", skip(self, changes, key))]
    async fn update(
        &self,
        agent: AgentId,
        id: WebhookEndpointId,
        changes: WebhookEndpointChanges,
        key: AgentKeyHash,
    ) -> Result<Option<WebhookEndpointRecord>, EndpointRefusal> {
        self.database
            .in_transaction(|connection| {
                async move {
                    // The agent's row, then the deliveries', then the endpoint's: the order of a
                    // key rotation, and of a failed attempt's settlement (`lock_queued`).
                    if !key_in_force(connection, agent, &key).await? {
                        return Err(TxError::Abort(EndpointRefusal::KeyRevoked));
                    }
                    if changes.enabled == Some(false) {
                        lock_queued(connection, &[id.0]).await?;
                    }
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
                            // Enabled by this key, the endpoint is this key's.
                            diesel::update(target)
                                .set((
                                    webhook_endpoints::enabled.eq(true),
                                    webhook_endpoints::disabled_reason.eq(None::<String>),
                                    webhook_endpoints::failing_since.eq(None::<OffsetDateTime>),
                                    webhook_endpoints::agent_key_hash.eq(key.as_bytes().as_slice()),
                                ))
                                .execute(connection)
                                .await?;
                            // What a replay queued while it was disabled is due now.
                            turn_comes(connection, agent.0, None).await?;
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
                    // The endpoint's row held: rotations of one endpoint go one at a time.
                    let held = webhook_endpoints::table
                        .find(id.0)
                        .filter(webhook_endpoints::agent_id.eq(agent.0))
                        .select(webhook_endpoints::id)
                        .for_update()
                        .first::<Uuid>(connection)
                        .await
                        .optional()?;
                    if held.is_none() {
                        return Ok(None);
                    }
                    let endpoint = endpoint_of(connection, agent, id)
                        .await
                        .map_err(TxError::store)?
                        .ok_or_else(|| TxError::store(corrupt("an endpoint held went missing")))?;
                    // The newest secret signs `old_signs_for` more, beside the new one; any
                    // older one stops now, so a delivery carries at most two signatures.
                    diesel::sql_query(
                        "WITH newest AS (SELECT max(created_at) AS created_at \
                             FROM webhook_secrets WHERE endpoint_id = $1), \
                         dropped AS (DELETE FROM webhook_secrets AS secret USING newest \
                             WHERE secret.endpoint_id = $1 \
                               AND secret.created_at < newest.created_at) \
                         UPDATE webhook_secrets AS secret SET signs_until = now() + $2 \
                         FROM newest \
                         WHERE secret.endpoint_id = $1 AND secret.created_at = newest.created_at",
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
        rate: Option<RateLimit>,
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
                    Ok(Some(Replayed::Queued(due)))
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
                 AND agent.key_hash = endpoint.agent_key_hash \
             WHERE delivery.status = 'pending' AND delivery.next_attempt_at <= now()",
        )
        .get_result::<OldestDue>(&mut connection)
        .await
        .map_err(from_diesel)?;
        Ok(oldest.waited.map(duration_from_secs))
    }
}
