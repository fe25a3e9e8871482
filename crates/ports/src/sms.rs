//! SMS: the provider that holds a number's messages, its inbound webhook, and
//! the number's life at the provider (bought for an agent, released when it is deactivated).

use async_trait::async_trait;
use domain::{
    AgentId, Direction, PhoneNumber, PhoneNumberId, PhoneNumberRecord, SmsMessageId,
    SmsMessageRecord, SmsSource,
};
use time::OffsetDateTime;

use crate::{
    ProviderError, ProviderWebhookHeaders, ProviderWebhookRefusal, ProviderWebhookRequest,
    StoreError,
};

/// Which way a message went, as the provider reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmsFlow {
    Inbound,
    Outbound,
}

/// A message as the SMS provider holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderSms {
    /// The provider's id (Twilio's `SM...` SID): the key a message is stored under once.
    pub provider_message_id: String,
    pub flow: SmsFlow,
    /// E.164 as the provider wrote it.
    pub from: String,
    pub to: String,
    pub body: String,
    /// When the provider received it, RFC 3339; `None` when it does not say.
    pub received_at: Option<String>,
}

/// Reads a number's messages at the SMS provider.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait SmsProvider: Send + Sync {
    /// The provider's name, stored with what it delivered (`twilio`, `sandbox`).
    fn name(&self) -> &'static str;

    /// The newest `limit` messages sent to `number`, newest first.
    async fn recent_messages(
        &self,
        number: &PhoneNumber,
        limit: usize,
    ) -> Result<Vec<ProviderSms>, ProviderError>;
}

/// Gives a number back to the provider when its agent is deactivated.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait NumberReleaser: Send + Sync {
    async fn release_number(&self, number: &PhoneNumber) -> Result<(), ProviderError>;
}

/// The inbound-SMS webhook of the SMS provider: its signature checked and its form read, per the
/// provider's protocol.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait InboundSmsWebhook: Send + Sync {
    /// What can be told from the headers alone, before the body is read: whether they could
    /// carry a valid signature.
    fn could_verify(&self, headers: &ProviderWebhookHeaders) -> Result<(), ProviderWebhookRefusal>;

    /// The message the webhook delivers, once its signature is found to be the provider's.
    fn receive(
        &self,
        request: ProviderWebhookRequest,
    ) -> Result<ProviderSms, ProviderWebhookRefusal>;
}

/// A message ready to be stored for a number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSms {
    pub id: SmsMessageId,
    pub agent_id: AgentId,
    pub phone_number_id: PhoneNumberId,
    pub direction: Direction,
    pub provider: String,
    pub provider_message_id: String,
    pub source: SmsSource,
    pub from: String,
    pub to: String,
    pub body: String,
    pub parsed_code: Option<String>,
    pub service_name: Option<String>,
    pub provider_received_at: Option<OffsetDateTime>,
}

/// Where a number's messages are kept, and which of them a wait for a code has returned.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait SmsStore: Send + Sync {
    /// The agent a number belongs to, with the number.
    async fn number_owner(
        &self,
        number: &PhoneNumber,
    ) -> Result<Option<(AgentId, PhoneNumberRecord)>, StoreError>;

    /// Stores each message not stored yet (by provider id); returns how many were new. A new
    /// inbound message wakes the agent's waiters on every instance when it commits.
    async fn store(&self, messages: Vec<NewSms>) -> Result<usize, StoreError>;

    /// Messages of the number, newest first.
    async fn page(
        &self,
        number: PhoneNumberId,
        direction: Option<Direction>,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<SmsMessageRecord>, StoreError>;

    /// Inbound messages no wait has returned yet, newest first.
    async fn unseen(
        &self,
        number: PhoneNumberId,
        limit: usize,
    ) -> Result<Vec<SmsMessageRecord>, StoreError>;

    /// Marks the message seen for a wait (and binds `request_id` to it), unless another wait got
    /// it first: then `None`.
    async fn mark_seen(
        &self,
        id: SmsMessageId,
        agent: AgentId,
        request_id: Option<String>,
    ) -> Result<Option<SmsMessageRecord>, StoreError>;

    /// What an earlier wait with this request id returned.
    async fn wait_result(
        &self,
        agent: AgentId,
        request_id: &str,
    ) -> Result<Option<SmsMessageRecord>, StoreError>;
}
