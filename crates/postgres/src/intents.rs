//! `IntentStore` on PostgreSQL. Admission locks the wallet row, so every check-and-insert of one
//! wallet runs alone, whichever server instance handles the request.

use std::time::Duration;

use async_trait::async_trait;
use bigdecimal::BigDecimal;
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::sql_types::{Bool, Interval, Timestamptz};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::{AgentId, CursorPosition, IntentEvent, IntentStatus, U256};
use ports::{
    Admission, AdmissionCheck, AdmissionError, IntentFilter, IntentStore, NewTransferIntent,
    SignedTransfer, StoreError, SubmissionClaim, SubmissionError, SubmittedIntent,
    TransferIntentRecord, TransitionError,
};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::database::Database;
use crate::errors::{corrupt, from_diesel, TxError};
use crate::rows::{
    address_column, numeric_column, u256_from_numeric, SpendPolicyRow, TransferIntentRow,
};
use crate::schema::{spend_policies, transfer_intents, wallets};

/// Statuses whose amount still counts against the daily limit.
fn holding_statuses() -> Vec<&'static str> {
    IntentStatus::ALL
        .into_iter()
        .filter(|status| status.holds_daily_allowance())
        .map(IntentStatus::as_str)
        .collect()
}

pub struct PgIntentStore {
    database: Database,
}

impl PgIntentStore {
    pub fn new(database: Database) -> Self {
        Self { database }
    }
}

impl From<TxError<AdmissionError>> for AdmissionError {
    fn from(error: TxError<AdmissionError>) -> Self {
        match error {
            TxError::Diesel(error) => AdmissionError::Store(from_diesel(error)),
            TxError::Abort(error) => error,
        }
    }
}

impl From<TxError<TransitionError>> for TransitionError {
    fn from(error: TxError<TransitionError>) -> Self {
        match error {
            TxError::Diesel(error) => TransitionError::Store(from_diesel(error)),
            TxError::Abort(error) => error,
        }
    }
}

fn intent_record<E: From<StoreError>>(
    row: TransferIntentRow,
) -> Result<TransferIntentRecord, TxError<E>> {
    row.into_record()
        .map_err(|error| TxError::Abort(error.into()))
}

async fn admit_locked(
    connection: &mut AsyncPgConnection,
    intent: &NewTransferIntent,
    window: Duration,
    check: &AdmissionCheck,
) -> Result<Admission, TxError<AdmissionError>> {
    let Some(wallet_id) = wallets::table
        .filter(wallets::agent_id.eq(intent.agent_id.0))
        .select(wallets::id)
        .for_update()
        .first::<Uuid>(connection)
        .await
        .optional()?
    else {
        return Err(TxError::Abort(AdmissionError::NoWallet));
    };
    if let Some(key) = &intent.idempotency_key {
        let earlier = transfer_intents::table
            .filter(transfer_intents::agent_id.eq(intent.agent_id.0))
            .filter(transfer_intents::idempotency_key.eq(key))
            .select(TransferIntentRow::as_select())
            .first(connection)
            .await
            .optional()?;
        if let Some(earlier) = earlier {
            let earlier = intent_record(earlier)?;
            return match earlier.matches(intent) {
                true => Ok(Admission::Replayed(earlier)),
                false => Err(TxError::Abort(AdmissionError::IdempotencyMismatch {
                    original: earlier.id,
                })),
            };
        }
    }
    let policy = spend_policies::table
        .filter(spend_policies::wallet_id.eq(wallet_id))
        .select(SpendPolicyRow::as_select())
        .first(connection)
        .await?
        .into_record()
        .map_err(|error| TxError::Abort(error.into()))?;
    let window_open = sql::<Bool>("transfer_intents.created_at > now() - ")
        .bind::<diesel::sql_types::Interval, _>(
        diesel::data_types::PgInterval::from_microseconds(
            i64::try_from(window.as_micros()).unwrap_or(i64::MAX),
        ),
    );
    let held: Option<BigDecimal> = transfer_intents::table
        .filter(transfer_intents::wallet_id.eq(wallet_id))
        .filter(transfer_intents::status.eq_any(holding_statuses()))
        .filter(window_open)
        .select(diesel::dsl::sum(transfer_intents::amount_atomic))
        .first(connection)
        .await?;
    let held = match held {
        Some(total) => u256_from_numeric(&total).map_err(|error| TxError::Abort(error.into()))?,
        None => U256::ZERO,
    };
    check(&policy, held).map_err(|violation| TxError::Abort(AdmissionError::Refused(violation)))?;
    let row = diesel::insert_into(transfer_intents::table)
        .values((
            transfer_intents::id.eq(intent.id),
            transfer_intents::agent_id.eq(intent.agent_id.0),
            transfer_intents::wallet_id.eq(wallet_id),
            transfer_intents::status.eq(IntentStatus::PendingConfirmation.as_str()),
            transfer_intents::asset.eq(&intent.asset),
            transfer_intents::chain.eq(&intent.chain),
            transfer_intents::token_address.eq(intent.token_address.as_ref().map(address_column)),
            transfer_intents::recipient_address.eq(address_column(&intent.recipient)),
            transfer_intents::amount_atomic.eq(numeric_column(&intent.amount)),
            transfer_intents::idempotency_key.eq(intent.idempotency_key.as_deref()),
        ))
        .returning(TransferIntentRow::as_returning())
        .get_result(connection)
        .await?;
    Ok(Admission::Created(intent_record(row)?))
}

async fn transition_locked(
    connection: &mut AsyncPgConnection,
    id: Uuid,
    event: IntentEvent,
    reason: Option<String>,
) -> Result<TransferIntentRecord, TxError<TransitionError>> {
    let current = transfer_intents::table
        .find(id)
        .select(TransferIntentRow::as_select())
        .for_update()
        .first(connection)
        .await
        .optional()?
        .ok_or(TxError::Abort(TransitionError::NotFound(id)))?;
    let current = intent_record(current)?;
    let next = current
        .status
        .apply(event)
        .map_err(|refused| TxError::Abort(TransitionError::Refused(refused)))?;
    let keeps_reason = matches!(event, IntentEvent::Reject | IntentEvent::Fail);
    let row = diesel::update(transfer_intents::table.find(id))
        .set((
            transfer_intents::status.eq(next.as_str()),
            transfer_intents::updated_at.eq(diesel::dsl::now),
            transfer_intents::failure_reason.eq(if keeps_reason {
                reason
            } else {
                current.failure_reason
            }),
            transfer_intents::confirmed_at.eq(match event {
                IntentEvent::Confirm => Some(OffsetDateTime::now_utc()),
                _ => current.confirmed_at,
            }),
        ))
        .returning(TransferIntentRow::as_returning())
        .get_result(connection)
        .await?;
    intent_record(row)
}

/// A span as a PostgreSQL interval, for comparisons on the database's clock (the clock that
/// stamps `created_at`), so instances with drifting clocks agree.
fn interval(span: Duration) -> diesel::data_types::PgInterval {
    diesel::data_types::PgInterval::from_microseconds(
        i64::try_from(span.as_micros()).unwrap_or(i64::MAX),
    )
}

async fn expire_locked(
    connection: &mut AsyncPgConnection,
    pending_for: Duration,
    limit: usize,
) -> Result<Vec<TransferIntentRecord>, TxError<StoreError>> {
    let stale: Vec<TransferIntentRow> = transfer_intents::table
        .filter(transfer_intents::status.eq(IntentStatus::PendingConfirmation.as_str()))
        .filter(
            sql::<Bool>("transfer_intents.created_at < now() - ")
                .bind::<diesel::sql_types::Interval, _>(interval(pending_for)),
        )
        .select(TransferIntentRow::as_select())
        .order(transfer_intents::created_at.asc())
        .limit(i64::try_from(limit).unwrap_or(i64::MAX))
        .for_update()
        .skip_locked()
        .load(connection)
        .await?;
    let mut expired = Vec::with_capacity(stale.len());
    for row in stale {
        let intent = intent_record::<StoreError>(row)?;
        let next = intent
            .status
            .apply(IntentEvent::Expire)
            .map_err(|refused| TxError::Abort(corrupt(refused)))?;
        let row = diesel::update(transfer_intents::table.find(intent.id))
            .set((
                transfer_intents::status.eq(next.as_str()),
                transfer_intents::updated_at.eq(diesel::dsl::now),
            ))
            .returning(TransferIntentRow::as_returning())
            .get_result(connection)
            .await?;
        expired.push(intent_record(row)?);
    }
    Ok(expired)
}

impl From<TxError<SubmissionError>> for SubmissionError {
    fn from(error: TxError<SubmissionError>) -> Self {
        match error {
            TxError::Diesel(error) => {
                SubmissionError::Transition(TransitionError::Store(from_diesel(error)))
            }
            TxError::Abort(error) => error,
        }
    }
}

fn nonce_column(nonce: u64) -> Result<i64, StoreError> {
    i64::try_from(nonce).map_err(|_| corrupt(format!("nonce {nonce} out of range")))
}

fn nonce_value(stored: i64) -> Result<u64, StoreError> {
    u64::try_from(stored).map_err(|_| corrupt(format!("negative nonce {stored}")))
}

async fn claim_locked(
    connection: &mut AsyncPgConnection,
    lease_for: Duration,
) -> Result<Option<SubmissionClaim>, TxError<StoreError>> {
    let lease_free = sql::<Bool>(
        "(transfer_intents.lease_until IS NULL OR transfer_intents.lease_until < now())",
    );
    let Some(row) = transfer_intents::table
        .filter(transfer_intents::status.eq(IntentStatus::Confirmed.as_str()))
        .filter(lease_free)
        .select(TransferIntentRow::as_select())
        .order(transfer_intents::confirmed_at.asc())
        .for_update()
        .skip_locked()
        .first(connection)
        .await
        .optional()?
    else {
        return Ok(None);
    };
    let intent = intent_record::<StoreError>(row)?;
    let lease = Uuid::new_v4();
    diesel::update(transfer_intents::table.find(intent.id))
        .set((
            transfer_intents::lease_id.eq(lease),
            transfer_intents::lease_until
                .eq(sql::<diesel::sql_types::Nullable<Timestamptz>>("now() + ")
                    .bind::<Interval, _>(interval(lease_for))),
        ))
        .execute(connection)
        .await?;
    let (address, sealed_key, next_nonce): (String, Vec<u8>, Option<i64>) = wallets::table
        .find(intent.wallet_id)
        .select((wallets::address, wallets::sealed_key, wallets::next_nonce))
        .first(connection)
        .await?;
    let in_flight: i64 = transfer_intents::table
        .filter(transfer_intents::wallet_id.eq(intent.wallet_id))
        .filter(transfer_intents::status.eq(IntentStatus::Submitted.as_str()))
        .count()
        .get_result(connection)
        .await?;
    Ok(Some(SubmissionClaim {
        wallet_address: domain::EvmAddress::parse(&address)
            .map_err(|e| TxError::Abort(corrupt(e)))?,
        sealed_key,
        next_nonce: next_nonce
            .map(nonce_value)
            .transpose()
            .map_err(TxError::Abort)?,
        in_flight: u64::try_from(in_flight).unwrap_or_default(),
        lease,
        intent,
    }))
}

/// Takes `nonce` for the wallet unless a recorded, unfinished transaction already holds it. With
/// nothing in flight the chain is the judge, so a nonce freed by a refused broadcast is reused.
async fn take_nonce(
    connection: &mut AsyncPgConnection,
    wallet: Uuid,
    nonce: i64,
) -> Result<bool, DieselError> {
    let taken = diesel::sql_query(
        "UPDATE wallets SET next_nonce = $2 + 1 WHERE id = $1 AND (next_nonce IS NULL OR next_nonce <= $2 \
         OR NOT EXISTS (SELECT 1 FROM transfer_intents WHERE wallet_id = $1 AND status = 'submitted'))",
    )
    .bind::<diesel::sql_types::Uuid, _>(wallet)
    .bind::<diesel::sql_types::BigInt, _>(nonce)
    .execute(connection)
    .await?;
    Ok(taken == 1)
}

/// `Ok(Err(..))` commits (the lease is released) while still reporting why nothing was recorded.
async fn record_locked(
    connection: &mut AsyncPgConnection,
    id: Uuid,
    lease: Uuid,
    transfer: &SignedTransfer,
) -> Result<Result<TransferIntentRecord, SubmissionError>, TxError<SubmissionError>> {
    let abort = |error: StoreError| {
        TxError::Abort(SubmissionError::Transition(TransitionError::Store(error)))
    };
    let row: Option<(TransferIntentRow, Option<Uuid>, bool)> = transfer_intents::table
        .find(id)
        .select((
            TransferIntentRow::as_select(),
            transfer_intents::lease_id,
            sql::<Bool>("COALESCE(transfer_intents.lease_until > now(), false)"),
        ))
        .for_update()
        .first(connection)
        .await
        .optional()?;
    let Some((row, held_by, lease_live)) = row else {
        return Err(TxError::Abort(SubmissionError::Transition(
            TransitionError::NotFound(id),
        )));
    };
    if held_by != Some(lease) || !lease_live {
        return Ok(Err(SubmissionError::LeaseLost(id)));
    }
    let intent = row.into_record().map_err(abort)?;
    let next = intent
        .status
        .apply(IntentEvent::Submit)
        .map_err(|refused| {
            TxError::Abort(SubmissionError::Transition(TransitionError::Refused(
                refused,
            )))
        })?;
    let nonce = nonce_column(transfer.nonce).map_err(abort)?;
    if !take_nonce(connection, intent.wallet_id, nonce).await? {
        diesel::update(transfer_intents::table.find(id))
            .set((
                transfer_intents::lease_id.eq(None::<Uuid>),
                transfer_intents::lease_until.eq(None::<OffsetDateTime>),
            ))
            .execute(connection)
            .await?;
        return Ok(Err(SubmissionError::NonceTaken(transfer.nonce)));
    }
    let row = diesel::update(transfer_intents::table.find(id))
        .set((
            transfer_intents::status.eq(next.as_str()),
            transfer_intents::tx_hash.eq(&transfer.hash),
            transfer_intents::raw_transaction.eq(&transfer.raw),
            transfer_intents::nonce.eq(nonce),
            transfer_intents::submitted_at.eq(diesel::dsl::now),
            transfer_intents::updated_at.eq(diesel::dsl::now),
            transfer_intents::lease_id.eq(None::<Uuid>),
            transfer_intents::lease_until.eq(None::<OffsetDateTime>),
        ))
        .returning(TransferIntentRow::as_returning())
        .get_result(connection)
        .await?;
    Ok(Ok(row.into_record().map_err(abort)?))
}

fn position_time(position: &CursorPosition) -> Result<OffsetDateTime, StoreError> {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(position.created_at_micros) * 1000)
        .map_err(|_| corrupt("cursor time out of range"))
}

#[async_trait]
impl IntentStore for PgIntentStore {
    async fn admit(
        &self,
        intent: NewTransferIntent,
        window: Duration,
        check: &AdmissionCheck,
    ) -> Result<Admission, AdmissionError> {
        let mut connection = self.database.connection().await?;
        let admission = connection
            .transaction::<_, TxError<AdmissionError>, _>(|connection| {
                async move { admit_locked(connection, &intent, window, check).await }.scope_boxed()
            })
            .await?;
        Ok(admission)
    }

    async fn page(
        &self,
        agent: AgentId,
        after: Option<CursorPosition>,
        limit: usize,
    ) -> Result<Vec<TransferIntentRecord>, StoreError> {
        let mut connection = self.database.connection().await?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let newest_first = (
            transfer_intents::created_at.desc(),
            transfer_intents::id.desc(),
        );
        let rows: Vec<TransferIntentRow> = match after {
            None => {
                transfer_intents::table
                    .filter(transfer_intents::agent_id.eq(agent.0))
                    .select(TransferIntentRow::as_select())
                    .order(newest_first)
                    .limit(limit)
                    .load(&mut connection)
                    .await
            }
            Some(position) => {
                let created_at = position_time(&position)?;
                transfer_intents::table
                    .filter(transfer_intents::agent_id.eq(agent.0))
                    .filter(
                        transfer_intents::created_at.lt(created_at).or(
                            transfer_intents::created_at
                                .eq(created_at)
                                .and(transfer_intents::id.lt(position.id)),
                        ),
                    )
                    .select(TransferIntentRow::as_select())
                    .order(newest_first)
                    .limit(limit)
                    .load(&mut connection)
                    .await
            }
        }
        .map_err(from_diesel)?;
        rows.into_iter()
            .map(TransferIntentRow::into_record)
            .collect()
    }

    async fn find(&self, id: Uuid) -> Result<Option<TransferIntentRecord>, StoreError> {
        let mut connection = self.database.connection().await?;
        let row = transfer_intents::table
            .find(id)
            .select(TransferIntentRow::as_select())
            .first(&mut connection)
            .await
            .optional()
            .map_err(from_diesel)?;
        row.map(TransferIntentRow::into_record).transpose()
    }

    async fn list(&self, filter: IntentFilter) -> Result<Vec<TransferIntentRecord>, StoreError> {
        let mut connection = self.database.connection().await?;
        // An operator's ad-hoc listing: boxing (and re-planning) is fine off the request path.
        let mut query = transfer_intents::table
            .select(TransferIntentRow::as_select())
            .order((
                transfer_intents::created_at.desc(),
                transfer_intents::id.desc(),
            ))
            .into_boxed();
        if let Some(agent) = filter.agent {
            query = query.filter(transfer_intents::agent_id.eq(agent.0));
        }
        if let Some(status) = filter.status {
            query = query.filter(transfer_intents::status.eq(status.as_str()));
        }
        let rows: Vec<TransferIntentRow> =
            query.load(&mut connection).await.map_err(from_diesel)?;
        rows.into_iter()
            .map(TransferIntentRow::into_record)
            .collect()
    }

    async fn expire_pending(
        &self,
        pending_for: Duration,
        limit: usize,
    ) -> Result<Vec<TransferIntentRecord>, StoreError> {
        let mut connection = self.database.connection().await?;
        let expired = connection
            .transaction::<_, TxError<StoreError>, _>(|connection| {
                async move { expire_locked(connection, pending_for, limit).await }.scope_boxed()
            })
            .await?;
        Ok(expired)
    }

    async fn claim_confirmed(
        &self,
        lease_for: Duration,
    ) -> Result<Option<SubmissionClaim>, StoreError> {
        let mut connection = self.database.connection().await?;
        let claim = connection
            .transaction::<_, TxError<StoreError>, _>(|connection| {
                async move { claim_locked(connection, lease_for).await }.scope_boxed()
            })
            .await?;
        Ok(claim)
    }

    async fn record_submission(
        &self,
        intent: Uuid,
        lease: Uuid,
        transfer: &SignedTransfer,
    ) -> Result<TransferIntentRecord, SubmissionError> {
        let mut connection = self
            .database
            .connection()
            .await
            .map_err(TransitionError::Store)?;
        connection
            .transaction::<_, TxError<SubmissionError>, _>(|connection| {
                async move { record_locked(connection, intent, lease, transfer).await }
                    .scope_boxed()
            })
            .await?
    }

    async fn submitted(&self, limit: usize) -> Result<Vec<SubmittedIntent>, StoreError> {
        let mut connection = self.database.connection().await?;
        let rows: Vec<(TransferIntentRow, Option<i64>, Option<Vec<u8>>, String)> =
            transfer_intents::table
                .inner_join(wallets::table)
                .filter(transfer_intents::status.eq(IntentStatus::Submitted.as_str()))
                .select((
                    TransferIntentRow::as_select(),
                    transfer_intents::nonce,
                    transfer_intents::raw_transaction,
                    wallets::address,
                ))
                .order(transfer_intents::submitted_at.asc())
                .limit(i64::try_from(limit).unwrap_or(i64::MAX))
                .load(&mut connection)
                .await
                .map_err(from_diesel)?;
        rows.into_iter()
            .map(|(row, nonce, raw, from)| {
                let intent = row.into_record()?;
                let (Some(nonce), Some(raw), Some(hash), Some(token)) =
                    (nonce, raw, intent.tx_hash.clone(), intent.token_address)
                else {
                    return Err(corrupt(format!(
                        "submitted intent {} lacks its transaction",
                        intent.id
                    )));
                };
                let transfer = SignedTransfer {
                    from: domain::EvmAddress::parse(&from).map_err(corrupt)?,
                    token,
                    to: intent.recipient,
                    amount: intent.amount.value(),
                    nonce: nonce_value(nonce)?,
                    raw,
                    hash,
                };
                Ok(SubmittedIntent { intent, transfer })
            })
            .collect()
    }

    async fn transition(
        &self,
        id: Uuid,
        event: IntentEvent,
        reason: Option<String>,
    ) -> Result<TransferIntentRecord, TransitionError> {
        let mut connection = self.database.connection().await?;
        let record = connection
            .transaction::<_, TxError<TransitionError>, _>(|connection| {
                async move { transition_locked(connection, id, event, reason).await }.scope_boxed()
            })
            .await?;
        Ok(record)
    }
}
