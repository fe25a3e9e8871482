//! `OperatorStore`: the console's operators, their enrollment links and passkeys, sessions, the
//! WebAuthn ceremonies under way, and the audit log (migration 000021). Every operator action
//! records its audit row in its own transaction.

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
    AuditPage, Ceremony, CeremonyKind, NewOperator, NewSession, OperatorStore, OperatorStoreError,
    SessionRecord, StoreError, StoredPasskey,
};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::audit::{self, AuditEntry, AuditRow};
use crate::clock::interval;
use crate::database::Database;
use crate::errors::{corrupt, from_diesel, TxError};
use crate::limits::take_locked;
use crate::schema::{
    operator_audit, operator_ceremonies, operator_enrollments, operator_passkeys,
    operator_sessions, operators,
};

/// The bucket of sign-in attempts, per client address.
const SIGN_IN_ACTION: &str = "console_sign_in";

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

/// The bucket subject of a client address: the first 16 bytes of its SHA-256.
fn address_subject(address: &str) -> Uuid {
    let digest = Sha256::digest(address.as_bytes());
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
        let (kind, enrollment) = match ceremony.kind {
            CeremonyKind::Registration { enrollment } => {
                ("registration", Some(enrollment.0.to_vec()))
            }
            CeremonyKind::Authentication => ("authentication", None),
        };
        let state = state_column(&ceremony.state)?;
        let mut connection = self.database.connection().await?;
        // Ceremonies nobody finished go as new ones begin: their count stays that of the last
        // few minutes' beginnings, which sign-in's rate bounds.
        diesel::delete(operator_ceremonies::table.filter(operator_ceremonies::expires_at.lt(now)))
            .execute(&mut connection)
            .await
            .map_err(from_diesel)?;
        diesel::insert_into(operator_ceremonies::table)
            .values((
                operator_ceremonies::id.eq(ceremony.id),
                operator_ceremonies::kind.eq(kind),
                operator_ceremonies::enrollment.eq(enrollment),
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
        let taken: Option<(String, Option<Vec<u8>>, Value)> = diesel::delete(
            operator_ceremonies::table
                .find(id)
                .filter(operator_ceremonies::expires_at.gt(now)),
        )
        .returning((
            operator_ceremonies::kind,
            operator_ceremonies::enrollment,
            operator_ceremonies::state,
        ))
        .get_result(&mut connection)
        .await
        .optional()
        .map_err(from_diesel)?;
        let Some((kind, enrollment, state)) = taken else {
            return Ok(None);
        };
        let kind = match (kind.as_str(), enrollment) {
            ("registration", Some(enrollment)) => CeremonyKind::Registration {
                enrollment: SecretHash(
                    enrollment
                        .try_into()
                        .map_err(|_| corrupt("an enrollment's hash of another length"))?,
                ),
            },
            ("authentication", None) => CeremonyKind::Authentication,
            (kind, _) => return Err(corrupt(format!("a ceremony of kind {kind:?}"))),
        };
        Ok(Some(Ceremony {
            id,
            kind,
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
        address: Option<String>,
    ) -> Result<bool, StoreError> {
        self.database
            .in_transaction(|connection| {
                async move {
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
                        return Ok(false);
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
                    Ok(true)
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

    async fn take_sign_in_attempt(
        &self,
        address: &str,
        limit: RateLimit,
    ) -> Result<RateDecision, StoreError> {
        let subject = address_subject(address);
        self.database
            .in_transaction(|connection| {
                async move { Ok(take_locked(connection, subject, SIGN_IN_ACTION, limit).await?) }
                    .scope_boxed()
            })
            .await
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
