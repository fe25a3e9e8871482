//! `OperatorAccounts`: the operators, their enrollment links and the passkey registrations under
//! way; an enrollment registers the operator's passkey.

use std::time::Duration;

use async_trait::async_trait;
use diesel::dsl::now;
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{Actor, AuditAction, OperatorAccount, OperatorName, SecretHash};
use ports::{
    Ceremony, NewOperator, OperatorAccounts, OperatorStoreError, StoreError, StoredPasskey,
};
use serde_json::{json, Value};
use uuid::Uuid;

use super::{
    db_now, operator_by_id, shown, state_column, target, themselves, OperatorRow, PgOperatorStore,
};
use crate::audit::{self, AuditEntry};
use crate::clock::interval;
use crate::errors::{corrupt, from_diesel, TxError};
use crate::schema::{
    operator_ceremonies, operator_enrollments, operator_passkeys, operator_sessions, operators,
};

async fn enroll_locked(
    connection: &mut AsyncPgConnection,
    enrollment: SecretHash,
    passkey: &StoredPasskey,
    address: Option<String>,
) -> Result<OperatorAccount, TxError<OperatorStoreError>> {
    let closed = || TxError::Abort(OperatorStoreError::EnrollmentClosed);
    // The link's row, locked: two answers to one link register one passkey.
    let operator: Option<Uuid> = operator_enrollments::table
        .find(enrollment.0.to_vec())
        .filter(operator_enrollments::used_at.is_null())
        .filter(operator_enrollments::expires_at.gt(now))
        .select(operator_enrollments::operator_id)
        .for_update()
        .first(connection)
        .await
        .optional()?;
    let row = match operator {
        Some(id) => operator_by_id(connection, id).await?.ok_or_else(closed)?,
        None => return Err(closed()),
    };
    let account = row.into_account().map_err(TxError::store)?;
    if !account.is_active() {
        return Err(closed());
    }
    let inserted = diesel::insert_into(operator_passkeys::table)
        .values((
            operator_passkeys::credential_id.eq(&passkey.credential_id),
            operator_passkeys::operator_id.eq(account.id.0),
            operator_passkeys::passkey.eq(state_column(&passkey.record).map_err(TxError::store)?),
        ))
        .on_conflict_do_nothing()
        .execute(connection)
        .await?;
    if inserted == 0 {
        return Err(TxError::Abort(OperatorStoreError::PasskeyTaken));
    }
    diesel::update(operator_enrollments::table.find(enrollment.0.to_vec()))
        .set(operator_enrollments::used_at.eq(now))
        .execute(connection)
        .await?;
    audit::record(
        connection,
        AuditEntry {
            actor: &themselves(&account, address),
            action: AuditAction::Enroll,
            target: target(&account),
            before: None,
            after: Some(json!({"passkey_registered": true})),
            reason: None,
        },
    )
    .await?;
    Ok(account)
}

#[async_trait]
impl OperatorAccounts for PgOperatorStore {
    #[tracing::instrument(level = "debug", skip_all, fields(name = %operator.name))]
    async fn invite(
        &self,
        operator: NewOperator,
        actor: &Actor,
    ) -> Result<OperatorAccount, OperatorStoreError> {
        self.database
            .in_transaction(|connection| {
                async move {
                    let row: Option<OperatorRow> = diesel::insert_into(operators::table)
                        .values((
                            operators::id.eq(operator.id.0),
                            operators::name.eq(operator.name.as_str()),
                            operators::role.eq(operator.role.as_str()),
                        ))
                        .on_conflict_do_nothing()
                        .returning(OperatorRow::as_returning())
                        .get_result(connection)
                        .await
                        .optional()?;
                    let account = row
                        .ok_or_else(|| {
                            TxError::Abort(OperatorStoreError::NameTaken(operator.name.clone()))
                        })?
                        .into_account()
                        .map_err(TxError::store)?;
                    diesel::insert_into(operator_enrollments::table)
                        .values((
                            operator_enrollments::token_hash.eq(operator.enrollment.0.to_vec()),
                            operator_enrollments::operator_id.eq(account.id.0),
                            operator_enrollments::expires_at
                                .eq(db_now() + interval(operator.enrollment_ttl)),
                        ))
                        .execute(connection)
                        .await?;
                    audit::record(
                        connection,
                        AuditEntry {
                            actor,
                            action: AuditAction::Invite,
                            target: target(&account),
                            before: None,
                            after: Some(shown(&account)),
                            reason: None,
                        },
                    )
                    .await?;
                    Ok(account)
                }
                .scope_boxed()
            })
            .await
    }

    async fn list(&self) -> Result<Vec<OperatorAccount>, StoreError> {
        let mut connection = self.database.connection().await?;
        operators::table
            .select(OperatorRow::as_select())
            .order((operators::created_at, operators::id))
            .load(&mut connection)
            .await
            .map_err(from_diesel)?
            .into_iter()
            .map(OperatorRow::into_account)
            .collect()
    }

    #[tracing::instrument(level = "debug", skip(self, actor))]
    async fn disable(
        &self,
        name: &OperatorName,
        actor: &Actor,
    ) -> Result<Option<OperatorAccount>, StoreError> {
        self.database
            .in_transaction(|connection| {
                async move {
                    let Some(row) = operators::table
                        .filter(operators::name.eq(name.as_str()))
                        .select(OperatorRow::as_select())
                        .for_update()
                        .first(connection)
                        .await
                        .optional()?
                    else {
                        return Ok(None);
                    };
                    let before = row.into_account().map_err(TxError::store)?;
                    if !before.is_active() {
                        return Ok(Some(before));
                    }
                    let after = diesel::update(operators::table.find(before.id.0))
                        .set(operators::disabled_at.eq(now))
                        .returning(OperatorRow::as_returning())
                        .get_result(connection)
                        .await?
                        .into_account()
                        .map_err(TxError::store)?;
                    // Every session ends with the operator, in the same commit.
                    diesel::delete(
                        operator_sessions::table
                            .filter(operator_sessions::operator_id.eq(before.id.0)),
                    )
                    .execute(connection)
                    .await?;
                    audit::record(
                        connection,
                        AuditEntry {
                            actor,
                            action: AuditAction::Disable,
                            target: target(&after),
                            before: Some(shown(&before)),
                            after: Some(shown(&after)),
                            reason: None,
                        },
                    )
                    .await?;
                    Ok(Some(after))
                }
                .scope_boxed()
            })
            .await
    }

    async fn enrollment(&self, token: SecretHash) -> Result<Option<OperatorAccount>, StoreError> {
        let mut connection = self.database.connection().await?;
        let row: Option<OperatorRow> = operator_enrollments::table
            .inner_join(operators::table)
            .filter(operator_enrollments::token_hash.eq(token.0.to_vec()))
            .filter(operator_enrollments::used_at.is_null())
            .filter(operator_enrollments::expires_at.gt(now))
            .filter(operators::disabled_at.is_null())
            .select(OperatorRow::as_select())
            .first(&mut connection)
            .await
            .optional()
            .map_err(from_diesel)?;
        row.map(OperatorRow::into_account).transpose()
    }

    async fn begin_ceremony(
        &self,
        ceremony: Ceremony,
        expires_in: Duration,
    ) -> Result<(), StoreError> {
        let state = state_column(&ceremony.state)?;
        let mut connection = self.database.connection().await?;
        // Registrations nobody finished go as new ones begin: each needs an open enrollment
        // link, so their count stays that of the links' last few minutes.
        diesel::delete(operator_ceremonies::table.filter(operator_ceremonies::expires_at.lt(now)))
            .execute(&mut connection)
            .await
            .map_err(from_diesel)?;
        diesel::insert_into(operator_ceremonies::table)
            .values((
                operator_ceremonies::id.eq(ceremony.id),
                operator_ceremonies::enrollment.eq(ceremony.enrollment.0.to_vec()),
                operator_ceremonies::state.eq(state),
                operator_ceremonies::expires_at.eq(db_now() + interval(expires_in)),
            ))
            .execute(&mut connection)
            .await
            .map_err(from_diesel)?;
        Ok(())
    }

    async fn take_ceremony(&self, id: Uuid) -> Result<Option<Ceremony>, StoreError> {
        let mut connection = self.database.connection().await?;
        let taken: Option<(Vec<u8>, Value)> = diesel::delete(
            operator_ceremonies::table
                .find(id)
                .filter(operator_ceremonies::expires_at.gt(now)),
        )
        .returning((operator_ceremonies::enrollment, operator_ceremonies::state))
        .get_result(&mut connection)
        .await
        .optional()
        .map_err(from_diesel)?;
        let Some((enrollment, state)) = taken else {
            return Ok(None);
        };
        Ok(Some(Ceremony {
            id,
            enrollment: SecretHash(
                enrollment
                    .try_into()
                    .map_err(|_| corrupt("an enrollment's hash of another length"))?,
            ),
            state: state.to_string(),
        }))
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn enroll(
        &self,
        enrollment: SecretHash,
        passkey: StoredPasskey,
        address: Option<String>,
    ) -> Result<OperatorAccount, OperatorStoreError> {
        self.database
            .in_transaction(|connection| {
                async move { enroll_locked(connection, enrollment, &passkey, address).await }
                    .scope_boxed()
            })
            .await
    }
}
