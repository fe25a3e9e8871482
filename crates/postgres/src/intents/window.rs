//! What a wallet's intents hold in each spend window, from its running totals (decision 0028,
//! kept by a trigger on every change of an intent): per window, the open sum and the executed sum
//! after an expiry point that admission moves to the window's start. The wallet's row
//! (`wallet_spend_totals`) keeps the daily, weekly, monthly and auto-confirm windows; a recipient
//! capped per day has a row of its own (`recipient_spend_totals`), made by the first send to it
//! that needs it. However many intents a window holds, a reading reads none but those executed
//! between its expiry point and its start.

use std::sync::LazyLock;

use bigdecimal::BigDecimal;
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Nullable, Numeric, Text, Timestamptz, Uuid as SqlUuid};
use diesel::QueryResult;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{
    AgentId, ConfirmedBy, EarliestExecutions, EvmAddress, Held, IntentStatus, SpendWindow,
    WalletId, WalletRecord, U256,
};
use futures_util::future::BoxFuture;
use futures_util::FutureExt;
use ports::{StoreError, UsageReading, UsageVersion};
use time::OffsetDateTime;

use crate::errors::{corrupt, from_diesel, TxError};
use crate::prepared::Prepared;
use crate::rows::{address_column, u256_saturating_from_numeric, SpendPolicyRow, WalletRow};
use crate::schema::{spend_policies, wallet_spend_totals, wallets};

/// One executed sum of a totals table: its columns, the intents it counts beyond the wallet's
/// executed ones, and its window. Each statement names the totals table in full (no alias), so
/// the sums read alike in an update of it and in a join with the wallet.
struct ExecutedSum {
    totals: &'static str,
    sum: &'static str,
    expired_through: &'static str,
    counts: Counted,
    window: SpendWindow,
}

const DAILY: ExecutedSum = ExecutedSum {
    totals: "wallet_spend_totals",
    sum: "daily_executed_atomic",
    expired_through: "daily_expired_through",
    counts: Counted::Every,
    window: SpendWindow::Daily,
};
const WEEKLY: ExecutedSum = ExecutedSum {
    totals: "wallet_spend_totals",
    sum: "weekly_executed_atomic",
    expired_through: "weekly_expired_through",
    counts: Counted::Every,
    window: SpendWindow::Weekly,
};
const MONTHLY: ExecutedSum = ExecutedSum {
    totals: "wallet_spend_totals",
    sum: "monthly_executed_atomic",
    expired_through: "monthly_expired_through",
    counts: Counted::Every,
    window: SpendWindow::Monthly,
};
const AUTO_CONFIRM_DAILY: ExecutedSum = ExecutedSum {
    totals: "wallet_spend_totals",
    sum: "auto_daily_executed_atomic",
    expired_through: "auto_daily_expired_through",
    counts: Counted::ConfirmedByPolicy,
    window: SpendWindow::AutoConfirmDaily,
};
/// A recipient's daily sum.
const RECIPIENT_DAILY: ExecutedSum = ExecutedSum {
    totals: "recipient_spend_totals",
    sum: "daily_executed_atomic",
    expired_through: "daily_expired_through",
    counts: Counted::ToItsRecipient,
    window: SpendWindow::Daily,
};

/// Which of the wallet's executed intents a sum counts.
enum Counted {
    Every,
    ConfirmedByPolicy,
    /// Those to the recipient of the `recipient_spend_totals` row.
    ToItsRecipient,
}

impl Counted {
    /// The condition that keeps them, as SQL to follow the wallet's.
    fn condition(&self) -> String {
        match self {
            Self::Every => String::new(),
            Self::ConfirmedByPolicy => {
                format!("AND confirmed_by = '{}'", ConfirmedBy::Policy.as_str())
            }
            Self::ToItsRecipient => {
                "AND recipient_address = recipient_spend_totals.recipient_address".to_owned()
            }
        }
    }
}

/// The statuses of an intent whose money may still move, as an SQL list.
fn open_statuses() -> String {
    IntentStatus::ALL
        .into_iter()
        .filter(|status| status.holds_allowance() && !status.is_terminal())
        .map(|status| format!("'{}'", status.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Where `window` starts now, as SQL: its length is a constant of the statement's text.
fn window_start(window: SpendWindow) -> String {
    format!("now() - interval '{} seconds'", window.length().as_secs())
}

impl ExecutedSum {
    /// The executed amount in the window ending now, for its totals row: the sum kept for its
    /// expiry point, less the intents executed between that point and the window's start when
    /// the point is the earlier, or plus those between them when it is the later. One range
    /// either way: one descent of the index a window.
    fn in_window(&self) -> String {
        let Self {
            totals,
            sum,
            expired_through,
            counts,
            window,
        } = self;
        let (point, start) = (format!("{totals}.{expired_through}"), window_start(*window));
        let (executed, counts) = (IntentStatus::Executed.as_str(), counts.condition());
        format!(
            "{totals}.{sum} + coalesce((\
                SELECT CASE WHEN {point} < {start} THEN -1 ELSE 1 END * sum(amount_atomic) \
                FROM transfer_intents WHERE wallet_id = {totals}.wallet_id \
                    AND status = '{executed}' {counts} \
                    AND executed_at > least({point}, {start}) \
                    AND executed_at <= greatest({point}, {start})), 0)"
        )
    }

    /// The assignments that move the expiry point to the window's start.
    fn moved(&self) -> String {
        format!(
            "{sum} = {in_window}, {expired_through} = {start}",
            sum = self.sum,
            in_window = self.in_window(),
            expired_through = self.expired_through,
            start = window_start(self.window),
        )
    }
}

/// Each window of the wallet's totals row as `Held` names it, read from that row.
fn wallet_windows(read: impl Fn(&ExecutedSum) -> String) -> String {
    format!(
        "wallet_spend_totals.open_atomic + {daily} AS daily, \
         wallet_spend_totals.open_atomic + {weekly} AS weekly, \
         wallet_spend_totals.open_atomic + {monthly} AS monthly, \
         wallet_spend_totals.auto_open_atomic + {auto} AS auto_confirm_daily",
        daily = read(&DAILY),
        weekly = read(&WEEKLY),
        monthly = read(&MONTHLY),
        auto = read(&AUTO_CONFIRM_DAILY),
    )
}

/// The wallet of the agent `$1`, as SQL: a send's statements name the agent alone, so that they
/// go out together before any answer comes back.
const AGENTS_WALLET: &str = "(SELECT wallets.id FROM wallets WHERE wallets.agent_id = $1)";

static MOVE_WALLET: LazyLock<String> = LazyLock::new(|| {
    let moves = [&DAILY, &WEEKLY, &MONTHLY, &AUTO_CONFIRM_DAILY].map(ExecutedSum::moved);
    format!(
        "UPDATE wallet_spend_totals SET {} WHERE wallet_spend_totals.wallet_id = {AGENTS_WALLET} \
         RETURNING {}",
        moves.join(", "),
        wallet_windows(|executed| format!("{}.{}", executed.totals, executed.sum)),
    )
});

/// What the intents of `wallet` to `recipient` (SQL expressions) hold in the recipient's day, from
/// a scan of them: for a recipient without totals.
fn scan_recipient(wallet: &str, recipient: &str) -> String {
    let start = window_start(SpendWindow::Daily);
    let (open, executed) = (open_statuses(), IntentStatus::Executed.as_str());
    format!(
        "coalesce(sum(amount_atomic) FILTER (WHERE status IN ({open})), 0) AS open_atomic, \
            coalesce(sum(amount_atomic) FILTER (WHERE status = '{executed}' \
                AND executed_at > {start}), 0) AS executed_atomic \
         FROM transfer_intents WHERE wallet_id = {wallet} AND recipient_address = {recipient} \
             AND (status IN ({open}) OR (status = '{executed}' AND executed_at > {start}))"
    )
}

/// The wallet's windows, read from its totals row joined by that table's name.
static READ_WALLET: LazyLock<String> = LazyLock::new(|| wallet_windows(ExecutedSum::in_window));

/// The earliest execution each window of the wallet joined as `wallets` counts now, in the order
/// of `SpendWindow::ALL` (one descent of an index of executions each), then the changes counted
/// of the agent's intents and of the wallet's policy (a count never made is none).
static USAGE_MARKS: LazyLock<String> = LazyLock::new(|| {
    let earliest = |executed: &ExecutedSum| {
        format!(
            "(SELECT min(executed_at) FROM transfer_intents WHERE wallet_id = wallets.id \
                AND status = '{status}' {counts} AND executed_at > {start})",
            status = IntentStatus::Executed.as_str(),
            counts = executed.counts.condition(),
            start = window_start(executed.window),
        )
    };
    format!(
        "{}, \
         coalesce((SELECT version FROM listing_versions WHERE owner_id = wallets.agent_id), 0), \
         coalesce((SELECT version FROM listing_versions WHERE owner_id = wallets.id), 0)",
        [&DAILY, &WEEKLY, &MONTHLY, &AUTO_CONFIRM_DAILY]
            .map(earliest)
            .join(", ")
    )
});

/// What the recipient `recipient.address` holds in its day, for the wallet joined as `wallets`:
/// its totals, or a scan of its intents while it has none.
static READ_RECIPIENT: LazyLock<String> = LazyLock::new(|| {
    format!(
        "coalesce(\
            (SELECT recipient_spend_totals.open_atomic + {in_window} FROM recipient_spend_totals \
             WHERE recipient_spend_totals.wallet_id = wallets.id \
               AND recipient_spend_totals.recipient_address = recipient.address), \
            (SELECT open_atomic + executed_atomic FROM (SELECT {scan}) AS scan))",
        in_window = RECIPIENT_DAILY.in_window(),
        scan = scan_recipient("wallets.id", "recipient.address"),
    )
});

static MOVE_RECIPIENT: LazyLock<String> = LazyLock::new(|| {
    format!(
        "UPDATE recipient_spend_totals SET {} \
         WHERE recipient_spend_totals.wallet_id = {AGENTS_WALLET} \
           AND recipient_spend_totals.recipient_address = $2 \
         RETURNING recipient_spend_totals.open_atomic \
             + recipient_spend_totals.daily_executed_atomic AS held",
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
        "INSERT INTO recipient_spend_totals (wallet_id, recipient_address, agent_id, \
             open_atomic, daily_executed_atomic, daily_expired_through) \
         SELECT $1, $2, $3, open_atomic, executed_atomic, {start} FROM (SELECT {scan}) AS scan \
         RETURNING open_atomic + daily_executed_atomic AS held",
        start = window_start(SpendWindow::Daily),
        scan = scan_recipient("$1", "$2"),
    )
});

/// The wallet's windows, read by name from a statement of their own or by position from the
/// reading with the wallet row.
#[derive(QueryableByName, Queryable)]
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
/// no totals yet, a reading without a recipient as null too.
#[derive(QueryableByName, Queryable)]
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

impl WalletHeld {
    /// The amounts, with `recipient_daily` the recipient's day where one was read.
    fn held(&self, recipient_daily: Option<&BigDecimal>) -> Held {
        Held {
            daily: counted(&self.daily),
            weekly: counted(&self.weekly),
            monthly: counted(&self.monthly),
            auto_confirm_daily: counted(&self.auto_confirm_daily),
            recipient_daily: recipient_daily.map_or(U256::ZERO, counted),
        }
    }
}

/// A row of the wallet's totals, which every wallet has.
pub(super) fn totals_row<T, E: From<StoreError>>(
    row: Option<T>,
    wallet: WalletId,
) -> Result<T, TxError<E>> {
    row.ok_or_else(|| TxError::store(corrupt(format!("wallet {wallet} has no spend totals"))))
}

/// The agent's wallet row and its stored policy, with `columns` read from its totals row joined:
/// the one statement every reading of a wallet's windows is.
macro_rules! wallet_reading {
    ($connection:expr, $agent:expr, $columns:expr) => {
        Prepared(
            wallets::table
                .left_join(spend_policies::table)
                .inner_join(wallet_spend_totals::table)
                .filter(wallets::agent_id.eq($agent.0))
                .select((
                    WalletRow::as_select(),
                    Option::<SpendPolicyRow>::as_select(),
                    $columns,
                ))
                .limit(1),
        )
        .get_result($connection)
        .await
    };
}

/// The agent's wallet with its stored policy, and what its intents hold in each window now (and
/// when `recipient` is given, what those to it hold in its daily window): every intent whose
/// money may still move, and every executed one whose money moved within the window. One
/// statement, so the policy and the amounts are of one snapshot; it reads the totals as they are
/// and writes nothing.
pub(super) async fn wallet_and_held(
    connection: &mut AsyncPgConnection,
    agent: AgentId,
    recipient: Option<&EvmAddress>,
) -> Result<Option<(WalletRecord, Held)>, StoreError> {
    type Windows = ((Numeric, Numeric, Numeric, Numeric), Nullable<Numeric>);
    // One text with a recipient and one without: with a recipient that may be null, PostgreSQL
    // would plan every run afresh, its plan for the null being so much cheaper than the generic.
    let windows = sql::<Windows>(READ_WALLET.as_str());
    let row: Option<(WalletRow, Option<SpendPolicyRow>, WalletAndRecipientHeld)> =
        match recipient {
            None => wallet_reading!(connection, agent, windows.sql(", NULL::numeric")),
            Some(recipient) => wallet_reading!(
                connection,
                agent,
                windows
                    .sql(", (SELECT ")
                    .sql(READ_RECIPIENT.as_str())
                    .sql(" FROM (SELECT ")
                    .bind::<Text, _>(address_column(recipient))
                    .sql("::text AS address) AS recipient)")
            ),
        }
        .optional()
        .map_err(from_diesel)?;
    let Some((wallet, policy, windows)) = row else {
        return Ok(None);
    };
    let wallet = wallet.into_record(policy.map(SpendPolicyRow::into_record).transpose()?)?;
    let held = windows.wallet.held(windows.recipient_daily.as_ref());
    Ok(Some((wallet, held)))
}

/// What a usage reading reads beside the wallet's windows: the earliest execution each window
/// counts (`EARLIEST_EXECUTIONS`) and the counts of the usage version (`USAGE_VERSION`).
#[derive(Queryable)]
struct UsageMarks {
    daily: Option<OffsetDateTime>,
    weekly: Option<OffsetDateTime>,
    monthly: Option<OffsetDateTime>,
    auto_confirm_daily: Option<OffsetDateTime>,
    intents: i64,
    policy: i64,
}

/// What `wallet_and_held` reads, with the earliest execution each window counts and the
/// version it all shows, in one statement: one snapshot, so the version is exactly what was read.
pub(super) async fn wallet_usage(
    connection: &mut AsyncPgConnection,
    agent: AgentId,
) -> Result<Option<UsageReading>, StoreError> {
    type Windows = ((Numeric, Numeric, Numeric, Numeric), Nullable<Numeric>);
    type Marks = (
        Nullable<Timestamptz>,
        Nullable<Timestamptz>,
        Nullable<Timestamptz>,
        Nullable<Timestamptz>,
        BigInt,
        BigInt,
    );
    type Row = (
        WalletRow,
        Option<SpendPolicyRow>,
        (WalletAndRecipientHeld, UsageMarks),
    );
    let row: Option<Row> = wallet_reading!(
        connection,
        agent,
        (
            sql::<Windows>(READ_WALLET.as_str()).sql(", NULL::numeric"),
            sql::<Marks>(USAGE_MARKS.as_str()),
        )
    )
    .optional()
    .map_err(from_diesel)?;
    let Some((wallet, policy, (windows, marks))) = row else {
        return Ok(None);
    };
    let wallet = wallet.into_record(policy.map(SpendPolicyRow::into_record).transpose()?)?;
    Ok(Some(UsageReading {
        held: windows.wallet.held(None),
        earliest: EarliestExecutions {
            daily: marks.daily,
            weekly: marks.weekly,
            monthly: marks.monthly,
            auto_confirm_daily: marks.auto_confirm_daily,
        },
        version: UsageVersion::of(agent, wallet.id, marks.intents, marks.policy),
        wallet,
    }))
}

#[derive(QueryableByName)]
struct VersionNow {
    #[diesel(sql_type = BigInt)]
    intents: i64,
    #[diesel(sql_type = BigInt)]
    policy: i64,
    #[diesel(sql_type = Timestamptz)]
    now: OffsetDateTime,
}

/// The usage version of `agent`'s wallet `wallet`, and the database's clock.
pub(super) async fn read_usage_version(
    connection: &mut AsyncPgConnection,
    agent: AgentId,
    wallet: WalletId,
) -> Result<(UsageVersion, OffsetDateTime), StoreError> {
    let read: VersionNow = Prepared(
        diesel::sql_query(
            "SELECT coalesce((SELECT version FROM listing_versions WHERE owner_id = $1), 0) \
                 AS intents, \
             coalesce((SELECT version FROM listing_versions WHERE owner_id = $2), 0) AS policy, \
             now() AS now",
        )
        .bind::<SqlUuid, _>(agent.0)
        .bind::<SqlUuid, _>(wallet.0),
    )
    .get_result(connection)
    .await
    .map_err(from_diesel)?;
    Ok((
        UsageVersion::of(agent, wallet, read.intents, read.policy),
        read.now,
    ))
}

/// The windows of a send's wallet as `move_windows` left them, before its recipient's day is
/// read where the policy caps it.
pub(super) struct MovedWindows(WalletAndRecipientHeld);

/// The same amounts as `wallet_and_held` for the wallet of `agent`, after moving each window's
/// expiry point to its start, so the executed intents that aged out since the last move are read
/// once and never again; `recipient`'s day is moved too where it has totals. A future that holds
/// no borrow of the connection, so it goes out with the statements before it. Take it in a
/// statement after the one that locks the wallet's totals: its snapshot then sees every change
/// already counted in them, and no change of the wallet's intents can count itself meanwhile (the
/// trigger takes the wallet's row before a recipient's).
pub(super) fn move_windows(
    connection: &mut AsyncPgConnection,
    agent: AgentId,
    recipient: &EvmAddress,
) -> BoxFuture<'static, QueryResult<Option<MovedWindows>>> {
    Prepared(
        diesel::sql_query(MOVE_WALLET_AND_RECIPIENT.as_str())
            .bind::<SqlUuid, _>(agent.0)
            .bind::<Text, _>(address_column(recipient)),
    )
    .get_result::<WalletAndRecipientHeld>(connection)
    .map(|moved| moved.optional().map(|moved| moved.map(MovedWindows)))
    .boxed()
}

impl MovedWindows {
    /// What the windows hold, `recipient`'s day among them where the policy caps it: read from
    /// its totals, made at its first reading here from a scan of its intents.
    pub(super) async fn held<E: From<StoreError>>(
        self,
        connection: &mut AsyncPgConnection,
        agent: AgentId,
        wallet: WalletId,
        recipient: Option<&EvmAddress>,
    ) -> Result<Held, TxError<E>> {
        let Self(moved) = self;
        let Some(recipient) = recipient else {
            return Ok(moved.wallet.held(None));
        };
        let recipient_daily = match moved.recipient_daily {
            Some(recipient_daily) => recipient_daily,
            None => {
                let created: RecipientHeld = Prepared(
                    diesel::sql_query(CREATE_RECIPIENT.as_str())
                        .bind::<SqlUuid, _>(wallet.0)
                        .bind::<Text, _>(address_column(recipient))
                        .bind::<SqlUuid, _>(agent.0),
                )
                .get_result(connection)
                .await?;
                created.held
            }
        };
        Ok(moved.wallet.held(Some(&recipient_daily)))
    }
}
