//! The agent's events.

use api_types::{EventOut, EventPage};
use domain::keys::Scope;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};

use super::{input, AgentTools, Caller};
use crate::answers::answer;
use crate::arguments::{Arguments, ListEventsArguments};

#[tool_router(router = event_router, vis = "pub(super)")]
impl AgentTools {
    #[tool(
        name = "list_events",
        meta = super::needs(Scope::EventsRead),
        title = "List events",
        description = "The agent's events, oldest first: mail received, sent or failed, SMS \
received, and every move of a transfer intent. Pass next_after as `after` to read on; remember \
the last seq you handled to pick up from there later.",
        input_schema = input::<ListEventsArguments>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn list_events(
        &self,
        caller: Caller,
        Arguments(arguments): Arguments<ListEventsArguments>,
    ) -> CallToolResult {
        let (after, limit, types) = or_refuse!(or_refuse!(arguments).page());
        let page = or_refuse!(
            self.services()
                .events
                .page(&caller.profile, after, types, limit)
                .await
        );
        answer(EventPage {
            items: page.items.iter().map(EventOut::from).collect(),
            next_after: page.next_after,
        })
    }
}
