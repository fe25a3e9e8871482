//! Execution of confirmed intents on chain, exactly once.
//!
//! Submitting: claim a confirmed intent, assign it the wallet's next nonce (under the wallet's
//! lock, so instances never share one), sign, record the signed transaction (the intent becomes
//! submitted), and only then broadcast. A crash at any point leaves either nothing recorded (the
//! claim lapses and the intent is signed again, with the nonce it was assigned) or recorded bytes
//! that are sent again.
//!
//! Following: every transaction sent for an intent uses its one nonce, so at most one can be
//! mined. Only a receipt of one of them, or the nonce being used for good by a transaction that
//! is not ours, settles the intent. A failed broadcast proves nothing (the bytes may have left):
//! the intent stays submitted, is sent again with backoff, and is replaced by a better-paying
//! transaction when it stays unmined too long. `failed` means the money did not and will not move.
//! Following goes wallet by wallet: one read of the wallet's mined count per round, receipts only
//! for the nonces below it, and only a bounded front of the wallet's lowest nonces, so a wallet's
//! backlog costs a round the same few node calls however long it grows.

use std::sync::Arc;
use std::time::Duration;

use domain::{
    nonce_used, replacement_fees, without_receipt, LeaseId, RetrySchedule, TransferIntentRecord,
    WithoutReceipt,
};
use ports::{
    ChainError, ChainWriter, KeyVault, ProviderError, ReceiptStatus, Settlement, SettlementQueue,
    SignedTransfer, StoreError, SubmissionClaim, SubmissionError, SubmissionQueue, SubmittedIntent,
    TransferCall, TransitionError,
};
use uuid::Uuid;

use crate::chain_id::KnownChainId;
use crate::leased_queue::Owed;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExecutorSettings {
    /// Gas limit of an ERC-20 transfer; a fixed cap keeps a reverting transfer observable on chain.
    pub gas_limit: u64,
    /// How long a claim on a confirmed intent, or a look at a submitted one, holds it from other
    /// executors; after a crash, the intent waits this long.
    pub lease: Duration,
    /// How many due submitted intents one pass looks at.
    pub follow_batch: usize,
    /// How many of one wallet's lowest submitted nonces a pass may look at: no later transaction
    /// of the wallet can be mined before them, so looking further only costs node calls.
    pub follow_per_wallet: usize,
    /// Waits between looks at a sent transfer without a receipt.
    pub retry: RetrySchedule,
    /// How long a transaction may stay unmined before a better-paying one replaces it.
    pub replace_after: Duration,
    /// How long an intent's nonce must be seen used without a receipt of its own before the
    /// intent is failed: receipts of mined transactions can lag behind the nonce count.
    pub nonce_grace: Duration,
}

impl Default for ExecutorSettings {
    fn default() -> Self {
        Self {
            gas_limit: 100_000,
            lease: Duration::from_secs(30),
            follow_batch: 100,
            follow_per_wallet: 16,
            retry: RetrySchedule {
                base: Duration::from_secs(1),
                cap: Duration::from_secs(60),
            },
            replace_after: Duration::from_secs(180),
            nonce_grace: Duration::from_secs(60),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ExecutionError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Chain(#[from] ChainError),
    #[error(transparent)]
    Transition(#[from] TransitionError),
    #[error("key vault: {0}")]
    Vault(ProviderError),
}

impl From<SubmissionError> for ExecutionError {
    fn from(error: SubmissionError) -> Self {
        match error {
            SubmissionError::Transition(error) => error.into(),
            other => Self::Store(StoreError::Internal(other.to_string())),
        }
    }
}

/// What became of one claimed intent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubmitOutcome {
    /// Signed, recorded and broadcast (or to be broadcast again).
    Submitted,
    /// It cannot be carried out and nothing was sent; it is failed with the reason.
    Failed,
    /// Another executor's claim won; it is taken up again later.
    Released,
}

/// What one pass over the due submitted intents did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FollowOutcome {
    pub executed: usize,
    pub failed: usize,
    /// Transactions sent again unchanged.
    pub rebroadcast: usize,
    /// Transactions replaced by better-paying ones.
    pub replaced: usize,
}

pub struct Executor {
    /// Confirmed intents to sign, and the transactions recorded for them.
    submissions: Arc<dyn SubmissionQueue>,
    /// Submitted intents to follow, and their settlement.
    settlements: Arc<dyn SettlementQueue>,
    chain: Arc<dyn ChainWriter>,
    vault: Arc<dyn KeyVault>,
    settings: ExecutorSettings,
    chain_id: KnownChainId,
    /// Leases this executor failed to give back (the store was unreachable, or a claim's answer
    /// was lost). An intent holding an assigned nonce would otherwise hold up its wallet's later
    /// transfers for a whole lease.
    unreleased: Owed<LeaseId>,
}

impl Executor {
    pub fn new(
        submissions: Arc<dyn SubmissionQueue>,
        settlements: Arc<dyn SettlementQueue>,
        chain: Arc<dyn ChainWriter>,
        vault: Arc<dyn KeyVault>,
        settings: ExecutorSettings,
    ) -> Self {
        Self {
            submissions,
            settlements,
            chain,
            vault,
            settings,
            chain_id: KnownChainId::default(),
            unreleased: Owed::default(),
        }
    }

    async fn chain_id(&self) -> Result<u64, ChainError> {
        self.chain_id.of(self.chain.as_ref()).await
    }

    /// Submits the oldest confirmed intent, if there is one, and says what became of it.
    #[tracing::instrument(level = "debug", skip(self), fields(intent_id))]
    pub async fn submit_next(&self) -> Result<Option<SubmitOutcome>, ExecutionError> {
        // A claim that lapsed meanwhile is left alone (the lease does not match).
        self.unreleased
            .settle(|lease| self.submissions.release(lease))
            .await?;
        let lease = LeaseId(Uuid::now_v7());
        let claimed = self
            .submissions
            .claim_confirmed(lease, self.settings.lease)
            .await;
        let claim = match claimed {
            Ok(Some(claim)) => claim,
            Ok(None) => return Ok(None),
            Err(error) => {
                // The claim may have been committed with its answer lost: give it back before
                // claiming again, not a whole lease later.
                self.unreleased.push(lease);
                return Err(error.into());
            }
        };
        tracing::Span::current().record("intent_id", tracing::field::display(claim.intent.id));
        let outcome = self.submit(&claim).await;
        if outcome.is_err() {
            // Transient trouble (the chain, the vault, the store): let another round try soon.
            if let Err(error) = self.submissions.release(claim.lease).await {
                tracing::warn!(intent_id = %claim.intent.id, %error, "releasing a claim failed; it is given back at the next round");
                self.unreleased.push(claim.lease);
            }
        }
        outcome.map(Some)
    }

    async fn submit(&self, claim: &SubmissionClaim) -> Result<SubmitOutcome, ExecutionError> {
        let intent = &claim.intent;
        // Checked only before a nonce is assigned: once one is, the transfer goes ahead, so an
        // assigned nonce is always filled.
        if claim.nonce.is_none() && !claim.agent_active {
            return self
                .fail_unsent(intent, "the agent was deactivated before execution".into())
                .await;
        }
        let Some(token) = intent.token_address else {
            return self
                .fail_unsent(intent, "the intent names no token contract".into())
                .await;
        };
        let chain_id = self.chain_id().await?;
        let fees = self.chain.fee_quote().await?;
        let nonce = match claim.nonce {
            Some(nonce) => nonce,
            None => {
                let chain_next = self.chain.pending_nonce(&claim.wallet_address).await?;
                match self
                    .submissions
                    .assign_nonce(intent.id, claim.lease, chain_next)
                    .await
                {
                    Ok(nonce) => nonce,
                    Err(SubmissionError::LeaseLost(_)) => return Ok(SubmitOutcome::Released),
                    Err(other) => return Err(other.into()),
                }
            }
        };
        let call = TransferCall {
            chain_id,
            nonce,
            token,
            to: intent.recipient,
            amount: intent.amount.value(),
            gas_limit: self.settings.gas_limit,
            fees,
        };
        // A key the vault cannot open means a wrong master key in this instance's settings, not
        // a bad transfer: the intent waits (keeping its nonce) until the setting is mended.
        let signed = self
            .vault
            .sign_transfer(&claim.sealed_key, &claim.wallet_address, call)
            .await
            .map_err(ExecutionError::Vault)?;
        match self
            .submissions
            .record_attempt(
                intent.id,
                Some(claim.lease),
                &signed,
                self.settings.retry.base,
            )
            .await
        {
            Ok(_) => {
                tracing::info!(intent_id = %intent.id, tx_hash = %signed.hash, nonce, "transfer recorded; broadcasting");
            }
            Err(SubmissionError::LeaseLost(_)) => return Ok(SubmitOutcome::Released),
            Err(other) => return Err(other.into()),
        }
        self.broadcast(intent, &signed).await?;
        Ok(SubmitOutcome::Submitted)
    }

    /// Sends `signed` and notes how it went. A failure is no proof that nothing was sent: the
    /// intent stays as it is and its next look decides.
    async fn broadcast(
        &self,
        intent: &TransferIntentRecord,
        signed: &SignedTransfer,
    ) -> Result<(), ExecutionError> {
        let error = match self.chain.broadcast(signed).await {
            Ok(()) => None,
            Err(error) => {
                tracing::warn!(intent_id = %intent.id, tx_hash = %signed.hash, %error, "broadcast not accepted; the transaction will be sent again");
                Some(error.to_string())
            }
        };
        self.submissions
            .record_broadcast(&signed.hash, error)
            .await?;
        Ok(())
    }

    /// Fails an intent for which nothing was sent.
    async fn fail_unsent(
        &self,
        intent: &TransferIntentRecord,
        reason: String,
    ) -> Result<SubmitOutcome, ExecutionError> {
        tracing::warn!(intent_id = %intent.id, %reason, "transfer failed before anything was sent");
        match self
            .settlements
            .settle(intent.id, Settlement::Failed(reason), None)
            .await
        {
            Ok(_) | Err(TransitionError::Refused(_)) => Ok(SubmitOutcome::Failed),
            Err(error) => Err(error.into()),
        }
    }

    /// Looks at the submitted intents that are due, wallet by wallet, a bounded front of each
    /// wallet's lowest nonces: the wallet's mined count is read once, the transfers below it are
    /// settled by their receipts, and those at or above it are sent again (or replaced). So one
    /// wallet's backlog costs each round a bounded number of node calls, whatever its length,
    /// and every other wallet is looked at in the same round. Trouble with one intent or wallet
    /// is logged and looked at again later; the others go on.
    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn follow_submitted(&self) -> Result<FollowOutcome, ExecutionError> {
        let mut outcome = FollowOutcome::default();
        let due = self
            .settlements
            .due_submitted(
                self.settings.follow_batch,
                self.settings.follow_per_wallet,
                self.settings.lease,
            )
            .await?;
        for wallet in due.chunk_by(|one, next| one.wallet_address == next.wallet_address) {
            let Some(first) = wallet.first() else {
                continue;
            };
            let mined = match self.chain.mined_nonce(&first.wallet_address).await {
                Ok(mined) => mined,
                Err(error) => {
                    tracing::warn!(wallet = %first.wallet_address, %error, "reading the wallet's mined count failed; looking again later");
                    for submitted in wallet {
                        self.look_again_later(submitted).await?;
                    }
                    continue;
                }
            };
            for submitted in wallet {
                if let Err(error) = self.follow(submitted, mined, &mut outcome).await {
                    tracing::warn!(intent_id = %submitted.intent.id, %error, "following a submitted transfer failed; looking again later");
                    self.look_again_later(submitted).await?;
                }
            }
        }
        Ok(outcome)
    }

    async fn look_again_later(&self, submitted: &SubmittedIntent) -> Result<(), StoreError> {
        let wait = self.settings.retry.delay(submitted.checks);
        self.settlements
            .reschedule(submitted.intent.id, wait, false)
            .await
    }

    /// Settles, sends again or puts off one intent of a wallet that has mined `mined`
    /// transactions. Only a used nonce can have a receipt: the count is read before the
    /// receipts, so a transaction of ours mined before the count shows its receipt after it.
    async fn follow(
        &self,
        submitted: &SubmittedIntent,
        mined: u64,
        outcome: &mut FollowOutcome,
    ) -> Result<(), ExecutionError> {
        let intent = &submitted.intent;
        if nonce_used(submitted.nonce, mined) {
            if let Some(settlement) =
                settlement_by_receipt(self.chain.as_ref(), &submitted.attempts).await?
            {
                return self.settle(intent, settlement, outcome).await;
            }
        }
        let wait = self.settings.retry.delay(submitted.checks);
        match without_receipt(
            submitted.nonce,
            mined,
            submitted.nonce_used_for,
            self.settings.nonce_grace,
        ) {
            WithoutReceipt::NonceTakenByAnother => {
                self.settle(intent, nonce_taken_by_another(submitted.nonce), outcome)
                    .await
            }
            WithoutReceipt::NonceUsedLookAgain => {
                let wait = wait.min(self.settings.nonce_grace);
                Ok(self.settlements.reschedule(intent.id, wait, true).await?)
            }
            WithoutReceipt::StillPending => {
                let newest = submitted.attempts.first().ok_or_else(|| {
                    StoreError::Internal(format!("intent {} has no transaction", intent.id))
                })?;
                if submitted.newest_attempt_age >= self.settings.replace_after {
                    let replacement = self.replace(submitted, newest).await?;
                    outcome.replaced += 1;
                    self.broadcast(intent, &replacement).await?;
                } else {
                    outcome.rebroadcast += 1;
                    self.broadcast(intent, newest).await?;
                }
                Ok(self.settlements.reschedule(intent.id, wait, false).await?)
            }
        }
    }

    /// Signs the same transfer again, with the same nonce and better fees, and records it before
    /// it is broadcast.
    async fn replace(
        &self,
        submitted: &SubmittedIntent,
        newest: &SignedTransfer,
    ) -> Result<SignedTransfer, ExecutionError> {
        let fees = replacement_fees(newest.fees, self.chain.fee_quote().await?);
        let call = TransferCall {
            chain_id: self.chain_id().await?,
            nonce: submitted.nonce,
            token: newest.token,
            to: newest.to,
            amount: newest.amount,
            gas_limit: self.settings.gas_limit,
            fees,
        };
        let replacement = self
            .vault
            .sign_transfer(&submitted.sealed_key, &submitted.wallet_address, call)
            .await
            .map_err(ExecutionError::Vault)?;
        self.submissions
            .record_attempt(
                submitted.intent.id,
                None,
                &replacement,
                self.settings.retry.base,
            )
            .await?;
        tracing::info!(intent_id = %submitted.intent.id, tx_hash = %replacement.hash, replaced = %newest.hash, max_fee_per_gas = fees.max_fee_per_gas, "transfer replaced by a better-paying transaction");
        Ok(replacement)
    }

    async fn settle(
        &self,
        intent: &TransferIntentRecord,
        settlement: Settlement,
        outcome: &mut FollowOutcome,
    ) -> Result<(), ExecutionError> {
        let executed = matches!(settlement, Settlement::Executed { .. });
        match self.settlements.settle(intent.id, settlement, None).await {
            Ok(settled) => {
                match executed {
                    true => outcome.executed += 1,
                    false => outcome.failed += 1,
                }
                tracing::info!(intent_id = %intent.id, status = %settled.status, tx_hash = ?settled.tx_hash, "transfer settled");
                Ok(())
            }
            // Another instance settled it first.
            Err(TransitionError::Refused(_)) => Ok(()),
            Err(error) => Err(error.into()),
        }
    }

    /// How long the oldest confirmed intent has waited to be submitted.
    pub async fn queue_lag(&self) -> Result<Option<Duration>, ExecutionError> {
        Ok(self.submissions.oldest_confirmed_wait().await?)
    }
}

/// What a receipt of one of an intent's `transactions` decides: success executes it with that
/// transaction's hash, a revert fails it. They share one nonce, so at most one is ever mined.
/// `None` while none has a receipt.
pub(crate) async fn settlement_by_receipt(
    chain: &dyn ChainWriter,
    transactions: &[SignedTransfer],
) -> Result<Option<Settlement>, ChainError> {
    for transaction in transactions {
        let settlement = match chain.receipt(&transaction.hash).await? {
            ReceiptStatus::Pending => continue,
            ReceiptStatus::Succeeded { block_number } => Settlement::Executed {
                tx_hash: transaction.hash.clone(),
                block_number: Some(block_number),
            },
            ReceiptStatus::Reverted => Settlement::Failed(format!(
                "the transaction {} reverted on chain (e.g. insufficient token balance)",
                transaction.hash
            )),
        };
        return Ok(Some(settlement));
    }
    Ok(None)
}

/// How a transfer ends whose `nonce` was used by a transaction that is not one of its own.
pub(crate) fn nonce_taken_by_another(nonce: u64) -> Settlement {
    Settlement::Failed(format!(
        "nonce {nonce} was used by a transaction that is not this transfer's; the transfer was \
         not executed and will not be"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::{EvmAddress, FeeQuote, IntentStatus, LeaseId, U256};
    use mockall::predicate::eq;
    use mockall::Sequence;
    use ports::{MockChainWriter, MockKeyVault, MockSettlementQueue, MockSubmissionQueue};
    use uuid::Uuid;

    /// The executor's queues, mocked: each expects only what a test tells it.
    #[derive(Default)]
    struct Queue {
        submissions: MockSubmissionQueue,
        settlements: MockSettlementQueue,
    }

    const MARKET: FeeQuote = FeeQuote {
        max_fee_per_gas: 100,
        max_priority_fee_per_gas: 10,
    };

    fn intent(status: IntentStatus) -> TransferIntentRecord {
        TransferIntentRecord {
            status,
            ..TransferIntentRecord::fixture()
        }
    }

    fn claim(nonce: Option<u64>, agent_active: bool) -> SubmissionClaim {
        SubmissionClaim {
            intent: intent(IntentStatus::Confirmed),
            lease: LeaseId(Uuid::new_v4()),
            wallet_address: EvmAddress::from_bytes([0x01; 20]),
            sealed_key: vec![1, 2, 3],
            agent_active,
            nonce,
        }
    }

    fn signed(call: &TransferCall) -> SignedTransfer {
        SignedTransfer {
            from: EvmAddress::from_bytes([0x01; 20]),
            token: call.token,
            to: call.to,
            amount: call.amount,
            nonce: call.nonce,
            fees: call.fees,
            raw: vec![0x02, call.fees.max_fee_per_gas as u8],
            hash: format!("0x{:x}{:062x}", call.fees.max_fee_per_gas % 16, call.nonce),
        }
    }

    fn chain_quoting(pending: u64) -> MockChainWriter {
        let mut chain = MockChainWriter::new();
        chain.expect_chain_id().returning(|| Ok(8453));
        chain.expect_pending_nonce().returning(move |_| Ok(pending));
        chain.expect_fee_quote().returning(|| Ok(MARKET));
        chain
    }

    fn vault() -> MockKeyVault {
        let mut vault = MockKeyVault::new();
        vault
            .expect_sign_transfer()
            .returning(|_, _, call| Ok(signed(&call)));
        vault
    }

    fn executor(queue: Queue, chain: MockChainWriter, vault: MockKeyVault) -> Executor {
        Executor::new(
            Arc::new(queue.submissions),
            Arc::new(queue.settlements),
            Arc::new(chain),
            Arc::new(vault),
            ExecutorSettings::default(),
        )
    }

    #[tokio::test]
    async fn with_nothing_confirmed_nothing_is_signed() {
        let mut queue = Queue::default();
        queue
            .submissions
            .expect_claim_confirmed()
            .returning(|_, _| Ok(None));
        let mut vault = MockKeyVault::new();
        vault.expect_sign_transfer().never();
        let executor = executor(queue, MockChainWriter::new(), vault);
        assert_eq!(executor.submit_next().await.expect("ran"), None);
    }

    #[tokio::test]
    async fn the_nonce_is_assigned_then_the_signed_transaction_recorded_then_broadcast() {
        let claimed = claim(None, true);
        let (id, lease) = (claimed.intent.id, claimed.lease);
        let mut sequence = Sequence::new();
        let mut queue = Queue::default();
        queue
            .submissions
            .expect_claim_confirmed()
            .return_once(move |_, _| Ok(Some(claimed)));
        queue
            .submissions
            .expect_assign_nonce()
            .with(eq(id), eq(lease), eq(4))
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_, _, _| Ok(7));
        let mut vault = MockKeyVault::new();
        vault
            .expect_sign_transfer()
            .withf(|_, _, call| call.nonce == 7 && call.fees == MARKET)
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_, _, call| Ok(signed(&call)));
        queue
            .submissions
            .expect_record_attempt()
            .withf(move |i, l, attempt, _| *i == id && *l == Some(lease) && attempt.nonce == 7)
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_, _, _, _| Ok(intent(IntentStatus::Submitted)));
        let mut chain = chain_quoting(4);
        chain
            .expect_broadcast()
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_| Ok(()));
        queue
            .submissions
            .expect_record_broadcast()
            .withf(|_, error| error.is_none())
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_, _| Ok(()));
        let executor = executor(queue, chain, vault);
        assert_eq!(
            executor.submit_next().await.expect("ran"),
            Some(SubmitOutcome::Submitted)
        );
    }

    #[tokio::test]
    async fn a_refused_broadcast_is_no_proof_nothing_was_sent_and_fails_nothing() {
        let mut queue = Queue::default();
        queue
            .submissions
            .expect_claim_confirmed()
            .return_once(|_, _| Ok(Some(claim(None, true))));
        queue
            .submissions
            .expect_assign_nonce()
            .returning(|_, _, _| Ok(0));
        queue
            .submissions
            .expect_record_attempt()
            .returning(|_, _, _, _| Ok(intent(IntentStatus::Submitted)));
        queue
            .submissions
            .expect_record_broadcast()
            .withf(|_, error| error.as_deref().is_some_and(|e| e.contains("rate limited")))
            .times(1)
            .returning(|_, _| Ok(()));
        queue.settlements.expect_settle().never();
        let mut chain = chain_quoting(0);
        chain
            .expect_broadcast()
            .returning(|_| Err(ports::BroadcastError::Rejected("rate limited".into())));
        let executor = executor(queue, chain, vault());
        assert_eq!(
            executor.submit_next().await.expect("ran"),
            Some(SubmitOutcome::Submitted)
        );
    }

    #[tokio::test]
    async fn a_nonce_assigned_by_an_earlier_claim_is_used_whatever_happened_since() {
        let mut queue = Queue::default();
        queue
            .submissions
            .expect_claim_confirmed()
            .return_once(|_, _| Ok(Some(claim(Some(3), false))));
        queue.submissions.expect_assign_nonce().never();
        queue
            .submissions
            .expect_record_attempt()
            .withf(|_, _, attempt, _| attempt.nonce == 3)
            .times(1)
            .returning(|_, _, _, _| Ok(intent(IntentStatus::Submitted)));
        queue
            .submissions
            .expect_record_broadcast()
            .returning(|_, _| Ok(()));
        let mut chain = chain_quoting(9);
        chain.expect_broadcast().returning(|_| Ok(()));
        let executor = executor(queue, chain, vault());
        assert_eq!(
            executor.submit_next().await.expect("ran"),
            Some(SubmitOutcome::Submitted),
            "an assigned nonce is always filled, even for an agent deactivated since"
        );
    }

    #[tokio::test]
    async fn the_intent_of_a_deactivated_agent_fails_before_anything_is_signed() {
        let mut queue = Queue::default();
        queue
            .submissions
            .expect_claim_confirmed()
            .return_once(|_, _| Ok(Some(claim(None, false))));
        queue.submissions.expect_assign_nonce().never();
        queue.settlements
            .expect_settle()
            .withf(|_, settlement, decided_by| {
                decided_by.is_none()
                    && matches!(settlement, Settlement::Failed(reason) if reason.contains("deactivated"))
            })
            .times(1)
            .returning(|_, _, _| Ok(intent(IntentStatus::Failed)));
        let mut vault = MockKeyVault::new();
        vault.expect_sign_transfer().never();
        let executor = executor(queue, MockChainWriter::new(), vault);
        assert_eq!(
            executor.submit_next().await.expect("ran"),
            Some(SubmitOutcome::Failed)
        );
    }

    #[tokio::test]
    async fn a_vault_that_cannot_sign_gives_the_claim_back_and_fails_nothing() {
        for refusal in [
            ProviderError::Refused("sealed under another master key".into()),
            ProviderError::Unavailable("vault down".into()),
        ] {
            let claimed = claim(None, true);
            let lease = claimed.lease;
            let mut queue = Queue::default();
            queue
                .submissions
                .expect_claim_confirmed()
                .return_once(move |_, _| Ok(Some(claimed)));
            queue
                .submissions
                .expect_assign_nonce()
                .returning(|_, _, _| Ok(0));
            queue.submissions.expect_record_attempt().never();
            queue.settlements.expect_settle().never();
            queue
                .submissions
                .expect_release()
                .with(eq(lease))
                .times(1)
                .returning(|_| Ok(()));
            let mut vault = MockKeyVault::new();
            vault
                .expect_sign_transfer()
                .return_once(move |_, _, _| Err(refusal));
            let outcome = executor(queue, chain_quoting(0), vault).submit_next().await;
            assert!(matches!(outcome, Err(ExecutionError::Vault(_))));
        }
    }

    #[tokio::test]
    async fn an_unreachable_chain_gives_the_claim_back_at_once() {
        let claimed = claim(None, true);
        let lease = claimed.lease;
        let mut queue = Queue::default();
        queue
            .submissions
            .expect_claim_confirmed()
            .return_once(move |_, _| Ok(Some(claimed)));
        queue
            .submissions
            .expect_release()
            .with(eq(lease))
            .times(1)
            .returning(|_| Ok(()));
        let mut chain = MockChainWriter::new();
        chain
            .expect_chain_id()
            .returning(|| Err(ChainError::Unavailable("down".into())));
        let outcome = executor(queue, chain, MockKeyVault::new())
            .submit_next()
            .await;
        assert!(matches!(outcome, Err(ExecutionError::Chain(_))));
    }

    #[tokio::test]
    async fn a_claim_that_could_not_be_given_back_is_given_back_before_the_next_claim() {
        let claimed = claim(None, true);
        let lease = claimed.lease;
        let mut queue = Queue::default();
        let mut order = Sequence::new();
        queue
            .submissions
            .expect_claim_confirmed()
            .times(1)
            .in_sequence(&mut order)
            .return_once(move |_, _| Ok(Some(claimed)));
        queue
            .submissions
            .expect_release()
            .with(eq(lease))
            .times(2)
            .in_sequence(&mut order)
            .returning(|_| Err(StoreError::Unavailable("database restarting".into())));
        queue
            .submissions
            .expect_release()
            .with(eq(lease))
            .times(1)
            .in_sequence(&mut order)
            .returning(|_| Ok(()));
        queue
            .submissions
            .expect_claim_confirmed()
            .times(1)
            .in_sequence(&mut order)
            .returning(|_, _| Ok(None));
        let mut chain = MockChainWriter::new();
        chain
            .expect_chain_id()
            .returning(|| Err(ChainError::Unavailable("down".into())));
        let executor = executor(queue, chain, MockKeyVault::new());
        assert!(executor.submit_next().await.is_err());
        assert!(
            executor.submit_next().await.is_err(),
            "no claim while one is still held"
        );
        assert_eq!(executor.submit_next().await.expect("ran"), None);
    }

    #[tokio::test]
    async fn a_claim_whose_answer_was_lost_is_given_back_by_its_lease_before_the_next_claim() {
        let mut queue = Queue::default();
        let mut order = Sequence::new();
        let named = Arc::new(std::sync::Mutex::new(None));
        let remembered = named.clone();
        queue
            .submissions
            .expect_claim_confirmed()
            .times(1)
            .in_sequence(&mut order)
            .returning(move |lease, _| {
                *remembered.lock().expect("lease") = Some(lease);
                Err(StoreError::Unavailable("connection reset".into()))
            });
        let first = named.clone();
        queue
            .submissions
            .expect_release()
            .withf(move |lease| Some(*lease) == *first.lock().expect("lease"))
            .times(1)
            .in_sequence(&mut order)
            .returning(|_| Ok(()));
        let first = named.clone();
        queue
            .submissions
            .expect_claim_confirmed()
            .withf(move |lease, _| Some(*lease) != *first.lock().expect("lease"))
            .times(1)
            .in_sequence(&mut order)
            .returning(|_, _| Ok(None));
        let executor = executor(queue, MockChainWriter::new(), MockKeyVault::new());
        assert!(executor.submit_next().await.is_err(), "the claim failed");
        assert_eq!(executor.submit_next().await.expect("ran"), None);
    }

    fn attempt(max_fee: u128, hash: &str) -> SignedTransfer {
        SignedTransfer {
            from: EvmAddress::from_bytes([1; 20]),
            token: EvmAddress::from_bytes([0xaa; 20]),
            to: EvmAddress::from_bytes([0xbb; 20]),
            amount: U256::from(25u64),
            nonce: 5,
            fees: FeeQuote {
                max_fee_per_gas: max_fee,
                max_priority_fee_per_gas: max_fee / 10,
            },
            raw: vec![9, 9],
            hash: hash.to_owned(),
        }
    }

    fn submitted(attempts: Vec<SignedTransfer>, age: Duration, checks: u32) -> SubmittedIntent {
        SubmittedIntent {
            intent: intent(IntentStatus::Submitted),
            nonce: 5,
            wallet_address: EvmAddress::from_bytes([1; 20]),
            sealed_key: vec![1],
            attempts,
            newest_attempt_age: age,
            checks,
            nonce_used_for: None,
        }
    }

    /// A chain on which every wallet has mined `mined` transactions, read once per wallet.
    fn chain_mined(mined: u64) -> MockChainWriter {
        let mut chain = MockChainWriter::new();
        chain.expect_mined_nonce().returning(move |_| Ok(mined));
        chain
    }

    fn due(list: Vec<SubmittedIntent>) -> Queue {
        let mut queue = Queue::default();
        queue
            .settlements
            .expect_due_submitted()
            .return_once(move |_, _, _| Ok(list));
        queue
    }

    #[tokio::test]
    async fn a_receipt_of_any_transaction_of_the_intent_settles_it_with_that_hash() {
        let mut queue = due(vec![submitted(
            vec![attempt(200, "0xnew"), attempt(100, "0xold")],
            Duration::from_secs(5),
            2,
        )]);
        queue
            .settlements
            .expect_settle()
            .withf(|_, settlement, decided_by| {
                decided_by.is_none()
                    && *settlement
                        == Settlement::Executed {
                            tx_hash: "0xold".into(),
                            block_number: Some(7),
                        }
            })
            .times(1)
            .returning(|_, _, _| Ok(intent(IntentStatus::Executed)));
        let mut chain = chain_mined(6);
        chain
            .expect_receipt()
            .with(eq("0xnew"))
            .returning(|_| Ok(ReceiptStatus::Pending));
        chain
            .expect_receipt()
            .with(eq("0xold"))
            .returning(|_| Ok(ReceiptStatus::Succeeded { block_number: 7 }));
        chain.expect_broadcast().never();
        let outcome = executor(queue, chain, MockKeyVault::new())
            .follow_submitted()
            .await
            .expect("ran");
        assert_eq!(outcome.executed, 1);
    }

    #[tokio::test]
    async fn a_revert_fails_the_intent_naming_the_transaction() {
        let mut queue = due(vec![submitted(
            vec![attempt(100, "0xreverted")],
            Duration::from_secs(5),
            0,
        )]);
        queue.settlements
            .expect_settle()
            .withf(|_, settlement, decided_by| {
                decided_by.is_none()
                    && matches!(settlement, Settlement::Failed(reason) if reason.contains("0xreverted"))
            })
            .times(1)
            .returning(|_, _, _| Ok(intent(IntentStatus::Failed)));
        let mut chain = chain_mined(6);
        chain
            .expect_receipt()
            .returning(|_| Ok(ReceiptStatus::Reverted));
        let outcome = executor(queue, chain, MockKeyVault::new())
            .follow_submitted()
            .await
            .expect("ran");
        assert_eq!(outcome.failed, 1);
    }

    #[tokio::test]
    async fn an_unmined_transaction_is_sent_again_unchanged_with_a_growing_wait() {
        let mut queue = due(vec![submitted(
            vec![attempt(100, "0xpending")],
            Duration::from_secs(5),
            3,
        )]);
        let mut sequence = Sequence::new();
        let mut chain = chain_mined(5);
        chain.expect_receipt().never();
        chain
            .expect_broadcast()
            .withf(|transfer| transfer.hash == "0xpending" && transfer.raw == vec![9, 9])
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_| Err(ports::BroadcastError::Unavailable("timeout".into())));
        queue
            .submissions
            .expect_record_broadcast()
            .withf(|hash, error| hash == "0xpending" && error.is_some())
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_, _| Ok(()));
        let expected_wait = ExecutorSettings::default().retry.delay(3);
        queue
            .settlements
            .expect_reschedule()
            .withf(move |_, wait, used| *wait == expected_wait && !used)
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_, _, _| Ok(()));
        queue.settlements.expect_settle().never();
        let outcome = executor(queue, chain, MockKeyVault::new())
            .follow_submitted()
            .await
            .expect("ran");
        assert_eq!(outcome.rebroadcast, 1);
    }

    #[tokio::test]
    async fn a_transaction_unmined_too_long_is_replaced_by_a_better_paying_one_recorded_first() {
        let settings = ExecutorSettings::default();
        let old = attempt(100, "0xold");
        let mut queue = due(vec![submitted(vec![old], settings.replace_after, 4)]);
        let mut sequence = Sequence::new();
        let mut chain = chain_quoting(0);
        chain.expect_mined_nonce().returning(|_| Ok(5));
        let bumped = domain::replacement_fees(attempt(100, "0xold").fees, MARKET);
        let mut vault = MockKeyVault::new();
        vault
            .expect_sign_transfer()
            .withf(move |_, _, call| call.nonce == 5 && call.fees == bumped)
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_, _, call| Ok(signed(&call)));
        queue
            .submissions
            .expect_record_attempt()
            .withf(move |_, lease, replacement, _| {
                lease.is_none() && replacement.nonce == 5 && replacement.fees == bumped
            })
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_, _, _, _| Ok(intent(IntentStatus::Submitted)));
        chain
            .expect_broadcast()
            .withf(|transfer| transfer.hash != "0xold")
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_| Ok(()));
        queue
            .submissions
            .expect_record_broadcast()
            .returning(|_, _| Ok(()));
        queue
            .settlements
            .expect_reschedule()
            .returning(|_, _, _| Ok(()));
        let outcome = executor(queue, chain, vault)
            .follow_submitted()
            .await
            .expect("ran");
        assert_eq!(outcome.replaced, 1);
    }

    #[tokio::test]
    async fn a_nonce_used_by_another_transaction_fails_the_intent_only_after_the_grace() {
        let grace = ExecutorSettings::default().nonce_grace;
        for (used_for, settles) in [(None, false), (Some(grace), true)] {
            let mut looked_at = submitted(vec![attempt(100, "0xlost")], Duration::from_secs(5), 1);
            looked_at.nonce_used_for = used_for;
            let mut queue = due(vec![looked_at]);
            let mut chain = MockChainWriter::new();
            chain
                .expect_receipt()
                .returning(|_| Ok(ReceiptStatus::Pending));
            chain.expect_mined_nonce().returning(|_| Ok(6));
            chain.expect_broadcast().never();
            queue.settlements
                .expect_settle()
                .withf(|_, settlement, decided_by| {
                    decided_by.is_none()
                        && matches!(settlement, Settlement::Failed(reason) if reason.contains("nonce 5"))
                })
                .times(usize::from(settles))
                .returning(|_, _, _| Ok(intent(IntentStatus::Failed)));
            queue
                .settlements
                .expect_reschedule()
                .withf(|_, _, used| *used)
                .times(usize::from(!settles))
                .returning(|_, _, _| Ok(()));
            executor(queue, chain, MockKeyVault::new())
                .follow_submitted()
                .await
                .expect("ran");
        }
    }

    #[tokio::test]
    async fn trouble_with_one_intent_does_not_keep_the_others_from_settling() {
        let mut broken = submitted(vec![attempt(100, "0xbroken")], Duration::from_secs(5), 0);
        broken.intent.id = domain::IntentId(Uuid::from_u128(77));
        let fine = submitted(vec![attempt(100, "0xfine")], Duration::from_secs(5), 0);
        let mut queue = due(vec![broken, fine]);
        let mut chain = chain_mined(6);
        chain
            .expect_receipt()
            .with(eq("0xbroken"))
            .returning(|_| Err(ChainError::Unavailable("node behind a flaky proxy".into())));
        chain
            .expect_receipt()
            .with(eq("0xfine"))
            .returning(|_| Ok(ReceiptStatus::Succeeded { block_number: 7 }));
        queue
            .settlements
            .expect_reschedule()
            .withf(|id, _, _| *id == domain::IntentId(Uuid::from_u128(77)))
            .times(1)
            .returning(|_, _, _| Ok(()));
        queue
            .settlements
            .expect_settle()
            .times(1)
            .returning(|_, _, _| Ok(intent(IntentStatus::Executed)));
        let outcome = executor(queue, chain, MockKeyVault::new())
            .follow_submitted()
            .await
            .expect("ran");
        assert_eq!(outcome.executed, 1);
    }

    /// A due intent of the wallet `wallet` with `nonce`, sent once as `hash`.
    fn submitted_of(wallet: u8, nonce: u64, hash: &str) -> SubmittedIntent {
        let mut looked_at = submitted(vec![attempt(100, hash)], Duration::from_secs(5), 0);
        looked_at.intent.id = domain::IntentId(Uuid::new_v4());
        looked_at.wallet_address = EvmAddress::from_bytes([wallet; 20]);
        looked_at.nonce = nonce;
        looked_at
    }

    #[tokio::test]
    async fn a_wallets_mined_count_is_read_once_and_only_transfers_below_it_are_asked_for_receipts()
    {
        let settings = ExecutorSettings::default();
        let mut queue = Queue::default();
        let wallet = EvmAddress::from_bytes([3; 20]);
        queue
            .settlements
            .expect_due_submitted()
            .with(
                eq(settings.follow_batch),
                eq(settings.follow_per_wallet),
                eq(settings.lease),
            )
            .times(1)
            .return_once(|_, _, _| {
                Ok(vec![
                    submitted_of(3, 5, "0xmined"),
                    submitted_of(3, 6, "0xnext"),
                    submitted_of(3, 7, "0xlater"),
                ])
            });
        let mut chain = MockChainWriter::new();
        chain
            .expect_mined_nonce()
            .with(eq(wallet))
            .times(1)
            .returning(|_| Ok(6));
        chain
            .expect_receipt()
            .with(eq("0xmined"))
            .times(1)
            .returning(|_| Ok(ReceiptStatus::Succeeded { block_number: 7 }));
        chain
            .expect_broadcast()
            .withf(|transfer| transfer.hash == "0xnext" || transfer.hash == "0xlater")
            .times(2)
            .returning(|_| Ok(()));
        queue
            .settlements
            .expect_settle()
            .times(1)
            .returning(|_, _, _| Ok(intent(IntentStatus::Executed)));
        queue
            .submissions
            .expect_record_broadcast()
            .times(2)
            .returning(|_, _| Ok(()));
        queue
            .settlements
            .expect_reschedule()
            .times(2)
            .returning(|_, _, _| Ok(()));
        let outcome = executor(queue, chain, MockKeyVault::new())
            .follow_submitted()
            .await
            .expect("ran");
        assert_eq!((outcome.executed, outcome.rebroadcast), (1, 2));
    }

    #[tokio::test]
    async fn a_wallet_whose_mined_count_cannot_be_read_is_looked_at_later_and_the_next_goes_on() {
        let unreadable = submitted_of(3, 0, "0xunread");
        let unreadable_id = unreadable.intent.id;
        let mut queue = due(vec![unreadable, submitted_of(4, 0, "0xmined")]);
        let mut chain = MockChainWriter::new();
        chain
            .expect_mined_nonce()
            .with(eq(EvmAddress::from_bytes([3; 20])))
            .returning(|_| Err(ChainError::Unavailable("node behind a flaky proxy".into())));
        chain
            .expect_mined_nonce()
            .with(eq(EvmAddress::from_bytes([4; 20])))
            .returning(|_| Ok(1));
        chain
            .expect_receipt()
            .with(eq("0xmined"))
            .returning(|_| Ok(ReceiptStatus::Succeeded { block_number: 7 }));
        chain.expect_broadcast().never();
        queue
            .settlements
            .expect_reschedule()
            .withf(move |id, _, used| *id == unreadable_id && !used)
            .times(1)
            .returning(|_, _, _| Ok(()));
        queue
            .settlements
            .expect_settle()
            .times(1)
            .returning(|_, _, _| Ok(intent(IntentStatus::Executed)));
        let outcome = executor(queue, chain, MockKeyVault::new())
            .follow_submitted()
            .await
            .expect("ran");
        assert_eq!(outcome.executed, 1);
    }
}
