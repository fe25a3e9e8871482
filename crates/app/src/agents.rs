//! The runtime side of agents: who is calling, and what they hold.

use std::sync::Arc;

use domain::{AgentId, AgentKey, AgentProfile};
use ports::{AgentStore, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// Missing, malformed, unknown or deactivated key: deliberately one answer for all four,
    /// so a caller learns nothing about which keys exist.
    #[error("invalid agent key")]
    InvalidKey,
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("agent not found")]
    NotFound,
    #[error(transparent)]
    Store(#[from] StoreError),
}

pub struct AgentService {
    store: Arc<dyn AgentStore>,
}

impl AgentService {
    pub fn new(store: Arc<dyn AgentStore>) -> Self {
        Self { store }
    }

    /// The active agent holding `presented_key`.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn authenticate(&self, presented_key: &str) -> Result<AgentId, AuthError> {
        let key = AgentKey::parse(presented_key).map_err(|_| AuthError::InvalidKey)?;
        let agent = self
            .store
            .find_active_by_key_hash(&key.hash())
            .await?
            .ok_or(AuthError::InvalidKey)?;
        Ok(agent.id)
    }

    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn profile(&self, id: AgentId) -> Result<AgentProfile, ProfileError> {
        self.store.profile(id).await?.ok_or(ProfileError::NotFound)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::{AgentKeyHash, AgentRecord};
    use mockall::predicate::eq;
    use ports::MockAgentStore;
    use uuid::Uuid;

    fn record(key: &AgentKey) -> AgentRecord {
        AgentRecord {
            id: AgentId(Uuid::now_v7()),
            key_hash: key.hash(),
            ..AgentRecord::fixture()
        }
    }

    #[tokio::test]
    async fn a_known_active_key_authenticates_by_its_hash() {
        let key = crate::generate_agent_key();
        let agent = record(&key);
        let id = agent.id;
        let mut store = MockAgentStore::new();
        store
            .expect_find_active_by_key_hash()
            .with(eq(key.hash()))
            .times(1)
            .return_once(move |_| Ok(Some(agent)));
        let service = AgentService::new(Arc::new(store));
        assert_eq!(service.authenticate(key.expose()).await.ok(), Some(id));
    }

    #[tokio::test]
    async fn a_malformed_key_is_refused_without_touching_the_store() {
        let mut store = MockAgentStore::new();
        store.expect_find_active_by_key_hash().never();
        let service = AgentService::new(Arc::new(store));
        for presented in ["", "ark_short", "Bearer ark_x", &"a".repeat(47)] {
            assert!(matches!(
                service.authenticate(presented).await,
                Err(AuthError::InvalidKey)
            ));
        }
    }

    #[tokio::test]
    async fn an_unknown_or_deactivated_key_is_refused() {
        let mut store = MockAgentStore::new();
        store
            .expect_find_active_by_key_hash()
            .returning(|_: &AgentKeyHash| Ok(None));
        let service = AgentService::new(Arc::new(store));
        let key = crate::generate_agent_key();
        assert!(matches!(
            service.authenticate(key.expose()).await,
            Err(AuthError::InvalidKey)
        ));
    }

    #[tokio::test]
    async fn a_store_outage_is_not_mistaken_for_a_bad_key() {
        let mut store = MockAgentStore::new();
        store
            .expect_find_active_by_key_hash()
            .returning(|_| Err(StoreError::Unavailable("down".into())));
        let service = AgentService::new(Arc::new(store));
        let key = crate::generate_agent_key();
        assert!(matches!(
            service.authenticate(key.expose()).await,
            Err(AuthError::Store(StoreError::Unavailable(_)))
        ));
    }

    #[tokio::test]
    async fn profile_of_a_missing_agent_is_not_found() {
        let mut store = MockAgentStore::new();
        store.expect_profile().returning(|_| Ok(None));
        let service = AgentService::new(Arc::new(store));
        assert!(matches!(
            service.profile(AgentId(Uuid::now_v7())).await,
            Err(ProfileError::NotFound)
        ));
    }
}
