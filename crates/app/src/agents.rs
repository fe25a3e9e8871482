//! The runtime side of agents: who is calling, with which key, and what they hold.

use std::sync::Arc;

use domain::keys::{AgentKeyRecord, KeyId};
use domain::{AgentKey, AgentProfile};
use ports::{AgentStore, KeyStore, StoreError};
use quick_cache::sync::Cache;
use time::OffsetDateTime;

use crate::auth_cache::AuthCache;

#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// Missing, malformed, unknown, revoked or deactivated key: deliberately one answer for all,
    /// so a caller learns nothing about which keys exist.
    #[error("invalid agent key")]
    InvalidKey,
    /// The key authenticated until its expiry, which has passed: only its holder can know it.
    #[error("the agent key expired at {0}")]
    Expired(OffsetDateTime),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Who a request acts as: the agent's profile and the key it presented. Both are shared, read
/// once per request (or from the cache).
#[derive(Debug, Clone, PartialEq)]
pub struct Principal {
    pub profile: Arc<AgentProfile>,
    pub key: Arc<AgentKeyRecord>,
}

/// Keys whose use this minute was recorded, per instance: a key in use costs one write a minute.
const USES_REMEMBERED: usize = 100_000;

pub struct AgentService {
    store: Arc<dyn AgentStore>,
    keys: Arc<dyn KeyStore>,
    cache: Option<Arc<AuthCache>>,
    /// The minute (Unix time / 60) each key was last recorded as used in.
    used_in_minute: Cache<KeyId, i64>,
}

impl AgentService {
    pub fn new(store: Arc<dyn AgentStore>, keys: Arc<dyn KeyStore>) -> Self {
        Self {
            store,
            keys,
            cache: None,
            used_in_minute: Cache::new(USES_REMEMBERED),
        }
    }

    /// Keeps the principals of keys that authenticated in `cache`.
    pub fn with_cache(self, cache: Arc<AuthCache>) -> Self {
        Self {
            cache: Some(cache),
            ..self
        }
    }

    /// The principal of the active agent holding `presented_key`, unrevoked and unexpired: from
    /// the cache when it holds it, else from the store (and then cached). Records the key's use,
    /// to the minute.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn authenticate(&self, presented_key: &str) -> Result<Principal, AuthError> {
        let key = AgentKey::parse(presented_key).map_err(|_| AuthError::InvalidKey)?;
        let hash = key.hash();
        let principal = match self.cache.as_ref().and_then(|cache| cache.get(&hash)) {
            Some(principal) => principal,
            None => {
                let ticket = self.cache.as_ref().map(|cache| cache.ticket());
                let (profile, key) = self
                    .store
                    .active_profile_by_key_hash(&hash)
                    .await?
                    .ok_or(AuthError::InvalidKey)?;
                let principal = Principal {
                    profile: Arc::new(profile),
                    key: Arc::new(key),
                };
                if let (Some(cache), Some(ticket)) = (&self.cache, ticket) {
                    cache.insert(hash, principal.clone(), ticket);
                }
                principal
            }
        };
        let now = OffsetDateTime::now_utc();
        if let Some(expiry) = principal.key.grant.expires_at.filter(|at| *at <= now) {
            return Err(AuthError::Expired(expiry));
        }
        self.record_use(principal.key.id, now).await;
        Ok(principal)
    }

    /// Records that `key` was used at `now`, once a minute per key and instance: one request a
    /// minute waits for one indexed update. A failure only leaves `last_used_at` older, never
    /// fails the request.
    async fn record_use(&self, key: KeyId, now: OffsetDateTime) {
        let minute = now.unix_timestamp().div_euclid(60);
        if self.used_in_minute.get(&key) == Some(minute) {
            return;
        }
        self.used_in_minute.insert(key, minute);
        if let Err(error) = self.keys.touch(key).await {
            tracing::debug!(%error, key_id = %key, "could not record the key's use");
        }
    }
}

/// The fixture agent's first key beside `profile`, as the store finds them and a request holds
/// them, for the tests of the use cases.
#[cfg(test)]
pub(crate) mod fixtures {
    use super::*;
    use domain::AgentKeyHash;

    pub(crate) fn first_key() -> AgentKeyRecord {
        AgentKeyRecord::fixture(AgentKeyHash([9; 32]))
    }

    pub(crate) fn found(profile: AgentProfile) -> (AgentProfile, AgentKeyRecord) {
        (profile, first_key())
    }

    pub(crate) fn principal(profile: AgentProfile) -> Principal {
        Principal {
            profile: Arc::new(profile),
            key: Arc::new(first_key()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::{AgentId, AgentKeyHash, AgentRecord};
    use mockall::predicate::eq;
    use ports::{MockAgentStore, MockKeyStore, MockNotifications};
    use std::time::Duration;
    use uuid::Uuid;

    fn found(key: &AgentKey) -> (AgentProfile, AgentKeyRecord) {
        let agent = AgentRecord {
            id: AgentId(Uuid::now_v7()),
            ..AgentRecord::fixture()
        };
        let record = AgentKeyRecord {
            agent_id: agent.id,
            ..AgentKeyRecord::fixture(key.hash())
        };
        let profile = AgentProfile {
            agent,
            phone_number: None,
            email_inbox: None,
            wallet: None,
        };
        (profile, record)
    }

    /// Keys whose every use is recorded without a word.
    fn quiet_keys() -> Arc<MockKeyStore> {
        let mut keys = MockKeyStore::new();
        keys.expect_touch().returning(|_| Ok(()));
        Arc::new(keys)
    }

    fn cached(store: MockAgentStore, listening: bool) -> AgentService {
        let mut hub = MockNotifications::new();
        hub.expect_subscribe()
            .returning(|_| Box::pin(std::future::pending()));
        hub.expect_is_listening().return_const(listening);
        hub.expect_barriers_heard().return_const(0_u64);
        let (cache, _) = AuthCache::start(Arc::new(hub), 100, Duration::from_secs(60));
        AgentService::new(Arc::new(store), quiet_keys()).with_cache(cache)
    }

    #[tokio::test]
    async fn a_known_active_key_authenticates_by_its_hash_with_its_record() {
        let key = crate::generate_agent_key();
        let (profile, record) = found(&key);
        let id = profile.agent.id;
        let mut store = MockAgentStore::new();
        store
            .expect_active_profile_by_key_hash()
            .with(eq(key.hash()))
            .times(1)
            .return_once(move |_| Ok(Some((profile, record))));
        let service = AgentService::new(Arc::new(store), quiet_keys());
        let principal = service.authenticate(key.expose()).await.expect("known");
        assert_eq!(principal.profile.agent.id, id);
        assert_eq!(principal.key.hash, key.hash());
    }

    #[tokio::test]
    async fn an_expired_key_is_refused_saying_when_it_expired_even_from_the_cache() {
        let key = crate::generate_agent_key();
        let (profile, mut record) = found(&key);
        let expiry = OffsetDateTime::now_utc() - time::Duration::seconds(1);
        record.grant.expires_at = Some(expiry);
        let mut store = MockAgentStore::new();
        store
            .expect_active_profile_by_key_hash()
            .times(1)
            .return_once(move |_| Ok(Some((profile, record))));
        let service = cached(store, true);
        for _ in 0..2 {
            assert!(matches!(
                service.authenticate(key.expose()).await,
                Err(AuthError::Expired(at)) if at == expiry
            ));
        }
    }

    #[tokio::test]
    async fn a_keys_use_is_recorded_once_a_minute() {
        let key = crate::generate_agent_key();
        let (profile, record) = found(&key);
        let key_id = record.id;
        let mut store = MockAgentStore::new();
        store
            .expect_active_profile_by_key_hash()
            .returning(move |_| Ok(Some((profile.clone(), record.clone()))));
        let mut keys = MockKeyStore::new();
        keys.expect_touch()
            .with(eq(key_id))
            .times(1)
            .returning(|_| Ok(()));
        let service = AgentService::new(Arc::new(store), Arc::new(keys));
        let now = OffsetDateTime::now_utc();
        let minute_start = now.replace_second(0).expect("valid").replace_nanosecond(0);
        let minute_start = minute_start.expect("valid");
        for second in [0, 20, 59] {
            service
                .record_use(key_id, minute_start + time::Duration::seconds(second))
                .await;
        }
    }

    #[tokio::test]
    async fn a_cached_key_authenticates_without_the_store() {
        let key = crate::generate_agent_key();
        let (profile, record) = found(&key);
        let mut store = MockAgentStore::new();
        store
            .expect_active_profile_by_key_hash()
            .times(1)
            .return_once(move |_| Ok(Some((profile, record))));
        let service = cached(store, true);
        let first = service.authenticate(key.expose()).await.expect("known");
        let again = service.authenticate(key.expose()).await.expect("cached");
        assert_eq!(first, again);
    }

    #[tokio::test]
    async fn without_the_hub_every_key_goes_to_the_store() {
        let key = crate::generate_agent_key();
        let found = found(&key);
        let mut store = MockAgentStore::new();
        store
            .expect_active_profile_by_key_hash()
            .times(2)
            .returning(move |_| Ok(Some(found.clone())));
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
