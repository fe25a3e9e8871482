//! `IntentAdmission`: the wallet row's lock makes every check-and-insert of one wallet run alone,
//! whichever server instance handles the request.

use std::time::Duration;

use async_trait::async_trait;
use bigdecimal::BigDecimal;
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Interval};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{IntentStatus, U256};
use ports::{Admission, AdmissionCheck, AdmissionError, IntentAdmission, NewTransferIntent};
use uuid::Uuid;

use super::{intent_record, interval, PgIntentStore};
use crate::errors::TxError;
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
            return match earlier.answers_retry(&intent.terms) {
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
        .map_err(TxError::store)?;
    let window_open =
        sql::<Bool>("transfer_intents.created_at > now() - ").bind::<Interval, _>(interval(window));
    let held: Option<BigDecimal> = transfer_intents::table
        .filter(transfer_intents::wallet_id.eq(wallet_id))
        .filter(transfer_intents::status.eq_any(holding_statuses()))
        .filter(window_open)
        .select(diesel::dsl::sum(transfer_intents::amount_atomic))
        .first(connection)
        .await?;
    let held = match held {
        Some(total) => u256_from_numeric(&total).map_err(TxError::store)?,
        None => U256::ZERO,
    };
    check(&policy, held).map_err(|violation| TxError::Abort(AdmissionError::Refused(violation)))?;
    let terms = &intent.terms;
    let row = diesel::insert_into(transfer_intents::table)
        .values((
            transfer_intents::id.eq(intent.id.0),
            transfer_intents::agent_id.eq(intent.agent_id.0),
            transfer_intents::wallet_id.eq(wallet_id),
            transfer_intents::status.eq(IntentStatus::PendingConfirmation.as_str()),
            transfer_intents::asset.eq(terms.asset.symbol()),
            transfer_intents::chain.eq(terms.chain.as_str()),
            transfer_intents::token_address.eq(intent.token_address.as_ref().map(address_column)),
            transfer_intents::recipient_address.eq(address_column(&terms.recipient)),
            transfer_intents::amount_atomic.eq(numeric_column(&terms.amount)),
            transfer_intents::idempotency_key.eq(intent.idempotency_key.as_deref()),
        ))
        .returning(TransferIntentRow::as_returning())
        .get_result(connection)
        .await?;
    Ok(Admission::Created(intent_record(row)?))
}

#[async_trait]
impl IntentAdmission for PgIntentStore {
    #[tracing::instrument(level = "debug", skip_all, fields(agent_id = %intent.agent_id, intent_id = %intent.id))]
    async fn admit(
        &self,
        intent: NewTransferIntent,
        window: Duration,
        check: &AdmissionCheck,
    ) -> Result<Admission, AdmissionError> {
        self.database
            .in_transaction(|connection| {
                async move { admit_locked(connection, &intent, window, check).await }.scope_boxed()
            })
            .await
    }
}
