//! Who enters the operator console (console.md): operators invited by the control plane, each
//! enrolling a passkey through a one-time link, then signing in with it to a server-side
//! session; and who proves to be an operator on the control plane, by the personal token they
//! issued themselves from that session. Every step that changes something is audited by the
//! store in its own transaction.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use domain::{
    named_decider, Actor, AuditRecord, AuditTarget, ChallengeSeal, IntentId, NamedDecisionRefused,
    OneTimeSecret, Operator, OperatorAccount, OperatorId, OperatorName, OperatorRole,
    OperatorToken, RateDecision, RateLimit, SignInChallenge, CEREMONY_TTL, ENROLLMENT_TTL,
    SESSION_IDLE_TIMEOUT,
};
use ports::{
    AuditLog, AuditPage, Ceremony, ConsoleSessions, NewOperator, NewSession, OperatorAccounts,
    OperatorStoreError, OperatorTokens, PasskeyError, Passkeys, SessionOpening, StoreError,
    TokenRecord, UsedChallenge,
};
use rand::RngCore;
use time::OffsetDateTime;
use uuid::Uuid;

/// Failed sign-ins with one passkey: ten, then one every six seconds. Counted per passkey, so
/// wrong guesses at one operator's hold back no other, whatever address they come from.
pub const FAILED_SIGN_IN_RATE: RateLimit = RateLimit {
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

/// A passkey ceremony begun: what the browser sends back with its answer (a registration's id,
/// or a sign-in's sealed challenge), and the options for `navigator.credentials` (JSON).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CeremonyStart {
    pub ceremony: String,
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

/// Why a personal token proves no operator who may decide.
#[derive(Debug, thiserror::Error)]
pub enum ProofError {
    #[error(
        "this operator token proves nobody: it was revoked or replaced by a newer one, or its \
         operator was disabled"
    )]
    Invalid,
    #[error(transparent)]
    Refused(#[from] NamedDecisionRefused),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Why no personal token was revoked.
#[derive(Debug, thiserror::Error)]
pub enum RevokeTokenError {
    #[error("no operator is named {0}")]
    NotFound(OperatorName),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Why no personal token was issued.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("Viewers approve nothing: they have no token for agentctl.")]
    Viewer,
    #[error("This operator was disabled: no token is issued.")]
    Disabled,
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
    #[error("Too many failed sign-ins with this passkey: try again in {} s.", .retry_after.as_secs().max(1))]
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

    /// The seal of sign-in challenges: its key is the store's, drawn by the first instance.
    async fn seal(&self) -> Result<&ChallengeSeal, StoreError> {
        if let Some(seal) = self.seal.get() {
            return Ok(seal);
        }
        let key = self.sessions.challenge_key(random_bytes()).await?;
        Ok(self.seal.get_or_init(|| ChallengeSeal::new(key)))
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
            .accounts
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
        self.accounts.list().await
    }

    /// The operator whose personal token `token` is, as the principal of a decision on
    /// `target`: the token's use is audited, and only an active operator whose role decides is
    /// proven (`domain::named_decider`).
    pub async fn prove(
        &self,
        token: &str,
        target: AuditTarget<'_>,
    ) -> Result<Operator, ProofError> {
        let token = OperatorToken::parse(token).ok_or(ProofError::Invalid)?;
        let account = self
            .tokens
            .use_token(token.hash(), Some(target.to_string()))
            .await?
            .ok_or(ProofError::Invalid)?;
        Ok(named_decider(&account)?)
    }

    /// Issues the signed-in operator a personal token for `agentctl`, replacing the one they
    /// had: shown once, kept only hashed, audited as theirs from `address`.
    pub async fn issue_token(
        &self,
        session: &ConsoleSession,
        address: Option<String>,
    ) -> Result<OperatorToken, TokenError> {
        if !session.operator.role.may_decide() {
            return Err(TokenError::Viewer);
        }
        let token = OperatorToken::from_random_bytes(random_bytes());
        let issued = self
            .tokens
            .issue_token(session.operator.id, token.hash(), &session.actor(address))
            .await?;
        if !issued {
            return Err(TokenError::Disabled);
        }
        Ok(token)
    }

    /// Revokes the personal token of the operator named `name`, audited as `actor`'s: whether
    /// they had one.
    pub async fn revoke_token(
        &self,
        name: OperatorName,
        actor: &Actor,
    ) -> Result<bool, RevokeTokenError> {
        self.tokens
            .revoke_token(&name, actor)
            .await?
            .ok_or(RevokeTokenError::NotFound(name))
    }

    /// The operator's live personal token, when they have one.
    pub async fn token_of(&self, operator: OperatorId) -> Result<Option<TokenRecord>, StoreError> {
        self.tokens.token_of(operator).await
    }

    /// Disables the operator: their sessions end at once and nothing of theirs opens the
    /// console again.
    pub async fn disable(
        &self,
        name: OperatorName,
        actor: &Actor,
    ) -> Result<OperatorAccount, DisableError> {
        self.accounts
            .disable(&name, actor)
            .await?
            .ok_or(DisableError::NotFound(name))
    }

    /// The operator an enrollment link (its secret, as the URL carries it) is for, while open.
    pub async fn enrollment(&self, token: &str) -> Result<OperatorAccount, AccessError> {
        let token = OneTimeSecret::parse(token).ok_or(AccessError::LinkClosed)?;
        self.accounts
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
        self.accounts
            .begin_ceremony(
                Ceremony {
                    id,
                    enrollment,
                    state,
                },
                CEREMONY_TTL,
            )
            .await?;
        Ok(CeremonyStart {
            ceremony: id.to_string(),
            options,
        })
    }

    /// Registers the passkey the browser's `answer` created in the registration `ceremony`, and
    /// uses the enrollment link up.
    #[tracing::instrument(level = "debug", skip(self, answer))]
    pub async fn register(
        &self,
        ceremony: &str,
        answer: &str,
        address: Option<String>,
    ) -> Result<OperatorAccount, AccessError> {
        let id = ceremony
            .parse::<Uuid>()
            .map_err(|_| AccessError::CeremonyGone)?;
        let Some(Ceremony {
            enrollment, state, ..
        }) = self.accounts.take_ceremony(id).await?
        else {
            return Err(AccessError::CeremonyGone);
        };
        let passkey = self.passkeys.finish_registration(answer, &state)?;
        self.accounts
            .enroll(enrollment, passkey, address)
            .await
            .map_err(|error| match error {
                OperatorStoreError::EnrollmentClosed => AccessError::LinkClosed,
                OperatorStoreError::PasskeyTaken => AccessError::PasskeyTaken,
                other => AccessError::Store(store_error(other)),
            })
    }

    /// Begins a sign-in: a challenge sealed for the browser to carry. Nothing is kept and no
    /// attempt is counted, so anyone may ask as often as they like and holds nobody back.
    pub async fn sign_in_options(&self) -> Result<CeremonyStart, AccessError> {
        let seal = self.seal().await?;
        let (options, state) = self.passkeys.start_authentication()?;
        let ceremony = seal.seal(&SignInChallenge {
            id: Uuid::now_v7(),
            expires_at: OffsetDateTime::now_utc() + CEREMONY_TTL,
            state,
        });
        Ok(CeremonyStart { ceremony, options })
    }

    /// Signs in the operator whose passkey made the browser's `answer` to the sealed challenge
    /// `ceremony`. A passkey that failed too often recently is not tried; a failure counts
    /// against that passkey alone; a challenge signs someone in once.
    #[tracing::instrument(level = "debug", skip(self, ceremony, answer))]
    pub async fn sign_in(
        &self,
        ceremony: &str,
        answer: &str,
        address: Option<String>,
    ) -> Result<SignedIn, AccessError> {
        let challenge = self
            .seal()
            .await?
            .open(ceremony, OffsetDateTime::now_utc())
            .map_err(|_| AccessError::CeremonyGone)?;
        let credential = self.passkeys.identify(answer)?;
        let (operator, passkey) = self
            .sessions
            .passkey(&credential)
            .await?
            .filter(|(operator, _)| operator.is_active())
            .ok_or(AccessError::UnknownPasskey)?;
        if let RateDecision::Limited { retry_after } = self
            .sessions
            .failed_sign_ins(&credential, FAILED_SIGN_IN_RATE)
            .await?
        {
            return Err(AccessError::TooManyAttempts { retry_after });
        }
        let passkey = match self
            .passkeys
            .finish_authentication(answer, &challenge.state, &passkey)
        {
            Ok(passkey) => passkey,
            Err(PasskeyError::Refused(why)) => {
                self.sessions
                    .count_failed_sign_in(&credential, FAILED_SIGN_IN_RATE)
                    .await?;
                return Err(AccessError::Passkey(why));
            }
            Err(internal) => return Err(internal.into()),
        };
        let cookie = random_secret();
        let csrf = new_csrf_token();
        let opening = self
            .sessions
            .open_session(
                operator.id,
                passkey,
                NewSession {
                    token: cookie.hash(),
                    csrf: csrf.clone(),
                },
                UsedChallenge {
                    id: challenge.id,
                    // Past the last moment an instance whose clock runs behind would take it.
                    kept_until: challenge.expires_at + CEREMONY_TTL,
                },
                address,
            )
            .await?;
        match opening {
            SessionOpening::Opened => Ok(SignedIn {
                cookie,
                session: ConsoleSession { operator, csrf },
            }),
            SessionOpening::OperatorDisabled => Err(AccessError::UnknownPasskey),
            SessionOpening::ChallengeUsed => Err(AccessError::CeremonyGone),
        }
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
            .sessions
            .session(cookie.hash(), SESSION_IDLE_TIMEOUT, touch)
            .await?
            .map(|session| ConsoleSession {
                operator: session.operator,
                csrf: session.csrf,
            }))
    }

    pub async fn sign_out(&self, cookie: &str, address: Option<String>) -> Result<(), StoreError> {
        match OneTimeSecret::parse(cookie) {
            Some(cookie) => self.sessions.close_session(cookie.hash(), address).await,
            None => Ok(()),
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
mod tests {
    use super::*;
    use ports::{
        MockAuditLog, MockConsoleSessions, MockOperatorAccounts, MockOperatorTokens, MockPasskeys,
        StoredPasskey,
    };

    const KEY: [u8; 32] = [5; 32];
    const CREDENTIAL: &[u8] = b"alice's passkey";

    fn name(name: &str) -> OperatorName {
        OperatorName::parse(name).expect("valid")
    }

    fn account(role: OperatorRole, disabled: bool) -> OperatorAccount {
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
    struct Stores {
        accounts: MockOperatorAccounts,
        sessions: MockConsoleSessions,
        tokens: MockOperatorTokens,
        audit: MockAuditLog,
    }

    fn access(operators: Stores, passkeys: MockPasskeys) -> ConsoleAccess {
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

    /// Stores whose challenge key is `KEY`, read at most once.
    fn keyed_store() -> Stores {
        let mut operators = Stores::default();
        operators
            .sessions
            .expect_challenge_key()
            .times(..=1)
            .returning(|_| Ok(KEY));
        operators
    }

    /// Passkeys that begin sign-ins with state `state` and identify `CREDENTIAL`.
    fn signing_passkeys() -> MockPasskeys {
        let mut passkeys = MockPasskeys::new();
        passkeys
            .expect_start_authentication()
            .returning(|| Ok((r#"{"publicKey":{}}"#.to_owned(), r#"{"s":1}"#.to_owned())));
        passkeys
            .expect_identify()
            .returning(|_| Ok(CREDENTIAL.to_vec()));
        passkeys
    }

    fn stored() -> StoredPasskey {
        StoredPasskey {
            credential_id: CREDENTIAL.to_vec(),
            record: "{}".to_owned(),
        }
    }

    #[tokio::test]
    async fn asking_for_sign_in_options_keeps_nothing_and_counts_nothing() {
        let mut operators = keyed_store();
        operators.accounts.expect_begin_ceremony().never();
        operators.sessions.expect_failed_sign_ins().never();
        let access = access(operators, signing_passkeys());
        let mut ceremonies = Vec::new();
        for _ in 0..50 {
            ceremonies.push(access.sign_in_options().await.expect("options").ceremony);
        }
        let opened = ChallengeSeal::new(KEY)
            .open(&ceremonies[0], OffsetDateTime::now_utc())
            .expect("sealed with the store's key");
        assert_eq!(opened.state, r#"{"s":1}"#);
        ceremonies.dedup();
        assert_eq!(ceremonies.len(), 50, "each challenge its own");
    }

    #[tokio::test]
    async fn a_challenge_signs_in_once_and_its_use_is_kept_past_its_expiry() {
        let mut operators = keyed_store();
        let alice = account(OperatorRole::Approver, false);
        let found = alice.clone();
        operators
            .sessions
            .expect_passkey()
            .returning(move |_| Ok(Some((found.clone(), stored()))));
        operators
            .sessions
            .expect_failed_sign_ins()
            .returning(|_, _| Ok(RateDecision::Allowed));
        let mut first = true;
        operators
            .sessions
            .expect_open_session()
            .withf(|_, _, _, challenge, address| {
                challenge.kept_until - OffsetDateTime::now_utc() > CEREMONY_TTL
                    && address.as_deref() == Some("198.51.100.7")
            })
            .times(2)
            .returning(move |_, _, _, _, _| {
                let opening = if first {
                    SessionOpening::Opened
                } else {
                    SessionOpening::ChallengeUsed
                };
                first = false;
                Ok(opening)
            });
        let mut passkeys = signing_passkeys();
        passkeys
            .expect_finish_authentication()
            .returning(|_, _, passkey| Ok(passkey.clone()));
        let access = access(operators, passkeys);
        let begun = access.sign_in_options().await.expect("options");
        let address = || Some("198.51.100.7".to_owned());
        let signed_in = access
            .sign_in(&begun.ceremony, "{}", address())
            .await
            .expect("signed in");
        assert_eq!(signed_in.session.operator, alice);
        assert!(matches!(
            access.sign_in(&begun.ceremony, "{}", address()).await,
            Err(AccessError::CeremonyGone)
        ));
    }

    #[tokio::test]
    async fn a_challenge_not_sealed_here_is_gone_before_any_passkey_is_read() {
        let mut operators = keyed_store();
        operators.sessions.expect_passkey().never();
        let mut passkeys = MockPasskeys::new();
        passkeys.expect_identify().never();
        let access = access(operators, passkeys);
        let elsewhere = ChallengeSeal::new([6; 32]).seal(&SignInChallenge {
            id: Uuid::now_v7(),
            expires_at: OffsetDateTime::now_utc() + CEREMONY_TTL,
            state: "{}".to_owned(),
        });
        for ceremony in [elsewhere.as_str(), "", "not a challenge"] {
            assert!(matches!(
                access.sign_in(ceremony, "{}", None).await,
                Err(AccessError::CeremonyGone)
            ));
        }
    }

    #[tokio::test]
    async fn a_failed_sign_in_counts_against_its_passkey_and_a_resting_one_is_not_tried() {
        let mut operators = keyed_store();
        let alice = account(OperatorRole::Approver, false);
        operators
            .sessions
            .expect_passkey()
            .returning(move |_| Ok(Some((alice.clone(), stored()))));
        let mut resting = false;
        operators
            .sessions
            .expect_failed_sign_ins()
            .withf(|credential, limit| credential == CREDENTIAL && *limit == FAILED_SIGN_IN_RATE)
            .returning(move |_, _| {
                let decision = if resting {
                    RateDecision::Limited {
                        retry_after: Duration::from_secs(6),
                    }
                } else {
                    RateDecision::Allowed
                };
                resting = true;
                Ok(decision)
            });
        operators
            .sessions
            .expect_count_failed_sign_in()
            .withf(|credential, _| credential == CREDENTIAL)
            .times(1)
            .returning(|_, _| Ok(()));
        operators.sessions.expect_open_session().never();
        let mut passkeys = signing_passkeys();
        passkeys
            .expect_finish_authentication()
            .times(1)
            .returning(|_, _, _| Err(PasskeyError::Refused("bad signature".into())));
        let access = access(operators, passkeys);
        let begun = access.sign_in_options().await.expect("options");
        assert!(matches!(
            access.sign_in(&begun.ceremony, "{}", None).await,
            Err(AccessError::Passkey(_))
        ));
        let refused = access.sign_in(&begun.ceremony, "{}", None).await;
        assert!(
            matches!(refused, Err(AccessError::TooManyAttempts { retry_after }) if retry_after.as_secs() == 6),
            "{refused:?}"
        );
    }

    #[tokio::test]
    async fn a_token_proves_only_an_active_operator_whose_role_decides() {
        let mut operators = Stores::default();
        let mut answers = vec![
            None,
            Some(account(OperatorRole::Viewer, false)),
            Some(account(OperatorRole::Approver, false)),
        ]
        .into_iter();
        let intent = IntentId(Uuid::now_v7());
        operators
            .tokens
            .expect_use_token()
            .withf(move |_, target| target.as_deref() == Some(&format!("intent:{intent}")))
            .times(3)
            .returning(move |_, _| Ok(answers.next().flatten()));
        let access = access(operators, MockPasskeys::new());
        let token = OperatorToken::from_random_bytes([4; 32]).expose();
        let target = AuditTarget::Intent(intent);
        assert!(matches!(
            access.prove("aro_not-a-token", target).await,
            Err(ProofError::Invalid)
        ));
        assert!(matches!(
            access.prove(&token, target).await,
            Err(ProofError::Invalid)
        ));
        assert!(matches!(
            access.prove(&token, target).await,
            Err(ProofError::Refused(NamedDecisionRefused::Viewer(_)))
        ));
        assert_eq!(
            access.prove(&token, target).await.expect("proven"),
            Operator::Named(name("alice"))
        );
    }

    #[tokio::test]
    async fn a_viewer_is_issued_no_token_and_an_issued_one_is_kept_only_hashed() {
        let mut operators = Stores::default();
        let kept = Arc::new(std::sync::Mutex::new(None));
        let keeping = kept.clone();
        operators
            .tokens
            .expect_issue_token()
            .times(1)
            .returning(move |_, hash, _| {
                *keeping.lock().expect("lock") = Some(hash);
                Ok(true)
            });
        let access = access(operators, MockPasskeys::new());
        let session = |role| ConsoleSession {
            operator: account(role, false),
            csrf: String::new(),
        };
        assert!(matches!(
            access
                .issue_token(&session(OperatorRole::Viewer), None)
                .await,
            Err(TokenError::Viewer)
        ));
        let token = access
            .issue_token(&session(OperatorRole::Approver), None)
            .await
            .expect("issued");
        assert_eq!(*kept.lock().expect("lock"), Some(token.hash()));
    }
}
