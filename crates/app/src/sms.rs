//! The runtime side of SMS: the number, its history synced from the provider, inbound messages
//! from the provider's webhook, and the wait for a verification code.
//!
//! A wait holds no database connection while it waits: it subscribes to the agent's inbound topic
//! on the notification hub *before* it looks at the stored messages, so a message committed
//! between the look and the wait still wakes it, on whichever instance it arrived.

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
    inbound_topic, AgentStore, NewSms, Notifications, ProviderSms, SmsFlow, SmsProvider, SmsStore,
    SmsWebhookVerifier, StoreError, Timer,
};
use text_mining::{
    extract_verification_codes, matches_service, recognise_service, sender_may_be, Sender,
};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::waiting::{look_until_found, Joined, Shutdown, Waiter, Waits};

/// Characters kept of an SMS body: a concatenated SMS is at most about 1,600.
const MAX_SMS_BODY_CHARS: usize = 8 * 1024;
/// Characters kept of a sender or recipient (a number, a short code or an alphanumeric id).
const MAX_SMS_ADDRESS_CHARS: usize = 64;
use crate::NotProvisioned;

/// How many unseen messages a wait looks through for one matching its service.
const UNSEEN_LOOKED_AT: usize = 50;

#[derive(Debug, thiserror::Error)]
pub enum SmsError {
    #[error(transparent)]
    NotProvisioned(#[from] NotProvisioned),
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum WaitError {
    #[error(transparent)]
    NotProvisioned(#[from] NotProvisioned),
    /// No new message came within the timeout (or the server is shutting down).
    #[error("no verification code arrived in time")]
    TimedOut,
    #[error("too many waits of this agent at once")]
    TooManyWaiters,
    /// The agent's key stopped authenticating it while it waited (deactivated, key rotated).
    #[error("the agent key no longer authenticates")]
    Revoked,
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Debug, thiserror::Error)]
pub enum SmsWebhookError {
    /// The inbound webhook has no credentials to check signatures with.
    #[error("the inbound SMS webhook is not configured")]
    NotConfigured,
    #[error("invalid webhook signature")]
    BadSignature,
    #[error("the webhook lacks {0}")]
    Missing(&'static str),
    /// The form is not one the provider posts.
    #[error("not an SMS webhook of the provider: {0}")]
    Malformed(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A wait for a code, as the agent asked for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeWait {
    /// Empty: any message.
    pub service_name: String,
    pub timeout: Duration,
    pub request_id: Option<String>,
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
    pub agents: Arc<dyn AgentStore>,
    pub store: Arc<dyn SmsStore>,
    pub provider: Arc<dyn SmsProvider>,
    pub notifications: Arc<dyn Notifications>,
    pub timer: Arc<dyn Timer>,
    /// `None` when no webhook credentials are configured: every webhook is then refused.
    pub webhook: Option<SmsWebhook>,
}

/// How the provider's webhook is checked.
pub struct SmsWebhook {
    pub verifier: Arc<dyn SmsWebhookVerifier>,
    /// The service's public base URL (`https://agents.example.com`): the provider signs the URL it
    /// posted to, which a proxy in front of the service hides from it.
    pub public_base_url: String,
}

pub struct SmsService {
    ports: Arc<SmsPorts>,
    /// Syncs in progress, by number: concurrent ones share one provider call.
    syncs: Arc<Syncs>,
    waits: Waits<SmsMessageRecord>,
}

impl SmsService {
    /// `sync_fresh_for`: how long a sync of a number stands before a read or a wait syncs again.
    pub fn new(ports: SmsPorts, waiters_per_agent: usize, sync_fresh_for: Duration) -> Self {
        Self {
            ports: Arc::new(ports),
            syncs: Arc::new(Syncs::new(sync_fresh_for)),
            waits: Waits::new(waiters_per_agent),
        }
    }

    /// Ends every wait at once with a timeout, so a stopping server answers them instead of
    /// dropping them.
    pub fn shut_down(&self) {
        self.waits.shut_down(self.ports.notifications.as_ref());
    }

    async fn require_number<E: From<StoreError> + From<NotProvisioned>>(
        &self,
        agent: AgentId,
    ) -> Result<PhoneNumberRecord, E> {
        Ok(self
            .number(agent)
            .await?
            .ok_or(NotProvisioned::PhoneNumber)?)
    }

    /// The agent's number; `None` when it has none.
    pub async fn number(&self, agent: AgentId) -> Result<Option<PhoneNumberRecord>, StoreError> {
        let profile = self.ports.agents.profile(agent).await?;
        Ok(profile.and_then(|profile| profile.phone_number))
    }

    /// Syncs the newest provider messages, then one page of the stored history, newest first.
    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn messages(
        &self,
        agent: AgentId,
        direction: Option<Direction>,
        limit: usize,
        offset: usize,
    ) -> Result<SmsHistory, SmsError> {
        let number = self.require_number::<SmsError>(agent).await?;
        let synced = self.sync(agent, &number).await?;
        let messages = self
            .ports
            .store
            .page(number.id, direction, limit, offset)
            .await?;
        Ok(SmsHistory { messages, synced })
    }

    async fn sync(&self, agent: AgentId, number: &PhoneNumberRecord) -> Result<bool, StoreError> {
        sync(&self.ports, &self.syncs, agent, number).await
    }

    /// The newest unseen message (of `service_name`, when given), marked seen; else waits for one
    /// until the timeout, or until the agent's key stops authenticating it. With a request id, a
    /// retry returns what the first wait returned. `profile` is the one the request
    /// authenticated with.
    #[tracing::instrument(level = "debug", skip(self, profile), fields(agent = %profile.agent.id))]
    pub async fn wait_for_code(
        &self,
        profile: &AgentProfile,
        wait: CodeWait,
    ) -> Result<SmsMessageRecord, WaitError> {
        let agent = profile.agent.id;
        let number = profile
            .phone_number
            .clone()
            .ok_or(NotProvisioned::PhoneNumber)?;
        if let Some(request_id) = &wait.request_id {
            if let Some(done) = self.ports.store.wait_result(agent, request_id).await? {
                return Ok(done);
            }
        }
        let waiter = Waiter::new(profile, self.ports.agents.clone());
        let (ports, syncs) = (self.ports.clone(), self.syncs.clone());
        self.waits
            .run(agent, wait.request_id.clone(), move |shutdown| {
                wait_for(ports, syncs, waiter, number, wait, shutdown).boxed()
            })
            .await
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
    /// configured and `signature` could be one.
    pub fn check_webhook_signature(&self, signature: &str) -> Result<(), SmsWebhookError> {
        let webhook = self
            .ports
            .webhook
            .as_ref()
            .ok_or(SmsWebhookError::NotConfigured)?;
        match webhook.verifier.well_formed(signature) {
            true => Ok(()),
            false => Err(SmsWebhookError::BadSignature),
        }
    }

    /// Takes in the provider's webhook: checks the signature over the public URL it was posted
    /// to (`path_and_query` under the public base URL) and its form parameters, and that the
    /// form is one the provider posts, then stores the message.
    pub async fn receive_webhook(
        &self,
        path_and_query: &str,
        params: &[(String, String)],
        signature: &str,
    ) -> Result<Delivered, SmsWebhookError> {
        let webhook = self
            .ports
            .webhook
            .as_ref()
            .ok_or(SmsWebhookError::NotConfigured)?;
        let url = format!(
            "{}{path_and_query}",
            webhook.public_base_url.trim_end_matches('/')
        );
        if !webhook.verifier.verify(&url, params, signature) {
            return Err(SmsWebhookError::BadSignature);
        }
        if let Some(refused) = webhook.verifier.refused_params(params) {
            return Err(SmsWebhookError::Malformed(refused));
        }
        let param = |name: &'static str| {
            params
                .iter()
                .find(|(key, _)| key == name)
                .map(|(_, value)| value.clone())
                .ok_or(SmsWebhookError::Missing(name))
        };
        let message = ProviderSms {
            provider_message_id: param("MessageSid")?,
            flow: SmsFlow::Inbound,
            from: param("From")?,
            to: param("To")?,
            body: param("Body").unwrap_or_default(),
            received_at: None,
        };
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

/// Provider syncs by number: callers that ask at once share one provider call, and one asked for
/// within `fresh_for` of the last is not made again: what arrives in between comes by webhook.
/// Every history read and every wait asks, so without it one agent's reads were as many provider
/// calls.
pub(crate) struct Syncs {
    running: Joined<PhoneNumberId, Result<bool, StoreError>>,
    /// When each number's last sync ended, and whether the provider answered it.
    last: Mutex<HashMap<PhoneNumberId, (Instant, bool)>>,
    fresh_for: Duration,
}

impl Syncs {
    fn new(fresh_for: Duration) -> Self {
        Self {
            running: Joined::default(),
            last: Mutex::default(),
            fresh_for,
        }
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

/// The newest provider messages of the number brought into the store, unless a sync ended
/// within `fresh_for`; false when the provider could not be reached (then or by that sync).
async fn sync(
    ports: &Arc<SmsPorts>,
    syncs: &Syncs,
    agent: AgentId,
    number: &PhoneNumberRecord,
) -> Result<bool, StoreError> {
    if let Some(synced) = syncs.fresh(number.id) {
        return Ok(synced);
    }
    let (ports, owned) = (ports.clone(), number.clone());
    let synced = syncs
        .running
        .run(number.id, move || sync_once(ports, agent, owned).boxed())
        .await?;
    syncs.ended(number.id, synced);
    Ok(synced)
}

/// Brings the newest provider messages of the number into the store; false when the provider
/// could not be reached (the stored state stands).
async fn sync_once(
    ports: Arc<SmsPorts>,
    agent: AgentId,
    number: PhoneNumberRecord,
) -> Result<bool, StoreError> {
    let recent = match ports
        .provider
        .recent_messages(&number.number, SYNC_WINDOW)
        .await
    {
        Ok(recent) => recent,
        Err(error) => {
            tracing::warn!(%error, "SMS provider unreachable; serving the stored messages");
            return Ok(false);
        }
    };
    let provider = ports.provider.name();
    let messages = recent
        .into_iter()
        .map(|message| new_sms(agent, &number, provider, message, SmsSource::Sync))
        .collect();
    ports.store.store(messages).await?;
    Ok(true)
}

/// The wait itself: a sync, then looks until a message is found, the timeout, shutdown or the
/// key's revocation.
async fn wait_for(
    ports: Arc<SmsPorts>,
    syncs: Arc<Syncs>,
    waiter: Waiter,
    number: PhoneNumberRecord,
    wait: CodeWait,
    shutdown: Arc<Shutdown>,
) -> Result<SmsMessageRecord, WaitError> {
    let agent = waiter.agent();
    // A message only the provider has yet (no webhook reached us) counts too.
    if let Err(error) = sync(&ports, &syncs, agent, &number).await {
        tracing::warn!(%error, "could not sync before waiting");
    }
    look_until_found(
        ports.notifications.as_ref(),
        ports.timer.as_ref(),
        &inbound_topic(agent),
        wait.timeout,
        &shutdown,
        &waiter,
        || take_newest_unseen(&ports, agent, &number, &wait),
    )
    .await
}

/// The newest unseen message of the wanted service, marked seen for this wait; `None` when there
/// is none (or other waits took each one first).
async fn take_newest_unseen(
    ports: &SmsPorts,
    agent: AgentId,
    number: &PhoneNumberRecord,
    wait: &CodeWait,
) -> Result<Option<SmsMessageRecord>, StoreError> {
    if let Some(request_id) = &wait.request_id {
        if let Some(done) = ports.store.wait_result(agent, request_id).await? {
            return Ok(Some(done));
        }
    }
    let unseen = ports.store.unseen(number.id, UNSEEN_LOOKED_AT).await?;
    for message in unseen {
        let named = matches_service(
            &message.body,
            message.service_name.as_deref(),
            &wait.service_name,
        ) && sender_may_be(&wait.service_name, Sender::of_sms(&message.from));
        if !named {
            continue;
        }
        if let Some(seen) = ports
            .store
            .mark_seen(message.id, agent, wait.request_id.clone())
            .await?
        {
            return Ok(Some(seen));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::{AgentProfile, AgentRecord, PhoneNumberRecord};
    use ports::{
        MockAgentStore, MockNotifications, MockSmsProvider, MockSmsStore, MockTimer, Wakeup,
    };

    fn pending() -> Wakeup {
        Box::pin(std::future::pending())
    }

    fn ready() -> Wakeup {
        Box::pin(std::future::ready(()))
    }

    fn message(id: u128, body: &str) -> SmsMessageRecord {
        SmsMessageRecord {
            id: SmsMessageId(Uuid::from_u128(id)),
            agent_id: AgentRecord::fixture().id,
            phone_number_id: PhoneNumberRecord::fixture().id,
            direction: Direction::Inbound,
            provider: "sandbox".into(),
            provider_message_id: format!("SM{id}"),
            source: SmsSource::Webhook,
            from: "+15550001111".into(),
            to: PhoneNumberRecord::fixture().number.as_str().into(),
            body: body.into(),
            parsed_code: extract_verification_codes(body).into_iter().next(),
            service_name: recognise_service(body),
            provider_received_at: None,
            seen_at: None,
            created_at: OffsetDateTime::UNIX_EPOCH,
        }
    }

    struct Mocks {
        store: MockSmsStore,
        notifications: MockNotifications,
        timer: MockTimer,
    }

    impl Mocks {
        fn new() -> Self {
            let mut notifications = MockNotifications::new();
            notifications.expect_notify_here().return_const(());
            Self {
                store: MockSmsStore::new(),
                notifications,
                timer: MockTimer::new(),
            }
        }

        /// The service, the fixture's key authenticating its agent throughout.
        fn service(self) -> SmsService {
            let mut agents = MockAgentStore::new();
            agents
                .expect_profile()
                .returning(|_| Ok(Some(phone_profile())));
            agents
                .expect_active_profile_by_key_hash()
                .returning(|_| Ok(Some(phone_profile())));
            self.service_with(agents)
        }

        fn service_with(self, agents: MockAgentStore) -> SmsService {
            let mut provider = MockSmsProvider::new();
            provider.expect_name().return_const("sandbox");
            provider
                .expect_recent_messages()
                .returning(|_, _| Ok(Vec::new()));
            let mut store = self.store;
            store
                .expect_store()
                .returning(|messages| Ok(messages.len()));
            SmsService::new(
                SmsPorts {
                    agents: Arc::new(agents),
                    store: Arc::new(store),
                    provider: Arc::new(provider),
                    notifications: Arc::new(self.notifications),
                    timer: Arc::new(self.timer),
                    webhook: None,
                },
                2,
                Duration::ZERO,
            )
        }
    }

    fn phone_profile() -> AgentProfile {
        AgentProfile {
            phone_number: Some(PhoneNumberRecord::fixture()),
            ..AgentProfile::fixture()
        }
    }

    fn wait(service_name: &str, seconds: u64, request_id: Option<&str>) -> CodeWait {
        CodeWait {
            service_name: service_name.into(),
            timeout: Duration::from_secs(seconds),
            request_id: request_id.map(str::to_owned),
        }
    }

    #[tokio::test]
    async fn the_newest_unseen_message_of_the_wanted_service_is_taken_for_the_request() {
        let mut mocks = Mocks::new();
        mocks
            .notifications
            .expect_subscribe()
            .returning(|_| pending());
        mocks.store.expect_wait_result().returning(|_, _| Ok(None));
        mocks.store.expect_unseen().returning(|_, _| {
            Ok(vec![
                message(2, "[Uber] Your code is 2222"),
                message(1, "Your Google verification code is 111111"),
            ])
        });
        mocks
            .store
            .expect_mark_seen()
            .withf(|id, _, request_id| {
                *id == SmsMessageId(Uuid::from_u128(1)) && request_id.as_deref() == Some("r-1")
            })
            .times(1)
            .returning(|_, _, _| Ok(Some(message(1, "Your Google verification code is 111111"))));
        let found = mocks
            .service()
            .wait_for_code(&phone_profile(), wait("google", 30, Some("r-1")))
            .await
            .expect("found");
        assert_eq!(found.parsed_code.as_deref(), Some("111111"));
    }

    #[tokio::test]
    async fn a_zero_timeout_looks_once_and_never_sleeps() {
        let mut mocks = Mocks::new();
        mocks
            .notifications
            .expect_subscribe()
            .returning(|_| pending());
        mocks
            .store
            .expect_unseen()
            .times(1)
            .returning(|_, _| Ok(Vec::new()));
        mocks.timer.expect_sleep().never();
        assert!(matches!(
            mocks
                .service()
                .wait_for_code(&phone_profile(), wait("", 0, None))
                .await,
            Err(WaitError::TimedOut)
        ));
    }

    #[tokio::test]
    async fn a_wake_up_makes_the_wait_look_again_and_a_lost_race_looks_on() {
        let mut mocks = Mocks::new();
        // The inbound topic wakes at once; the shutdown and revocation topics never do.
        mocks.notifications.expect_subscribe().returning(|topic| {
            if topic.starts_with("inbound:") {
                ready()
            } else {
                pending()
            }
        });
        mocks.timer.expect_sleep().returning(|_| pending());
        let mut looks = 0;
        mocks.store.expect_unseen().times(3).returning(move |_, _| {
            looks += 1;
            Ok(match looks {
                1 => Vec::new(),
                _ => vec![message(7, "Your code is 777777")],
            })
        });
        let mut marks = 0;
        mocks
            .store
            .expect_mark_seen()
            .times(2)
            .returning(move |_, _, _| {
                marks += 1;
                // Another wait takes the first one it finds.
                Ok((marks == 2).then(|| message(7, "Your code is 777777")))
            });
        let found = mocks
            .service()
            .wait_for_code(&phone_profile(), wait("", 30, None))
            .await
            .expect("found");
        assert_eq!(found.parsed_code.as_deref(), Some("777777"));
    }

    #[tokio::test]
    async fn a_request_id_already_answered_is_answered_the_same_without_looking() {
        let mut mocks = Mocks::new();
        mocks
            .store
            .expect_wait_result()
            .returning(|_, _| Ok(Some(message(3, "Your code is 333333"))));
        mocks.store.expect_unseen().never();
        let found = mocks
            .service()
            .wait_for_code(&phone_profile(), wait("", 30, Some("r-3")))
            .await
            .expect("found");
        assert_eq!(found.id, SmsMessageId(Uuid::from_u128(3)));
    }

    #[tokio::test]
    async fn shutting_down_answers_a_wait_as_timed_out() {
        let mut mocks = Mocks::new();
        mocks
            .notifications
            .expect_subscribe()
            .returning(|_| pending());
        mocks.store.expect_unseen().returning(|_, _| Ok(Vec::new()));
        let service = mocks.service();
        service.shut_down();
        assert!(matches!(
            service
                .wait_for_code(&phone_profile(), wait("", 300, None))
                .await,
            Err(WaitError::TimedOut)
        ));
    }

    #[tokio::test]
    async fn a_wait_ends_revoked_when_its_key_stops_authenticating() {
        let revoked_while_asleep = |authorized_at_first: bool| {
            let mut mocks = Mocks::new();
            mocks.notifications.expect_subscribe().returning(|topic| {
                if topic.starts_with("revoked:") {
                    ready()
                } else {
                    pending()
                }
            });
            mocks.timer.expect_sleep().returning(|_| pending());
            mocks.store.expect_unseen().returning(|_, _| Ok(Vec::new()));
            let mut agents = MockAgentStore::new();
            let mut checks = 0;
            agents
                .expect_active_profile_by_key_hash()
                .returning(move |_| {
                    checks += 1;
                    Ok((authorized_at_first && checks == 1).then(phone_profile))
                });
            mocks.service_with(agents)
        };
        for authorized_at_first in [true, false] {
            let service = revoked_while_asleep(authorized_at_first);
            assert!(
                matches!(
                    service
                        .wait_for_code(&phone_profile(), wait("", 300, None))
                        .await,
                    Err(WaitError::Revoked)
                ),
                "authorized at first: {authorized_at_first}"
            );
        }
    }

    /// A service whose provider answers `answers` to its syncs, one call each, the number's
    /// syncs standing for `fresh_for`.
    fn syncing(answers: Vec<bool>, fresh_for: Duration) -> SmsService {
        let mut agents = MockAgentStore::new();
        agents
            .expect_profile()
            .returning(|_| Ok(Some(phone_profile())));
        let mut provider = MockSmsProvider::new();
        provider.expect_name().return_const("sandbox");
        let mut answers = answers.into_iter();
        provider
            .expect_recent_messages()
            .times(answers.len())
            .returning(move |_, _| match answers.next() {
                Some(true) => Ok(Vec::new()),
                _ => Err(ports::ProviderError::Unavailable("down".into())),
            });
        let mut store = MockSmsStore::new();
        store
            .expect_store()
            .returning(|messages| Ok(messages.len()));
        store.expect_page().returning(|_, _, _, _| Ok(Vec::new()));
        SmsService::new(
            SmsPorts {
                agents: Arc::new(agents),
                store: Arc::new(store),
                provider: Arc::new(provider),
                notifications: Arc::new(MockNotifications::new()),
                timer: Arc::new(MockTimer::new()),
                webhook: None,
            },
            2,
            fresh_for,
        )
    }

    #[tokio::test]
    async fn a_recent_sync_stands_for_the_next_reads_and_an_old_one_does_not() {
        let agent = AgentRecord::fixture().id;
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
        let mut mocks = Mocks::new();
        mocks.store.expect_number_owner().returning(|number| {
            Ok((number == &PhoneNumberRecord::fixture().number)
                .then(|| (AgentRecord::fixture().id, PhoneNumberRecord::fixture())))
        });
        let service = mocks.service();
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
}
