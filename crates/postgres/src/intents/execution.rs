//! `ExecutionQueue`: leased claims on confirmed intents, per-wallet nonces, the recorded
//! transaction of every submitted intent, and settlement.

use std::time::Duration;

use async_trait::async_trait;
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::sql_types::{Bool, Double, Interval, Nullable, Timestamptz};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{IntentEvent, IntentId, IntentStatus, LeaseId, TransferIntentRecord, WalletId};
use ports::{
    ExecutionQueue, Settlement, SignedTransfer, StoreError, SubmissionClaim, SubmissionError,
    SubmittedIntent, TransitionError,
};
use time::OffsetDateTime;
use uuid::Uuid;

use super::{intent_record, interval, row_limit, transition_locked, PgIntentStore};
use crate::errors::{corrupt, from_diesel, TxError};
use crate::rows::{parse_address, TransferIntentRow};
use crate::schema::{transfer_intents, wallets};

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
    let lease = LeaseId(Uuid::new_v4());
    diesel::update(transfer_intents::table.find(intent.id.0))
        .set((
            transfer_intents::lease_id.eq(lease.0),
            transfer_intents::lease_until
                .eq(sql::<Nullable<Timestamptz>>("now() + ")
                    .bind::<Interval, _>(interval(lease_for))),
        ))
        .execute(connection)
        .await?;
    let (address, sealed_key, next_nonce): (String, Vec<u8>, Option<i64>) = wallets::table
        .find(intent.wallet_id.0)
        .select((wallets::address, wallets::sealed_key, wallets::next_nonce))
        .first(connection)
        .await?;
    let in_flight: i64 = transfer_intents::table
        .filter(transfer_intents::wallet_id.eq(intent.wallet_id.0))
        .filter(transfer_intents::status.eq(IntentStatus::Submitted.as_str()))
        .count()
        .get_result(connection)
        .await?;
    Ok(Some(SubmissionClaim {
        wallet_address: parse_address(&address).map_err(TxError::store)?,
        sealed_key,
        next_nonce: next_nonce
            .map(nonce_value)
            .transpose()
            .map_err(TxError::store)?,
        in_flight: u64::try_from(in_flight).unwrap_or_default(),
        lease,
        intent,
    }))
}

/// Takes `nonce` for the wallet unless a recorded, unfinished transaction already holds it. With
/// nothing in flight the chain is the judge, so a nonce freed by a refused broadcast is reused.
async fn take_nonce(
    connection: &mut AsyncPgConnection,
    wallet: WalletId,
    nonce: i64,
) -> Result<bool, DieselError> {
    let taken = diesel::sql_query(
        "UPDATE wallets SET next_nonce = $2 + 1 WHERE id = $1 AND (next_nonce IS NULL OR next_nonce <= $2 \
         OR NOT EXISTS (SELECT 1 FROM transfer_intents WHERE wallet_id = $1 AND status = 'submitted'))",
    )
    .bind::<diesel::sql_types::Uuid, _>(wallet.0)
    .bind::<diesel::sql_types::BigInt, _>(nonce)
    .execute(connection)
    .await?;
    Ok(taken == 1)
}

/// `Ok(Err(..))` commits (the lease is released) while still reporting why nothing was recorded.
async fn record_locked(
    connection: &mut AsyncPgConnection,
    id: IntentId,
    lease: LeaseId,
    transfer: &SignedTransfer,
) -> Result<Result<TransferIntentRecord, SubmissionError>, TxError<SubmissionError>> {
    let row: Option<(TransferIntentRow, Option<Uuid>, bool)> = transfer_intents::table
        .find(id.0)
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
        return Err(TxError::Abort(TransitionError::NotFound(id).into()));
    };
    if held_by != Some(lease.0) || !lease_live {
        return Ok(Err(SubmissionError::LeaseLost(id)));
    }
    let intent = intent_record(row)?;
    let next = intent
        .status
        .apply(IntentEvent::Submit)
        .map_err(|refused| TxError::Abort(TransitionError::Refused(refused).into()))?;
    let nonce = nonce_column(transfer.nonce).map_err(TxError::store)?;
    let release_lease = (
        transfer_intents::lease_id.eq(None::<Uuid>),
        transfer_intents::lease_until.eq(None::<OffsetDateTime>),
    );
    if !take_nonce(connection, intent.wallet_id, nonce).await? {
        diesel::update(transfer_intents::table.find(id.0))
            .set(release_lease)
            .execute(connection)
            .await?;
        return Ok(Err(SubmissionError::NonceTaken(transfer.nonce)));
    }
    let row = diesel::update(transfer_intents::table.find(id.0))
        .set((
            transfer_intents::status.eq(next.as_str()),
            transfer_intents::tx_hash.eq(&transfer.hash),
            transfer_intents::raw_transaction.eq(&transfer.raw),
            transfer_intents::nonce.eq(nonce),
            transfer_intents::submitted_at.eq(diesel::dsl::now),
            transfer_intents::updated_at.eq(diesel::dsl::now),
            release_lease,
        ))
        .returning(TransferIntentRow::as_returning())
        .get_result(connection)
        .await?;
    Ok(Ok(intent_record(row)?))
}

fn submitted_intent(
    (row, nonce, raw, from): (TransferIntentRow, Option<i64>, Option<Vec<u8>>, String),
) -> Result<SubmittedIntent, StoreError> {
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
        from: parse_address(&from)?,
        token,
        to: intent.recipient,
        amount: intent.amount.value(),
        nonce: nonce_value(nonce)?,
        raw,
        hash,
    };
    Ok(SubmittedIntent { intent, transfer })
}

#[async_trait]
impl ExecutionQueue for PgIntentStore {
    #[tracing::instrument(level = "debug", skip(self))]
    async fn claim_confirmed(
        &self,
        lease_for: Duration,
    ) -> Result<Option<SubmissionClaim>, StoreError> {
        self.database
            .in_transaction(|connection| {
                async move { claim_locked(connection, lease_for).await }.scope_boxed()
            })
            .await
    }

    #[tracing::instrument(level = "debug", skip(self, transfer), fields(tx_hash = %transfer.hash, nonce = transfer.nonce))]
    async fn record_submission(
        &self,
        intent: IntentId,
        lease: LeaseId,
        transfer: &SignedTransfer,
    ) -> Result<TransferIntentRecord, SubmissionError> {
        self.database
            .in_transaction(|connection| {
                async move { record_locked(connection, intent, lease, transfer).await }
                    .scope_boxed()
            })
            .await?
    }

    #[tracing::instrument(level = "debug", skip(self))]
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
                .limit(row_limit(limit))
                .load(&mut connection)
                .await
                .map_err(from_diesel)?;
        rows.into_iter().map(submitted_intent).collect()
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn settle(
        &self,
        intent: IntentId,
        settlement: Settlement,
    ) -> Result<TransferIntentRecord, TransitionError> {
        let (event, reason) = match settlement {
            Settlement::Executed => (IntentEvent::Execute, None),
            Settlement::Failed(reason) => (IntentEvent::Fail, Some(reason)),
        };
        self.database
            .in_transaction(|connection| {
                async move { transition_locked(connection, intent, event, reason).await }
                    .scope_boxed()
            })
            .await
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn oldest_confirmed_wait(&self) -> Result<Option<Duration>, StoreError> {
        let mut connection = self.database.connection().await?;
        let seconds: Option<f64> = transfer_intents::table
            .filter(transfer_intents::status.eq(IntentStatus::Confirmed.as_str()))
            .select(sql::<Nullable<Double>>(
                "EXTRACT(EPOCH FROM now() - min(transfer_intents.confirmed_at))::float8",
            ))
            .first(&mut connection)
            .await
            .map_err(from_diesel)?;
        Ok(seconds.map(|seconds| Duration::from_secs_f64(seconds.max(0.0))))
    }
}
