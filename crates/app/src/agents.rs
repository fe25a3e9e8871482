//! The runtime side of agents: who is calling, and what they hold.

use std::sync::Arc;

use domain::{AgentKey, AgentProfile};
use ports::{AgentStore, StoreError};

use crate::auth_cache::AuthCache;

#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// Missing, malformed, unknown or deactivated key: deliberately one answer for all four,
    /// so a caller learns nothing about which keys exist.
    #[error("invalid agent key")]
    InvalidKey,
    #[error(transparent)]
    Store(#[from] StoreError),
}

pub struct AgentService {
    store: Arc<dyn AgentStore>,
    cache: Option<Arc<AuthCache>>,
}

impl AgentService {
    pub fn new(store: Arc<dyn AgentStore>) -> Self {
        Self { store, cache: None }
    }

    /// Keeps the profiles of keys that authenticated in `cache`.
    pub fn with_cache(self, cache: Arc<AuthCache>) -> Self {
        Self {
            cache: Some(cache),
            ..self
        }
    }

    /// The profile of the active agent holding `presented_key`: from the cache when it holds
    /// it, else from the store (and then cached).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn authenticate(&self, presented_key: &str) -> Result<Arc<AgentProfile>, AuthError> {
        let key = AgentKey::parse(presented_key).map_err(|_| AuthError::InvalidKey)?;
        let hash = key.hash();
        if let Some(profile) = self.cache.as_ref().and_then(|cache| cache.get(&hash)) {
            return Ok(profile);
        }
        let ticket = self.cache.as_ref().map(|cache| cache.ticket());
        let profile = Arc::new(
            self.store
                .active_profile_by_key_hash(&hash)
                .await?
                .ok_or(AuthError::InvalidKey)?,
        );
        if let (Some(cache), Some(ticket)) = (&self.cache, ticket) {
            cache.insert(hash, Arc::clone(&profile), ticket);
        }
        Ok(profile)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::{AgentId, AgentKeyHash, AgentRecord};
    use mockall::predicate::eq;
    use ports::{MockAgentStore, MockNotifications};
    use std::time::Duration;
    use uuid::Uuid;

    fn profile(key: &AgentKey) -> AgentProfile {
        AgentProfile {
            agent: AgentRecord {
                id: AgentId(Uuid::now_v7()),
                key_hash: key.hash(),
                ..AgentRecord::fixture()
            },
            phone_number: None,
            email_inbox: None,
            wallet: None,
        }
    }

    fn cached(store: MockAgentStore, listening: bool) -> AgentService {
        let mut hub = MockNotifications::new();
        hub.expect_subscribe()
            .returning(|_| Box::pin(std::future::pending()));
        hub.expect_is_listening().return_const(listening);
        let (cache, _) = AuthCache::start(Arc::new(hub), 100, Duration::from_secs(60));
        AgentService::new(Arc::new(store)).with_cache(cache)
    }

    #[tokio::test]
    async fn a_known_active_key_authenticates_by_its_hash() {
        let key = crate::generate_agent_key();
        let agent = profile(&key);
        let id = agent.agent.id;
        let mut store = MockAgentStore::new();
        store
            .expect_active_profile_by_key_hash()
            .with(eq(key.hash()))
            .times(1)
            .return_once(move |_| Ok(Some(agent)));
        let service = AgentService::new(Arc::new(store));
        assert_eq!(
            service
                .authenticate(key.expose())
                .await
                .ok()
                .map(|profile| profile.agent.id),
            Some(id)
        );
    }

    #[tokio::test]
    async fn a_cached_key_authenticates_without_the_store() {
        let key = crate::generate_agent_key();
        let agent = profile(&key);
        let mut store = MockAgentStore::new();
        store
            .expect_active_profile_by_key_hash()
            .times(1)
            .return_once(move |_| Ok(Some(agent)));
        let service = cached(store, true);
        let first = service.authenticate(key.expose()).await.expect("known");
        let again = service.authenticate(key.expose()).await.expect("cached");
        assert_eq!(first, again);
    }

    #[tokio::test]
    async fn without_the_hub_every_key_goes_to_the_store() {
        let key = crate::generate_agent_key();
        let agent = profile(&key);
        let mut store = MockAgentStore::new();
        store
            .expect_active_profile_by_key_hash()
            .times(2)
            .returning(move |_| Ok(Some(agent.clone())));
        let service = cached(store, false);
        for _ in 0..2 {
            service.authenticate(key.expose()).await.expect("known");
        }
    }

    #[tokio::test]
    async fn unknown_keys_are_asked_of_the_store_every_time_and_never_kept() {
        let mut store = MockAgentStore::new();
        store
            .expect_active_profile_by_key_hash()
            .times(3)
            .returning(|_: &AgentKeyHash| Ok(None));
        let service = cached(store, true);
        let key = crate::generate_agent_key();
        for _ in 0..3 {
            assert!(matches!(
                service.authenticate(key.expose()).await,
                Err(AuthError::InvalidKey)
            ));
        }
        assert!(service.cache.as_ref().is_some_and(|cache| cache.is_empty()));
    }

    #[tokio::test]
    async fn a_malformed_key_is_refused_without_touching_the_store() {
        let mut store = MockAgentStore::new();
        store.expect_active_profile_by_key_hash().never();
        let service = cached(store, true);
        for presented in ["", "ark_short", "Bearer ark_x", &"a".repeat(47)] {
            assert!(matches!(
                service.authenticate(presented).await,
                Err(AuthError::InvalidKey)
            ));
        }
    }

    #[tokio::test]
    async fn a_store_outage_is_not_mistaken_for_a_bad_key() {
        let mut store = MockAgentStore::new();
        store
            .expect_active_profile_by_key_hash()
            .returning(|_| Err(StoreError::Unavailable("down".into())));
        let service = cached(store, true);
        let key = crate::generate_agent_key();
        assert!(matches!(
            service.authenticate(key.expose()).await,
            Err(AuthError::Store(StoreError::Unavailable(_)))
        ));
    }
}
