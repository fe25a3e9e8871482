//! `agentctl webhooks`: an agent's webhook endpoints; replay one's deliveries or disable it.

use api_types::{WebhookAttemptOut, WebhookOut};
use app::WebhookError;
use clap::Subcommand;
use domain::{AgentId, WebhookEndpointId};
use serde_json::{json, Value};

use crate::{operator, Context};

#[derive(Subcommand)]
pub enum WebhooksCommand {
    /// The agent's endpoints, oldest first, without their secrets.
    List { agent_id: AgentId },
    /// One endpoint, whose it is and its latest attempts.
    Show { id: WebhookEndpointId },
    /// Delivers again every kept event the endpoint wants with a seq after --after.
    Replay {
        id: WebhookEndpointId,
        #[arg(long, default_value_t = 0)]
        after: u64,
    },
    /// Stops deliveries to the endpoint; what is queued for it fails (kept for replay). The
    /// agent may enable it again.
    Disable {
        id: WebhookEndpointId,
        #[arg(long)]
        reason: Option<String>,
    },
}

/// The use case's refusal in this CLI's words.
fn refused(id: WebhookEndpointId, error: WebhookError) -> anyhow::Error {
    match error {
        WebhookError::NotFound => anyhow::anyhow!("no webhook endpoint {id}"),
        other => other.into(),
    }
}

pub async fn run(context: &Context, command: WebhooksCommand) -> anyhow::Result<Value> {
    let admin = context.services().await?.operator.events;
    Ok(match command {
        WebhooksCommand::List { agent_id } => {
            let endpoints = admin.endpoints(agent_id).await?;
            json!(endpoints.iter().map(WebhookOut::new).collect::<Vec<_>>())
        }
        WebhooksCommand::Show { id } => {
            let view = admin
                .endpoint(id)
                .await
                .map_err(|error| refused(id, error))?;
            json!({
                "agent_id": view.endpoint.agent_id.to_string(),
                "webhook": WebhookOut::new(&view.endpoint),
                "recent_attempts": view
                    .recent_attempts
                    .iter()
                    .map(WebhookAttemptOut::from)
                    .collect::<Vec<_>>(),
            })
        }
        WebhooksCommand::Replay { id, after } => {
            let queued = admin
                .replay(id, after)
                .await
                .map_err(|error| refused(id, error))?;
            json!({ "queued": queued })
        }
        WebhooksCommand::Disable { id, reason } => {
            let endpoint = admin
                .disable(&operator(), id, reason.as_deref())
                .await
                .map_err(|error| refused(id, error))?;
            json!(WebhookOut::new(&endpoint))
        }
    })
}
