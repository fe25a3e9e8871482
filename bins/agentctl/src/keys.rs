//! `agentctl keys`: an agent's keys, listed, made and revoked by the operator (the keys
//! contract). Every creation and revocation is audited.

use std::time::Duration;

use anyhow::Context as _;
use api_types::{KeyCreatedOut, KeyListOut, KeyOut, MAX_KEY_LIFETIME_SECONDS};
use app::KeyError;
use clap::Subcommand;
use domain::keys::{KeyId, KeyRequest, Scope, Scopes};
use domain::{Actor, AgentId, Label};
use serde_json::{json, Value};

use crate::{operator, Context};

#[derive(Subcommand)]
pub enum KeysCommand {
    /// The agent's live keys, oldest first, without their secrets.
    List { agent_id: AgentId },
    /// Make a key for the agent; prints it, which is never shown again.
    Create {
        agent_id: AgentId,
        /// A scope of the key, repeated for each (`agent:read` is always added): agent:read,
        /// email:read, email:send, sms:read, codes:read, wallet:read, wallet:pay, events:read,
        /// webhooks:manage, keys:manage.
        #[arg(long = "scope", required = true, value_parser = parse_scope)]
        scopes: Vec<Scope>,
        /// Seconds until the key expires; without it, it never does.
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..=MAX_KEY_LIFETIME_SECONDS as u64))]
        expires_in: Option<u64>,
        #[arg(long)]
        label: Option<String>,
    },
    /// Revoke a key of the agent and every key made from it.
    Revoke { agent_id: AgentId, key_id: KeyId },
}

fn parse_scope(named: &str) -> Result<Scope, String> {
    Scope::parse(named).ok_or_else(|| {
        let known: Vec<&str> = Scope::ALL.iter().map(|scope| scope.as_str()).collect();
        format!("no scope {named:?}; the scopes are {}", known.join(", "))
    })
}

pub async fn run(context: &Context, command: KeysCommand) -> anyhow::Result<Value> {
    let services = context.services().await?;
    let keys = &services.keys;
    let actor = Actor::local(operator());
    Ok(match command {
        KeysCommand::List { agent_id } => {
            services.operator.agents.show(agent_id).await?;
            let live = keys.live(agent_id).await?;
            json!(KeyListOut {
                items: live.iter().map(KeyOut::from).collect(),
            })
        }
        KeysCommand::Create {
            agent_id,
            scopes,
            expires_in,
            label,
        } => {
            let label = label
                .map(|label| Label::parse(&label))
                .transpose()
                .context("--label")?;
            let asked = KeyRequest {
                scopes: Scopes::of(scopes),
                expires_in: expires_in.map(Duration::from_secs),
            };
            let made = keys
                .make_for_operator(agent_id, label, asked, &actor)
                .await
                .map_err(|error| refused(agent_id, None, error))?;
            json!(KeyCreatedOut::new(&made.key, &made.record))
        }
        KeysCommand::Revoke { agent_id, key_id } => {
            let revoked = keys
                .revoke_for_operator(agent_id, key_id, &actor)
                .await
                .map_err(|error| refused(agent_id, Some(key_id), error))?;
            json!({
                "revoked_key_ids": revoked.iter().map(KeyId::to_string).collect::<Vec<_>>(),
            })
        }
    })
}

/// The use case's refusal in this CLI's words.
fn refused(agent: AgentId, key: Option<KeyId>, error: KeyError) -> anyhow::Error {
    match (error, key) {
        (KeyError::NotFound, Some(key)) => anyhow::anyhow!("agent {agent} has no live key {key}"),
        (KeyError::NotFound, None) => anyhow::anyhow!("agent {agent} not found or inactive"),
        (other, _) => other.into(),
    }
}
