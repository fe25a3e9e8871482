//! `agentctl agents`: create, list, show, deactivate, rotate keys.

use anyhow::Context as _;
use api_types::{AgentResponse, OperatorIssuedKey};
use app::{CreateAgent, CreateAgentError, IssuedKey, PolicyUsage, Services};
use clap::Subcommand;
use domain::keys::AgentKeyRecord;
use domain::{Actor, AgentId, AgentProfile, Label};
use serde_json::{json, Value};

use crate::{operator, Context};

#[derive(Subcommand)]
pub enum AgentsCommand {
    /// Create an agent; prints its key, which is never shown again.
    Create {
        #[arg(long)]
        label: Option<String>,
        /// The sponsor (owner account) the agent belongs to, created if new: its agents share
        /// the sponsor's mail send rate. Without it the agent gets a sponsor of its own.
        #[arg(long)]
        sponsor: Option<String>,
        /// Provision an email inbox.
        #[arg(long)]
        email: bool,
        /// Provision a receive-only phone number.
        #[arg(long)]
        phone: bool,
        /// Provision a wallet on Base.
        #[arg(long)]
        wallet: bool,
    },
    /// List all agents, oldest first.
    List,
    /// Show one agent.
    Show { id: AgentId },
    /// Deactivate an agent; its key stops working at once.
    Deactivate { id: AgentId },
    /// Issue a new key; the old one stops working at once, and so do the agent's webhook
    /// endpoints, made by it (printed as `disabled_webhooks`; the agent's new key enables them
    /// again).
    RotateKey { id: AgentId },
}

pub async fn run(context: &Context, command: AgentsCommand) -> anyhow::Result<Value> {
    let services = context.services().await?;
    let admin = &services.operator.agents;
    Ok(match command {
        AgentsCommand::Create {
            label,
            sponsor,
            email,
            phone,
            wallet,
        } => {
            let label = label
                .map(|label| Label::parse(&label))
                .transpose()
                .context("--label")?;
            let issued = admin
                .create(
                    CreateAgent {
                        sponsor,
                        label,
                        email,
                        phone,
                        wallet,
                    },
                    &Actor::local(operator()),
                )
                .await
                .map_err(create_error)?;
            issued_key(&issued, Issued::WithTheAgent)
        }
        AgentsCommand::List => {
            let mut listed = Vec::new();
            for profile in admin.list().await? {
                let first = first_key(&services, &profile).await?;
                listed.push(AgentResponse::new(&profile, first.as_ref()));
            }
            json!(listed)
        }
        AgentsCommand::Show { id } => json!(shown(&services, &admin.show(id).await?).await?),
        AgentsCommand::Deactivate { id } => {
            let profile = admin.deactivate(id, &Actor::local(operator())).await?;
            json!(shown(&services, &profile).await?)
        }
        AgentsCommand::RotateKey { id } => issued_key(
            &admin.rotate_key(id, &Actor::local(operator())).await?,
            Issued::ByRotation,
        ),
    })
}

/// The use case's refusal, with what the operator of this CLI sets to get past it.
fn create_error(error: CreateAgentError) -> anyhow::Error {
    match error {
        CreateAgentError::ForeignMasterKey => {
            anyhow::anyhow!("{error}; set WALLET_MASTER_KEY to the key they were sealed under")
        }
        other => other.into(),
    }
}

/// The agent as it reads itself with its first key: its wallet's policy with its usage.
async fn shown(services: &Services, profile: &AgentProfile) -> anyhow::Result<AgentResponse> {
    let shown = services.wallets.shown_policy(profile).await?;
    let first = first_key(services, profile).await?;
    Ok(AgentResponse::with_usage(
        profile,
        first.as_ref(),
        shown.as_ref().map(PolicyUsage::parts),
    ))
}

/// The agent's first key, as an operator's view of the agent shows it; `None` once revoked.
async fn first_key(
    services: &Services,
    profile: &AgentProfile,
) -> anyhow::Result<Option<AgentKeyRecord>> {
    let keys = services.keys.live(profile.agent.id).await?;
    Ok(keys.into_iter().find(|key| key.first))
}

/// How a key came to be issued.
enum Issued {
    WithTheAgent,
    /// A rotation, which also names the webhook endpoints it disabled.
    ByRotation,
}

/// The only place a key is ever printed: once, to the operator who asked for it. Its agent is
/// printed without the policy's usage: a failed reading must not keep a key issued from being
/// printed.
fn issued_key(issued: &IssuedKey, how: Issued) -> Value {
    let agent = AgentResponse::new(&issued.profile, Some(&issued.first_key));
    json!(match how {
        Issued::WithTheAgent => OperatorIssuedKey::new(&issued.key, agent),
        Issued::ByRotation => {
            OperatorIssuedKey::rotated(&issued.key, agent, &issued.disabled_webhooks)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_foreign_master_key_says_which_variable_to_set() {
        assert_eq!(
            create_error(CreateAgentError::ForeignMasterKey).to_string(),
            "the configured wallet master key does not open the wallets already in this \
             database; set WALLET_MASTER_KEY to the key they were sealed under"
        );
    }
}
