//! The one way a write under an idempotency key and a rate is let through (decision 0054), for
//! every table that takes such writes: wallet sends, mail sends, and the writes of the transports
//! to come. Inside the caller's transaction, in this order:
//!
//! 1. the key's transaction-scoped advisory lock, or a refusal at once while another request of
//!    the key is in flight (no queueing behind it);
//! 2. the row that took the key earlier answers, if its key is still live: the same request is
//!    replayed, another is a mismatch; neither takes a rate token, so retries are free. A key
//!    past its window is taken off its row, and the request goes on as new;
//! 3. a token from each bucket, in the order given (every caller of a pair of buckets names them
//!    in the same order, so none waits on another holding the second);
//! 4. the caller's own locks, checks and insert.

use std::fmt::Display;
use std::time::Duration;

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Text, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{RateDecision, RateLimit};
use ports::{KeyedRefusal, StoreError};
use uuid::Uuid;

use crate::errors::TxError;
use crate::limits::take_locked;
use crate::prepared::Prepared;

/// One idempotency key of one owner, in a namespace of keys of its own.
pub(crate) struct IdempotencyKey<'a> {
    pub owner: Uuid,
    /// Tells the keys of one kind of write from another's in the advisory lock, e.g. `":email:"`.
    pub namespace: &'static str,
    pub key: &'a str,
    /// How long a key answers for the row that took it.
    pub ttl: Duration,
}

/// A token bucket a write takes from.
pub(crate) struct Bucket {
    pub subject: Uuid,
    pub action: &'static str,
    pub limit: RateLimit,
}

/// The row that took a key earlier, as its table read it.
pub(crate) struct Earlier<R, Id> {
    pub id: Id,
    pub row: R,
    /// Whether the key is still within its window on the row.
    pub live: bool,
    /// Whether the request at hand repeats the one that wrote the row.
    pub repeated: bool,
}

/// How a table finds the row that took a key, and takes an expired key off it.
#[async_trait]
pub(crate) trait KeyHolders: Sync {
    type Row: Send;
    type Id: Send + Display;

    /// The row of the request's owner that holds `key`, judged against the request; its key is
    /// live when it is younger than `ttl`.
    async fn earlier(
        &self,
        connection: &mut AsyncPgConnection,
        key: &str,
        ttl: Duration,
    ) -> Result<Option<Earlier<Self::Row, Self::Id>>, TxError<StoreError>>;

    /// Takes the key off row `id`, so the request at hand can take it.
    async fn release(
        &self,
        connection: &mut AsyncPgConnection,
        id: &Self::Id,
    ) -> Result<(), diesel::result::Error>;
}

#[derive(QueryableByName)]
struct Granted {
    #[diesel(sql_type = Bool)]
    granted: bool,
}

/// Steps 1–3 above: `Ok(Some(row))` replays `row`, `Ok(None)` lets the caller write.
pub(crate) async fn admit<H, E>(
    connection: &mut AsyncPgConnection,
    key: Option<IdempotencyKey<'_>>,
    holders: &H,
    buckets: &[Bucket],
) -> Result<Option<H::Row>, TxError<E>>
where
    H: KeyHolders,
    E: From<StoreError> + From<KeyedRefusal<H::Id>>,
{
    if let Some(earlier) = admit_key(connection, key, holders).await? {
        return Ok(Some(earlier));
    }
    for bucket in buckets {
        let decision = take_locked(connection, bucket.subject, bucket.action, bucket.limit).await?;
        refuse_limited::<H, E>(decision)?;
    }
    Ok(None)
}

/// Steps 1 and 2 above, for a caller that takes its tokens itself (step 3) with what it sends
/// next: `Ok(Some(row))` replays `row`.
pub(crate) async fn admit_key<H, E>(
    connection: &mut AsyncPgConnection,
    key: Option<IdempotencyKey<'_>>,
    holders: &H,
) -> Result<Option<H::Row>, TxError<E>>
where
    H: KeyHolders,
    E: From<StoreError> + From<KeyedRefusal<H::Id>>,
{
    let refused = |refusal: KeyedRefusal<H::Id>| TxError::Abort(E::from(refusal));
    let Some(key) = key else {
        return Ok(None);
    };
    let granted: Granted = Prepared(
        diesel::sql_query(
            "SELECT pg_try_advisory_xact_lock(hashtextextended($1::text || $2 || $3, 0)) \
             AS granted",
        )
        .bind::<SqlUuid, _>(key.owner)
        .bind::<Text, _>(key.namespace)
        .bind::<Text, _>(key.key),
    )
    .get_result(connection)
    .await?;
    if !granted.granted {
        return Err(refused(KeyedRefusal::KeyInFlight));
    }
    let earlier = holders
        .earlier(connection, key.key, key.ttl)
        .await
        .map_err(|error| match error {
            TxError::Diesel(error) => TxError::Diesel(error),
            TxError::Abort(store) => TxError::store(store),
        })?;
    match earlier {
        Some(Earlier {
            row,
            live: true,
            repeated: true,
            ..
        }) => Ok(Some(row)),
        Some(Earlier { id, live: true, .. }) => {
            Err(refused(KeyedRefusal::IdempotencyMismatch { original: id }))
        }
        Some(Earlier { id, .. }) => {
            holders.release(connection, &id).await?;
            Ok(None)
        }
        None => Ok(None),
    }
}

/// A bucket's decision as step 3 answers it: a refusal when it let nothing through.
pub(crate) fn refuse_limited<H, E>(decision: RateDecision) -> Result<(), TxError<E>>
where
    H: KeyHolders,
    E: From<KeyedRefusal<H::Id>>,
{
    match decision {
        RateDecision::Limited { retry_after } => {
            Err(TxError::Abort(E::from(KeyedRefusal::RateLimited {
                retry_after,
            })))
        }
        RateDecision::Allowed => Ok(()),
    }
}
