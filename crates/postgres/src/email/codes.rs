//! `EmailCodes`: inbound mail with verification codes, taken by one wait each, with the request id
//! of the wait bound to it in the same transaction.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{AgentId, Direction, EmailInboxId, EmailMessageId, EmailMessageRecord};
use ports::{EmailCodes, StoreError};

use super::{message_record, MessageRow, MessageWithBodies, PgEmailStore};
use crate::errors::{from_diesel, TxError};
use crate::rows::row_limit;
use crate::schema::{code_waits, email_messages};

/// The channel of mail answers in `code_waits`.
const EMAIL_CHANNEL: &str = "email";

/// Why a mail's codes were not taken for a wait.
enum NotTaken {
    /// Another wait took them first, or the request id answered with another message.
    Taken,
    Store(StoreError),
}

impl From<StoreError> for NotTaken {
    fn from(error: StoreError) -> Self {
        Self::Store(error)
    }
}

async fn take_locked(
    connection: &mut AsyncPgConnection,
    id: EmailMessageId,
    agent: AgentId,
    request_id: Option<&str>,
) -> Result<EmailMessageRecord, TxError<NotTaken>> {
    let row = diesel::update(
        email_messages::table
            .find(id.0)
            .filter(email_messages::agent_id.eq(agent.0))
            .filter(email_messages::code_seen_at.is_null()),
    )
    .set(email_messages::code_seen_at.eq(diesel::dsl::now))
    .returning((
        MessageRow::as_returning(),
        email_messages::body_text,
        email_messages::body_html,
    ))
    .get_result::<MessageWithBodies>(connection)
    .await
    .optional()?
    .ok_or(TxError::Abort(NotTaken::Taken))?;
    if let Some(request_id) = request_id {
        let bound = diesel::insert_into(code_waits::table)
            .values((
                code_waits::agent_id.eq(agent.0),
                code_waits::request_id.eq(request_id),
                code_waits::channel.eq(EMAIL_CHANNEL),
                code_waits::message_id.eq(id.0),
            ))
            .on_conflict_do_nothing()
            .execute(connection)
            .await?;
        if bound == 0 {
            return Err(TxError::Abort(NotTaken::Taken));
        }
    }
    message_record(row).map_err(|error| TxError::Abort(error.into()))
}

#[async_trait]
impl EmailCodes for PgEmailStore {
    async fn unseen_codes(
        &self,
        inbox: EmailInboxId,
        limit: usize,
    ) -> Result<Vec<EmailMessageRecord>, StoreError> {
        let mut connection = self.database.connection().await?;
        let no_codes: Vec<String> = Vec::new();
        let rows: Vec<MessageWithBodies> = email_messages::table
            .filter(email_messages::inbox_id.eq(inbox.0))
            .filter(email_messages::direction.eq(Direction::Inbound.as_str()))
            .filter(email_messages::code_seen_at.is_null())
            .filter(email_messages::verification_codes.ne(no_codes))
            .select((
                MessageRow::as_select(),
                email_messages::body_text,
                email_messages::body_html,
            ))
            .order((email_messages::created_at.desc(), email_messages::id.desc()))
            .limit(row_limit(limit))
            .load(&mut connection)
            .await
            .map_err(from_diesel)?;
        rows.into_iter().map(message_record).collect()
    }

    async fn take_codes(
        &self,
        id: EmailMessageId,
        agent: AgentId,
        request_id: Option<String>,
    ) -> Result<Option<EmailMessageRecord>, StoreError> {
        let taken = self
            .database
            .in_transaction(|connection| {
                async move { take_locked(connection, id, agent, request_id.as_deref()).await }
                    .scope_boxed()
            })
            .await;
        match taken {
            Ok(record) => Ok(Some(record)),
            Err(NotTaken::Taken) => Ok(None),
            Err(NotTaken::Store(error)) => Err(error),
        }
    }

    async fn code_wait_result(
        &self,
        agent: AgentId,
        request_id: &str,
    ) -> Result<Option<EmailMessageRecord>, StoreError> {
        let mut connection = self.database.connection().await?;
        let row = email_messages::table
            .inner_join(code_waits::table.on(code_waits::message_id.eq(email_messages::id)))
            .filter(code_waits::agent_id.eq(agent.0))
            .filter(code_waits::request_id.eq(request_id))
            .filter(code_waits::channel.eq(EMAIL_CHANNEL))
            .select((
                MessageRow::as_select(),
                email_messages::body_text,
                email_messages::body_html,
            ))
            .first::<MessageWithBodies>(&mut connection)
            .await
            .optional()
            .map_err(from_diesel)?;
        row.map(message_record).transpose()
    }
}
