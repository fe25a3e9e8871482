//! The operator's spend policies: setting and showing the policy of an agent's wallet.

use std::sync::Arc;

use domain::{
    window_usage, Actor, AgentId, PolicyAsset, PolicyChange, PolicyChangeRefused, SpendPolicyRecord,
};
use ports::{AgentStore, PolicyUpdateError, StoreError, WalletUsage};

use crate::{NotProvisioned, PolicyUsage};

#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("agent {0} not found")]
    AgentNotFound(AgentId),
    #[error(transparent)]
    NotProvisioned(#[from] NotProvisioned),
    /// The change would make a policy the domain refuses (too many recipients capped, an
    /// auto-confirm tier without a daily bound): nothing was changed.
    #[error(transparent)]
    Refused(#[from] PolicyChangeRefused),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<PolicyUpdateError> for PolicyError {
    fn from(error: PolicyUpdateError) -> Self {
        match error {
            PolicyUpdateError::Refused(refused) => refused.into(),
            PolicyUpdateError::Store(store) => store.into(),
        }
    }
}

pub struct PolicyAdmin {
    store: Arc<dyn AgentStore>,
    /// Where what each window holds is read.
    usage: Arc<dyn WalletUsage>,
    /// The token the policies are in.
    policy_asset: PolicyAsset,
}

impl PolicyAdmin {
    pub fn new(
        store: Arc<dyn AgentStore>,
        usage: Arc<dyn WalletUsage>,
        policy_asset: PolicyAsset,
    ) -> Self {
        Self {
            store,
            usage,
            policy_asset,
        }
    }

    /// The policy in force for the agent's wallet with what each window it caps holds now and
    /// has left, as admission would count them.
    pub async fn usage(&self, id: AgentId) -> Result<PolicyUsage, PolicyError> {
        let Some((wallet, held)) = self.usage.wallet_and_held(id, None).await? else {
            return Err(self.missing_wallet_reason(id).await);
        };
        let policy = wallet.policy_in_force(&self.policy_asset);
        let windows = window_usage(&policy.rules, &held);
        Ok(PolicyUsage { policy, windows })
    }

    /// Changes the policy of the agent's wallet as `actor`, who the audit log names.
    #[tracing::instrument(level = "debug", skip(self, actor))]
    pub async fn set(
        &self,
        id: AgentId,
        change: PolicyChange,
        actor: &Actor,
    ) -> Result<SpendPolicyRecord, PolicyError> {
        match self
            .store
            .update_policy(id, self.policy_asset.clone(), change, actor)
            .await?
        {
            Some(policy) => Ok(policy),
            None => Err(self.missing_wallet_reason(id).await),
        }
    }

    async fn missing_wallet_reason(&self, id: AgentId) -> PolicyError {
        match self.store.profile(id).await {
            Ok(Some(_)) => NotProvisioned::Wallet.into(),
            Ok(None) => PolicyError::AgentNotFound(id),
            Err(store) => PolicyError::Store(store),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::AgentKeyHash;
    use ports::{MockAgentStore, MockWalletUsage, NewAgent};
    use uuid::Uuid;

    use crate::operator::tests::{actor, profile_of, usdc};

    /// The operator's policies over `store`, with a usage that finds no wallet.
    fn policies(store: MockAgentStore) -> PolicyAdmin {
        let mut usage = MockWalletUsage::new();
        usage.expect_wallet_and_held().returning(|_, _| Ok(None));
        PolicyAdmin::new(Arc::new(store), Arc::new(usage), usdc())
    }

    #[tokio::test]
    async fn a_policy_for_an_agent_without_wallet_says_so() {
        let id = AgentId(Uuid::now_v7());
        let mut store = MockAgentStore::new();
        store
            .expect_update_policy()
            .returning(|_, _, _, _| Ok(None));
        store.expect_profile().returning(move |_| {
            Ok(Some(profile_of(&NewAgent {
                id,
                sponsor: "acme".into(),
                label: None,
                key_id: domain::keys::KeyId::generate(),
                key_hash: AgentKeyHash([0; 32]),
                phone_number: None,
                email_inbox: None,
                wallet: None,
            })))
        });
        let policies = policies(store);
        assert!(matches!(
            policies.set(id, PolicyChange::default(), &actor()).await,
            Err(PolicyError::NotProvisioned(NotProvisioned::Wallet))
        ));
        assert!(matches!(
            policies.usage(id).await,
            Err(PolicyError::NotProvisioned(NotProvisioned::Wallet))
        ));
    }

    #[tokio::test]
    async fn a_policy_for_an_unknown_agent_is_not_found() {
        let mut store = MockAgentStore::new();
        store.expect_update_policy().never();
        store.expect_profile().returning(|_| Ok(None));
        let policies = policies(store);
        assert!(matches!(
            policies.usage(AgentId(Uuid::now_v7())).await,
            Err(PolicyError::AgentNotFound(_))
        ));
    }
}
