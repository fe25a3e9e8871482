//! `WebhookAttemptOutcomes`: each attempt's line in its endpoint's log, and an endpoint disabled
//! (its receiver gone, or by an operator) with what is queued for it failed.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{Integer, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::RunQueryDsl;
use domain::{WebhookAttemptRecord, WebhookEndpointId};
use ports::{StoreError, WebhookAttemptOutcomes};

use super::{disable_locked, PgWebhookStore};
use crate::errors::from_diesel;
use crate::schema::{webhook_attempts, webhook_deliveries};

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
        // The line takes its agent from its delivery, in the one statement. A delivery removed
        // meanwhile (its event pruned) gets no line: its removal takes its lines with it.
        let attempt_row = webhook_deliveries::table
            .find(attempt.delivery_id.0)
            .select((
                attempt.attempt_id.into_sql::<SqlUuid>(),
                webhook_deliveries::id,
                webhook_deliveries::agent_id,
                endpoint.0.into_sql::<SqlUuid>(),
                attempt.event_id.0.into_sql::<SqlUuid>(),
                attempt.event_type.as_str().into_sql::<Text>(),
                i32::try_from(attempt.attempt)
                    .unwrap_or(i32::MAX)
                    .into_sql::<Integer>(),
                attempt
                    .status_code
                    .map(i32::from)
                    .into_sql::<Nullable<Integer>>(),
                attempt.error.as_deref().into_sql::<Nullable<Text>>(),
                i32::try_from(attempt.duration.as_millis())
                    .unwrap_or(i32::MAX)
                    .into_sql::<Integer>(),
                attempt.attempted_at.into_sql::<Timestamptz>(),
            ));
        diesel::insert_into(webhook_attempts::table)
            .values(attempt_row)
            .into_columns((
                webhook_attempts::id,
                webhook_attempts::delivery_id,
                webhook_attempts::agent_id,
                webhook_attempts::endpoint_id,
                webhook_attempts::event_id,
                webhook_attempts::event_type,
                webhook_attempts::attempt,
                webhook_attempts::status_code,
                webhook_attempts::error,
                webhook_attempts::duration_ms,
                webhook_attempts::attempted_at,
            ))
            .execute(&mut connection)
            .await
            .map_err(from_diesel)?;
        Ok(())
    }
}
