//! `agentctl events`: an agent's event log, as its feed shows it.

use anyhow::Context as _;
use api_types::OperatorEventView;
use clap::Subcommand;
use domain::{AgentId, EventTypes};
use serde_json::{json, Value};

use crate::Context;

#[derive(Subcommand)]
pub enum EventsCommand {
    /// The agent's events, oldest first.
    List {
        agent_id: AgentId,
        /// Only events after this seq.
        #[arg(long, default_value_t = 0)]
        after: u64,
        /// At most this many (1 to 100).
        #[arg(long, default_value_t = 20)]
        limit: usize,
        /// Comma-separated event types, e.g. email.received,transfer_intent.created.
        #[arg(long)]
        types: Option<String>,
    },
}

pub async fn run(context: &Context, command: EventsCommand) -> anyhow::Result<Value> {
    let admin = context.services().await?.operator.events;
    let EventsCommand::List {
        agent_id,
        after,
        limit,
        types,
    } = command;
    let types = match types {
        Some(list) => EventTypes::parse_list(&list)
            .with_context(|| format!("--types: one of {}", api_types::event_type_names()))?,
        None => EventTypes::all(),
    };
    let page = admin.events(agent_id, after, types, limit).await?;
    Ok(json!({
        "items": page.items.iter().map(OperatorEventView::from).collect::<Vec<_>>(),
        "next_after": page.next_after,
    }))
}
