//! The operator's administration of agents: creating them with their resources, listing and
//! showing them, deactivating them and rotating their keys.

use std::sync::Arc;

use domain::keys::{AgentKeyRecord, KeyId};
use domain::{Actor, AgentId, AgentKey, AgentProfile, Label, PolicyAsset, WebhookEndpointRecord};
use ports::{
    AgentStore, Conflict, InboxProvisioner, InstanceBarrier, KeyVault, NewAgent, NewEmailInbox,
    NewPhoneNumber, NewWallet, NumberProvisioner, NumberReleaser, ProviderError, StoreError,
    WalletKeyStore,
};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::key_rotation::vault_opens_stored_keys;
use crate::ResealError;

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
    /// The key's record: the agent's first key.
    pub first_key: AgentKeyRecord,
    pub profile: AgentProfile,
    /// The webhook endpoints a rotation disabled: made by the key it replaced.
    pub disabled_webhooks: Vec<WebhookEndpointRecord>,
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
    /// would be under a key nothing else here opens (e.g. the public sandbox key). The way in
    /// says how its operator configures the key.
    #[error("the configured wallet master key does not open the wallets already in this database")]
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
pub enum AgentLookupError {
    #[error("agent {0} not found")]
    NotFound(AgentId),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What the administration of agents works with.
pub struct AgentAdminPorts {
    pub agents: Arc<dyn AgentStore>,
    pub wallet_keys: Arc<dyn WalletKeyStore>,
    pub inboxes: Arc<dyn InboxProvisioner>,
    pub numbers: Arc<dyn NumberProvisioner>,
    /// Gives a deactivated agent's number back to its provider.
    pub releaser: Arc<dyn NumberReleaser>,
    pub vault: Arc<dyn KeyVault>,
    /// Passed after a deactivation or a rotation, as after every revocation.
    pub barrier: Arc<dyn InstanceBarrier>,
}

pub struct AgentAdmin {
    ports: AgentAdminPorts,
    /// The token a new wallet's policy is in.
    policy_asset: PolicyAsset,
}

impl AgentAdmin {
    pub fn new(ports: AgentAdminPorts, policy_asset: PolicyAsset) -> Self {
        Self {
            ports,
            policy_asset,
        }
    }

    /// Creates an agent with the requested resources and returns its key, shown this once;
    /// audited as `actor`'s.
    #[tracing::instrument(level = "debug", skip(self, actor))]
    pub async fn create(
        &self,
        request: CreateAgent,
        actor: &Actor,
    ) -> Result<IssuedKey, CreateAgentError> {
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
        let key_id = KeyId::generate();
        let mut new_agent = NewAgent {
            id,
            sponsor,
            label: request.label,
            key_id,
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
            match self.ports.agents.create(new_agent.clone(), actor).await {
                Ok(profile) => {
                    return Ok(IssuedKey {
                        first_key: AgentKeyRecord::first(
                            id,
                            key_id,
                            key.hash(),
                            profile.agent.created_at,
                        ),
                        key,
                        profile,
                        disabled_webhooks: Vec::new(),
                    })
                }
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
        let inbox = self
            .ports
            .inboxes
            .provision_inbox(id)
            .await
            .map_err(|source| CreateAgentError::Provisioning {
                resource: "email inbox",
                source,
            })?;
        Ok(NewEmailInbox {
            address: inbox.address,
            provider: inbox.provider,
        })
    }

    async fn provision_number(&self) -> Result<NewPhoneNumber, CreateAgentError> {
        let number = self
            .ports
            .numbers
            .provision_number()
            .await
            .map_err(|source| CreateAgentError::Provisioning {
                resource: "phone number",
                source,
            })?;
        Ok(NewPhoneNumber {
            number: number.number,
            country_iso2: number.country_iso2,
            provider: number.provider,
        })
    }

    async fn provision_wallet(&self) -> Result<NewWallet, CreateAgentError> {
        if !vault_opens_stored_keys(self.ports.wallet_keys.as_ref(), self.ports.vault.as_ref())
            .await?
        {
            return Err(CreateAgentError::ForeignMasterKey);
        }
        let key = self
            .ports
            .vault
            .create_wallet_key()
            .await
            .map_err(|source| CreateAgentError::Provisioning {
                resource: "wallet",
                source,
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

    pub async fn list(&self) -> Result<Vec<AgentProfile>, StoreError> {
        self.ports.agents.list().await
    }

    pub async fn show(&self, id: AgentId) -> Result<AgentProfile, AgentLookupError> {
        self.ports
            .agents
            .profile(id)
            .await?
            .ok_or(AgentLookupError::NotFound(id))
    }

    /// Deactivates the agent; its key stops working at once. Deactivating twice is harmless.
    #[tracing::instrument(level = "debug", skip(self, actor))]
    pub async fn deactivate(
        &self,
        id: AgentId,
        actor: &Actor,
    ) -> Result<AgentProfile, AgentLookupError> {
        if !self.ports.agents.deactivate(id, actor).await? {
            return Err(AgentLookupError::NotFound(id));
        }
        crate::barrier::pass_after_revocation(self.ports.barrier.as_ref()).await;
        let profile = self.show(id).await?;
        // The agent is deactivated whatever the provider says; a number it keeps costs money, so
        // a failed release is said loudly for the operator to finish by hand.
        if let Some(phone) = &profile.phone_number {
            if let Err(error) = self.ports.releaser.release_number(&phone.number).await {
                tracing::warn!(%error, number = %phone.number, "could not release the deactivated agent's number at its provider; release it by hand");
            }
        }
        Ok(profile)
    }

    /// Issues a new key for the agent; the old key stops working at once, and so do the webhook
    /// endpoints it made, which the answer names.
    #[tracing::instrument(level = "debug", skip(self, actor))]
    pub async fn rotate_key(
        &self,
        id: AgentId,
        actor: &Actor,
    ) -> Result<IssuedKey, AgentLookupError> {
        let key = crate::generate_agent_key();
        let key_id = KeyId::generate();
        let disabled_webhooks = self
            .ports
            .agents
            .replace_first_key(id, key_id, key.hash(), actor)
            .await?
            .ok_or(AgentLookupError::NotFound(id))?;
        crate::barrier::pass_after_revocation(self.ports.barrier.as_ref()).await;
        let profile = self.show(id).await?;
        Ok(IssuedKey {
            first_key: AgentKeyRecord::first(id, key_id, key.hash(), OffsetDateTime::now_utc()),
            key,
            profile,
            disabled_webhooks,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::PhoneNumberRecord;
    use domain::{AgentKeyHash, Chain, Custody, EmailAddress, EvmAddress, PhoneNumber};
    use mockall::predicate::eq;
    use ports::{
        BarrierPassed, MockAgentStore, MockInboxProvisioner, MockInstanceBarrier, MockKeyVault,
        MockNumberProvisioner, MockNumberReleaser, MockWalletKeyStore, ProvisionedInbox,
        ProvisionedNumber, SealedKeyRecord, SealedWalletKey,
    };
    use std::sync::Mutex;

    use crate::operator::tests::{actor, profile_of, usdc};

    /// Ports whose mocks expect nothing, for a test to replace those it uses.
    fn idle_ports() -> AgentAdminPorts {
        AgentAdminPorts {
            agents: Arc::new(MockAgentStore::new()),
            wallet_keys: Arc::new(MockWalletKeyStore::new()),
            inboxes: Arc::new(MockInboxProvisioner::new()),
            numbers: Arc::new(MockNumberProvisioner::new()),
            releaser: Arc::new(MockNumberReleaser::new()),
            vault: Arc::new(MockKeyVault::new()),
            barrier: Arc::new(answered_barrier()),
        }
    }

    /// A barrier every instance answers.
    fn answered_barrier() -> MockInstanceBarrier {
        let mut barrier = MockInstanceBarrier::new();
        barrier.expect_pass().returning(|_| {
            Ok(BarrierPassed {
                asked: 1,
                answered: 1,
            })
        });
        barrier
    }

    fn admin(
        store: MockAgentStore,
        inboxes: MockInboxProvisioner,
        numbers: MockNumberProvisioner,
        vault: MockKeyVault,
    ) -> AgentAdmin {
        let mut wallet_keys = MockWalletKeyStore::new();
        wallet_keys
            .expect_sealed_keys_after()
            .returning(|_, _| Ok(vec![]));
        AgentAdmin::new(
            AgentAdminPorts {
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
        store.expect_create().times(1).returning(move |agent, _| {
            *seen.lock().expect("lock") = Some(agent.clone());
            Ok(profile_of(&agent))
        });
        let admin = admin(
            store,
            MockInboxProvisioner::new(),
            MockNumberProvisioner::new(),
            MockKeyVault::new(),
        );
        let issued = admin
            .create(request(false, false, false), &actor())
            .await
            .expect("created");
        let stored = stored.lock().expect("lock").clone().expect("stored");
        assert_eq!(stored.key_hash, issued.key.hash());
        assert_eq!(
            (issued.first_key.id, issued.first_key.hash),
            (stored.key_id, stored.key_hash)
        );
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
            .withf(|agent, _| {
                let wallet = agent.wallet.as_ref().expect("wallet");
                agent.email_inbox.is_some()
                    && agent.phone_number.is_some()
                    && wallet.sealed_key == vec![1, 2, 3]
                    && wallet.chain == Chain::Base
                    && wallet.policy_asset == usdc()
            })
            .times(1)
            .returning(|agent, _| Ok(profile_of(&agent)));
        let admin = admin(store, inboxes, numbers, vault);
        admin
            .create(request(true, true, true), &actor())
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
            .withf(|a, _| {
                a.phone_number.as_ref().map(|p| p.number.as_str()) == Some("+15550100001")
            })
            .returning(|_, _| Err(StoreError::Conflict(Conflict::PhoneNumber)));
        store
            .expect_create()
            .withf(|a, _| {
                a.phone_number.as_ref().map(|p| p.number.as_str()) == Some("+15550100002")
            })
            .returning(|agent, _| Ok(profile_of(&agent)));
        let admin = admin(
            store,
            MockInboxProvisioner::new(),
            numbers,
            MockKeyVault::new(),
        );
        admin
            .create(request(false, true, false), &actor())
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
        let admin = admin(
            store,
            MockInboxProvisioner::new(),
            MockNumberProvisioner::new(),
            vault,
        );
        let error = admin
            .create(request(false, false, true), &actor())
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
        let admin = admin(
            MockAgentStore::new(),
            MockInboxProvisioner::new(),
            MockNumberProvisioner::new(),
            MockKeyVault::new(),
        );
        let mut blank = request(false, false, false);
        blank.sponsor = Some("  ".into());
        assert!(matches!(
            admin.create(blank, &actor()).await,
            Err(CreateAgentError::EmptySponsor)
        ));
    }

    #[tokio::test]
    async fn an_agent_created_without_a_sponsor_gets_one_of_its_own() {
        let mut store = MockAgentStore::new();
        store
            .expect_create()
            .withf(|agent, _| agent.sponsor == format!("agent-{}", agent.id))
            .times(2)
            .returning(|agent, _| Ok(profile_of(&agent)));
        let admin = admin(
            store,
            MockInboxProvisioner::new(),
            MockNumberProvisioner::new(),
            MockKeyVault::new(),
        );
        let mut unnamed = request(false, false, false);
        unnamed.sponsor = None;
        for _ in 0..2 {
            admin
                .create(unnamed.clone(), &actor())
                .await
                .expect("created");
        }
    }

    #[tokio::test]
    async fn rotation_replaces_the_stored_hash_and_names_the_endpoints_it_disabled() {
        let id = AgentId(Uuid::now_v7());
        let replaced: Arc<Mutex<Option<AgentKeyHash>>> = Arc::default();
        let seen = replaced.clone();
        let disabled = WebhookEndpointRecord {
            agent_id: id,
            enabled: false,
            disabled_reason: Some(domain::ROTATED_KEY_REASON.into()),
            ..WebhookEndpointRecord::fixture()
        };
        let endpoints = vec![disabled.clone()];
        let mut store = MockAgentStore::new();
        store
            .expect_replace_first_key()
            .withf(move |agent, _, _, _| *agent == id)
            .times(1)
            .returning(move |_, _, hash, _| {
                *seen.lock().expect("lock") = Some(hash);
                Ok(Some(endpoints.clone()))
            });
        store.expect_profile().with(eq(id)).returning(move |_| {
            Ok(Some(profile_of(&NewAgent {
                id,
                sponsor: "acme".into(),
                label: None,
                key_id: KeyId::generate(),
                key_hash: AgentKeyHash([0; 32]),
                phone_number: None,
                email_inbox: None,
                wallet: None,
            })))
        });
        let admin = admin(
            store,
            MockInboxProvisioner::new(),
            MockNumberProvisioner::new(),
            MockKeyVault::new(),
        );
        let issued = admin.rotate_key(id, &actor()).await.expect("rotated");
        assert_eq!(*replaced.lock().expect("lock"), Some(issued.key.hash()));
        assert_eq!(issued.disabled_webhooks, [disabled]);
    }

    #[tokio::test]
    async fn a_rotation_and_a_deactivation_answer_after_their_commit_and_a_barrier() {
        let profile = AgentProfile::fixture();
        let id = profile.agent.id;
        let mut order = mockall::Sequence::new();
        let mut store = MockAgentStore::new();
        let mut barrier = MockInstanceBarrier::new();
        store
            .expect_replace_first_key()
            .times(1)
            .in_sequence(&mut order)
            .returning(|_, _, _, _| Ok(Some(Vec::new())));
        crate::barrier::fixtures::expect_one_answered(&mut barrier, &mut order);
        store
            .expect_deactivate()
            .times(1)
            .in_sequence(&mut order)
            .returning(|_, _| Ok(true));
        crate::barrier::fixtures::expect_one_answered(&mut barrier, &mut order);
        store
            .expect_profile()
            .returning(move |_| Ok(Some(profile.clone())));
        let admin = AgentAdmin::new(
            AgentAdminPorts {
                agents: Arc::new(store),
                barrier: Arc::new(barrier),
                ..idle_ports()
            },
            usdc(),
        );
        admin.rotate_key(id, &actor()).await.expect("rotated");
        admin.deactivate(id, &actor()).await.expect("deactivated");
    }

    #[tokio::test]
    async fn rotating_or_deactivating_an_unknown_agent_is_not_found() {
        let mut store = MockAgentStore::new();
        store
            .expect_replace_first_key()
            .returning(|_, _, _, _| Ok(None));
        store.expect_deactivate().returning(|_, _| Ok(false));
        // Nothing was revoked: no barrier is passed.
        let admin = AgentAdmin::new(
            AgentAdminPorts {
                agents: Arc::new(store),
                barrier: Arc::new(MockInstanceBarrier::new()),
                ..idle_ports()
            },
            usdc(),
        );
        let id = AgentId(Uuid::now_v7());
        assert!(
            matches!(admin.rotate_key(id, &actor()).await, Err(AgentLookupError::NotFound(x)) if x == id)
        );
        assert!(
            matches!(admin.deactivate(id, &actor()).await, Err(AgentLookupError::NotFound(x)) if x == id)
        );
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
        let admin = AgentAdmin::new(
            AgentAdminPorts {
                agents: Arc::new(store),
                wallet_keys: Arc::new(wallet_keys),
                vault: Arc::new(vault),
                ..idle_ports()
            },
            usdc(),
        );
        assert!(matches!(
            admin.create(request(false, false, true), &actor()).await,
            Err(CreateAgentError::ForeignMasterKey)
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
            store
                .expect_deactivate()
                .times(1)
                .returning(|_, _| Ok(true));
            store
                .expect_profile()
                .returning(move |_| Ok(Some(profile.clone())));
            let mut releaser = MockNumberReleaser::new();
            releaser
                .expect_release_number()
                .withf(move |released| *released == number)
                .times(1)
                .return_once(move |_| release);
            let admin = AgentAdmin::new(
                AgentAdminPorts {
                    agents: Arc::new(store),
                    releaser: Arc::new(releaser),
                    ..idle_ports()
                },
                usdc(),
            );
            assert!(admin.deactivate(id, &actor()).await.is_ok());
        }
    }
}
