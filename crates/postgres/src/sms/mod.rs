//! SMS on PostgreSQL: `PgSmsStore` behind `SmsStore`, and the sandbox SMS provider's side.

mod sandbox;

pub use sandbox::PgSandboxSms;

use async_trait::async_trait;
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{Nullable, Timestamptz};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{
    AgentId, Direction, PhoneNumber, PhoneNumberId, PhoneNumberRecord, SmsMessageId,
    SmsMessageRecord, SmsSource,
};
use ports::{NewSms, SmsStore, StoreError};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::database::Database;
use crate::errors::{corrupt, from_diesel, TxError};
use crate::rows::{row_limit, PhoneNumberRow};
use crate::schema::{code_waits, phone_numbers, sms_messages};

/// The channel of SMS answers in `code_waits`.
const SMS_CHANNEL: &str = "sms";

pub struct PgSmsStore {
    database: Database,
}

impl PgSmsStore {
    pub fn new(database: Database) -> Self {
        Self { database }
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = sms_messages, check_for_backend(diesel::pg::Pg))]
struct SmsRow {
    id: Uuid,
    agent_id: Uuid,
    phone_number_id: Uuid,
    direction: String,
    provider: String,
    provider_message_id: String,
    source: String,
    from_number: String,
    to_number: String,
    body: String,
    parsed_code: Option<String>,
    service_name: Option<String>,
    provider_received_at: Option<OffsetDateTime>,
    seen_at: Option<OffsetDateTime>,
    created_at: OffsetDateTime,
}

impl SmsRow {
    fn into_record(self) -> Result<SmsMessageRecord, StoreError> {
        Ok(SmsMessageRecord {
            id: SmsMessageId(self.id),
            agent_id: AgentId(self.agent_id),
            phone_number_id: PhoneNumberId(self.phone_number_id),
            direction: Direction::parse(&self.direction)
                .ok_or_else(|| corrupt(format!("sms direction {:?}", self.direction)))?,
            provider: self.provider,
            provider_message_id: self.provider_message_id,
            source: SmsSource::parse(&self.source)
                .ok_or_else(|| corrupt(format!("sms source {:?}", self.source)))?,
            from: self.from_number,
            to: self.to_number,
            body: self.body,
            parsed_code: self.parsed_code,
            service_name: self.service_name,
            provider_received_at: self.provider_received_at,
            seen_at: self.seen_at,
            created_at: self.created_at,
        })
    }
}

fn records(rows: Vec<SmsRow>) -> Result<Vec<SmsMessageRecord>, StoreError> {
    rows.into_iter().map(SmsRow::into_record).collect()
}

async fn store_locked(
    connection: &mut AsyncPgConnection,
    messages: &[NewSms],
) -> Result<usize, TxError<StoreError>> {
    let mut stored = 0;
    for message in messages {
        let inserted = diesel::insert_into(sms_messages::table)
            .values((
                sms_messages::id.eq(message.id.0),
                sms_messages::agent_id.eq(message.agent_id.0),
                sms_messages::phone_number_id.eq(message.phone_number_id.0),
                sms_messages::direction.eq(message.direction.as_str()),
                sms_messages::provider.eq(&message.provider),
                sms_messages::provider_message_id.eq(&message.provider_message_id),
                sms_messages::source.eq(message.source.as_str()),
                sms_messages::from_number.eq(&message.from),
                sms_messages::to_number.eq(&message.to),
                sms_messages::body.eq(&message.body),
                sms_messages::parsed_code.eq(message.parsed_code.as_deref()),
                sms_messages::service_name.eq(message.service_name.as_deref()),
                sms_messages::provider_received_at.eq(message.provider_received_at),
                // Placed by when the provider got it (a sync may come much later), else now.
                sms_messages::created_at.eq(sql::<Timestamptz>("COALESCE(")
                    .bind::<Nullable<Timestamptz>, _>(message.provider_received_at)
                    .sql(", now())")),
            ))
            .on_conflict((
                sms_messages::phone_number_id,
                sms_messages::provider_message_id,
                sms_messages::agent_id,
            ))
            .do_nothing()
            .execute(connection)
            .await?;
        stored += inserted;
    }
    // Waits for a code of the agent wake on every instance when this commits, by the
    // notification of each inbound message's `sms.received` event.
    Ok(stored)
}

/// Why a message was not marked seen for a wait.
enum NotSeen {
    /// Another wait marked it first, or took the request id for another message.
    Taken,
    Store(StoreError),
}

impl From<StoreError> for NotSeen {
    fn from(error: StoreError) -> Self {
        Self::Store(error)
    }
}

async fn mark_seen_locked(
    connection: &mut AsyncPgConnection,
    id: SmsMessageId,
    agent: AgentId,
    request_id: Option<&str>,
) -> Result<SmsMessageRecord, TxError<NotSeen>> {
    let row = diesel::update(
        sms_messages::table
            .find(id.0)
            .filter(sms_messages::agent_id.eq(agent.0))
            .filter(sms_messages::seen_at.is_null()),
    )
    .set(sms_messages::seen_at.eq(diesel::dsl::now))
    .returning(SmsRow::as_returning())
    .get_result(connection)
    .await
    .optional()?
    .ok_or(TxError::Abort(NotSeen::Taken))?;
    if let Some(request_id) = request_id {
        let bound = diesel::insert_into(code_waits::table)
            .values((
                code_waits::agent_id.eq(agent.0),
                code_waits::request_id.eq(request_id),
                code_waits::channel.eq(SMS_CHANNEL),
                code_waits::message_id.eq(id.0),
            ))
            .on_conflict_do_nothing()
            .execute(connection)
            .await?;
        // The request id already answered with another message: this one stays unseen.
        if bound == 0 {
            return Err(TxError::Abort(NotSeen::Taken));
        }
    }
    row.into_record()
        .map_err(|error| TxError::Abort(error.into()))
}

#[async_trait]
impl SmsStore for PgSmsStore {
    async fn number_owner(
        &self,
        number: &PhoneNumber,
    ) -> Result<Option<(AgentId, PhoneNumberRecord)>, StoreError> {
        let mut connection = self.database.connection().await?;
        let row: Option<(Uuid, PhoneNumberRow)> = phone_numbers::table
            .filter(phone_numbers::number.eq(number.as_str()))
            .select((phone_numbers::agent_id, PhoneNumberRow::as_select()))
            .first(&mut connection)
            .await
            .optional()
            .map_err(from_diesel)?;
        row.map(|(agent, number)| Ok((AgentId(agent), number.into_record()?)))
            .transpose()
    }

    #[tracing::instrument(level = "debug", skip_all, fields(count = messages.len()))]
    async fn store(&self, messages: Vec<NewSms>) -> Result<usize, StoreError> {
        if messages.is_empty() {
            return Ok(0);
        }
        self.database
            .in_transaction(|connection| {
                async move { store_locked(connection, &messages).await }.scope_boxed()
            })
            .await
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn page(
        &self,
        number: PhoneNumberId,
        direction: Option<Direction>,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<SmsMessageRecord>, StoreError> {
        let mut connection = self.database.read_connection().await?;
        let mut query = sms_messages::table
            .filter(sms_messages::phone_number_id.eq(number.0))
            .select(SmsRow::as_select())
            .order((sms_messages::created_at.desc(), sms_messages::id.desc()))
            .limit(row_limit(limit))
            .offset(row_limit(offset))
            .into_boxed();
        if let Some(direction) = direction {
            query = query.filter(sms_messages::direction.eq(direction.as_str()));
        }
        records(query.load(&mut connection).await.map_err(from_diesel)?)
    }

    async fn unseen(
        &self,
        number: PhoneNumberId,
        limit: usize,
    ) -> Result<Vec<SmsMessageRecord>, StoreError> {
        let mut connection = self.database.connection().await?;
        let rows = sms_messages::table
            .filter(sms_messages::phone_number_id.eq(number.0))
            .filter(sms_messages::direction.eq(Direction::Inbound.as_str()))
            .filter(sms_messages::seen_at.is_null())
            .select(SmsRow::as_select())
            .order((sms_messages::created_at.desc(), sms_messages::id.desc()))
            .limit(row_limit(limit))
            .load(&mut connection)
            .await
            .map_err(from_diesel)?;
        records(rows)
    }

    async fn mark_seen(
        &self,
        id: SmsMessageId,
        agent: AgentId,
        request_id: Option<String>,
    ) -> Result<Option<SmsMessageRecord>, StoreError> {
        let marked = self
            .database
            .in_transaction(|connection| {
                async move { mark_seen_locked(connection, id, agent, request_id.as_deref()).await }
                    .scope_boxed()
            })
            .await;
        match marked {
            Ok(record) => Ok(Some(record)),
            Err(NotSeen::Taken) => Ok(None),
            Err(NotSeen::Store(error)) => Err(error),
        }
    }

    async fn wait_result(
        &self,
        agent: AgentId,
        request_id: &str,
    ) -> Result<Option<SmsMessageRecord>, StoreError> {
        let mut connection = self.database.connection().await?;
        let row = sms_messages::table
            .inner_join(code_waits::table.on(code_waits::message_id.eq(sms_messages::id)))
            .filter(code_waits::agent_id.eq(agent.0))
            .filter(code_waits::request_id.eq(request_id))
            .filter(code_waits::channel.eq(SMS_CHANNEL))
            .select(SmsRow::as_select())
            .first(&mut connection)
            .await
            .optional()
            .map_err(from_diesel)?;
        row.map(SmsRow::into_record).transpose()
    }
}
