//! One wait for a verification code over both channels: sign-up flows send a code by SMS or by
//! mail, and the agent does not know which. Same seen, request id, timeout and shutdown rules as
//! the SMS wait, on the same notification hub (new mail and new SMS publish the same topic).

use std::sync::Arc;

use domain::{
    AgentId, AgentProfile, EmailInboxRecord, EmailMessageRecord, PhoneNumberRecord,
    SenderAuthentication, SmsMessageRecord,
};
use futures_util::future::FutureExt;
use ports::{inbound_topic, AgentStore, EmailCodes, Notifications, SmsStore, StoreError, Timer};
use text_mining::{matches_service, recognise_service, sender_may_be, Sender};
use time::OffsetDateTime;

use crate::sms::{CodeWait, WaitError};
use crate::waiting::{look_until_found, Shutdown, Waiter, Waits};
use crate::NotProvisioned;

/// How many unseen messages of each channel a look goes through.
const LOOKED_AT: usize = 50;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CodeChannel {
    Sms,
    Email,
}

impl CodeChannel {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Sms => "sms",
            Self::Email => "email",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "sms" => Some(Self::Sms),
            "email" => Some(Self::Email),
            _ => None,
        }
    }
}

/// A wait over channels: `None` means every channel the agent has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelsWait {
    pub wait: CodeWait,
    pub channels: Option<Vec<CodeChannel>>,
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
    waits: Waits<FoundCode>,
}

/// What a wait looks through: the agent's number and inbox, where asked for.
#[derive(Clone)]
struct Sources {
    number: Option<PhoneNumberRecord>,
    inbox: Option<EmailInboxRecord>,
}

impl CodeService {
    pub fn new(ports: CodePorts, waiters_per_agent: usize) -> Self {
        Self {
            ports: Arc::new(ports),
            waits: Waits::new(waiters_per_agent),
        }
    }

    /// Ends every wait at once with a timeout.
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
    /// waits for one until the timeout, or until the agent's key stops authenticating it.
    /// `profile` is the one the request authenticated with.
    #[tracing::instrument(level = "debug", skip(self, profile), fields(agent = %profile.agent.id))]
    pub async fn wait(
        &self,
        profile: &AgentProfile,
        wait: ChannelsWait,
    ) -> Result<FoundCode, WaitError> {
        let sources = Self::sources(profile, wait.channels.as_deref())?;
        let waiter = Waiter::new(profile, self.ports.agents.clone());
        let wait = wait.wait;
        let ports = self.ports.clone();
        self.waits
            .run(profile.agent.id, wait.request_id.clone(), move |shutdown| {
                wait_for(ports, waiter, sources, wait, shutdown).boxed()
            })
            .await
    }
}

async fn wait_for(
    ports: Arc<CodePorts>,
    waiter: Waiter,
    sources: Sources,
    wait: CodeWait,
    shutdown: Arc<Shutdown>,
) -> Result<FoundCode, WaitError> {
    let agent = waiter.agent();
    look_until_found(
        ports.notifications.as_ref(),
        ports.timer.as_ref(),
        &inbound_topic(agent),
        wait.timeout,
        &shutdown,
        &waiter,
        || take_newest(&ports, agent, &sources, &wait),
    )
    .await
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
        if let Some(done) = ports.sms.wait_result(agent, request_id).await? {
            return Ok(Some(FoundCode::Sms(Box::new(done))));
        }
        if let Some(done) = ports.email.code_wait_result(agent, request_id).await? {
            return Ok(Some(FoundCode::Email(Box::new(done))));
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
                    let text = format!(
                        "{}\n{}",
                        m.subject.as_deref().unwrap_or_default(),
                        m.text.as_deref().unwrap_or_default()
                    );
                    matches_service(
                        &text,
                        recognise_service(&text).as_deref(),
                        &wait.service_name,
                    ) && sender_may_be(&wait.service_name, mail_sender(&m.sender_authentication))
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
    use domain::{
        AgentProfile, AgentRecord, Direction, EmailInboxId, EmailMessageId, EmailStatus,
        SenderAuthentication, SmsMessageId, SmsSource,
    };
    use ports::{MockAgentStore, MockEmailCodes, MockNotifications, MockSmsStore, MockTimer};
    use std::time::Duration;
    use uuid::Uuid;

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

    fn sms(seconds: i64) -> SmsMessageRecord {
        SmsMessageRecord {
            id: SmsMessageId(Uuid::from_u128(1)),
            agent_id: AgentRecord::fixture().id,
            phone_number_id: PhoneNumberRecord::fixture().id,
            direction: Direction::Inbound,
            provider: "sandbox".into(),
            provider_message_id: "SM1".into(),
            source: SmsSource::Webhook,
            from: "+15550001111".into(),
            to: PhoneNumberRecord::fixture().number.as_str().into(),
            body: "Your code is 111111".into(),
            parsed_code: Some("111111".into()),
            service_name: None,
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

    fn service(
        phone: bool,
        email: bool,
        sms_store: MockSmsStore,
        codes: MockEmailCodes,
    ) -> CodeService {
        let mut agents = MockAgentStore::new();
        agents
            .expect_active_profile_by_key_hash()
            .returning(move |_| Ok(Some(profile(phone, email))));
        let mut notifications = MockNotifications::new();
        notifications
            .expect_subscribe()
            .returning(|_| Box::pin(std::future::pending()));
        CodeService::new(
            CodePorts {
                agents: Arc::new(agents),
                sms: Arc::new(sms_store),
                email: Arc::new(codes),
                notifications: Arc::new(notifications),
                timer: Arc::new(MockTimer::new()),
            },
            4,
        )
    }

    fn once(channels: Option<Vec<CodeChannel>>) -> ChannelsWait {
        ChannelsWait {
            wait: CodeWait {
                service_name: String::new(),
                timeout: Duration::ZERO,
                request_id: None,
            },
            channels,
        }
    }

    #[tokio::test]
    async fn the_newest_code_of_either_channel_is_taken() {
        let mut sms_store = MockSmsStore::new();
        sms_store
            .expect_unseen()
            .returning(|_, _| Ok(vec![sms(10)]));
        sms_store.expect_mark_seen().never();
        let mut codes = MockEmailCodes::new();
        codes
            .expect_unseen_codes()
            .returning(|_, _| Ok(vec![mail(20)]));
        codes
            .expect_take_codes()
            .times(1)
            .returning(|_, _, _| Ok(Some(mail(20))));
        let found = service(true, true, sms_store, codes)
            .wait(&profile(true, true), once(None))
            .await
            .expect("found");
        assert!(
            matches!(found, FoundCode::Email(message) if message.verification_codes == ["222222"])
        );
    }

    #[tokio::test]
    async fn a_channel_the_agent_lacks_is_refused_and_one_not_asked_for_is_not_looked_at() {
        let refused = service(true, false, MockSmsStore::new(), MockEmailCodes::new())
            .wait(&profile(true, false), once(Some(vec![CodeChannel::Email])))
            .await;
        assert!(matches!(
            refused,
            Err(WaitError::NotProvisioned(NotProvisioned::EmailInbox))
        ));
        let mut codes = MockEmailCodes::new();
        codes.expect_unseen_codes().never();
        let mut sms_store = MockSmsStore::new();
        sms_store.expect_unseen().returning(|_, _| Ok(Vec::new()));
        let nothing = service(true, true, sms_store, codes)
            .wait(&profile(true, true), once(Some(vec![CodeChannel::Sms])))
            .await;
        assert!(matches!(nothing, Err(WaitError::TimedOut)));
    }
}
