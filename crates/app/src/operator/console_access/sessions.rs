//! Signing in with a passkey to a server-side session, the session behind a browser's cookie, and
//! signing out.

use domain::{
    Actor, ChallengeSeal, OneTimeSecret, RateDecision, RateLimit, SignInChallenge, CEREMONY_TTL,
    SESSION_IDLE_TIMEOUT,
};
use ports::{FailedSignIn, NewSession, PasskeyError, SessionOpening, StoreError, UsedChallenge};
use time::OffsetDateTime;
use uuid::Uuid;

use super::{
    new_csrf_token, random_bytes, random_secret, AccessError, CeremonyStart, ConsoleAccess,
    ConsoleSession,
};

/// Failed sign-ins with one passkey: ten, then one every six seconds. Counted per passkey, so
/// wrong guesses at one operator's hold back no other, whatever address they come from.
pub const FAILED_SIGN_IN_RATE: RateLimit = RateLimit {
    per_minute: 10,
    burst: 10,
};

/// A new session: the secret for the browser's cookie, shown once, and the session.
#[derive(Debug, Clone)]
pub struct SignedIn {
    pub cookie: OneTimeSecret,
    pub session: ConsoleSession,
}

impl ConsoleAccess {
    /// The seal of sign-in challenges: its key is the store's, drawn by the first instance.
    async fn seal(&self) -> Result<&ChallengeSeal, StoreError> {
        if let Some(seal) = self.seal.get() {
            return Ok(seal);
        }
        let key = self.sessions.challenge_key(random_bytes()).await?;
        Ok(self.seal.get_or_init(|| ChallengeSeal::new(key)))
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
    /// against that passkey alone, and is audited as a failed sign-in of its operator; a
    /// challenge signs someone in once.
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
            Err(refused @ (PasskeyError::Refused(_) | PasskeyError::CounterWentBack)) => {
                let failure = FailedSignIn {
                    actor: Actor {
                        operator: operator.principal(),
                        address,
                    },
                    reason: refused.to_string(),
                };
                self.sessions
                    .count_failed_sign_in(&credential, FAILED_SIGN_IN_RATE, failure)
                    .await?;
                return Err(refused.into());
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
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::fixtures::{access, account, Stores};
    use super::*;
    use domain::{OperatorAccount, OperatorRole};
    use ports::{MockPasskeys, StoredPasskey};

    const KEY: [u8; 32] = [5; 32];
    const CREDENTIAL: &[u8] = b"alice's passkey";

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

    /// `keyed_store()` where `CREDENTIAL` is `operator`'s passkey, which may be tried.
    fn store_with_passkey_of(operator: OperatorAccount) -> Stores {
        let mut operators = keyed_store();
        operators
            .sessions
            .expect_passkey()
            .returning(move |_| Ok(Some((operator.clone(), stored()))));
        operators
            .sessions
            .expect_failed_sign_ins()
            .returning(|_, _| Ok(RateDecision::Allowed));
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
        let alice = account(OperatorRole::Approver, false);
        let mut operators = store_with_passkey_of(alice.clone());
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
        let principal = account(OperatorRole::Approver, false).principal();
        operators
            .sessions
            .expect_count_failed_sign_in()
            .withf(move |credential, _, failure| {
                credential == CREDENTIAL
                    && failure.actor.operator == principal
                    && failure.actor.address.as_deref() == Some("198.51.100.7")
                    && failure.reason.contains("bad signature")
            })
            .times(1)
            .returning(|_, _, _| Ok(()));
        operators.sessions.expect_open_session().never();
        let mut passkeys = signing_passkeys();
        passkeys
            .expect_finish_authentication()
            .times(1)
            .returning(|_, _, _| Err(PasskeyError::Refused("bad signature".into())));
        let access = access(operators, passkeys);
        let begun = access.sign_in_options().await.expect("options");
        assert!(matches!(
            access
                .sign_in(&begun.ceremony, "{}", Some("198.51.100.7".to_owned()))
                .await,
            Err(AccessError::Passkey(_))
        ));
        let refused = access.sign_in(&begun.ceremony, "{}", None).await;
        assert!(
            matches!(refused, Err(AccessError::TooManyAttempts { retry_after }) if retry_after.as_secs() == 6),
            "{refused:?}"
        );
    }

    #[tokio::test]
    async fn a_counter_gone_backwards_is_refused_in_the_consoles_words_and_audited() {
        let alice = account(OperatorRole::Approver, false);
        let principal = alice.principal();
        let mut operators = store_with_passkey_of(alice);
        operators
            .sessions
            .expect_count_failed_sign_in()
            .withf(move |_, _, failure| {
                failure.actor.operator == principal
                    && failure.reason == PasskeyError::CounterWentBack.to_string()
            })
            .times(1)
            .returning(|_, _, _| Ok(()));
        operators.sessions.expect_open_session().never();
        let mut passkeys = signing_passkeys();
        passkeys
            .expect_finish_authentication()
            .returning(|_, _, _| Err(PasskeyError::CounterWentBack));
        let access = access(operators, passkeys);
        let begun = access.sign_in_options().await.expect("options");
        let refused = access.sign_in(&begun.ceremony, "{}", None).await;
        assert!(
            matches!(&refused, Err(AccessError::CounterWentBack)),
            "{refused:?}"
        );
        let said = refused
            .err()
            .map(|error| error.to_string())
            .unwrap_or_default();
        assert!(said.contains("signature counter went backwards"), "{said}");
        assert!(said.contains("audit log"), "{said}");
    }
}
