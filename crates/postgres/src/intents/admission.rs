//! `IntentAdmission`: the idempotency key and the agent's send bucket are passed as every keyed
//! write passes them (`idempotency`, decision 0054); then the wallet row's lock makes every
//! check-and-insert of one wallet run alone, whichever server instance handles the request. An
//! expired key is taken off its intent before the wallet is locked, in the order the executor
//! takes an intent's lock and then its wallet's. The wallet's spend totals are locked last, as
//! every other writer of them does (`window`), so none deadlocks. A send is four round trips
//! whatever its policy (decision 0064): `BEGIN`; the bucket, the locks and the windows' move
//! together; the bucket's tokens and the intent together; `COMMIT`.

use std::time::Duration;

use async_trait::async_trait;
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Interval, Nullable, Timestamptz};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{
    ConfirmedBy, IntentEvent, IntentId, IntentKind, IntentStatus, RateDecision,
    TransferIntentRecord, WalletId, X402Resource,
};
use futures_util::future::BoxFuture;
use futures_util::FutureExt;
use ports::{
    Admission, AdmissionCheck, AdmissionContext, AdmissionError, AdmissionLimits, AdmissionSigner,
    IntentAdmission, NewTransferIntent, StoreError,
};
use uuid::Uuid;

use super::window::{move_windows, totals_row};
use super::x402::{insert_payment, signing_basis_of, with_payment};
use super::{intent_record, PgIntentStore};
use crate::clock::duration_from_secs;
use crate::clock::interval;
use crate::errors::{corrupt, from_diesel, TxError};
use crate::idempotency::{admit_key, refuse_limited, Earlier, IdempotencyKey, KeyHolders};
use crate::limits::{create_bucket, lock_bucket, store_bucket};
use crate::prepared::Prepared;
use crate::rows::{
    address_column, numeric_column, parse_address, SpendPolicyRow, TransferIntentRow,
};
use crate::schema::{spend_policies, transfer_intents, wallet_spend_totals, wallets};

/// The bucket of an agent's sends.
const SEND_ACTION: &str = "wallet_send";

/// The intents that took an agent's idempotency key, judged against one send.
struct IntentsUnderKey<'a>(&'a NewTransferIntent);

#[async_trait]
impl KeyHolders for IntentsUnderKey<'_> {
    type Row = TransferIntentRecord;
    type Id = IntentId;

    async fn earlier(
        &self,
        connection: &mut AsyncPgConnection,
        key: &str,
        ttl: Duration,
    ) -> Result<Option<Earlier<TransferIntentRecord, IntentId>>, TxError<StoreError>> {
        let key_live = sql::<Bool>("transfer_intents.created_at > now() - ")
            .bind::<Interval, _>(interval(ttl));
        let earlier = Prepared(
            transfer_intents::table
                .filter(transfer_intents::agent_id.eq(self.0.agent_id.0))
                .filter(transfer_intents::idempotency_key.eq(key))
                .select((TransferIntentRow::as_select(), key_live))
                .limit(1),
        )
        .get_result(connection)
        .await
        .optional()?;
        let Some((row, live)) = earlier else {
            return Ok(None);
        };
        let row = with_payment(connection, intent_record(row)?)
            .await
            .map_err(TxError::store)?;
        let paying_for = self.0.x402.as_ref().map(|offer| X402Resource {
            network: offer.network.clone(),
            resource_url: offer.resource_url.clone(),
        });
        Ok(Some(Earlier {
            id: row.id,
            repeated: row.answers_retry(&self.0.terms, paying_for.as_ref()),
            live,
            row,
        }))
    }

    async fn release(
        &self,
        connection: &mut AsyncPgConnection,
        id: &IntentId,
    ) -> Result<(), diesel::result::Error> {
        diesel::update(transfer_intents::table.find(id.0))
            .set(transfer_intents::idempotency_key.eq(None::<String>))
            .execute(connection)
            .await
            .map(drop)
    }
}

/// How one attempt at a send ended.
enum Attempt {
    Admitted(Box<Admission>),
    /// The agent's send bucket did not exist yet, and the wallet was locked before the bucket
    /// could be: nothing was taken or written but the windows' move. The bucket is made on its
    /// own and the send tried again, so that every send takes the bucket before the wallet.
    NoBucket,
}

async fn admit_locked(
    connection: &mut AsyncPgConnection,
    intent: &NewTransferIntent,
    limits: AdmissionLimits,
    check: &AdmissionCheck,
    signer: Option<&dyn AdmissionSigner>,
) -> Result<Attempt, TxError<AdmissionError>> {
    let key = intent.idempotency_key.as_ref().map(|key| IdempotencyKey {
        owner: intent.agent_id.0,
        namespace: ":",
        key: key.as_str(),
        ttl: limits.idempotency_key,
    });
    let holders = IntentsUnderKey(intent);
    if let Some(earlier) = admit_key(connection, key, &holders).await? {
        return Ok(Attempt::Admitted(Box::new(Admission::Replayed(earlier))));
    }
    let (agent, terms) = (intent.agent_id, &intent.terms);
    // A payment the policy may confirm at once is signed in this transaction: what its signer
    // needs is read with the locks, in their round trip.
    let signer = signer.filter(|_| intent.x402.is_some());
    // One round trip: the statements go out together and run in this order, each lock taken in
    // the order every writer takes them. The agent's send bucket; then the wallet, its policy
    // and its totals, locked: sends of one wallet run one at a time, a change of its policy
    // waits for the sends in flight (and they for it), so each send is checked against the
    // policy current when it commits (not FOR UPDATE: that would also block the foreign-key
    // checks on the wallet that a change of its spend totals makes, while this waits for the
    // totals); then the windows moved, in a statement whose snapshot follows those locks; then,
    // for a payment, its signing basis.
    let basis =
        optional(signer.map(|signer| signing_basis_of(connection, agent, signer.chain_id())));
    let (bucket, locked, moved, basis) = futures_util::try_join!(
        lock_bucket(connection, agent.0, SEND_ACTION),
        Prepared(
            wallets::table
                .inner_join(spend_policies::table)
                .inner_join(wallet_spend_totals::table)
                .filter(wallets::agent_id.eq(agent.0))
                .select((wallets::id, wallets::address, SpendPolicyRow::as_select()))
                .for_no_key_update(),
        )
        .get_result::<(Uuid, String, SpendPolicyRow)>(connection)
        .map(OptionalExtension::optional)
        .boxed(),
        move_windows(connection, agent, &terms.recipient),
        basis,
    )?;
    let Some((tokens, elapsed)) = bucket else {
        return Ok(Attempt::NoBucket);
    };
    // A refused send commits: the token it took stays taken, so refusals count against the rate
    // as acceptances do.
    let (tokens, decision) = limits.rate.take(tokens, duration_from_secs(elapsed));
    if let RateDecision::Limited { .. } = decision {
        store_bucket(connection, agent.0, SEND_ACTION, tokens).await?;
        refuse_limited::<IntentsUnderKey, _>(decision)?;
    }
    let Some((wallet_id, address, policy)) = locked else {
        return Err(TxError::Abort(AdmissionError::NoWallet));
    };
    let wallet = WalletId(wallet_id);
    let policy = policy.into_record().map_err(TxError::store)?;
    let capped_recipient = policy.rules.recipient_limits.daily_capped(&terms.recipient);
    let held = totals_row(moved, wallet)?
        .held(connection, agent, wallet, capped_recipient.as_ref())
        .await?;
    let context = AdmissionContext {
        wallet_address: &parse_address(&address).map_err(TxError::store)?,
        policy: &policy,
        held,
    };
    let admitted = match check(&context) {
        Ok(admitted) => admitted,
        Err(refusal) => {
            store_bucket(connection, agent.0, SEND_ACTION, tokens).await?;
            return Err(TxError::Abort(AdmissionError::Refused(refusal)));
        }
    };
    // Signed under the wallet's lock, once the policy has confirmed the payment; the rest of
    // the transaction records it, and nothing is handed out before it commits.
    let signed = match (signer, basis.flatten()) {
        (Some(signer), Some(basis)) if admitted.status() == IntentStatus::Confirmed => Some(
            signer
                .sign(basis.into_basis().map_err(TxError::store)?)
                .await
                .map_err(|failed| TxError::Abort(AdmissionError::Signing(failed)))?,
        ),
        (Some(_), None) => {
            return Err(TxError::store(corrupt(format!(
                "the locked wallet {wallet} vanished"
            ))))
        }
        _ => None,
    };
    let confirmed_by = admitted.confirmed_by().map(ConfirmedBy::as_str);
    let kind = match intent.x402 {
        Some(_) => IntentKind::X402,
        None => IntentKind::Transfer,
    };
    // The bucket, the intent, a payment's offer and, once signed, its authorization and the
    // intent's move to `authorized`, in one round trip, in this order. Prepared: the text is the
    // same on every run, the SQL of `confirmed_at` included.
    let stored_bucket = store_bucket(connection, agent.0, SEND_ACTION, tokens);
    let inserted = Prepared(
        diesel::insert_into(transfer_intents::table)
            .values((
                transfer_intents::id.eq(intent.id.0),
                transfer_intents::agent_id.eq(agent.0),
                transfer_intents::wallet_id.eq(wallet_id),
                transfer_intents::status.eq(admitted.status().as_str()),
                transfer_intents::confirmed_by.eq(confirmed_by),
                transfer_intents::confirmed_at.eq(sql::<Nullable<Timestamptz>>("CASE WHEN ")
                    .bind::<Bool, _>(confirmed_by.is_some())
                    .sql(" THEN now() END")),
                transfer_intents::approvals_required.eq(i16::from(admitted.approvals_required())),
                transfer_intents::asset.eq(terms.asset.symbol()),
                transfer_intents::chain.eq(terms.chain.as_str()),
                transfer_intents::token_address
                    .eq(intent.token_address.as_ref().map(address_column)),
                transfer_intents::recipient_address.eq(address_column(&terms.recipient)),
                transfer_intents::amount_atomic.eq(numeric_column(&terms.amount)),
                transfer_intents::idempotency_key
                    .eq(intent.idempotency_key.as_ref().map(|k| k.as_str())),
                transfer_intents::key_id.eq(intent.key_id.map(|key| key.0)),
                transfer_intents::kind.eq(kind.as_str()),
            ))
            .returning(TransferIntentRow::as_returning()),
    )
    .get_result::<TransferIntentRow>(connection)
    .boxed();
    let payment =
        optional(intent.x402.as_ref().map(|offer| {
            insert_payment(connection, intent.id, agent, wallet, offer, signed.as_ref())
        }));
    let authorized = match &signed {
        Some(_) => {
            let next = admitted
                .status()
                .apply_as(kind, IntentEvent::Authorize)
                .map_err(|refused| {
                    TxError::store(corrupt(format!(
                        "authorizing payment {} at its admission: {refused}",
                        intent.id
                    )))
                })?;
            Some(move_admitted(connection, intent.id, next))
        }
        None => None,
    };
    let (_, row, payment, authorized) =
        futures_util::try_join!(stored_bucket, inserted, payment, optional(authorized))?;
    let mut created = intent_record(authorized.unwrap_or(row))?;
    if let Some(payment) = payment {
        created.x402 = Some(payment.into_payment().map_err(TxError::store)?);
    }
    Ok(Attempt::Admitted(Box::new(Admission::Created(created))))
}

/// Moves the intent `id`, inserted earlier in this transaction, on to `next`; its row as it is
/// then.
fn move_admitted(
    connection: &mut AsyncPgConnection,
    id: IntentId,
    next: IntentStatus,
) -> BoxFuture<'static, QueryResult<TransferIntentRow>> {
    Prepared(
        diesel::update(transfer_intents::table.find(id.0))
            .set((
                transfer_intents::status.eq(next.as_str()),
                transfer_intents::updated_at.eq(diesel::dsl::now),
            ))
            .returning(TransferIntentRow::as_returning()),
    )
    .get_result(connection)
    .boxed()
}

/// The result of `read`, when there is one to wait for: a future that holds no borrow of the
/// connection, so it can go out with the statements beside it.
fn optional<T: Send + 'static>(
    read: Option<BoxFuture<'static, QueryResult<T>>>,
) -> BoxFuture<'static, QueryResult<Option<T>>> {
    match read {
        Some(read) => read.map(|result| result.map(Some)).boxed(),
        None => futures_util::future::ready(Ok(None)).boxed(),
    }
}

#[async_trait]
impl IntentAdmission for PgIntentStore {
    #[tracing::instrument(level = "debug", skip_all, fields(agent_id = %intent.agent_id, intent_id = %intent.id))]
    async fn admit<'a>(
        &self,
        intent: NewTransferIntent,
        limits: AdmissionLimits,
        check: &AdmissionCheck,
        signer: Option<&'a dyn AdmissionSigner>,
    ) -> Result<Admission, AdmissionError> {
        let intent = &intent;
        // An agent's first send makes its bucket and comes round once more; no other does.
        for _ in 0..2 {
            let attempt = self
                .database
                .in_transaction(|connection| {
                    async move {
                        match admit_locked(connection, intent, limits, check, signer).await {
                            // A refused send commits: the token it took stays taken, so
                            // refusals count against the rate as acceptances do.
                            Err(TxError::Abort(refused))
                                if !matches!(
                                    refused,
                                    AdmissionError::Store(_) | AdmissionError::Signing(_)
                                ) =>
                            {
                                Ok(Err(refused))
                            }
                            attempt => attempt.map(Ok),
                        }
                    }
                    .scope_boxed()
                })
                .await??;
            match attempt {
                Attempt::Admitted(admission) => return Ok(*admission),
                Attempt::NoBucket => {
                    let mut connection = self.database.connection().await?;
                    create_bucket(&mut connection, intent.agent_id.0, SEND_ACTION, limits.rate)
                        .await
                        .map_err(from_diesel)?;
                }
            }
        }
        Err(corrupt(format!(
            "the send bucket of agent {} vanished",
            intent.agent_id
        ))
        .into())
    }
}

#[cfg(test)]
mod tests {
    //! The cost of a send counted in rows of `transfer_intents` read, which no machine's speed
    //! changes.

    use std::time::Duration;

    use diesel::sql_types::BigInt;
    use diesel_async::{AsyncConnection, SimpleAsyncConnection};
    use domain::{
        Admitted, AgentId, AgentKey, ApprovalCount, Asset, AtomicAmount, Chain, Custody,
        EvmAddress, IntentId, Label, PolicyAsset, RateLimit, TransferTerms, U256,
    };
    use ports::{AdmissionRefusal, AgentStore, NewAgent, NewWallet, StoreError};
    use test_support::TestDatabase;

    use super::*;
    use crate::intents::window::wallet_and_held;
    use crate::{Connector, Database, PgAgentStore, PoolSettings};

    const DAY: Duration = Duration::from_secs(24 * 60 * 60);
    const LIMITS: AdmissionLimits = AdmissionLimits {
        idempotency_key: DAY,
        rate: RateLimit {
            per_minute: 1_000_000,
            burst: 1_000_000,
        },
    };

    fn usdc() -> PolicyAsset {
        PolicyAsset::usdc_on_base(EvmAddress::from_bytes([0xaa; 20]))
    }

    async fn new_agent(agents: &PgAgentStore, seed: u8) -> (AgentId, WalletId) {
        let id = AgentId(Uuid::now_v7());
        let profile = agents
            .create(
                NewAgent {
                    id,
                    sponsor: "acme".into(),
                    label: Some(Label::parse("payer").expect("valid")),
                    key_id: domain::keys::KeyId::generate(),
                    key_hash: AgentKey::from_random_bytes([seed; 32]).hash(),
                    phone_number: None,
                    email_inbox: None,
                    wallet: Some(NewWallet {
                        provider: "local".into(),
                        chain: Chain::Base,
                        address: EvmAddress::from_bytes([seed; 20]),
                        custody: Custody::SelfCustodial,
                        sealed_key: vec![seed],
                        policy_asset: usdc(),
                    }),
                },
                &domain::Actor::local(domain::Operator::Cli { user: None }),
            )
            .await
            .expect("agent");
        (id, profile.wallet.expect("a wallet").id)
    }

    fn send(agent: AgentId) -> NewTransferIntent {
        NewTransferIntent {
            id: IntentId(Uuid::now_v7()),
            agent_id: agent,
            terms: TransferTerms {
                asset: Asset::Usdc,
                chain: Chain::Base,
                recipient: EvmAddress::from_bytes([0x22; 20]),
                amount: AtomicAmount::parse("1").expect("valid"),
            },
            token_address: usdc().token_address,
            idempotency_key: None,
            key_id: None,
            x402: None,
        }
    }

    fn allow(_: &AdmissionContext<'_>) -> Result<Admitted, AdmissionRefusal> {
        Ok(Admitted::AwaitsApprovals(ApprovalCount::ONE))
    }

    #[derive(QueryableByName)]
    struct Read {
        #[diesel(sql_type = BigInt)]
        rows: i64,
    }

    /// The rows of `transfer_intents` this connection has read by any scan of the table or of one
    /// of its indexes, since its counts were last flushed to the statistics (never inside a
    /// transaction).
    async fn intents_read(
        connection: &mut AsyncPgConnection,
    ) -> Result<i64, diesel::result::Error> {
        let read: Read = diesel::sql_query(
            "SELECT ((SELECT seq_tup_read FROM pg_stat_xact_user_tables \
                      WHERE relname = 'transfer_intents') \
                   + (SELECT coalesce(sum(pg_stat_get_xact_tuples_returned(indexrelid)), 0) \
                      FROM pg_index WHERE indrelid = 'transfer_intents'::regclass))::bigint AS rows",
        )
        .get_result(connection)
        .await?;
        Ok(read.rows)
    }

    /// Admits a send of the agent and commits it; returns the intents it read.
    async fn send_reading(connection: &mut AsyncPgConnection, agent: AgentId) -> i64 {
        connection
            .transaction::<_, TxError<AdmissionError>, _>(|connection| {
                async move {
                    let before = intents_read(connection).await?;
                    let attempt = admit_locked(connection, &send(agent), LIMITS, &allow, None).await?;
                    assert!(
                        matches!(attempt, Attempt::Admitted(admission) if matches!(*admission, Admission::Created(_)))
                    );
                    // The totals count the new intent at commit: now, so that it is counted too.
                    connection
                        .batch_execute("SET CONSTRAINTS ALL IMMEDIATE")
                        .await?;
                    Ok(intents_read(connection).await? - before)
                }
                .scope_boxed()
            })
            .await
            .map_err(TxError::into_error)
            .expect("admitted")
    }

    /// What the agent's wallet holds as the ledger reads it, and the intents that reading read.
    async fn held_reading(connection: &mut AsyncPgConnection, agent: AgentId) -> (U256, i64) {
        connection
            .transaction::<_, TxError<StoreError>, _>(|connection| {
                async move {
                    let before = intents_read(connection).await?;
                    let (_, held) = wallet_and_held(connection, agent, None)
                        .await
                        .map_err(TxError::store)?
                        .expect("a wallet");
                    Ok((held.daily, intents_read(connection).await? - before))
                }
                .scope_boxed()
            })
            .await
            .map_err(TxError::into_error)
            .expect("read")
    }

    #[tokio::test]
    async fn a_send_reads_each_intent_that_left_the_window_once_and_no_other() {
        let database = TestDatabase::new().await;
        // This crate's own `Connector`: test-support's is of the crate as a dependency.
        let connector = Connector::from_url(database.url()).expect("the test database's URL");
        let pool = Database::connect(&connector, PoolSettings::default()).expect("pool");
        let agents = PgAgentStore::new(pool);
        let (quiet, _) = new_agent(&agents, 1).await;
        let (busy, busy_wallet) = new_agent(&agents, 2).await;
        let mut connection = database.connection().await;
        for agent in [quiet, busy] {
            create_bucket(&mut connection, agent.0, SEND_ACTION, LIMITS.rate)
                .await
                .expect("bucket");
        }
        // 5,000 open and 5,000 executed in the window, and 1,000 executed before it, which the
        // new wallet's totals count until a send moves them past.
        connection
            .batch_execute(&format!(
                "INSERT INTO transfer_intents (id, agent_id, wallet_id, status, asset, chain, \
                 recipient_address, amount_atomic, tx_hash, nonce, executed_at) \
                 SELECT gen_random_uuid(), '{busy}', '{busy_wallet}', \
                 CASE WHEN n <= 5000 THEN 'pending_confirmation' ELSE 'executed' END, \
                 'USDC', 'base', '0x2222222222222222222222222222222222222222', 1, \
                 '0x' || md5(n::text), n, \
                 CASE WHEN n <= 5000 THEN NULL \
                      WHEN n <= 10000 THEN now() - n * interval '1 second' \
                      ELSE now() - interval '25 hours' - n * interval '1 second' END \
                 FROM generate_series(1, 11000) AS n; \
                 ANALYZE transfer_intents"
            ))
            .await
            .expect("seeded");
        let quiet_first = send_reading(&mut connection, quiet).await;
        let busy_first = send_reading(&mut connection, busy).await;
        assert_eq!(
            (quiet_first, busy_first),
            (0, 1000),
            "the first send takes the intents executed before the window out of the totals"
        );
        let quiet_send = send_reading(&mut connection, quiet).await;
        let busy_send = send_reading(&mut connection, busy).await;
        assert_eq!(
            (quiet_send, busy_send),
            (0, 0),
            "then a send reads no intent, with 10,000 in the window as with none"
        );
        assert_eq!(
            (
                held_reading(&mut connection, quiet).await,
                held_reading(&mut connection, busy).await
            ),
            ((U256::from(2), 0), (U256::from(10_002), 0)),
            "nor does the ledger's reading of the held amount"
        );
    }
}
