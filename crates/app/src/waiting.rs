//! What waits share: looking until something is found, woken through the notification hub, and
//! joining a wait already in progress for the same key.

use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use domain::{AgentId, AgentKeyHash};
use futures_util::future::{select, BoxFuture, Either, FutureExt, Shared, WeakShared};
use ports::{revoked_topic, AgentStore, Notifications, StoreError, Timer};
use time::OffsetDateTime;

use crate::agents::Principal;
use crate::codes::WaitError;
use crate::long_lived::{LongLived, LongLivedKind};

/// The topic every wait of this instance also listens to, notified here at shutdown.
pub(crate) const SHUTDOWN_TOPIC: &str = "instance:shutdown";

/// Whether this instance is stopping; stopping wakes every wait, which then ends.
#[derive(Default)]
pub(crate) struct Shutdown(AtomicBool);

impl Shutdown {
    pub(crate) fn begin(&self, notifications: &dyn Notifications) {
        self.0.store(true, Ordering::Release);
        notifications.notify_here(SHUTDOWN_TOPIC);
    }

    pub(crate) fn begun(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

/// The agent a wait is for and the key it authenticated with: the wait ends when that key no
/// longer authenticates (the agent deactivated, the key revoked, rotated or expired), on any
/// instance.
#[derive(Clone)]
pub(crate) struct Waiter {
    agent: AgentId,
    key_hash: AgentKeyHash,
    expires_at: Option<OffsetDateTime>,
    agents: Arc<dyn AgentStore>,
}

impl Waiter {
    pub(crate) fn new(principal: &Principal, agents: Arc<dyn AgentStore>) -> Self {
        Self {
            agent: principal.profile.agent.id,
            key_hash: principal.key.hash,
            expires_at: principal.key.grant.expires_at,
            agents,
        }
    }

    pub(crate) fn agent(&self) -> AgentId {
        self.agent
    }

    /// How long until the key expires, from now; `None` for a key that never does.
    pub(crate) fn expires_in(&self) -> Option<Duration> {
        self.expires_at
            .map(|at| Duration::try_from(at - OffsetDateTime::now_utc()).unwrap_or(Duration::ZERO))
    }

    /// Whether the key still authenticates the agent, read from the database.
    pub(crate) async fn authorized(&self) -> Result<bool, StoreError> {
        if self.expires_in().is_some_and(|left| left.is_zero()) {
            return Ok(false);
        }
        let found = self
            .agents
            .active_profile_by_key_hash(&self.key_hash)
            .await?;
        Ok(found.is_some_and(|(profile, _)| profile.agent.id == self.agent))
    }
}

/// Calls `look` until it finds something, sleeping between looks until `topic` is notified;
/// `TimedOut` once `timeout` has passed (a zero timeout looks once) or the instance is stopping,
/// `Revoked` once the waiter's key no longer authenticates (revoked, or expired before the
/// timeout). Each look comes after its
/// subscription, so nothing published between a look and the sleep is missed; so does the first
/// check of the key, before the first sleep.
pub(crate) async fn look_until_found<T, Look, Looking>(
    notifications: &dyn Notifications,
    timer: &dyn Timer,
    topic: &str,
    timeout: Duration,
    shutdown: &Shutdown,
    waiter: &Waiter,
    mut look: Look,
) -> Result<T, WaitError>
where
    Look: FnMut() -> Looking,
    Looking: Future<Output = Result<Option<T>, StoreError>>,
{
    let expiry = waiter.expires_in().filter(|left| *left < timeout);
    let deadline = Instant::now() + expiry.unwrap_or(timeout);
    let revocations = revoked_topic(waiter.agent);
    let mut stopping = notifications.subscribe(SHUTDOWN_TOPIC);
    let mut revoked = notifications.subscribe(&revocations);
    let mut key_checked = false;
    loop {
        let woken = notifications.subscribe(topic);
        if let Some(found) = look().await? {
            return Ok(found);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() && expiry.is_some() {
            return Err(WaitError::Revoked);
        }
        if left.is_zero() || shutdown.begun() {
            return Err(WaitError::TimedOut);
        }
        if !key_checked {
            if !waiter.authorized().await? {
                return Err(WaitError::Revoked);
            }
            key_checked = true;
        }
        let asleep = select(timer.sleep(left), &mut stopping);
        match select(woken, select(asleep, &mut revoked)).await {
            Either::Left(_) => {}
            Either::Right((Either::Left((Either::Left(_), _)), _)) => {
                return Err(match expiry {
                    Some(_) => WaitError::Revoked,
                    None => WaitError::TimedOut,
                })
            }
            // The hub also wakes every subscription when it reconnects: only a real shutdown
            // ends the wait; otherwise listen for it again and look once more.
            Either::Right((Either::Left((Either::Right(_), _)), _)) => {
                if shutdown.begun() {
                    return Err(WaitError::TimedOut);
                }
                stopping = notifications.subscribe(SHUTDOWN_TOPIC);
            }
            // Likewise a reconnect: the key is read again to tell.
            Either::Right((Either::Right(_), _)) => {
                revoked = notifications.subscribe(&revocations);
                if !waiter.authorized().await? {
                    return Err(WaitError::Revoked);
                }
            }
        }
    }
}

/// Work in progress by key: a caller asking for a key already being worked on shares that work
/// and its result instead of starting its own. Only callers keep the work alive: when the last
/// one leaves (its client hung up), the work is dropped with whatever it held (a database
/// connection mid-query, a provider call), never left parked where no one polls it.
pub(crate) struct Joined<K, T: Clone> {
    running: Mutex<HashMap<K, WeakShared<BoxFuture<'static, T>>>>,
}

impl<K, T: Clone> Default for Joined<K, T> {
    fn default() -> Self {
        Self {
            running: Mutex::new(HashMap::new()),
        }
    }
}

impl<K: Eq + Hash + Clone, T: Clone> Joined<K, T> {
    /// The result of the work for `key`: the running one's, else that of `start()`, shared with
    /// every caller that comes while it runs.
    pub(crate) async fn run(&self, key: K, start: impl FnOnce() -> BoxFuture<'static, T>) -> T {
        let work = {
            let mut running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
            match running.get(&key).and_then(WeakShared::upgrade) {
                Some(work) => work,
                None => {
                    let work = start().shared();
                    if let Some(weak) = work.downgrade() {
                        running.insert(key.clone(), weak);
                    }
                    work
                }
            }
        };
        let caller = Caller {
            joined: self,
            key,
            work: Some(work.clone()),
        };
        let result = work.await;
        drop(caller);
        result
    }

    /// How many keys have work kept for them (for tests: nothing is left behind).
    #[cfg(test)]
    fn kept(&self) -> usize {
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

/// One caller of a joined work, answered or gone: when it leaves last, the work's entry goes.
struct Caller<'a, K: Eq + Hash, T: Clone> {
    joined: &'a Joined<K, T>,
    key: K,
    work: Option<Shared<BoxFuture<'static, T>>>,
}

impl<K: Eq + Hash, T: Clone> Drop for Caller<'_, K, T> {
    fn drop(&mut self) {
        // This caller's hold goes first, so a work no one else holds is dropped here.
        drop(self.work.take());
        let mut running = self
            .joined
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let abandoned = running
            .get(&self.key)
            .is_some_and(|weak| weak.upgrade().is_none());
        if abandoned {
            running.remove(&self.key);
        }
    }
}

/// The waits of one kind on this instance: each holding a place of that kind in the long-lived
/// registry (so capped per agent), joined by request id, and ended together at shutdown.
pub(crate) struct Waits<T: Clone> {
    long_lived: Arc<LongLived>,
    kind: LongLivedKind,
    joined: Joined<(AgentId, String), Result<T, WaitError>>,
    shutdown: Arc<Shutdown>,
}

impl<T: Clone> Waits<T> {
    pub(crate) fn new(long_lived: Arc<LongLived>, kind: LongLivedKind) -> Self {
        Self {
            long_lived,
            kind,
            joined: Joined::default(),
            shutdown: Arc::default(),
        }
    }

    /// Ends every wait at once.
    pub(crate) fn shut_down(&self, notifications: &dyn Notifications) {
        self.shutdown.begin(notifications);
    }

    /// Runs the wait `start` makes, holding one of the agent's places while it runs; a wait with
    /// the request id of one in progress joins it and gets its result, taking a place of its own
    /// too: every waiting request counts against the cap, joined or not.
    pub(crate) async fn run(
        &self,
        agent: AgentId,
        request_id: Option<String>,
        start: impl FnOnce(Arc<Shutdown>) -> BoxFuture<'static, Result<T, WaitError>>,
    ) -> Result<T, WaitError> {
        let _place = self
            .long_lived
            .enter(agent, self.kind)
            .ok_or(WaitError::TooManyWaiters)?;
        let shutdown = self.shutdown.clone();
        match request_id {
            None => start(shutdown).await,
            Some(request_id) => {
                self.joined
                    .run((agent, request_id), move || start(shutdown))
                    .await
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use uuid::Uuid;

    /// Counts its own drops: stands for what a work holds (a pooled connection).
    struct Held(Arc<AtomicUsize>);

    impl Drop for Held {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// A work that holds `Held` and never finishes, as a look parked inside a database call.
    fn parked(released: &Arc<AtomicUsize>) -> impl FnOnce() -> BoxFuture<'static, u32> {
        let held = Held(released.clone());
        move || {
            async move {
                let _held = held;
                std::future::pending::<u32>().await
            }
            .boxed()
        }
    }

    /// Polls `future` once, as a request handler that then loses its client.
    async fn poll_once<F: Future + Unpin>(future: &mut F) {
        let waker = futures_util::task::noop_waker();
        let mut context = std::task::Context::from_waker(&waker);
        assert!(std::pin::Pin::new(future).poll(&mut context).is_pending());
    }

    #[tokio::test]
    async fn work_whose_callers_all_left_is_dropped_with_what_it_held() {
        let joined: Joined<&str, u32> = Joined::default();
        let released = Arc::new(AtomicUsize::new(0));
        let mut first = Box::pin(joined.run("key", parked(&released)));
        let mut second = Box::pin(joined.run("key", || async { 7 }.boxed()));
        poll_once(&mut first).await;
        poll_once(&mut second).await;
        drop(first);
        assert_eq!(released.load(Ordering::SeqCst), 0, "a caller is left");
        assert_eq!(joined.kept(), 1);
        drop(second);
        assert_eq!(released.load(Ordering::SeqCst), 1, "the work was dropped");
        assert_eq!(joined.kept(), 0, "and its entry forgotten");
        let again = joined.run("key", || async { 9 }.boxed()).await;
        assert_eq!(again, 9, "the next caller starts afresh");
        assert_eq!(joined.kept(), 0);
    }

    #[tokio::test]
    async fn callers_that_come_while_work_runs_share_its_result() {
        let joined: Joined<&str, u32> = Joined::default();
        let (release, released) = tokio::sync::oneshot::channel::<u32>();
        let first = joined.run("key", move || {
            async move { released.await.unwrap_or_default() }.boxed()
        });
        let second = joined.run("key", || async { 0 }.boxed());
        let both = futures_util::future::join(first, second);
        let sender = async {
            tokio::task::yield_now().await;
            release.send(5).expect("the work listens");
        };
        let ((first, second), ()) = futures_util::future::join(both, sender).await;
        assert_eq!((first, second), (5, 5));
        assert_eq!(joined.kept(), 0);
    }

    #[tokio::test]
    async fn a_wait_joining_another_by_request_id_takes_a_place_of_its_own() {
        let waits: Waits<u32> = Waits::new(
            LongLived::new(crate::LongLivedCaps {
                code_waits: 2,
                event_streams: 2,
                decision_waits: 2,
                attachment_downloads: 2,
                searches: 1,
                request_body_bytes: 1 << 20,
                live_lists: 1,
            }),
            LongLivedKind::CodeWait,
        );
        let agent = AgentId(Uuid::now_v7());
        let released = Arc::new(AtomicUsize::new(0));
        let start = |released: &Arc<AtomicUsize>| {
            let held = Held(released.clone());
            move |_: Arc<Shutdown>| {
                async move {
                    let _held = held;
                    std::future::pending::<Result<u32, WaitError>>().await
                }
                .boxed()
            }
        };
        let mut first = Box::pin(waits.run(agent, Some("same".into()), start(&released)));
        let mut joiner = Box::pin(waits.run(agent, Some("same".into()), start(&released)));
        poll_once(&mut first).await;
        poll_once(&mut joiner).await;
        let refused = waits
            .run(agent, Some("same".into()), start(&released))
            .now_or_never();
        assert!(matches!(refused, Some(Err(WaitError::TooManyWaiters))));
        let other = waits.run(AgentId(Uuid::now_v7()), None, |_| async { Ok(1) }.boxed());
        assert_eq!(other.await.expect("another agent's place"), 1);
        drop((first, joiner));
        assert_eq!(released.load(Ordering::SeqCst), 3, "every work dropped");
        let freed = waits.run(agent, None, |_| async { Ok(2) }.boxed()).await;
        assert_eq!(freed.expect("places are free again"), 2);
    }
}
