//! The idempotency keys of writes that have no row of their own to hold one (decisions 0094,
//! 0095): a key made, a webhook endpoint made, its secret rotated, its deliveries replayed. Each key's
//! first answer is kept in `idempotent_requests`, per agent and agent key, written in the
//! transaction of the write itself: a commit lost in a failover left both or neither. The key is
//! admitted as every keyed write's is (`idempotency::admit_key`, decision 0054).

use std::time::Duration;

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Bytea, Interval, Jsonb, Text, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::AgentId;
use ports::{KeyedRefusal, RequestKey, StoreError};
use serde_json::Value;

use crate::clock::interval;
use crate::errors::TxError;
use crate::idempotency::{admit_key, Earlier, IdempotencyKey, KeyHolders};

/// How long a key answers for its first request: the window of every idempotency key (decision
/// 0023).
pub(crate) const KEY_WINDOW: Duration = Duration::from_secs(24 * 60 * 60);

/// A write kept under a key; one namespace of keys each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operation {
    KeyCreate,
    WebhookCreate,
    WebhookRotateSecret,
    WebhookReplay,
}

impl Operation {
    fn name(self) -> &'static str {
        match self {
            Self::KeyCreate => "key_create",
            Self::WebhookCreate => "webhook_create",
            Self::WebhookRotateSecret => "webhook_rotate_secret",
            Self::WebhookReplay => "webhook_replay",
        }
    }

    /// The namespace of the key's advisory lock.
    fn namespace(self) -> &'static str {
        match self {
            Self::KeyCreate => ":key_create:",
            Self::WebhookCreate => ":webhook_create:",
            Self::WebhookRotateSecret => ":webhook_rotate_secret:",
            Self::WebhookReplay => ":webhook_replay:",
        }
    }
}

/// The answers kept under one agent key's keys of one operation, judged against one request.
struct AnswersUnderKey<'a> {
    agent: AgentId,
    keyed: &'a RequestKey,
    operation: Operation,
}

#[derive(QueryableByName)]
struct KeptAnswer {
    #[diesel(sql_type = Bytea)]
    fingerprint: Vec<u8>,
    #[diesel(sql_type = Jsonb)]
    answer: Value,
    #[diesel(sql_type = Bool)]
    live: bool,
}

#[async_trait]
impl KeyHolders for AnswersUnderKey<'_> {
    type Row = Value;
    type Id = String;

    async fn earlier(
        &self,
        connection: &mut AsyncPgConnection,
        _key: &str,
        ttl: Duration,
    ) -> Result<Option<Earlier<Value, String>>, TxError<StoreError>> {
        let kept: Option<KeptAnswer> = diesel::sql_query(
            "SELECT fingerprint, answer, created_at > now() - $5 AS live \
             FROM idempotent_requests \
             WHERE agent_id = $1 AND key_id = $2 AND operation = $3 AND idempotency_key = $4",
        )
        .bind::<SqlUuid, _>(self.agent.0)
        .bind::<SqlUuid, _>(self.keyed.made_by.0)
        .bind::<Text, _>(self.operation.name())
        .bind::<Text, _>(self.keyed.key.as_str())
        .bind::<Interval, _>(interval(ttl))
        .get_result(connection)
        .await
        .optional()?;
        Ok(kept.map(|kept| Earlier {
            id: "an earlier request".to_owned(),
            repeated: kept.fingerprint == self.keyed.fingerprint,
            row: kept.answer,
            live: kept.live,
        }))
    }

    async fn release(
        &self,
        connection: &mut AsyncPgConnection,
        _id: &String,
    ) -> Result<(), diesel::result::Error> {
        diesel::sql_query(
            "DELETE FROM idempotent_requests \
             WHERE agent_id = $1 AND key_id = $2 AND operation = $3 AND idempotency_key = $4",
        )
        .bind::<SqlUuid, _>(self.agent.0)
        .bind::<SqlUuid, _>(self.keyed.made_by.0)
        .bind::<Text, _>(self.operation.name())
        .bind::<Text, _>(self.keyed.key.as_str())
        .execute(connection)
        .await
        .map(|_| ())
    }
}

/// Why a keyed write did not go on, in the store's own words.
#[derive(Debug)]
pub(crate) enum Refused {
    InFlight,
    Reused,
}

/// What `admit` fails with for a caller whose refusals are answers rather than errors.
pub(crate) enum KeyedError {
    Store(StoreError),
    Refused(Refused),
}

impl From<StoreError> for KeyedError {
    fn from(error: StoreError) -> Self {
        Self::Store(error)
    }
}

impl From<Refused> for KeyedError {
    fn from(refused: Refused) -> Self {
        Self::Refused(refused)
    }
}

/// Steps 1 and 2 of decision 0054 for `keyed`, inside the write's transaction: `Ok(Some(answer))`
/// is the first answer of the key, to be given again; `Ok(None)` lets the write go on (then
/// `remember` its answer in the same transaction).
pub(crate) async fn admit<E>(
    connection: &mut AsyncPgConnection,
    agent: AgentId,
    keyed: Option<&RequestKey>,
    operation: Operation,
) -> Result<Option<Value>, TxError<E>>
where
    E: From<StoreError> + From<Refused>,
{
    let Some(keyed) = keyed else {
        return Ok(None);
    };
    let lock_key = format!("{}:{}", keyed.made_by.0, keyed.key.as_str());
    let holders = AnswersUnderKey {
        agent,
        keyed,
        operation,
    };
    admit_key::<_, Admission>(
        connection,
        Some(IdempotencyKey {
            owner: agent.0,
            namespace: operation.namespace(),
            key: &lock_key,
            ttl: KEY_WINDOW,
        }),
        &holders,
    )
    .await
    .map_err(|error| match error {
        TxError::Diesel(error) => TxError::Diesel(error),
        TxError::Abort(Admission::Store(error)) => TxError::Abort(E::from(error)),
        TxError::Abort(Admission::Refused(refused)) => TxError::Abort(E::from(refused)),
    })
}

/// Keeps `answer` as the first answer of `keyed`, in the transaction of its write, and takes
/// away the agent's keys past their window, whose answers no retry can have any more.
pub(crate) async fn remember(
    connection: &mut AsyncPgConnection,
    agent: AgentId,
    keyed: &RequestKey,
    operation: Operation,
    answer: &Value,
) -> Result<(), diesel::result::Error> {
    diesel::sql_query(
        "DELETE FROM idempotent_requests WHERE agent_id = $1 AND created_at <= now() - $2",
    )
    .bind::<SqlUuid, _>(agent.0)
    .bind::<Interval, _>(interval(KEY_WINDOW))
    .execute(connection)
    .await?;
    diesel::sql_query(
        "INSERT INTO idempotent_requests \
             (agent_id, key_id, operation, idempotency_key, fingerprint, answer) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind::<SqlUuid, _>(agent.0)
    .bind::<SqlUuid, _>(keyed.made_by.0)
    .bind::<Text, _>(operation.name())
    .bind::<Text, _>(keyed.key.as_str())
    .bind::<Bytea, _>(keyed.fingerprint.as_slice())
    .bind::<Jsonb, _>(answer)
    .execute(connection)
    .await
    .map(|_| ())
}

/// What admission can refuse with, before it is put in the caller's words.
enum Admission {
    Store(StoreError),
    Refused(Refused),
}

impl From<StoreError> for Admission {
    fn from(error: StoreError) -> Self {
        Self::Store(error)
    }
}

impl From<KeyedRefusal<String>> for Admission {
    fn from(refusal: KeyedRefusal<String>) -> Self {
        match refusal {
            KeyedRefusal::KeyInFlight => Self::Refused(Refused::InFlight),
            KeyedRefusal::IdempotencyMismatch { .. } => Self::Refused(Refused::Reused),
            // No bucket is named here: admission of a key alone takes no token.
            KeyedRefusal::RateLimited { .. } => Self::Store(StoreError::Internal(
                "a key's admission took a token".to_owned(),
            )),
        }
    }
}
