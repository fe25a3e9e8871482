//! The event log (migration 000017, decision 0058): triggers write it in the transaction of each
//! change; this reads it by `seq` and prunes what retention no longer keeps.

use std::time::Duration;

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::Interval;
use diesel_async::RunQueryDsl;
use domain::{
    AgentId, EmailMessageId, EventId, EventPayload, EventRecord, EventType, EventTypes, LogBounds,
    SmsMessageId,
};
use ports::{EventLog, StoreError};
use serde::Deserialize;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::clock::interval;
use domain::keys::KeyId;

use crate::database::Database;
use crate::errors::{corrupt, from_diesel};
use crate::rows::intent_from_stored;
use crate::schema::{agent_event_counters, events};

pub struct PgEventLog {
    database: Database,
}

impl PgEventLog {
    pub fn new(database: Database) -> Self {
        Self { database }
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = events, check_for_backend(diesel::pg::Pg))]
pub(crate) struct EventRow {
    pub(crate) seq: i64,
    pub(crate) id: Uuid,
    pub(crate) event_type: String,
    pub(crate) data: serde_json::Value,
    pub(crate) created_at: OffsetDateTime,
    pub(crate) key_id: Option<Uuid>,
}

#[derive(Deserialize)]
struct StoredEmailReceived {
    message_id: Uuid,
    thread_id: Uuid,
    from: Option<String>,
    subject: Option<String>,
    verification_codes: Vec<String>,
    attachment_count: u32,
}

#[derive(Deserialize)]
struct StoredEmailSent {
    message_id: Uuid,
    provider_message_id: Option<String>,
}

#[derive(Deserialize)]
struct StoredEmailFailed {
    message_id: Uuid,
    reason: Option<String>,
}

#[derive(Deserialize)]
struct StoredSmsReceived {
    message_id: Uuid,
    from_number: String,
    to_number: String,
    code: Option<String>,
}

fn stored<T: serde::de::DeserializeOwned>(
    event_type: EventType,
    data: serde_json::Value,
) -> Result<T, StoreError> {
    serde_json::from_value(data).map_err(|error| corrupt(format!("a {event_type} event: {error}")))
}

impl EventRow {
    pub(crate) fn into_record(self) -> Result<EventRecord, StoreError> {
        let event_type = EventType::parse(&self.event_type)
            .ok_or_else(|| corrupt(format!("event type {:?}", self.event_type)))?;
        let payload = match event_type {
            EventType::EmailReceived => {
                let data: StoredEmailReceived = stored(event_type, self.data)?;
                EventPayload::EmailReceived {
                    message_id: EmailMessageId(data.message_id),
                    thread_id: data.thread_id,
                    from: data.from,
                    subject: data.subject,
                    verification_codes: data.verification_codes,
                    attachment_count: data.attachment_count,
                }
            }
            EventType::EmailSent => {
                let data: StoredEmailSent = stored(event_type, self.data)?;
                EventPayload::EmailSent {
                    message_id: EmailMessageId(data.message_id),
                    provider_message_id: data.provider_message_id,
                }
            }
            EventType::EmailFailed => {
                let data: StoredEmailFailed = stored(event_type, self.data)?;
                EventPayload::EmailFailed {
                    message_id: EmailMessageId(data.message_id),
                    reason: data.reason,
                }
            }
            EventType::SmsReceived => {
                let data: StoredSmsReceived = stored(event_type, self.data)?;
                EventPayload::SmsReceived {
                    message_id: SmsMessageId(data.message_id),
                    from_number: data.from_number,
                    to_number: data.to_number,
                    code: data.code,
                }
            }
            _ => EventPayload::TransferIntent(Box::new(intent_from_stored(self.data)?)),
        };
        Ok(EventRecord {
            id: EventId(self.id),
            seq: u64::try_from(self.seq).map_err(|_| corrupt("a negative seq"))?,
            event_type,
            timestamp: self.created_at,
            payload,
            key_id: self.key_id.map(KeyId),
        })
    }
}

/// The names of `types` as the log stores them.
pub(crate) fn type_names(types: EventTypes) -> Vec<&'static str> {
    types.iter().map(EventType::as_str).collect()
}

fn seq_column(seq: u64) -> i64 {
    i64::try_from(seq).unwrap_or(i64::MAX)
}

#[async_trait]
impl EventLog for PgEventLog {
    #[tracing::instrument(level = "debug", skip(self))]
    async fn bounds(&self, agent: AgentId) -> Result<LogBounds, StoreError> {
        let mut connection = self.database.read_connection().await?;
        let pruned = agent_event_counters::table
            .find(agent.0)
            .select(agent_event_counters::pruned_through)
            .first::<i64>(&mut connection)
            .await
            .optional()
            .map_err(from_diesel)?;
        Ok(LogBounds {
            pruned_through: pruned.and_then(|seq| u64::try_from(seq).ok()).unwrap_or(0),
        })
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn page(
        &self,
        agent: AgentId,
        after: u64,
        types: EventTypes,
        limit: usize,
    ) -> Result<Vec<EventRecord>, StoreError> {
        let mut connection = self.database.read_connection().await?;
        let after_seq = events::table
            .filter(events::agent_id.eq(agent.0))
            .filter(events::seq.gt(seq_column(after)))
            .order(events::seq)
            .limit(i64::try_from(limit).unwrap_or(i64::MAX))
            .select(EventRow::as_select());
        // Every type is what streams read on each event: that statement's text never changes,
        // so it stays prepared; a filter on types has as many texts as lists.
        let rows = match types.is_all() {
            true => after_seq.load::<EventRow>(&mut connection).await,
            false => {
                after_seq
                    .filter(events::event_type.eq_any(type_names(types)))
                    .load::<EventRow>(&mut connection)
                    .await
            }
        }
        .map_err(from_diesel)?;
        rows.into_iter().map(EventRow::into_record).collect()
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn prune(&self, kept_for: Duration, batch: usize) -> Result<usize, StoreError> {
        let mut connection = self.database.connection().await?;
        // The oldest events first, and each agent's counter told how far its log was cut, in
        // one statement: a reader sees both or neither.
        let pruned = diesel::sql_query(
            "WITH gone AS ( \
                 DELETE FROM events WHERE (agent_id, seq) IN ( \
                     SELECT agent_id, seq FROM events WHERE created_at < now() - $1 \
                     ORDER BY created_at LIMIT $2) \
                 RETURNING agent_id, seq), \
             cut AS ( \
                 UPDATE agent_event_counters AS counter SET pruned_through = gone.last \
                 FROM (SELECT agent_id, max(seq) AS last FROM gone GROUP BY agent_id) AS gone \
                 WHERE counter.agent_id = gone.agent_id AND counter.pruned_through < gone.last) \
             SELECT count(*) AS pruned FROM gone",
        )
        .bind::<Interval, _>(interval(kept_for))
        .bind::<diesel::sql_types::BigInt, _>(i64::try_from(batch).unwrap_or(i64::MAX))
        .get_result::<Pruned>(&mut connection)
        .await
        .map_err(from_diesel)?;
        Ok(usize::try_from(pruned.pruned).unwrap_or_default())
    }
}

#[derive(QueryableByName)]
struct Pruned {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pruned: i64,
}
