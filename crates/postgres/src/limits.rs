//! Rate limits on PostgreSQL: one token bucket row per subject (an agent or a sponsor) and action,
//! shared by every server instance, taken inside the transaction of what it limits; the domain's
//! `RateLimit::take` does the arithmetic under the row's lock.

use diesel::prelude::*;
use diesel::sql_types::Double;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{RateDecision, RateLimit};
use futures_util::future::BoxFuture;
use futures_util::FutureExt;
use uuid::Uuid;

use crate::clock::{duration_from_secs, seconds_since};
use crate::prepared::Prepared;
use crate::schema::rate_limit_buckets;

/// Takes one request of `action` from the bucket of `subject` (an agent or a sponsor), inside the
/// caller's transaction: the bucket's row stays locked until it ends.
pub(crate) async fn take_locked(
    connection: &mut AsyncPgConnection,
    subject: Uuid,
    action: &'static str,
    limit: RateLimit,
) -> Result<RateDecision, diesel::result::Error> {
    let (tokens, elapsed) = match lock_bucket(connection, subject, action).await? {
        Some(bucket) => bucket,
        // Only a subject's first request comes here: the others find the row at once, one round
        // trip fewer.
        None => {
            create_bucket(connection, subject, action, limit).await?;
            lock_bucket(connection, subject, action)
                .await?
                .ok_or(diesel::result::Error::NotFound)?
        }
    };
    let (tokens, decision) = limit.take(tokens, duration_from_secs(elapsed));
    store_bucket(connection, subject, action, tokens).await?;
    Ok(decision)
}

/// Makes the bucket of `subject` and `action`, full, unless it exists. A new bucket is made
/// before it is taken from, so concurrent first requests have a row to queue on and none of them
/// counts a full bucket twice.
pub(crate) async fn create_bucket(
    connection: &mut AsyncPgConnection,
    subject: Uuid,
    action: &'static str,
    limit: RateLimit,
) -> Result<(), diesel::result::Error> {
    Prepared(
        diesel::insert_into(rate_limit_buckets::table)
            .values((
                rate_limit_buckets::subject_id.eq(subject),
                rate_limit_buckets::action.eq(action),
                rate_limit_buckets::tokens.eq(f64::from(limit.burst)),
            ))
            .on_conflict_do_nothing(),
    )
    .execute(connection)
    .await
    .map(drop)
}

/// Stores what is left of the bucket `take` took from. A future that holds no borrow of the
/// connection, so it can go out with the statement after it.
pub(crate) fn store_bucket(
    connection: &mut AsyncPgConnection,
    subject: Uuid,
    action: &'static str,
    tokens: f64,
) -> BoxFuture<'static, Result<usize, diesel::result::Error>> {
    Prepared(
        diesel::update(rate_limit_buckets::table.find((subject, action))).set((
            rate_limit_buckets::tokens.eq(tokens),
            rate_limit_buckets::updated_at.eq(diesel::dsl::now),
        )),
    )
    .execute(connection)
    .boxed()
}

/// The tokens of a bucket and the seconds since it was last taken from, locked until the
/// transaction ends; `None` while the bucket does not exist. A future that holds no borrow of the
/// connection, so it can go out with the statements after it.
pub(crate) fn lock_bucket(
    connection: &mut AsyncPgConnection,
    subject: Uuid,
    action: &'static str,
) -> BoxFuture<'static, Result<Option<(f64, f64)>, diesel::result::Error>> {
    Prepared(
        rate_limit_buckets::table
            .find((subject, action))
            .select((
                rate_limit_buckets::tokens,
                seconds_since::<Double>("rate_limit_buckets.updated_at"),
            ))
            .for_update(),
    )
    .get_result::<(f64, f64)>(connection)
    .map(OptionalExtension::optional)
    .boxed()
}
