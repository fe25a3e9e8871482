//! Webhook endpoints, their secrets, the delivery queue and its log (migration 000017, decision
//! 0058): one `PgWebhookStore` behind three narrow ports and the delivery queue, one module each:
//! the endpoints (`endpoints`), their deliveries' log and replays (`deliveries`), what an attempt
//! comes to (`outcomes`) and the leased queue (`queue`). Deliveries are queued by the trigger that
//! writes each event; workers on any instance lease them with `SKIP LOCKED` and record outcomes
//! only under their lease (decision 0052).

mod deliveries;
mod endpoints;
mod outcomes;
mod queue;

use diesel::prelude::*;
use diesel::sql_types::{Array, Nullable, Text, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{
    AgentId, AgentKeyHash, EventType, EventTypes, WebhookEndpointId, WebhookEndpointRecord,
};
use ports::{StoreError, WEBHOOK_DELIVERIES_TOPIC};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::database::Database;
use crate::errors::{corrupt, from_diesel, TxError};
use crate::events::type_names;
use crate::notifications::CHANNEL;
use crate::prepared::Prepared;
use crate::schema::{agents, webhook_endpoints};

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

/// An endpoint and the secret its request made, as its idempotency key keeps it: the first
/// answer, given again exactly to a retry (the secret is kept in clear as in `webhook_secrets`,
/// which signs with it).
#[derive(serde::Serialize, serde::Deserialize)]
struct KeptEndpoint {
    id: Uuid,
    agent_id: Uuid,
    url: String,
    types: Option<Vec<String>>,
    description: Option<String>,
    enabled: bool,
    disabled_reason: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    created_at: OffsetDateTime,
    secret: String,
}

fn kept_endpoint(endpoint: &WebhookEndpointRecord, secret: &str) -> serde_json::Value {
    serde_json::json!(KeptEndpoint {
        id: endpoint.id.0,
        agent_id: endpoint.agent_id.0,
        url: endpoint.url.clone(),
        types: types_column(endpoint.types),
        description: endpoint.description.clone(),
        enabled: endpoint.enabled,
        disabled_reason: endpoint.disabled_reason.clone(),
        created_at: endpoint.created_at,
        secret: secret.to_owned(),
    })
}

fn endpoint_kept(answer: serde_json::Value) -> Result<(WebhookEndpointRecord, String), StoreError> {
    let kept: KeptEndpoint = serde_json::from_value(answer)
        .map_err(|error| corrupt(format!("a kept endpoint answer: {error}")))?;
    let record = EndpointRow {
        id: kept.id,
        agent_id: kept.agent_id,
        url: kept.url,
        types: kept.types,
        description: kept.description,
        enabled: kept.enabled,
        disabled_reason: kept.disabled_reason,
        created_at: kept.created_at,
    }
    .into_record()?;
    Ok((record, kept.secret))
}

fn types_column(types: Option<EventTypes>) -> Option<Vec<String>> {
    types.map(|types| type_names(types).into_iter().map(str::to_owned).collect())
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
/// them, inside the caller's transaction (a deactivation's, after the agent's row); the endpoints
/// it disabled.
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
    disable_endpoints(connection, enabled, reason).await
}

/// Disables the endpoints of the agent made, or last enabled, by the keys hashed `keys`, as
/// `disable_agents_endpoints` does (a revocation's, a rotation's).
pub(crate) async fn disable_keys_endpoints<E: From<StoreError>>(
    connection: &mut AsyncPgConnection,
    agent: AgentId,
    keys: &[AgentKeyHash],
    reason: &str,
) -> Result<Vec<WebhookEndpointRecord>, TxError<E>> {
    let hashes: Vec<&[u8]> = keys.iter().map(|key| key.as_bytes().as_slice()).collect();
    let enabled: Vec<Uuid> = webhook_endpoints::table
        .filter(webhook_endpoints::agent_id.eq(agent.0))
        .filter(webhook_endpoints::enabled)
        .filter(webhook_endpoints::agent_key_hash.eq_any(hashes))
        .select(webhook_endpoints::id)
        .load(connection)
        .await?;
    disable_endpoints(connection, enabled, reason).await
}

async fn disable_endpoints<E: From<StoreError>>(
    connection: &mut AsyncPgConnection,
    enabled: Vec<Uuid>,
    reason: &str,
) -> Result<Vec<WebhookEndpointRecord>, TxError<E>> {
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

/// Whether `key` is a live key of the agent, the agent active, the agent's row shared until the
/// transaction ends: a revocation, a rotation or a deactivation (each of which locks it) waits
/// for the change in hand, or comes first and refuses it.
async fn key_in_force(
    connection: &mut AsyncPgConnection,
    agent: AgentId,
    key: &AgentKeyHash,
) -> Result<bool, diesel::result::Error> {
    let active = agents::table
        .find(agent.0)
        .filter(agents::is_active)
        .select(agents::id)
        .for_share()
        .first::<Uuid>(connection)
        .await
        .optional()?;
    if active.is_none() {
        return Ok(false);
    }
    diesel::select(agent_key_live(agent.0, key.as_bytes().as_slice()))
        .get_result(connection)
        .await
}

diesel::define_sql_function! {
    /// Whether the hash is a live key of the agent (migration 000035).
    fn agent_key_live(agent: SqlUuid, hash: diesel::sql_types::Binary) -> diesel::sql_types::Bool;
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
