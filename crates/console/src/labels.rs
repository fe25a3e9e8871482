//! The agents a page names, read once per page so each is shown by its label with a link to its
//! own page, never by its id alone.

use std::collections::{HashMap, HashSet};

use app::AgentLookupError;
use domain::{AgentId, AgentRecord};
use futures_util::stream::{self, StreamExt, TryStreamExt};
use maud::Markup;
use ports::StoreError;

use crate::pages::{agent_link, agent_link_of};
use crate::Console;

/// Reads a page makes at once: a pooled connection each, few enough to leave the pool to the
/// requests beside them (as the pending list's reviews do).
const READS_AT_ONCE: usize = 8;

/// The agents a page shows, by id.
#[derive(Default)]
pub(crate) struct Agents(HashMap<AgentId, AgentRecord>);

impl Agents {
    /// The agents `ids` name, each read once; an id that names no agent is left out.
    pub(crate) async fn read(
        console: &Console,
        ids: impl IntoIterator<Item = AgentId>,
    ) -> Result<Self, StoreError> {
        let ids: HashSet<AgentId> = ids.into_iter().collect();
        let agents = stream::iter(ids)
            .map(|id| async move {
                match console.services.operator.agents.show(id).await {
                    Ok(profile) => Ok(Some((id, profile.agent))),
                    Err(AgentLookupError::NotFound(_)) => Ok(None),
                    Err(AgentLookupError::Store(error)) => Err(error),
                }
            })
            .buffer_unordered(READS_AT_ONCE)
            .try_collect::<Vec<_>>()
            .await?;
        Ok(Self(agents.into_iter().flatten().collect()))
    }

    /// The agent `id`, by its label, linking to its page.
    pub(crate) fn link(&self, id: AgentId) -> Markup {
        match self.0.get(&id) {
            Some(agent) => agent_link(agent),
            None => agent_link_of(id, None),
        }
    }
}
