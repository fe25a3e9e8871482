//! The operator's side, one service per concern: the agents (`AgentAdmin`), their spend policies
//! (`PolicyAdmin`), the decisions on transfer intents (`IntentDecisions`) and the settlement of a
//! sent one by what the chain says (`ChainResolution`), the agents' events and webhook endpoints
//! (`EventAdmin`). Whoever decides is named by a
//! `domain::Operator`, which the way in (`agentctl` now, a console later) builds, and every
//! decision on an intent records it (`decided_by`, decision 0056).

pub mod agent_admin;
pub mod chain_resolution;
pub mod console_access;
pub mod event_admin;
pub mod intent_decisions;
pub mod policy_admin;

pub use agent_admin::{
    AgentAdmin, AgentAdminPorts, AgentLookupError, CreateAgent, CreateAgentError, IssuedKey,
};
pub use chain_resolution::{ChainResolution, ChainResolutionPorts, ResolveError};
pub use console_access::{
    new_csrf_token, AccessError, CeremonyStart, ConsoleAccess, ConsoleSession, ConsoleStores,
    DisableError, Invitation, InviteError, ProofError, RevokeTokenError, SignedIn, TokenError,
    FAILED_SIGN_IN_RATE,
};
pub use event_admin::{EndpointView, EventAdmin};
pub use intent_decisions::{
    BalanceCheck, ConfirmError, Confirmation, DecisionStores, Inspection, IntentDecisions,
    RecipientStanding, Review, SAME_RECIPIENT_SHOWN,
};
pub use policy_admin::{PolicyAdmin, PolicyError};

/// Every service of the operator's side, as `Services` holds them.
pub struct OperatorServices {
    pub agents: AgentAdmin,
    pub policies: PolicyAdmin,
    pub decisions: IntentDecisions,
    pub resolution: ChainResolution,
    /// The agents' events and webhook endpoints.
    pub events: EventAdmin,
    /// The console's operators, their passkeys and sessions.
    pub console: ConsoleAccess,
}

#[cfg(test)]
pub(crate) mod tests {
    use domain::{AgentProfile, AgentRecord, EvmAddress, Operator, OperatorName, PolicyAsset};
    use ports::NewAgent;

    pub(crate) fn usdc() -> PolicyAsset {
        PolicyAsset::usdc_on_base(
            EvmAddress::parse("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913").expect("valid"),
        )
    }

    /// The profile a store answers with for `agent` once it is stored.
    pub(crate) fn profile_of(agent: &NewAgent) -> AgentProfile {
        AgentProfile {
            agent: AgentRecord {
                id: agent.id,
                label: agent.label.clone(),
                ..AgentRecord::fixture()
            },
            ..AgentProfile::fixture()
        }
    }

    /// The operator taking the decisions of the tests.
    pub(crate) fn operator() -> Operator {
        Operator::Cli {
            user: Some(OperatorName::parse("alice").expect("valid")),
        }
    }

    /// `operator()` acting on the control plane's host.
    pub(crate) fn actor() -> domain::Actor {
        domain::Actor::local(operator())
    }
}
