//! The operator console's accounts: who may enter, with which role, by which one-time secrets,
//! and what their audit log records (console.md).

use std::fmt;
use std::time::Duration;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use time::OffsetDateTime;
use uuid::Uuid;

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

/// Why an operator who proved who they are (a console session, a personal operator token) does
/// not decide on transfers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NamedDecisionRefused {
    #[error("operator {0} is disabled: their name approves and rejects nothing")]
    Disabled(OperatorName),
    #[error("operator {0} is a viewer: viewers approve and reject nothing")]
    Viewer(OperatorName),
}

/// The principal the decisions of `account` record, once they proved who they are: only while
/// they are active and their role decides.
pub fn named_decider(account: &OperatorAccount) -> Result<Operator, NamedDecisionRefused> {
    if !account.is_active() {
        return Err(NamedDecisionRefused::Disabled(account.name.clone()));
    }
    if !account.role.may_decide() {
        return Err(NamedDecisionRefused::Viewer(account.name.clone()));
    }
    Ok(account.principal())
}

/// Whether an approval recorded under `approver` still counts toward its intent's quorum, the
/// registry holding `registered` under its name: a named operator's only while they may decide
/// (one disabled since no longer counts, and a name no operator holds was never proven); the
/// control plane's always (it approves alone only where one approval is asked).
pub fn approval_counts(approver: &Operator, registered: Option<&OperatorAccount>) -> bool {
    match approver {
        Operator::Cli { .. } => true,
        Operator::Named(name) => registered
            .filter(|account| account.name == *name)
            .is_some_and(|account| named_decider(account).is_ok()),
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

/// An operator's personal token for `agentctl`: proof on the control plane that its holder is
/// that operator, so their approval counts toward a quorum. `aro_` and a `OneTimeSecret`; issued
/// from the operator's own console session, shown once, kept only hashed.
#[derive(Clone, PartialEq, Eq)]
pub struct OperatorToken(OneTimeSecret);

const OPERATOR_TOKEN_PREFIX: &str = "aro_";

impl OperatorToken {
    /// Encodes 256 random bits. The caller supplies the randomness so this stays pure.
    pub fn from_random_bytes(bytes: [u8; 32]) -> Self {
        Self(OneTimeSecret::from_random_bytes(bytes))
    }

    /// Reads a token as an operator typed or exported it (surrounding whitespace aside); `None`
    /// for anything that could not be one.
    pub fn parse(text: &str) -> Option<Self> {
        text.trim()
            .strip_prefix(OPERATOR_TOKEN_PREFIX)
            .and_then(OneTimeSecret::parse)
            .map(Self)
    }

    pub fn hash(&self) -> SecretHash {
        self.0.hash()
    }

    /// The token itself, for the one page it is shown on.
    pub fn expose(&self) -> String {
        format!("{OPERATOR_TOKEN_PREFIX}{}", self.0.expose())
    }
}

impl fmt::Debug for OperatorToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("OperatorToken(…)")
    }
}

/// How long a browser has to answer a passkey ceremony.
pub const CEREMONY_TTL: Duration = Duration::from_secs(5 * 60);

/// A sign-in ceremony the server began and keeps nothing of: the WebAuthn library's state of
/// it (its challenge) and when it expires, carried by the browser under the server's seal and
/// handed back with the passkey's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignInChallenge {
    /// Names the challenge once it is used: its use is recorded under this id until it expires.
    pub id: Uuid,
    /// To the second.
    pub expires_at: OffsetDateTime,
    /// The library's state, as JSON.
    pub state: String,
}

/// Why a sealed challenge is no challenge of this server's now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ChallengeRefused {
    /// Not sealed with the server's key: malformed, altered, or made elsewhere.
    #[error("the challenge is not this console's")]
    NotSealed,
    #[error("the challenge has expired")]
    Expired,
}

/// The longest sealed challenge read: a state is a few hundred bytes.
const MAX_SEALED_CHALLENGE_CHARS: usize = 4096;
const SEAL_VERSION: u8 = 1;
const SEAL_TAG_BYTES: usize = 32;
/// The version, the id and the expiry ahead of the state.
const SEAL_HEAD_BYTES: usize = 1 + 16 + 8;

/// Seals sign-in challenges with the server's key (HMAC-SHA-256 over the id, the expiry and the
/// state), so the browser carries them between the ceremony's two requests and none is kept
/// while it waits: anyone may ask for one, at no cost but a signature.
#[derive(Clone)]
pub struct ChallengeSeal {
    key: [u8; 32],
}

impl fmt::Debug for ChallengeSeal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ChallengeSeal(<key>)")
    }
}

impl ChallengeSeal {
    pub fn new(key: [u8; 32]) -> Self {
        Self { key }
    }

    fn tag(&self, body: &[u8]) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes any key");
        mac.update(b"console sign-in challenge");
        mac.update(body);
        mac
    }

    /// The challenge as the browser carries it: base64url, its seal at the end.
    pub fn seal(&self, challenge: &SignInChallenge) -> String {
        let mut bytes = Vec::with_capacity(SEAL_HEAD_BYTES + challenge.state.len());
        bytes.push(SEAL_VERSION);
        bytes.extend_from_slice(challenge.id.as_bytes());
        bytes.extend_from_slice(&challenge.expires_at.unix_timestamp().to_be_bytes());
        bytes.extend_from_slice(challenge.state.as_bytes());
        let tag = self.tag(&bytes).finalize().into_bytes();
        bytes.extend_from_slice(&tag);
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// The challenge `sealed` carries, when this key sealed it and it has not expired at `now`.
    pub fn open(
        &self,
        sealed: &str,
        now: OffsetDateTime,
    ) -> Result<SignInChallenge, ChallengeRefused> {
        if sealed.len() > MAX_SEALED_CHALLENGE_CHARS {
            return Err(ChallengeRefused::NotSealed);
        }
        let bytes = URL_SAFE_NO_PAD
            .decode(sealed)
            .map_err(|_| ChallengeRefused::NotSealed)?;
        if bytes.len() < SEAL_HEAD_BYTES + SEAL_TAG_BYTES || bytes[0] != SEAL_VERSION {
            return Err(ChallengeRefused::NotSealed);
        }
        let (body, tag) = bytes.split_at(bytes.len() - SEAL_TAG_BYTES);
        self.tag(body)
            .verify_slice(tag)
            .map_err(|_| ChallengeRefused::NotSealed)?;
        let id: [u8; 16] = body[1..17]
            .try_into()
            .map_err(|_| ChallengeRefused::NotSealed)?;
        let expiry: [u8; 8] = body[17..SEAL_HEAD_BYTES]
            .try_into()
            .map_err(|_| ChallengeRefused::NotSealed)?;
        let expires_at = OffsetDateTime::from_unix_timestamp(i64::from_be_bytes(expiry))
            .map_err(|_| ChallengeRefused::NotSealed)?;
        let state = String::from_utf8(body[SEAL_HEAD_BYTES..].to_vec())
            .map_err(|_| ChallengeRefused::NotSealed)?;
        if now >= expires_at {
            return Err(ChallengeRefused::Expired);
        }
        Ok(SignInChallenge {
            id: Uuid::from_bytes(id),
            expires_at,
            state,
        })
    }
}

/// What an operator did, as the audit log names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AuditAction {
    Invite,
    Enroll,
    Login,
    /// A sign-in with an operator's passkey was refused: a bad signature, or its counter went
    /// backwards. Only a passkey of an active operator is recorded: a failure counted against
    /// that passkey, which limits how many rows anyone can write.
    LoginFailed,
    Logout,
    Disable,
    Approve,
    Reject,
    Create,
    Deactivate,
    Rotate,
    PolicyChange,
    /// An operator issued themselves a personal token for `agentctl` (replacing any before).
    TokenIssue,
    TokenRevoke,
    /// A personal token proved its operator on the control plane.
    TokenUse,
    /// An agent key was made, by an operator or by another of the agent's keys.
    KeyCreate,
    /// An agent key was revoked, with the keys made from it.
    KeyRevoke,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is no audited action")]
pub struct UnknownAuditAction(pub String);

impl AuditAction {
    pub const ALL: [Self; 17] = [
        Self::Invite,
        Self::Enroll,
        Self::Login,
        Self::LoginFailed,
        Self::Logout,
        Self::Disable,
        Self::Approve,
        Self::Reject,
        Self::Create,
        Self::Deactivate,
        Self::Rotate,
        Self::PolicyChange,
        Self::TokenIssue,
        Self::TokenRevoke,
        Self::TokenUse,
        Self::KeyCreate,
        Self::KeyRevoke,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Invite => "invite",
            Self::Enroll => "enroll",
            Self::Login => "login",
            Self::LoginFailed => "login_failed",
            Self::Logout => "logout",
            Self::Disable => "disable",
            Self::Approve => "approve",
            Self::Reject => "reject",
            Self::Create => "create",
            Self::Deactivate => "deactivate",
            Self::Rotate => "rotate",
            Self::PolicyChange => "policy_change",
            Self::TokenIssue => "token_issue",
            Self::TokenRevoke => "token_revoke",
            Self::TokenUse => "token_use",
            Self::KeyCreate => "key_create",
            Self::KeyRevoke => "key_revoke",
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
    fn an_operator_decides_only_while_active_and_in_a_role_that_decides() {
        let bob = OperatorName::parse("bob").expect("valid");
        for role in [OperatorRole::Admin, OperatorRole::Approver] {
            assert_eq!(
                named_decider(&account(role, false)),
                Ok(Operator::Named(bob.clone()))
            );
            assert_eq!(
                named_decider(&account(role, true)),
                Err(NamedDecisionRefused::Disabled(bob.clone()))
            );
        }
        assert_eq!(
            named_decider(&account(OperatorRole::Viewer, false)),
            Err(NamedDecisionRefused::Viewer(bob.clone()))
        );
    }

    #[test]
    fn an_approval_counts_while_its_named_operator_may_decide() {
        let bob = Operator::Named(OperatorName::parse("bob").expect("valid"));
        let approver = account(OperatorRole::Approver, false);
        assert!(approval_counts(&bob, Some(&approver)));
        assert!(
            !approval_counts(&bob, Some(&account(OperatorRole::Approver, true))),
            "disabled since"
        );
        assert!(!approval_counts(&bob, None), "a name no operator holds");
        let carol = Operator::Named(OperatorName::parse("carol").expect("valid"));
        assert!(
            !approval_counts(&carol, Some(&approver)),
            "another's account"
        );
        assert!(approval_counts(&Operator::Cli { user: None }, None));
    }

    #[test]
    fn an_operator_token_reads_back_and_is_never_printed() {
        let token = OperatorToken::from_random_bytes([9; 32]);
        let text = token.expose();
        assert!(text.starts_with("aro_") && text.len() == 4 + 43, "{text}");
        assert_eq!(OperatorToken::parse(&text), Some(token.clone()));
        assert_eq!(
            OperatorToken::parse(&format!(" {text}\n")),
            Some(token.clone())
        );
        assert_ne!(
            token.hash(),
            OneTimeSecret::from_random_bytes([8; 32]).hash()
        );
        for garbage in ["", "aro_", &text[4..], &format!("ark_{}", &text[4..])] {
            assert_eq!(OperatorToken::parse(garbage), None, "{garbage:?}");
        }
        assert_eq!(format!("{token:?}"), "OperatorToken(…)");
    }

    fn challenge(state: &str) -> SignInChallenge {
        SignInChallenge {
            id: Uuid::from_bytes([3; 16]),
            expires_at: OffsetDateTime::from_unix_timestamp(1_800_000_000).expect("valid"),
            state: state.to_owned(),
        }
    }

    #[test]
    fn a_sealed_challenge_opens_under_its_key_until_it_expires() {
        let seal = ChallengeSeal::new([1; 32]);
        let issued = challenge(r#"{"challenge":"abc"}"#);
        let sealed = seal.seal(&issued);
        let before = issued.expires_at - Duration::from_secs(1);
        assert_eq!(seal.open(&sealed, before), Ok(issued.clone()));
        assert_eq!(
            seal.open(&sealed, issued.expires_at),
            Err(ChallengeRefused::Expired)
        );
        assert_eq!(
            ChallengeSeal::new([2; 32]).open(&sealed, before),
            Err(ChallengeRefused::NotSealed),
            "another key"
        );
        assert_eq!(format!("{seal:?}"), "ChallengeSeal(<key>)");
    }

    #[test]
    fn a_challenge_altered_in_any_byte_or_of_another_shape_does_not_open() {
        let seal = ChallengeSeal::new([1; 32]);
        let issued = challenge(r#"{"challenge":"abc"}"#);
        let before = issued.expires_at - Duration::from_secs(1);
        let bytes = URL_SAFE_NO_PAD
            .decode(seal.seal(&issued))
            .expect("base64url");
        for position in 0..bytes.len() {
            let mut altered = bytes.clone();
            altered[position] ^= 1;
            assert_eq!(
                seal.open(&URL_SAFE_NO_PAD.encode(&altered), before),
                Err(ChallengeRefused::NotSealed),
                "byte {position}"
            );
        }
        for garbage in ["", "not base64!", "AAAA", &"A".repeat(5000)] {
            assert_eq!(
                seal.open(garbage, before),
                Err(ChallengeRefused::NotSealed),
                "{garbage:?}"
            );
        }
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
