//! The operator console's side of the store (operators, enrollment links, passkeys, sessions,
//! ceremonies in progress, the audit log) and the passkey ceremonies themselves.

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

/// What a WebAuthn ceremony under way keeps server-side until the browser answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CeremonyKind {
    /// A passkey's registration through an enrollment link (its token's hash).
    Registration {
        enrollment: SecretHash,
    },
    Authentication,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ceremony {
    pub id: Uuid,
    pub kind: CeremonyKind,
    /// The library's state, as JSON.
    pub state: String,
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

/// The console's accounts and what they do. Every operator action writes its audit row in its
/// own transaction.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait OperatorStore: Send + Sync {
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

    /// Keeps a ceremony's state until `expires_in` has passed.
    async fn begin_ceremony(
        &self,
        ceremony: Ceremony,
        expires_in: Duration,
    ) -> Result<(), StoreError>;

    /// Takes a ceremony under way, once: `None` when it never was, was taken, or has expired.
    async fn take_ceremony(&self, id: Uuid) -> Result<Option<Ceremony>, StoreError>;

    /// Registers `passkey` for the operator of the enrollment link and uses the link up, audited
    /// as that operator's enrollment from `address`.
    async fn enroll(
        &self,
        enrollment: SecretHash,
        passkey: StoredPasskey,
        address: Option<String>,
    ) -> Result<OperatorAccount, OperatorStoreError>;

    /// A passkey by its credential's id, with its operator.
    async fn passkey(
        &self,
        credential_id: &[u8],
    ) -> Result<Option<(OperatorAccount, StoredPasskey)>, StoreError>;

    /// Opens a session for the operator who signed in with `passkey` (kept with its new
    /// counter), audited as their login from `address`; `false`, and nothing opened, when the
    /// operator was disabled meanwhile.
    async fn open_session(
        &self,
        operator: OperatorId,
        passkey: StoredPasskey,
        session: NewSession,
        address: Option<String>,
    ) -> Result<bool, StoreError>;

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

    /// Takes one sign-in attempt from the bucket of the client address `address`.
    async fn take_sign_in_attempt(
        &self,
        address: &str,
        limit: RateLimit,
    ) -> Result<RateDecision, StoreError>;

    /// A page of the audit log, newest first.
    async fn audit(&self, page: AuditPage) -> Result<Vec<(Uuid, AuditRecord)>, StoreError>;
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PasskeyError {
    /// What the browser sent is not an answer to the ceremony: malformed, for another challenge
    /// or origin, without user verification, or its signature does not hold.
    #[error("the passkey's answer was refused: {0}")]
    Refused(String),
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

    /// Options to sign in with any passkey of this site (no name asked), and the state to keep.
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
