//! What an operator sees of an agent's events and webhook endpoints, and what it may do to an
//! endpoint: replay its deliveries, disable it (the reason names who did).

use std::sync::Arc;

use domain::{
    AgentId, EventTypes, Operator, WebhookAttemptRecord, WebhookEndpointId, WebhookEndpointRecord,
};
use ports::{
    EventLog, StoreError, WebhookAttemptOutcomes, WebhookDeliveryLog, WebhookEndpointStore,
};

use crate::events::{page_of, EventPage};
use crate::webhooks::WebhookError;

/// How many of an endpoint's attempts its operator's view shows.
const RECENT_ATTEMPTS: usize = 20;

pub struct EventAdmin {
    log: Arc<dyn EventLog>,
    endpoints: Arc<dyn WebhookEndpointStore>,
    /// The endpoints' attempts, and their replays.
    deliveries: Arc<dyn WebhookDeliveryLog>,
    /// Where an operator's disabling goes, as a gone receiver's does.
    outcomes: Arc<dyn WebhookAttemptOutcomes>,
}

/// An endpoint as the operator sees it: whose it is and how its latest attempts went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointView {
    pub endpoint: WebhookEndpointRecord,
    pub recent_attempts: Vec<WebhookAttemptRecord>,
}

impl EventAdmin {
    pub fn new(
        log: Arc<dyn EventLog>,
        endpoints: Arc<dyn WebhookEndpointStore>,
        deliveries: Arc<dyn WebhookDeliveryLog>,
        outcomes: Arc<dyn WebhookAttemptOutcomes>,
    ) -> Self {
        Self {
            log,
            endpoints,
            deliveries,
            outcomes,
        }
    }

    /// The agent's events after `after`, oldest first.
    pub async fn events(
        &self,
        agent: AgentId,
        after: u64,
        types: EventTypes,
        limit: usize,
    ) -> Result<EventPage, StoreError> {
        page_of(self.log.as_ref(), agent, after, types, limit).await
    }

    pub async fn endpoints(
        &self,
        agent: AgentId,
    ) -> Result<Vec<WebhookEndpointRecord>, StoreError> {
        self.endpoints.list(agent).await
    }

    /// Whose the endpoint is.
    async fn owner(&self, id: WebhookEndpointId) -> Result<AgentId, WebhookError> {
        self.endpoints
            .owner(id)
            .await?
            .ok_or(WebhookError::NotFound)
    }

    pub async fn endpoint(&self, id: WebhookEndpointId) -> Result<EndpointView, WebhookError> {
        let agent = self.owner(id).await?;
        let endpoint = self
            .endpoints
            .get(agent, id)
            .await?
            .ok_or(WebhookError::NotFound)?;
        let recent_attempts = self
            .deliveries
            .attempts(agent, id, None, RECENT_ATTEMPTS)
            .await?
            .unwrap_or_default();
        Ok(EndpointView {
            endpoint,
            recent_attempts,
        })
    }

    /// Delivers again every kept event the endpoint wants after `after`; how many.
    pub async fn replay(&self, id: WebhookEndpointId, after: u64) -> Result<usize, WebhookError> {
        let agent = self.owner(id).await?;
        // The operator's replays take from no bucket.
        let replayed = self.deliveries.replay(agent, id, after, None, None).await?;
        crate::webhooks::replayed(replayed).map(|(queued, _)| queued)
    }

    /// Disables the endpoint; its reason says which operator did, and why when told.
    pub async fn disable(
        &self,
        operator: &Operator,
        id: WebhookEndpointId,
        why: Option<&str>,
    ) -> Result<WebhookEndpointRecord, WebhookError> {
        let agent = self.owner(id).await?;
        let reason = match why {
            Some(why) => format!("disabled by the operator {operator}: {why}"),
            None => format!("disabled by the operator {operator}"),
        };
        self.outcomes.disable(id, &reason).await?;
        self.endpoints
            .get(agent, id)
            .await?
            .ok_or(WebhookError::NotFound)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::{AgentId, WebhookEndpointRecord};
    use mockall::predicate::eq;
    use ports::{
        MockEventLog, MockWebhookAttemptOutcomes, MockWebhookDeliveryLog, MockWebhookEndpointStore,
    };
    use uuid::Uuid;

    #[tokio::test]
    async fn an_operator_disabling_an_endpoint_is_named_in_its_reason() {
        let (agent, id) = (AgentId(Uuid::now_v7()), WebhookEndpointId(Uuid::now_v7()));
        let mut endpoints = MockWebhookEndpointStore::new();
        endpoints
            .expect_owner()
            .with(eq(id))
            .returning(move |_| Ok(Some(agent)));
        let mut outcomes = MockWebhookAttemptOutcomes::new();
        outcomes
            .expect_disable()
            .withf(move |disabled, reason| {
                *disabled == id && reason == "disabled by the operator cli:alice: spam"
            })
            .times(1)
            .returning(|_, _| Ok(()));
        endpoints.expect_get().returning(move |_, _| {
            Ok(Some(WebhookEndpointRecord {
                enabled: false,
                ..WebhookEndpointRecord::fixture()
            }))
        });
        let admin = EventAdmin::new(
            Arc::new(MockEventLog::new()),
            Arc::new(endpoints),
            Arc::new(MockWebhookDeliveryLog::new()),
            Arc::new(outcomes),
        );
        let disabled = admin
            .disable(&crate::operator::tests::operator(), id, Some("spam"))
            .await
            .expect("disabled");
        assert!(!disabled.enabled);
    }

    #[tokio::test]
    async fn an_endpoint_no_agent_owns_is_not_found() {
        let mut endpoints = MockWebhookEndpointStore::new();
        endpoints.expect_owner().returning(|_| Ok(None));
        let admin = EventAdmin::new(
            Arc::new(MockEventLog::new()),
            Arc::new(endpoints),
            Arc::new(MockWebhookDeliveryLog::new()),
            Arc::new(MockWebhookAttemptOutcomes::new()),
        );
        let missing = admin.replay(WebhookEndpointId(Uuid::now_v7()), 0).await;
        assert!(matches!(missing, Err(WebhookError::NotFound)));
    }
}
