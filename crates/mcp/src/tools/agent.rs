//! The agent itself: what it is and what it has.

use api_types::AgentResponse;
use app::PolicyUsage;
use domain::keys::Scope;
use rmcp::handler::server::common::schema_for_empty_input;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};

use super::{AgentTools, Caller};
use crate::answers::answer;

#[tool_router(router = agent_router, vis = "pub(super)")]
impl AgentTools {
    #[tool(
        name = "get_me",
        meta = super::needs(Scope::AgentRead),
        title = "Get this agent",
        description = "The agent this key belongs to and what it has: its email inbox address, its \
phone number and its wallet (address and spend policy), each null when the agent has none. Call \
it first: tools of a resource the agent lacks refuse.",
        input_schema = schema_for_empty_input(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn get_me(&self, caller: Caller) -> CallToolResult {
        let shown = or_refuse!(self.services().wallets.shown_policy(&caller.profile).await);
        answer(AgentResponse::with_usage(
            &caller.profile,
            Some(&caller.key),
            shown.as_ref().map(PolicyUsage::parts),
        ))
    }
}
