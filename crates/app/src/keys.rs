//! An agent's keys, made, listed and revoked by the agent's own keys (delegation) and by
//! operators (the keys contract).

use std::sync::Arc;

use domain::keys::{AgentKeyRecord, DelegationRefusal, KeyId, KeyRequest};
use domain::{Actor, AgentId, AgentKey, Label};
use ports::{InstanceBarrier, KeyCreationError, KeyHolder, KeyStore, NewKey, StoreError};

use crate::agents::Principal;

/// A key just made: the key itself, shown this once, and its record.
#[derive(Debug)]
pub struct MadeKey {
    pub key: AgentKey,
    pub record: AgentKeyRecord,
}

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error(transparent)]
    Refused(#[from] DelegationRefusal),
    /// The key that asked was revoked or expired, or its agent deactivated, meanwhile.
    #[error("the agent key no longer authenticates")]
    KeyGone,
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
            KeyCreationError::Store(error) => Self::Store(error),
        }
    }
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
    #[tracing::instrument(level = "debug", skip_all, fields(agent_id = %principal.profile.agent.id))]
    pub async fn delegate(
        &self,
        principal: &Principal,
        label: Option<Label>,
        asked: KeyRequest,
    ) -> Result<MadeKey, KeyError> {
        self.make(
            principal.profile.agent.id,
            &KeyHolder::Key(principal.key.id),
            label,
            asked,
        )
        .await
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
        let record = self.store.create(agent, maker, new).await?;
        Ok(MadeKey { key, record })
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
    use ports::{BarrierPassed, MockInstanceBarrier, MockKeyStore};

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

    #[tokio::test]
    async fn a_delegated_key_is_made_by_the_presented_key_and_only_its_hash_is_stored() {
        let asker = principal();
        let mut store = MockKeyStore::new();
        let maker = KeyHolder::Key(asker.key.id);
        store
            .expect_create()
            .with(eq(asker.profile.agent.id), eq(maker), always())
            .times(1)
            .returning(|agent, _, new| {
                Ok(AgentKeyRecord {
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
                })
            });
        let service = service(store);
        let made = service
            .delegate(&asker, None, mail_only())
            .await
            .expect("made");
        assert_eq!(made.record.hash, made.key.hash());
        assert_eq!(made.record.scopes(), Scopes::of([Scope::EmailRead]));
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
            .returning(move |_, _, _| answers.pop().expect("two answers"));
        let service = service(store);
        assert!(matches!(
            service.delegate(&principal(), None, mail_only()).await,
            Err(KeyError::Refused(DelegationRefusal::TooDeep))
        ));
        assert!(matches!(
            service.delegate(&principal(), None, mail_only()).await,
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
