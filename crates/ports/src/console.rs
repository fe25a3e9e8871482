//! The operator console's side of the store (operators, enrollment links, passkeys, sessions,
//! registrations in progress, the challenges used and the failed sign-ins, personal tokens, the
//! audit log) and the passkey ceremonies themselves. Every operator action writes its audit row in
//! its own transaction.

use std::time::Duration;

use async_trait::async_trait;
use domain::{
    Actor, AuditRecord, OperatorAccount, OperatorId, OperatorName, OperatorRole, RateDecision,
    RateLimit, SecretHash,
};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::StoreError;

/// An operator to register, with the hash of the enrollment link's token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewOperator {
    pub id: OperatorId,
    pub name: OperatorName,
    pub role: OperatorRole,
    pub enrollment: SecretHash,
    /// How long the link stays open.
    pub enrollment_ttl: Duration,
}

/// A passkey as the WebAuthn library keeps it: its credential's id, and the library's own
/// record of it (public key, signature counter) as JSON, which only the passkeys' adapter reads.
#[derive(Clone, PartialEq, Eq)]
pub struct StoredPasskey {
    pub credential_id: Vec<u8>,
    pub record: String,
}

impl std::fmt::Debug for StoredPasskey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredPasskey")
            .field("credential_id", &self.credential_id.len())
            .finish_non_exhaustive()
    }
}

/// A passkey's registration under way, kept server-side until the browser answers: the
/// enrollment link it is for (its token's hash) and the library's state. Sign-ins keep nothing:
/// their challenge travels sealed (`domain::ChallengeSeal`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ceremony {
    pub id: Uuid,
    pub enrollment: SecretHash,
    /// The library's state, as JSON.
    pub state: String,
}

/// A sign-in challenge that signed someone in: no second answer to it is taken until
/// `kept_until`, past the last moment any instance would still take it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UsedChallenge {
    pub id: Uuid,
    pub kept_until: OffsetDateTime,
}

/// A sign-in refused with an operator's passkey, as the audit log records it: the operator whose
/// passkey it is, with the address the attempt came from, and why it was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedSignIn {
    pub actor: Actor,
    pub reason: String,
}

/// What came of opening a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionOpening {
    Opened,
    /// The operator was disabled meanwhile: nothing opened.
    OperatorDisabled,
    /// The challenge signed someone in before: a replay, nothing opened.
    ChallengeUsed,
}

/// An operator's live personal token, as its page shows it (never the token).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenRecord {
    pub created_at: OffsetDateTime,
    pub last_used_at: Option<OffsetDateTime>,
}

/// A session to open: the hash of its cookie's token and its CSRF token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSession {
    pub token: SecretHash,
    pub csrf: String,
}

/// A live session: whose it is, and the CSRF token every change it asks for must carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRecord {
    pub operator: OperatorAccount,
    pub csrf: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OperatorStoreError {
    #[error("an operator named {0} exists already")]
    NameTaken(OperatorName),
    /// The enrollment link was used, has expired, or its operator was disabled.
    #[error("the enrollment link is no longer valid")]
    EnrollmentClosed,
    #[error("this passkey is registered already")]
    PasskeyTaken,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A page of the audit log, newest first, strictly before `before` when given, of one target's
/// rows when `target` is given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditPage {
    pub before: Option<(OffsetDateTime, Uuid)>,
    pub target: Option<String>,
    pub limit: usize,
}

/// Operators, their enrollment links and passkey registrations under way; used by `ConsoleAccess`.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait OperatorAccounts: Send + Sync {
    /// Registers `operator` with its enrollment link, audited as `actor`'s invitation.
    async fn invite(
        &self,
        operator: NewOperator,
        actor: &Actor,
    ) -> Result<OperatorAccount, OperatorStoreError>;

    async fn list(&self) -> Result<Vec<OperatorAccount>, StoreError>;

    /// Disables the operator named `name` and ends every session of theirs at once, audited as
    /// `actor`'s; `None` when there is no such operator. Disabling a disabled one changes nothing.
    async fn disable(
        &self,
        name: &OperatorName,
        actor: &Actor,
    ) -> Result<Option<OperatorAccount>, StoreError>;

    /// The operator an enrollment link opens the console to: only while it is unused, unexpired
    /// and its operator active.
    async fn enrollment(&self, token: SecretHash) -> Result<Option<OperatorAccount>, StoreError>;

    /// Keeps a registration's state until `expires_in` has passed.
    async fn begin_ceremony(
        &self,
        ceremony: Ceremony,
        expires_in: Duration,
    ) -> Result<(), StoreError>;

    /// Takes a registration under way, once: `None` when it never was, was taken, or has
    /// expired.
    async fn take_ceremony(&self, id: Uuid) -> Result<Option<Ceremony>, StoreError>;

    /// Registers `passkey` for the operator of the enrollment link and uses the link up, audited
    /// as that operator's enrollment from `address`.
    async fn enroll(
        &self,
        enrollment: SecretHash,
        passkey: StoredPasskey,
        address: Option<String>,
    ) -> Result<OperatorAccount, OperatorStoreError>;
}

/// Passkey sign-ins (challenge key, passkeys, failed tries) and sessions; used by `ConsoleAccess`.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait ConsoleSessions: Send + Sync {
    /// The key sign-in challenges are sealed with, the same for every instance: the one kept,
    /// else `drawn`, kept from now on.
    async fn challenge_key(&self, drawn: [u8; 32]) -> Result<[u8; 32], StoreError>;

    /// A passkey by its credential's id, with its operator.
    async fn passkey(
        &self,
        credential_id: &[u8],
    ) -> Result<Option<(OperatorAccount, StoredPasskey)>, StoreError>;

    /// Whether the passkey `credential_id` may be tried again: its bucket of failed sign-ins,
    /// read without taking from it.
    async fn failed_sign_ins(
        &self,
        credential_id: &[u8],
        limit: RateLimit,
    ) -> Result<RateDecision, StoreError>;

    /// Counts a failed sign-in against the passkey `credential_id`, in its own bucket (a wrong
    /// guess at one passkey holds back no other), audited as `failure` says in the same
    /// transaction.
    async fn count_failed_sign_in(
        &self,
        credential_id: &[u8],
        limit: RateLimit,
        failure: FailedSignIn,
    ) -> Result<(), StoreError>;

    /// Opens a session for the operator who signed in with `passkey` (kept with its new
    /// counter) by answering `challenge`, which is recorded as used in the same transaction,
    /// audited as their login from `address`. Nothing is opened when the operator was disabled
    /// meanwhile, or the challenge signed someone in before.
    async fn open_session(
        &self,
        operator: OperatorId,
        passkey: StoredPasskey,
        session: NewSession,
        challenge: UsedChallenge,
        address: Option<String>,
    ) -> Result<SessionOpening, StoreError>;

    /// The live session behind `token`, marked as seen now when `touch` says so (a request of
    /// the operator's, not a page that stays open): only while its operator is active and it was
    /// seen within `idle`. An idle one is closed.
    async fn session(
        &self,
        token: SecretHash,
        idle: Duration,
        touch: bool,
    ) -> Result<Option<SessionRecord>, StoreError>;

    /// Closes the session behind `token`, audited as its operator's logout from `address`.
    async fn close_session(
        &self,
        token: SecretHash,
        address: Option<String>,
    ) -> Result<(), StoreError>;
}

/// Operators' personal tokens for the control plane; used by `ConsoleAccess`.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait OperatorTokens: Send + Sync {
    /// Issues `operator` the personal token hashing to `token`, revoking the one they had,
    /// audited as `actor`'s; `false`, and nothing issued, when the operator is disabled.
    async fn issue_token(
        &self,
        operator: OperatorId,
        token: SecretHash,
        actor: &Actor,
    ) -> Result<bool, StoreError>;

    /// Revokes the live personal token of the operator named `name`, audited as `actor`'s:
    /// `None` when no operator has that name, `Some(false)` when they had no live token.
    async fn revoke_token(
        &self,
        name: &OperatorName,
        actor: &Actor,
    ) -> Result<Option<bool>, StoreError>;

    /// The operator's live personal token, when they have one.
    async fn token_of(&self, operator: OperatorId) -> Result<Option<TokenRecord>, StoreError>;

    /// The active operator whose live personal token hashes to `token`, its use audited as
    /// theirs on `target`; `None`, and nothing recorded, for a token revoked, replaced, never
    /// issued, or of an operator disabled.
    async fn use_token(
        &self,
        token: SecretHash,
        target: Option<String>,
    ) -> Result<Option<OperatorAccount>, StoreError>;
}

/// The operators' audit log, read a page at a time; used by `ConsoleAccess`.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait AuditLog: Send + Sync {
    /// A page of the audit log, newest first.
    async fn audit(&self, page: AuditPage) -> Result<Vec<(Uuid, AuditRecord)>, StoreError>;
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PasskeyError {
    /// What the browser sent is not an answer to the ceremony: malformed, for another challenge
    /// or origin, without user verification, or its signature does not hold.
    #[error("the passkey's answer was refused: {0}")]
    Refused(String),
    /// The answer's signature counter is not past the one kept: the passkey may have been copied,
    /// and the copy used.
    #[error("the passkey's signature counter went backwards")]
    CounterWentBack,
    #[error("the passkey ceremony failed: {0}")]
    Internal(String),
}

/// The WebAuthn ceremonies, as JSON in and out: the options a browser passes to
/// `navigator.credentials`, the state kept server-side meanwhile, and what the browser answers.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait Passkeys: Send + Sync {
    /// Options to register a discoverable passkey (resident key, user verification) for
    /// `operator`, and the state to keep.
    fn start_registration(
        &self,
        operator: &OperatorAccount,
    ) -> Result<(String, String), PasskeyError>;

    /// The passkey the browser's `answer` registered.
    fn finish_registration(&self, answer: &str, state: &str)
        -> Result<StoredPasskey, PasskeyError>;

    /// Options to sign in with any passkey of this site (no name asked), and the state to find
    /// again at the answer (the way in seals it for the browser to carry).
    fn start_authentication(&self) -> Result<(String, String), PasskeyError>;

    /// The id of the credential the browser's `answer` signed with.
    fn identify(&self, answer: &str) -> Result<Vec<u8>, PasskeyError>;

    /// Checks the browser's `answer` against `passkey`; the passkey with its counter moved on.
    fn finish_authentication(
        &self,
        answer: &str,
        state: &str,
        passkey: &StoredPasskey,
    ) -> Result<StoredPasskey, PasskeyError>;
}
