//! Wake-ups across instances: a change committed on any instance reaches the waiters of every
//! instance, without a database connection per waiter.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use async_trait::async_trait;

use crate::StoreError;

/// Resolves when its topic is notified on any instance, or when the hub lost its connection and
/// got it back (notifications may have been missed meanwhile: whoever waits should look again).
pub type Wakeup = Pin<Box<dyn Future<Output = ()> + Send>>;

#[cfg_attr(feature = "mock", mockall::automock)]
pub trait Notifications: Send + Sync {
    /// Registers at once: a notification published after this call wakes the returned future
    /// however late it is polled. Subscribe before looking, and no wake-up falls between the look
    /// and the wait.
    fn subscribe(&self, topic: &str) -> Wakeup;

    /// `subscribe`, with where the topic stands as it subscribes: a number that moves whenever
    /// the topic is notified or the hub reconnects, and never comes back to an earlier value.
    /// A look made after this call sees every change published before the number it returns;
    /// `None` when the hub cannot tell.
    fn subscribe_counted(&self, topic: &str) -> (Option<u64>, Wakeup) {
        (None, self.subscribe(topic))
    }

    /// Wakes this instance's waiters of `topic` at once, without going through the database:
    /// e.g. every wait at shutdown.
    fn notify_here(&self, topic: &str);

    /// Whether the hub is listening now; while it is not, a missing wake-up proves nothing.
    fn is_listening(&self) -> bool;

    /// How many times the hub's listening connection was made: once at start, then once per
    /// reconnection (after a failover, say), each also logged; for `/metrics`.
    fn connections_made(&self) -> u64;

    /// How many barriers (`InstanceBarrier::pass`, on any instance) this hub has heard. It moves
    /// before the hub answers one, after every notification committed before it was delivered
    /// here: what was kept in memory under an earlier count may predate any of them.
    fn barriers_heard(&self) -> u64;
}

/// A rendezvous of every instance's hub, for a change that must be seen everywhere before it is
/// answered: a key's revocation (decision 0084).
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait InstanceBarrier: Send + Sync {
    /// Sends a barrier to the hub of every instance listening now, and returns when each has
    /// answered it (each hears notifications in the order they committed, so each has heard
    /// every change committed before this call) or `within` passed.
    async fn pass(&self, within: Duration) -> Result<BarrierPassed, StoreError>;
}

/// How many hubs a barrier was sent to, and how many answered it in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BarrierPassed {
    pub asked: usize,
    pub answered: usize,
}

impl BarrierPassed {
    pub fn by_all(&self) -> bool {
        self.answered == self.asked
    }
}

/// Sleeps, for use cases that wait without an async runtime of their own.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait Timer: Send + Sync {
    fn sleep(&self, duration: std::time::Duration) -> Wakeup;
}

/// The topic published on commit of every change to what an agent profile holds (the agent, its
/// key, number, inbox, wallet or spend policy), by database triggers, whichever path changes it.
pub const AGENT_PROFILES_TOPIC: &str = "agent-profiles";

/// The topic published on commit when an agent's key stops authenticating it (the agent
/// deactivated, its key rotated), by a database trigger: its waits end.
pub fn revoked_topic(agent: domain::AgentId) -> String {
    format!("revoked:{agent}")
}
