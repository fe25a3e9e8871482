//! `OperatorStore`: the console's operators, their enrollment links and passkeys, sessions, the
//! passkey registrations under way, the key sign-in challenges are sealed with and the
//! challenges used, failed sign-ins per passkey, personal tokens, and the audit log (migrations
//! 000021 and 000031). Every operator action records its audit row in its own transaction.

use std::time::Duration;

use async_trait::async_trait;
use diesel::dsl::now;
use diesel::prelude::*;
use diesel::sql_types::Timestamptz;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{
    Actor, AuditAction, AuditRecord, AuditTarget, OperatorAccount, OperatorId, OperatorName,
    OperatorRole, RateDecision, RateLimit, SecretHash, SESSION_IDLE_TIMEOUT,
};
use ports::{
    AuditPage, Ceremony, NewOperator, NewSession, OperatorStore, OperatorStoreError,
    SessionOpening, SessionRecord, StoreError, StoredPasskey, TokenRecord, UsedChallenge,
};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::audit::{self, AuditEntry, AuditRow};
use crate::clock::{duration_from_secs, interval};
use crate::database::Database;
use crate::errors::{corrupt, from_diesel, TxError};
use crate::limits::{lock_bucket, take_locked};
use crate::schema::{
    console_challenge_key, console_used_challenges, operator_audit, operator_ceremonies,
    operator_enrollments, operator_passkeys, operator_sessions, operator_tokens, operators,
};

/// The bucket of failed sign-ins, per passkey.
const FAILED_SIGN_IN_ACTION: &str = "console_failed_sign_in";

pub struct PgOperatorStore {
    database: Database,
}

impl PgOperatorStore {
    pub fn new(database: Database) -> Self {
        Self { database }
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = operators)]
struct OperatorRow {
    id: Uuid,
    name: String,
    role: String,
    created_at: OffsetDateTime,
    disabled_at: Option<OffsetDateTime>,
}

impl OperatorRow {
    fn into_account(self) -> Result<OperatorAccount, StoreError> {
        Ok(OperatorAccount {
            id: OperatorId(self.id),
            name: OperatorName::parse(&self.name).map_err(corrupt)?,
            role: OperatorRole::parse(&self.role).map_err(corrupt)?,
            created_at: self.created_at,
            disabled_at: self.disabled_at,
        })
    }
}

/// What the audit log shows of an operator.
fn shown(account: &OperatorAccount) -> Value {
    json!({
        "name": account.name.as_str(),
        "role": account.role.as_str(),
        "disabled": !account.is_active(),
    })
}

fn target(account: &OperatorAccount) -> Option<String> {
    Some(AuditTarget::Operator(&account.principal()).to_string())
}

/// The operator who acts for themselves, from `address`.
fn themselves(account: &OperatorAccount, address: Option<String>) -> Actor {
    Actor {
        operator: account.principal(),
        address,
    }
}

fn state_column(state: &str) -> Result<Value, StoreError> {
    serde_json::from_str(state).map_err(|error| corrupt(format!("ceremony state: {error}")))
}

/// The database's clock, as a time with its zone, to move by an interval.
fn db_now() -> diesel::dsl::AsExprOf<now, Timestamptz> {
    now.into_sql::<Timestamptz>()
}

/// The bucket subject of a passkey: the first 16 bytes of its credential id's SHA-256.
fn passkey_subject(credential_id: &[u8]) -> Uuid {
    let digest = Sha256::digest(credential_id);
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    Uuid::from_bytes(bytes)
}

async fn operator_by_id(
    connection: &mut AsyncPgConnection,
    id: Uuid,
) -> Result<Option<OperatorRow>, diesel::result::Error> {
    operators::table
        .find(id)
        .select(OperatorRow::as_select())
        .first(connection)
        .await
        .optional()
}

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
impl OperatorStore for PgOperatorStore {
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
    ) -> Result<(), StoreError> {
        let subject = passkey_subject(credential_id);
        self.database
            .in_transaction(|connection| {
                async move {
                    take_locked(connection, subject, FAILED_SIGN_IN_ACTION, limit).await?;
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

    async fn audit(&self, page: AuditPage) -> Result<Vec<(Uuid, AuditRecord)>, StoreError> {
        let mut connection = self.database.connection().await?;
        // A page an operator asks for: boxing (and re-planning) is fine off the request path.
        let mut query = operator_audit::table
            .select(AuditRow::as_select())
            .order((operator_audit::at.desc(), operator_audit::id.desc()))
            .limit(i64::try_from(page.limit).unwrap_or(i64::MAX))
            .into_boxed();
        if let Some((at, id)) = page.before {
            query = query.filter(
                operator_audit::at
                    .lt(at)
                    .or(operator_audit::at.eq(at).and(operator_audit::id.lt(id))),
            );
        }
        if let Some(target) = page.target {
            query = query.filter(operator_audit::target.eq(target));
        }
        let rows: Vec<AuditRow> = query.load(&mut connection).await.map_err(from_diesel)?;
        rows.into_iter().map(AuditRow::into_record).collect()
    }
}
