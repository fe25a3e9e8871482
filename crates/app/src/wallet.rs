//! The runtime side of the wallet: address, policy, balances, transfer intents.

use std::sync::Arc;
use std::time::Duration;

use domain::{
    evaluate_transfer, AgentId, Asset, AssetBalance, AtomicAmount, Chain, CursorCodec,
    CursorPosition, EvmAddress, IntentId, PolicyAsset, PolicyViolation, SpendPolicyRecord,
    TransferIntentRecord, TransferTerms, WalletBalances, WalletRecord, U256,
};
use ports::{
    Admission, AdmissionError, AgentStore, ChainClient, ChainError, IntentAdmission, IntentLedger,
    NewTransferIntent, StoreError,
};
use uuid::Uuid;

use crate::NotProvisioned;

/// The rolling window of the daily limit.
pub const DAILY_WINDOW: Duration = Duration::from_secs(24 * 60 * 60);

#[derive(Debug, thiserror::Error)]
pub enum WalletError {
    #[error(transparent)]
    NotProvisioned(#[from] NotProvisioned),
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Debug, thiserror::Error)]
pub enum BalanceError {
    #[error(transparent)]
    NotProvisioned(#[from] NotProvisioned),
    #[error(transparent)]
    Chain(#[from] ChainError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Debug, thiserror::Error)]
pub enum SendError {
    #[error(transparent)]
    NotProvisioned(#[from] NotProvisioned),
    #[error("only {asset} on {chain} is supported")]
    Unsupported { asset: Asset, chain: Chain },
    #[error(transparent)]
    Policy(PolicyViolation),
    #[error("idempotency key already used by intent {original} for a different transfer")]
    IdempotencyMismatch { original: IntentId },
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Debug, thiserror::Error)]
pub enum ListIntentsError {
    #[error(transparent)]
    NotProvisioned(#[from] NotProvisioned),
    #[error("Invalid cursor")]
    InvalidCursor,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A send as the agent asked for it; `asset` and `chain` are names still to be checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendRequest {
    pub to: EvmAddress,
    pub amount: AtomicAmount,
    pub asset: String,
    pub chain: String,
    pub idempotency_key: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntentPage {
    pub items: Vec<TransferIntentRecord>,
    pub next_cursor: Option<String>,
}

pub struct WalletService {
    agents: Arc<dyn AgentStore>,
    admission: Arc<dyn IntentAdmission>,
    ledger: Arc<dyn IntentLedger>,
    chain: Arc<dyn ChainClient>,
    cursors: CursorCodec,
    token: PolicyAsset,
}

impl WalletService {
    pub fn new(
        agents: Arc<dyn AgentStore>,
        admission: Arc<dyn IntentAdmission>,
        ledger: Arc<dyn IntentLedger>,
        chain: Arc<dyn ChainClient>,
        cursors: CursorCodec,
        token: PolicyAsset,
    ) -> Self {
        Self {
            agents,
            admission,
            ledger,
            chain,
            cursors,
            token,
        }
    }

    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn wallet(&self, agent: AgentId) -> Result<WalletRecord, WalletError> {
        Ok(self
            .agents
            .wallet(agent)
            .await?
            .ok_or(NotProvisioned::Wallet)?)
    }

    /// The policy in force; a wallet without a stored policy has no limits.
    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn policy(&self, agent: AgentId) -> Result<SpendPolicyRecord, WalletError> {
        let wallet = self.wallet(agent).await?;
        Ok(wallet.spend_policy.unwrap_or_else(|| SpendPolicyRecord {
            id: domain::SpendPolicyId(wallet.id.0),
            asset: self.token.clone(),
            limits: Default::default(),
            allowlist: Default::default(),
            created_at: wallet.created_at,
            updated_at: wallet.created_at,
        }))
    }

    /// Native and token balances, both read from the chain now: never a cached figure.
    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn balances(&self, agent: AgentId) -> Result<WalletBalances, BalanceError> {
        let wallet = self
            .agents
            .wallet(agent)
            .await?
            .ok_or(NotProvisioned::Wallet)?;
        let native = wallet.chain.native_asset();
        let mut assets = vec![AssetBalance {
            asset: native,
            chain: wallet.chain,
            decimals: native.decimals(),
            amount: self.chain.native_balance(&wallet.address).await?,
            token_address: None,
        }];
        if let Some(token) = &self.token.token_address {
            let amount = self.chain.token_balance(token, &wallet.address).await?;
            let decimals = self.chain.token_decimals(token).await?;
            assets.push(AssetBalance {
                asset: self.token.asset,
                chain: wallet.chain,
                decimals,
                amount,
                token_address: Some(*token),
            });
        }
        Ok(WalletBalances { wallet, assets })
    }

    /// Creates a transfer intent, pending until an operator confirms it. Returns the intent and
    /// whether it is an earlier one replayed for the same idempotency key.
    #[tracing::instrument(level = "debug", skip(self, request), fields(amount = %request.amount, to = %request.to))]
    pub async fn send(
        &self,
        agent: AgentId,
        request: SendRequest,
    ) -> Result<(TransferIntentRecord, bool), SendError> {
        let supported = Asset::parse(&request.asset) == Some(self.token.asset)
            && Chain::parse(&request.chain) == Some(self.token.chain);
        if !supported {
            return Err(SendError::Unsupported {
                asset: self.token.asset,
                chain: self.token.chain,
            });
        }
        let terms = TransferTerms {
            asset: self.token.asset,
            chain: self.token.chain,
            recipient: request.to,
            amount: request.amount,
        };
        let intent = NewTransferIntent {
            id: IntentId(Uuid::now_v7()),
            agent_id: agent,
            terms,
            token_address: self.token.token_address,
            idempotency_key: request.idempotency_key,
        };
        let check = move |policy: &SpendPolicyRecord, held: U256| {
            evaluate_transfer(
                &policy.limits,
                &policy.allowlist,
                &terms.recipient,
                terms.amount,
                held,
            )
        };
        match self.admission.admit(intent, DAILY_WINDOW, &check).await {
            Ok(Admission::Created(intent)) => Ok((intent, false)),
            Ok(Admission::Replayed(intent)) => Ok((intent, true)),
            Err(AdmissionError::NoWallet) => Err(NotProvisioned::Wallet.into()),
            Err(AdmissionError::Refused(violation)) => Err(SendError::Policy(violation)),
            Err(AdmissionError::IdempotencyMismatch { original }) => {
                Err(SendError::IdempotencyMismatch { original })
            }
            Err(AdmissionError::Store(store)) => Err(store.into()),
        }
    }

    /// One page of the agent's intents, newest first.
    #[tracing::instrument(level = "debug", skip(self, cursor))]
    pub async fn intents(
        &self,
        agent: AgentId,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<IntentPage, ListIntentsError> {
        let scope = format!("intents:{agent}");
        let after = cursor
            .map(|cursor| self.cursors.decode(&scope, cursor))
            .transpose()
            .map_err(|_| ListIntentsError::InvalidCursor)?;
        self.agents
            .wallet(agent)
            .await?
            .ok_or(NotProvisioned::Wallet)?;
        // One more than asked tells whether another page follows.
        let mut items = self.ledger.page(agent, after, limit + 1).await?;
        let next_cursor = if items.len() > limit {
            items.truncate(limit);
            items.last().map(|last| {
                let micros = last.created_at.unix_timestamp_nanos() / 1000;
                let position = CursorPosition {
                    created_at_micros: i64::try_from(micros).unwrap_or(i64::MAX),
                    id: last.id.0,
                };
                self.cursors.encode(&scope, position)
            })
        } else {
            None
        };
        Ok(IntentPage { items, next_cursor })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::{SpendLimits, TransferIntentRecord};
    use ports::{MockAgentStore, MockChainClient, MockIntentAdmission, MockIntentLedger};

    fn token() -> PolicyAsset {
        PolicyAsset::usdc_on_base(EvmAddress::from_bytes([0xaa; 20]))
    }

    fn agents_with(wallet: Option<WalletRecord>) -> MockAgentStore {
        let mut agents = MockAgentStore::new();
        agents
            .expect_wallet()
            .returning(move |_| Ok(wallet.clone()));
        agents
    }

    fn service(
        agents: MockAgentStore,
        admission: MockIntentAdmission,
        ledger: MockIntentLedger,
        chain: MockChainClient,
    ) -> WalletService {
        WalletService::new(
            Arc::new(agents),
            Arc::new(admission),
            Arc::new(ledger),
            Arc::new(chain),
            CursorCodec::new(b"test secret"),
            token(),
        )
    }

    fn sending(admission: MockIntentAdmission) -> WalletService {
        service(
            MockAgentStore::new(),
            admission,
            MockIntentLedger::new(),
            MockChainClient::new(),
        )
    }

    fn reading(wallet: Option<WalletRecord>, ledger: MockIntentLedger) -> WalletService {
        service(
            agents_with(wallet),
            MockIntentAdmission::new(),
            ledger,
            MockChainClient::new(),
        )
    }

    fn request(asset: &str, chain: &str) -> SendRequest {
        SendRequest {
            to: EvmAddress::from_bytes([9; 20]),
            amount: AtomicAmount::parse("100").expect("valid"),
            asset: asset.into(),
            chain: chain.into(),
            idempotency_key: None,
        }
    }

    fn intent_from(new: &NewTransferIntent) -> TransferIntentRecord {
        TransferIntentRecord {
            id: new.id,
            agent_id: new.agent_id,
            asset: new.terms.asset,
            chain: new.terms.chain,
            recipient: new.terms.recipient,
            amount: new.terms.amount,
            token_address: new.token_address,
            idempotency_key: new.idempotency_key.clone(),
            ..TransferIntentRecord::fixture()
        }
    }

    fn policy_with(limits: SpendLimits) -> SpendPolicyRecord {
        SpendPolicyRecord {
            limits,
            ..SpendPolicyRecord::fixture()
        }
    }

    #[tokio::test]
    async fn only_usdc_on_base_is_accepted_and_nothing_else_reaches_the_store() {
        let mut admission = MockIntentAdmission::new();
        admission.expect_admit().never();
        let service = sending(admission);
        for (asset, chain) in [("ETH", "base"), ("USDC", "ethereum"), ("DAI", "polygon")] {
            let refused = service
                .send(AgentId(Uuid::now_v7()), request(asset, chain))
                .await;
            assert!(
                matches!(
                    &refused,
                    Err(SendError::Unsupported {
                        asset: Asset::Usdc,
                        chain: Chain::Base
                    })
                ),
                "{refused:?}"
            );
        }
    }

    #[tokio::test]
    async fn send_admits_through_the_domain_policy_over_the_daily_window() {
        let mut admission = MockIntentAdmission::new();
        admission
            .expect_admit()
            .times(1)
            .returning(|new, window, check| {
                assert_eq!(window, DAILY_WINDOW);
                assert_eq!(
                    (new.terms.asset, new.terms.chain),
                    (Asset::Usdc, Chain::Base)
                );
                let per_tx_50 = policy_with(SpendLimits {
                    max_per_tx: Some(AtomicAmount::parse("50").expect("valid")),
                    max_daily: None,
                });
                assert!(matches!(
                    check(&per_tx_50, U256::ZERO),
                    Err(PolicyViolation::ExceedsPerTransactionMax { .. })
                ));
                assert_eq!(
                    check(&policy_with(SpendLimits::default()), U256::ZERO),
                    Ok(())
                );
                Ok(Admission::Created(intent_from(&new)))
            });
        let (intent, replayed) = sending(admission)
            .send(AgentId(Uuid::now_v7()), request("usdc", "Base"))
            .await
            .expect("admitted");
        assert!(!replayed);
        assert_eq!(intent.status, domain::IntentStatus::PendingConfirmation);
    }

    #[tokio::test]
    async fn admission_outcomes_map_to_send_outcomes() {
        let original = IntentId(Uuid::now_v7());
        let mut admission = MockIntentAdmission::new();
        let mut calls = 0;
        admission
            .expect_admit()
            .times(4)
            .returning(move |new, _, _| {
                calls += 1;
                match calls {
                    1 => Ok(Admission::Replayed(intent_from(&new))),
                    2 => Err(AdmissionError::NoWallet),
                    3 => Err(AdmissionError::IdempotencyMismatch { original }),
                    _ => Err(AdmissionError::Refused(
                        PolicyViolation::RecipientNotAllowlisted {
                            recipient: new.terms.recipient,
                        },
                    )),
                }
            });
        let service = sending(admission);
        let agent = AgentId(Uuid::now_v7());
        assert!(matches!(
            service.send(agent, request("USDC", "base")).await,
            Ok((_, true))
        ));
        assert!(matches!(
            service.send(agent, request("USDC", "base")).await,
            Err(SendError::NotProvisioned(NotProvisioned::Wallet))
        ));
        assert!(matches!(
            service.send(agent, request("USDC", "base")).await,
            Err(SendError::IdempotencyMismatch { original: o }) if o == original
        ));
        assert!(matches!(
            service.send(agent, request("USDC", "base")).await,
            Err(SendError::Policy(
                PolicyViolation::RecipientNotAllowlisted { .. }
            ))
        ));
    }

    #[tokio::test]
    async fn pages_carry_a_cursor_only_when_more_follow_and_it_reads_back() {
        let agent = AgentId(Uuid::now_v7());
        let mut ledger = MockIntentLedger::new();
        ledger.expect_page().returning(move |_, after, limit| {
            let count = if after.is_some() { 1 } else { limit };
            Ok((0..count)
                .map(|_| TransferIntentRecord {
                    id: IntentId(Uuid::now_v7()),
                    agent_id: agent,
                    ..TransferIntentRecord::fixture()
                })
                .collect())
        });
        let service = reading(Some(WalletRecord::fixture()), ledger);
        let first = service.intents(agent, None, 2).await.expect("page");
        assert_eq!(first.items.len(), 2);
        let cursor = first.next_cursor.expect("more follow");
        let second = service
            .intents(agent, Some(&cursor), 2)
            .await
            .expect("page");
        assert_eq!((second.items.len(), second.next_cursor), (1, None));
        let elsewhere = service
            .intents(AgentId(Uuid::now_v7()), Some(&cursor), 2)
            .await;
        assert!(
            matches!(elsewhere, Err(ListIntentsError::InvalidCursor)),
            "a cursor is bound to its agent"
        );
    }

    #[tokio::test]
    async fn a_garbage_cursor_is_invalid_and_no_wallet_is_said() {
        let service = reading(None, MockIntentLedger::new());
        let agent = AgentId(Uuid::now_v7());
        assert!(matches!(
            service.intents(agent, Some("nope"), 5).await,
            Err(ListIntentsError::InvalidCursor)
        ));
        assert!(matches!(
            service.intents(agent, None, 5).await,
            Err(ListIntentsError::NotProvisioned(NotProvisioned::Wallet))
        ));
        assert!(matches!(
            service.balances(agent).await,
            Err(BalanceError::NotProvisioned(NotProvisioned::Wallet))
        ));
        assert!(matches!(
            service.policy(agent).await,
            Err(WalletError::NotProvisioned(NotProvisioned::Wallet))
        ));
    }

    #[tokio::test]
    async fn balances_list_the_native_asset_and_the_token_from_the_chain() {
        let mut chain = MockChainClient::new();
        chain
            .expect_native_balance()
            .returning(|_| Ok(U256::from(7u64)));
        chain
            .expect_token_balance()
            .returning(|_, _| Ok(U256::from(1_500_000u64)));
        chain.expect_token_decimals().returning(|_| Ok(6));
        let service = service(
            agents_with(Some(WalletRecord::fixture())),
            MockIntentAdmission::new(),
            MockIntentLedger::new(),
            chain,
        );
        let balances = service
            .balances(AgentId(Uuid::now_v7()))
            .await
            .expect("balances");
        let summary: Vec<_> = balances
            .assets
            .iter()
            .map(|a| (a.asset, a.decimals, a.amount, a.token_address.is_some()))
            .collect();
        assert_eq!(
            summary,
            vec![
                (Asset::Eth, 18, U256::from(7u64), false),
                (Asset::Usdc, 6, U256::from(1_500_000u64), true)
            ]
        );
    }

    #[tokio::test]
    async fn an_unreachable_chain_is_an_error_never_a_stale_figure() {
        let mut chain = MockChainClient::new();
        chain
            .expect_native_balance()
            .returning(|_| Err(ChainError::Unavailable("connection refused".into())));
        let service = service(
            agents_with(Some(WalletRecord::fixture())),
            MockIntentAdmission::new(),
            MockIntentLedger::new(),
            chain,
        );
        assert!(matches!(
            service.balances(AgentId(Uuid::now_v7())).await,
            Err(BalanceError::Chain(ChainError::Unavailable(_)))
        ));
    }
}
