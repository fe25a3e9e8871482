//! The one registry of what an agent's requests hold on an instance at once: long-lived requests
//! (waits for a code or for a decision on an intent, event streams, attachment downloads), costly
//! ones (searches) and request bodies being read (weighed in bytes), and the console's live lists
//! of its operators. Each kind is capped per agent (per operator for live lists) and counted for
//! the metrics, whichever transport holds it (a wait over MCP holds the same place as over HTTP).
//! Its shutdown is the one every stream holding a place ends on.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use domain::{AgentId, OperatorId};
use futures_channel::oneshot;
use futures_util::future::{FutureExt, Shared};

/// What a long-lived request is doing while it holds its place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LongLivedKind {
    /// A wait for a verification code, by SMS, mail or both.
    CodeWait,
    /// A live stream of the agent's events.
    EventStream,
    /// A wait for an operator's decision on a transfer intent.
    DecisionWait,
    /// An attachment's bytes on their way to a client, which may read them slowly.
    AttachmentDownload,
    /// A search of the agent's inbox, which may read much of it.
    Search,
    /// Request bodies being read for the agent, weighed in bytes.
    RequestBodyBytes,
    /// An operator's live list of the intents awaiting a decision, on the console.
    LiveList,
}

impl LongLivedKind {
    pub const ALL: [Self; 7] = [
        Self::CodeWait,
        Self::EventStream,
        Self::DecisionWait,
        Self::AttachmentDownload,
        Self::Search,
        Self::RequestBodyBytes,
        Self::LiveList,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::CodeWait => "code_wait",
            Self::EventStream => "event_stream",
            Self::DecisionWait => "decision_wait",
            Self::AttachmentDownload => "attachment_download",
            Self::Search => "search",
            Self::RequestBodyBytes => "request_body_bytes",
            Self::LiveList => "live_list",
        }
    }
}

/// How many requests of each kind (bytes, for request bodies) one agent may hold at once on an
/// instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LongLivedCaps {
    pub code_waits: usize,
    pub event_streams: usize,
    pub decision_waits: usize,
    pub attachment_downloads: usize,
    pub searches: usize,
    pub request_body_bytes: usize,
    /// Live lists per operator.
    pub live_lists: usize,
}

impl LongLivedCaps {
    /// One of each kind, and `request_body_bytes` bytes: for tests.
    pub const fn one_each(request_body_bytes: usize) -> Self {
        Self {
            code_waits: 1,
            event_streams: 1,
            decision_waits: 1,
            attachment_downloads: 1,
            searches: 1,
            request_body_bytes,
            live_lists: 1,
        }
    }

    fn of(&self, kind: LongLivedKind) -> usize {
        match kind {
            LongLivedKind::CodeWait => self.code_waits,
            LongLivedKind::EventStream => self.event_streams,
            LongLivedKind::DecisionWait => self.decision_waits,
            LongLivedKind::AttachmentDownload => self.attachment_downloads,
            LongLivedKind::Search => self.searches,
            LongLivedKind::RequestBodyBytes => self.request_body_bytes,
            LongLivedKind::LiveList => self.live_lists,
        }
    }
}

/// One kind's figures: what is held now (requests, or bytes for request bodies), and how many
/// were refused for an agent's cap since the instance started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LongLivedUsage {
    pub kind: LongLivedKind,
    pub held: usize,
    pub refused: u64,
}

/// Whose requests a place counts among: an agent's, or an operator's on the console.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Holder {
    Agent(AgentId),
    Operator(OperatorId),
}

pub struct LongLived {
    caps: LongLivedCaps,
    held: Mutex<HashMap<(Holder, LongLivedKind), usize>>,
    refused: [AtomicU64; LongLivedKind::ALL.len()],
    /// Fires once, when the instance stops: what holds a place ends then.
    stop: Mutex<Option<oneshot::Sender<()>>>,
    stopping: Shared<oneshot::Receiver<()>>,
}

/// A place held in the registry, of some weight (one request, or a body's bytes); dropping it (the
/// request answered, or its client gone) frees it.
pub struct LongLivedPlace {
    registry: Arc<LongLived>,
    holder: Holder,
    kind: LongLivedKind,
    weight: usize,
}

impl LongLived {
    pub fn new(caps: LongLivedCaps) -> Arc<Self> {
        let (stop, stopping) = oneshot::channel();
        Arc::new(Self {
            caps,
            held: Mutex::default(),
            refused: Default::default(),
            stop: Mutex::new(Some(stop)),
            stopping: stopping.shared(),
        })
    }

    /// Tells everything holding a place that the instance is stopping (see
    /// [`LongLivedPlace::stopping`]).
    pub fn shut_down(&self) {
        // Dropping the sender fires every receiver, as sending would.
        drop(
            self.stop
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take(),
        );
    }

    /// A place for one more of the agent's requests of `kind`, unless it holds its cap of them.
    pub fn enter(self: &Arc<Self>, agent: AgentId, kind: LongLivedKind) -> Option<LongLivedPlace> {
        self.enter_weighing(agent, kind, 1)
    }

    /// A place of `weight` for the agent's request of `kind`, unless its places of that kind
    /// would then weigh more than its cap.
    pub fn enter_weighing(
        self: &Arc<Self>,
        agent: AgentId,
        kind: LongLivedKind,
        weight: usize,
    ) -> Option<LongLivedPlace> {
        self.enter_as(Holder::Agent(agent), kind, weight)
    }

    /// A place for one more of the operator's live lists, unless they hold their cap of them.
    pub fn enter_live_list(self: &Arc<Self>, operator: OperatorId) -> Option<LongLivedPlace> {
        self.enter_as(Holder::Operator(operator), LongLivedKind::LiveList, 1)
    }

    fn enter_as(
        self: &Arc<Self>,
        holder: Holder,
        kind: LongLivedKind,
        weight: usize,
    ) -> Option<LongLivedPlace> {
        self.take(holder, kind, weight).then(|| LongLivedPlace {
            registry: self.clone(),
            holder,
            kind,
            weight,
        })
    }

    /// Adds `weight` to the holder's places of `kind` when it stays within the cap, else counts
    /// a refusal.
    fn take(&self, holder: Holder, kind: LongLivedKind, weight: usize) -> bool {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        let count = held.entry((holder, kind)).or_default();
        if count.saturating_add(weight.max(1)) > self.caps.of(kind) {
            if *count == 0 {
                held.remove(&(holder, kind));
            }
            self.refused[kind as usize].fetch_add(1, Ordering::Relaxed);
            return false;
        }
        *count += weight;
        if *count == 0 {
            held.remove(&(holder, kind));
        }
        true
    }

    fn give_back(&self, holder: Holder, kind: LongLivedKind, weight: usize) {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        let key = (holder, kind);
        if let Some(count) = held.get_mut(&key) {
            *count = count.saturating_sub(weight);
            if *count == 0 {
                held.remove(&key);
            }
        }
    }

    /// Every kind's figures, for the metrics.
    pub fn usage(&self) -> Vec<LongLivedUsage> {
        let held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        LongLivedKind::ALL
            .into_iter()
            .map(|kind| LongLivedUsage {
                kind,
                held: held
                    .iter()
                    .filter(|((_, of), _)| *of == kind)
                    .map(|(_, count)| count)
                    .sum(),
                refused: self.refused[kind as usize].load(Ordering::Relaxed),
            })
            .collect()
    }
}

impl LongLivedPlace {
    /// What the place weighs now.
    pub fn weight(&self) -> usize {
        self.weight
    }

    /// Resolves once the instance is stopping (at once if it already is): a stream holding the
    /// place ends then.
    pub fn stopping(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        self.registry.stopping.clone().map(|_| ())
    }

    /// Makes the place `more` heavier, as a body being read grows, unless the agent's places of
    /// its kind would then weigh more than their cap: the request is then refused.
    pub fn grow(&mut self, more: usize) -> bool {
        if more == 0 {
            return true;
        }
        let grown = self.registry.take(self.holder, self.kind, more);
        if grown {
            self.weight += more;
        }
        grown
    }
}

impl Drop for LongLivedPlace {
    fn drop(&mut self) {
        self.registry.give_back(self.holder, self.kind, self.weight);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;

    #[test]
    fn each_agent_holds_up_to_its_cap_and_refusals_and_places_are_counted() {
        let registry = LongLived::new(LongLivedCaps {
            code_waits: 2,
            event_streams: 1,
            decision_waits: 1,
            attachment_downloads: 1,
            searches: 1,
            request_body_bytes: 100,
            live_lists: 1,
        });
        let (agent, other) = (AgentId(Uuid::now_v7()), AgentId(Uuid::now_v7()));
        let first = registry
            .enter(agent, LongLivedKind::CodeWait)
            .expect("room");
        let _second = registry
            .enter(agent, LongLivedKind::CodeWait)
            .expect("room");
        assert!(registry.enter(agent, LongLivedKind::CodeWait).is_none());
        let _others = registry
            .enter(other, LongLivedKind::CodeWait)
            .expect("another agent's cap is its own");
        let _stream = registry
            .enter(agent, LongLivedKind::EventStream)
            .expect("each kind has its own cap");
        assert!(registry.enter(agent, LongLivedKind::EventStream).is_none());
        assert_eq!(
            registry.usage(),
            [
                LongLivedUsage {
                    kind: LongLivedKind::CodeWait,
                    held: 3,
                    refused: 1
                },
                LongLivedUsage {
                    kind: LongLivedKind::EventStream,
                    held: 1,
                    refused: 1
                },
                LongLivedUsage {
                    kind: LongLivedKind::DecisionWait,
                    held: 0,
                    refused: 0
                },
                LongLivedUsage {
                    kind: LongLivedKind::AttachmentDownload,
                    held: 0,
                    refused: 0
                },
                LongLivedUsage {
                    kind: LongLivedKind::Search,
                    held: 0,
                    refused: 0
                },
                LongLivedUsage {
                    kind: LongLivedKind::RequestBodyBytes,
                    held: 0,
                    refused: 0
                },
                LongLivedUsage {
                    kind: LongLivedKind::LiveList,
                    held: 0,
                    refused: 0
                },
            ]
        );
        drop(first);
        assert!(registry.enter(agent, LongLivedKind::CodeWait).is_some());
        assert_eq!(registry.usage()[0].held, 2, "the place above was dropped");
    }

    #[test]
    fn an_agent_with_nothing_held_is_forgotten() {
        let agent = AgentId(Uuid::now_v7());
        let none_allowed = LongLived::new(LongLivedCaps {
            code_waits: 0,
            event_streams: 0,
            decision_waits: 0,
            attachment_downloads: 0,
            searches: 0,
            request_body_bytes: 0,
            live_lists: 0,
        });
        assert!(none_allowed.enter(agent, LongLivedKind::CodeWait).is_none());
        let one_allowed = LongLived::new(LongLivedCaps::one_each(10));
        drop(one_allowed.enter(agent, LongLivedKind::CodeWait));
        drop(one_allowed.enter_weighing(agent, LongLivedKind::RequestBodyBytes, 0));
        for registry in [none_allowed, one_allowed] {
            assert!(registry.held.lock().expect("not poisoned").is_empty());
        }
    }

    #[test]
    fn bodies_being_read_weigh_their_bytes_within_the_agents_cap() {
        let registry = LongLived::new(LongLivedCaps::one_each(100));
        let (agent, other) = (AgentId(Uuid::now_v7()), AgentId(Uuid::now_v7()));
        let declared = registry
            .enter_weighing(agent, LongLivedKind::RequestBodyBytes, 60)
            .expect("room");
        assert!(
            registry
                .enter_weighing(agent, LongLivedKind::RequestBodyBytes, 41)
                .is_none(),
            "60 + 41 bytes are over the cap"
        );
        let mut growing = registry
            .enter_weighing(agent, LongLivedKind::RequestBodyBytes, 0)
            .expect("a body of unknown length starts empty");
        assert!(growing.grow(40));
        assert!(!growing.grow(1), "the agent's bodies hold 100 bytes");
        assert!(registry
            .enter_weighing(other, LongLivedKind::RequestBodyBytes, 100)
            .is_some());
        assert_eq!(registry.usage()[5].held, 100);
        assert_eq!(registry.usage()[5].refused, 2);
        drop(declared);
        assert!(growing.grow(60), "the dropped body's bytes are free again");
        drop(growing);
        assert!(registry.held.lock().expect("not poisoned").is_empty());
    }

    #[test]
    fn operators_hold_live_lists_of_their_own_and_every_place_hears_the_shutdown() {
        let registry = LongLived::new(LongLivedCaps::one_each(0));
        let (operator, agent) = (OperatorId(Uuid::now_v7()), AgentId(Uuid::now_v7()));
        let list = registry.enter_live_list(operator).expect("room");
        assert!(registry.enter_live_list(operator).is_none());
        assert!(registry
            .enter_live_list(OperatorId(Uuid::now_v7()))
            .is_some());
        let stream = registry
            .enter(agent, LongLivedKind::EventStream)
            .expect("an agent's places are apart from operators'");
        assert_eq!(registry.usage()[6].held, 1);
        assert!(list.stopping().now_or_never().is_none());
        registry.shut_down();
        assert!(list.stopping().now_or_never().is_some());
        assert!(stream.stopping().now_or_never().is_some());
        registry.shut_down();
    }
}
