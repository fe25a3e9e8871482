//! Who enters the operator console (console.md): operators invited by the control plane, each
//! enrolling a passkey through a one-time link, then signing in with it to a server-side
//! session. Every step that changes something is audited by the store in its own transaction.

use std::sync::Arc;
use std::time::Duration;

use domain::{
    named_decider, Actor, AuditRecord, AuditTarget, IntentId, NamedDecisionRefused, OneTimeSecret,
    Operator, OperatorAccount, OperatorId, OperatorName, OperatorRole, RateDecision, RateLimit,
    ENROLLMENT_TTL, SESSION_IDLE_TIMEOUT,
};
use ports::{
    AuditPage, Ceremony, CeremonyKind, NewOperator, NewSession, OperatorStore, OperatorStoreError,
    PasskeyError, Passkeys, StoreError,
};
use rand::RngCore;
use time::OffsetDateTime;
use uuid::Uuid;

/// How long a browser has to answer a passkey ceremony.
pub const CEREMONY_TTL: Duration = Duration::from_secs(5 * 60);

/// Sign-in attempts of one client address: ten, then one every six seconds.
pub const SIGN_IN_RATE: RateLimit = RateLimit {
    per_minute: 10,
    burst: 10,
};

/// A new operator and the link that enrolls them, which holds the one-time secret: shown once.
#[derive(Debug, Clone)]
pub struct Invitation {
    pub operator: OperatorAccount,
    pub enroll_url: String,
}

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

/// A new session: the secret for the browser's cookie, shown once, and the session.
#[derive(Debug, Clone)]
pub struct SignedIn {
    pub cookie: OneTimeSecret,
    pub session: ConsoleSession,
}

/// A passkey ceremony begun: its id, which the browser sends back with its answer, and the
/// options for `navigator.credentials` (JSON).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CeremonyStart {
    pub id: Uuid,
    pub options: String,
}

#[derive(Debug, thiserror::Error)]
pub enum InviteError {
    #[error("an operator named {0} exists already")]
    NameTaken(OperatorName),
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Debug, thiserror::Error)]
pub enum DisableError {
    #[error("no operator is named {0}")]
    NotFound(OperatorName),
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Debug, thiserror::Error)]
pub enum NamedDeciderError {
    #[error(transparent)]
    Refused(#[from] NamedDecisionRefused),
    #[error(transparent)]
    Store(#[from] StoreError),
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
    #[error("This passkey is registered already.")]
    PasskeyTaken,
    #[error("No operator of this console has that passkey, or they were disabled.")]
    UnknownPasskey,
    #[error("Too many sign-in attempts from this address: try again in {} s.", .retry_after.as_secs().max(1))]
    TooManyAttempts { retry_after: Duration },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<PasskeyError> for AccessError {
    fn from(error: PasskeyError) -> Self {
        match error {
            PasskeyError::Refused(why) => Self::Passkey(why),
            PasskeyError::Internal(why) => Self::Store(StoreError::Internal(why)),
        }
    }
}

pub struct ConsoleAccess {
    operators: Arc<dyn OperatorStore>,
    passkeys: Arc<dyn Passkeys>,
    /// Where the console is reached, without a trailing slash: enrollment links start with it.
    public_base_url: String,
}

/// A new CSRF token, for a page shown before any session (its session's token is the store's).
pub fn new_csrf_token() -> String {
    random_secret().expose().to_owned()
}

fn random_secret() -> OneTimeSecret {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    OneTimeSecret::from_random_bytes(bytes)
}

impl ConsoleAccess {
    pub fn new(
        operators: Arc<dyn OperatorStore>,
        passkeys: Arc<dyn Passkeys>,
        public_base_url: String,
    ) -> Self {
        Self {
            operators,
            passkeys,
            public_base_url,
        }
    }

    /// Registers an operator and makes the one-time link that enrolls them, valid 24 hours.
    #[tracing::instrument(level = "debug", skip(self, actor))]
    pub async fn invite(
        &self,
        name: OperatorName,
        role: OperatorRole,
        actor: &Actor,
    ) -> Result<Invitation, InviteError> {
        let token = random_secret();
        let operator = self
            .operators
            .invite(
                NewOperator {
                    id: OperatorId(Uuid::now_v7()),
                    name,
                    role,
                    enrollment: token.hash(),
                    enrollment_ttl: ENROLLMENT_TTL,
                },
                actor,
            )
            .await
            .map_err(|error| match error {
                OperatorStoreError::NameTaken(name) => InviteError::NameTaken(name),
                other => InviteError::Store(store_error(other)),
            })?;
        Ok(Invitation {
            operator,
            enroll_url: format!("{}/console/enroll/{}", self.public_base_url, token.expose()),
        })
    }

    pub async fn list(&self) -> Result<Vec<OperatorAccount>, StoreError> {
        self.operators.list().await
    }

    /// The principal a decision the control plane takes under `name` records
    /// (`domain::named_decider`): not a disabled operator's name, nor a viewer's.
    pub async fn named_decider(&self, name: OperatorName) -> Result<Operator, NamedDeciderError> {
        let operators = self.operators.list().await?;
        let registered = operators.iter().find(|account| account.name == name);
        Ok(named_decider(name, registered)?)
    }

    /// Disables the operator: their sessions end at once and nothing of theirs opens the
    /// console again.
    pub async fn disable(
        &self,
        name: OperatorName,
        actor: &Actor,
    ) -> Result<OperatorAccount, DisableError> {
        self.operators
            .disable(&name, actor)
            .await?
            .ok_or(DisableError::NotFound(name))
    }

    /// The operator an enrollment link (its secret, as the URL carries it) is for, while open.
    pub async fn enrollment(&self, token: &str) -> Result<OperatorAccount, AccessError> {
        let token = OneTimeSecret::parse(token).ok_or(AccessError::LinkClosed)?;
        self.operators
            .enrollment(token.hash())
            .await?
            .ok_or(AccessError::LinkClosed)
    }

    /// Begins registering a passkey through the enrollment link `token`.
    pub async fn registration_options(&self, token: &str) -> Result<CeremonyStart, AccessError> {
        let operator = self.enrollment(token).await?;
        let enrollment = OneTimeSecret::parse(token)
            .ok_or(AccessError::LinkClosed)?
            .hash();
        let (options, state) = self.passkeys.start_registration(&operator)?;
        let id = Uuid::now_v7();
        self.operators
            .begin_ceremony(
                Ceremony {
                    id,
                    kind: CeremonyKind::Registration { enrollment },
                    state,
                },
                CEREMONY_TTL,
            )
            .await?;
        Ok(CeremonyStart { id, options })
    }

    /// Registers the passkey the browser's `answer` created in ceremony `id`, and uses the
    /// enrollment link up.
    #[tracing::instrument(level = "debug", skip(self, answer))]
    pub async fn register(
        &self,
        id: Uuid,
        answer: &str,
        address: Option<String>,
    ) -> Result<OperatorAccount, AccessError> {
        let Some(Ceremony {
            kind: CeremonyKind::Registration { enrollment },
            state,
            ..
        }) = self.operators.take_ceremony(id).await?
        else {
            return Err(AccessError::CeremonyGone);
        };
        let passkey = self.passkeys.finish_registration(answer, &state)?;
        self.operators
            .enroll(enrollment, passkey, address)
            .await
            .map_err(|error| match error {
                OperatorStoreError::EnrollmentClosed => AccessError::LinkClosed,
                OperatorStoreError::PasskeyTaken => AccessError::PasskeyTaken,
                other => AccessError::Store(store_error(other)),
            })
    }

    /// Begins a sign-in from the client address `address`, once its attempts allow.
    pub async fn sign_in_options(&self, address: &str) -> Result<CeremonyStart, AccessError> {
        if let RateDecision::Limited { retry_after } = self
            .operators
            .take_sign_in_attempt(address, SIGN_IN_RATE)
            .await?
        {
            return Err(AccessError::TooManyAttempts { retry_after });
        }
        let (options, state) = self.passkeys.start_authentication()?;
        let id = Uuid::now_v7();
        self.operators
            .begin_ceremony(
                Ceremony {
                    id,
                    kind: CeremonyKind::Authentication,
                    state,
                },
                CEREMONY_TTL,
            )
            .await?;
        Ok(CeremonyStart { id, options })
    }

    /// Signs in the operator whose passkey made the browser's `answer` in ceremony `id`.
    #[tracing::instrument(level = "debug", skip(self, answer))]
    pub async fn sign_in(
        &self,
        id: Uuid,
        answer: &str,
        address: Option<String>,
    ) -> Result<SignedIn, AccessError> {
        let Some(Ceremony {
            kind: CeremonyKind::Authentication,
            state,
            ..
        }) = self.operators.take_ceremony(id).await?
        else {
            return Err(AccessError::CeremonyGone);
        };
        let credential = self.passkeys.identify(answer)?;
        let (operator, passkey) = self
            .operators
            .passkey(&credential)
            .await?
            .filter(|(operator, _)| operator.is_active())
            .ok_or(AccessError::UnknownPasskey)?;
        let passkey = self
            .passkeys
            .finish_authentication(answer, &state, &passkey)?;
        let cookie = random_secret();
        let csrf = new_csrf_token();
        let opened = self
            .operators
            .open_session(
                operator.id,
                passkey,
                NewSession {
                    token: cookie.hash(),
                    csrf: csrf.clone(),
                },
                address,
            )
            .await?;
        if !opened {
            return Err(AccessError::UnknownPasskey);
        }
        Ok(SignedIn {
            cookie,
            session: ConsoleSession { operator, csrf },
        })
    }

    /// The session behind the browser's cookie, while it lives, seen now: a request of its
    /// operator's.
    pub async fn session(&self, cookie: &str) -> Result<Option<ConsoleSession>, StoreError> {
        self.session_seen(cookie, true).await
    }

    /// The session behind the cookie while it lives, read for a page left open (its live list),
    /// which does not count as its operator's activity: an unattended page lets it go idle.
    pub async fn watching(&self, cookie: &str) -> Result<Option<ConsoleSession>, StoreError> {
        self.session_seen(cookie, false).await
    }

    async fn session_seen(
        &self,
        cookie: &str,
        touch: bool,
    ) -> Result<Option<ConsoleSession>, StoreError> {
        let Some(cookie) = OneTimeSecret::parse(cookie) else {
            return Ok(None);
        };
        Ok(self
            .operators
            .session(cookie.hash(), SESSION_IDLE_TIMEOUT, touch)
            .await?
            .map(|session| ConsoleSession {
                operator: session.operator,
                csrf: session.csrf,
            }))
    }

    pub async fn sign_out(&self, cookie: &str, address: Option<String>) -> Result<(), StoreError> {
        match OneTimeSecret::parse(cookie) {
            Some(cookie) => self.operators.close_session(cookie.hash(), address).await,
            None => Ok(()),
        }
    }

    /// A page of the audit log, newest first, before the row `before` when given.
    pub async fn audit(
        &self,
        before: Option<(OffsetDateTime, Uuid)>,
        limit: usize,
    ) -> Result<Vec<(Uuid, AuditRecord)>, StoreError> {
        self.operators
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
            .operators
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
mod tests {
    use super::*;
    use ports::{MockOperatorStore, MockPasskeys};

    fn registry_of(accounts: Vec<OperatorAccount>) -> ConsoleAccess {
        let mut operators = MockOperatorStore::new();
        operators
            .expect_list()
            .returning(move || Ok(accounts.clone()));
        ConsoleAccess::new(
            Arc::new(operators),
            Arc::new(MockPasskeys::new()),
            "https://console.test".to_owned(),
        )
    }

    fn name(name: &str) -> OperatorName {
        OperatorName::parse(name).expect("valid")
    }

    #[tokio::test]
    async fn the_control_plane_decides_under_a_disabled_operators_name_never() {
        let carol = OperatorAccount {
            id: OperatorId(Uuid::now_v7()),
            name: name("carol"),
            role: OperatorRole::Approver,
            created_at: OffsetDateTime::UNIX_EPOCH,
            disabled_at: Some(OffsetDateTime::UNIX_EPOCH),
        };
        let access = registry_of(vec![carol]);
        assert!(matches!(
            access.named_decider(name("carol")).await,
            Err(NamedDeciderError::Refused(NamedDecisionRefused::Disabled(
                _
            )))
        ));
        assert_eq!(
            access
                .named_decider(name("dave"))
                .await
                .expect("unregistered"),
            Operator::Named(name("dave"))
        );
    }
}
