//! The runtime side of the wallet: address, policy, balances, transfer intents.

use std::sync::Arc;
use std::time::Duration;

use domain::{
    evaluate_transfer, AgentId, AtomicAmount, CursorCodec, CursorPosition, EvmAddress,
    PolicyViolation, U256,
};
use ports::{
    Admission, AdmissionError, AgentStore, ChainClient, ChainError, IntentStore, NewTransferIntent,
    PolicyAsset, SpendPolicyRecord, StoreError, TransferIntentRecord, WalletRecord,
};
use uuid::Uuid;

/// The rolling window of the daily limit.
pub const DAILY_WINDOW: Duration = Duration::from_secs(24 * 60 * 60);

/// The chain's native asset, as the balance lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NativeAsset {
    pub symbol: String,
    pub decimals: u8,
}

#[derive(Debug, thiserror::Error)]
pub enum WalletError {
    #[error("no wallet provisioned for this agent")]
    NoWallet,
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Debug, thiserror::Error)]
pub enum BalanceError {
    #[error("no wallet provisioned for this agent")]
    NoWallet,
    #[error(transparent)]
    Chain(#[from] ChainError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<WalletError> for BalanceError {
    fn from(error: WalletError) -> Self {
        match error {
            WalletError::NoWallet => Self::NoWallet,
            WalletError::Store(store) => Self::Store(store),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SendError {
    #[error("no wallet provisioned for this agent")]
    NoWallet,
    #[error("only {asset} on {chain} is supported")]
    Unsupported { asset: String, chain: String },
    #[error(transparent)]
    Policy(PolicyViolation),
    #[error("idempotency key already used by intent {original} for a different transfer")]
    IdempotencyMismatch { original: Uuid },
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Debug, thiserror::Error)]
pub enum ListIntentsError {
    #[error("no wallet provisioned for this agent")]
    NoWallet,
    #[error("Invalid cursor")]
    InvalidCursor,
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<WalletError> for ListIntentsError {
    fn from(error: WalletError) -> Self {
        match error {
            WalletError::NoWallet => Self::NoWallet,
            WalletError::Store(store) => Self::Store(store),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendRequest {
    pub to: EvmAddress,
    pub amount: AtomicAmount,
    pub asset: String,
    pub chain: String,
    pub idempotency_key: Option<String>,
}

/// One asset's balance, read from the chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssetBalance {
    pub asset: String,
    pub symbol: String,
    pub chain: String,
    pub decimals: u8,
    pub amount: U256,
    pub token_address: Option<EvmAddress>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalletBalances {
    pub wallet: WalletRecord,
    pub assets: Vec<AssetBalance>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntentPage {
    pub items: Vec<TransferIntentRecord>,
    pub next_cursor: Option<String>,
}

pub struct WalletService {
    agents: Arc<dyn AgentStore>,
    intents: Arc<dyn IntentStore>,
    chain: Arc<dyn ChainClient>,
    cursors: CursorCodec,
    token: PolicyAsset,
    native: NativeAsset,
}

impl WalletService {
    pub fn new(
        agents: Arc<dyn AgentStore>,
        intents: Arc<dyn IntentStore>,
        chain: Arc<dyn ChainClient>,
        cursors: CursorCodec,
        token: PolicyAsset,
        native: NativeAsset,
    ) -> Self {
        Self {
            agents,
            intents,
            chain,
            cursors,
            token,
            native,
        }
    }

    pub async fn wallet(&self, agent: AgentId) -> Result<WalletRecord, WalletError> {
        self.agents
            .wallet(agent)
            .await?
            .ok_or(WalletError::NoWallet)
    }

    /// The policy in force; a wallet without a stored policy has no limits.
    pub async fn policy(&self, agent: AgentId) -> Result<SpendPolicyRecord, WalletError> {
        let wallet = self.wallet(agent).await?;
        Ok(wallet.spend_policy.unwrap_or_else(|| SpendPolicyRecord {
            id: wallet.id,
            asset: self.token.clone(),
            limits: Default::default(),
            allowlist: Default::default(),
            created_at: wallet.created_at,
            updated_at: wallet.created_at,
        }))
    }

    /// Native and token balances, both read from the chain now: never a cached figure.
    pub async fn balances(&self, agent: AgentId) -> Result<WalletBalances, BalanceError> {
        let wallet = self.wallet(agent).await?;
        let native = self.chain.native_balance(&wallet.address).await?;
        let mut assets = vec![AssetBalance {
            asset: self.native.symbol.clone(),
            symbol: self.native.symbol.clone(),
            chain: wallet.chain.clone(),
            decimals: self.native.decimals,
            amount: native,
            token_address: None,
        }];
        if let Some(token) = &self.token.token_address {
            let amount = self.chain.token_balance(token, &wallet.address).await?;
            let decimals = self.chain.token_decimals(token).await?;
            assets.push(AssetBalance {
                asset: self.token.asset.clone(),
                symbol: self.token.asset.clone(),
                chain: wallet.chain.clone(),
                decimals,
                amount,
                token_address: Some(*token),
            });
        }
        Ok(WalletBalances { wallet, assets })
    }

    /// Creates a transfer intent, pending until an operator confirms it. Returns the intent and
    /// whether it is an earlier one replayed for the same idempotency key.
    pub async fn send(
        &self,
        agent: AgentId,
        request: SendRequest,
    ) -> Result<(TransferIntentRecord, bool), SendError> {
        let supported = request.asset.eq_ignore_ascii_case(&self.token.asset)
            && request.chain.eq_ignore_ascii_case(&self.token.chain);
        if !supported {
            return Err(SendError::Unsupported {
                asset: self.token.asset.clone(),
                chain: self.token.chain.clone(),
            });
        }
        let intent = NewTransferIntent {
            id: Uuid::now_v7(),
            agent_id: agent,
            asset: self.token.asset.clone(),
            chain: self.token.chain.clone(),
            token_address: self.token.token_address,
            recipient: request.to,
            amount: request.amount,
            idempotency_key: request.idempotency_key,
        };
        let (recipient, amount) = (request.to, request.amount);
        let check = move |policy: &SpendPolicyRecord, held: U256| {
            evaluate_transfer(&policy.limits, &policy.allowlist, &recipient, amount, held)
        };
        match self.intents.admit(intent, DAILY_WINDOW, &check).await {
            Ok(Admission::Created(intent)) => Ok((intent, false)),
            Ok(Admission::Replayed(intent)) => Ok((intent, true)),
            Err(AdmissionError::NoWallet) => Err(SendError::NoWallet),
            Err(AdmissionError::Refused(violation)) => Err(SendError::Policy(violation)),
            Err(AdmissionError::IdempotencyMismatch { original }) => {
                Err(SendError::IdempotencyMismatch { original })
            }
            Err(AdmissionError::Store(store)) => Err(SendError::Store(store)),
        }
    }

    /// One page of the agent's intents, newest first.
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
        self.wallet(agent).await?;
        // One more than asked tells whether another page follows.
        let mut items = self.intents.page(agent, after, limit + 1).await?;
        let next_cursor = if items.len() > limit {
            items.truncate(limit);
            items.last().map(|last| {
                let micros = last.created_at.unix_timestamp_nanos() / 1000;
                let position = CursorPosition {
                    created_at_micros: i64::try_from(micros).unwrap_or(i64::MAX),
                    id: last.id,
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
    use domain::{Allowlist, IntentStatus, SpendLimits};
    use ports::{MockAgentStore, MockChainClient, MockIntentStore};
    use time::OffsetDateTime;

    fn token() -> PolicyAsset {
        PolicyAsset {
            asset: "USDC".into(),
            chain: "base".into(),
            decimals: 6,
            token_address: Some(EvmAddress::from_bytes([0xaa; 20])),
        }
    }

    fn wallet() -> WalletRecord {
        WalletRecord {
            id: Uuid::now_v7(),
            provider: "local".into(),
            chain: "base".into(),
            address: EvmAddress::from_bytes([1; 20]),
            custody: "self_custodial".into(),
            status: "active".into(),
            delegated: false,
            spend_policy: None,
            created_at: OffsetDateTime::now_utc(),
        }
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
        intents: MockIntentStore,
        chain: MockChainClient,
    ) -> WalletService {
        WalletService::new(
            Arc::new(agents),
            Arc::new(intents),
            Arc::new(chain),
            CursorCodec::new(b"test secret"),
            token(),
            NativeAsset {
                symbol: "ETH".into(),
                decimals: 18,
            },
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
        let now = OffsetDateTime::now_utc();
        TransferIntentRecord {
            id: new.id,
            agent_id: new.agent_id,
            wallet_id: Uuid::now_v7(),
            status: IntentStatus::PendingConfirmation,
            asset: new.asset.clone(),
            chain: new.chain.clone(),
            token_address: new.token_address,
            recipient: new.recipient,
            amount: new.amount,
            idempotency_key: new.idempotency_key.clone(),
            tx_hash: None,
            failure_reason: None,
            created_at: now,
            updated_at: now,
            confirmed_at: None,
        }
    }

    fn policy_with(limits: SpendLimits) -> SpendPolicyRecord {
        SpendPolicyRecord {
            id: Uuid::now_v7(),
            asset: token(),
            limits,
            allowlist: Allowlist::unrestricted(),
            created_at: OffsetDateTime::now_utc(),
            updated_at: OffsetDateTime::now_utc(),
        }
    }

    #[tokio::test]
    async fn only_usdc_on_base_is_accepted_and_nothing_else_reaches_the_store() {
        let mut intents = MockIntentStore::new();
        intents.expect_admit().never();
        let service = service(MockAgentStore::new(), intents, MockChainClient::new());
        for (asset, chain) in [("ETH", "base"), ("USDC", "ethereum"), ("DAI", "polygon")] {
            let refused = service
                .send(AgentId(Uuid::now_v7()), request(asset, chain))
                .await;
            assert!(
                matches!(&refused, Err(SendError::Unsupported { asset, chain }) if asset == "USDC" && chain == "base"),
                "{refused:?}"
            );
        }
    }

    #[tokio::test]
    async fn send_admits_through_the_domain_policy_over_the_daily_window() {
        let mut intents = MockIntentStore::new();
        intents
            .expect_admit()
            .times(1)
            .returning(|new, window, check| {
                assert_eq!(window, DAILY_WINDOW);
                assert_eq!((new.asset.as_str(), new.chain.as_str()), ("USDC", "base"));
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
        let service = service(MockAgentStore::new(), intents, MockChainClient::new());
        let (intent, replayed) = service
            .send(AgentId(Uuid::now_v7()), request("usdc", "Base"))
            .await
            .expect("admitted");
        assert!(!replayed);
        assert_eq!(intent.status, IntentStatus::PendingConfirmation);
    }

    #[tokio::test]
    async fn admission_outcomes_map_to_send_outcomes() {
        let original = Uuid::now_v7();
        let mut intents = MockIntentStore::new();
        let mut calls = 0;
        intents.expect_admit().times(4).returning(move |new, _, _| {
            calls += 1;
            match calls {
                1 => Ok(Admission::Replayed(intent_from(&new))),
                2 => Err(AdmissionError::NoWallet),
                3 => Err(AdmissionError::IdempotencyMismatch { original }),
                _ => Err(AdmissionError::Refused(
                    PolicyViolation::RecipientNotAllowlisted {
                        recipient: new.recipient,
                    },
                )),
            }
        });
        let service = service(MockAgentStore::new(), intents, MockChainClient::new());
        let agent = AgentId(Uuid::now_v7());
        assert!(matches!(
            service.send(agent, request("USDC", "base")).await,
            Ok((_, true))
        ));
        assert!(matches!(
            service.send(agent, request("USDC", "base")).await,
            Err(SendError::NoWallet)
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
        let mut intents = MockIntentStore::new();
        intents.expect_page().returning(move |_, after, limit| {
            let count = if after.is_some() { 1 } else { limit };
            Ok((0..count)
                .map(|_| {
                    intent_from(&NewTransferIntent {
                        id: Uuid::now_v7(),
                        agent_id: agent,
                        asset: "USDC".into(),
                        chain: "base".into(),
                        token_address: None,
                        recipient: EvmAddress::from_bytes([2; 20]),
                        amount: AtomicAmount::parse("1").expect("valid"),
                        idempotency_key: None,
                    })
                })
                .collect())
        });
        let service = service(agents_with(Some(wallet())), intents, MockChainClient::new());
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
        let service = service(
            agents_with(None),
            MockIntentStore::new(),
            MockChainClient::new(),
        );
        let agent = AgentId(Uuid::now_v7());
        assert!(matches!(
            service.intents(agent, Some("nope"), 5).await,
            Err(ListIntentsError::InvalidCursor)
        ));
        assert!(matches!(
            service.intents(agent, None, 5).await,
            Err(ListIntentsError::NoWallet)
        ));
        assert!(matches!(
            service.balances(agent).await,
            Err(BalanceError::NoWallet)
        ));
        assert!(matches!(
            service.policy(agent).await,
            Err(WalletError::NoWallet)
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
        let service = service(agents_with(Some(wallet())), MockIntentStore::new(), chain);
        let balances = service
            .balances(AgentId(Uuid::now_v7()))
            .await
            .expect("balances");
        let summary: Vec<_> = balances
            .assets
            .iter()
            .map(|a| {
                (
                    a.asset.as_str(),
                    a.decimals,
                    a.amount,
                    a.token_address.is_some(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            vec![
                ("ETH", 18, U256::from(7u64), false),
                ("USDC", 6, U256::from(1_500_000u64), true)
            ]
        );
    }

    #[tokio::test]
    async fn an_unreachable_chain_is_an_error_never_a_stale_figure() {
        let mut chain = MockChainClient::new();
        chain
            .expect_native_balance()
            .returning(|_| Err(ChainError::Unavailable("connection refused".into())));
        let service = service(agents_with(Some(wallet())), MockIntentStore::new(), chain);
        assert!(matches!(
            service.balances(AgentId(Uuid::now_v7())).await,
            Err(BalanceError::Chain(ChainError::Unavailable(_)))
        ));
    }
}
