//! `IntentAdmission`: the wallet row's lock makes every check-and-insert of one wallet run alone,
//! whichever server instance handles the request; an advisory lock on the idempotency key turns
//! a concurrent second use of a key away at once instead of queueing it. The wallet's spend
//! totals are locked last, as every other writer of them does (`window`), so none deadlocks.

use async_trait::async_trait;
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Interval, Text, Uuid as SqlUuid};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{IntentStatus, WalletId};
use ports::{
    Admission, AdmissionCheck, AdmissionContext, AdmissionError, AdmissionWindows, IntentAdmission,
    NewTransferIntent,
};
use uuid::Uuid;

use super::window::hold_window;
use super::{intent_record, PgIntentStore};
use crate::clock::interval;
use crate::errors::TxError;
use crate::rows::{
    address_column, numeric_column, parse_address, SpendPolicyRow, TransferIntentRow,
};
use crate::schema::{spend_policies, transfer_intents, wallets};

#[derive(QueryableByName)]
struct Granted {
    #[diesel(sql_type = Bool)]
    granted: bool,
}

/// Takes the transaction-scoped lock of the agent's idempotency key, if no one else holds it.
async fn lock_key(
    connection: &mut AsyncPgConnection,
    intent: &NewTransferIntent,
    key: &str,
) -> Result<bool, diesel::result::Error> {
    let granted: Granted = diesel::sql_query(
        "SELECT pg_try_advisory_xact_lock(hashtextextended($1::text || ':' || $2, 0)) AS granted",
    )
    .bind::<SqlUuid, _>(intent.agent_id.0)
    .bind::<Text, _>(key)
    .get_result(connection)
    .await?;
    Ok(granted.granted)
}

async fn admit_locked(
    connection: &mut AsyncPgConnection,
    intent: &NewTransferIntent,
    windows: AdmissionWindows,
    check: &AdmissionCheck,
) -> Result<Admission, TxError<AdmissionError>> {
    if let Some(key) = &intent.idempotency_key {
        if !lock_key(connection, intent, key.as_str()).await? {
            return Err(TxError::Abort(AdmissionError::KeyInFlight));
        }
    }
    // Not FOR UPDATE: that would also block the foreign-key checks on the wallet that a change of
    // its spend totals makes, while this waits for the totals.
    let Some((wallet_id, address)) = wallets::table
        .filter(wallets::agent_id.eq(intent.agent_id.0))
        .select((wallets::id, wallets::address))
        .for_no_key_update()
        .first::<(Uuid, String)>(connection)
        .await
        .optional()?
    else {
        return Err(TxError::Abort(AdmissionError::NoWallet));
    };
    let wallet = WalletId(wallet_id);
    if let Some(key) = &intent.idempotency_key {
        let key_live = sql::<Bool>("transfer_intents.created_at > now() - ")
            .bind::<Interval, _>(interval(windows.idempotency_key));
        let earlier = transfer_intents::table
            .filter(transfer_intents::agent_id.eq(intent.agent_id.0))
            .filter(transfer_intents::idempotency_key.eq(key.as_str()))
            .select((TransferIntentRow::as_select(), key_live))
            .first(connection)
            .await
            .optional()?;
        match earlier {
            Some((earlier, true)) => {
                let earlier = intent_record(earlier)?;
                return match earlier.answers_retry(&intent.terms) {
                    true => Ok(Admission::Replayed(earlier)),
                    false => Err(TxError::Abort(AdmissionError::IdempotencyMismatch {
                        original: earlier.id,
                    })),
                };
            }
            // The key outlived its window on the earlier intent: it starts afresh here.
            Some((earlier, false)) => {
                diesel::update(transfer_intents::table.find(earlier.id()))
                    .set(transfer_intents::idempotency_key.eq(None::<String>))
                    .execute(connection)
                    .await?;
            }
            None => {}
        }
    }
    let policy = spend_policies::table
        .filter(spend_policies::wallet_id.eq(wallet_id))
        .select(SpendPolicyRow::as_select())
        .first(connection)
        .await?
        .into_record()
        .map_err(TxError::store)?;
    let context = AdmissionContext {
        wallet_address: &parse_address(&address).map_err(TxError::store)?,
        policy: &policy,
        held: hold_window(connection, wallet, windows.spend).await?,
    };
    check(&context).map_err(|refusal| TxError::Abort(AdmissionError::Refused(refusal)))?;
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
            transfer_intents::idempotency_key
                .eq(intent.idempotency_key.as_ref().map(|k| k.as_str())),
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
        windows: AdmissionWindows,
        check: &AdmissionCheck,
    ) -> Result<Admission, AdmissionError> {
        self.database
            .in_transaction(|connection| {
                async move { admit_locked(connection, &intent, windows, check).await }.scope_boxed()
            })
            .await
    }
}
