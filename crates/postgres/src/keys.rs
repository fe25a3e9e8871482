//! `KeyStore` on PostgreSQL: an agent's keys (migration 000035, decision 0083).
//!
//! Every change to an agent's keys (made, revoked, replaced by a rotation) first locks the
//! agent's row, so they take their turns: a revocation reads the keys made from the revoked one
//! after any key made from them committed, and the count of live keys cannot be raced past.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::keys::{delegate, grant_by_operator, AgentKeyRecord, KeyGrant, KeyId};
use domain::{AgentId, AgentKeyHash, AuditAction, AuditTarget, REVOKED_KEY_REASON};
use ports::{
    Answered, KeyCreationError, KeyHolder, KeyMade, KeyStore, KeyedCreation, NewKey, StoreError,
};
use serde_json::json;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::audit::{self, AuditEntry};
use crate::database::Database;
use crate::errors::{corrupt, from_diesel, TxError};
use crate::idempotent_requests::{admit, remember, Operation, Refused};
use crate::rows::{scopes_column, AgentKeyRow};
use crate::schema::{agent_keys, agents};
use crate::webhooks::disable_keys_endpoints;

impl From<Refused> for KeyCreationError {
    fn from(refused: Refused) -> Self {
        match refused {
            Refused::InFlight => Self::KeyInFlight,
            Refused::Reused => Self::KeyReused,
        }
    }
}

/// What a key made under an idempotency key keeps as its first answer: the key's id and the
/// salt its secret is derived with (decision 0095), never the secret.
#[derive(serde::Serialize, serde::Deserialize)]
struct KeptKey {
    key_id: Uuid,
    /// In hex.
    salt: String,
}

pub struct PgKeyStore {
    database: Database,
}

impl PgKeyStore {
    pub fn new(database: Database) -> Self {
        Self { database }
    }
}

/// Locks the agent's row for a change of its keys; whether the agent is active, `None` when
/// there is no such agent.
pub(crate) async fn lock_agents_keys(
    connection: &mut AsyncPgConnection,
    agent: AgentId,
) -> Result<Option<bool>, diesel::result::Error> {
    agents::table
        .find(agent.0)
        .select(agents::is_active)
        .for_no_key_update()
        .first(connection)
        .await
        .optional()
}

/// The database's clock, the one every expiry is judged by.
async fn database_now(
    connection: &mut AsyncPgConnection,
) -> Result<OffsetDateTime, diesel::result::Error> {
    diesel::select(diesel::dsl::sql::<diesel::sql_types::Timestamptz>("now()"))
        .get_result(connection)
        .await
}

/// The agent's live keys, neither revoked nor expired by the transaction's clock (the rule of
/// the SQL function `agent_key_live`, migration 000035). A macro, so each use keeps a concrete
/// query type that diesel prepares once.
macro_rules! live_keys_of {
    ($agent:expr) => {
        agent_keys::table
            .filter(agent_keys::agent_id.eq($agent.0))
            .filter(agent_keys::revoked_at.is_null())
            .filter(
                agent_keys::expires_at
                    .is_null()
                    .or(agent_keys::expires_at.gt(diesel::dsl::now)),
            )
    };
}

async fn live_count(
    connection: &mut AsyncPgConnection,
    agent: AgentId,
) -> Result<usize, diesel::result::Error> {
    let count: i64 = live_keys_of!(agent).count().get_result(connection).await?;
    Ok(usize::try_from(count).unwrap_or(usize::MAX))
}

/// Inserts a key row; the record as stored.
pub(crate) async fn insert_key<E: From<StoreError>>(
    connection: &mut AsyncPgConnection,
    agent: AgentId,
    new: &NewKey,
    grant: &KeyGrant,
    parent: Option<KeyId>,
    first: bool,
) -> Result<AgentKeyRecord, TxError<E>> {
    let row = diesel::insert_into(agent_keys::table)
        .values((
            agent_keys::id.eq(new.id.0),
            agent_keys::agent_id.eq(agent.0),
            agent_keys::key_hash.eq(new.hash.as_bytes().as_slice()),
            agent_keys::label.eq(new.label.as_ref().map(|label| label.as_str())),
            agent_keys::scopes.eq(scopes_column(grant.scopes)),
            agent_keys::expires_at.eq(grant.expires_at),
            agent_keys::parent_id.eq(parent.map(|key| key.0)),
            agent_keys::depth.eq(i16::from(grant.depth)),
            agent_keys::is_first.eq(first),
        ))
        .returning(AgentKeyRow::as_returning())
        .get_result(connection)
        .await?;
    row.into_record().map_err(TxError::store)
}

/// What the log records of a key made: never the key or its hash.
fn shown(key: &AgentKeyRecord) -> serde_json::Value {
    json!({
        "key_id": key.id.to_string(),
        "label": key.label.as_ref().map(|label| label.as_str()),
        "scopes": scopes_column(key.grant.scopes),
        "expires_at": key.grant.expires_at.map(|at| at.unix_timestamp()),
        "parent_key_id": key.parent.map(|parent| parent.to_string()),
    })
}

/// Revokes `key` and every unrevoked key made from it, directly or not, in the caller's
/// transaction, after the agent's row was locked; the keys revoked with their hashes.
pub(crate) async fn revoke_tree(
    connection: &mut AsyncPgConnection,
    agent: AgentId,
    key: KeyId,
) -> Result<Vec<(KeyId, AgentKeyHash)>, diesel::result::Error> {
    #[derive(QueryableByName)]
    struct Revoked {
        #[diesel(sql_type = diesel::sql_types::Uuid)]
        id: Uuid,
        #[diesel(sql_type = diesel::sql_types::Bytea)]
        key_hash: Vec<u8>,
    }
    let revoked: Vec<Revoked> = diesel::sql_query(
        "WITH RECURSIVE tree AS ( \
             SELECT id FROM agent_keys \
             WHERE id = $1 AND agent_id = $2 AND revoked_at IS NULL \
             UNION \
             SELECT child.id FROM agent_keys AS child JOIN tree ON child.parent_id = tree.id \
             WHERE child.revoked_at IS NULL) \
         UPDATE agent_keys SET revoked_at = now() \
         WHERE id IN (SELECT id FROM tree) \
         RETURNING id, key_hash",
    )
    .bind::<diesel::sql_types::Uuid, _>(key.0)
    .bind::<diesel::sql_types::Uuid, _>(agent.0)
    .load(connection)
    .await?;
    Ok(revoked
        .into_iter()
        .filter_map(|row| Some((KeyId(row.id), AgentKeyHash::from_slice(&row.key_hash)?)))
        .collect())
}

/// Records `action` on the agent's keys by `holder`: an operator as the log names operators, a
/// key as `key:<id>`.
async fn audit_key_change(
    connection: &mut AsyncPgConnection,
    agent: AgentId,
    holder: &KeyHolder,
    action: AuditAction,
    after: serde_json::Value,
) -> Result<(), diesel::result::Error> {
    let target = AuditTarget::Agent(agent).to_string();
    match holder {
        KeyHolder::Key(key) => audit::record_by_key(connection, *key, action, target, after).await,
        KeyHolder::Operator(actor) => {
            audit::record(
                connection,
                AuditEntry {
                    actor,
                    action,
                    target: Some(target),
                    before: None,
                    after: Some(after),
                    reason: None,
                },
            )
            .await
        }
    }
}

/// Whether `key` is `holder` or was made from it, directly or not.
async fn made_from(
    connection: &mut AsyncPgConnection,
    holder: KeyId,
    key: KeyId,
) -> Result<bool, diesel::result::Error> {
    #[derive(QueryableByName)]
    struct Found {
        #[diesel(sql_type = diesel::sql_types::Bool)]
        found: bool,
    }
    let found: Found = diesel::sql_query(
        "WITH RECURSIVE tree AS ( \
             SELECT id FROM agent_keys WHERE id = $1 \
             UNION \
             SELECT child.id FROM agent_keys AS child JOIN tree ON child.parent_id = tree.id) \
         SELECT EXISTS (SELECT 1 FROM tree WHERE id = $2) AS found",
    )
    .bind::<diesel::sql_types::Uuid, _>(holder.0)
    .bind::<diesel::sql_types::Uuid, _>(key.0)
    .get_result(connection)
    .await?;
    Ok(found.found)
}

#[async_trait]
impl KeyStore for PgKeyStore {
    #[tracing::instrument(level = "debug", skip(self, maker, new, keyed), fields(key_id = %new.id))]
    async fn create(
        &self,
        agent: AgentId,
        maker: &KeyHolder,
        new: NewKey,
        keyed: Option<KeyedCreation>,
    ) -> Result<Answered<KeyMade>, KeyCreationError> {
        self.database
            .in_transaction(|connection| {
                async move {
                    let request = keyed.as_ref().map(|keyed| &keyed.request);
                    if let Some(first) =
                        admit(connection, agent, request, Operation::KeyCreate).await?
                    {
                        let kept: KeptKey = serde_json::from_value(first).map_err(|error| {
                            TxError::store(corrupt(format!("a kept key answer: {error}")))
                        })?;
                        let salt = hex::decode(&kept.salt)
                            .ok()
                            .and_then(|salt| <[u8; 32]>::try_from(salt).ok())
                            .ok_or_else(|| TxError::store(corrupt("a kept key answer's salt")))?;
                        let row: AgentKeyRow = agent_keys::table
                            .find(kept.key_id)
                            .filter(agent_keys::agent_id.eq(agent.0))
                            .select(AgentKeyRow::as_select())
                            .first(connection)
                            .await?;
                        return Ok(Answered {
                            answer: KeyMade {
                                record: row.into_record().map_err(TxError::store)?,
                                salt: Some(salt),
                            },
                            replayed: true,
                        });
                    }
                    let gone = match maker {
                        KeyHolder::Key(_) => KeyCreationError::MakerGone,
                        KeyHolder::Operator(_) => KeyCreationError::NoSuchAgent,
                    };
                    if lock_agents_keys(connection, agent).await? != Some(true) {
                        return Err(TxError::Abort(gone));
                    }
                    let now = database_now(connection).await?;
                    let live = live_count(connection, agent).await?;
                    let (grant, parent) = match maker {
                        KeyHolder::Key(maker_id) => {
                            let maker_row: Option<AgentKeyRow> = agent_keys::table
                                .find(maker_id.0)
                                .filter(agent_keys::agent_id.eq(agent.0))
                                .filter(agent_keys::revoked_at.is_null())
                                .select(AgentKeyRow::as_select())
                                .first(connection)
                                .await
                                .optional()?;
                            let maker_key = maker_row
                                .map(AgentKeyRow::into_record)
                                .transpose()
                                .map_err(TxError::store)?
                                .filter(|key| !key.grant.expired_at(now))
                                .ok_or(TxError::Abort(KeyCreationError::MakerGone))?;
                            let grant = delegate(&maker_key.grant, new.asked, now, live)
                                .map_err(|refused| TxError::Abort(refused.into()))?;
                            (grant, Some(*maker_id))
                        }
                        KeyHolder::Operator(_) => {
                            let grant = grant_by_operator(new.asked, now, live)
                                .map_err(|refused| TxError::Abort(refused.into()))?;
                            (grant, None)
                        }
                    };
                    let made = insert_key(connection, agent, &new, &grant, parent, false).await?;
                    audit_key_change(
                        connection,
                        agent,
                        maker,
                        AuditAction::KeyCreate,
                        shown(&made),
                    )
                    .await?;
                    if let Some(keyed) = &keyed {
                        let answer = json!(KeptKey {
                            key_id: made.id.0,
                            salt: hex::encode(keyed.salt),
                        });
                        remember(
                            connection,
                            agent,
                            &keyed.request,
                            Operation::KeyCreate,
                            &answer,
                        )
                        .await?;
                    }
                    Ok(Answered::new(KeyMade {
                        record: made,
                        salt: keyed.map(|keyed| keyed.salt),
                    }))
                }
                .scope_boxed()
            })
            .await
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn live(&self, agent: AgentId) -> Result<Vec<AgentKeyRecord>, StoreError> {
        let mut connection = self.database.read_connection().await?;
        let rows: Vec<AgentKeyRow> = live_keys_of!(agent)
            .order((agent_keys::created_at.asc(), agent_keys::id.asc()))
            .select(AgentKeyRow::as_select())
            .load(&mut connection)
            .await
            .map_err(from_diesel)?;
        rows.into_iter().map(AgentKeyRow::into_record).collect()
    }

    #[tracing::instrument(level = "debug", skip(self, by))]
    async fn revoke(
        &self,
        agent: AgentId,
        key: KeyId,
        by: &KeyHolder,
    ) -> Result<Option<Vec<KeyId>>, StoreError> {
        self.database
            .in_transaction(|connection| {
                async move {
                    if lock_agents_keys(connection, agent).await?.is_none() {
                        return Ok(None);
                    }
                    if let KeyHolder::Key(holder) = by {
                        if !made_from(connection, *holder, key).await? {
                            return Ok(None);
                        }
                    }
                    let revoked = revoke_tree(connection, agent, key).await?;
                    if revoked.is_empty() {
                        return Ok(None);
                    }
                    let hashes: Vec<AgentKeyHash> = revoked.iter().map(|(_, hash)| *hash).collect();
                    disable_keys_endpoints::<StoreError>(
                        connection,
                        agent,
                        &hashes,
                        REVOKED_KEY_REASON,
                    )
                    .await?;
                    let ids: Vec<KeyId> = revoked.into_iter().map(|(id, _)| id).collect();
                    let after = json!({
                        "revoked_key_ids": ids.iter().map(KeyId::to_string).collect::<Vec<_>>(),
                    });
                    audit_key_change(connection, agent, by, AuditAction::KeyRevoke, after).await?;
                    Ok(Some(ids))
                }
                .scope_boxed()
            })
            .await
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn touch(&self, key: KeyId) -> Result<(), StoreError> {
        let mut connection = self.database.connection().await?;
        let minute = || {
            diesel::dsl::sql::<diesel::sql_types::Nullable<diesel::sql_types::Timestamptz>>(
                "date_trunc('minute', now())",
            )
        };
        diesel::update(
            agent_keys::table.find(key.0).filter(
                agent_keys::last_used_at
                    .is_null()
                    .or(agent_keys::last_used_at.lt(minute())),
            ),
        )
        .set(agent_keys::last_used_at.eq(minute()))
        .execute(&mut connection)
        .await
        .map(drop)
        .map_err(from_diesel)
    }
}
