//! An agent's webhook endpoints (decision 0058): created with a secret shown once, changed,
//! rotated, replayed, and the attempt at each delivery, which a leased queue's worker makes.

use std::sync::Arc;

use async_trait::async_trait;
use domain::commands::{CreateWebhook, UpdateWebhook};
use std::time::Duration;

use domain::{
    request_fingerprint, AgentProfile, AttemptFailure, CursorCodec, CursorPosition, IdempotencyKey,
    Targets, WebhookAttemptRecord, WebhookEndpointId, WebhookEndpointRecord, WebhookUrl,
    WebhookUrlError, MAX_WEBHOOK_ENDPOINTS, OLD_SECRET_SIGNS_FOR, REPLAY_RATE,
};
use ports::{
    DeliveryError, EndpointRefusal, EndpointWithSecret, NewWebhookEndpoint, Replayed, RequestKey,
    StoreError, WebhookAttemptOutcomes, WebhookDelivery, WebhookDeliveryLog,
    WebhookEndpointChanges, WebhookEndpointStore, WebhookPoster,
};
use rand::RngCore;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::agents::Principal;
use crate::leased_queue::Deliver;
use crate::paging::into_page;

#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    #[error("Webhook endpoint not found")]
    NotFound,
    #[error("An agent may have at most {MAX_WEBHOOK_ENDPOINTS} webhook endpoints")]
    TooMany,
    #[error("{0}")]
    Url(WebhookUrlError),
    #[error("Invalid cursor")]
    InvalidCursor,
    /// The key the request came with was rotated, or its agent deactivated, while it was under
    /// way.
    #[error("Invalid agent key")]
    KeyRevoked,
    #[error("Too many replays of this endpoint; retry later")]
    TooManyReplays { retry_after: Duration },
    /// Another request with the same idempotency key is being written right now.
    #[error("A request with this idempotency key is in progress")]
    KeyInFlight,
    /// The idempotency key was used, within 24 hours, for a different request.
    #[error("the key was used within 24 hours for a different request")]
    KeyReused,
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<EndpointRefusal> for WebhookError {
    fn from(refusal: EndpointRefusal) -> Self {
        match refusal {
            EndpointRefusal::TooMany => Self::TooMany,
            EndpointRefusal::KeyRevoked => Self::KeyRevoked,
            EndpointRefusal::KeyInFlight => Self::KeyInFlight,
            EndpointRefusal::KeyReused => Self::KeyReused,
            EndpointRefusal::Store(store) => Self::Store(store),
        }
    }
}

/// A page of an endpoint's attempts, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptPage {
    pub items: Vec<WebhookAttemptRecord>,
    pub next_cursor: Option<String>,
}

/// What a replay came to: how many deliveries its request made due, and whether the answer is
/// an earlier request's under the same idempotency key.
pub(crate) fn replayed(replayed: Option<Replayed>) -> Result<(usize, bool), WebhookError> {
    match replayed {
        None => Err(WebhookError::NotFound),
        Some(Replayed::Queued(queued)) => Ok((queued, false)),
        Some(Replayed::Again(queued)) => Ok((queued, true)),
        Some(Replayed::Limited { retry_after }) => {
            Err(WebhookError::TooManyReplays { retry_after })
        }
        Some(Replayed::KeyInFlight) => Err(WebhookError::KeyInFlight),
        Some(Replayed::KeyReused) => Err(WebhookError::KeyReused),
    }
}

/// The key a keyed write of the principal's is kept under: `key` per the agent key the request
/// came with, bound to the request's `fields` (decision 0094).
fn request_key<'a>(
    principal: &Principal,
    key: Option<IdempotencyKey>,
    fields: impl IntoIterator<Item = &'a str>,
) -> Option<RequestKey> {
    key.map(|key| RequestKey {
        key,
        made_by: principal.key.id,
        fingerprint: request_fingerprint(fields),
    })
}

/// A new secret, `whsec_` and the base64 of 32 bytes from the operating system's random source.
fn new_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    standard_webhooks::Secret::text_of(bytes)
}

pub struct WebhookService {
    endpoints: Arc<dyn WebhookEndpointStore>,
    /// The endpoints' attempts, and their replays.
    deliveries: Arc<dyn WebhookDeliveryLog>,
    targets: Targets,
    cursors: CursorCodec,
}

impl WebhookService {
    /// `targets`: whether endpoints may point at addresses that are not publicly routable.
    pub fn new(
        endpoints: Arc<dyn WebhookEndpointStore>,
        deliveries: Arc<dyn WebhookDeliveryLog>,
        targets: Targets,
        cursors: CursorCodec,
    ) -> Self {
        Self {
            endpoints,
            deliveries,
            targets,
            cursors,
        }
    }

    /// The URL again, under this deployment's rule for targets.
    fn allowed(&self, url: &WebhookUrl) -> Result<WebhookUrl, WebhookError> {
        WebhookUrl::parse(url.as_str(), self.targets).map_err(WebhookError::Url)
    }

    /// Creates the endpoint; its secret is returned this once, and again to a retry with the
    /// same `idempotency_key` and request within 24 hours (`replayed`).
    #[tracing::instrument(level = "debug", skip(self, principal, command, idempotency_key), fields(agent = %principal.profile.agent.id))]
    pub async fn create(
        &self,
        principal: &Principal,
        command: CreateWebhook,
        idempotency_key: Option<IdempotencyKey>,
    ) -> Result<EndpointWithSecret, WebhookError> {
        let profile = principal.profile.as_ref();
        let url = self.allowed(&command.url)?;
        // The set of types as its bits: the same set asked in any order is the same request.
        let types = command.types.map(|types| format!("{types:?}"));
        let keyed = request_key(
            principal,
            idempotency_key,
            [
                "webhook_create",
                url.as_str(),
                if types.is_some() { "some" } else { "all" },
                types.as_deref().unwrap_or_default(),
                if command.description.is_some() {
                    "some"
                } else {
                    "none"
                },
                command.description.as_deref().unwrap_or_default(),
            ],
        );
        let secret = new_secret();
        let endpoint = NewWebhookEndpoint {
            id: WebhookEndpointId(Uuid::now_v7()),
            url,
            types: command.types,
            description: command.description,
            secret: secret.clone(),
            key: principal.key.hash,
        };
        Ok(self
            .endpoints
            .create(profile.agent.id, endpoint, MAX_WEBHOOK_ENDPOINTS, keyed)
            .await?)
    }

    pub async fn list(
        &self,
        profile: &AgentProfile,
    ) -> Result<Vec<WebhookEndpointRecord>, StoreError> {
        self.endpoints.list(profile.agent.id).await
    }

    pub async fn get(
        &self,
        profile: &AgentProfile,
        id: WebhookEndpointId,
    ) -> Result<WebhookEndpointRecord, WebhookError> {
        self.endpoints
            .get(profile.agent.id, id)
            .await?
            .ok_or(WebhookError::NotFound)
    }

    #[tracing::instrument(level = "debug", skip(self, principal, command), fields(agent = %principal.profile.agent.id))]
    pub async fn update(
        &self,
        principal: &Principal,
        id: WebhookEndpointId,
        command: UpdateWebhook,
    ) -> Result<WebhookEndpointRecord, WebhookError> {
        let agent = principal.profile.agent.id;
        let url = command
            .url
            .as_ref()
            .map(|url| self.allowed(url))
            .transpose()?;
        let changes = WebhookEndpointChanges {
            url,
            types: command.types,
            description: command.description,
            enabled: command.enabled,
        };
        self.endpoints
            .update(agent, id, changes, principal.key.hash)
            .await?
            .ok_or(WebhookError::NotFound)
    }

    pub async fn delete(
        &self,
        profile: &AgentProfile,
        id: WebhookEndpointId,
    ) -> Result<(), WebhookError> {
        match self.endpoints.delete(profile.agent.id, id).await? {
            true => Ok(()),
            false => Err(WebhookError::NotFound),
        }
    }

    /// A new secret for the endpoint, returned this once (and again to a retry with the same
    /// `idempotency_key` within 24 hours, which rotates nothing); the old one signs for a day
    /// more.
    pub async fn rotate_secret(
        &self,
        principal: &Principal,
        id: WebhookEndpointId,
        idempotency_key: Option<IdempotencyKey>,
    ) -> Result<EndpointWithSecret, WebhookError> {
        let endpoint = id.0.to_string();
        let keyed = request_key(
            principal,
            idempotency_key,
            ["webhook_rotate_secret", &endpoint],
        );
        let secret = new_secret();
        let agent = principal.profile.agent.id;
        self.endpoints
            .rotate_secret(agent, id, secret, OLD_SECRET_SIGNS_FOR, keyed)
            .await?
            .ok_or(WebhookError::NotFound)
    }

    /// The endpoint's attempts, newest first.
    pub async fn attempts(
        &self,
        profile: &AgentProfile,
        id: WebhookEndpointId,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<AttemptPage, WebhookError> {
        let scope = format!("webhook-attempts:{id}");
        let after = self
            .cursors
            .decode_optional(&scope, cursor)
            .map_err(|_| WebhookError::InvalidCursor)?;
        let fetched = self
            .deliveries
            .attempts(profile.agent.id, id, after, limit + 1)
            .await?
            .ok_or(WebhookError::NotFound)?;
        let (items, next_cursor) = into_page(fetched, limit, &self.cursors, &scope, |last| {
            CursorPosition::of(last.attempted_at, last.attempt_id)
        });
        Ok(AttemptPage { items, next_cursor })
    }

    /// Delivers again every kept event of a type the endpoint wants after `after`, within the
    /// endpoint's replays (`REPLAY_RATE`); how many deliveries are due now. A retry with the
    /// same `idempotency_key` and request within 24 hours answers the first replay's count again
    /// (`true`), delivering nothing more and taking none of the rate.
    pub async fn replay(
        &self,
        principal: &Principal,
        id: WebhookEndpointId,
        after: u64,
        idempotency_key: Option<IdempotencyKey>,
    ) -> Result<(usize, bool), WebhookError> {
        let (endpoint, position) = (id.0.to_string(), after.to_string());
        let keyed = request_key(
            principal,
            idempotency_key,
            ["webhook_replay", &endpoint, &position],
        );
        let agent = principal.profile.agent.id;
        let replayed = self
            .deliveries
            .replay(agent, id, after, Some(REPLAY_RATE), keyed)
            .await?;
        self::replayed(replayed)
    }
}

/// One attempt at a delivery: the POST, its line in the log, and what the answer means. Any 2xx
/// is delivered; 410 disables the endpoint at once; anything else is tried again on the
/// schedule, not before a `Retry-After`. The deliveries log, which the agent reads, says why an
/// attempt failed in fixed words (`AttemptFailure`); the server's log alone has the poster's
/// account (the addresses a refused host resolved to, the connection's error, the answer's text).
pub struct WebhookAttempt {
    outcomes: Arc<dyn WebhookAttemptOutcomes>,
    poster: Arc<dyn WebhookPoster>,
}

impl WebhookAttempt {
    pub fn new(outcomes: Arc<dyn WebhookAttemptOutcomes>, poster: Arc<dyn WebhookPoster>) -> Self {
        Self { outcomes, poster }
    }
}

#[async_trait]
impl Deliver<WebhookDelivery> for WebhookAttempt {
    async fn deliver(&self, delivery: &WebhookDelivery) -> Result<u16, DeliveryError> {
        let attempted_at = OffsetDateTime::now_utc();
        let answer = self.poster.post(delivery).await;
        let failure = match (answer.status, answer.failure) {
            (_, Some(failure)) => Some(failure),
            (Some(status), None) if (200..300).contains(&status) => None,
            (Some(status), None) => Some(AttemptFailure::Answered(status)),
            (None, None) => Some(AttemptFailure::ConnectionFailed),
        };
        if let Some(failure) = failure {
            let detail = answer.detail.as_deref().unwrap_or_default();
            tracing::warn!(endpoint = %delivery.endpoint, delivery = %delivery.id, attempt = delivery.attempt, %failure, %detail, "a webhook attempt failed");
        }
        let error = failure.map(|failure| failure.to_string());
        let logged = WebhookAttemptRecord {
            attempt_id: Uuid::now_v7(),
            delivery_id: delivery.id,
            event_id: delivery.event.id,
            event_type: delivery.event.event_type,
            attempt: delivery.attempt,
            status_code: answer.status,
            error: error.clone(),
            duration: answer.duration,
            attempted_at,
        };
        if let Err(failure) = self.outcomes.log_attempt(delivery.endpoint, &logged).await {
            tracing::warn!(error = %failure, delivery = %delivery.id, "an attempt could not be logged");
        }
        match (answer.status, error) {
            (Some(status), None) => Ok(status),
            (Some(410), _) => {
                let reason = "the receiver answered 410 Gone";
                if let Err(failure) = self.outcomes.disable(delivery.endpoint, reason).await {
                    tracing::warn!(error = %failure, endpoint = %delivery.endpoint, "a gone endpoint could not be disabled; its deliveries fail until it is");
                }
                Err(DeliveryError::Refused(reason.into()))
            }
            (Some(429 | 503), error) => Err(DeliveryError::Transient {
                reason: error.unwrap_or_default(),
                retry_after: answer.retry_after,
            }),
            (_, error) => Err(DeliveryError::transient(error.unwrap_or_default())),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use domain::{
        EmailMessageId, EventId, EventPayload, EventRecord, EventType, WebhookDeliveryId,
    };
    use ports::{
        Answered, MockWebhookAttemptOutcomes, MockWebhookDeliveryLog, MockWebhookEndpointStore,
        MockWebhookPoster, PostAnswer,
    };

    fn delivery() -> WebhookDelivery {
        WebhookDelivery {
            id: WebhookDeliveryId(Uuid::now_v7()),
            agent: domain::AgentId(Uuid::now_v7()),
            endpoint: WebhookEndpointId(Uuid::now_v7()),
            url: "https://hooks.example.com/in".into(),
            secrets: vec!["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".into()],
            event: EventRecord {
                key_id: None,
                id: EventId(Uuid::now_v7()),
                seq: 3,
                event_type: EventType::EmailSent,
                timestamp: OffsetDateTime::now_utc(),
                payload: EventPayload::EmailSent {
                    message_id: EmailMessageId(Uuid::now_v7()),
                    provider_message_id: None,
                },
            },
            attempt: 2,
        }
    }

    fn answered(status: Option<u16>, retry_after: Option<Duration>) -> MockWebhookPoster {
        let failure = match status {
            Some(status) if (200..300).contains(&status) => None,
            Some(status) => Some(AttemptFailure::Answered(status)),
            None => Some(AttemptFailure::TimedOut),
        };
        told(PostAnswer {
            status,
            failure,
            detail: failure.map(|_| "the poster's account".to_owned()),
            retry_after,
            duration: Duration::from_millis(12),
        })
    }

    fn told(answer: PostAnswer) -> MockWebhookPoster {
        let mut poster = MockWebhookPoster::new();
        poster
            .expect_post()
            .times(1)
            .returning(move |_| answer.clone());
        poster
    }

    /// A log that keeps each attempt and expects no disabling.
    fn logging(
        logged: &Arc<std::sync::Mutex<Vec<WebhookAttemptRecord>>>,
    ) -> MockWebhookAttemptOutcomes {
        let mut outcomes = MockWebhookAttemptOutcomes::new();
        let logged = logged.clone();
        outcomes.expect_log_attempt().returning(move |_, attempt| {
            logged.lock().expect("not poisoned").push(attempt.clone());
            Ok(())
        });
        outcomes
    }

    #[tokio::test]
    async fn a_2xx_is_delivered_and_every_attempt_is_logged() {
        let logged = Arc::default();
        let attempt = WebhookAttempt::new(
            Arc::new(logging(&logged)),
            Arc::new(answered(Some(204), None)),
        );
        let job = delivery();
        assert_eq!(attempt.deliver(&job).await, Ok(204));
        let logged = logged.lock().expect("not poisoned");
        assert_eq!(logged.len(), 1);
        assert_eq!(
            (
                logged[0].attempt,
                logged[0].status_code,
                logged[0].error.clone()
            ),
            (2, Some(204), None)
        );
        assert_eq!(logged[0].event_id, job.event.id);
    }

    #[tokio::test]
    async fn the_log_an_agent_reads_says_why_in_fixed_words_without_the_posters_account() {
        for (status, failure, detail, shown) in [
            (
                None,
                AttemptFailure::NotPubliclyRoutable,
                "target refused: hooks.example.com resolves to 10.0.0.7, which is not publicly \
                 routable",
                "refused: not publicly routable",
            ),
            (
                None,
                AttemptFailure::ConnectionFailed,
                "error sending request: client error (Connect): tcp connect error: Connection \
                 refused (os error 111)",
                "connection failed",
            ),
            (
                Some(500),
                AttemptFailure::Answered(500),
                "HTTP 500: Traceback (most recent call last): File \"/srv/internal/app.py\"",
                "HTTP 500",
            ),
        ] {
            let logged = Arc::default();
            let attempt = WebhookAttempt::new(
                Arc::new(logging(&logged)),
                Arc::new(told(PostAnswer {
                    status,
                    failure: Some(failure),
                    detail: Some(detail.to_owned()),
                    retry_after: None,
                    duration: Duration::from_millis(3),
                })),
            );
            let Err(DeliveryError::Transient { reason, .. }) = attempt.deliver(&delivery()).await
            else {
                panic!("{failure:?} is tried again");
            };
            assert_eq!(reason, shown, "what the queue records");
            let logged = logged.lock().expect("not poisoned");
            assert_eq!(logged[0].error.as_deref(), Some(shown));
            assert_eq!(logged[0].status_code, status);
        }
    }

    /// The agent's webhook ports, mocked: each expects only what a test tells it.
    #[derive(Default)]
    struct Endpoints {
        store: MockWebhookEndpointStore,
        deliveries: MockWebhookDeliveryLog,
    }

    fn service(endpoints: Endpoints) -> WebhookService {
        WebhookService::new(
            Arc::new(endpoints.store),
            Arc::new(endpoints.deliveries),
            Targets::PublicOnly,
            CursorCodec::new(b"test-secret-test-secret-test-secret"),
        )
    }

    #[tokio::test]
    async fn an_agents_replays_take_from_the_endpoints_rate_and_a_spent_one_says_when_to_retry() {
        let profile = crate::agents::fixtures::principal(AgentProfile::fixture());
        let agent = profile.profile.agent.id;
        let mut endpoints = Endpoints::default();
        endpoints
            .deliveries
            .expect_replay()
            .withf(move |owner, _, after, rate, keyed| {
                *owner == agent && *after == 7 && *rate == Some(REPLAY_RATE) && keyed.is_none()
            })
            .times(2)
            .returning({
                let mut answers = vec![
                    Replayed::Limited {
                        retry_after: Duration::from_secs(42),
                    },
                    Replayed::Queued(3),
                ];
                move |_, _, _, _, _| Ok(answers.pop())
            });
        let service = service(endpoints);
        let id = WebhookEndpointId(Uuid::now_v7());
        assert_eq!(
            service.replay(&profile, id, 7, None).await.expect("queued"),
            (3, false)
        );
        assert!(matches!(
            service.replay(&profile, id, 7, None).await,
            Err(WebhookError::TooManyReplays { retry_after }) if retry_after == Duration::from_secs(42)
        ));
    }

    #[tokio::test]
    async fn an_endpoint_is_made_and_enabled_by_the_key_of_the_request() {
        let principal = crate::agents::fixtures::principal(AgentProfile::fixture());
        let key = principal.key.hash;
        let mut endpoints = Endpoints::default();
        endpoints
            .store
            .expect_create()
            .withf(move |_, endpoint, _, _| endpoint.key == key)
            .times(1)
            .returning(|_, _, _, _| Err(EndpointRefusal::KeyRevoked));
        endpoints
            .store
            .expect_update()
            .withf(move |_, _, changes, by| changes.enabled == Some(true) && *by == key)
            .times(1)
            .returning(|_, _, _, _| Ok(Some(WebhookEndpointRecord::fixture())));
        let service = service(endpoints);
        let command = CreateWebhook {
            url: WebhookUrl::parse("https://hooks.example.com/in", Targets::PublicOnly)
                .expect("url"),
            types: None,
            description: None,
        };
        assert!(matches!(
            service.create(&principal, command, None).await,
            Err(WebhookError::KeyRevoked)
        ));
        let enabling = UpdateWebhook {
            enabled: Some(true),
            ..UpdateWebhook::default()
        };
        service
            .update(&principal, WebhookEndpointId(Uuid::now_v7()), enabling)
            .await
            .expect("enabled");
    }

    fn hook(url: &str, description: Option<&str>) -> CreateWebhook {
        CreateWebhook {
            url: WebhookUrl::parse(url, Targets::PublicOnly).expect("url"),
            types: None,
            description: description.map(str::to_owned),
        }
    }

    fn key(text: &str) -> Option<IdempotencyKey> {
        Some(IdempotencyKey::parse(text).expect("a key"))
    }

    #[tokio::test]
    async fn a_keyed_create_is_kept_per_agent_key_and_bound_to_the_whole_request() {
        let principal = crate::agents::fixtures::principal(AgentProfile::fixture());
        let made_by = principal.key.id;
        let keyed = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut endpoints = Endpoints::default();
        endpoints.store.expect_create().times(4).returning({
            let keyed = keyed.clone();
            move |_, endpoint, _, request_key| {
                keyed.lock().expect("not poisoned").push(request_key);
                Ok(Answered {
                    answer: (WebhookEndpointRecord::fixture(), endpoint.secret),
                    replayed: true,
                })
            }
        });
        let service = service(endpoints);
        let url = "https://hooks.example.com/in";
        for (command, idempotency_key) in [
            (hook(url, None), key("hook-1")),
            (hook(url, None), key("hook-1")),
            (hook(url, Some("")), key("hook-1")),
            (hook(url, None), None),
        ] {
            let made = service
                .create(&principal, command, idempotency_key)
                .await
                .expect("made");
            assert!(made.replayed, "the store's word on replay is passed on");
        }
        let keyed = keyed.lock().expect("not poisoned");
        let first = keyed[0].clone().expect("keyed");
        assert_eq!((first.key.as_str(), first.made_by), ("hook-1", made_by));
        assert_eq!(
            keyed[1].as_ref(),
            Some(&first),
            "the same request, the same key"
        );
        let other = keyed[2].clone().expect("keyed");
        assert_ne!(
            other.fingerprint, first.fingerprint,
            "an empty description is another request than none"
        );
        assert_eq!(keyed[3], None);
    }

    #[tokio::test]
    async fn a_keyed_rotation_or_replay_names_its_endpoint_and_the_store_refusals_are_409s() {
        let principal = crate::agents::fixtures::principal(AgentProfile::fixture());
        let (one, two) = (
            WebhookEndpointId(Uuid::now_v7()),
            WebhookEndpointId(Uuid::now_v7()),
        );
        let mut endpoints = Endpoints::default();
        let prints = Arc::new(std::sync::Mutex::new(Vec::new()));
        endpoints.store.expect_rotate_secret().times(2).returning({
            let prints = prints.clone();
            move |_, _, _, _, keyed| {
                prints
                    .lock()
                    .expect("not poisoned")
                    .push(keyed.expect("keyed").fingerprint);
                Err(EndpointRefusal::KeyReused)
            }
        });
        let mut answers = vec![
            Replayed::KeyInFlight,
            Replayed::KeyReused,
            Replayed::Again(4),
        ];
        endpoints
            .deliveries
            .expect_replay()
            .withf(|_, _, after, _, keyed| *after == 9 && keyed.is_some())
            .times(3)
            .returning(move |_, _, _, _, _| Ok(answers.pop()));
        let service = service(endpoints);
        for id in [one, two] {
            assert!(matches!(
                service.rotate_secret(&principal, id, key("rotate-1")).await,
                Err(WebhookError::KeyReused)
            ));
        }
        let prints = prints.lock().expect("not poisoned").clone();
        assert_ne!(prints[0], prints[1], "another endpoint is another request");
        assert_eq!(
            service
                .replay(&principal, one, 9, key("replay-1"))
                .await
                .expect("answered"),
            (4, true)
        );
        assert!(matches!(
            service.replay(&principal, one, 9, key("replay-1")).await,
            Err(WebhookError::KeyReused)
        ));
        assert!(matches!(
            service.replay(&principal, one, 9, key("replay-1")).await,
            Err(WebhookError::KeyInFlight)
        ));
    }

    #[tokio::test]
    async fn a_410_disables_the_endpoint_at_once_and_is_not_tried_again() {
        let logged = Arc::default();
        let mut outcomes = logging(&logged);
        let job = delivery();
        let endpoint = job.endpoint;
        outcomes
            .expect_disable()
            .withf(move |id, reason| *id == endpoint && reason.contains("410"))
            .times(1)
            .returning(|_, _| Ok(()));
        let attempt = WebhookAttempt::new(Arc::new(outcomes), Arc::new(answered(Some(410), None)));
        assert!(matches!(
            attempt.deliver(&job).await,
            Err(DeliveryError::Refused(_))
        ));
    }

    #[tokio::test]
    async fn a_429_or_503_passes_its_retry_after_on_and_anything_else_is_tried_again() {
        for (status, retry_after, passed_on) in [
            (
                Some(429),
                Some(Duration::from_secs(7)),
                Some(Duration::from_secs(7)),
            ),
            (
                Some(503),
                Some(Duration::from_secs(9)),
                Some(Duration::from_secs(9)),
            ),
            (Some(500), Some(Duration::from_secs(9)), None),
            (Some(302), None, None),
            (None, None, None),
        ] {
            let logged = Arc::default();
            let attempt = WebhookAttempt::new(
                Arc::new(logging(&logged)),
                Arc::new(answered(status, retry_after)),
            );
            match attempt.deliver(&delivery()).await {
                Err(DeliveryError::Transient {
                    retry_after,
                    reason,
                }) => {
                    assert_eq!(retry_after, passed_on, "{status:?}");
                    assert!(!reason.is_empty(), "{status:?}");
                }
                other => panic!("{status:?}: {other:?}"),
            }
            let logged = logged.lock().expect("not poisoned");
            assert!(logged[0].error.is_some(), "{status:?} is logged as failed");
        }
    }
}
