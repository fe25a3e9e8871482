//! The one wait for a verification code, over SMS, mail or both: sign-up flows send a code by
//! either, and the agent does not know which. `/v1/codes/wait` waits on the channels asked for,
//! `/v1/sms/wait-for-code` on SMS alone; both hold places of one per-agent cap in the long-lived
//! registry and end together at shutdown.
//!
//! A wait holds no database connection while it waits: it subscribes to the agent's inbound topic
//! on the notification hub (new mail and new SMS publish the same one) *before* it looks at the
//! stored messages, so a message committed between the look and the wait still wakes it, on
//! whichever instance it arrived.

use std::sync::Arc;

use domain::{
    AgentId, AgentProfile, EmailInboxRecord, EmailMessageRecord, PhoneNumberRecord,
    SenderAuthentication, SmsMessageRecord,
};
use futures_util::future::FutureExt;
use ports::{events_topic, AgentStore, EmailCodes, Notifications, SmsStore, StoreError, Timer};
use text_mining::{mail_text, matches_service, sender_may_be, Sender};
use time::OffsetDateTime;

pub use domain::commands::{ChannelsWait, CodeChannel, CodeWait};

use crate::agents::Principal;
use crate::long_lived::{LongLived, LongLivedKind};
use crate::sms::SmsSync;
use crate::waiting::{look_until_found, Shutdown, Waiter, Waits};
use crate::NotProvisioned;
use domain::keys::{readable_channels, Scope};

/// How many unseen messages of each channel a look goes through.
const LOOKED_AT: usize = 50;

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
    /// A channel named that the key may not read.
    #[error("the key lacks the scope {0}")]
    ScopeLacking(Scope),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The message a code came in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FoundCode {
    // Both boxed: records of a few hundred bytes, moved through futures.
    Sms(Box<SmsMessageRecord>),
    Email(Box<EmailMessageRecord>),
}

pub struct CodePorts {
    pub agents: Arc<dyn AgentStore>,
    pub sms: Arc<dyn SmsStore>,
    pub email: Arc<dyn EmailCodes>,
    pub notifications: Arc<dyn Notifications>,
    pub timer: Arc<dyn Timer>,
}

pub struct CodeService {
    ports: Arc<CodePorts>,
    sms_sync: Arc<SmsSync>,
    waits: Waits<FoundCode>,
}

/// What a wait looks through: the agent's number and inbox, where asked for.
#[derive(Clone)]
struct Sources {
    number: Option<PhoneNumberRecord>,
    inbox: Option<EmailInboxRecord>,
}

impl CodeService {
    /// `sms_sync`: the SMS service's syncs with the provider (`SmsService::provider_sync`), which
    /// a wait on the SMS channel makes first.
    pub fn new(ports: CodePorts, long_lived: Arc<LongLived>, sms_sync: Arc<SmsSync>) -> Self {
        Self {
            ports: Arc::new(ports),
            sms_sync,
            waits: Waits::new(long_lived, LongLivedKind::CodeWait),
        }
    }

    /// Ends every wait at once with a timeout, so a stopping server answers them instead of
    /// leaving them to be cut off.
    pub fn shut_down(&self) {
        self.waits.shut_down(self.ports.notifications.as_ref());
    }

    /// The channels asked for, each provisioned; or every provisioned one when none is named.
    fn sources(
        profile: &AgentProfile,
        channels: Option<&[CodeChannel]>,
    ) -> Result<Sources, WaitError> {
        let (number, inbox) = (profile.phone_number.clone(), profile.email_inbox.clone());
        let Some(channels) = channels else {
            if number.is_none() && inbox.is_none() {
                return Err(NotProvisioned::PhoneNumber.into());
            }
            return Ok(Sources { number, inbox });
        };
        let wants = |channel| channels.contains(&channel);
        if wants(CodeChannel::Sms) && number.is_none() {
            return Err(NotProvisioned::PhoneNumber.into());
        }
        if wants(CodeChannel::Email) && inbox.is_none() {
            return Err(NotProvisioned::EmailInbox.into());
        }
        Ok(Sources {
            number: number.filter(|_| wants(CodeChannel::Sms)),
            inbox: inbox.filter(|_| wants(CodeChannel::Email)),
        })
    }

    /// The newest unseen code of the wanted service on any of the channels, marked seen; else
    /// waits for one until the timeout, or until the agent's key stops authenticating it. With a
    /// request id, a retry returns what the first wait returned, and one made while the first
    /// still waits joins it. `principal` is the one the request authenticated with.
    #[tracing::instrument(level = "debug", skip(self, principal), fields(agent = %principal.profile.agent.id))]
    pub async fn wait(
        &self,
        principal: &Principal,
        wait: ChannelsWait,
    ) -> Result<FoundCode, WaitError> {
        let profile = principal.profile.as_ref();
        let channels = readable_channels(principal.key.scopes(), wait.channels)
            .map_err(WaitError::ScopeLacking)?;
        let sources = Self::sources(profile, channels.as_deref())?;
        let wait = wait.wait;
        let waiter = Waiter::new(principal, self.ports.agents.clone());
        let (ports, sms_sync) = (self.ports.clone(), self.sms_sync.clone());
        self.waits
            .run(profile.agent.id, wait.request_id.clone(), move |shutdown| {
                wait_for(ports, sms_sync, waiter, sources, wait, shutdown).boxed()
            })
            .await
    }

    /// The wait on SMS alone, as `/v1/sms/wait-for-code` asks for it.
    pub async fn wait_for_sms(
        &self,
        principal: &Principal,
        wait: CodeWait,
    ) -> Result<SmsMessageRecord, WaitError> {
        let channels = Some(vec![CodeChannel::Sms]);
        match self
            .wait(principal, ChannelsWait { wait, channels })
            .await?
        {
            FoundCode::Sms(message) => Ok(*message),
            FoundCode::Email(_) => Err(WaitError::Store(StoreError::Internal(
                "a wait on SMS alone found a mail".into(),
            ))),
        }
    }
}

/// The wait itself, in its place: the answer of an earlier wait of the same request id, else a
/// sync of the number when SMS is a source, then looks until a code is found, the timeout,
/// shutdown or the key's revocation.
async fn wait_for(
    ports: Arc<CodePorts>,
    sms_sync: Arc<SmsSync>,
    waiter: Waiter,
    sources: Sources,
    wait: CodeWait,
    shutdown: Arc<Shutdown>,
) -> Result<FoundCode, WaitError> {
    let agent = waiter.agent();
    // Inside the wait's place, so a request id answered earlier is looked up under the same
    // per-agent cap as every wait (the cap bounds the lookups too).
    if let Some(request_id) = &wait.request_id {
        if let Some(done) = answered(&ports, agent, &sources, request_id).await? {
            return Ok(done);
        }
    }
    // A message only the provider has yet (no webhook reached us) counts too.
    if let Some(number) = &sources.number {
        if let Err(error) = sms_sync.sync(agent, number).await {
            tracing::warn!(%error, "could not sync the SMS provider before waiting");
        }
    }
    look_until_found(
        ports.notifications.as_ref(),
        ports.timer.as_ref(),
        // Each inbound message is an event of the agent: its notification wakes the wait.
        &events_topic(agent),
        wait.timeout,
        &shutdown,
        &waiter,
        || take_newest(&ports, agent, &sources, &wait),
    )
    .await
}

/// What an earlier wait with `request_id` returned, from the channels this wait looks at.
async fn answered(
    ports: &CodePorts,
    agent: AgentId,
    sources: &Sources,
    request_id: &str,
) -> Result<Option<FoundCode>, StoreError> {
    if sources.number.is_some() {
        if let Some(done) = ports.sms.wait_result(agent, request_id).await? {
            return Ok(Some(FoundCode::Sms(Box::new(done))));
        }
    }
    if sources.inbox.is_some() {
        if let Some(done) = ports.email.code_wait_result(agent, request_id).await? {
            return Ok(Some(FoundCode::Email(Box::new(done))));
        }
    }
    Ok(None)
}

/// A message that may hold the code, from either channel.
enum Candidate {
    Sms(Box<SmsMessageRecord>),
    Email(Box<EmailMessageRecord>),
}

impl Candidate {
    fn arrived(&self) -> OffsetDateTime {
        match self {
            Self::Sms(message) => message.provider_received_at.unwrap_or(message.created_at),
            Self::Email(message) => message.received_at.unwrap_or(message.created_at),
        }
    }
}

/// The newest unseen code of the wanted service across the sources, taken for this wait (an
/// earlier answer to the same request id first).
async fn take_newest(
    ports: &CodePorts,
    agent: AgentId,
    sources: &Sources,
    wait: &CodeWait,
) -> Result<Option<FoundCode>, StoreError> {
    if let Some(request_id) = &wait.request_id {
        if let Some(done) = answered(ports, agent, sources, request_id).await? {
            return Ok(Some(done));
        }
    }
    let mut candidates: Vec<Candidate> = Vec::new();
    if let Some(number) = &sources.number {
        let unseen = ports.sms.unseen(number.id, LOOKED_AT).await?;
        candidates.extend(
            unseen
                .into_iter()
                .filter(|m| {
                    matches_service(&m.body, m.service_name.as_deref(), &wait.service_name)
                        && sender_may_be(&wait.service_name, Sender::of_sms(&m.from))
                })
                .map(|message| Candidate::Sms(Box::new(message))),
        );
    }
    if let Some(inbox) = &sources.inbox {
        let unseen = ports.email.unseen_codes(inbox.id, LOOKED_AT).await?;
        candidates.extend(
            unseen
                .into_iter()
                .filter(|m| {
                    let text = mail_text(m.subject.as_deref(), m.text.as_deref());
                    matches_service(&text, m.service_name.as_deref(), &wait.service_name)
                        && sender_may_be(&wait.service_name, mail_sender(&m.sender_authentication))
                })
                .map(|message| Candidate::Email(Box::new(message))),
        );
    }
    candidates.sort_by_key(|candidate| std::cmp::Reverse(candidate.arrived()));
    for candidate in candidates {
        let taken = match candidate {
            Candidate::Sms(message) => ports
                .sms
                .mark_seen(message.id, agent, wait.request_id.clone())
                .await?
                .map(|message| FoundCode::Sms(Box::new(message))),
            Candidate::Email(message) => ports
                .email
                .take_codes(message.id, agent, wait.request_id.clone())
                .await?
                .map(|message| FoundCode::Email(Box::new(message))),
        };
        if taken.is_some() {
            return Ok(taken);
        }
    }
    Ok(None)
}

/// A mail's sender as a wait for a named service judges it: by what the receiving side's
/// authentication results said of its From domain.
fn mail_sender(authentication: &SenderAuthentication) -> Sender<'_> {
    match authentication {
        SenderAuthentication::Unreported => Sender::MailUnauthenticated,
        SenderAuthentication::Failed => Sender::MailAuthenticated(None),
        SenderAuthentication::Passed { domain } => Sender::MailAuthenticated(Some(domain)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::fixtures::{found, principal};
    use crate::LongLivedCaps;
    use domain::{
        AgentProfile, AgentRecord, Direction, EmailInboxId, EmailMessageId, EmailStatus,
        SenderAuthentication, SmsMessageId, SmsSource,
    };
    use ports::{
        MockAgentStore, MockEmailCodes, MockNotifications, MockSmsProvider, MockSmsStore,
        MockTimer, Wakeup,
    };
    use std::time::Duration;
    use text_mining::{extract_verification_codes, recognise_service};
    use uuid::Uuid;

    fn pending() -> Wakeup {
        Box::pin(std::future::pending())
    }

    fn ready() -> Wakeup {
        Box::pin(std::future::ready(()))
    }

    fn at(seconds: i64) -> OffsetDateTime {
        OffsetDateTime::from_unix_timestamp(1_795_305_600 + seconds).expect("a time")
    }

    fn inbox() -> EmailInboxRecord {
        EmailInboxRecord {
            id: EmailInboxId(Uuid::from_u128(9)),
            address: domain::EmailAddress::parse("agent@inbox.example.com").expect("valid"),
            provider: "sandbox".into(),
            created_at: at(0),
        }
    }

    /// An inbound SMS `id` saying `body`, received `seconds` after the tests' epoch.
    fn sms(id: u128, body: &str, seconds: i64) -> SmsMessageRecord {
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
            created_at: at(seconds),
        }
    }

    fn mail(seconds: i64) -> EmailMessageRecord {
        EmailMessageRecord {
            id: EmailMessageId(Uuid::from_u128(2)),
            inbox_id: inbox().id,
            agent_id: AgentRecord::fixture().id,
            direction: Direction::Inbound,
            status: EmailStatus::Received,
            thread_id: EmailMessageId(Uuid::from_u128(2)),
            provider_message_id: Some("p".into()),
            internet_message_id: None,
            in_reply_to: None,
            references: Vec::new(),
            subject: Some("Your code".into()),
            from: Some("noreply@service.example".into()),
            to: Vec::new(),
            cc: Vec::new(),
            bcc: Vec::new(),
            reply_to: Vec::new(),
            text: Some("Use 222222".into()),
            html: None,
            attachments: Vec::new(),
            headers: Vec::new(),
            verification_codes: vec!["222222".into()],
            sender_authentication: SenderAuthentication::Unreported,
            service_name: None,
            failure_reason: None,
            created_at: at(seconds),
            received_at: Some(at(seconds)),
            sent_at: None,
        }
    }

    fn profile(phone: bool, email: bool) -> AgentProfile {
        AgentProfile {
            phone_number: phone.then(PhoneNumberRecord::fixture),
            email_inbox: email.then(inbox),
            ..AgentProfile::fixture()
        }
    }

    /// The ports of a code service, set up by each test; the key authenticates throughout, the
    /// SMS provider holds nothing new, and no topic wakes unless a test says so.
    struct Mocks {
        agents: MockAgentStore,
        sms: MockSmsStore,
        email: MockEmailCodes,
        notifications: MockNotifications,
        timer: MockTimer,
        provider: MockSmsProvider,
        /// How many times the provider is asked for its messages; any number when `None`.
        provider_syncs: Option<usize>,
        waits_per_agent: usize,
    }

    impl Mocks {
        fn new() -> Self {
            let mut notifications = MockNotifications::new();
            notifications.expect_notify_here().return_const(());
            let mut provider = MockSmsProvider::new();
            provider.expect_name().return_const("sandbox");
            Self {
                agents: MockAgentStore::new(),
                sms: MockSmsStore::new(),
                email: MockEmailCodes::new(),
                notifications,
                timer: MockTimer::new(),
                provider,
                provider_syncs: None,
                waits_per_agent: 4,
            }
        }

        fn asleep(mut self) -> Self {
            self.notifications
                .expect_subscribe()
                .returning(|_| pending());
            self
        }

        fn authorized(mut self) -> Self {
            self.agents
                .expect_active_profile_by_key_hash()
                .returning(|_| Ok(Some(found(profile(true, true)))));
            self
        }

        fn service(mut self) -> CodeService {
            let syncs = self.provider.expect_recent_messages();
            if let Some(times) = self.provider_syncs {
                syncs.times(times);
            }
            syncs.returning(|_, _| Ok(Vec::new()));
            let mut synced = MockSmsStore::new();
            synced
                .expect_store()
                .returning(|messages| Ok(messages.len()));
            let sms_sync = Arc::new(SmsSync::new(
                Arc::new(self.provider),
                Arc::new(synced),
                Duration::ZERO,
            ));
            CodeService::new(
                CodePorts {
                    agents: Arc::new(self.agents),
                    sms: Arc::new(self.sms),
                    email: Arc::new(self.email),
                    notifications: Arc::new(self.notifications),
                    timer: Arc::new(self.timer),
                },
                LongLived::new(LongLivedCaps {
                    code_waits: self.waits_per_agent,
                    event_streams: 1,
                    decision_waits: 1,
                    attachment_downloads: 1,
                    searches: 1,
                    request_body_bytes: 1 << 20,
                    live_lists: 1,
                }),
                sms_sync,
            )
        }
    }

    fn code_wait(service_name: &str, seconds: u64, request_id: Option<&str>) -> CodeWait {
        CodeWait {
            service_name: service_name.into(),
            timeout: Duration::from_secs(seconds),
            request_id: request_id.map(str::to_owned),
        }
    }

    fn once(channels: Option<Vec<CodeChannel>>) -> ChannelsWait {
        ChannelsWait {
            wait: code_wait("", 0, None),
            channels,
        }
    }

    #[tokio::test]
    async fn the_newest_code_of_either_channel_is_taken() {
        let mut mocks = Mocks::new().asleep().authorized();
        mocks
            .sms
            .expect_unseen()
            .returning(|_, _| Ok(vec![sms(1, "Your code is 111111", 10)]));
        mocks.sms.expect_mark_seen().never();
        mocks
            .email
            .expect_unseen_codes()
            .returning(|_, _| Ok(vec![mail(20)]));
        mocks
            .email
            .expect_take_codes()
            .times(1)
            .returning(|_, _, _| Ok(Some(mail(20))));
        let found = mocks
            .service()
            .wait(&principal(profile(true, true)), once(None))
            .await
            .expect("found");
        assert!(
            matches!(found, FoundCode::Email(message) if message.verification_codes == ["222222"])
        );
    }

    #[tokio::test]
    async fn a_mail_answers_for_the_service_recognised_when_it_came_in() {
        let named = |service: Option<&str>| EmailMessageRecord {
            service_name: service.map(str::to_owned),
            ..mail(20)
        };
        let waiting_for_acme = || ChannelsWait {
            wait: code_wait("Acme", 0, None),
            channels: Some(vec![CodeChannel::Email]),
        };
        let mut mocks = Mocks::new().asleep().authorized();
        mocks
            .email
            .expect_unseen_codes()
            .returning(move |_, _| Ok(vec![named(Some("ACME"))]));
        mocks
            .email
            .expect_take_codes()
            .times(1)
            .returning(move |_, _, _| Ok(Some(named(Some("ACME")))));
        let found = mocks
            .service()
            .wait(&principal(profile(true, true)), waiting_for_acme())
            .await;
        assert!(
            matches!(found, Ok(FoundCode::Email(_))),
            "the stored name, not the text, names Acme"
        );
        let mut mocks = Mocks::new().asleep().authorized();
        mocks
            .email
            .expect_unseen_codes()
            .returning(move |_, _| Ok(vec![named(None)]));
        mocks.email.expect_take_codes().never();
        let found = mocks
            .service()
            .wait(&principal(profile(true, true)), waiting_for_acme())
            .await;
        assert!(matches!(found, Err(WaitError::TimedOut)));
    }

    #[tokio::test]
    async fn a_channel_the_agent_lacks_is_refused() {
        let refused = Mocks::new()
            .service()
            .wait(
                &principal(profile(true, false)),
                once(Some(vec![CodeChannel::Email])),
            )
            .await;
        assert!(matches!(
            refused,
            Err(WaitError::NotProvisioned(NotProvisioned::EmailInbox))
        ));
    }

    #[tokio::test]
    async fn a_wait_looks_only_at_the_channels_asked_for_and_asks_the_provider_first_for_sms() {
        let mut mocks = Mocks::new().asleep().authorized();
        mocks.provider_syncs = Some(1);
        mocks.email.expect_unseen_codes().never();
        mocks.sms.expect_unseen().returning(|_, _| Ok(Vec::new()));
        let on_sms = mocks
            .service()
            .wait(
                &principal(profile(true, true)),
                once(Some(vec![CodeChannel::Sms])),
            )
            .await;
        assert!(matches!(on_sms, Err(WaitError::TimedOut)));
        let mut mocks = Mocks::new().asleep().authorized();
        mocks.provider_syncs = Some(0);
        mocks.sms.expect_unseen().never();
        mocks
            .email
            .expect_unseen_codes()
            .returning(|_, _| Ok(Vec::new()));
        let on_mail = mocks
            .service()
            .wait(
                &principal(profile(true, true)),
                once(Some(vec![CodeChannel::Email])),
            )
            .await;
        assert!(matches!(on_mail, Err(WaitError::TimedOut)));
    }

    #[tokio::test]
    async fn the_newest_unseen_sms_of_the_wanted_service_is_taken_for_the_request() {
        let mut mocks = Mocks::new().asleep().authorized();
        mocks.sms.expect_wait_result().returning(|_, _| Ok(None));
        mocks.sms.expect_unseen().returning(|_, _| {
            Ok(vec![
                sms(2, "[Uber] Your code is 2222", 0),
                sms(1, "Your Google verification code is 111111", 0),
            ])
        });
        mocks
            .sms
            .expect_mark_seen()
            .withf(|id, _, request_id| {
                *id == SmsMessageId(Uuid::from_u128(1)) && request_id.as_deref() == Some("r-1")
            })
            .times(1)
            .returning(|_, _, _| Ok(Some(sms(1, "Your Google verification code is 111111", 0))));
        let found = mocks
            .service()
            .wait_for_sms(
                &principal(profile(true, false)),
                code_wait("google", 30, Some("r-1")),
            )
            .await
            .expect("found");
        assert_eq!(found.parsed_code.as_deref(), Some("111111"));
    }

    #[tokio::test]
    async fn a_zero_timeout_looks_once_and_never_sleeps() {
        let mut mocks = Mocks::new().asleep().authorized();
        mocks
            .sms
            .expect_unseen()
            .times(1)
            .returning(|_, _| Ok(Vec::new()));
        mocks.timer.expect_sleep().never();
        assert!(matches!(
            mocks
                .service()
                .wait_for_sms(&principal(profile(true, false)), code_wait("", 0, None))
                .await,
            Err(WaitError::TimedOut)
        ));
    }

    #[tokio::test]
    async fn a_wake_up_makes_the_wait_look_again_and_a_lost_race_looks_on() {
        let mut mocks = Mocks::new().authorized();
        // The events topic wakes at once; the shutdown and revocation topics never do.
        mocks.notifications.expect_subscribe().returning(|topic| {
            if topic.starts_with("events:") {
                ready()
            } else {
                pending()
            }
        });
        mocks.timer.expect_sleep().returning(|_| pending());
        let mut looks = 0;
        mocks.sms.expect_unseen().times(3).returning(move |_, _| {
            looks += 1;
            Ok(match looks {
                1 => Vec::new(),
                _ => vec![sms(7, "Your code is 777777", 0)],
            })
        });
        let mut marks = 0;
        mocks
            .sms
            .expect_mark_seen()
            .times(2)
            .returning(move |_, _, _| {
                marks += 1;
                // Another wait takes the first one it finds.
                Ok((marks == 2).then(|| sms(7, "Your code is 777777", 0)))
            });
        let found = mocks
            .service()
            .wait_for_sms(&principal(profile(true, false)), code_wait("", 30, None))
            .await
            .expect("found");
        assert_eq!(found.parsed_code.as_deref(), Some("777777"));
    }

    #[tokio::test]
    async fn a_request_id_already_answered_is_answered_the_same_without_looking_or_syncing() {
        let mut mocks = Mocks::new();
        mocks
            .sms
            .expect_wait_result()
            .returning(|_, _| Ok(Some(sms(3, "Your code is 333333", 0))));
        mocks.sms.expect_unseen().never();
        mocks.provider_syncs = Some(0);
        let found = mocks
            .service()
            .wait_for_sms(
                &principal(profile(true, false)),
                code_wait("", 30, Some("r-3")),
            )
            .await
            .expect("found");
        assert_eq!(found.id, SmsMessageId(Uuid::from_u128(3)));
    }

    #[tokio::test]
    async fn a_wait_on_sms_alone_is_not_answered_by_a_mail_of_the_same_request_id() {
        let mut mocks = Mocks::new().asleep().authorized();
        mocks.email.expect_code_wait_result().never();
        mocks.sms.expect_wait_result().returning(|_, _| Ok(None));
        mocks.sms.expect_unseen().returning(|_, _| Ok(Vec::new()));
        let refused = mocks
            .service()
            .wait_for_sms(
                &principal(profile(true, true)),
                code_wait("", 0, Some("r-4")),
            )
            .await;
        assert!(matches!(refused, Err(WaitError::TimedOut)));
    }

    #[tokio::test]
    async fn shutting_down_answers_a_wait_as_timed_out() {
        let mut mocks = Mocks::new().asleep().authorized();
        mocks.sms.expect_unseen().returning(|_, _| Ok(Vec::new()));
        let service = mocks.service();
        service.shut_down();
        assert!(matches!(
            service
                .wait_for_sms(&principal(profile(true, false)), code_wait("", 300, None))
                .await,
            Err(WaitError::TimedOut)
        ));
    }

    #[tokio::test]
    async fn a_wait_ends_revoked_when_its_key_stops_authenticating() {
        for authorized_at_first in [true, false] {
            let mut mocks = Mocks::new();
            mocks.notifications.expect_subscribe().returning(|topic| {
                if topic.starts_with("revoked:") {
                    ready()
                } else {
                    pending()
                }
            });
            mocks.timer.expect_sleep().returning(|_| pending());
            mocks.sms.expect_unseen().returning(|_, _| Ok(Vec::new()));
            let mut checks = 0;
            mocks
                .agents
                .expect_active_profile_by_key_hash()
                .returning(move |_| {
                    checks += 1;
                    Ok((authorized_at_first && checks == 1).then(|| found(profile(true, false))))
                });
            assert!(
                matches!(
                    mocks
                        .service()
                        .wait_for_sms(&principal(profile(true, false)), code_wait("", 300, None))
                        .await,
                    Err(WaitError::Revoked)
                ),
                "authorized at first: {authorized_at_first}"
            );
        }
    }

    #[tokio::test]
    async fn waits_on_sms_alone_and_on_every_channel_share_one_cap_per_agent() {
        let mut mocks = Mocks::new().asleep().authorized();
        mocks.timer.expect_sleep().returning(|_| pending());
        mocks.sms.expect_unseen().returning(|_, _| Ok(Vec::new()));
        mocks
            .email
            .expect_unseen_codes()
            .returning(|_, _| Ok(Vec::new()));
        mocks.waits_per_agent = 1;
        let service = mocks.service();
        let agent = principal(profile(true, true));
        let mut held = Box::pin(service.wait(
            &agent,
            ChannelsWait {
                wait: code_wait("", 300, None),
                channels: None,
            },
        ));
        assert!(futures_util::poll!(held.as_mut()).is_pending());
        let refused = service.wait_for_sms(&agent, code_wait("", 300, None)).await;
        assert!(matches!(refused, Err(WaitError::TooManyWaiters)));
        drop(held);
        let freed = service.wait_for_sms(&agent, code_wait("", 0, None)).await;
        assert!(matches!(freed, Err(WaitError::TimedOut)));
    }
}
