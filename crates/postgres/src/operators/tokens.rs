//! `OperatorTokens`: operators' personal tokens for the control plane, at most one live per
//! operator, kept only hashed; each issue, revocation and use is audited.

use async_trait::async_trait;
use diesel::dsl::now;
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{Actor, AuditAction, OperatorAccount, OperatorId, OperatorName, SecretHash};
use ports::{OperatorTokens, StoreError, TokenRecord};
use serde_json::json;
use time::OffsetDateTime;
use uuid::Uuid;

use super::{target, OperatorRow, PgOperatorStore};
use crate::audit::{self, AuditEntry};
use crate::errors::{from_diesel, TxError};
use crate::schema::{operator_tokens, operators};

/// Revokes the operator's live personal token, if any: whether there was one.
async fn revoke_live(
    connection: &mut AsyncPgConnection,
    operator: OperatorId,
) -> Result<bool, diesel::result::Error> {
    Ok(diesel::update(
        operator_tokens::table
            .filter(operator_tokens::operator_id.eq(operator.0))
            .filter(operator_tokens::revoked_at.is_null()),
    )
    .set(operator_tokens::revoked_at.eq(now))
    .execute(connection)
    .await?
        > 0)
}

/// Why a token's use records nothing: it proves no active operator (its mark of use is rolled
/// back with the rest), or the store failed.
enum UseRefused {
    Nothing,
    Store(StoreError),
}

impl From<StoreError> for UseRefused {
    fn from(error: StoreError) -> Self {
        Self::Store(error)
    }
}

#[async_trait]
impl OperatorTokens for PgOperatorStore {
    #[tracing::instrument(level = "debug", skip_all, fields(operator = %operator))]
    async fn issue_token(
        &self,
        operator: OperatorId,
        token: SecretHash,
        actor: &Actor,
    ) -> Result<bool, StoreError> {
        self.database
            .in_transaction(|connection| {
                async move {
                    // Shared with a disable: it waits for this issue, or this finds it done.
                    let row: Option<OperatorRow> = operators::table
                        .find(operator.0)
                        .filter(operators::disabled_at.is_null())
                        .select(OperatorRow::as_select())
                        .for_share()
                        .first(connection)
                        .await
                        .optional()?;
                    let Some(row) = row else {
                        return Ok(false);
                    };
                    let account = row.into_account().map_err(TxError::store)?;
                    let replaced = revoke_live(connection, operator).await?;
                    diesel::insert_into(operator_tokens::table)
                        .values((
                            operator_tokens::token_hash.eq(token.0.to_vec()),
                            operator_tokens::operator_id.eq(operator.0),
                        ))
                        .execute(connection)
                        .await?;
                    audit::record(
                        connection,
                        AuditEntry {
                            actor,
                            action: AuditAction::TokenIssue,
                            target: target(&account),
                            before: Some(json!({"live_token": replaced})),
                            after: Some(json!({"live_token": true})),
                            reason: None,
                        },
                    )
                    .await?;
                    Ok(true)
                }
                .scope_boxed()
            })
            .await
    }

    #[tracing::instrument(level = "debug", skip(self, actor))]
    async fn revoke_token(
        &self,
        name: &OperatorName,
        actor: &Actor,
    ) -> Result<Option<bool>, StoreError> {
        self.database
            .in_transaction(|connection| {
                async move {
                    let Some(row) = operators::table
                        .filter(operators::name.eq(name.as_str()))
                        .select(OperatorRow::as_select())
                        .first(connection)
                        .await
                        .optional()?
                    else {
                        return Ok(None);
                    };
                    let account = row.into_account().map_err(TxError::store)?;
                    if !revoke_live(connection, account.id).await? {
                        return Ok(Some(false));
                    }
                    audit::record(
                        connection,
                        AuditEntry {
                            actor,
                            action: AuditAction::TokenRevoke,
                            target: target(&account),
                            before: Some(json!({"live_token": true})),
                            after: Some(json!({"live_token": false})),
                            reason: None,
                        },
                    )
                    .await?;
                    Ok(Some(true))
                }
                .scope_boxed()
            })
            .await
    }

    async fn token_of(&self, operator: OperatorId) -> Result<Option<TokenRecord>, StoreError> {
        let mut connection = self.database.connection().await?;
        let live: Option<(OffsetDateTime, Option<OffsetDateTime>)> = operator_tokens::table
            .filter(operator_tokens::operator_id.eq(operator.0))
            .filter(operator_tokens::revoked_at.is_null())
            .select((operator_tokens::created_at, operator_tokens::last_used_at))
            .first(&mut connection)
            .await
            .optional()
            .map_err(from_diesel)?;
        Ok(live.map(|(created_at, last_used_at)| TokenRecord {
            created_at,
            last_used_at,
        }))
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn use_token(
        &self,
        token: SecretHash,
        target: Option<String>,
    ) -> Result<Option<OperatorAccount>, StoreError> {
        self.database
            .in_transaction(|connection| {
                async move {
                    let used: Option<Uuid> = diesel::update(
                        operator_tokens::table
                            .find(token.0.to_vec())
                            .filter(operator_tokens::revoked_at.is_null()),
                    )
                    .set(operator_tokens::last_used_at.eq(now))
                    .returning(operator_tokens::operator_id)
                    .get_result(connection)
                    .await
                    .optional()?;
                    let Some(operator) = used else {
                        return Ok(None);
                    };
                    // Shared with a disable, as a sign-in is: it waits for this use, or this
                    // finds the operator disabled and proves nothing.
                    let row: Option<OperatorRow> = operators::table
                        .find(operator)
                        .filter(operators::disabled_at.is_null())
                        .select(OperatorRow::as_select())
                        .for_share()
                        .first(connection)
                        .await
                        .optional()?;
                    let Some(row) = row else {
                        return Err(TxError::Abort(UseRefused::Nothing));
                    };
                    let account = row.into_account().map_err(TxError::store)?;
                    audit::record(
                        connection,
                        AuditEntry {
                            actor: &Actor::local(account.principal()),
                            action: AuditAction::TokenUse,
                            target,
                            before: None,
                            after: None,
                            reason: None,
                        },
                    )
                    .await?;
                    Ok(Some(account))
                }
                .scope_boxed()
            })
            .await
            .or_else(|error| match error {
                UseRefused::Nothing => Ok(None),
                UseRefused::Store(store) => Err(store),
            })
    }
}
