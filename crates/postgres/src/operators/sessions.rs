//! `ConsoleSessions`: passkey sign-ins (the key sign-in challenges are sealed with, the challenges
//! used, the passkeys by credential, failed sign-ins per passkey) and the sessions they open.

use std::time::Duration;

use async_trait::async_trait;
use diesel::dsl::now;
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::RunQueryDsl;
use domain::{
    AuditAction, AuditTarget, OperatorAccount, OperatorId, RateDecision, RateLimit, SecretHash,
    SESSION_IDLE_TIMEOUT,
};
use ports::{
    ConsoleSessions, FailedSignIn, NewSession, SessionOpening, SessionRecord, StoreError,
    StoredPasskey, UsedChallenge,
};
use serde_json::Value;
use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::{
    db_now, operator_by_id, state_column, target, themselves, OperatorRow, PgOperatorStore,
};
use crate::audit::{self, AuditEntry};
use crate::clock::{duration_from_secs, interval};
use crate::errors::{corrupt, from_diesel, TxError};
use crate::limits::{lock_bucket, take_locked};
use crate::schema::{
    console_challenge_key, console_used_challenges, operator_passkeys, operator_sessions, operators,
};

/// The bucket of failed sign-ins, per passkey.
const FAILED_SIGN_IN_ACTION: &str = "console_failed_sign_in";

/// The bucket subject of a passkey: the first 16 bytes of its credential id's SHA-256.
fn passkey_subject(credential_id: &[u8]) -> Uuid {
    let digest = Sha256::digest(credential_id);
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    Uuid::from_bytes(bytes)
}

#[async_trait]
impl ConsoleSessions for PgOperatorStore {
    async fn challenge_key(&self, drawn: [u8; 32]) -> Result<[u8; 32], StoreError> {
        let mut connection = self.database.connection().await?;
        // The first instance's draw is kept; every other reads it back.
        diesel::insert_into(console_challenge_key::table)
            .values(console_challenge_key::key.eq(drawn.to_vec()))
            .on_conflict_do_nothing()
            .execute(&mut connection)
            .await
            .map_err(from_diesel)?;
        let kept: Vec<u8> = console_challenge_key::table
            .select(console_challenge_key::key)
            .first(&mut connection)
            .await
            .map_err(from_diesel)?;
        kept.try_into()
            .map_err(|_| corrupt("a challenge key of another length"))
    }

    async fn failed_sign_ins(
        &self,
        credential_id: &[u8],
        limit: RateLimit,
    ) -> Result<RateDecision, StoreError> {
        let subject = passkey_subject(credential_id);
        let mut connection = self.database.connection().await?;
        let bucket = lock_bucket(&mut connection, subject, FAILED_SIGN_IN_ACTION)
            .await
            .map_err(from_diesel)?;
        Ok(match bucket {
            Some((tokens, elapsed)) => limit.take(tokens, duration_from_secs(elapsed)).1,
            None => RateDecision::Allowed,
        })
    }

    async fn count_failed_sign_in(
        &self,
        credential_id: &[u8],
        limit: RateLimit,
        failure: FailedSignIn,
    ) -> Result<(), StoreError> {
        let subject = passkey_subject(credential_id);
        self.database
            .in_transaction(|connection| {
                async move {
                    take_locked(connection, subject, FAILED_SIGN_IN_ACTION, limit).await?;
                    audit::record(
                        connection,
                        AuditEntry {
                            actor: &failure.actor,
                            action: AuditAction::LoginFailed,
                            target: Some(
                                AuditTarget::Operator(&failure.actor.operator).to_string(),
                            ),
                            before: None,
                            after: None,
                            reason: Some(&failure.reason),
                        },
                    )
                    .await?;
                    Ok(())
                }
                .scope_boxed()
            })
            .await
    }

    async fn passkey(
        &self,
        credential_id: &[u8],
    ) -> Result<Option<(OperatorAccount, StoredPasskey)>, StoreError> {
        let mut connection = self.database.connection().await?;
        let row: Option<(OperatorRow, Value)> = operator_passkeys::table
            .inner_join(operators::table)
            .filter(operator_passkeys::credential_id.eq(credential_id))
            .select((OperatorRow::as_select(), operator_passkeys::passkey))
            .first(&mut connection)
            .await
            .optional()
            .map_err(from_diesel)?;
        row.map(|(operator, passkey)| {
            Ok((
                operator.into_account()?,
                StoredPasskey {
                    credential_id: credential_id.to_vec(),
                    record: passkey.to_string(),
                },
            ))
        })
        .transpose()
    }

    #[tracing::instrument(level = "debug", skip_all, fields(operator = %operator))]
    async fn open_session(
        &self,
        operator: OperatorId,
        passkey: StoredPasskey,
        session: NewSession,
        challenge: UsedChallenge,
        address: Option<String>,
    ) -> Result<SessionOpening, StoreError> {
        self.database
            .in_transaction(|connection| {
                async move {
                    // The challenge is taken first: of two answers to one, the second finds it
                    // used (or waits for the first's commit and then does).
                    diesel::delete(
                        console_used_challenges::table
                            .filter(console_used_challenges::kept_until.lt(now)),
                    )
                    .execute(connection)
                    .await?;
                    let first_use = diesel::insert_into(console_used_challenges::table)
                        .values((
                            console_used_challenges::id.eq(challenge.id),
                            console_used_challenges::kept_until.eq(challenge.kept_until),
                        ))
                        .on_conflict_do_nothing()
                        .execute(connection)
                        .await?
                        == 1;
                    if !first_use {
                        return Ok(SessionOpening::ChallengeUsed);
                    }
                    // The operator's row, shared-locked: a disable waits for this sign-in, or
                    // this sign-in finds the operator disabled.
                    let row: Option<OperatorRow> = operators::table
                        .find(operator.0)
                        .filter(operators::disabled_at.is_null())
                        .select(OperatorRow::as_select())
                        .for_share()
                        .first(connection)
                        .await
                        .optional()?;
                    let Some(row) = row else {
                        return Ok(SessionOpening::OperatorDisabled);
                    };
                    let account = row.into_account().map_err(TxError::store)?;
                    diesel::update(operator_passkeys::table.find(&passkey.credential_id))
                        .set((
                            operator_passkeys::passkey
                                .eq(state_column(&passkey.record).map_err(TxError::store)?),
                            operator_passkeys::last_used_at.eq(now),
                        ))
                        .execute(connection)
                        .await?;
                    // The operator's sessions idle past the timeout go as a new one opens.
                    diesel::delete(
                        operator_sessions::table
                            .filter(operator_sessions::operator_id.eq(operator.0))
                            .filter(
                                operator_sessions::last_seen_at
                                    .lt(db_now() - interval(SESSION_IDLE_TIMEOUT)),
                            ),
                    )
                    .execute(connection)
                    .await?;
                    diesel::insert_into(operator_sessions::table)
                        .values((
                            operator_sessions::token_hash.eq(session.token.0.to_vec()),
                            operator_sessions::operator_id.eq(operator.0),
                            operator_sessions::csrf_token.eq(&session.csrf),
                            operator_sessions::address.eq(address.as_deref()),
                        ))
                        .execute(connection)
                        .await?;
                    audit::record(
                        connection,
                        AuditEntry {
                            actor: &themselves(&account, address.clone()),
                            action: AuditAction::Login,
                            target: target(&account),
                            before: None,
                            after: None,
                            reason: None,
                        },
                    )
                    .await?;
                    Ok(SessionOpening::Opened)
                }
                .scope_boxed()
            })
            .await
    }

    async fn session(
        &self,
        token: SecretHash,
        idle: Duration,
        touch: bool,
    ) -> Result<Option<SessionRecord>, StoreError> {
        let mut connection = self.database.connection().await?;
        let live_sessions = operator_sessions::table
            .filter(operator_sessions::token_hash.eq(token.0.to_vec()))
            .filter(operator_sessions::last_seen_at.gt(db_now() - interval(idle)))
            .filter(
                operator_sessions::operator_id.eq_any(
                    operators::table
                        .filter(operators::disabled_at.is_null())
                        .select(operators::id),
                ),
            );
        let live: Option<(Uuid, String)> = if touch {
            diesel::update(live_sessions)
                .set(operator_sessions::last_seen_at.eq(now))
                .returning((
                    operator_sessions::operator_id,
                    operator_sessions::csrf_token,
                ))
                .get_result(&mut connection)
                .await
        } else {
            live_sessions
                .select((
                    operator_sessions::operator_id,
                    operator_sessions::csrf_token,
                ))
                .first(&mut connection)
                .await
        }
        .optional()
        .map_err(from_diesel)?;
        let Some((operator, csrf)) = live else {
            // An idle session, or one whose operator was disabled, is closed for good.
            diesel::delete(operator_sessions::table.find(token.0.to_vec()))
                .execute(&mut connection)
                .await
                .map_err(from_diesel)?;
            return Ok(None);
        };
        let row = operator_by_id(&mut connection, operator)
            .await
            .map_err(from_diesel)?
            .ok_or_else(|| corrupt(format!("session of operator {operator}, who is gone")))?;
        Ok(Some(SessionRecord {
            operator: row.into_account()?,
            csrf,
        }))
    }

    async fn close_session(
        &self,
        token: SecretHash,
        address: Option<String>,
    ) -> Result<(), StoreError> {
        self.database
            .in_transaction(|connection| {
                async move {
                    let closed: Option<Uuid> =
                        diesel::delete(operator_sessions::table.find(token.0.to_vec()))
                            .returning(operator_sessions::operator_id)
                            .get_result(connection)
                            .await
                            .optional()?;
                    let Some(operator) = closed else {
                        return Ok(());
                    };
                    let Some(row) = operator_by_id(connection, operator).await? else {
                        return Ok(());
                    };
                    let account = row.into_account().map_err(TxError::store)?;
                    audit::record(
                        connection,
                        AuditEntry {
                            actor: &themselves(&account, address),
                            action: AuditAction::Logout,
                            target: target(&account),
                            before: None,
                            after: None,
                            reason: None,
                        },
                    )
                    .await?;
                    Ok(())
                }
                .scope_boxed()
            })
            .await
    }
}
