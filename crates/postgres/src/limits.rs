//! `RateLimiter` on PostgreSQL: one token bucket row per agent and action, shared by every server
//! instance; the domain's `RateLimit::take` does the arithmetic under the row's lock.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::Double;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{AgentId, RateDecision, RateLimit};
use ports::{RateLimiter, StoreError};
use uuid::Uuid;

use crate::clock::{duration_from_secs, seconds_since};
use crate::database::Database;
use crate::schema::rate_limit_buckets;

pub struct PgRateLimiter {
    database: Database,
}

impl PgRateLimiter {
    pub fn new(database: Database) -> Self {
        Self { database }
    }
}

/// Takes one request of `action` from the bucket of `subject` (an agent or a sponsor), inside the
/// caller's transaction: the bucket's row stays locked until it ends.
pub(crate) async fn take_locked(
    connection: &mut AsyncPgConnection,
    subject: Uuid,
    action: &'static str,
    limit: RateLimit,
) -> Result<RateDecision, diesel::result::Error> {
    // A new bucket starts full; creating it first gives concurrent first requests a row to queue
    // on, so none of them counts a full bucket twice.
    diesel::insert_into(rate_limit_buckets::table)
        .values((
            rate_limit_buckets::subject_id.eq(subject),
            rate_limit_buckets::action.eq(action),
            rate_limit_buckets::tokens.eq(f64::from(limit.burst)),
        ))
        .on_conflict_do_nothing()
        .execute(connection)
        .await?;
    let (tokens, elapsed) = rate_limit_buckets::table
        .find((subject, action))
        .select((
            rate_limit_buckets::tokens,
            seconds_since::<Double>("rate_limit_buckets.updated_at"),
        ))
        .for_update()
        .first::<(f64, f64)>(connection)
        .await?;
    let (tokens, decision) = limit.take(tokens, duration_from_secs(elapsed));
    diesel::update(rate_limit_buckets::table.find((subject, action)))
        .set((
            rate_limit_buckets::tokens.eq(tokens),
            rate_limit_buckets::updated_at.eq(diesel::dsl::now),
        ))
        .execute(connection)
        .await?;
    Ok(decision)
}

#[async_trait]
impl RateLimiter for PgRateLimiter {
    #[tracing::instrument(level = "debug", skip(self))]
    async fn take(
        &self,
        agent: AgentId,
        action: &'static str,
        limit: RateLimit,
    ) -> Result<RateDecision, StoreError> {
        self.database
            .in_transaction(|connection| {
                async move { Ok(take_locked(connection, agent.0, action, limit).await?) }
                    .scope_boxed()
            })
            .await
    }
}
