//! An agent's keys: made, listed and revoked (the keys contract).

use async_trait::async_trait;
use domain::keys::{AgentKeyRecord, DelegationRefusal, KeyId, KeyRequest};
use domain::{Actor, AgentId, AgentKeyHash, Label};

use crate::{Answered, RequestKey, StoreError};

/// Who makes or revokes a key: one of the agent's keys, or an operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyHolder {
    Key(KeyId),
    Operator(Actor),
}

/// A key to make: its id and hash (the key itself never reaches the store), and what is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewKey {
    pub id: KeyId,
    pub hash: AgentKeyHash,
    pub label: Option<Label>,
    pub asked: KeyRequest,
}

/// A key asked for under an idempotency key (decision 0095): the request's key, and the salt the
/// new key's secret is derived with, kept with the first answer for its retries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyedCreation {
    pub request: RequestKey,
    pub salt: [u8; 32],
}

/// A key the store made, or the one the first request under the same idempotency key made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyMade {
    pub record: AgentKeyRecord,
    /// The salt its secret was derived with, when it was made under an idempotency key.
    pub salt: Option<[u8; 32]>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyCreationError {
    /// The delegation rules refuse the key asked for; nothing was made.
    #[error(transparent)]
    Refused(#[from] DelegationRefusal),
    /// The making key was revoked or expired, or its agent deactivated, before the key was made.
    #[error("the key that would make the key no longer authenticates")]
    MakerGone,
    /// No agent with this id (an operator's request).
    #[error("no such agent")]
    NoSuchAgent,
    /// The idempotency key's first request is still being made.
    #[error("a request with this idempotency key is in progress")]
    KeyInFlight,
    /// The idempotency key was used with another request.
    #[error("the idempotency key was used with another request")]
    KeyReused,
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait KeyStore: Send + Sync {
    /// Makes `new` for `agent`, by `maker`: from a live key of the agent's, as
    /// `domain::keys::delegate` allows, or by an operator (`domain::keys::grant_by_operator`),
    /// within the agent's live keys; audited. Key changes of one agent take their turns, so a
    /// revocation never misses a key made meanwhile, and the count of live keys holds. Under an
    /// idempotency key (`keyed`, a key's request only), the first answer is kept in the same
    /// transaction for 24 hours and given again, made once.
    async fn create(
        &self,
        agent: AgentId,
        maker: &KeyHolder,
        new: NewKey,
        keyed: Option<KeyedCreation>,
    ) -> Result<Answered<KeyMade>, KeyCreationError>;

    /// The agent's live keys (neither revoked nor expired), oldest first.
    async fn live(&self, agent: AgentId) -> Result<Vec<AgentKeyRecord>, StoreError>;

    /// Revokes `key` and every key made from it, directly or not, disabling the webhook endpoints
    /// they made; audited. A key may revoke itself and the keys made from it, an operator any key
    /// of the agent. The keys revoked, `None` when `key` is none the revoker may revoke.
    async fn revoke(
        &self,
        agent: AgentId,
        key: KeyId,
        by: &KeyHolder,
    ) -> Result<Option<Vec<KeyId>>, StoreError>;

    /// Records that `key` authenticated a request this minute.
    async fn touch(&self, key: KeyId) -> Result<(), StoreError>;
}
