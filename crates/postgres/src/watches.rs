//! Which agents' events something on this instance watches (decision 0080): an event notifies
//! `events:<agent>` only while a watch of its agent, or of every agent, is registered in the
//! database (migration 000033). A subscription to `events:<agent>` (a stream, a wait) or to
//! `events:*` (the console's live list) holds a watch for as long as it lives (and a little
//! longer); the hub registers the first watch of each on a connection of its own, renews them all
//! while they are held, and wakes the topic once a registration is written, so a watcher that
//! looked before it was reads again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_postgres::Client;
use uuid::Uuid;

/// How long a registered watch lasts without being renewed: a stopped instance leaves its
/// agents watched (notified for nothing) no longer.
pub(crate) const WATCH_LEASE: Duration = Duration::from_secs(60);

/// How often the watches held are renewed, well within their lease.
pub(crate) const RENEW_EVERY: Duration = Duration::from_secs(15);

/// How long a watch of every agent waits for the transactions that read the old one; past it,
/// the registration is tried again rather than holding every event's commit behind it.
const EVERY_AGENT_LOCK_TIMEOUT: &str = "2s";

/// What a subscription watches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Watched {
    Agent(Uuid),
    EveryAgent,
}

impl Watched {
    /// What a topic watches: `events:<agent>` one agent's events, `events:*` every agent's;
    /// any other topic nothing.
    pub(crate) fn of_topic(topic: &str) -> Option<Self> {
        match topic.strip_prefix("events:")? {
            "*" => Some(Self::EveryAgent),
            agent => Uuid::parse_str(agent).ok().map(Self::Agent),
        }
    }

    /// The topic woken once the watch is registered.
    pub(crate) fn topic(self) -> String {
        match self {
            Self::Agent(agent) => format!("events:{agent}"),
            Self::EveryAgent => "events:*".to_owned(),
        }
    }
}

/// The watches this instance has, each with the number of subscriptions holding it. A watch
/// nothing holds lingers until the next renewal, so a watcher that subscribes again after each
/// wake-up (a stream's follower) finds it still registered, and asks for nothing.
pub(crate) struct Watches {
    held: Mutex<HashMap<Watched, usize>>,
    /// Watches newly held, for the hub to register.
    asked: mpsc::UnboundedSender<Watched>,
}

/// One subscription's hold on a watch; dropping it lets the watch go once no other holds it.
pub(crate) struct WatchHold {
    watches: Arc<Watches>,
    watched: Watched,
}

impl Watches {
    pub(crate) fn new() -> (Arc<Self>, mpsc::UnboundedReceiver<Watched>) {
        let (asked, registrations) = mpsc::unbounded_channel();
        let watches = Arc::new(Self {
            held: Mutex::default(),
            asked,
        });
        (watches, registrations)
    }

    /// Holds `watched` until the hold is dropped; a watch this instance does not have yet asks
    /// for its registration.
    pub(crate) fn hold(self: &Arc<Self>, watched: Watched) -> WatchHold {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        let holders = held.entry(watched).or_insert_with(|| {
            // The receiver lives as long as the hub; without it nothing is registered anyway.
            let _ = self.asked.send(watched);
            0
        });
        *holders += 1;
        WatchHold {
            watches: self.clone(),
            watched,
        }
    }

    /// Whether the instance still has `watched` (held, or lingering).
    pub(crate) fn has(&self, watched: Watched) -> bool {
        self.held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains_key(&watched)
    }

    /// The watches to renew: every one the instance has, once those nothing held since the last
    /// renewal are let go (their lease lapses by itself).
    pub(crate) fn to_renew(&self) -> Vec<Watched> {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        held.retain(|_, holders| *holders > 0);
        held.keys().copied().collect()
    }
}

impl Drop for WatchHold {
    fn drop(&mut self) {
        let mut held = self
            .watches
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(holders) = held.get_mut(&self.watched) {
            *holders = holders.saturating_sub(1);
        }
    }
}

/// Registers (or renews) `watched` for another lease, through the hub's own connection. A watch of
/// an agent is written on its counter row, waiting for the agent's events in flight; a watch of
/// every agent waits for every transaction that read the old one.
pub(crate) async fn register(
    client: &Client,
    watched: &[Watched],
) -> Result<(), tokio_postgres::Error> {
    let lease = WATCH_LEASE.as_secs();
    let agents: Vec<String> = watched
        .iter()
        .filter_map(|watched| match watched {
            Watched::Agent(agent) => Some(agent.to_string()),
            Watched::EveryAgent => None,
        })
        .collect();
    if !agents.is_empty() {
        // Only agents that exist: a topic may name any id.
        let ids = format!("{{{}}}", agents.join(","));
        client
            .execute(
                &format!(
                    "INSERT INTO agent_event_counters AS counter (agent_id, last_seq, watched_until) \
                     SELECT agent.id, 0, now() + interval '{lease} seconds' \
                     FROM agents AS agent WHERE agent.id = ANY ($1::text::uuid[]) \
                     ON CONFLICT (agent_id) DO UPDATE SET watched_until = excluded.watched_until"
                ),
                &[&ids],
            )
            .await?;
    }
    if watched.contains(&Watched::EveryAgent) {
        client
            .batch_execute(&format!(
                "BEGIN; SET LOCAL lock_timeout = '{EVERY_AGENT_LOCK_TIMEOUT}'; \
                 LOCK TABLE every_agent_watch IN ACCESS EXCLUSIVE MODE; \
                 UPDATE every_agent_watch SET watched_until = now() + interval '{lease} seconds'; \
                 COMMIT"
            ))
            .await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_event_topics_are_watches() {
        let agent = Uuid::now_v7();
        assert_eq!(
            Watched::of_topic(&format!("events:{agent}")),
            Some(Watched::Agent(agent))
        );
        assert_eq!(Watched::of_topic("events:*"), Some(Watched::EveryAgent));
        for other in [
            "events:a",
            "revoked:*",
            &format!("revoked:{agent}"),
            "agent-profiles",
        ] {
            assert_eq!(Watched::of_topic(other), None, "{other}");
        }
        assert_eq!(Watched::Agent(agent).topic(), format!("events:{agent}"));
    }

    #[test]
    fn a_watch_is_asked_for_once_and_lingers_until_a_renewal_finds_it_unheld() {
        let (watches, mut asked) = Watches::new();
        let agent = Watched::Agent(Uuid::now_v7());
        let first = watches.hold(agent);
        let second = watches.hold(agent);
        assert_eq!(asked.try_recv(), Ok(agent));
        assert!(asked.try_recv().is_err(), "asked once");
        drop((first, second));
        let again = watches.hold(agent);
        assert!(
            asked.try_recv().is_err(),
            "held again before a renewal: not asked again"
        );
        assert_eq!(watches.to_renew(), vec![agent]);
        drop(again);
        assert!(watches.has(agent), "it lingers");
        assert!(watches.to_renew().is_empty(), "a renewal lets it go");
        assert!(!watches.has(agent));
        let _held = watches.hold(agent);
        assert_eq!(asked.try_recv(), Ok(agent), "held anew: asked again");
    }
}
