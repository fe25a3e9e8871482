//! An agent's webhook endpoints (decision 0058): created with a secret shown once, changed,
//! rotated, replayed, and the attempt at each delivery, which a leased queue's worker makes.

use std::sync::Arc;

use async_trait::async_trait;
use domain::commands::{CreateWebhook, UpdateWebhook};
use domain::{
    AgentProfile, CursorCodec, CursorPosition, Targets, WebhookAttemptRecord, WebhookEndpointId,
    WebhookEndpointRecord, WebhookUrl, WebhookUrlError, MAX_WEBHOOK_ENDPOINTS,
    OLD_SECRET_SIGNS_FOR,
};
use ports::{
    DeliveryError, EndpointRefusal, NewWebhookEndpoint, StoreError, WebhookDelivery,
    WebhookEndpointChanges, WebhookEndpoints, WebhookPoster,
};
use rand::RngCore;
use time::OffsetDateTime;
use uuid::Uuid;

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
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<EndpointRefusal> for WebhookError {
    fn from(refusal: EndpointRefusal) -> Self {
        match refusal {
            EndpointRefusal::TooMany => Self::TooMany,
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

/// A new secret, `whsec_` and the base64 of 32 bytes from the operating system's random source.
fn new_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    standard_webhooks::Secret::text_of(bytes)
}

pub struct WebhookService {
    endpoints: Arc<dyn WebhookEndpoints>,
    targets: Targets,
    cursors: CursorCodec,
}

impl WebhookService {
    /// `targets`: whether endpoints may point at addresses that are not publicly routable.
    pub fn new(
        endpoints: Arc<dyn WebhookEndpoints>,
        targets: Targets,
        cursors: CursorCodec,
    ) -> Self {
        Self {
            endpoints,
            targets,
            cursors,
        }
    }

    /// The URL again, under this deployment's rule for targets.
    fn allowed(&self, url: &WebhookUrl) -> Result<WebhookUrl, WebhookError> {
        WebhookUrl::parse(url.as_str(), self.targets).map_err(WebhookError::Url)
    }

    /// Creates the endpoint; its secret is returned this once.
    #[tracing::instrument(level = "debug", skip(self, profile, command), fields(agent = %profile.agent.id))]
    pub async fn create(
        &self,
        profile: &AgentProfile,
        command: CreateWebhook,
    ) -> Result<(WebhookEndpointRecord, String), WebhookError> {
        let url = self.allowed(&command.url)?;
        let secret = new_secret();
        let endpoint = NewWebhookEndpoint {
            id: WebhookEndpointId(Uuid::now_v7()),
            url,
            types: command.types,
            description: command.description,
            secret: secret.clone(),
        };
        let created = self
            .endpoints
            .create(profile.agent.id, endpoint, MAX_WEBHOOK_ENDPOINTS)
            .await?;
        Ok((created, secret))
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

    #[tracing::instrument(level = "debug", skip(self, profile, command), fields(agent = %profile.agent.id))]
    pub async fn update(
        &self,
        profile: &AgentProfile,
        id: WebhookEndpointId,
        command: UpdateWebhook,
    ) -> Result<WebhookEndpointRecord, WebhookError> {
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
            .update(profile.agent.id, id, changes)
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

    /// A new secret for the endpoint, returned this once; the old one signs for a day more.
    pub async fn rotate_secret(
        &self,
        profile: &AgentProfile,
        id: WebhookEndpointId,
    ) -> Result<(WebhookEndpointRecord, String), WebhookError> {
        let secret = new_secret();
        let endpoint = self
            .endpoints
            .rotate_secret(profile.agent.id, id, secret.clone(), OLD_SECRET_SIGNS_FOR)
            .await?
            .ok_or(WebhookError::NotFound)?;
        Ok((endpoint, secret))
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
        let after = cursor
            .map(|cursor| self.cursors.decode(&scope, cursor))
            .transpose()
            .map_err(|_| WebhookError::InvalidCursor)?;
        let fetched = self
            .endpoints
            .attempts(profile.agent.id, id, after, limit + 1)
            .await?
            .ok_or(WebhookError::NotFound)?;
        let (items, next_cursor) = into_page(fetched, limit, &self.cursors, &scope, |last| {
            CursorPosition::of(last.attempted_at, last.attempt_id)
        });
        Ok(AttemptPage { items, next_cursor })
    }

    /// Delivers again every kept event of a type the endpoint wants after `after`; how many.
    pub async fn replay(
        &self,
        profile: &AgentProfile,
        id: WebhookEndpointId,
        after: u64,
    ) -> Result<usize, WebhookError> {
        self.endpoints
            .replay(profile.agent.id, id, after)
            .await?
            .ok_or(WebhookError::NotFound)
    }
}

/// One attempt at a delivery: the POST, its line in the log, and what the answer means. Any 2xx
/// is delivered; 410 disables the endpoint at once; anything else is tried again on the
/// schedule, not before a `Retry-After`.
pub struct WebhookAttempt {
    endpoints: Arc<dyn WebhookEndpoints>,
    poster: Arc<dyn WebhookPoster>,
}

impl WebhookAttempt {
    pub fn new(endpoints: Arc<dyn WebhookEndpoints>, poster: Arc<dyn WebhookPoster>) -> Self {
        Self { endpoints, poster }
    }
}

#[async_trait]
impl Deliver<WebhookDelivery> for WebhookAttempt {
    async fn deliver(&self, delivery: &WebhookDelivery) -> Result<u16, DeliveryError> {
        let attempted_at = OffsetDateTime::now_utc();
        let answer = self.poster.post(delivery).await;
        let error = match answer.status {
            Some(status) if (200..300).contains(&status) => None,
            Some(status) => Some(answer.error.clone().unwrap_or(format!("HTTP {status}"))),
            None => Some(answer.error.clone().unwrap_or("no answer".into())),
        };
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
        if let Err(failure) = self.endpoints.log_attempt(delivery.endpoint, &logged).await {
            tracing::warn!(error = %failure, delivery = %delivery.id, "an attempt could not be logged");
        }
        match (answer.status, error) {
            (Some(status), None) => Ok(status),
            (Some(410), _) => {
                let reason = "the receiver answered 410 Gone";
                if let Err(failure) = self.endpoints.disable(delivery.endpoint, reason).await {
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
