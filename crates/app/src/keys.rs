//! An agent's keys, made, listed and revoked by the agent's own keys (delegation) and by
//! operators (the keys contract).

use std::sync::Arc;

use domain::keys::{AgentKeyRecord, DelegationRefusal, KeyId, KeyRequest};
use domain::{request_fingerprint, Actor, AgentId, AgentKey, IdempotencyKey, Label};
use ports::{
    InstanceBarrier, KeyCreationError, KeyHolder, KeyStore, KeyedCreation, NewKey, RequestKey,
    StoreError,
};
use rand::RngCore;

use crate::agents::Principal;

/// A key just made: the key itself, shown this once (and to a retry under the same idempotency
/// key), and its record.
#[derive(Debug)]
pub struct MadeKey {
    pub key: AgentKey,
    pub record: AgentKeyRecord,
    /// The answer is the first request's, given again under the same idempotency key.
    pub replayed: bool,
}

/// A key asked for under an idempotency key: the key, and the secret of the key that asks, which
/// the new key is derived from so that a retry can be answered the same secret (decision 0095).
pub struct KeyedRequest {
    pub key: IdempotencyKey,
    pub presented: AgentKey,
}

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error(transparent)]
    Refused(#[from] DelegationRefusal),
    /// The key that asked was revoked or expired, or its agent deactivated, meanwhile.
    #[error("the agent key no longer authenticates")]
    KeyGone,
    /// Another request with the same idempotency key is being made right now.
    #[error("A request with this idempotency key is in progress")]
    KeyInFlight,
    /// The idempotency key was used, within 24 hours, for a different request.
    #[error("the key was used within 24 hours for a different request")]
    KeyReused,
    /// No key of that id the asker may revoke, or no agent of that id (an operator's request).
    #[error("no such key")]
    NotFound,
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<KeyCreationError> for KeyError {
    fn from(error: KeyCreationError) -> Self {
        match error {
            KeyCreationError::Refused(refused) => Self::Refused(refused),
            KeyCreationError::MakerGone => Self::KeyGone,
            KeyCreationError::NoSuchAgent => Self::NotFound,
            KeyCreationError::KeyInFlight => Self::KeyInFlight,
            KeyCreationError::KeyReused => Self::KeyReused,
            KeyCreationError::Store(error) => Self::Store(error),
        }
    }
}

/// What a request for a key asks, as the fingerprint its idempotency key is bound to.
fn asked_fingerprint(label: Option<&Label>, asked: &KeyRequest) -> [u8; 32] {
    let scopes: Vec<&str> = asked.scopes.iter().map(|scope| scope.as_str()).collect();
    let scopes = scopes.join(" ");
    let lifetime = asked
        .expires_in
        .map_or_else(String::new, |lifetime| lifetime.as_secs().to_string());
    request_fingerprint([
        label.map_or("", Label::as_str),
        scopes.as_str(),
        lifetime.as_str(),
    ])
}

pub struct KeyService {
    store: Arc<dyn KeyStore>,
    barrier: Arc<dyn InstanceBarrier>,
}

impl KeyService {
    pub fn new(store: Arc<dyn KeyStore>, barrier: Arc<dyn InstanceBarrier>) -> Self {
        Self { store, barrier }
    }

    /// Makes a key for the principal's agent from the principal's key, as delegation allows.
    /// Under an idempotency key, a retry of the same request within 24 hours with the same key
    /// answers the key made first, and another request is refused (decision 0095).
    #[tracing::instrument(level = "debug", skip_all, fields(agent_id = %principal.profile.agent.id))]
    pub async fn delegate(
        &self,
        principal: &Principal,
        label: Option<Label>,
        asked: KeyRequest,
        keyed: Option<KeyedRequest>,
    ) -> Result<MadeKey, KeyError> {
        let agent = principal.profile.agent.id;
        let maker = KeyHolder::Key(principal.key.id);
        let Some(keyed) = keyed else {
            return self.make(agent, &maker, label, asked).await;
        };
        let fingerprint = asked_fingerprint(label.as_ref(), &asked);
        let mut salt = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut salt);
        let key = AgentKey::derived(&keyed.presented, &salt);
        let new = NewKey {
            id: KeyId::generate(),
            hash: key.hash(),
            label,
            asked,
        };
        let creation = KeyedCreation {
            request: RequestKey {
                key: keyed.key,
                made_by: principal.key.id,
                fingerprint,
            },
            salt,
        };
        let answered = self
            .store
            .create(agent, &maker, new, Some(creation))
            .await?;
        let made = answered.answer;
        let salt = made.salt.ok_or_else(|| {
            KeyError::Store(StoreError::Internal(
                "a keyed key made without its salt".into(),
            ))
        })?;
        let key = AgentKey::derived(&keyed.presented, &salt);
        if key.hash() != made.record.hash {
            return Err(KeyError::Store(StoreError::Internal(
                "a kept key is not the one its salt derives".into(),
            )));
        }
        Ok(MadeKey {
            key,
            record: made.record,
            replayed: answered.replayed,
        })
    }

    /// Makes a key for `agent` as an operator asks: any scopes, any expiry.
    #[tracing::instrument(level = "debug", skip(self, actor))]
    pub async fn make_for_operator(
        &self,
        agent: AgentId,
        label: Option<Label>,
        asked: KeyRequest,
        actor: &Actor,
    ) -> Result<MadeKey, KeyError> {
        self.make(agent, &KeyHolder::Operator(actor.clone()), label, asked)
            .await
    }

    async fn make(
        &self,
        agent: AgentId,
        maker: &KeyHolder,
        label: Option<Label>,
        asked: KeyRequest,
    ) -> Result<MadeKey, KeyError> {
        let key = crate::generate_agent_key();
        let new = NewKey {
            id: KeyId::generate(),
            hash: key.hash(),
            label,
            asked,
        };
        let made = self.store.create(agent, maker, new, None).await?;
        Ok(MadeKey {
            key,
            record: made.answer.record,
            replayed: false,
        })
    }

    /// The agent's live keys, oldest first.
    pub async fn live(&self, agent: AgentId) -> Result<Vec<AgentKeyRecord>, KeyError> {
        Ok(self.store.live(agent).await?)
    }

    /// Revokes `key`, which must be the principal's own key or one made from it, with every key
    /// made from it.
    #[tracing::instrument(level = "debug", skip(self, principal), fields(agent_id = %principal.profile.agent.id))]
    pub async fn revoke(&self, principal: &Principal, key: KeyId) -> Result<Vec<KeyId>, KeyError> {
        let agent = principal.profile.agent.id;
        self.revoke_as(agent, key, &KeyHolder::Key(principal.key.id))
            .await
    }

    /// Revokes any key of `agent`, with every key made from it, as an operator asks.
    #[tracing::instrument(level = "debug", skip(self, actor))]
    pub async fn revoke_for_operator(
        &self,
        agent: AgentId,
        key: KeyId,
        actor: &Actor,
    ) -> Result<Vec<KeyId>, KeyError> {
        self.revoke_as(agent, key, &KeyHolder::Operator(actor.clone()))
            .await
    }

    /// Revokes, then answers once every instance's hub answered a barrier sent after the commit:
    /// none serves the revoked keys from its cache any more (decision 0084).
    async fn revoke_as(
        &self,
        agent: AgentId,
        key: KeyId,
        by: &KeyHolder,
    ) -> Result<Vec<KeyId>, KeyError> {
        let revoked = self
            .store
            .revoke(agent, key, by)
            .await?
            .ok_or(KeyError::NotFound)?;
        crate::barrier::pass_after_revocation(self.barrier.as_ref()).await;
        Ok(revoked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::keys::{KeyGrant, Scope, Scopes};
    use domain::{AgentKeyHash, AgentProfile};
    use mockall::predicate::{always, eq};
    use ports::{Answered, BarrierPassed, KeyMade, MockInstanceBarrier, MockKeyStore};

    /// A service over `store`, whose revocations pass the barrier `barrier`.
    fn service_passing(store: MockKeyStore, barrier: MockInstanceBarrier) -> KeyService {
        KeyService::new(Arc::new(store), Arc::new(barrier))
    }

    /// A service over `store` that passes no barrier.
    fn service(store: MockKeyStore) -> KeyService {
        service_passing(store, MockInstanceBarrier::new())
    }

    fn principal() -> Principal {
        Principal {
            profile: Arc::new(AgentProfile::fixture()),
            key: Arc::new(AgentKeyRecord::fixture(AgentKeyHash([7; 32]))),
        }
    }

    fn mail_only() -> KeyRequest {
        KeyRequest {
            scopes: Scopes::of([Scope::EmailRead]),
            expires_in: None,
        }
    }

    /// The record a store makes of `new` for `agent`.
    fn record_of(agent: AgentId, new: NewKey) -> AgentKeyRecord {
        AgentKeyRecord {
            id: new.id,
            agent_id: agent,
            hash: new.hash,
            label: new.label,
            grant: KeyGrant {
                scopes: new.asked.scopes,
                expires_at: None,
                depth: 1,
            },
            parent: None,
            first: false,
            created_at: time::OffsetDateTime::UNIX_EPOCH,
            last_used_at: None,
        }
    }

    fn keyed(key: &str, presented: &AgentKey) -> Option<KeyedRequest> {
        Some(KeyedRequest {
            key: IdempotencyKey::parse(key).expect("a key"),
            presented: presented.clone(),
        })
    }

    #[tokio::test]
    async fn a_delegated_key_is_made_by_the_presented_key_and_only_its_hash_is_stored() {
        let asker = principal();
        let mut store = MockKeyStore::new();
        let maker = KeyHolder::Key(asker.key.id);
        store
            .expect_create()
            .with(eq(asker.profile.agent.id), eq(maker), always(), eq(None))
            .times(1)
            .returning(|agent, _, new, _| {
                Ok(Answered::new(KeyMade {
                    record: record_of(agent, new),
                    salt: None,
                }))
            });
        let service = service(store);
        let made = service
            .delegate(&asker, None, mail_only(), None)
            .await
            .expect("made");
        assert_eq!(made.record.hash, made.key.hash());
        assert_eq!(made.record.scopes(), Scopes::of([Scope::EmailRead]));
        assert!(!made.replayed);
    }

    #[tokio::test]
    async fn a_keyed_key_is_derived_from_the_presented_key_and_its_kept_salt_answers_a_retry() {
        let asker = principal();
        let presented = AgentKey::from_random_bytes([3; 32]);
        let mut store = MockKeyStore::new();
        let first: Arc<std::sync::Mutex<Option<KeyMade>>> = Arc::default();
        store.expect_create().times(2).returning({
            let first = Arc::clone(&first);
            move |agent, _, new, keyed| {
                let keyed = keyed.expect("keyed");
                assert_eq!(keyed.request.key.as_str(), "retry-1");
                let mut first = first.lock().expect("lock");
                match first.as_ref() {
                    Some(made) => Ok(Answered {
                        answer: made.clone(),
                        replayed: true,
                    }),
                    None => {
                        let made = KeyMade {
                            record: record_of(agent, new),
                            salt: Some(keyed.salt),
                        };
                        *first = Some(made.clone());
                        Ok(Answered::new(made))
                    }
                }
            }
        });
        let service = service(store);
        let made = service
            .delegate(&asker, None, mail_only(), keyed("retry-1", &presented))
            .await
            .expect("made");
        let salt = first
            .lock()
            .expect("lock")
            .as_ref()
            .and_then(|made| made.salt)
            .expect("a salt");
        assert_eq!(made.key, AgentKey::derived(&presented, &salt));
        assert_eq!(made.record.hash, made.key.hash());
        let again = service
            .delegate(&asker, None, mail_only(), keyed("retry-1", &presented))
            .await
            .expect("answered again");
        assert!(again.replayed);
        assert_eq!(again.key, made.key);
        assert_eq!(again.record, made.record);
    }

    #[tokio::test]
    async fn a_keyed_request_is_bound_to_its_label_scopes_and_lifetime() {
        let asker = principal();
        let presented = AgentKey::from_random_bytes([3; 32]);
        let mut store = MockKeyStore::new();
        let fingerprints: Arc<std::sync::Mutex<Vec<[u8; 32]>>> = Arc::default();
        store.expect_create().times(4).returning({
            let fingerprints = Arc::clone(&fingerprints);
            move |agent, _, new, keyed| {
                let keyed = keyed.expect("keyed");
                fingerprints
                    .lock()
                    .expect("lock")
                    .push(keyed.request.fingerprint);
                Ok(Answered::new(KeyMade {
                    record: record_of(agent, new),
                    salt: Some(keyed.salt),
                }))
            }
        });
        let service = service(store);
        let label = Label::parse("worker").ok();
        let longer = KeyRequest {
            expires_in: Some(std::time::Duration::from_secs(3600)),
            ..mail_only()
        };
        let wider = KeyRequest {
            scopes: Scopes::of([Scope::EmailRead, Scope::EmailSend]),
            ..mail_only()
        };
        for (label, asked) in [
            (None, mail_only()),
            (label, mail_only()),
            (None, longer),
            (None, wider),
        ] {
            service
                .delegate(&asker, label, asked, keyed("k", &presented))
                .await
                .expect("made");
        }
        let fingerprints = fingerprints.lock().expect("lock");
        let distinct: std::collections::HashSet<_> = fingerprints.iter().collect();
        assert_eq!(distinct.len(), 4, "each field changes the fingerprint");
    }

    #[tokio::test]
    async fn a_reused_or_busy_idempotency_key_is_refused_as_the_store_says() {
        let mut store = MockKeyStore::new();
        let mut answers = vec![
            Err(KeyCreationError::KeyReused),
            Err(KeyCreationError::KeyInFlight),
        ];
        store
            .expect_create()
            .times(2)
            .returning(move |_, _, _, _| answers.pop().expect("two answers"));
        let service = service(store);
        let presented = AgentKey::from_random_bytes([3; 32]);
        assert!(matches!(
            service
                .delegate(&principal(), None, mail_only(), keyed("k", &presented))
                .await,
            Err(KeyError::KeyInFlight)
        ));
        assert!(matches!(
            service
                .delegate(&principal(), None, mail_only(), keyed("k", &presented))
                .await,
            Err(KeyError::KeyReused)
        ));
    }

    #[tokio::test]
    async fn refusals_and_a_vanished_maker_are_told_apart() {
        let mut store = MockKeyStore::new();
        let mut answers = vec![
            Err(KeyCreationError::MakerGone),
            Err(KeyCreationError::Refused(DelegationRefusal::TooDeep)),
        ];
        store
            .expect_create()
            .times(2)
            .returning(move |_, _, _, _| answers.pop().expect("two answers"));
        let service = service(store);
        assert!(matches!(
            service
                .delegate(&principal(), None, mail_only(), None)
                .await,
            Err(KeyError::Refused(DelegationRefusal::TooDeep))
        ));
        assert!(matches!(
            service
                .delegate(&principal(), None, mail_only(), None)
                .await,
            Err(KeyError::KeyGone)
        ));
    }

    #[tokio::test]
    async fn a_key_revokes_as_itself_and_another_agents_key_is_not_found() {
        let asker = principal();
        let mut store = MockKeyStore::new();
        let holder = KeyHolder::Key(asker.key.id);
        let target = KeyId::generate();
        store
            .expect_revoke()
            .with(eq(asker.profile.agent.id), eq(target), eq(holder))
            .times(1)
            .returning(|_, _, _| Ok(None));
        let service = service(store);
        assert!(matches!(
            service.revoke(&asker, target).await,
            Err(KeyError::NotFound)
        ));
    }

    #[tokio::test]
    async fn a_revocation_answers_after_the_commit_and_then_the_barrier() {
        let asker = principal();
        let target = KeyId::generate();
        let mut order = mockall::Sequence::new();
        let mut store = MockKeyStore::new();
        store
            .expect_revoke()
            .times(1)
            .in_sequence(&mut order)
            .returning(move |_, _, _| Ok(Some(vec![target])));
        let mut barrier = MockInstanceBarrier::new();
        crate::barrier::fixtures::expect_one_answered(&mut barrier, &mut order);
        let revoked = service_passing(store, barrier)
            .revoke(&asker, target)
            .await
            .expect("revoked");
        assert_eq!(revoked, [target]);
    }

    #[tokio::test]
    async fn a_barrier_that_fails_or_is_not_answered_still_answers_the_committed_revocation() {
        let asker = principal();
        let target = KeyId::generate();
        let mut store = MockKeyStore::new();
        store
            .expect_revoke()
            .times(2)
            .returning(move |_, _, _| Ok(Some(vec![target])));
        let mut answers = vec![
            Err(StoreError::Unavailable("no connection".into())),
            Ok(BarrierPassed {
                asked: 2,
                answered: 1,
            }),
        ];
        let mut barrier = MockInstanceBarrier::new();
        barrier
            .expect_pass()
            .times(2)
            .returning(move |_| answers.pop().expect("two answers"));
        let service = service_passing(store, barrier);
        for _ in 0..2 {
            assert_eq!(
                service.revoke(&asker, target).await.expect("revoked"),
                [target]
            );
        }
    }
}
