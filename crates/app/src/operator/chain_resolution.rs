//! Settling a sent intent by what the chain says, when an operator knows it cannot settle by
//! itself (its nonce taken by a transaction sent outside this service).

use std::sync::Arc;

use domain::{nonce_used, IntentId, IntentStatus, Operator, TransferIntentRecord};
use ports::{
    ChainError, ChainWriter, IntentRecords, SettlementQueue, SignedTransfer, StoreError,
    TransitionError,
};

use crate::execution::{nonce_taken_by_another, settlement_by_receipt};

#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    #[error("intent {0} not found")]
    NotFound(IntentId),
    #[error(
        "intent {id} is {status}, not submitted: only a submitted intent waits on the chain for \
         its outcome"
    )]
    NotSubmitted { id: IntentId, status: IntentStatus },
    /// None of its transactions is mined and its nonce is free: one of them may still be.
    #[error(
        "intent {id} is still pending on chain: none of its transactions has a receipt and its \
         nonce {nonce} is not used yet (the wallet has mined {mined} transactions), so it may \
         still be mined; nothing was changed"
    )]
    StillPending {
        id: IntentId,
        nonce: u64,
        mined: u64,
    },
    /// The executor (or another operator) settled it between the look and the settlement.
    #[error("intent {id} was settled meanwhile: it is {status} now")]
    SettledMeanwhile { id: IntentId, status: IntentStatus },
    #[error("the chain could not be asked, nothing was changed: {0}")]
    Chain(#[from] ChainError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What chain resolution works with.
pub struct ChainResolutionPorts {
    pub intents: Arc<dyn IntentRecords>,
    /// The chain wallets live on.
    pub chain: Arc<dyn ChainWriter>,
    /// Settles intents as the executor does.
    pub settlement: Arc<dyn SettlementQueue>,
}

pub struct ChainResolution {
    ports: ChainResolutionPorts,
}

impl ChainResolution {
    pub fn new(ports: ChainResolutionPorts) -> Self {
        Self { ports }
    }

    /// Settles a submitted intent by what the chain says now, for an operator who knows its
    /// nonce was taken outside this service: a receipt of any of its transactions settles it as
    /// the executor would (executed, or failed on a revert); its nonce used with none of them
    /// mined fails it at once, where the executor waits a grace; a nonce still free changes
    /// nothing. The settlement records `operator` as who decided it.
    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn resolve(
        &self,
        id: IntentId,
        operator: &Operator,
    ) -> Result<TransferIntentRecord, ResolveError> {
        let intent = self
            .ports
            .intents
            .find(id)
            .await?
            .ok_or(ResolveError::NotFound(id))?;
        if intent.status != IntentStatus::Submitted {
            return Err(ResolveError::NotSubmitted {
                id,
                status: intent.status,
            });
        }
        let transactions: Vec<SignedTransfer> = self
            .ports
            .intents
            .attempts(id)
            .await?
            .into_iter()
            .map(|attempt| attempt.transfer)
            .collect();
        // Every transaction of an intent has its one nonce and its wallet as sender.
        let (nonce, wallet) = transactions
            .first()
            .map(|newest| (newest.nonce, newest.from))
            .ok_or_else(|| {
                StoreError::Internal(format!("submitted intent {id} has no transaction"))
            })?;
        // The count first: a transaction of ours mined before it was read shows its receipt
        // after, so a used nonce without a receipt of ours is another transaction's.
        let mined = self.ports.chain.mined_nonce(&wallet).await?;
        let settlement =
            match settlement_by_receipt(self.ports.chain.as_ref(), &transactions).await? {
                Some(settlement) => settlement,
                None if nonce_used(nonce, mined) => nonce_taken_by_another(nonce),
                None => return Err(ResolveError::StillPending { id, nonce, mined }),
            };
        match self
            .ports
            .settlement
            .settle(id, settlement, Some(operator.clone()))
            .await
        {
            Ok(settled) => {
                tracing::info!(intent_id = %id, status = %settled.status, tx_hash = ?settled.tx_hash, "transfer settled by an operator's resolve");
                Ok(settled)
            }
            Err(TransitionError::Refused(refused)) => Err(ResolveError::SettledMeanwhile {
                id,
                status: refused.from,
            }),
            Err(TransitionError::NotFound(id)) => Err(ResolveError::NotFound(id)),
            Err(TransitionError::Store(store)) => Err(store.into()),
            Err(TransitionError::Judged(refused)) => Err(StoreError::Internal(format!(
                "a settlement judged as an approval: {refused}"
            ))
            .into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::{EvmAddress, IntentEvent, TransitionRefused};
    use mockall::predicate::eq;
    use ports::{AttemptRecord, MockChainWriter, MockIntentRecords, MockSettlementQueue};

    use crate::operator::tests::operator;

    /// A resolution of a submitted intent sent as `transactions` (newest first).
    fn resolving(
        intent: &TransferIntentRecord,
        transactions: &[&str],
        chain: MockChainWriter,
        settlement: MockSettlementQueue,
    ) -> ChainResolution {
        let mut intents = MockIntentRecords::new();
        let found = intent.clone();
        intents
            .expect_find()
            .returning(move |_| Ok(Some(found.clone())));
        let attempts: Vec<AttemptRecord> = transactions
            .iter()
            .map(|hash| AttemptRecord {
                transfer: SignedTransfer {
                    from: EvmAddress::from_bytes([0x01; 20]),
                    token: EvmAddress::from_bytes([0xaa; 20]),
                    to: intent.recipient,
                    amount: intent.amount.value(),
                    nonce: 5,
                    fees: domain::FeeQuote {
                        max_fee_per_gas: 100,
                        max_priority_fee_per_gas: 10,
                    },
                    raw: vec![9],
                    hash: (*hash).to_owned(),
                },
                broadcasts: 3,
                last_error: None,
            })
            .collect();
        intents
            .expect_attempts()
            .returning(move |_| Ok(attempts.clone()));
        ChainResolution::new(ChainResolutionPorts {
            intents: Arc::new(intents),
            chain: Arc::new(chain),
            settlement: Arc::new(settlement),
        })
    }

    fn intent_in(status: IntentStatus) -> TransferIntentRecord {
        TransferIntentRecord {
            status,
            ..TransferIntentRecord::fixture()
        }
    }

    #[tokio::test]
    async fn a_receipt_of_any_transaction_executes_the_intent_with_that_hash() {
        let intent = intent_in(IntentStatus::Submitted);
        let mut sequence = mockall::Sequence::new();
        let mut chain = MockChainWriter::new();
        chain
            .expect_mined_nonce()
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_| Ok(6));
        chain
            .expect_receipt()
            .with(eq("0xnew"))
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_| Ok(ports::ReceiptStatus::Pending));
        chain
            .expect_receipt()
            .with(eq("0xold"))
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_| Ok(ports::ReceiptStatus::Succeeded { block_number: 7 }));
        let mut settlement = MockSettlementQueue::new();
        settlement
            .expect_settle()
            .with(
                eq(intent.id),
                eq(ports::Settlement::Executed {
                    tx_hash: "0xold".into(),
                    block_number: Some(7),
                }),
                eq(Some(operator())),
            )
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_, _, _| Ok(intent_in(IntentStatus::Executed)));
        let resolution = resolving(&intent, &["0xnew", "0xold"], chain, settlement);
        let resolved = resolution
            .resolve(intent.id, &operator())
            .await
            .expect("resolved");
        assert_eq!(resolved.status, IntentStatus::Executed);
    }

    /// A chain where the wallet has mined `mined` transactions and every one of the intent's has
    /// the receipt `receipt`.
    fn chain_showing(mined: u64, receipt: ports::ReceiptStatus) -> MockChainWriter {
        let mut chain = MockChainWriter::new();
        chain.expect_mined_nonce().returning(move |_| Ok(mined));
        chain.expect_receipt().returning(move |_| Ok(receipt));
        chain
    }

    /// A settlement port that must not be asked to settle anything.
    fn settling_nothing() -> MockSettlementQueue {
        let mut settlement = MockSettlementQueue::new();
        settlement.expect_settle().never();
        settlement
    }

    /// A settlement port expecting one failure, decided by `operator()`, whose reason says each
    /// of `said`.
    fn expecting_failure(said: &'static [&'static str]) -> MockSettlementQueue {
        let mut settlement = MockSettlementQueue::new();
        settlement
            .expect_settle()
            .withf(move |_, settlement, decided_by| {
                *decided_by == Some(operator())
                    && matches!(settlement, ports::Settlement::Failed(reason)
                    if said.iter().all(|words| reason.contains(words)))
            })
            .times(1)
            .returning(|_, _, _| Ok(intent_in(IntentStatus::Failed)));
        settlement
    }

    #[tokio::test]
    async fn a_reverted_transaction_fails_the_intent_naming_it() {
        let intent = intent_in(IntentStatus::Submitted);
        let chain = chain_showing(6, ports::ReceiptStatus::Reverted);
        let settlement = expecting_failure(&["0xreverted"]);
        let resolution = resolving(&intent, &["0xreverted"], chain, settlement);
        let resolved = resolution
            .resolve(intent.id, &operator())
            .await
            .expect("resolved");
        assert_eq!(resolved.status, IntentStatus::Failed);
    }

    #[tokio::test]
    async fn a_nonce_used_by_another_transaction_fails_the_intent_without_a_grace() {
        let intent = intent_in(IntentStatus::Submitted);
        let mut chain = MockChainWriter::new();
        chain
            .expect_mined_nonce()
            .with(eq(EvmAddress::from_bytes([0x01; 20])))
            .returning(|_| Ok(6));
        chain
            .expect_receipt()
            .times(2)
            .returning(|_| Ok(ports::ReceiptStatus::Pending));
        let settlement = expecting_failure(&["nonce 5", "will not be"]);
        let resolution = resolving(&intent, &["0xnew", "0xold"], chain, settlement);
        let resolved = resolution
            .resolve(intent.id, &operator())
            .await
            .expect("resolved");
        assert_eq!(resolved.status, IntentStatus::Failed);
    }

    #[tokio::test]
    async fn a_nonce_still_free_changes_nothing_and_says_so() {
        let intent = intent_in(IntentStatus::Submitted);
        let chain = chain_showing(5, ports::ReceiptStatus::Pending);
        let resolution = resolving(&intent, &["0xpending"], chain, settling_nothing());
        let refused = resolution.resolve(intent.id, &operator()).await;
        assert!(
            matches!(
                refused,
                Err(ResolveError::StillPending {
                    nonce: 5,
                    mined: 5,
                    ..
                })
            ),
            "{refused:?}"
        );
        let message = refused.expect_err("refused").to_string();
        assert!(message.contains("nothing was changed"), "{message}");
    }

    #[tokio::test]
    async fn only_a_submitted_intent_is_resolved_and_the_chain_is_not_asked_otherwise() {
        for status in IntentStatus::ALL {
            if status == IntentStatus::Submitted {
                continue;
            }
            let intent = intent_in(status);
            let mut chain = MockChainWriter::new();
            chain.expect_mined_nonce().never();
            chain.expect_receipt().never();
            let resolution = resolving(&intent, &[], chain, settling_nothing());
            let refused = resolution.resolve(intent.id, &operator()).await;
            assert!(
                matches!(refused, Err(ResolveError::NotSubmitted { status: s, .. }) if s == status),
                "{refused:?}"
            );
        }
    }

    #[tokio::test]
    async fn an_intent_settled_by_the_executor_meanwhile_is_reported_as_it_is() {
        let intent = intent_in(IntentStatus::Submitted);
        let chain = chain_showing(6, ports::ReceiptStatus::Succeeded { block_number: 7 });
        let mut settlement = MockSettlementQueue::new();
        settlement.expect_settle().returning(|_, _, _| {
            Err(TransitionError::Refused(TransitionRefused {
                from: IntentStatus::Executed,
                event: IntentEvent::Execute,
            }))
        });
        let resolution = resolving(&intent, &["0xmined"], chain, settlement);
        let refused = resolution.resolve(intent.id, &operator()).await;
        assert!(
            matches!(
                refused,
                Err(ResolveError::SettledMeanwhile {
                    status: IntentStatus::Executed,
                    ..
                })
            ),
            "{refused:?}"
        );
    }

    #[tokio::test]
    async fn an_unreachable_chain_changes_nothing() {
        let intent = intent_in(IntentStatus::Submitted);
        let mut chain = MockChainWriter::new();
        chain
            .expect_mined_nonce()
            .returning(|_| Err(ChainError::Unavailable("down".into())));
        let resolution = resolving(&intent, &["0xsent"], chain, settling_nothing());
        assert!(matches!(
            resolution.resolve(intent.id, &operator()).await,
            Err(ResolveError::Chain(_))
        ));
    }
}
