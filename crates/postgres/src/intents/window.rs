//! What a wallet's intents hold in each spend window, from its running totals (decision 0028,
//! kept by a trigger on every change of an intent): per window, the open sum and the executed sum
//! after an expiry point that admission moves to the window's start. The wallet's row
//! (`wallet_spend_totals`) keeps the daily, weekly, monthly and auto-confirm windows; a recipient
//! capped per day has a row of its own (`recipient_spend_totals`), made by the first send to it
//! that needs it. However many intents a window holds, a reading reads none but those executed
//! between its expiry point and its start.

use std::sync::LazyLock;

use bigdecimal::BigDecimal;
use diesel::prelude::*;
use diesel::sql_types::{Interval, Numeric, Text, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{EvmAddress, Held, SpendWindow, WalletId, U256};
use ports::StoreError;
use uuid::Uuid;

use crate::clock::interval;
use crate::errors::{corrupt, TxError};
use crate::prepared::Prepared;
use crate::rows::{address_column, u256_saturating_from_numeric};
use crate::schema::wallet_spend_totals;

/// One executed sum of a totals row: its columns, the intents it counts beyond the wallet's
/// (`$1`) executed ones, and the bind parameter of its window's length.
struct ExecutedSum {
    sum: &'static str,
    expired_through: &'static str,
    counts: &'static str,
    length: &'static str,
}

const DAILY: ExecutedSum = ExecutedSum {
    sum: "daily_executed_atomic",
    expired_through: "daily_expired_through",
    counts: "",
    length: "$2",
};
const WEEKLY: ExecutedSum = ExecutedSum {
    sum: "weekly_executed_atomic",
    expired_through: "weekly_expired_through",
    counts: "",
    length: "$3",
};
const MONTHLY: ExecutedSum = ExecutedSum {
    sum: "monthly_executed_atomic",
    expired_through: "monthly_expired_through",
    counts: "",
    length: "$4",
};
const AUTO_CONFIRM_DAILY: ExecutedSum = ExecutedSum {
    sum: "auto_daily_executed_atomic",
    expired_through: "auto_daily_expired_through",
    counts: "AND confirmed_by = 'policy'",
    length: "$2",
};
/// A recipient's (`$5`) daily sum; its window's length is `$2`.
const RECIPIENT_DAILY: ExecutedSum = ExecutedSum {
    sum: "daily_executed_atomic",
    expired_through: "daily_expired_through",
    counts: "AND recipient_address = $5",
    length: "$2",
};

impl ExecutedSum {
    /// The executed amount in the window ending now, for the totals row `totals`: the sum kept
    /// for its expiry point, less the intents executed between that point and the window's
    /// start when the point is the earlier, or plus those between them when it is the later.
    /// One range either way: one descent of the index a window.
    fn in_window(&self) -> String {
        let Self {
            sum,
            expired_through,
            counts,
            length,
        } = self;
        let (point, start) = (
            format!("totals.{expired_through}"),
            format!("now() - {length}"),
        );
        format!(
            "totals.{sum} + coalesce((\
                SELECT CASE WHEN {point} < {start} THEN -1 ELSE 1 END * sum(amount_atomic) \
                FROM transfer_intents WHERE wallet_id = $1 AND status = 'executed' {counts} \
                    AND executed_at > least({point}, {start}) \
                    AND executed_at <= greatest({point}, {start})), 0)"
        )
    }

    /// The assignments that move the expiry point to the window's start.
    fn moved(&self) -> String {
        format!(
            "{sum} = {in_window}, {expired_through} = now() - {length}",
            sum = self.sum,
            in_window = self.in_window(),
            expired_through = self.expired_through,
            length = self.length,
        )
    }
}

/// Each window of the wallet's row as `Held` names it, read from that row (`totals`).
fn wallet_windows(read: impl Fn(&ExecutedSum) -> String) -> String {
    format!(
        "totals.open_atomic + {daily} AS daily, totals.open_atomic + {weekly} AS weekly, \
         totals.open_atomic + {monthly} AS monthly, \
         totals.auto_open_atomic + {auto} AS auto_confirm_daily",
        daily = read(&DAILY),
        weekly = read(&WEEKLY),
        monthly = read(&MONTHLY),
        auto = read(&AUTO_CONFIRM_DAILY),
    )
}

static READ_WALLET: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {} FROM wallet_spend_totals AS totals WHERE totals.wallet_id = $1",
        wallet_windows(ExecutedSum::in_window)
    )
});

static MOVE_WALLET: LazyLock<String> = LazyLock::new(|| {
    let moves = [&DAILY, &WEEKLY, &MONTHLY, &AUTO_CONFIRM_DAILY].map(ExecutedSum::moved);
    format!(
        "UPDATE wallet_spend_totals AS totals SET {} WHERE totals.wallet_id = $1 RETURNING {}",
        moves.join(", "),
        wallet_windows(|executed| format!("totals.{}", executed.sum)),
    )
});

/// The recipient's held amount from a scan of its intents: for a recipient without totals.
const SCAN_RECIPIENT: &str = "coalesce(sum(amount_atomic) FILTER (WHERE status IN \
        ('pending_confirmation', 'confirmed', 'submitted')), 0) AS open_atomic, \
    coalesce(sum(amount_atomic) FILTER (WHERE status = 'executed' \
        AND executed_at > now() - $2), 0) AS executed_atomic \
    FROM transfer_intents WHERE wallet_id = $1 AND recipient_address = $5 \
        AND (status IN ('pending_confirmation', 'confirmed', 'submitted') \
             OR (status = 'executed' AND executed_at > now() - $2))";

static READ_RECIPIENT: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT coalesce(\
            (SELECT totals.open_atomic + {} FROM recipient_spend_totals AS totals \
             WHERE totals.wallet_id = $1 AND totals.recipient_address = $5), \
            (SELECT open_atomic + executed_atomic FROM (SELECT {SCAN_RECIPIENT}) AS scan)) AS held",
        RECIPIENT_DAILY.in_window()
    )
});

/// `READ_WALLET` and `READ_RECIPIENT` in one statement.
static READ_WALLET_AND_RECIPIENT: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT wallet.*, ({recipient}) AS recipient_daily FROM ({wallet}) AS wallet",
        wallet = READ_WALLET.as_str(),
        recipient = READ_RECIPIENT.as_str(),
    )
});

static MOVE_RECIPIENT: LazyLock<String> = LazyLock::new(|| {
    format!(
        "UPDATE recipient_spend_totals AS totals SET {} \
         WHERE totals.wallet_id = $1 AND totals.recipient_address = $5 \
         RETURNING totals.open_atomic + totals.daily_executed_atomic AS held",
        RECIPIENT_DAILY.moved()
    )
});

/// The wallet's move and the recipient's in one statement: one round trip while the wallet is
/// locked. `recipient_daily` is null while the recipient has no totals yet.
static MOVE_WALLET_AND_RECIPIENT: LazyLock<String> = LazyLock::new(|| {
    format!(
        "WITH wallet AS ({wallet}), recipient AS ({recipient}) \
         SELECT wallet.*, (SELECT held FROM recipient) AS recipient_daily FROM wallet",
        wallet = MOVE_WALLET.as_str(),
        recipient = MOVE_RECIPIENT.as_str(),
    )
});

static CREATE_RECIPIENT: LazyLock<String> = LazyLock::new(|| {
    format!(
        "INSERT INTO recipient_spend_totals \
             (wallet_id, recipient_address, open_atomic, daily_executed_atomic, daily_expired_through) \
         SELECT $1, $5, open_atomic, executed_atomic, now() - $2 FROM (SELECT {SCAN_RECIPIENT}) AS scan \
         RETURNING open_atomic + daily_executed_atomic AS held"
    )
});

#[derive(QueryableByName)]
struct WalletHeld {
    #[diesel(sql_type = Numeric)]
    daily: BigDecimal,
    #[diesel(sql_type = Numeric)]
    weekly: BigDecimal,
    #[diesel(sql_type = Numeric)]
    monthly: BigDecimal,
    #[diesel(sql_type = Numeric)]
    auto_confirm_daily: BigDecimal,
}

/// The wallet's windows and a recipient's day; a move reads the recipient's as null while it has
/// no totals yet.
#[derive(QueryableByName)]
struct WalletAndRecipientHeld {
    #[diesel(embed)]
    wallet: WalletHeld,
    #[diesel(sql_type = diesel::sql_types::Nullable<Numeric>)]
    recipient_daily: Option<BigDecimal>,
}

#[derive(QueryableByName)]
struct RecipientHeld {
    #[diesel(sql_type = Numeric)]
    held: BigDecimal,
}

/// A sum too large to count is larger than any limit; a negative one cannot be trusted either,
/// and saturates the same way.
fn counted(sum: &BigDecimal) -> U256 {
    u256_saturating_from_numeric(sum)
}

fn wallet_held<E: From<StoreError>>(
    held: Option<WalletHeld>,
    wallet: WalletId,
) -> Result<Held, TxError<E>> {
    let held = held
        .ok_or_else(|| TxError::store(corrupt(format!("wallet {wallet} has no spend totals"))))?;
    Ok(Held {
        daily: counted(&held.daily),
        weekly: counted(&held.weekly),
        monthly: counted(&held.monthly),
        auto_confirm_daily: counted(&held.auto_confirm_daily),
        recipient_daily: U256::ZERO,
    })
}

/// The wallet's windows of a combined row, and the recipient's day where it was read.
fn split_held<E: From<StoreError>>(
    row: Option<WalletAndRecipientHeld>,
    wallet: WalletId,
) -> Result<(Held, Option<BigDecimal>), TxError<E>> {
    let (held, recipient_daily) = row.map(|row| (row.wallet, row.recipient_daily)).unzip();
    Ok((wallet_held(held, wallet)?, recipient_daily.flatten()))
}

/// A statement of the windows of `wallet`, their lengths bound as `$2` to `$4`.
macro_rules! windows_statement {
    ($sql:expr, $wallet:expr) => {
        diesel::sql_query($sql)
            .bind::<SqlUuid, _>($wallet.0)
            .bind::<Interval, _>(interval(SpendWindow::Daily.length()))
            .bind::<Interval, _>(interval(SpendWindow::Weekly.length()))
            .bind::<Interval, _>(interval(SpendWindow::Monthly.length()))
    };
}

/// A statement of the windows of `wallet` and of `recipient` (`$5`), one of them or both.
macro_rules! recipient_statement {
    ($sql:expr, $wallet:expr, $recipient:expr) => {
        windows_statement!($sql, $wallet).bind::<Text, _>(address_column($recipient))
    };
}

/// What the wallet's intents hold in each window now, and when `recipient` is given what those
/// to it hold in its daily window: every intent whose money may still move, and every executed
/// one whose money moved within the window. Reads the totals as they are and writes nothing.
pub(super) async fn read_held<E: From<StoreError>>(
    connection: &mut AsyncPgConnection,
    wallet: WalletId,
    recipient: Option<&EvmAddress>,
) -> Result<Held, TxError<E>> {
    let Some(recipient) = recipient else {
        let held: Option<WalletHeld> = Prepared(windows_statement!(READ_WALLET.as_str(), wallet))
            .get_result(connection)
            .await
            .optional()?;
        return wallet_held(held, wallet);
    };
    let read: Option<WalletAndRecipientHeld> = Prepared(recipient_statement!(
        READ_WALLET_AND_RECIPIENT.as_str(),
        wallet,
        recipient
    ))
    .get_result(connection)
    .await
    .optional()?;
    let (mut held, recipient_daily) = split_held(read, wallet)?;
    held.recipient_daily = recipient_daily.as_ref().map_or(U256::ZERO, counted);
    Ok(held)
}

/// The same amounts as `read_held`, after moving each window's expiry point to its start, so the
/// executed intents that aged out since the last move are read once and never again; a
/// recipient's totals are made at their first reading here. Locks the wallet's totals until the
/// transaction ends: take it after every other lock.
pub(super) async fn move_expiry_and_read_held<E: From<StoreError>>(
    connection: &mut AsyncPgConnection,
    wallet: WalletId,
    recipient: Option<&EvmAddress>,
) -> Result<Held, TxError<E>> {
    // Locked in a statement of its own: the next one's snapshot then sees every change already
    // counted in the totals, and no change of the wallet's intents can count itself meanwhile
    // (the trigger takes this row before a recipient's).
    wallet_spend_totals::table
        .find(wallet.0)
        .select(wallet_spend_totals::wallet_id)
        .for_no_key_update()
        .first::<Uuid>(connection)
        .await
        .optional()?;
    let Some(recipient) = recipient else {
        let held: Option<WalletHeld> = Prepared(windows_statement!(MOVE_WALLET.as_str(), wallet))
            .get_result(connection)
            .await
            .optional()?;
        return wallet_held(held, wallet);
    };
    let moved: Option<WalletAndRecipientHeld> = Prepared(recipient_statement!(
        MOVE_WALLET_AND_RECIPIENT.as_str(),
        wallet,
        recipient
    ))
    .get_result(connection)
    .await
    .optional()?;
    let (mut held, recipient_daily) = split_held(moved, wallet)?;
    let recipient_daily = match recipient_daily {
        Some(recipient_daily) => recipient_daily,
        None => {
            let created: RecipientHeld = Prepared(recipient_statement!(
                CREATE_RECIPIENT.as_str(),
                wallet,
                recipient
            ))
            .get_result(connection)
            .await?;
            created.held
        }
    };
    held.recipient_daily = counted(&recipient_daily);
    Ok(held)
}
