//! Who enters the operator console (console.md): operators invited by the control plane, each
//! enrolling a passkey through a one-time link, then signing in with it to a server-side
//! session; and who proves to be an operator on the control plane, by the personal token they
//! issued themselves from that session. Every step that changes something is audited by the
//! store in its own transaction.

mod enrollment;
mod sessions;
mod tokens;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use domain::{
    Actor, AuditRecord, AuditTarget, ChallengeSeal, IntentId, OneTimeSecret, OperatorAccount,
};
use ports::{
    AuditLog, AuditPage, ConsoleSessions, OperatorAccounts, OperatorStoreError, OperatorTokens,
    PasskeyError, Passkeys, StoreError,
};
use rand::RngCore;
use time::OffsetDateTime;
use uuid::Uuid;

pub use enrollment::{DisableError, Invitation, InviteError};
pub use sessions::{SignedIn, FAILED_SIGN_IN_RATE};
pub use tokens::{ProofError, RevokeTokenError, TokenError};

/// A signed-in operator, and the CSRF token every change they ask for must carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsoleSession {
    pub operator: OperatorAccount,
    pub csrf: String,
}

impl ConsoleSession {
    /// The operator acting from `address`, as an audited action records them.
    pub fn actor(&self, address: Option<String>) -> Actor {
        Actor {
            operator: self.operator.principal(),
            address,
        }
    }
}

/// A passkey ceremony begun: what the browser sends back with its answer (a registration's id,
/// or a sign-in's sealed challenge), and the options for `navigator.credentials` (JSON).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CeremonyStart {
    pub ceremony: String,
    pub options: String,
}

/// Why a way into the console was refused. The texts are the ones the console shows.
#[derive(Debug, thiserror::Error)]
pub enum AccessError {
    #[error("This enrollment link is not valid: it was used, has expired, or its operator was disabled.")]
    LinkClosed,
    #[error("This passkey step has expired or was already used: start again.")]
    CeremonyGone,
    #[error("The passkey was not accepted: {0}")]
    Passkey(String),
    /// Said in the console's words, not the library's: the operator decides what to do.
    #[error(
        "This passkey was refused: its signature counter went backwards, as it does when a copy \
         of the passkey is used. The attempt is in the audit log; if you did not copy your \
         passkey, tell an admin."
    )]
    CounterWentBack,
    #[error("This passkey is registered already.")]
    PasskeyTaken,
    #[error("No operator of this console has that passkey, or they were disabled.")]
    UnknownPasskey,
    #[error("Too many failed sign-ins with this passkey: try again in {} s.", .retry_after.as_secs().max(1))]
    TooManyAttempts { retry_after: Duration },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<PasskeyError> for AccessError {
    fn from(error: PasskeyError) -> Self {
        match error {
            PasskeyError::Refused(why) => Self::Passkey(why),
            PasskeyError::CounterWentBack => Self::CounterWentBack,
            PasskeyError::Internal(why) => Self::Store(StoreError::Internal(why)),
        }
    }
}

/// What the console's access keeps in the store.
pub struct ConsoleStores {
    /// The operators, their enrollment links and the passkey registrations under way.
    pub accounts: Arc<dyn OperatorAccounts>,
    /// Sign-ins with a passkey, and the sessions they open.
    pub sessions: Arc<dyn ConsoleSessions>,
    /// The operators' personal tokens.
    pub tokens: Arc<dyn OperatorTokens>,
    pub audit: Arc<dyn AuditLog>,
}

pub struct ConsoleAccess {
    accounts: Arc<dyn OperatorAccounts>,
    sessions: Arc<dyn ConsoleSessions>,
    tokens: Arc<dyn OperatorTokens>,
    audit: Arc<dyn AuditLog>,
    passkeys: Arc<dyn Passkeys>,
    /// Where the console is reached, without a trailing slash: enrollment links start with it.
    public_base_url: String,
    /// The seal of sign-in challenges, under the key every instance shares, read once.
    seal: OnceLock<ChallengeSeal>,
}

/// A new CSRF token, for a page shown before any session (its session's token is the store's).
pub fn new_csrf_token() -> String {
    random_secret().expose().to_owned()
}

fn random_bytes() -> [u8; 32] {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    bytes
}

fn random_secret() -> OneTimeSecret {
    OneTimeSecret::from_random_bytes(random_bytes())
}

impl ConsoleAccess {
    pub fn new(
        stores: ConsoleStores,
        passkeys: Arc<dyn Passkeys>,
        public_base_url: String,
    ) -> Self {
        Self {
            accounts: stores.accounts,
            sessions: stores.sessions,
            tokens: stores.tokens,
            audit: stores.audit,
            passkeys,
            public_base_url,
            seal: OnceLock::new(),
        }
    }

    /// A page of the audit log, newest first, before the row `before` when given.
    pub async fn audit(
        &self,
        before: Option<(OffsetDateTime, Uuid)>,
        limit: usize,
    ) -> Result<Vec<(Uuid, AuditRecord)>, StoreError> {
        self.audit
            .audit(AuditPage {
                before,
                target: None,
                limit,
            })
            .await
    }

    /// The decisions operators took on an intent, newest first: its rows of the audit log.
    pub async fn decisions_on(
        &self,
        intent: IntentId,
        limit: usize,
    ) -> Result<Vec<AuditRecord>, StoreError> {
        let rows = self
            .audit
            .audit(AuditPage {
                before: None,
                target: Some(AuditTarget::Intent(intent).to_string()),
                limit,
            })
            .await?;
        Ok(rows.into_iter().map(|(_, record)| record).collect())
    }
}

fn store_error(error: OperatorStoreError) -> StoreError {
    match error {
        OperatorStoreError::Store(store) => store,
        other => StoreError::Internal(other.to_string()),
    }
}

#[cfg(test)]
mod fixtures {
    use super::*;
    use domain::{OperatorAccount, OperatorId, OperatorName, OperatorRole};
    use ports::{
        MockAuditLog, MockConsoleSessions, MockOperatorAccounts, MockOperatorTokens, MockPasskeys,
    };

    pub(super) fn name(name: &str) -> OperatorName {
        OperatorName::parse(name).expect("valid")
    }

    pub(super) fn account(role: OperatorRole, disabled: bool) -> OperatorAccount {
        OperatorAccount {
            id: OperatorId(Uuid::now_v7()),
            name: name("alice"),
            role,
            created_at: OffsetDateTime::UNIX_EPOCH,
            disabled_at: disabled.then_some(OffsetDateTime::UNIX_EPOCH),
        }
    }

    /// The console's stores, mocked: each expects only what a test tells it.
    #[derive(Default)]
    pub(super) struct Stores {
        pub(super) accounts: MockOperatorAccounts,
        pub(super) sessions: MockConsoleSessions,
        pub(super) tokens: MockOperatorTokens,
        pub(super) audit: MockAuditLog,
    }

    pub(super) fn access(operators: Stores, passkeys: MockPasskeys) -> ConsoleAccess {
        ConsoleAccess::new(
            ConsoleStores {
                accounts: Arc::new(operators.accounts),
                sessions: Arc::new(operators.sessions),
                tokens: Arc::new(operators.tokens),
                audit: Arc::new(operators.audit),
            },
            Arc::new(passkeys),
            "https://console.test".to_owned(),
        )
    }
}
