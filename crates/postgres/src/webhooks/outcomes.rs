//! `WebhookAttemptOutcomes`: each attempt's line in its endpoint's log, and an endpoint disabled
//! (its receiver gone, or by an operator) with what is queued for it failed.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::RunQueryDsl;
use domain::{WebhookAttemptRecord, WebhookEndpointId};
use ports::{StoreError, WebhookAttemptOutcomes};

use super::{disable_locked, PgWebhookStore};
use crate::errors::from_diesel;
use crate::schema::webhook_attempts;

#[async_trait]
impl WebhookAttemptOutcomes for PgWebhookStore {
    #[tracing::instrument(level = "debug", skip(self))]
    async fn disable(&self, id: WebhookEndpointId, reason: &str) -> Result<(), StoreError> {
        self.database
            .in_transaction(|connection| {
                async move { Ok(disable_locked(connection, id, reason).await?) }.scope_boxed()
            })
            .await
    }

    #[tracing::instrument(level = "debug", skip(self, attempt))]
    async fn log_attempt(
        &self,
        endpoint: WebhookEndpointId,
        attempt: &WebhookAttemptRecord,
    ) -> Result<(), StoreError> {
        let mut connection = self.database.connection().await?;
        diesel::insert_into(webhook_attempts::table)
            .values((
                webhook_attempts::id.eq(attempt.attempt_id),
                webhook_attempts::delivery_id.eq(attempt.delivery_id.0),
                webhook_attempts::endpoint_id.eq(endpoint.0),
                webhook_attempts::event_id.eq(attempt.event_id.0),
                webhook_attempts::event_type.eq(attempt.event_type.as_str()),
                webhook_attempts::attempt.eq(i32::try_from(attempt.attempt).unwrap_or(i32::MAX)),
                webhook_attempts::status_code.eq(attempt.status_code.map(i32::from)),
                webhook_attempts::error.eq(&attempt.error),
                webhook_attempts::duration_ms
                    .eq(i32::try_from(attempt.duration.as_millis()).unwrap_or(i32::MAX)),
                webhook_attempts::attempted_at.eq(attempt.attempted_at),
            ))
            .execute(&mut connection)
            .await
            .map_err(from_diesel)?;
        Ok(())
    }
}
