//! `SubmissionQueue`: leased claims on confirmed intents, one nonce per intent assigned under the
//! wallet's lock, and every transaction recorded before it is broadcast.

use std::time::Duration;

use async_trait::async_trait;
use bigdecimal::BigDecimal;
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Double, Interval, Nullable, Timestamptz};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{
    FeeQuote, IntentEvent, IntentId, IntentKind, IntentStatus, LeaseId, TransferIntentRecord,
};
use ports::{
    AttemptRecord, SignedTransfer, StoreError, SubmissionClaim, SubmissionError, SubmissionQueue,
    TransitionError,
};
use time::OffsetDateTime;
use uuid::Uuid;

use super::{intent_record, PgIntentStore};
use crate::clock::{duration_from_secs, interval, seconds_since};
use crate::errors::{corrupt, from_diesel, TxError};
use crate::rows::{integer_digits, parse_address, TransferIntentRow};
use crate::schema::{agents, transfer_attempts, transfer_intents, wallets};

fn nonce_column(nonce: u64) -> Result<i64, StoreError> {
    i64::try_from(nonce).map_err(|_| corrupt(format!("nonce {nonce} out of range")))
}

pub(super) fn nonce_value(stored: i64) -> Result<u64, StoreError> {
    u64::try_from(stored).map_err(|_| corrupt(format!("negative nonce {stored}")))
}

fn fee_column(fee: u128) -> BigDecimal {
    BigDecimal::from(fee)
}

fn fee_value(stored: &BigDecimal) -> Result<u128, StoreError> {
    integer_digits(stored)
        .parse()
        .map_err(|_| corrupt(format!("fee {stored} out of range")))
}

/// One recorded transaction, as stored.
#[derive(Queryable, Selectable)]
#[diesel(table_name = transfer_attempts, check_for_backend(diesel::pg::Pg))]
pub(super) struct AttemptRow {
    tx_hash: String,
    pub(super) intent_id: Uuid,
    nonce: i64,
    raw_transaction: Vec<u8>,
    max_fee_per_gas: BigDecimal,
    max_priority_fee_per_gas: BigDecimal,
    broadcasts: i32,
    last_error: Option<String>,
}

impl AttemptRow {
    pub(super) fn into_record(
        self,
        intent: &TransferIntentRecord,
        from: &str,
    ) -> Result<AttemptRecord, StoreError> {
        let token = intent.token_address.ok_or_else(|| {
            corrupt(format!(
                "intent {} has a transaction but no token",
                intent.id
            ))
        })?;
        let transfer = SignedTransfer {
            from: parse_address(from)?,
            token,
            to: intent.recipient,
            amount: intent.amount.value(),
            nonce: nonce_value(self.nonce)?,
            fees: FeeQuote {
                max_fee_per_gas: fee_value(&self.max_fee_per_gas)?,
                max_priority_fee_per_gas: fee_value(&self.max_priority_fee_per_gas)?,
            },
            raw: self.raw_transaction,
            hash: self.tx_hash,
        };
        Ok(AttemptRecord {
            transfer,
            broadcasts: u32::try_from(self.broadcasts).unwrap_or_default(),
            last_error: self.last_error,
        })
    }
}

async fn claim_locked(
    connection: &mut AsyncPgConnection,
    lease: LeaseId,
    lease_for: Duration,
) -> Result<Option<SubmissionClaim>, TxError<StoreError>> {
    let lease_free = sql::<Bool>(
        "(transfer_intents.lease_until IS NULL OR transfer_intents.lease_until < now())",
    );
    // A confirmed x402 payment waits for its agent to have it signed; this service never sends it.
    let Some((row, nonce)) = transfer_intents::table
        .filter(transfer_intents::status.eq(IntentStatus::Confirmed.as_str()))
        .filter(transfer_intents::kind.eq(IntentKind::Transfer.as_str()))
        .filter(lease_free)
        .select((TransferIntentRow::as_select(), transfer_intents::nonce))
        .order(transfer_intents::confirmed_at.asc())
        .for_update()
        .skip_locked()
        .first::<(TransferIntentRow, Option<i64>)>(connection)
        .await
        .optional()?
    else {
        return Ok(None);
    };
    let intent = intent_record::<StoreError>(row)?;
    diesel::update(transfer_intents::table.find(intent.id.0))
        .set((
            transfer_intents::lease_id.eq(lease.0),
            transfer_intents::lease_until
                .eq(sql::<Nullable<Timestamptz>>("now() + ")
                    .bind::<Interval, _>(interval(lease_for))),
        ))
        .execute(connection)
        .await?;
    let (address, sealed_key, agent_active): (String, Vec<u8>, bool) = wallets::table
        .inner_join(agents::table)
        .filter(wallets::id.eq(intent.wallet_id.0))
        .select((wallets::address, wallets::sealed_key, agents::is_active))
        .first(connection)
        .await?;
    Ok(Some(SubmissionClaim {
        wallet_address: parse_address(&address).map_err(TxError::store)?,
        sealed_key,
        agent_active,
        nonce: nonce.map(nonce_value).transpose().map_err(TxError::store)?,
        lease,
        intent,
    }))
}

/// The intent and its nonce under the intent's row lock; given a `lease`, only while that lease
/// still holds the intent.
async fn locked_intent(
    connection: &mut AsyncPgConnection,
    id: IntentId,
    lease: Option<LeaseId>,
) -> Result<(TransferIntentRecord, Option<i64>), TxError<SubmissionError>> {
    let row: Option<(TransferIntentRow, Option<i64>, Option<Uuid>, bool)> = transfer_intents::table
        .find(id.0)
        .select((
            TransferIntentRow::as_select(),
            transfer_intents::nonce,
            transfer_intents::lease_id,
            sql::<Bool>("COALESCE(transfer_intents.lease_until > now(), false)"),
        ))
        .for_update()
        .first(connection)
        .await
        .optional()?;
    let Some((row, nonce, held_by, lease_live)) = row else {
        return Err(TxError::Abort(TransitionError::NotFound(id).into()));
    };
    if lease.is_some_and(|lease| held_by != Some(lease.0) || !lease_live) {
        return Err(TxError::Abort(SubmissionError::LeaseLost(id)));
    }
    Ok((intent_record(row)?, nonce))
}

async fn assign_locked(
    connection: &mut AsyncPgConnection,
    id: IntentId,
    lease: LeaseId,
    chain_next: u64,
) -> Result<u64, TxError<SubmissionError>> {
    let (intent, assigned) = locked_intent(connection, id, Some(lease)).await?;
    if let Some(nonce) = assigned {
        return nonce_value(nonce).map_err(TxError::store);
    }
    let next_nonce: Option<i64> = wallets::table
        .find(intent.wallet_id.0)
        .select(wallets::next_nonce)
        .for_update()
        .first(connection)
        .await?;
    let chain_next = nonce_column(chain_next).map_err(TxError::store)?;
    let nonce = next_nonce.unwrap_or_default().max(chain_next);
    diesel::update(wallets::table.find(intent.wallet_id.0))
        .set(wallets::next_nonce.eq(nonce + 1))
        .execute(connection)
        .await?;
    diesel::update(transfer_intents::table.find(id.0))
        .set(transfer_intents::nonce.eq(nonce))
        .execute(connection)
        .await?;
    nonce_value(nonce).map_err(TxError::store)
}

async fn record_locked(
    connection: &mut AsyncPgConnection,
    id: IntentId,
    lease: Option<LeaseId>,
    attempt: &SignedTransfer,
    first_look: Duration,
) -> Result<TransferIntentRecord, TxError<SubmissionError>> {
    let (intent, nonce) = locked_intent(connection, id, lease).await?;
    let owned = nonce
        .map(nonce_value)
        .transpose()
        .map_err(TxError::store)?
        .ok_or_else(|| TxError::store(corrupt(format!("intent {id} has no nonce assigned"))))?;
    if owned != attempt.nonce {
        return Err(TxError::Abort(SubmissionError::WrongNonce {
            intent: id,
            owned,
            offered: attempt.nonce,
        }));
    }
    let status = match lease {
        // The first transaction: the intent moves to submitted.
        Some(_) => intent
            .status
            .apply_as(intent.kind, IntentEvent::Submit)
            .map_err(|refused| TxError::Abort(TransitionError::Refused(refused).into()))?,
        // A replacement: only a submitted intent is replaced.
        None if intent.status == IntentStatus::Submitted => intent.status,
        None => {
            let refused = domain::TransitionRefused {
                from: intent.status,
                event: IntentEvent::Submit,
            };
            return Err(TxError::Abort(TransitionError::Refused(refused).into()));
        }
    };
    diesel::insert_into(transfer_attempts::table)
        .values((
            transfer_attempts::tx_hash.eq(&attempt.hash),
            transfer_attempts::intent_id.eq(id.0),
            transfer_attempts::agent_id.eq(intent.agent_id.0),
            transfer_attempts::nonce.eq(nonce_column(attempt.nonce).map_err(TxError::store)?),
            transfer_attempts::raw_transaction.eq(&attempt.raw),
            transfer_attempts::max_fee_per_gas.eq(fee_column(attempt.fees.max_fee_per_gas)),
            transfer_attempts::max_priority_fee_per_gas
                .eq(fee_column(attempt.fees.max_priority_fee_per_gas)),
        ))
        .execute(connection)
        .await?;
    let row = diesel::update(transfer_intents::table.find(id.0))
        .set((
            transfer_intents::status.eq(status.as_str()),
            transfer_intents::tx_hash.eq(&attempt.hash),
            transfer_intents::submitted_at.eq(diesel::dsl::now),
            transfer_intents::updated_at.eq(diesel::dsl::now),
            transfer_intents::lease_id.eq(None::<Uuid>),
            transfer_intents::lease_until.eq(None::<OffsetDateTime>),
            transfer_intents::next_check_at
                .eq(sql::<Nullable<Timestamptz>>("now() + ")
                    .bind::<Interval, _>(interval(first_look))),
        ))
        .returning(TransferIntentRow::as_returning())
        .get_result(connection)
        .await?;
    intent_record(row)
}

#[async_trait]
impl SubmissionQueue for PgIntentStore {
    #[tracing::instrument(level = "debug", skip(self))]
    async fn claim_confirmed(
        &self,
        lease: LeaseId,
        lease_for: Duration,
    ) -> Result<Option<SubmissionClaim>, StoreError> {
        self.database
            .in_transaction(|connection| {
                async move { claim_locked(connection, lease, lease_for).await }.scope_boxed()
            })
            .await
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn assign_nonce(
        &self,
        intent: IntentId,
        lease: LeaseId,
        chain_next: u64,
    ) -> Result<u64, SubmissionError> {
        self.database
            .in_transaction(|connection| {
                async move { assign_locked(connection, intent, lease, chain_next).await }
                    .scope_boxed()
            })
            .await
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn release(&self, lease: LeaseId) -> Result<(), StoreError> {
        let mut connection = self.database.connection().await?;
        diesel::update(transfer_intents::table.filter(transfer_intents::lease_id.eq(lease.0)))
            .set((
                transfer_intents::lease_id.eq(None::<Uuid>),
                transfer_intents::lease_until.eq(None::<OffsetDateTime>),
            ))
            .execute(&mut connection)
            .await
            .map_err(from_diesel)?;
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip(self, attempt), fields(tx_hash = %attempt.hash, nonce = attempt.nonce))]
    async fn record_attempt(
        &self,
        intent: IntentId,
        lease: Option<LeaseId>,
        attempt: &SignedTransfer,
        first_look: Duration,
    ) -> Result<TransferIntentRecord, SubmissionError> {
        self.database
            .in_transaction(|connection| {
                async move { record_locked(connection, intent, lease, attempt, first_look).await }
                    .scope_boxed()
            })
            .await
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn record_broadcast(
        &self,
        tx_hash: &str,
        error: Option<String>,
    ) -> Result<(), StoreError> {
        let mut connection = self.database.connection().await?;
        diesel::update(transfer_attempts::table.find(tx_hash))
            .set((
                transfer_attempts::broadcasts.eq(transfer_attempts::broadcasts + 1),
                transfer_attempts::last_broadcast_at.eq(diesel::dsl::now),
                transfer_attempts::last_error.eq(error),
            ))
            .execute(&mut connection)
            .await
            .map_err(from_diesel)?;
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn oldest_confirmed_wait(&self) -> Result<Option<Duration>, StoreError> {
        let mut connection = self.database.connection().await?;
        let waited: Option<f64> = transfer_intents::table
            .filter(transfer_intents::status.eq(IntentStatus::Confirmed.as_str()))
            .filter(transfer_intents::kind.eq(IntentKind::Transfer.as_str()))
            .select(seconds_since::<Nullable<Double>>(
                "min(transfer_intents.confirmed_at)",
            ))
            .first(&mut connection)
            .await
            .map_err(from_diesel)?;
        Ok(waited.map(duration_from_secs))
    }
}
