//! The principals (profile and key record) of keys that authenticated, kept in memory so that a request learns its agent
//! without a database round trip (decision 0030).
//!
//! Every change to what a profile holds publishes `AGENT_PROFILES_TOPIC` when it commits, on any
//! instance and by any path (database triggers), and the cache empties when the hub wakes it. The
//! cache is trusted only while the hub listens: a hub that lost its connection may have missed a
//! change, so lookups go to the database until it is back, and its return wakes the cache to
//! empty too. Only keys that authenticated are kept, at most `capacity` of them, so unknown keys
//! cannot grow it; when full, quick_cache lets go first of keys not read again and keeps those
//! in use (decision 0049). An entry older than `max_age` is read again, a bound on staleness
//! should the hub's connection die unnoticed.
//!
//! Emptying follows the hub's wake-up a moment later; a revocation cannot wait for that on every
//! instance, so it passes a barrier (decision 0084). The hub counts the barriers it heard before
//! answering them, and an entry kept under an earlier count is not served: once every hub
//! answered, no instance serves a principal loaded before the revocation committed.

use std::future::Future;
use std::sync::{Arc, PoisonError, RwLock, Weak};
use std::time::{Duration, Instant};

use domain::AgentKeyHash;
use ports::{Notifications, Wakeup, AGENT_PROFILES_TOPIC};
use quick_cache::sync::Cache;

use crate::agents::Principal;

pub struct AuthCache {
    notifications: Arc<dyn Notifications>,
    max_age: Duration,
    /// Counts the times the cache emptied; a load that saw another count may be stale. Inserts
    /// hold it shared and emptying holds it alone, so no insert falls between the count's change
    /// and the emptying.
    generation: RwLock<u64>,
    by_key: Cache<AgentKeyHash, Cached>,
}

#[derive(Clone)]
struct Cached {
    principal: Principal,
    loaded_at: Instant,
    /// The barriers the hub had heard when the load began.
    barriers: u64,
}

/// What the cache and the hub were when a load from the database began.
#[derive(Debug, Clone, Copy)]
pub struct LoadTicket {
    generation: u64,
    barriers: u64,
}

impl AuthCache {
    /// The cache, and the future that empties it on every change: spawn it. It subscribes here,
    /// before any entry can be stored, so no change falls before the first wake-up.
    pub fn start(
        notifications: Arc<dyn Notifications>,
        capacity: usize,
        max_age: Duration,
    ) -> (Arc<Self>, impl Future<Output = ()> + Send) {
        let first = notifications.subscribe(AGENT_PROFILES_TOPIC);
        let cache = Arc::new(Self {
            notifications,
            max_age,
            generation: RwLock::default(),
            by_key: Cache::new(capacity),
        });
        (
            Arc::clone(&cache),
            empty_on_changes(Arc::downgrade(&cache), first),
        )
    }

    /// The cached principal of `key`, when the cache can be trusted and holds a fresh one.
    pub fn get(&self, key: &AgentKeyHash) -> Option<Principal> {
        if !self.notifications.is_listening() {
            return None;
        }
        let cached = self.by_key.get(key)?;
        let fresh = cached.loaded_at.elapsed() < self.max_age
            && cached.barriers == self.notifications.barriers_heard();
        fresh.then_some(cached.principal)
    }

    /// Take before loading from the database, and give back to `insert`.
    pub fn ticket(&self) -> LoadTicket {
        let generation = *self
            .generation
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        LoadTicket {
            generation,
            barriers: self.notifications.barriers_heard(),
        }
    }

    /// Keeps `principal`, unless the cache emptied since `ticket` (the load may predate a change)
    /// or cannot be trusted now. A full cache makes room by letting go of keys not read again.
    pub fn insert(&self, key: AgentKeyHash, principal: Principal, ticket: LoadTicket) {
        if !self.notifications.is_listening() {
            return;
        }
        let generation = self
            .generation
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        if *generation != ticket.generation {
            return;
        }
        let loaded_at = Instant::now();
        self.by_key.insert(
            key,
            Cached {
                principal,
                loaded_at,
                barriers: ticket.barriers,
            },
        );
    }

    /// How many keys are kept.
    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }

    fn empty(&self) {
        let mut generation = self
            .generation
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        *generation += 1;
        self.by_key.clear();
    }
}

/// Empties the cache on every wake-up, subscribing again before emptying so that a change
/// committed meanwhile wakes it once more. Ends when the cache is dropped.
async fn empty_on_changes(cache: Weak<AuthCache>, mut woken: Wakeup) {
    loop {
        woken.await;
        let Some(cache) = cache.upgrade() else {
            return;
        };
        woken = cache.notifications.subscribe(AGENT_PROFILES_TOPIC);
        cache.empty();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::keys::AgentKeyRecord;
    use domain::{AgentId, AgentProfile, AgentRecord};
    use ports::MockNotifications;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use uuid::Uuid;

    fn profile() -> Principal {
        Principal {
            profile: Arc::new(AgentProfile {
                agent: AgentRecord {
                    id: AgentId(Uuid::now_v7()),
                    ..AgentRecord::fixture()
                },
                phone_number: None,
                email_inbox: None,
                wallet: None,
            }),
            key: Arc::new(AgentKeyRecord::fixture(KEY)),
        }
    }

    /// What the tests change of the hub: whether it listens, and the barriers it heard.
    #[derive(Clone, Default)]
    struct HubState {
        deaf: Arc<AtomicBool>,
        barriers: Arc<AtomicU64>,
    }

    fn hub(state: HubState) -> MockNotifications {
        let mut hub = MockNotifications::new();
        hub.expect_subscribe()
            .returning(|_| Box::pin(std::future::pending()));
        let deaf = state.deaf;
        hub.expect_is_listening()
            .returning(move || !deaf.load(Ordering::SeqCst));
        let barriers = state.barriers;
        hub.expect_barriers_heard()
            .returning(move || barriers.load(Ordering::SeqCst));
        hub
    }

    fn new_cache(capacity: usize, max_age: Duration) -> (Arc<AuthCache>, HubState) {
        let state = HubState::default();
        let (cache, _) = AuthCache::start(Arc::new(hub(state.clone())), capacity, max_age);
        (cache, state)
    }

    const KEY: AgentKeyHash = AgentKeyHash([1; 32]);

    #[test]
    fn a_stored_profile_is_served_while_the_hub_listens_and_not_after() {
        let (cache, hub) = new_cache(10, Duration::from_secs(60));
        let stored = profile();
        cache.insert(KEY, stored.clone(), cache.ticket());
        assert_eq!(cache.get(&KEY), Some(stored));
        hub.deaf.store(true, Ordering::SeqCst);
        assert_eq!(cache.get(&KEY), None, "not trusted without the hub");
        cache.insert(AgentKeyHash([2; 32]), profile(), cache.ticket());
        assert_eq!(cache.len(), 1, "nothing stored without the hub");
    }

    #[test]
    fn a_load_that_began_before_the_cache_emptied_is_not_kept() {
        let (cache, _) = new_cache(10, Duration::from_secs(60));
        let ticket = cache.ticket();
        cache.empty();
        cache.insert(KEY, profile(), ticket);
        assert_eq!(cache.get(&KEY), None);
        cache.insert(KEY, profile(), cache.ticket());
        assert!(cache.get(&KEY).is_some());
    }

    #[test]
    fn nothing_loaded_before_a_barrier_the_hub_heard_is_served_after_it() {
        let (cache, hub) = new_cache(10, Duration::from_secs(60));
        cache.insert(KEY, profile(), cache.ticket());
        let other = AgentKeyHash([2; 32]);
        let before_the_barrier = cache.ticket();
        hub.barriers.fetch_add(1, Ordering::SeqCst);
        assert_eq!(cache.get(&KEY), None, "kept before the barrier");
        cache.insert(other, profile(), before_the_barrier);
        assert_eq!(cache.get(&other), None, "loaded before the barrier");
        cache.insert(KEY, profile(), cache.ticket());
        assert!(cache.get(&KEY).is_some(), "loaded after the barrier");
    }

    #[test]
    fn the_cache_holds_at_most_its_capacity_and_old_entries_are_read_again() {
        let (cache, _) = new_cache(3, Duration::from_secs(60));
        for seed in 0..10 {
            cache.insert(AgentKeyHash([seed; 32]), profile(), cache.ticket());
        }
        assert_eq!(cache.len(), 3);
        let (aged, _) = new_cache(3, Duration::ZERO);
        aged.insert(KEY, profile(), aged.ticket());
        assert_eq!(aged.get(&KEY), None);
    }

    #[test]
    fn a_key_in_use_outlives_many_keys_used_once() {
        let (cache, _) = new_cache(40, Duration::from_secs(60));
        cache.insert(KEY, profile(), cache.ticket());
        for seed in 0..4_000u32 {
            let mut once = [0xc0; 32];
            once[..4].copy_from_slice(&seed.to_be_bytes());
            cache.insert(AgentKeyHash(once), profile(), cache.ticket());
            assert!(cache.get(&KEY).is_some(), "after {seed} keys used once");
        }
        assert!(cache.len() <= 40);
    }

    #[tokio::test]
    async fn every_wake_up_empties_the_cache_and_subscribes_again_first() {
        let (wake, woken) = tokio::sync::mpsc::unbounded_channel::<()>();
        let woken = Arc::new(tokio::sync::Mutex::new(woken));
        let mut hub = MockNotifications::new();
        hub.expect_subscribe()
            .withf(|topic| topic == AGENT_PROFILES_TOPIC)
            .returning(move |_| {
                let woken = Arc::clone(&woken);
                Box::pin(async move {
                    woken.lock().await.recv().await;
                })
            });
        hub.expect_is_listening().return_const(true);
        hub.expect_barriers_heard().return_const(0_u64);
        let (cache, follower) = AuthCache::start(Arc::new(hub), 10, Duration::from_secs(60));
        let follower = tokio::spawn(follower);
        for round in 0..3 {
            cache.insert(KEY, profile(), cache.ticket());
            assert_eq!(cache.len(), 1, "round {round}");
            wake.send(()).expect("follower listens");
            while !cache.is_empty() {
                tokio::task::yield_now().await;
            }
        }
        drop(cache);
        wake.send(()).expect("follower listens");
        follower.await.expect("the follower ends with its cache");
    }
}
