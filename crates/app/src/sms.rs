//! The runtime side of SMS: the number, its history synced from the provider, and inbound
//! messages from the provider's webhook. Waits for a code by SMS are `CodeService`'s, restricted
//! to the SMS channel; they sync the number through the `SmsSync` made here.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use domain::inbound::{delivery_key, kept_text};
use domain::{
    AgentId, AgentProfile, Direction, PhoneNumber, PhoneNumberId, PhoneNumberRecord, SmsMessageId,
    SmsMessageRecord, SmsSource, SYNC_WINDOW,
};
use futures_util::future::FutureExt;
use ports::{
    InboundSmsWebhook, NewSms, ProviderSms, ProviderWebhookHeaders, ProviderWebhookRefusal,
    ProviderWebhookRequest, SmsFlow, SmsProvider, SmsStore, StoreError,
};
use text_mining::{extract_verification_codes, recognise_service};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::waiting::Joined;
use crate::NotProvisioned;

/// Characters kept of an SMS body: a concatenated SMS is at most about 1,600.
const MAX_SMS_BODY_CHARS: usize = 8 * 1024;
/// Characters kept of a sender or recipient (a number, a short code or an alphanumeric id).
const MAX_SMS_ADDRESS_CHARS: usize = 64;

#[derive(Debug, thiserror::Error)]
pub enum SmsError {
    #[error(transparent)]
    NotProvisioned(#[from] NotProvisioned),
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Debug, thiserror::Error)]
pub enum SmsWebhookError {
    /// The inbound webhook has no credentials to check signatures with.
    #[error("the inbound SMS webhook is not configured")]
    NotConfigured,
    /// The provider's webhook adapter refused the request.
    #[error(transparent)]
    Refused(#[from] ProviderWebhookRefusal),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A page of the history and whether it reflects the provider now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmsHistory {
    pub messages: Vec<SmsMessageRecord>,
    /// False when the provider could not be reached: the stored state is served as it is.
    pub synced: bool,
}

/// What an inbound delivery came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivered {
    Stored,
    /// The message was stored before (a redelivery).
    Duplicate,
    /// No number of this service is the recipient.
    Unrouted,
}

pub struct SmsPorts {
    pub store: Arc<dyn SmsStore>,
    pub provider: Arc<dyn SmsProvider>,
    /// `None` when no webhook credentials are configured: every webhook is then refused.
    pub webhook: Option<Arc<dyn InboundSmsWebhook>>,
}

pub struct SmsService {
    ports: SmsPorts,
    sync: Arc<SmsSync>,
}

impl SmsService {
    /// `sync_fresh_for`: how long a sync of a number stands before a read or a wait syncs again.
    pub fn new(ports: SmsPorts, sync_fresh_for: Duration) -> Self {
        let sync = Arc::new(SmsSync::new(
            ports.provider.clone(),
            ports.store.clone(),
            sync_fresh_for,
        ));
        Self { ports, sync }
    }

    /// The syncs with the provider, shared with the waits for a code (`CodeService`): one
    /// mechanism, one memory of which numbers were synced lately.
    pub fn provider_sync(&self) -> Arc<SmsSync> {
        self.sync.clone()
    }

    /// The authenticated agent's number; `None` when it has none. Read from the profile the
    /// request authenticated with, no query.
    pub fn number<'a>(&self, profile: &'a AgentProfile) -> Option<&'a PhoneNumberRecord> {
        profile.phone_number.as_ref()
    }

    /// Syncs the newest provider messages, then one page of the stored history, newest first.
    #[tracing::instrument(level = "debug", skip(self, profile), fields(agent = %profile.agent.id))]
    pub async fn messages(
        &self,
        profile: &AgentProfile,
        direction: Option<Direction>,
        limit: usize,
        offset: usize,
    ) -> Result<SmsHistory, SmsError> {
        let number = self.number(profile).ok_or(NotProvisioned::PhoneNumber)?;
        let synced = self.sync.sync(profile.agent.id, number).await?;
        let messages = self
            .ports
            .store
            .page(number.id, direction, limit, offset)
            .await?;
        Ok(SmsHistory { messages, synced })
    }

    /// Takes in a message the provider delivered (its webhook, or the sandbox): stored once, and
    /// the agent's waiters woken on every instance.
    #[tracing::instrument(level = "debug", skip_all, fields(provider_message_id = %message.provider_message_id))]
    pub async fn receive(
        &self,
        message: ProviderSms,
        source: SmsSource,
    ) -> Result<Delivered, StoreError> {
        let Ok(to) = PhoneNumber::parse(&message.to) else {
            tracing::info!("inbound SMS for a malformed number; dropped");
            return Ok(Delivered::Unrouted);
        };
        let Some((agent, number)) = self.ports.store.number_owner(&to).await? else {
            tracing::info!("inbound SMS for no number of this service; dropped");
            return Ok(Delivered::Unrouted);
        };
        let provider = self.ports.provider.name();
        let stored = self
            .ports
            .store
            .store(vec![new_sms(agent, &number, provider, message, source)])
            .await?;
        Ok(match stored {
            0 => Delivered::Duplicate,
            _ => Delivered::Stored,
        })
    }

    /// What can be judged of the provider's webhook before its body is read: the webhook is
    /// configured and its headers could carry a valid signature.
    pub fn check_webhook(&self, headers: &ProviderWebhookHeaders) -> Result<(), SmsWebhookError> {
        let webhook = self
            .ports
            .webhook
            .as_ref()
            .ok_or(SmsWebhookError::NotConfigured)?;
        Ok(webhook.could_verify(headers)?)
    }

    /// Takes in the provider's webhook: its adapter checks the signature and reads the message,
    /// stored here for the number it was sent to.
    pub async fn receive_webhook(
        &self,
        request: ProviderWebhookRequest,
    ) -> Result<Delivered, SmsWebhookError> {
        let webhook = self
            .ports
            .webhook
            .as_ref()
            .ok_or(SmsWebhookError::NotConfigured)?;
        let message = webhook.receive(request)?;
        Ok(self.receive(message, SmsSource::Webhook).await?)
    }
}

fn new_sms(
    agent: AgentId,
    number: &PhoneNumberRecord,
    provider: &str,
    message: ProviderSms,
    source: SmsSource,
) -> NewSms {
    let direction = match message.flow {
        SmsFlow::Inbound => Direction::Inbound,
        SmsFlow::Outbound => Direction::Outbound,
    };
    // What the sender wrote, without NUL (which PostgreSQL's text cannot hold) and bounded.
    let body = kept_text(&message.body, MAX_SMS_BODY_CHARS);
    NewSms {
        id: SmsMessageId(Uuid::now_v7()),
        agent_id: agent,
        phone_number_id: number.id,
        direction,
        provider: provider.to_owned(),
        provider_message_id: delivery_key(&message.provider_message_id),
        source,
        parsed_code: extract_verification_codes(&body).into_iter().next(),
        service_name: recognise_service(&body),
        from: kept_text(&message.from, MAX_SMS_ADDRESS_CHARS),
        to: kept_text(&message.to, MAX_SMS_ADDRESS_CHARS),
        body,
        provider_received_at: message
            .received_at
            .as_deref()
            .and_then(|at| OffsetDateTime::parse(at, &Rfc3339).ok()),
    }
}

/// The provider's newest messages of a number brought into the store, for history reads and for
/// waits alike: callers that ask at once share one provider call, and one asked for within
/// `fresh_for` of the last is not made again (what arrives in between comes by webhook). Every
/// history read and every wait asks, so without it one agent's reads were as many provider calls.
pub struct SmsSync {
    provider: Arc<dyn SmsProvider>,
    store: Arc<dyn SmsStore>,
    running: Joined<PhoneNumberId, Result<bool, StoreError>>,
    /// When each number's last sync ended, and whether the provider answered it.
    last: Mutex<HashMap<PhoneNumberId, (Instant, bool)>>,
    fresh_for: Duration,
}

impl SmsSync {
    pub(crate) fn new(
        provider: Arc<dyn SmsProvider>,
        store: Arc<dyn SmsStore>,
        fresh_for: Duration,
    ) -> Self {
        Self {
            provider,
            store,
            running: Joined::default(),
            last: Mutex::default(),
            fresh_for,
        }
    }

    /// Syncs the number unless a sync ended within `fresh_for`; false when the provider could
    /// not be reached (then or by that sync).
    pub(crate) async fn sync(
        &self,
        agent: AgentId,
        number: &PhoneNumberRecord,
    ) -> Result<bool, StoreError> {
        if let Some(synced) = self.fresh(number.id) {
            return Ok(synced);
        }
        let (provider, store, owned) = (self.provider.clone(), self.store.clone(), number.clone());
        let synced = self
            .running
            .run(number.id, move || {
                sync_once(provider, store, agent, owned).boxed()
            })
            .await?;
        self.ended(number.id, synced);
        Ok(synced)
    }

    /// The outcome of a sync of `number` that ended within `fresh_for`.
    fn fresh(&self, number: PhoneNumberId) -> Option<bool> {
        let last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        let (ended, synced) = last.get(&number)?;
        (ended.elapsed() < self.fresh_for).then_some(*synced)
    }

    fn ended(&self, number: PhoneNumberId, synced: bool) {
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        // Numbers not synced lately are forgotten, so the map holds only the active ones.
        last.retain(|_, (ended, _)| ended.elapsed() < self.fresh_for);
        if !self.fresh_for.is_zero() {
            last.insert(number, (Instant::now(), synced));
        }
    }
}

/// Brings the newest provider messages of the number into the store; false when the provider
/// could not be reached (the stored state stands).
async fn sync_once(
    provider: Arc<dyn SmsProvider>,
    store: Arc<dyn SmsStore>,
    agent: AgentId,
    number: PhoneNumberRecord,
) -> Result<bool, StoreError> {
    let recent = match provider.recent_messages(&number.number, SYNC_WINDOW).await {
        Ok(recent) => recent,
        Err(error) => {
            tracing::warn!(%error, "SMS provider unreachable; serving the stored messages");
            return Ok(false);
        }
    };
    let messages = recent
        .into_iter()
        .map(|message| new_sms(agent, &number, provider.name(), message, SmsSource::Sync))
        .collect();
    store.store(messages).await?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::{AgentProfile, AgentRecord, PhoneNumberRecord};
    use ports::{MockInboundSmsWebhook, MockSmsProvider, MockSmsStore};

    fn phone_profile() -> AgentProfile {
        AgentProfile {
            phone_number: Some(PhoneNumberRecord::fixture()),
            ..AgentProfile::fixture()
        }
    }

    /// The service of the fixture's agent over `store` and `provider` (named "sandbox"), the
    /// number's syncs standing for `fresh_for`.
    fn service(store: MockSmsStore, provider: MockSmsProvider, fresh_for: Duration) -> SmsService {
        service_with_webhook(store, provider, fresh_for, None)
    }

    fn service_with_webhook(
        mut store: MockSmsStore,
        mut provider: MockSmsProvider,
        fresh_for: Duration,
        webhook: Option<MockInboundSmsWebhook>,
    ) -> SmsService {
        provider.expect_name().return_const("sandbox");
        store
            .expect_store()
            .returning(|messages| Ok(messages.len()));
        SmsService::new(
            SmsPorts {
                store: Arc::new(store),
                provider: Arc::new(provider),
                webhook: webhook.map(|webhook| Arc::new(webhook) as Arc<dyn InboundSmsWebhook>),
            },
            fresh_for,
        )
    }

    /// A service whose provider answers `answers` to its syncs, one call each, the number's
    /// syncs standing for `fresh_for`.
    fn syncing(answers: Vec<bool>, fresh_for: Duration) -> SmsService {
        let mut provider = MockSmsProvider::new();
        let mut answers = answers.into_iter();
        provider
            .expect_recent_messages()
            .times(answers.len())
            .returning(move |_, _| match answers.next() {
                Some(true) => Ok(Vec::new()),
                _ => Err(ports::ProviderError::Unavailable("down".into())),
            });
        let mut store = MockSmsStore::new();
        store.expect_page().returning(|_, _, _, _| Ok(Vec::new()));
        service(store, provider, fresh_for)
    }

    #[tokio::test]
    async fn a_recent_sync_stands_for_the_next_reads_and_an_old_one_does_not() {
        let agent = &phone_profile();
        let fresh = syncing(vec![true], Duration::from_secs(3600));
        for _ in 0..3 {
            let history = fresh.messages(agent, None, 20, 0).await.expect("read");
            assert!(history.synced);
        }
        let down = syncing(vec![false], Duration::from_secs(3600));
        for _ in 0..3 {
            let history = down.messages(agent, None, 20, 0).await.expect("read");
            assert!(
                !history.synced,
                "a provider just found down is not asked again at once"
            );
        }
        let always = syncing(vec![true, false, true], Duration::ZERO);
        let synced: Vec<bool> = [
            always.messages(agent, None, 20, 0).await,
            always.messages(agent, None, 20, 0).await,
            always.messages(agent, None, 20, 0).await,
        ]
        .into_iter()
        .map(|history| history.expect("read").synced)
        .collect();
        assert_eq!(synced, [true, false, true]);
    }

    #[tokio::test]
    async fn an_sms_for_no_number_of_ours_is_dropped_and_one_for_ours_stored_with_its_code() {
        let mut store = MockSmsStore::new();
        store.expect_number_owner().returning(|number| {
            Ok((number == &PhoneNumberRecord::fixture().number)
                .then(|| (AgentRecord::fixture().id, PhoneNumberRecord::fixture())))
        });
        let service = service(store, MockSmsProvider::new(), Duration::ZERO);
        let sms = |to: &str| ProviderSms {
            provider_message_id: "SM1".into(),
            flow: SmsFlow::Inbound,
            from: "+15550001111".into(),
            to: to.into(),
            body: "[Uber] Your code is 4821".into(),
            received_at: None,
        };
        assert_eq!(
            service
                .receive(sms("+15559990000"), SmsSource::Webhook)
                .await
                .expect("ok"),
            Delivered::Unrouted
        );
        assert_eq!(
            service
                .receive(sms("not a number"), SmsSource::Webhook)
                .await
                .expect("ok"),
            Delivered::Unrouted
        );
        assert_eq!(
            service
                .receive(
                    sms(PhoneNumberRecord::fixture().number.as_str()),
                    SmsSource::Webhook
                )
                .await
                .expect("ok"),
            Delivered::Stored
        );
    }

    fn webhook_request() -> ProviderWebhookRequest {
        ProviderWebhookRequest {
            path_and_query: "/webhooks/sms/twilio".into(),
            headers: ProviderWebhookHeaders::default(),
            body: b"the provider's form".to_vec(),
        }
    }

    #[tokio::test]
    async fn a_refused_webhook_stores_nothing_and_says_why() {
        let refusal = ProviderWebhookRefusal::Malformed("not a form the provider posts".into());
        let mut webhook = MockInboundSmsWebhook::new();
        let refused = refusal.clone();
        webhook
            .expect_could_verify()
            .returning(move |_| Err(refused.clone()));
        let refused = refusal.clone();
        webhook
            .expect_receive()
            .returning(move |_| Err(refused.clone()));
        let mut store = MockSmsStore::new();
        store.expect_number_owner().never();
        let service =
            service_with_webhook(store, MockSmsProvider::new(), Duration::ZERO, Some(webhook));
        assert!(matches!(
            service.check_webhook(&ProviderWebhookHeaders::default()),
            Err(SmsWebhookError::Refused(ref why)) if *why == refusal
        ));
        assert!(matches!(
            service.receive_webhook(webhook_request()).await,
            Err(SmsWebhookError::Refused(ref why)) if *why == refusal
        ));
    }

    #[tokio::test]
    async fn without_a_webhook_every_delivery_is_refused_as_not_configured() {
        let service = service(MockSmsStore::new(), MockSmsProvider::new(), Duration::ZERO);
        assert!(matches!(
            service.check_webhook(&ProviderWebhookHeaders::default()),
            Err(SmsWebhookError::NotConfigured)
        ));
        assert!(matches!(
            service.receive_webhook(webhook_request()).await,
            Err(SmsWebhookError::NotConfigured)
        ));
    }

    #[tokio::test]
    async fn a_webhooks_message_is_stored_for_its_number_as_a_webhook_delivery() {
        let mut webhook = MockInboundSmsWebhook::new();
        webhook
            .expect_receive()
            .withf(|request| request.body == b"the provider's form")
            .returning(|_| {
                Ok(ProviderSms {
                    provider_message_id: "SM1".into(),
                    flow: SmsFlow::Inbound,
                    from: "+15550001111".into(),
                    to: PhoneNumberRecord::fixture().number.as_str().into(),
                    body: "Your code is 4821".into(),
                    received_at: None,
                })
            });
        let mut store = MockSmsStore::new();
        store.expect_number_owner().returning(|_| {
            Ok(Some((
                AgentRecord::fixture().id,
                PhoneNumberRecord::fixture(),
            )))
        });
        store
            .expect_store()
            .withf(|messages| {
                matches!(messages.as_slice(), [message] if message.provider_message_id == "SM1"
                    && message.source == SmsSource::Webhook
                    && message.parsed_code.as_deref() == Some("4821"))
            })
            .times(1)
            .returning(|messages| Ok(messages.len()));
        let service =
            service_with_webhook(store, MockSmsProvider::new(), Duration::ZERO, Some(webhook));
        assert_eq!(
            service
                .receive_webhook(webhook_request())
                .await
                .expect("stored"),
            Delivered::Stored
        );
    }
}
