//! The event log and the webhooks that carry it out (decision 0058): what the core reads of the
//! log, keeps of an agent's endpoints, and asks of whoever posts to them. Every read and change
//! made for an agent is scoped to it: another agent's endpoint is not found.

use std::time::Duration;

use async_trait::async_trait;
use domain::{
    AgentId, AgentKeyHash, AttemptFailure, CursorPosition, EventRecord, EventTypes, LogBounds,
    RateLimit, WebhookAttemptRecord, WebhookDeliveryId, WebhookEndpointId, WebhookEndpointRecord,
    WebhookUrl,
};

use crate::{Answered, LeasedJob, RequestKey, StoreError};

/// The topic published on commit of every event of an agent, by the trigger that writes it.
pub fn events_topic(agent: AgentId) -> String {
    format!("events:{agent}")
}

/// Woken by the events of every agent: a hub wakes `kind:*` with each topic `kind:…` it is
/// notified of, so a watcher of all agents (the console's pending list) costs no notification
/// more.
pub const EVERY_AGENTS_EVENTS_TOPIC: &str = "events:*";

/// The topic published on commit when an event queued a webhook delivery.
pub const WEBHOOK_DELIVERIES_TOPIC: &str = "webhook-deliveries";

/// Reads of an agent's event log.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait EventLog: Send + Sync {
    /// What retention removed of the agent's log.
    async fn bounds(&self, agent: AgentId) -> Result<LogBounds, StoreError>;

    /// The agent's events with `seq > after` of `types`, oldest first, at most `limit`.
    async fn page(
        &self,
        agent: AgentId,
        after: u64,
        types: EventTypes,
        limit: usize,
    ) -> Result<Vec<EventRecord>, StoreError>;

    /// Removes up to `batch` events older than `kept_for`, with whatever still refers to them;
    /// how many went.
    async fn prune(&self, kept_for: Duration, batch: usize) -> Result<usize, StoreError>;
}

/// A new endpoint, its first secret and the agent key that creates it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewWebhookEndpoint {
    pub id: WebhookEndpointId,
    pub url: WebhookUrl,
    pub types: Option<EventTypes>,
    pub description: Option<String>,
    pub secret: String,
    /// The hash of the key the request came with: the endpoint is delivered to while that key is
    /// the agent's.
    pub key: AgentKeyHash,
}

/// What a change of an endpoint sets; `None` leaves a field as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WebhookEndpointChanges {
    pub url: Option<WebhookUrl>,
    /// `Some(None)`: every type.
    pub types: Option<Option<EventTypes>>,
    pub description: Option<Option<String>>,
    pub enabled: Option<bool>,
}

/// Why an endpoint was not created or changed.
#[derive(Debug, thiserror::Error)]
pub enum EndpointRefusal {
    #[error("the agent has as many endpoints as it may")]
    TooMany,
    /// The key the request came with is no longer the agent's (rotated while the request was
    /// under way), or the agent was deactivated.
    #[error("the agent key is no longer in force")]
    KeyRevoked,
    /// Another request with the same idempotency key is being written right now.
    #[error("a request with this idempotency key is in progress")]
    KeyInFlight,
    /// The idempotency key was used, within its window, for a different request.
    #[error("idempotency key already used for a different request")]
    KeyReused,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// An endpoint and the secret its request made, answered once and again to a retry of its key.
pub type EndpointWithSecret = Answered<(WebhookEndpointRecord, String)>;

/// An agent's endpoints and their secrets; used by `WebhookService` and `EventAdmin`.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait WebhookEndpointStore: Send + Sync {
    /// Creates the endpoint unless the agent holds `max` already. Under `keyed`, a retry of the
    /// same request answers the first endpoint and secret again (the key's record written with
    /// the endpoint), another request under the key is refused.
    async fn create(
        &self,
        agent: AgentId,
        endpoint: NewWebhookEndpoint,
        max: usize,
        keyed: Option<RequestKey>,
    ) -> Result<EndpointWithSecret, EndpointRefusal>;

    /// The agent whose endpoint `id` is, if any.
    async fn owner(&self, id: WebhookEndpointId) -> Result<Option<AgentId>, StoreError>;

    /// The agent's endpoints, oldest first.
    async fn list(&self, agent: AgentId) -> Result<Vec<WebhookEndpointRecord>, StoreError>;

    async fn get(
        &self,
        agent: AgentId,
        id: WebhookEndpointId,
    ) -> Result<Option<WebhookEndpointRecord>, StoreError>;

    /// Applies `changes`, made with the agent key `key`; enabling clears the reason it was
    /// disabled and makes the endpoint that key's, disabling fails what is queued for it (kept
    /// for replay).
    async fn update(
        &self,
        agent: AgentId,
        id: WebhookEndpointId,
        changes: WebhookEndpointChanges,
        key: AgentKeyHash,
    ) -> Result<Option<WebhookEndpointRecord>, EndpointRefusal>;

    /// Removes the endpoint and whatever is queued for it; whether it existed.
    async fn delete(&self, agent: AgentId, id: WebhookEndpointId) -> Result<bool, StoreError>;

    /// Makes `secret` the endpoint's newest; the one it replaces signs for `old_signs_for` more,
    /// and any older one no longer signs: at most two sign at once. Under `keyed`, as `create`.
    async fn rotate_secret(
        &self,
        agent: AgentId,
        id: WebhookEndpointId,
        secret: String,
        old_signs_for: Duration,
        keyed: Option<RequestKey>,
    ) -> Result<Option<EndpointWithSecret>, EndpointRefusal>;
}

/// An endpoint's deliveries: its attempts, and replays; used by `WebhookService` and `EventAdmin`.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait WebhookDeliveryLog: Send + Sync {
    /// The endpoint's attempts, newest first, after `after`; `None` when it is not found.
    async fn attempts(
        &self,
        agent: AgentId,
        id: WebhookEndpointId,
        after: Option<CursorPosition>,
        limit: usize,
    ) -> Result<Option<Vec<WebhookAttemptRecord>>, StoreError>;

    /// Delivers again, now, every kept event of a type the endpoint wants with `seq > after`,
    /// whatever became of its delivery: a delivery waiting for its next attempt is made due at
    /// once, any other event (delivered, failed, or being attempted right now) is queued anew,
    /// so a repeated replay queues no event twice. A replay by the agent takes one from the
    /// endpoint's `rate` first; the operator's takes none. `None` when it is not found. Under
    /// `keyed`, a retry of the same replay answers the first one's count again and queues
    /// nothing, taking no token.
    async fn replay(
        &self,
        agent: AgentId,
        id: WebhookEndpointId,
        after: u64,
        rate: Option<RateLimit>,
        keyed: Option<RequestKey>,
    ) -> Result<Option<Replayed>, StoreError>;
}

/// Attempts logged and gone endpoints disabled; used by `WebhookAttempt` and `EventAdmin`.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait WebhookAttemptOutcomes: Send + Sync {
    /// Keeps what one attempt came to.
    async fn log_attempt(
        &self,
        endpoint: WebhookEndpointId,
        attempt: &WebhookAttemptRecord,
    ) -> Result<(), StoreError>;

    /// Disables the endpoint with `reason` (its receiver said it is gone) and fails what is
    /// queued for it.
    async fn disable(&self, id: WebhookEndpointId, reason: &str) -> Result<(), StoreError>;
}

/// What a replay came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replayed {
    /// How many deliveries are due now.
    Queued(usize),
    /// The first replay of the idempotency key, given again: how many it made due; nothing was
    /// queued now.
    Again(usize),
    /// Another replay with the same idempotency key is being written right now.
    KeyInFlight,
    /// The idempotency key was used, within its window, for a different request.
    KeyReused,
    /// The endpoint's replays are spent until `retry_after`; nothing was queued.
    Limited { retry_after: Duration },
}

/// One event to post to one endpoint: a webhook delivery queue's job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookDelivery {
    pub id: WebhookDeliveryId,
    /// Whose endpoint it is: the agent whose deliveries share its places.
    pub agent: AgentId,
    pub endpoint: WebhookEndpointId,
    pub url: String,
    /// Every secret that signs for the endpoint now, newest first.
    pub secrets: Vec<String>,
    pub event: EventRecord,
    /// 1 for the first attempt at this delivery.
    pub attempt: u32,
}

/// A delivery is done when its receiver answered 2xx, with that status; it holds one of its
/// agent's places while it is attempted.
impl LeasedJob for WebhookDelivery {
    type Id = WebhookDeliveryId;
    type Done = u16;
    type Owner = AgentId;
    const QUEUED_TOPIC: &'static str = WEBHOOK_DELIVERIES_TOPIC;

    fn id(&self) -> WebhookDeliveryId {
        self.id
    }

    fn owner(&self) -> Option<AgentId> {
        Some(self.agent)
    }
}

/// How one POST to a receiver went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostAnswer {
    /// The receiver's status; `None` when there was none (refused target, no connection,
    /// timeout).
    pub status: Option<u16>,
    /// Why the attempt failed, as its agent reads it; `None` for a 2xx.
    pub failure: Option<AttemptFailure>,
    /// What went wrong in full (the addresses a refused host resolved to, the connection's
    /// error, the start of the receiver's answer): for the server's log alone.
    pub detail: Option<String>,
    /// The receiver's `Retry-After`, when it gave one.
    pub retry_after: Option<Duration>,
    pub duration: Duration,
}

/// Posts one event to one receiver, signed (Standard Webhooks), at the URL's address checked
/// again at this attempt.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait WebhookPoster: Send + Sync {
    async fn post(&self, delivery: &WebhookDelivery) -> PostAnswer;
}
