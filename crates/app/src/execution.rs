//! Execution of confirmed intents on chain. One pass claims a confirmed intent, signs its
//! transfer, records the signed transaction (moving the intent to submitted), and only then
//! broadcasts it. Receipts decide executed or failed. A crash at any point leaves either nothing
//! recorded (the claim lapses and the intent is signed afresh) or the recorded bytes, which are
//! broadcast again: never two different transactions for one intent.

use std::sync::Arc;
use std::time::Duration;

use domain::TransferIntentRecord;
use ports::{
    BroadcastError, ChainError, ChainWriter, ExecutionQueue, KeyVault, ReceiptStatus, Settlement,
    StoreError, SubmissionClaim, SubmissionError, TransferCall, TransitionError,
};

#[derive(Debug, Clone, Copy)]
pub struct ExecutorSettings {
    /// Gas limit of an ERC-20 transfer; a fixed cap keeps a reverting transfer observable on chain.
    pub gas_limit: u64,
    /// How long a claim on a confirmed intent lasts before another executor may take it.
    pub lease: Duration,
    /// How many submitted intents one follow-up pass looks at.
    pub follow_batch: usize,
}

impl Default for ExecutorSettings {
    fn default() -> Self {
        Self {
            gas_limit: 100_000,
            lease: Duration::from_secs(30),
            follow_batch: 100,
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
}

pub struct Executor {
    queue: Arc<dyn ExecutionQueue>,
    chain: Arc<dyn ChainWriter>,
    vault: Arc<dyn KeyVault>,
    settings: ExecutorSettings,
}

impl Executor {
    pub fn new(
        queue: Arc<dyn ExecutionQueue>,
        chain: Arc<dyn ChainWriter>,
        vault: Arc<dyn KeyVault>,
        settings: ExecutorSettings,
    ) -> Self {
        Self {
            queue,
            chain,
            vault,
            settings,
        }
    }

    /// Submits the oldest confirmed intent, if there is one, and says what became of it.
    #[tracing::instrument(level = "debug", skip(self), fields(intent_id))]
    pub async fn submit_next(&self) -> Result<Option<SubmitOutcome>, ExecutionError> {
        let Some(claim) = self.queue.claim_confirmed(self.settings.lease).await? else {
            return Ok(None);
        };
        tracing::Span::current().record("intent_id", tracing::field::display(claim.intent.id));
        let intent = &claim.intent;
        let Some(token) = intent.token_address else {
            self.fail(intent, "the intent names no token contract".to_owned())
                .await?;
            return Ok(Some(SubmitOutcome::Failed));
        };
        let call = TransferCall {
            chain_id: self.chain.chain_id().await?,
            nonce: self.nonce_for(&claim).await?,
            token,
            to: intent.recipient,
            amount: intent.amount.value(),
            gas_limit: self.settings.gas_limit,
            fees: self.chain.fee_quote().await?,
        };
        let signed = match self
            .vault
            .sign_transfer(&claim.sealed_key, &claim.wallet_address, call)
            .await
        {
            Ok(signed) => signed,
            Err(error) => {
                self.fail(intent, format!("the transfer could not be signed: {error}"))
                    .await?;
                return Ok(Some(SubmitOutcome::Failed));
            }
        };
        match self
            .queue
            .record_submission(intent.id, claim.lease, &signed)
            .await
        {
            Ok(_) => {
                tracing::info!(intent_id = %intent.id, tx_hash = %signed.hash, nonce = signed.nonce, "transfer recorded; broadcasting");
            }
            // Another executor's transaction or claim won; this intent is taken up again later.
            Err(SubmissionError::LeaseLost(_) | SubmissionError::NonceTaken(_)) => {
                return Ok(Some(SubmitOutcome::Released))
            }
            Err(SubmissionError::Transition(error)) => return Err(error.into()),
        }
        match self.chain.broadcast(&signed).await {
            Ok(()) => {}
            Err(BroadcastError::Unavailable(cause)) => {
                tracing::warn!(intent_id = %intent.id, %cause, "broadcast failed; the recorded transaction will be sent again");
            }
            Err(BroadcastError::Rejected(reason)) => {
                self.fail(
                    intent,
                    format!("the chain refused the transaction: {reason}"),
                )
                .await?;
                return Ok(Some(SubmitOutcome::Failed));
            }
        }
        Ok(Some(SubmitOutcome::Submitted))
    }

    /// The nonce for the claimed wallet: the chain's when nothing of ours is in flight (so a nonce
    /// freed by a refused broadcast is used again), else past our last recorded transaction.
    async fn nonce_for(&self, claim: &SubmissionClaim) -> Result<u64, ExecutionError> {
        let pending = self.chain.pending_nonce(&claim.wallet_address).await?;
        Ok(match (claim.in_flight, claim.next_nonce) {
            (0, _) | (_, None) => pending,
            (_, Some(next)) => next.max(pending),
        })
    }

    /// Looks at every submitted intent once: settles those with a receipt and sends the recorded
    /// bytes of the others again.
    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn follow_submitted(&self) -> Result<FollowOutcome, ExecutionError> {
        let mut outcome = FollowOutcome::default();
        for submitted in self.queue.submitted(self.settings.follow_batch).await? {
            let intent = &submitted.intent;
            let settlement = match self.chain.receipt(&submitted.transfer.hash).await? {
                ReceiptStatus::Succeeded => Settlement::Executed,
                ReceiptStatus::Reverted => Settlement::Failed(
                    "the transaction reverted on chain (e.g. insufficient token balance)"
                        .to_owned(),
                ),
                ReceiptStatus::Pending => {
                    // Only a receipt settles an intent: a refusal here may just mean it was mined.
                    if let Err(error) = self.chain.broadcast(&submitted.transfer).await {
                        tracing::debug!(intent_id = %intent.id, %error, "re-broadcast not accepted");
                    }
                    continue;
                }
            };
            let executed = settlement == Settlement::Executed;
            match self.queue.settle(intent.id, settlement).await {
                Ok(settled) => {
                    match executed {
                        true => outcome.executed += 1,
                        false => outcome.failed += 1,
                    }
                    tracing::info!(intent_id = %intent.id, status = %settled.status, "transfer settled");
                }
                // Another instance settled it first.
                Err(TransitionError::Refused(_)) => {}
                Err(error) => return Err(error.into()),
            }
        }
        Ok(outcome)
    }

    async fn fail(
        &self,
        intent: &TransferIntentRecord,
        reason: String,
    ) -> Result<(), ExecutionError> {
        tracing::warn!(intent_id = %intent.id, %reason, "transfer failed");
        match self
            .queue
            .settle(intent.id, Settlement::Failed(reason))
            .await
        {
            Ok(_) | Err(TransitionError::Refused(_)) => Ok(()),
            Err(error) => Err(error.into()),
        }
    }

    /// How long the oldest confirmed intent has waited to be submitted.
    pub async fn queue_lag(&self) -> Result<Option<Duration>, ExecutionError> {
        Ok(self.queue.oldest_confirmed_wait().await?)
    }
}

/// What became of one claimed intent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubmitOutcome {
    /// Signed, recorded and broadcast (or to be broadcast again).
    Submitted,
    /// It cannot be carried out; it is failed with the reason.
    Failed,
    /// Another executor's claim or transaction won; it is taken up again later.
    Released,
}

/// What one pass over the submitted intents settled.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FollowOutcome {
    pub executed: usize,
    pub failed: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::{EvmAddress, IntentStatus, LeaseId, U256};
    use mockall::predicate::eq;
    use mockall::Sequence;
    use ports::{
        FeeQuote, MockChainWriter, MockExecutionQueue, MockKeyVault, SignedTransfer,
        SubmittedIntent,
    };
    use uuid::Uuid;

    fn intent(status: IntentStatus) -> TransferIntentRecord {
        TransferIntentRecord {
            status,
            ..TransferIntentRecord::fixture()
        }
    }

    fn claim(in_flight: u64, next_nonce: Option<u64>) -> SubmissionClaim {
        SubmissionClaim {
            intent: intent(IntentStatus::Confirmed),
            lease: LeaseId(Uuid::new_v4()),
            wallet_address: EvmAddress::from_bytes([0x01; 20]),
            sealed_key: vec![1, 2, 3],
            next_nonce,
            in_flight,
        }
    }

    fn signed(call: &TransferCall) -> SignedTransfer {
        SignedTransfer {
            from: EvmAddress::from_bytes([0x01; 20]),
            token: call.token,
            to: call.to,
            amount: call.amount,
            nonce: call.nonce,
            raw: vec![0x02, 0xf8],
            hash: format!("0x{:064x}", call.nonce),
        }
    }

    fn chain_with_nonce(pending: u64) -> MockChainWriter {
        let mut chain = MockChainWriter::new();
        chain.expect_chain_id().returning(|| Ok(8453));
        chain.expect_pending_nonce().returning(move |_| Ok(pending));
        chain.expect_fee_quote().returning(|| {
            Ok(FeeQuote {
                max_fee_per_gas: 2,
                max_priority_fee_per_gas: 1,
            })
        });
        chain
    }

    fn vault() -> MockKeyVault {
        let mut vault = MockKeyVault::new();
        vault
            .expect_sign_transfer()
            .returning(|_, _, call| Ok(signed(&call)));
        vault
    }

    fn executor(
        queue: MockExecutionQueue,
        chain: MockChainWriter,
        vault: MockKeyVault,
    ) -> Executor {
        Executor::new(
            Arc::new(queue),
            Arc::new(chain),
            Arc::new(vault),
            ExecutorSettings::default(),
        )
    }

    #[tokio::test]
    async fn with_nothing_confirmed_nothing_is_signed() {
        let mut queue = MockExecutionQueue::new();
        queue.expect_claim_confirmed().returning(|_| Ok(None));
        let mut vault = MockKeyVault::new();
        vault.expect_sign_transfer().never();
        let executor = executor(queue, MockChainWriter::new(), vault);
        assert_eq!(executor.submit_next().await.expect("ran"), None);
    }

    #[tokio::test]
    async fn the_signed_transaction_is_recorded_before_it_is_broadcast() {
        let claimed = claim(0, None);
        let lease = claimed.lease;
        let mut sequence = Sequence::new();
        let mut queue = MockExecutionQueue::new();
        queue
            .expect_claim_confirmed()
            .return_once(move |_| Ok(Some(claimed)));
        queue
            .expect_record_submission()
            .withf(move |_, l, transfer| {
                *l == lease && transfer.nonce == 4 && transfer.amount == U256::from(25u64)
            })
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_, _, _| Ok(intent(IntentStatus::Submitted)));
        let mut chain = chain_with_nonce(4);
        chain
            .expect_broadcast()
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_| Ok(()));
        let executor = executor(queue, chain, vault());
        assert_eq!(
            executor.submit_next().await.expect("ran"),
            Some(SubmitOutcome::Submitted)
        );
    }

    #[tokio::test]
    async fn a_lost_nonce_race_broadcasts_nothing() {
        let mut queue = MockExecutionQueue::new();
        queue
            .expect_claim_confirmed()
            .return_once(|_| Ok(Some(claim(0, None))));
        queue
            .expect_record_submission()
            .returning(|_, _, t| Err(SubmissionError::NonceTaken(t.nonce)));
        let mut chain = chain_with_nonce(0);
        chain.expect_broadcast().never();
        let executor = executor(queue, chain, vault());
        assert_eq!(
            executor.submit_next().await.expect("ran"),
            Some(SubmitOutcome::Released)
        );
    }

    #[tokio::test]
    async fn a_refused_broadcast_fails_the_intent_with_the_reason() {
        let mut queue = MockExecutionQueue::new();
        queue
            .expect_claim_confirmed()
            .return_once(|_| Ok(Some(claim(0, None))));
        queue
            .expect_record_submission()
            .returning(|_, _, _| Ok(intent(IntentStatus::Submitted)));
        queue
            .expect_settle()
            .withf(|_, settlement| {
                matches!(settlement, Settlement::Failed(reason) if reason.contains("insufficient funds for gas"))
            })
            .times(1)
            .returning(|_, _| Ok(intent(IntentStatus::Failed)));
        let mut chain = chain_with_nonce(0);
        chain.expect_broadcast().returning(|_| {
            Err(BroadcastError::Rejected(
                "insufficient funds for gas".into(),
            ))
        });
        let executor = executor(queue, chain, vault());
        assert_eq!(
            executor.submit_next().await.expect("ran"),
            Some(SubmitOutcome::Failed)
        );
    }

    #[tokio::test]
    async fn the_nonce_follows_our_in_flight_transactions_or_else_the_chain() {
        for (in_flight, next, pending, expected) in [
            (0, Some(9), 4, 4),
            (2, Some(9), 4, 9),
            (1, Some(3), 5, 5),
            (1, None, 6, 6),
        ] {
            let mut queue = MockExecutionQueue::new();
            queue
                .expect_claim_confirmed()
                .return_once(move |_| Ok(Some(claim(in_flight, next))));
            queue
                .expect_record_submission()
                .withf(move |_, _, transfer| transfer.nonce == expected)
                .times(1)
                .returning(|id, _, _| Err(SubmissionError::LeaseLost(id)));
            let executor = executor(queue, chain_with_nonce(pending), vault());
            executor.submit_next().await.expect("ran");
        }
    }

    fn submitted(hash: &str) -> SubmittedIntent {
        SubmittedIntent {
            intent: intent(IntentStatus::Submitted),
            transfer: SignedTransfer {
                from: EvmAddress::from_bytes([1; 20]),
                token: EvmAddress::from_bytes([0xaa; 20]),
                to: EvmAddress::from_bytes([0xbb; 20]),
                amount: U256::from(25u64),
                nonce: 0,
                raw: vec![9, 9],
                hash: hash.to_owned(),
            },
        }
    }

    #[tokio::test]
    async fn receipts_settle_intents_and_pending_ones_are_sent_again_unchanged() {
        let mut queue = MockExecutionQueue::new();
        queue.expect_submitted().returning(|_| {
            Ok(vec![
                submitted("0xok"),
                submitted("0xreverted"),
                submitted("0xpending"),
            ])
        });
        queue
            .expect_settle()
            .withf(|_, settlement| *settlement == Settlement::Executed)
            .times(1)
            .returning(|_, _| Ok(intent(IntentStatus::Executed)));
        queue
            .expect_settle()
            .withf(|_, settlement| {
                matches!(settlement, Settlement::Failed(reason) if reason.contains("reverted"))
            })
            .times(1)
            .returning(|_, _| Ok(intent(IntentStatus::Failed)));
        let mut chain = MockChainWriter::new();
        chain
            .expect_receipt()
            .with(eq("0xok"))
            .returning(|_| Ok(ReceiptStatus::Succeeded));
        chain
            .expect_receipt()
            .with(eq("0xreverted"))
            .returning(|_| Ok(ReceiptStatus::Reverted));
        chain
            .expect_receipt()
            .with(eq("0xpending"))
            .returning(|_| Ok(ReceiptStatus::Pending));
        chain
            .expect_broadcast()
            .withf(|transfer| transfer.hash == "0xpending" && transfer.raw == vec![9, 9])
            .times(1)
            .returning(|_| Err(BroadcastError::Rejected("already known".into())));
        let executor = executor(queue, chain, MockKeyVault::new());
        assert_eq!(
            executor.follow_submitted().await.expect("ran"),
            FollowOutcome {
                executed: 1,
                failed: 1
            }
        );
    }
}
