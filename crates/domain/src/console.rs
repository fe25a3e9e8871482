//! The operator console's accounts: who may enter, with which role, by which one-time secrets,
//! and what their audit log records (console.md).

use std::fmt;
use std::time::Duration;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use sha2::{Digest, Sha256};
use time::OffsetDateTime;

use crate::{AgentId, IntentId, Operator, OperatorId, OperatorName};

/// How long an enrollment link opens the console to its operator, once.
pub const ENROLLMENT_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// How long a session lasts without a request.
pub const SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// What an operator of the console may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OperatorRole {
    /// Everything: decisions on transfers, agents and their policies.
    Admin,
    /// Decisions on transfers, and every page to read.
    Approver,
    /// Every page to read, nothing to change.
    Viewer,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is no role: admin, approver or viewer")]
pub struct UnknownRole(pub String);

impl OperatorRole {
    pub const ALL: [Self; 3] = [Self::Admin, Self::Approver, Self::Viewer];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Admin => "admin",
            Self::Approver => "approver",
            Self::Viewer => "viewer",
        }
    }

    pub fn parse(role: &str) -> Result<Self, UnknownRole> {
        Self::ALL
            .into_iter()
            .find(|known| known.as_str() == role)
            .ok_or_else(|| UnknownRole(role.to_owned()))
    }

    /// Whether the role approves and rejects transfers.
    pub fn may_decide(self) -> bool {
        matches!(self, Self::Admin | Self::Approver)
    }

    /// Whether the role creates, deactivates and rekeys agents and sets their policies.
    pub fn may_administer(self) -> bool {
        self == Self::Admin
    }
}

impl fmt::Display for OperatorRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An operator of the console as the registry holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperatorAccount {
    pub id: OperatorId,
    pub name: OperatorName,
    pub role: OperatorRole,
    pub created_at: OffsetDateTime,
    /// Set once the operator is disabled: from then on nothing of theirs opens the console.
    pub disabled_at: Option<OffsetDateTime>,
}

impl OperatorAccount {
    /// The principal the operator's decisions record, the one a quorum counts.
    pub fn principal(&self) -> Operator {
        Operator::Named(self.name.clone())
    }

    pub fn is_active(&self) -> bool {
        self.disabled_at.is_none()
    }
}

/// Why a name the console's registry holds does not decide on transfers when the control plane
/// names it (`agentctl intents confirm|reject --operator NAME`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NamedDecisionRefused {
    #[error("operator {0} is disabled: their name approves and rejects nothing")]
    Disabled(OperatorName),
    #[error("operator {0} is a viewer: viewers approve and reject nothing")]
    Viewer(OperatorName),
}

/// The principal a decision named `name` on the control plane records. A name the registry
/// holds speaks for that operator, so only while they are active and their role decides: a
/// disabled operator or a viewer is not counted into a quorum by typing their name. Other names
/// are the control plane's own, as before the console had accounts.
pub fn named_decider(
    name: OperatorName,
    registered: Option<&OperatorAccount>,
) -> Result<Operator, NamedDecisionRefused> {
    match registered {
        Some(account) if !account.is_active() => Err(NamedDecisionRefused::Disabled(name)),
        Some(account) if !account.role.may_decide() => Err(NamedDecisionRefused::Viewer(name)),
        _ => Ok(Operator::Named(name)),
    }
}

/// A secret handed out once and kept only hashed: an enrollment link's token, a session's
/// cookie. 256 random bits, written in base64url.
#[derive(Clone, PartialEq, Eq)]
pub struct OneTimeSecret(String);

/// The SHA-256 of a `OneTimeSecret`, which is what is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SecretHash(pub [u8; 32]);

/// The characters of a secret's text: 32 bytes in base64url without padding.
const SECRET_CHARS: usize = 43;

impl OneTimeSecret {
    /// Encodes 256 random bits. The caller supplies the randomness so this stays pure.
    pub fn from_random_bytes(bytes: [u8; 32]) -> Self {
        Self(URL_SAFE_NO_PAD.encode(bytes))
    }

    /// Reads a secret as a client sent it back; `None` for anything that could not be one, so
    /// nothing of another shape reaches a lookup.
    pub fn parse(text: &str) -> Option<Self> {
        let shaped = text.len() == SECRET_CHARS
            && URL_SAFE_NO_PAD
                .decode(text)
                .is_ok_and(|bytes| bytes.len() == 32);
        shaped.then(|| Self(text.to_owned()))
    }

    pub fn hash(&self) -> SecretHash {
        SecretHash(Sha256::digest(self.0.as_bytes()).into())
    }

    /// The secret itself, for the one place it is handed out.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for OneTimeSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("OneTimeSecret(…)")
    }
}

/// What an operator did, as the audit log names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AuditAction {
    Invite,
    Enroll,
    Login,
    Logout,
    Disable,
    Approve,
    Reject,
    Create,
    Deactivate,
    Rotate,
    PolicyChange,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is no audited action")]
pub struct UnknownAuditAction(pub String);

impl AuditAction {
    pub const ALL: [Self; 11] = [
        Self::Invite,
        Self::Enroll,
        Self::Login,
        Self::Logout,
        Self::Disable,
        Self::Approve,
        Self::Reject,
        Self::Create,
        Self::Deactivate,
        Self::Rotate,
        Self::PolicyChange,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Invite => "invite",
            Self::Enroll => "enroll",
            Self::Login => "login",
            Self::Logout => "logout",
            Self::Disable => "disable",
            Self::Approve => "approve",
            Self::Reject => "reject",
            Self::Create => "create",
            Self::Deactivate => "deactivate",
            Self::Rotate => "rotate",
            Self::PolicyChange => "policy_change",
        }
    }

    pub fn parse(action: &str) -> Result<Self, UnknownAuditAction> {
        Self::ALL
            .into_iter()
            .find(|known| known.as_str() == action)
            .ok_or_else(|| UnknownAuditAction(action.to_owned()))
    }
}

impl fmt::Display for AuditAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who acts and from where, as every audited action records it: the principal, and the client
/// address the action came from when it came over the network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    pub operator: Operator,
    pub address: Option<String>,
}

impl Actor {
    /// An action taken on the control plane's host, which has no client address.
    pub fn local(operator: Operator) -> Self {
        Self {
            operator,
            address: None,
        }
    }
}

/// What an audited action was taken on, as the log's `target` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditTarget<'a> {
    Intent(IntentId),
    Agent(AgentId),
    /// An operator's account, by its principal (`operator:<name>`).
    Operator(&'a Operator),
}

impl fmt::Display for AuditTarget<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Intent(id) => write!(f, "intent:{id}"),
            Self::Agent(id) => write!(f, "agent:{id}"),
            Self::Operator(principal) => write!(f, "{principal}"),
        }
    }
}

/// One row of the audit log. `before` and `after` are what the action changed, as JSON text;
/// the log never holds a secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRecord {
    pub at: OffsetDateTime,
    pub operator: String,
    pub action: AuditAction,
    pub target: Option<String>,
    pub before: Option<String>,
    pub after: Option<String>,
    pub reason: Option<String>,
    pub address: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_role_reads_back_and_only_its_own_powers_are_granted() {
        for role in OperatorRole::ALL {
            assert_eq!(OperatorRole::parse(role.as_str()), Ok(role));
        }
        assert!(OperatorRole::parse("root").is_err());
        let powers = OperatorRole::ALL.map(|role| (role.may_decide(), role.may_administer()));
        assert_eq!(powers, [(true, true), (true, false), (false, false)]);
    }

    fn account(role: OperatorRole, disabled: bool) -> OperatorAccount {
        OperatorAccount {
            id: OperatorId(uuid::Uuid::nil()),
            name: OperatorName::parse("bob").expect("valid"),
            role,
            created_at: OffsetDateTime::UNIX_EPOCH,
            disabled_at: disabled.then_some(OffsetDateTime::UNIX_EPOCH),
        }
    }

    #[test]
    fn a_registered_name_decides_only_for_an_active_operator_whose_role_decides() {
        let bob = OperatorName::parse("bob").expect("valid");
        let named = Ok(Operator::Named(bob.clone()));
        assert_eq!(named_decider(bob.clone(), None), named, "unregistered");
        for role in [OperatorRole::Admin, OperatorRole::Approver] {
            assert_eq!(
                named_decider(bob.clone(), Some(&account(role, false))),
                named
            );
            assert_eq!(
                named_decider(bob.clone(), Some(&account(role, true))),
                Err(NamedDecisionRefused::Disabled(bob.clone()))
            );
        }
        assert_eq!(
            named_decider(bob.clone(), Some(&account(OperatorRole::Viewer, false))),
            Err(NamedDecisionRefused::Viewer(bob.clone()))
        );
    }

    #[test]
    fn a_secret_is_43_base64url_characters_and_only_such_text_reads_back() {
        let secret = OneTimeSecret::from_random_bytes([7; 32]);
        assert_eq!(secret.expose().len(), 43);
        assert_eq!(OneTimeSecret::parse(secret.expose()), Some(secret.clone()));
        assert_eq!(
            OneTimeSecret::parse(secret.expose()).map(|read| read.hash()),
            Some(secret.hash())
        );
        for garbage in [
            "",
            "short",
            &"a".repeat(44),
            &format!("{}=", &secret.expose()[..42]),
        ] {
            assert_eq!(OneTimeSecret::parse(garbage), None, "{garbage:?}");
        }
        assert_ne!(
            OneTimeSecret::from_random_bytes([8; 32]).hash(),
            secret.hash()
        );
        assert_eq!(format!("{secret:?}"), "OneTimeSecret(…)", "never printed");
    }

    #[test]
    fn every_audited_action_reads_back() {
        for action in AuditAction::ALL {
            assert_eq!(AuditAction::parse(action.as_str()), Ok(action));
        }
        assert!(AuditAction::parse("delete").is_err());
    }
}
