//! `WebhookEndpointStore`: an agent's endpoints and their secrets, each change made with the
//! agent's key in force.

use std::time::Duration;

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{Interval, Text, Uuid as SqlUuid};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::RunQueryDsl;
use domain::{AgentId, AgentKeyHash, WebhookEndpointId, WebhookEndpointRecord};
use ports::{
    Answered, EndpointRefusal, EndpointWithSecret, NewWebhookEndpoint, RequestKey, StoreError,
    WebhookEndpointChanges, WebhookEndpointStore,
};
use time::OffsetDateTime;
use uuid::Uuid;

use super::{
    disable_locked, endpoint_kept, endpoint_of, kept_endpoint, key_in_force, lock_queued,
    turn_comes, types_column, EndpointRow, PgWebhookStore,
};
use crate::clock::interval;
use crate::errors::{corrupt, from_diesel, TxError};
use crate::idempotent_requests::{admit, remember, Operation, Refused};
use crate::schema::{webhook_endpoints, webhook_secrets};

impl From<Refused> for EndpointRefusal {
    fn from(refused: Refused) -> Self {
        match refused {
            Refused::InFlight => Self::KeyInFlight,
            Refused::Reused => Self::KeyReused,
        }
    }
}

#[async_trait]
impl WebhookEndpointStore for PgWebhookStore {
    #[tracing::instrument(level = "debug", skip(self, endpoint), fields(endpoint_id = %endpoint.id))]
    async fn create(
        &self,
        agent: AgentId,
        endpoint: NewWebhookEndpoint,
        max: usize,
        keyed: Option<RequestKey>,
    ) -> Result<EndpointWithSecret, EndpointRefusal> {
        self.database
            .in_transaction(|connection| {
                async move {
                    let operation = Operation::WebhookCreate;
                    if let Some(first) = admit(connection, agent, keyed.as_ref(), operation).await?
                    {
                        let (endpoint, secret) = endpoint_kept(first).map_err(TxError::store)?;
                        return Ok(Answered {
                            answer: (endpoint, secret),
                            replayed: true,
                        });
                    }
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
                            webhook_secrets::agent_id.eq(agent.0),
                            webhook_secrets::secret.eq(&endpoint.secret),
                        ))
                        .execute(connection)
                        .await?;
                    let created = row.into_record().map_err(TxError::store)?;
                    if let Some(keyed) = &keyed {
                        let answer = kept_endpoint(&created, &endpoint.secret);
                        remember(connection, agent, keyed, operation, &answer).await?;
                    }
                    Ok(Answered::new((created, endpoint.secret)))
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
        let mut connection = self.database.read_connection().await?;
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
        let mut connection = self.database.read_connection().await?;
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
        keyed: Option<RequestKey>,
    ) -> Result<Option<EndpointWithSecret>, EndpointRefusal> {
        self.database
            .in_transaction(|connection| {
                async move {
                    let operation = Operation::WebhookRotateSecret;
                    if let Some(first) = admit(connection, agent, keyed.as_ref(), operation).await?
                    {
                        let (endpoint, secret) = endpoint_kept(first).map_err(TxError::store)?;
                        return Ok(Some(Answered {
                            answer: (endpoint, secret),
                            replayed: true,
                        }));
                    }
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
                            webhook_secrets::agent_id.eq(agent.0),
                            webhook_secrets::secret.eq(&secret),
                        ))
                        .execute(connection)
                        .await?;
                    if let Some(keyed) = &keyed {
                        let answer = kept_endpoint(&endpoint, &secret);
                        remember(connection, agent, keyed, operation, &answer).await?;
                    }
                    Ok(Some(Answered::new((endpoint, secret))))
                }
                .scope_boxed()
            })
            .await
    }
}
