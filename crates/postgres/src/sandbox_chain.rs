//! The sandbox chain: balances kept in PostgreSQL, so `make run` needs no node. It answers the
//! `ChainClient` and `ChainWriter` ports as a node would; tokens have 6 decimals, like USDC. A
//! transaction is mined as soon as it is its sender's next; one further ahead waits, as in a
//! node's mempool, until the nonces before it are used. Its blocks come one a second, each
//! numbered by its Unix time on the database clock; nobody settles an x402 authorization on it,
//! so one handed out here expires unused.

use std::cmp::Ordering;
use std::ops::RangeInclusive;

use async_trait::async_trait;
use bigdecimal::BigDecimal;
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::AsyncPgConnection;
use diesel_async::RunQueryDsl;
use domain::x402::{BlockHead, TokenDomain, UsedAuthorization};
use domain::{AtomicAmount, EvmAddress, FeeQuote, U256};
use ports::{
    BroadcastError, ChainClient, ChainError, ChainWriter, ReceiptStatus, SignedTransfer, StoreError,
};

use crate::database::Database;
use crate::errors::{from_diesel, TxError};
use crate::rows::{address_column, numeric_column, u256_from_numeric, u256_numeric};
use crate::schema::{sandbox_balances, sandbox_queued_transactions, sandbox_transactions};

/// The sandbox answers as Base mainnet does.
pub const SANDBOX_CHAIN_ID: u64 = 8453;
/// Decimals of every sandbox token.
pub const SANDBOX_TOKEN_DECIMALS: u8 = 6;
/// Key of the native asset in `sandbox_balances.token_address`.
const NATIVE: &str = "";

pub struct PgSandboxChain {
    database: Database,
}

fn chain_error(error: StoreError) -> ChainError {
    match error {
        StoreError::Unavailable(cause) => ChainError::Unavailable(cause),
        other => ChainError::Unexpected(other.to_string()),
    }
}

impl PgSandboxChain {
    pub fn new(database: Database) -> Self {
        Self { database }
    }

    /// Credits `amount` of `token` (`None`: the native asset) to `holder`; returns the new balance.
    pub async fn fund(
        &self,
        holder: &EvmAddress,
        token: Option<&EvmAddress>,
        amount: AtomicAmount,
    ) -> Result<U256, StoreError> {
        let mut connection = self.database.connection().await?;
        let token = token.map_or_else(|| NATIVE.to_owned(), address_column);
        let credited = numeric_column(&amount);
        let balance: BigDecimal = diesel::insert_into(sandbox_balances::table)
            .values((
                sandbox_balances::holder.eq(address_column(holder)),
                sandbox_balances::token_address.eq(&token),
                sandbox_balances::amount_atomic.eq(&credited),
            ))
            .on_conflict((sandbox_balances::holder, sandbox_balances::token_address))
            .do_update()
            .set((
                sandbox_balances::amount_atomic.eq(sandbox_balances::amount_atomic + &credited),
                sandbox_balances::updated_at.eq(diesel::dsl::now),
            ))
            .returning(sandbox_balances::amount_atomic)
            .get_result(&mut connection)
            .await
            .map_err(from_diesel)?;
        u256_from_numeric(&balance)
    }

    /// How many transactions `sender` has had mined.
    async fn used_nonces(&self, sender: &EvmAddress) -> Result<u64, ChainError> {
        let mut connection = self.database.connection().await.map_err(chain_error)?;
        let used: i64 = sandbox_transactions::table
            .filter(sandbox_transactions::sender.eq(address_column(sender)))
            .count()
            .get_result(&mut connection)
            .await
            .map_err(|error| chain_error(from_diesel(error)))?;
        Ok(u64::try_from(used).unwrap_or_default())
    }

    async fn balance(&self, holder: &EvmAddress, token: &str) -> Result<U256, StoreError> {
        let mut connection = self.database.connection().await?;
        let balance: Option<BigDecimal> = sandbox_balances::table
            .find((address_column(holder), token))
            .select(sandbox_balances::amount_atomic)
            .first(&mut connection)
            .await
            .optional()
            .map_err(from_diesel)?;
        balance.as_ref().map_or(Ok(U256::ZERO), u256_from_numeric)
    }
}

#[async_trait]
impl ChainClient for PgSandboxChain {
    #[tracing::instrument(level = "debug", skip(self))]
    async fn native_balance(&self, owner: &EvmAddress) -> Result<U256, ChainError> {
        self.balance(owner, NATIVE).await.map_err(chain_error)
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn token_balance(
        &self,
        token: &EvmAddress,
        owner: &EvmAddress,
    ) -> Result<U256, ChainError> {
        self.balance(owner, &address_column(token))
            .await
            .map_err(chain_error)
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn token_decimals(&self, _token: &EvmAddress) -> Result<u8, ChainError> {
        Ok(SANDBOX_TOKEN_DECIMALS)
    }

    /// Every sandbox token signs as USDC does on Base mainnet (FiatToken v2: "USD Coin",
    /// version "2").
    #[tracing::instrument(level = "debug", skip(self))]
    async fn token_domain_separator(&self, token: &EvmAddress) -> Result<[u8; 32], ChainError> {
        Ok(TokenDomain {
            name: "USD Coin".into(),
            version: "2".into(),
            chain_id: SANDBOX_CHAIN_ID,
            verifying_contract: *token,
        }
        .separator())
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn block_head(&self, number: Option<u64>) -> Result<BlockHead, ChainError> {
        let mut connection = self.database.connection().await.map_err(chain_error)?;
        let latest: i64 = diesel::select(sql::<BigInt>("extract(epoch FROM now())::bigint"))
            .get_result(&mut connection)
            .await
            .map_err(|error| chain_error(from_diesel(error)))?;
        let latest = u64::try_from(latest).unwrap_or_default();
        match number {
            None => Ok(BlockHead {
                number: latest,
                timestamp: latest,
            }),
            Some(number) if number <= latest => Ok(BlockHead {
                number,
                timestamp: number,
            }),
            Some(number) => Err(ChainError::Unexpected(format!(
                "block {number} is not mined yet"
            ))),
        }
    }

    #[tracing::instrument(level = "debug", skip(self, _authorizers))]
    async fn authorizations_used(
        &self,
        _token: &EvmAddress,
        _authorizers: &[EvmAddress],
        _blocks: RangeInclusive<u64>,
    ) -> Result<Vec<UsedAuthorization>, ChainError> {
        Ok(Vec::new())
    }
}

fn transfer_store_error(error: StoreError) -> BroadcastError {
    match error {
        StoreError::Unavailable(cause) => BroadcastError::Unavailable(cause),
        other => BroadcastError::Rejected(other.to_string()),
    }
}

/// A transaction as the sandbox keeps it, mined or waiting for the nonces before it.
#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = sandbox_queued_transactions, check_for_backend(diesel::pg::Pg))]
struct Transaction {
    hash: String,
    sender: String,
    nonce: i64,
    token_address: String,
    recipient: String,
    amount_atomic: BigDecimal,
    max_fee_per_gas: BigDecimal,
    max_priority_fee_per_gas: BigDecimal,
}

impl Transaction {
    fn of(transfer: &SignedTransfer) -> Self {
        Self {
            hash: transfer.hash.clone(),
            sender: address_column(&transfer.from),
            nonce: i64::try_from(transfer.nonce).unwrap_or(i64::MAX),
            token_address: address_column(&transfer.token),
            recipient: address_column(&transfer.to),
            amount_atomic: u256_numeric(transfer.amount),
            max_fee_per_gas: BigDecimal::from(transfer.fees.max_fee_per_gas),
            max_priority_fee_per_gas: BigDecimal::from(transfer.fees.max_priority_fee_per_gas),
        }
    }

    /// Whether it may take the place of `waiting`, which has its nonce: as a node asks, it pays
    /// more on both fee caps.
    fn outbids(&self, waiting: &Transaction) -> bool {
        self.max_fee_per_gas > waiting.max_fee_per_gas
            && self.max_priority_fee_per_gas > waiting.max_priority_fee_per_gas
    }
}

/// Takes `transfer` as a node does: a nonce already used is refused, the sender's next one is
/// mined at once together with every waiting transaction it lets through, and a later one waits
/// for the nonces before it. A known hash is accepted again unchanged. Broadcasts of one sender
/// are taken one at a time, so no nonce is ever mined twice.
async fn take(
    connection: &mut AsyncPgConnection,
    transfer: &SignedTransfer,
) -> Result<Result<(), String>, TxError<StoreError>> {
    let transaction = Transaction::of(transfer);
    diesel::sql_query("SELECT pg_advisory_xact_lock(hashtextextended('sandbox sender ' || $1, 0))")
        .bind::<Text, _>(&transaction.sender)
        .execute(connection)
        .await?;
    let known: i64 = sandbox_transactions::table
        .filter(sandbox_transactions::hash.eq(&transaction.hash))
        .count()
        .get_result(connection)
        .await?;
    if known > 0 {
        return Ok(Ok(()));
    }
    let used: i64 = sandbox_transactions::table
        .filter(sandbox_transactions::sender.eq(&transaction.sender))
        .count()
        .get_result(connection)
        .await?;
    match transaction.nonce.cmp(&used) {
        Ordering::Less => Ok(Err(format!(
            "nonce too low: nonce {} is used, the next is {used}",
            transaction.nonce
        ))),
        Ordering::Greater => wait(connection, transaction).await,
        Ordering::Equal => {
            mine(connection, &transaction).await?;
            mine_waiting(connection, &transaction.sender, used + 1).await?;
            Ok(Ok(()))
        }
    }
}

/// Keeps `transaction` until the nonces before it are used; a waiting one with its nonce gives
/// way only to one that outbids it.
async fn wait(
    connection: &mut AsyncPgConnection,
    transaction: Transaction,
) -> Result<Result<(), String>, TxError<StoreError>> {
    let waiting: Option<Transaction> = sandbox_queued_transactions::table
        .filter(sandbox_queued_transactions::sender.eq(&transaction.sender))
        .filter(sandbox_queued_transactions::nonce.eq(transaction.nonce))
        .select(Transaction::as_select())
        .first(connection)
        .await
        .optional()?;
    if let Some(waiting) = waiting {
        if waiting.hash == transaction.hash {
            return Ok(Ok(()));
        }
        if !transaction.outbids(&waiting) {
            return Ok(Err(format!(
                "replacement transaction underpriced: {} waits with nonce {}",
                waiting.hash, waiting.nonce
            )));
        }
        diesel::delete(sandbox_queued_transactions::table.find(&waiting.hash))
            .execute(connection)
            .await?;
    }
    diesel::insert_into(sandbox_queued_transactions::table)
        .values(&transaction)
        .execute(connection)
        .await?;
    Ok(Ok(()))
}

/// Mines the waiting transactions of `sender` from nonce `next` on, as long as they follow one
/// another.
async fn mine_waiting(
    connection: &mut AsyncPgConnection,
    sender: &str,
    mut next: i64,
) -> Result<(), TxError<StoreError>> {
    loop {
        let waiting: Option<Transaction> = diesel::delete(
            sandbox_queued_transactions::table
                .filter(sandbox_queued_transactions::sender.eq(sender))
                .filter(sandbox_queued_transactions::nonce.eq(next)),
        )
        .returning(Transaction::as_returning())
        .get_result(connection)
        .await
        .optional()?;
        let Some(waiting) = waiting else {
            return Ok(());
        };
        mine(connection, &waiting).await?;
        next += 1;
    }
}

/// Mines `transaction`, the sender's next: moves the tokens, or records a revert when the sender
/// lacks them (the nonce is used either way, as on a real chain).
async fn mine(
    connection: &mut AsyncPgConnection,
    transaction: &Transaction,
) -> Result<(), TxError<StoreError>> {
    let (sender, token, amount) = (
        &transaction.sender,
        &transaction.token_address,
        &transaction.amount_atomic,
    );
    let balance: Option<BigDecimal> = sandbox_balances::table
        .find((sender, token))
        .select(sandbox_balances::amount_atomic)
        .for_update()
        .first(connection)
        .await
        .optional()?;
    let succeeded = balance.is_some_and(|balance| balance >= *amount);
    if succeeded {
        diesel::update(sandbox_balances::table.find((sender, token)))
            .set((
                sandbox_balances::amount_atomic.eq(sandbox_balances::amount_atomic - amount),
                sandbox_balances::updated_at.eq(diesel::dsl::now),
            ))
            .execute(connection)
            .await?;
        diesel::insert_into(sandbox_balances::table)
            .values((
                sandbox_balances::holder.eq(&transaction.recipient),
                sandbox_balances::token_address.eq(token),
                sandbox_balances::amount_atomic.eq(amount),
            ))
            .on_conflict((sandbox_balances::holder, sandbox_balances::token_address))
            .do_update()
            .set((
                sandbox_balances::amount_atomic.eq(sandbox_balances::amount_atomic + amount),
                sandbox_balances::updated_at.eq(diesel::dsl::now),
            ))
            .execute(connection)
            .await?;
    }
    diesel::insert_into(sandbox_transactions::table)
        .values((
            sandbox_transactions::hash.eq(&transaction.hash),
            sandbox_transactions::sender.eq(sender),
            sandbox_transactions::token_address.eq(token),
            sandbox_transactions::recipient.eq(&transaction.recipient),
            sandbox_transactions::amount_atomic.eq(amount),
            sandbox_transactions::nonce.eq(transaction.nonce),
            sandbox_transactions::succeeded.eq(succeeded),
        ))
        .execute(connection)
        .await?;
    Ok(())
}

#[async_trait]
impl ChainWriter for PgSandboxChain {
    async fn chain_id(&self) -> Result<u64, ChainError> {
        Ok(SANDBOX_CHAIN_ID)
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn pending_nonce(&self, sender: &EvmAddress) -> Result<u64, ChainError> {
        self.used_nonces(sender).await
    }

    /// A transaction is mined as soon as every nonce before it is used, so the pending count is
    /// the mined one: a transaction waiting behind a gap counts in neither, as on a node.
    #[tracing::instrument(level = "debug", skip(self))]
    async fn mined_nonce(&self, sender: &EvmAddress) -> Result<u64, ChainError> {
        self.used_nonces(sender).await
    }

    async fn fee_quote(&self) -> Result<FeeQuote, ChainError> {
        Ok(FeeQuote {
            max_fee_per_gas: 1_000_000_000,
            max_priority_fee_per_gas: 100_000_000,
        })
    }

    #[tracing::instrument(level = "debug", skip_all, fields(tx_hash = %transfer.hash, nonce = transfer.nonce))]
    async fn broadcast(&self, transfer: &SignedTransfer) -> Result<(), BroadcastError> {
        let mined = self
            .database
            .in_transaction::<_, StoreError, _>(|connection| {
                async move { take(connection, transfer).await }.scope_boxed()
            })
            .await
            .map_err(transfer_store_error)?;
        mined.map_err(BroadcastError::Rejected)
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn receipt(&self, tx_hash: &str) -> Result<ReceiptStatus, ChainError> {
        let mut connection = self.database.connection().await.map_err(chain_error)?;
        // Its block is the second it was mined in (see `block_head`).
        let mined: Option<(bool, i64)> = sandbox_transactions::table
            .find(tx_hash)
            .select((
                sandbox_transactions::succeeded,
                sql::<BigInt>("extract(epoch FROM sandbox_transactions.created_at)::bigint"),
            ))
            .first(&mut connection)
            .await
            .optional()
            .map_err(|error| chain_error(from_diesel(error)))?;
        Ok(match mined {
            None => ReceiptStatus::Pending,
            Some((true, second)) => ReceiptStatus::Succeeded {
                block_number: u64::try_from(second).unwrap_or_default(),
            },
            Some((false, _)) => ReceiptStatus::Reverted,
        })
    }
}
