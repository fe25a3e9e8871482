//! What waits share: looking until something is found, woken through the notification hub, and
//! joining a wait already in progress for the same key.

use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use domain::AgentId;
use futures_util::future::{select, BoxFuture, Either, FutureExt, Shared};
use ports::{Notifications, Timer};

use crate::in_flight::InFlight;
use crate::sms::WaitError;

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

    fn begun(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

/// Calls `look` until it finds something, sleeping between looks until `topic` is notified;
/// `None` once `timeout` has passed (a zero timeout looks once) or the instance is stopping. Each
/// look comes after its subscription, so nothing published between a look and the sleep is
/// missed.
pub(crate) async fn look_until_found<T, E, Look, Looking>(
    notifications: &dyn Notifications,
    timer: &dyn Timer,
    topic: &str,
    timeout: Duration,
    shutdown: &Shutdown,
    mut look: Look,
) -> Result<Option<T>, E>
where
    Look: FnMut() -> Looking,
    Looking: Future<Output = Result<Option<T>, E>>,
{
    let deadline = Instant::now() + timeout;
    let mut stopping = notifications.subscribe(SHUTDOWN_TOPIC);
    loop {
        let woken = notifications.subscribe(topic);
        if let Some(found) = look().await? {
            return Ok(Some(found));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || shutdown.begun() {
            return Ok(None);
        }
        match select(woken, select(timer.sleep(left), &mut stopping)).await {
            Either::Left(_) => {}
            Either::Right((Either::Left(_), _)) => return Ok(None),
            // The hub also wakes every subscription when it reconnects: only a real shutdown
            // ends the wait; otherwise listen for it again and look once more.
            Either::Right((Either::Right(_), _)) => {
                if shutdown.begun() {
                    return Ok(None);
                }
                stopping = notifications.subscribe(SHUTDOWN_TOPIC);
            }
        }
    }
}

/// Work in progress by key: a caller asking for a key already being worked on shares that work
/// and its result instead of starting its own.
pub(crate) struct Joined<K, T: Clone> {
    running: Mutex<HashMap<K, Shared<BoxFuture<'static, T>>>>,
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
        let shared = {
            let mut running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
            running
                .entry(key.clone())
                .or_insert_with(|| start().shared())
                .clone()
        };
        let result = shared.clone().await;
        let mut running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        if running
            .get(&key)
            .is_some_and(|current| current.ptr_eq(&shared))
        {
            running.remove(&key);
        }
        result
    }

    /// Whether work for `key` is running.
    pub(crate) fn is_running(&self, key: &K) -> bool {
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains_key(key)
    }
}

/// The waits of one kind on this instance: capped per agent, joined by request id, and ended
/// together at shutdown.
pub(crate) struct Waits<T: Clone> {
    per_agent: usize,
    in_progress: InFlight,
    joined: Joined<(AgentId, String), Result<T, WaitError>>,
    shutdown: Arc<Shutdown>,
}

impl<T: Clone> Waits<T> {
    pub(crate) fn new(per_agent: usize) -> Self {
        Self {
            per_agent,
            in_progress: InFlight::default(),
            joined: Joined::default(),
            shutdown: Arc::default(),
        }
    }

    /// Ends every wait at once.
    pub(crate) fn shut_down(&self, notifications: &dyn Notifications) {
        self.shutdown.begin(notifications);
    }

    /// Runs the wait `start` makes, holding one of the agent's places while it runs; a wait with
    /// the request id of one in progress joins it instead, taking no place, and gets its result.
    pub(crate) async fn run(
        &self,
        agent: AgentId,
        request_id: Option<String>,
        start: impl FnOnce(Arc<Shutdown>) -> BoxFuture<'static, Result<T, WaitError>>,
    ) -> Result<T, WaitError> {
        let place = || {
            self.in_progress
                .enter(agent, self.per_agent)
                .ok_or(WaitError::TooManyWaiters)
        };
        let shutdown = self.shutdown.clone();
        let Some(request_id) = request_id else {
            let _place = place()?;
            return start(shutdown).await;
        };
        let key = (agent, request_id);
        let _place = match self.joined.is_running(&key) {
            true => None,
            false => Some(place()?),
        };
        self.joined.run(key, move || start(shutdown)).await
    }
}
