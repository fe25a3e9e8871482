//! The operator's side: creating agents, their keys and spend policies, deciding on transfer
//! intents, and settling a sent one by what the chain says when it cannot settle by itself.

use std::sync::Arc;

use domain::{
    evaluate_transfer, nonce_used, AgentId, AgentKey, AgentProfile, IntentEvent, IntentId,
    IntentStatus, Label, PolicyAsset, PolicyChange, PolicyViolation, SpendPolicyRecord,
    TransferIntentRecord, TransitionRefused,
};
use ports::{
    AgentStore, AttemptRecord, ChainError, ChainWriter, Conflict, ExecutionQueue, InboxProvisioner,
    IntentFilter, IntentLedger, KeyVault, NewAgent, NewEmailInbox, NewPhoneNumber, NewWallet,
    NumberProvisioner, NumberReleaser, ProviderError, SignedTransfer, StoreError, TransitionError,
    WalletKeyStore,
};
use uuid::Uuid;

use crate::execution::{nonce_taken_by_another, settlement_by_receipt};
use crate::key_rotation::vault_opens_stored_keys;
use crate::{NotProvisioned, ResealError, DAILY_WINDOW};

/// How often a freshly provisioned phone number may collide with a stored one before giving up.
const NUMBER_PROVISIONING_ATTEMPTS: usize = 3;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateAgent {
    /// The sponsor whose send rate the agent shares with its other agents; `None` gives the
    /// agent a sponsor of its own (`agent-<id>`), so sharing is always chosen, never a default.
    pub sponsor: Option<String>,
    pub label: Option<Label>,
    pub email: bool,
    pub phone: bool,
    pub wallet: bool,
}

/// A key handed to the operator exactly once, with the agent it opens.
#[derive(Debug)]
pub struct IssuedKey {
    pub key: AgentKey,
    pub profile: AgentProfile,
}

#[derive(Debug, thiserror::Error)]
pub enum CreateAgentError {
    #[error("sponsor name must not be empty")]
    EmptySponsor,
    #[error("could not provision {resource}: {source}")]
    Provisioning {
        resource: &'static str,
        source: ProviderError,
    },
    /// The wallets already stored were sealed under another master key: a wallet sealed now
    /// would be under a key nothing else here opens (e.g. the public sandbox key).
    #[error(
        "the configured wallet master key does not open the wallets already in this database; \
         set WALLET_MASTER_KEY to the key they were sealed under"
    )]
    ForeignMasterKey,
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<ResealError> for CreateAgentError {
    fn from(error: ResealError) -> Self {
        match error {
            ResealError::Store(store) => Self::Store(store),
            ResealError::Vault(source) => Self::Provisioning {
                resource: "wallet",
                source,
            },
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfirmError {
    #[error("intent {0} not found")]
    NotFound(IntentId),
    #[error("the agent of intent {0} is deactivated: its intents are not executed")]
    AgentInactive(IntentId),
    /// The intent breaks the spend policy as it is now; `force` confirms it anyway.
    #[error("the intent breaks the spend policy in force: {0}; confirm with --force to execute it anyway")]
    Policy(PolicyViolation),
    #[error(transparent)]
    Refused(#[from] TransitionRefused),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<TransitionError> for ConfirmError {
    fn from(error: TransitionError) -> Self {
        match error {
            TransitionError::NotFound(id) => Self::NotFound(id),
            TransitionError::Store(store) => Self::Store(store),
            TransitionError::Refused(refused) => Self::Refused(refused),
        }
    }
}

/// A confirmed intent and what the spend policy in force says of it: a violation here means the
/// operator forced the confirmation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confirmation {
    pub intent: TransferIntentRecord,
    pub policy_verdict: Result<(), PolicyViolation>,
}

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

#[derive(Debug, thiserror::Error)]
pub enum AgentLookupError {
    #[error("agent {0} not found")]
    NotFound(AgentId),
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("agent {0} not found")]
    AgentNotFound(AgentId),
    #[error(transparent)]
    NotProvisioned(#[from] NotProvisioned),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What the operator's use cases work with.
pub struct ControlPlanePorts {
    pub agents: Arc<dyn AgentStore>,
    pub intents: Arc<dyn IntentLedger>,
    pub wallet_keys: Arc<dyn WalletKeyStore>,
    pub inboxes: Arc<dyn InboxProvisioner>,
    pub numbers: Arc<dyn NumberProvisioner>,
    /// Gives a deactivated agent's number back to its provider.
    pub releaser: Arc<dyn NumberReleaser>,
    pub vault: Arc<dyn KeyVault>,
    /// The chain wallets live on, asked when an operator resolves a sent intent.
    pub chain: Arc<dyn ChainWriter>,
    /// Settles intents as the executor does.
    pub settlement: Arc<dyn ExecutionQueue>,
}

pub struct ControlPlane {
    store: Arc<dyn AgentStore>,
    intents: Arc<dyn IntentLedger>,
    wallet_keys: Arc<dyn WalletKeyStore>,
    inboxes: Arc<dyn InboxProvisioner>,
    numbers: Arc<dyn NumberProvisioner>,
    releaser: Arc<dyn NumberReleaser>,
    vault: Arc<dyn KeyVault>,
    chain: Arc<dyn ChainWriter>,
    settlement: Arc<dyn ExecutionQueue>,
    policy_asset: PolicyAsset,
}

impl ControlPlane {
    pub fn new(ports: ControlPlanePorts, policy_asset: PolicyAsset) -> Self {
        Self {
            store: ports.agents,
            intents: ports.intents,
            wallet_keys: ports.wallet_keys,
            inboxes: ports.inboxes,
            numbers: ports.numbers,
            releaser: ports.releaser,
            vault: ports.vault,
            chain: ports.chain,
            settlement: ports.settlement,
            policy_asset,
        }
    }

    /// Creates an agent with the requested resources and returns its key, shown this once.
    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn create_agent(&self, request: CreateAgent) -> Result<IssuedKey, CreateAgentError> {
        let id = AgentId(Uuid::now_v7());
        let sponsor = match request.sponsor.as_deref().map(str::trim) {
            Some("") => return Err(CreateAgentError::EmptySponsor),
            Some(named) => named.to_owned(),
            None => format!("agent-{id}"),
        };
        let key = crate::generate_agent_key();
        let email_inbox = match request.email {
            true => Some(self.provision_inbox(id).await?),
            false => None,
        };
        let wallet = match request.wallet {
            true => Some(self.provision_wallet().await?),
            false => None,
        };
        let mut new_agent = NewAgent {
            id,
            sponsor,
            label: request.label,
            key_hash: key.hash(),
            phone_number: None,
            email_inbox,
            wallet,
        };
        let mut attempts_left = NUMBER_PROVISIONING_ATTEMPTS;
        loop {
            if request.phone {
                new_agent.phone_number = Some(self.provision_number().await?);
            }
            attempts_left -= 1;
            match self.store.create(new_agent.clone()).await {
                Ok(profile) => return Ok(IssuedKey { key, profile }),
                // A sandbox or pooled number may already be held by another agent: draw again.
                Err(StoreError::Conflict(Conflict::PhoneNumber))
                    if request.phone && attempts_left > 0 =>
                {
                    tracing::warn!(agent_id = %id, "provisioned phone number already taken, retrying");
                }
                Err(other) => return Err(other.into()),
            }
        }
    }

    async fn provision_inbox(&self, id: AgentId) -> Result<NewEmailInbox, CreateAgentError> {
        let inbox = self.inboxes.provision_inbox(id).await.map_err(|source| {
            CreateAgentError::Provisioning {
                resource: "email inbox",
                source,
            }
        })?;
        Ok(NewEmailInbox {
            address: inbox.address,
            provider: inbox.provider,
        })
    }

    async fn provision_number(&self) -> Result<NewPhoneNumber, CreateAgentError> {
        let number = self.numbers.provision_number().await.map_err(|source| {
            CreateAgentError::Provisioning {
                resource: "phone number",
                source,
            }
        })?;
        Ok(NewPhoneNumber {
            number: number.number,
            country_iso2: number.country_iso2,
            provider: number.provider,
        })
    }

    async fn provision_wallet(&self) -> Result<NewWallet, CreateAgentError> {
        if !vault_opens_stored_keys(self.wallet_keys.as_ref(), self.vault.as_ref()).await? {
            return Err(CreateAgentError::ForeignMasterKey);
        }
        let key = self.vault.create_wallet_key().await.map_err(|source| {
            CreateAgentError::Provisioning {
                resource: "wallet",
                source,
            }
        })?;
        Ok(NewWallet {
            provider: key.provider,
            chain: self.policy_asset.chain,
            address: key.address,
            custody: key.custody,
            sealed_key: key.sealed_key,
            policy_asset: self.policy_asset.clone(),
        })
    }

    pub async fn list_agents(&self) -> Result<Vec<AgentProfile>, StoreError> {
        self.store.list().await
    }

    pub async fn show_agent(&self, id: AgentId) -> Result<AgentProfile, AgentLookupError> {
        self.store
            .profile(id)
            .await?
            .ok_or(AgentLookupError::NotFound(id))
    }

    /// Deactivates the agent; its key stops working at once. Deactivating twice is harmless.
    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn deactivate_agent(&self, id: AgentId) -> Result<AgentProfile, AgentLookupError> {
        if !self.store.deactivate(id).await? {
            return Err(AgentLookupError::NotFound(id));
        }
        let profile = self.show_agent(id).await?;
        // The agent is deactivated whatever the provider says; a number it keeps costs money, so
        // a failed release is said loudly for the operator to finish by hand.
        if let Some(phone) = &profile.phone_number {
            if let Err(error) = self.releaser.release_number(&phone.number).await {
                tracing::warn!(%error, number = %phone.number, "could not release the deactivated agent's number at its provider; release it by hand");
            }
        }
        Ok(profile)
    }

    /// Issues a new key for the agent; the old key stops working at once.
    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn rotate_key(&self, id: AgentId) -> Result<IssuedKey, AgentLookupError> {
        let key = crate::generate_agent_key();
        if !self.store.replace_key_hash(id, key.hash()).await? {
            return Err(AgentLookupError::NotFound(id));
        }
        let profile = self.show_agent(id).await?;
        Ok(IssuedKey { key, profile })
    }

    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn set_policy(
        &self,
        id: AgentId,
        change: PolicyChange,
    ) -> Result<SpendPolicyRecord, PolicyError> {
        match self
            .store
            .update_policy(id, self.policy_asset.clone(), change)
            .await?
        {
            Some(policy) => Ok(policy),
            None => Err(self.missing_wallet_reason(id).await),
        }
    }

    /// The policy in force for the agent's wallet (`None` limits where none are configured).
    pub async fn show_policy(&self, id: AgentId) -> Result<SpendPolicyRecord, PolicyError> {
        let profile = self
            .store
            .profile(id)
            .await?
            .ok_or(PolicyError::AgentNotFound(id))?;
        match profile.wallet {
            None => Err(NotProvisioned::Wallet.into()),
            Some(wallet) => match wallet.spend_policy {
                Some(policy) => Ok(policy),
                // A wallet made before policies existed: an empty change creates its policy.
                None => self.set_policy(id, PolicyChange::default()).await,
            },
        }
    }

    async fn missing_wallet_reason(&self, id: AgentId) -> PolicyError {
        match self.store.profile(id).await {
            Ok(Some(_)) => NotProvisioned::Wallet.into(),
            Ok(None) => PolicyError::AgentNotFound(id),
            Err(store) => PolicyError::Store(store),
        }
    }

    /// Intents matching `filter`, newest first.
    pub async fn list_intents(
        &self,
        filter: IntentFilter,
    ) -> Result<Vec<TransferIntentRecord>, StoreError> {
        self.intents.list(filter).await
    }

    pub async fn show_intent(&self, id: IntentId) -> Result<TransferIntentRecord, TransitionError> {
        self.intents
            .find(id)
            .await?
            .ok_or(TransitionError::NotFound(id))
    }

    /// Approves a pending intent for execution, after judging it again as things are now: the
    /// intent of a deactivated agent is never confirmed, and one that breaks the spend policy in
    /// force only when `force` says so.
    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn confirm_intent(
        &self,
        id: IntentId,
        force: bool,
    ) -> Result<Confirmation, ConfirmError> {
        let intent = self
            .intents
            .find(id)
            .await?
            .ok_or(ConfirmError::NotFound(id))?;
        // Only a pending intent can be confirmed: say so before judging it.
        intent.status.apply(IntentEvent::Confirm)?;
        let profile = self
            .store
            .profile(intent.agent_id)
            .await?
            .ok_or(ConfirmError::NotFound(id))?;
        if !profile.agent.is_active {
            return Err(ConfirmError::AgentInactive(id));
        }
        let (limits, allowlist) = profile
            .wallet
            .and_then(|wallet| wallet.spend_policy)
            .map(|policy| (policy.limits, policy.allowlist))
            .unwrap_or_default();
        let held = self
            .intents
            .held_in_window(intent.wallet_id, DAILY_WINDOW)
            .await?;
        // The pending intent holds its own amount already: judge it as if it came now.
        let held_by_others = held.saturating_sub(intent.amount.value());
        let policy_verdict = evaluate_transfer(
            &limits,
            &allowlist,
            &intent.recipient,
            intent.amount,
            held_by_others,
        );
        if let (Err(violation), false) = (policy_verdict, force) {
            return Err(ConfirmError::Policy(violation));
        }
        let intent = self
            .intents
            .transition(id, IntentEvent::Confirm, None)
            .await?;
        Ok(Confirmation {
            intent,
            policy_verdict,
        })
    }

    /// The transactions recorded for an intent, newest first.
    pub async fn intent_attempts(&self, id: IntentId) -> Result<Vec<AttemptRecord>, StoreError> {
        self.intents.attempts(id).await
    }

    /// Refuses a pending intent; its amount no longer counts against the daily limit.
    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn reject_intent(
        &self,
        id: IntentId,
        reason: Option<String>,
    ) -> Result<TransferIntentRecord, TransitionError> {
        let reason = reason.unwrap_or_else(|| "rejected by operator".to_owned());
        self.intents
            .transition(id, IntentEvent::Reject, Some(reason))
            .await
    }

    /// Settles a submitted intent by what the chain says now, for an operator who knows its
    /// nonce was taken outside this service: a receipt of any of its transactions settles it as
    /// the executor would (executed, or failed on a revert); its nonce used with none of them
    /// mined fails it at once, where the executor waits a grace; a nonce still free changes
    /// nothing.
    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn resolve_intent(&self, id: IntentId) -> Result<TransferIntentRecord, ResolveError> {
        let intent = self
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
        let mined = self.chain.mined_nonce(&wallet).await?;
        let settlement = match settlement_by_receipt(self.chain.as_ref(), &transactions).await? {
            Some(settlement) => settlement,
            None if nonce_used(nonce, mined) => nonce_taken_by_another(nonce),
            None => return Err(ResolveError::StillPending { id, nonce, mined }),
        };
        match self.settlement.settle(id, settlement).await {
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
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::{
        AgentKeyHash, AgentRecord, Chain, Custody, EmailAddress, EvmAddress, PhoneNumber,
    };
    use domain::{
        AtomicAmount, IntentStatus, PhoneNumberRecord, SpendLimits, SpendPolicyRecord,
        WalletRecord, U256,
    };
    use mockall::predicate::eq;
    use ports::{
        MockAgentStore, MockChainWriter, MockExecutionQueue, MockInboxProvisioner,
        MockIntentLedger, MockKeyVault, MockNumberProvisioner, MockNumberReleaser,
        MockWalletKeyStore, ProvisionedInbox, ProvisionedNumber, SealedKeyRecord, SealedWalletKey,
    };
    use std::sync::Mutex;

    fn usdc() -> PolicyAsset {
        PolicyAsset::usdc_on_base(
            EvmAddress::parse("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913").expect("valid"),
        )
    }

    fn profile_of(agent: &NewAgent) -> AgentProfile {
        AgentProfile {
            agent: AgentRecord {
                id: agent.id,
                label: agent.label.clone(),
                key_hash: agent.key_hash,
                ..AgentRecord::fixture()
            },
            ..AgentProfile::fixture()
        }
    }

    fn plane(
        store: MockAgentStore,
        inboxes: MockInboxProvisioner,
        numbers: MockNumberProvisioner,
        vault: MockKeyVault,
    ) -> ControlPlane {
        let mut wallet_keys = MockWalletKeyStore::new();
        wallet_keys
            .expect_sealed_keys_after()
            .returning(|_, _| Ok(vec![]));
        ControlPlane::new(
            ControlPlanePorts {
                agents: Arc::new(store),
                wallet_keys: Arc::new(wallet_keys),
                inboxes: Arc::new(inboxes),
                numbers: Arc::new(numbers),
                vault: Arc::new(vault),
                ..idle_ports()
            },
            usdc(),
        )
    }

    /// Ports whose mocks expect nothing, for a test to replace those it uses.
    fn idle_ports() -> ControlPlanePorts {
        ControlPlanePorts {
            agents: Arc::new(MockAgentStore::new()),
            intents: Arc::new(MockIntentLedger::new()),
            wallet_keys: Arc::new(MockWalletKeyStore::new()),
            inboxes: Arc::new(MockInboxProvisioner::new()),
            numbers: Arc::new(MockNumberProvisioner::new()),
            releaser: Arc::new(MockNumberReleaser::new()),
            vault: Arc::new(MockKeyVault::new()),
            chain: Arc::new(MockChainWriter::new()),
            settlement: Arc::new(MockExecutionQueue::new()),
        }
    }

    /// A control plane for decisions on intents.
    fn deciding(store: MockAgentStore, intents: MockIntentLedger) -> ControlPlane {
        ControlPlane::new(
            ControlPlanePorts {
                agents: Arc::new(store),
                intents: Arc::new(intents),
                ..idle_ports()
            },
            usdc(),
        )
    }

    fn request(email: bool, phone: bool, wallet: bool) -> CreateAgent {
        CreateAgent {
            sponsor: Some("acme".into()),
            label: Some(Label::parse("bot").expect("valid")),
            email,
            phone,
            wallet,
        }
    }

    fn number(n: &str) -> ProvisionedNumber {
        ProvisionedNumber {
            number: PhoneNumber::parse(n).expect("valid"),
            country_iso2: Some("US".into()),
            provider: "sandbox".into(),
        }
    }

    #[tokio::test]
    async fn create_stores_only_the_hash_of_the_key_it_returns() {
        let stored: Arc<Mutex<Option<NewAgent>>> = Arc::default();
        let seen = stored.clone();
        let mut store = MockAgentStore::new();
        store.expect_create().times(1).returning(move |agent| {
            *seen.lock().expect("lock") = Some(agent.clone());
            Ok(profile_of(&agent))
        });
        let plane = plane(
            store,
            MockInboxProvisioner::new(),
            MockNumberProvisioner::new(),
            MockKeyVault::new(),
        );
        let issued = plane
            .create_agent(request(false, false, false))
            .await
            .expect("created");
        let stored = stored.lock().expect("lock").clone().expect("stored");
        assert_eq!(stored.key_hash, issued.key.hash());
        assert_eq!(stored.sponsor, "acme");
        assert!(
            stored.email_inbox.is_none()
                && stored.phone_number.is_none()
                && stored.wallet.is_none()
        );
        assert!(!format!("{stored:?}").contains(issued.key.expose()));
    }

    #[tokio::test]
    async fn create_provisions_each_requested_resource_once() {
        let mut inboxes = MockInboxProvisioner::new();
        inboxes.expect_provision_inbox().times(1).returning(|_| {
            Ok(ProvisionedInbox {
                address: EmailAddress::parse("a@inbox.agent-runtime.test").expect("valid"),
                provider: "sandbox".into(),
            })
        });
        let mut numbers = MockNumberProvisioner::new();
        numbers
            .expect_provision_number()
            .times(1)
            .returning(|| Ok(number("+15550100001")));
        let mut vault = MockKeyVault::new();
        vault.expect_create_wallet_key().times(1).returning(|| {
            Ok(SealedWalletKey {
                address: EvmAddress::from_bytes([7; 20]),
                sealed_key: vec![1, 2, 3],
                provider: "local".into(),
                custody: Custody::SelfCustodial,
            })
        });
        let mut store = MockAgentStore::new();
        store
            .expect_create()
            .withf(|agent| {
                let wallet = agent.wallet.as_ref().expect("wallet");
                agent.email_inbox.is_some()
                    && agent.phone_number.is_some()
                    && wallet.sealed_key == vec![1, 2, 3]
                    && wallet.chain == Chain::Base
                    && wallet.policy_asset == usdc()
            })
            .times(1)
            .returning(|agent| Ok(profile_of(&agent)));
        let plane = plane(store, inboxes, numbers, vault);
        plane
            .create_agent(request(true, true, true))
            .await
            .expect("created");
    }

    #[tokio::test]
    async fn a_taken_phone_number_is_drawn_again() {
        let mut numbers = MockNumberProvisioner::new();
        let mut sequence = mockall::Sequence::new();
        numbers
            .expect_provision_number()
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|| Ok(number("+15550100001")));
        numbers
            .expect_provision_number()
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|| Ok(number("+15550100002")));
        let mut store = MockAgentStore::new();
        store
            .expect_create()
            .withf(|a| a.phone_number.as_ref().map(|p| p.number.as_str()) == Some("+15550100001"))
            .returning(|_| Err(StoreError::Conflict(Conflict::PhoneNumber)));
        store
            .expect_create()
            .withf(|a| a.phone_number.as_ref().map(|p| p.number.as_str()) == Some("+15550100002"))
            .returning(|agent| Ok(profile_of(&agent)));
        let plane = plane(
            store,
            MockInboxProvisioner::new(),
            numbers,
            MockKeyVault::new(),
        );
        plane
            .create_agent(request(false, true, false))
            .await
            .expect("created");
    }

    #[tokio::test]
    async fn a_provider_failure_creates_nothing() {
        let mut vault = MockKeyVault::new();
        vault
            .expect_create_wallet_key()
            .returning(|| Err(ProviderError::Unavailable("vault sealed".into())));
        let mut store = MockAgentStore::new();
        store.expect_create().never();
        let plane = plane(
            store,
            MockInboxProvisioner::new(),
            MockNumberProvisioner::new(),
            vault,
        );
        let error = plane
            .create_agent(request(false, false, true))
            .await
            .expect_err("fails");
        assert!(matches!(
            error,
            CreateAgentError::Provisioning {
                resource: "wallet",
                ..
            }
        ));
    }

    #[tokio::test]
    async fn an_empty_sponsor_is_refused() {
        let plane = plane(
            MockAgentStore::new(),
            MockInboxProvisioner::new(),
            MockNumberProvisioner::new(),
            MockKeyVault::new(),
        );
        let mut blank = request(false, false, false);
        blank.sponsor = Some("  ".into());
        assert!(matches!(
            plane.create_agent(blank).await,
            Err(CreateAgentError::EmptySponsor)
        ));
    }

    #[tokio::test]
    async fn an_agent_created_without_a_sponsor_gets_one_of_its_own() {
        let mut store = MockAgentStore::new();
        store
            .expect_create()
            .withf(|agent| agent.sponsor == format!("agent-{}", agent.id))
            .times(2)
            .returning(|agent| Ok(profile_of(&agent)));
        let plane = plane(
            store,
            MockInboxProvisioner::new(),
            MockNumberProvisioner::new(),
            MockKeyVault::new(),
        );
        let mut unnamed = request(false, false, false);
        unnamed.sponsor = None;
        for _ in 0..2 {
            plane.create_agent(unnamed.clone()).await.expect("created");
        }
    }

    #[tokio::test]
    async fn rotation_replaces_the_stored_hash_with_the_new_keys_hash() {
        let id = AgentId(Uuid::now_v7());
        let replaced: Arc<Mutex<Option<AgentKeyHash>>> = Arc::default();
        let seen = replaced.clone();
        let mut store = MockAgentStore::new();
        store
            .expect_replace_key_hash()
            .withf(move |agent, _| *agent == id)
            .times(1)
            .returning(move |_, hash| {
                *seen.lock().expect("lock") = Some(hash);
                Ok(true)
            });
        store.expect_profile().with(eq(id)).returning(move |_| {
            Ok(Some(profile_of(&NewAgent {
                id,
                sponsor: "acme".into(),
                label: None,
                key_hash: AgentKeyHash([0; 32]),
                phone_number: None,
                email_inbox: None,
                wallet: None,
            })))
        });
        let plane = plane(
            store,
            MockInboxProvisioner::new(),
            MockNumberProvisioner::new(),
            MockKeyVault::new(),
        );
        let issued = plane.rotate_key(id).await.expect("rotated");
        assert_eq!(*replaced.lock().expect("lock"), Some(issued.key.hash()));
    }

    #[tokio::test]
    async fn rotating_or_deactivating_an_unknown_agent_is_not_found() {
        let mut store = MockAgentStore::new();
        store.expect_replace_key_hash().returning(|_, _| Ok(false));
        store.expect_deactivate().returning(|_| Ok(false));
        let plane = plane(
            store,
            MockInboxProvisioner::new(),
            MockNumberProvisioner::new(),
            MockKeyVault::new(),
        );
        let id = AgentId(Uuid::now_v7());
        assert!(
            matches!(plane.rotate_key(id).await, Err(AgentLookupError::NotFound(x)) if x == id)
        );
        assert!(
            matches!(plane.deactivate_agent(id).await, Err(AgentLookupError::NotFound(x)) if x == id)
        );
    }

    #[tokio::test]
    async fn a_policy_for_an_agent_without_wallet_says_so() {
        let id = AgentId(Uuid::now_v7());
        let mut store = MockAgentStore::new();
        store.expect_update_policy().returning(|_, _, _| Ok(None));
        store.expect_profile().returning(move |_| {
            Ok(Some(profile_of(&NewAgent {
                id,
                sponsor: "acme".into(),
                label: None,
                key_hash: AgentKeyHash([0; 32]),
                phone_number: None,
                email_inbox: None,
                wallet: None,
            })))
        });
        let plane = plane(
            store,
            MockInboxProvisioner::new(),
            MockNumberProvisioner::new(),
            MockKeyVault::new(),
        );
        assert!(matches!(
            plane.set_policy(id, PolicyChange::default()).await,
            Err(PolicyError::NotProvisioned(NotProvisioned::Wallet))
        ));
    }

    #[tokio::test]
    async fn a_rejection_always_records_a_reason() {
        let mut intents = MockIntentLedger::new();
        intents
            .expect_transition()
            .withf(|_, event, reason| {
                *event == IntentEvent::Reject && reason.as_deref() == Some("rejected by operator")
            })
            .times(1)
            .returning(|id, _, _| Err(TransitionError::NotFound(id)));
        let plane = deciding(MockAgentStore::new(), intents);
        assert!(plane
            .reject_intent(IntentId(Uuid::now_v7()), None)
            .await
            .is_err());
    }

    #[tokio::test]
    async fn a_policy_for_an_unknown_agent_is_not_found() {
        let mut store = MockAgentStore::new();
        store.expect_update_policy().never();
        store.expect_profile().returning(|_| Ok(None));
        let plane = plane(
            store,
            MockInboxProvisioner::new(),
            MockNumberProvisioner::new(),
            MockKeyVault::new(),
        );
        assert!(matches!(
            plane.show_policy(AgentId(Uuid::now_v7())).await,
            Err(PolicyError::AgentNotFound(_))
        ));
    }

    #[tokio::test]
    async fn a_wallet_is_not_sealed_under_a_key_that_does_not_open_the_stored_ones() {
        let mut wallet_keys = MockWalletKeyStore::new();
        wallet_keys
            .expect_sealed_keys_after()
            .with(eq(None), eq(1))
            .returning(|_, _| {
                Ok(vec![SealedKeyRecord {
                    wallet_id: domain::WalletId(Uuid::now_v7()),
                    address: EvmAddress::from_bytes([4; 20]),
                    sealed_key: vec![9],
                }])
            });
        let mut vault = MockKeyVault::new();
        vault
            .expect_reseal_wallet_key()
            .returning(|_, _| Err(ProviderError::Refused("sealed under another key".into())));
        vault.expect_create_wallet_key().never();
        let mut store = MockAgentStore::new();
        store.expect_create().never();
        let plane = ControlPlane::new(
            ControlPlanePorts {
                agents: Arc::new(store),
                intents: Arc::new(MockIntentLedger::new()),
                wallet_keys: Arc::new(wallet_keys),
                inboxes: Arc::new(MockInboxProvisioner::new()),
                numbers: Arc::new(MockNumberProvisioner::new()),
                releaser: Arc::new(MockNumberReleaser::new()),
                vault: Arc::new(vault),
                chain: Arc::new(MockChainWriter::new()),
                settlement: Arc::new(MockExecutionQueue::new()),
            },
            usdc(),
        );
        assert!(matches!(
            plane.create_agent(request(false, false, true)).await,
            Err(CreateAgentError::ForeignMasterKey)
        ));
    }

    /// A pending intent of 25 and the profile of its agent, with a daily limit of `daily`.
    fn pending_with(active: bool, daily: &str) -> (TransferIntentRecord, MockAgentStore) {
        let intent = TransferIntentRecord::fixture();
        let policy = SpendPolicyRecord {
            limits: SpendLimits {
                max_per_tx: None,
                max_daily: Some(AtomicAmount::parse(daily).expect("valid")),
            },
            ..SpendPolicyRecord::fixture()
        };
        let profile = AgentProfile {
            agent: AgentRecord {
                is_active: active,
                ..AgentRecord::fixture()
            },
            wallet: Some(WalletRecord {
                spend_policy: Some(policy),
                ..WalletRecord::fixture()
            }),
            ..AgentProfile::fixture()
        };
        let mut store = MockAgentStore::new();
        store
            .expect_profile()
            .returning(move |_| Ok(Some(profile.clone())));
        (intent, store)
    }

    fn ledger_of(intent: TransferIntentRecord, held: u64, confirms: usize) -> MockIntentLedger {
        let mut intents = MockIntentLedger::new();
        let found = intent.clone();
        intents
            .expect_find()
            .returning(move |_| Ok(Some(found.clone())));
        intents
            .expect_held_in_window()
            .returning(move |_, _| Ok(U256::from(held)));
        intents
            .expect_transition()
            .withf(|_, event, _| *event == IntentEvent::Confirm)
            .times(confirms)
            .returning(move |_, _, _| {
                Ok(TransferIntentRecord {
                    status: IntentStatus::Confirmed,
                    ..intent.clone()
                })
            });
        intents
    }

    #[tokio::test]
    async fn the_intent_of_a_deactivated_agent_is_never_confirmed() {
        let (intent, store) = pending_with(false, "100");
        let id = intent.id;
        let plane = deciding(store, ledger_of(intent, 25, 0));
        for force in [false, true] {
            assert!(matches!(
                plane.confirm_intent(id, force).await,
                Err(ConfirmError::AgentInactive(x)) if x == id
            ));
        }
    }

    #[tokio::test]
    async fn a_confirmation_judges_the_intent_by_the_policy_in_force() {
        // Its own 25 is in the window already: 25 of others plus 25 fit a limit of 50.
        let (intent, store) = pending_with(true, "50");
        let plane = deciding(store, ledger_of(intent.clone(), 50, 1));
        let confirmed = plane
            .confirm_intent(intent.id, false)
            .await
            .expect("within");
        assert_eq!(confirmed.policy_verdict, Ok(()));
        assert_eq!(confirmed.intent.status, IntentStatus::Confirmed);
    }

    #[tokio::test]
    async fn a_confirmation_that_breaks_a_tightened_policy_needs_force() {
        let (intent, store) = pending_with(true, "40");
        let plane = deciding(store, ledger_of(intent.clone(), 50, 1));
        assert!(matches!(
            plane.confirm_intent(intent.id, false).await,
            Err(ConfirmError::Policy(
                PolicyViolation::ExceedsDailyMax { .. }
            ))
        ));
        let forced = plane.confirm_intent(intent.id, true).await.expect("forced");
        assert!(matches!(
            forced.policy_verdict,
            Err(PolicyViolation::ExceedsDailyMax { .. })
        ));
    }

    #[tokio::test]
    async fn deactivating_an_agent_gives_its_number_back_and_a_failed_release_does_not_undo_it() {
        for release in [
            Ok(()),
            Err(ProviderError::Unavailable("twilio down".into())),
        ] {
            let profile = AgentProfile {
                phone_number: Some(PhoneNumberRecord::fixture()),
                ..AgentProfile::fixture()
            };
            let id = profile.agent.id;
            let number = PhoneNumberRecord::fixture().number;
            let mut store = MockAgentStore::new();
            store.expect_deactivate().times(1).returning(|_| Ok(true));
            store
                .expect_profile()
                .returning(move |_| Ok(Some(profile.clone())));
            let mut releaser = MockNumberReleaser::new();
            releaser
                .expect_release_number()
                .withf(move |released| *released == number)
                .times(1)
                .return_once(move |_| release);
            let plane = ControlPlane::new(
                ControlPlanePorts {
                    agents: Arc::new(store),
                    releaser: Arc::new(releaser),
                    ..idle_ports()
                },
                usdc(),
            );
            assert!(plane.deactivate_agent(id).await.is_ok());
        }
    }
    /// A control plane resolving a submitted intent sent as `transactions` (newest first).
    fn resolving(
        intent: &TransferIntentRecord,
        transactions: &[&str],
        chain: MockChainWriter,
        settlement: MockExecutionQueue,
    ) -> ControlPlane {
        let mut intents = MockIntentLedger::new();
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
        ControlPlane::new(
            ControlPlanePorts {
                intents: Arc::new(intents),
                chain: Arc::new(chain),
                settlement: Arc::new(settlement),
                ..idle_ports()
            },
            usdc(),
        )
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
            .returning(|_| Ok(ports::ReceiptStatus::Succeeded));
        let mut settlement = MockExecutionQueue::new();
        settlement
            .expect_settle()
            .with(
                eq(intent.id),
                eq(ports::Settlement::Executed {
                    tx_hash: "0xold".into(),
                }),
            )
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_, _| Ok(intent_in(IntentStatus::Executed)));
        let plane = resolving(&intent, &["0xnew", "0xold"], chain, settlement);
        let resolved = plane.resolve_intent(intent.id).await.expect("resolved");
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
    fn settling_nothing() -> MockExecutionQueue {
        let mut settlement = MockExecutionQueue::new();
        settlement.expect_settle().never();
        settlement
    }

    /// A settlement port expecting one failure whose reason says each of `said`.
    fn expecting_failure(said: &'static [&'static str]) -> MockExecutionQueue {
        let mut settlement = MockExecutionQueue::new();
        settlement
            .expect_settle()
            .withf(move |_, settlement| {
                matches!(settlement, ports::Settlement::Failed(reason)
                    if said.iter().all(|words| reason.contains(words)))
            })
            .times(1)
            .returning(|_, _| Ok(intent_in(IntentStatus::Failed)));
        settlement
    }

    #[tokio::test]
    async fn a_reverted_transaction_fails_the_intent_naming_it() {
        let intent = intent_in(IntentStatus::Submitted);
        let chain = chain_showing(6, ports::ReceiptStatus::Reverted);
        let settlement = expecting_failure(&["0xreverted"]);
        let plane = resolving(&intent, &["0xreverted"], chain, settlement);
        let resolved = plane.resolve_intent(intent.id).await.expect("resolved");
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
        let plane = resolving(&intent, &["0xnew", "0xold"], chain, settlement);
        let resolved = plane.resolve_intent(intent.id).await.expect("resolved");
        assert_eq!(resolved.status, IntentStatus::Failed);
    }

    #[tokio::test]
    async fn a_nonce_still_free_changes_nothing_and_says_so() {
        let intent = intent_in(IntentStatus::Submitted);
        let chain = chain_showing(5, ports::ReceiptStatus::Pending);
        let plane = resolving(&intent, &["0xpending"], chain, settling_nothing());
        let refused = plane.resolve_intent(intent.id).await;
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
            let plane = resolving(&intent, &[], chain, settling_nothing());
            let refused = plane.resolve_intent(intent.id).await;
            assert!(
                matches!(refused, Err(ResolveError::NotSubmitted { status: s, .. }) if s == status),
                "{refused:?}"
            );
        }
    }

    #[tokio::test]
    async fn an_intent_settled_by_the_executor_meanwhile_is_reported_as_it_is() {
        let intent = intent_in(IntentStatus::Submitted);
        let chain = chain_showing(6, ports::ReceiptStatus::Succeeded);
        let mut settlement = MockExecutionQueue::new();
        settlement.expect_settle().returning(|_, _| {
            Err(TransitionError::Refused(TransitionRefused {
                from: IntentStatus::Executed,
                event: IntentEvent::Execute,
            }))
        });
        let plane = resolving(&intent, &["0xmined"], chain, settlement);
        let refused = plane.resolve_intent(intent.id).await;
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
        let plane = resolving(&intent, &["0xsent"], chain, settling_nothing());
        assert!(matches!(
            plane.resolve_intent(intent.id).await,
            Err(ResolveError::Chain(_))
        ));
    }
}
