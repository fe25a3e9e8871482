//! What a wallet's intents hold in its spend window, from the wallet's running totals
//! (`wallet_spend_totals`, kept by triggers on every change of an intent): the open sum, and the
//! executed sum for an expiry point that admission moves to the window's start. However many
//! intents the window holds, a reading reads none but those executed between that point and the
//! window's start.

use std::time::Duration;

use bigdecimal::BigDecimal;
use diesel::prelude::*;
use diesel::sql_types::{Interval, Numeric, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{WalletId, U256};
use ports::StoreError;
use uuid::Uuid;

use crate::clock::interval;
use crate::errors::{corrupt, TxError};
use crate::prepared::Prepared;
use crate::rows::u256_saturating_from_numeric;
use crate::schema::wallet_spend_totals;

/// The executed amount in a window that starts `$2` before now, for the totals row `totals` of
/// wallet `$1`: the sum kept for the totals' expiry point, less the executed intents between that
/// point and the window's start, or plus those between the window's start and that point. Only
/// the intents between the two points are read.
const EXECUTED_IN_WINDOW: &str = "totals.executed_atomic \
    - coalesce((SELECT sum(amount_atomic) FROM transfer_intents \
        WHERE wallet_id = $1 AND status = 'executed' \
        AND executed_at > totals.executed_expired_through AND executed_at <= now() - $2), 0) \
    + coalesce((SELECT sum(amount_atomic) FROM transfer_intents \
        WHERE wallet_id = $1 AND status = 'executed' \
        AND executed_at > now() - $2 AND executed_at <= totals.executed_expired_through), 0)";

#[derive(QueryableByName)]
struct Held {
    #[diesel(sql_type = Numeric)]
    held: BigDecimal,
}

fn held_amount<E: From<StoreError>>(
    held: Option<Held>,
    wallet: WalletId,
) -> Result<U256, TxError<E>> {
    // A sum too large to count is larger than any limit; a negative one cannot be trusted either,
    // and saturates the same way.
    held.map(|held| u256_saturating_from_numeric(&held.held))
        .ok_or_else(|| TxError::store(corrupt(format!("wallet {wallet} has no spend totals"))))
}

/// What the wallet's intents hold in a spend window of `window` ending now: every intent whose
/// money may still move, and every executed one whose money moved within the window. So no
/// window of that length ever sees more leave the wallet than the sums admitted allow. Reads the
/// totals as they are and writes nothing.
pub(super) async fn held_in_window<E: From<StoreError>>(
    connection: &mut AsyncPgConnection,
    wallet: WalletId,
    window: Duration,
) -> Result<U256, TxError<E>> {
    let held: Option<Held> = Prepared(
        diesel::sql_query(format!(
            "SELECT totals.open_atomic + {EXECUTED_IN_WINDOW} AS held \
             FROM wallet_spend_totals AS totals WHERE totals.wallet_id = $1"
        ))
        .bind::<SqlUuid, _>(wallet.0)
        .bind::<Interval, _>(interval(window)),
    )
    .get_result(connection)
    .await
    .optional()?;
    held_amount(held, wallet)
}

/// The same amount as `held_in_window`, after moving the totals' expiry point to the window's
/// start, so the executed intents that aged out since the last move are read once and never
/// again. Locks the totals until the transaction ends: take it after every other lock.
pub(super) async fn move_expiry_and_read_held<E: From<StoreError>>(
    connection: &mut AsyncPgConnection,
    wallet: WalletId,
    window: Duration,
) -> Result<U256, TxError<E>> {
    // Locked in a statement of its own: the next one's snapshot then sees every change already
    // counted in the totals, and no change of the wallet's intents can count itself meanwhile.
    wallet_spend_totals::table
        .find(wallet.0)
        .select(wallet_spend_totals::wallet_id)
        .for_no_key_update()
        .first::<Uuid>(connection)
        .await
        .optional()?;
    let held: Option<Held> = Prepared(
        diesel::sql_query(format!(
            "UPDATE wallet_spend_totals AS totals \
             SET executed_atomic = {EXECUTED_IN_WINDOW}, executed_expired_through = now() - $2 \
             WHERE totals.wallet_id = $1 \
             RETURNING totals.open_atomic + totals.executed_atomic AS held"
        ))
        .bind::<SqlUuid, _>(wallet.0)
        .bind::<Interval, _>(interval(window)),
    )
    .get_result(connection)
    .await
    .optional()?;
    held_amount(held, wallet)
}
