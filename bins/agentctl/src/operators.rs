//! `agentctl operators`: the people who enter the operator console (console.md): invite one (a
//! one-time enrollment link, printed once), list them, disable one (their sessions end at once),
//! revoke one's token for agentctl. A token is issued only by its operator, from their own
//! console session: the control plane could otherwise mint every operator's proof.

use api_types::{ConsoleInvitationOut, ConsoleOperatorOut};
use app::{DisableError, InviteError, RevokeTokenError};
use clap::{Subcommand, ValueEnum};
use domain::{Actor, OperatorName, OperatorRole};
use serde_json::{json, Value};

use crate::{operator, Context};

#[derive(Subcommand)]
pub enum OperatorsCommand {
    /// Registers an operator and prints the one-time link (valid 24 hours) through which they
    /// enroll a passkey.
    Invite {
        /// The name the operator goes by: 1 to 64 characters, no whitespace.
        #[arg(long)]
        name: String,
        #[arg(long, value_enum)]
        role: Role,
    },
    /// Every operator, oldest first.
    List,
    /// Disables an operator: their sessions end at once and nothing of theirs opens the console.
    Disable { name: String },
    /// An operator's token for agentctl, which they issue on the console.
    #[command(subcommand)]
    Token(TokenCommand),
}

#[derive(Subcommand)]
pub enum TokenCommand {
    /// Revokes the operator's token: it proves nobody from now on.
    Revoke { name: String },
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Role {
    /// Decisions on transfers, agents and their policies.
    Admin,
    /// Decisions on transfers.
    Approver,
    /// Reads every page, changes nothing.
    Viewer,
}

impl From<Role> for OperatorRole {
    fn from(role: Role) -> Self {
        match role {
            Role::Admin => Self::Admin,
            Role::Approver => Self::Approver,
            Role::Viewer => Self::Viewer,
        }
    }
}

fn name(name: &str) -> anyhow::Result<OperatorName> {
    OperatorName::parse(name).map_err(|error| anyhow::anyhow!("operator name {name:?}: {error}"))
}

pub async fn run(context: &Context, command: OperatorsCommand) -> anyhow::Result<Value> {
    let console = context.services().await?.operator.console;
    let actor = Actor::local(operator());
    Ok(match command {
        OperatorsCommand::Invite { name: wanted, role } => {
            let invitation = console
                .invite(name(&wanted)?, role.into(), &actor)
                .await
                .map_err(|error| match error {
                    InviteError::NameTaken(name) => {
                        anyhow::anyhow!("an operator named {} exists already", name.as_str())
                    }
                    other => other.into(),
                })?;
            json!(ConsoleInvitationOut {
                operator: ConsoleOperatorOut::from(&invitation.operator),
                enroll_url: invitation.enroll_url,
            })
        }
        OperatorsCommand::List => {
            let operators = console.list().await?;
            json!(operators
                .iter()
                .map(ConsoleOperatorOut::from)
                .collect::<Vec<_>>())
        }
        OperatorsCommand::Disable { name: wanted } => {
            let disabled = console
                .disable(name(&wanted)?, &actor)
                .await
                .map_err(|error| match error {
                    DisableError::NotFound(name) => {
                        anyhow::anyhow!("no operator is named {}", name.as_str())
                    }
                    other => other.into(),
                })?;
            json!(ConsoleOperatorOut::from(&disabled))
        }
        OperatorsCommand::Token(TokenCommand::Revoke { name: wanted }) => {
            let name = name(&wanted)?;
            let revoked = console
                .revoke_token(name.clone(), &actor)
                .await
                .map_err(|error| match error {
                    RevokeTokenError::NotFound(name) => {
                        anyhow::anyhow!("no operator is named {}", name.as_str())
                    }
                    other => other.into(),
                })?;
            json!({"operator": name.as_str(), "token_revoked": revoked})
        }
    })
}
