//! The one registry of long-lived requests on an instance (waits for a code or for a decision on
//! an intent, event streams, attachment downloads): each kind capped per agent, and counted for the metrics, whichever
//! transport holds it (a wait over MCP holds the same place as over HTTP).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use domain::AgentId;

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
}

impl LongLivedKind {
    pub const ALL: [Self; 4] = [
        Self::CodeWait,
        Self::EventStream,
        Self::DecisionWait,
        Self::AttachmentDownload,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::CodeWait => "code_wait",
            Self::EventStream => "event_stream",
            Self::DecisionWait => "decision_wait",
            Self::AttachmentDownload => "attachment_download",
        }
    }
}

/// How many requests of each kind one agent may hold at once on an instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LongLivedCaps {
    pub code_waits: usize,
    pub event_streams: usize,
    pub decision_waits: usize,
    pub attachment_downloads: usize,
}

impl LongLivedCaps {
    fn of(&self, kind: LongLivedKind) -> usize {
        match kind {
            LongLivedKind::CodeWait => self.code_waits,
            LongLivedKind::EventStream => self.event_streams,
            LongLivedKind::DecisionWait => self.decision_waits,
            LongLivedKind::AttachmentDownload => self.attachment_downloads,
        }
    }
}

/// One kind's figures: what is held now, and how many were refused for an agent's cap since the
/// instance started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LongLivedUsage {
    pub kind: LongLivedKind,
    pub held: usize,
    pub refused: u64,
}

pub struct LongLived {
    caps: LongLivedCaps,
    held: Mutex<HashMap<(AgentId, LongLivedKind), usize>>,
    refused: [AtomicU64; LongLivedKind::ALL.len()],
}

/// A place held in the registry; dropping it (the request answered, or its client gone) frees it.
pub struct LongLivedPlace {
    registry: Arc<LongLived>,
    agent: AgentId,
    kind: LongLivedKind,
}

impl LongLived {
    pub fn new(caps: LongLivedCaps) -> Arc<Self> {
        Arc::new(Self {
            caps,
            held: Mutex::default(),
            refused: Default::default(),
        })
    }

    /// A place for one more of the agent's requests of `kind`, unless it holds its cap of them.
    pub fn enter(self: &Arc<Self>, agent: AgentId, kind: LongLivedKind) -> Option<LongLivedPlace> {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        let count = held.entry((agent, kind)).or_default();
        if *count >= self.caps.of(kind) {
            if *count == 0 {
                held.remove(&(agent, kind));
            }
            self.refused[kind as usize].fetch_add(1, Ordering::Relaxed);
            return None;
        }
        *count += 1;
        Some(LongLivedPlace {
            registry: self.clone(),
            agent,
            kind,
        })
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

impl Drop for LongLivedPlace {
    fn drop(&mut self) {
        let mut held = self
            .registry
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let key = (self.agent, self.kind);
        if let Some(count) = held.get_mut(&key) {
            *count -= 1;
            if *count == 0 {
                held.remove(&key);
            }
        }
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
                }
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
        });
        assert!(none_allowed.enter(agent, LongLivedKind::CodeWait).is_none());
        let one_allowed = LongLived::new(LongLivedCaps {
            code_waits: 1,
            event_streams: 1,
            decision_waits: 1,
            attachment_downloads: 1,
        });
        drop(one_allowed.enter(agent, LongLivedKind::CodeWait));
        for registry in [none_allowed, one_allowed] {
            assert!(registry.held.lock().expect("not poisoned").is_empty());
        }
    }
}
