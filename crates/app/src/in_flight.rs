//! How many requests of each agent one instance is working on, to cap them per agent.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use domain::AgentId;

/// Requests each agent has in progress on this instance.
#[derive(Default)]
pub(crate) struct InFlight(Mutex<HashMap<AgentId, usize>>);

/// One request in progress; dropping it frees its place.
pub(crate) struct InFlightSlot<'a> {
    counts: &'a InFlight,
    agent: AgentId,
}

impl InFlight {
    /// A place for one more of the agent's requests, unless it already has `most` of them.
    pub(crate) fn enter(&self, agent: AgentId, most: usize) -> Option<InFlightSlot<'_>> {
        let mut counts = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let count = counts.entry(agent).or_default();
        if *count >= most {
            return None;
        }
        *count += 1;
        Some(InFlightSlot {
            counts: self,
            agent,
        })
    }
}

impl Drop for InFlightSlot<'_> {
    fn drop(&mut self) {
        let mut counts = self.counts.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = counts.get_mut(&self.agent) {
            *count -= 1;
            if *count == 0 {
                counts.remove(&self.agent);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;

    #[test]
    fn an_agent_gets_only_so_many_sends_in_progress_at_once() {
        let in_flight = InFlight::default();
        let (agent, other) = (AgentId(Uuid::now_v7()), AgentId(Uuid::now_v7()));
        let first = in_flight.enter(agent, 2).expect("room");
        let second = in_flight.enter(agent, 2).expect("room");
        assert!(in_flight.enter(agent, 2).is_none(), "full");
        assert!(
            in_flight.enter(other, 2).is_some(),
            "other agents unaffected"
        );
        drop(first);
        assert!(
            in_flight.enter(agent, 2).is_some(),
            "a finished send frees its place"
        );
        drop(second);
        assert!(
            in_flight.0.lock().expect("lock").is_empty(),
            "idle agents are forgotten"
        );
    }
}
