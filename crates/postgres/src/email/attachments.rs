//! The bytes of kept attachments: written in pieces in the transaction that stores their
//! message (or, put in an object store ahead of it, their record taken), and
//! `AttachmentContent`, read back one piece at a time; `AttachmentUploads`, the records of bytes
//! in an object store.

use std::time::Duration;

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Interval};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{AgentId, AttachmentId, EmailMessageId, ATTACHMENT_PIECE_BYTES};
use ports::{AttachmentBytes, AttachmentContent, AttachmentUploads, StoreError};
use uuid::Uuid;

use super::PgEmailStore;
use crate::clock::interval;
use crate::errors::{from_diesel, TxError};
use crate::schema::{email_attachment_pieces, email_attachment_uploads};

/// Pieces written by one statement: 64 of 256 KiB is 16 MiB of parameters at most.
const PIECES_PER_STATEMENT: usize = 64;

/// Keeps the bytes of every stored attachment of `message`, of `agent`, on the caller's
/// transaction: writes those at hand in pieces, and takes the record of those put in the object
/// store ahead, which must still be there (not swept).
pub(crate) async fn keep_bytes<E: From<StoreError>>(
    connection: &mut AsyncPgConnection,
    agent: AgentId,
    message: EmailMessageId,
    attachments: &[AttachmentBytes],
) -> Result<(), TxError<E>> {
    let elsewhere = attachments
        .iter()
        .any(|attachment| attachment.meta.stored && attachment.content.is_none());
    if elsewhere {
        let taken = diesel::delete(email_attachment_uploads::table.find(message.0))
            .filter(email_attachment_uploads::swept_at.is_null())
            .execute(connection)
            .await?;
        if taken == 0 {
            return Err(TxError::store(StoreError::Unavailable(format!(
                "the attachment bytes of message {message} were swept before it was stored"
            ))));
        }
    }
    Ok(write_pieces(connection, agent, message, attachments).await?)
}

/// Writes the bytes at hand of every stored attachment of `message`.
async fn write_pieces(
    connection: &mut AsyncPgConnection,
    agent: AgentId,
    message: EmailMessageId,
    attachments: &[AttachmentBytes],
) -> QueryResult<()> {
    let mut rows = Vec::new();
    for attachment in attachments.iter().filter(|a| a.meta.stored) {
        let Some(content) = attachment.content.as_deref() else {
            continue;
        };
        let position = i32::try_from(attachment.meta.id.position()).unwrap_or(i32::MAX);
        for (piece, bytes) in content.chunks(ATTACHMENT_PIECE_BYTES).enumerate() {
            rows.push((
                email_attachment_pieces::message_id.eq(message.0),
                email_attachment_pieces::agent_id.eq(agent.0),
                email_attachment_pieces::attachment.eq(position),
                email_attachment_pieces::piece.eq(i32::try_from(piece).unwrap_or(i32::MAX)),
                email_attachment_pieces::bytes.eq(bytes),
            ));
        }
    }
    for statement in rows.chunks(PIECES_PER_STATEMENT) {
        diesel::insert_into(email_attachment_pieces::table)
            .values(statement)
            .execute(connection)
            .await?;
    }
    Ok(())
}

#[async_trait]
impl AttachmentContent for PgEmailStore {
    async fn piece(
        &self,
        message: EmailMessageId,
        attachment: AttachmentId,
        index: u64,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let (Ok(position), Ok(piece)) =
            (i32::try_from(attachment.position()), i32::try_from(index))
        else {
            return Ok(None);
        };
        let mut connection = self.database.connection().await?;
        email_attachment_pieces::table
            .find((message.0, position, piece))
            .select(email_attachment_pieces::bytes)
            .first::<Vec<u8>>(&mut connection)
            .await
            .optional()
            .map_err(from_diesel)
    }
}

#[async_trait]
impl AttachmentUploads for PgEmailStore {
    async fn record_upload(&self, message: EmailMessageId) -> Result<(), StoreError> {
        let mut connection = self.database.connection().await?;
        diesel::insert_into(email_attachment_uploads::table)
            .values(email_attachment_uploads::message_id.eq(message.0))
            .on_conflict_do_nothing()
            .execute(&mut connection)
            .await
            .map(drop)
            .map_err(from_diesel)
    }

    async fn stale_uploads(
        &self,
        older_than: Duration,
        limit: usize,
    ) -> Result<Vec<EmailMessageId>, StoreError> {
        let mut connection = self.database.connection().await?;
        // Skipped locks: a record a message's transaction is taking right now is not stale.
        diesel::sql_query(
            "UPDATE email_attachment_uploads SET swept_at = now() WHERE message_id IN ( \
                 SELECT message_id FROM email_attachment_uploads \
                 WHERE coalesce(swept_at, recorded_at) < now() - $1 \
                 ORDER BY coalesce(swept_at, recorded_at) LIMIT $2 FOR UPDATE SKIP LOCKED) \
             RETURNING message_id",
        )
        .bind::<Interval, _>(interval(older_than))
        .bind::<BigInt, _>(i64::try_from(limit).unwrap_or(i64::MAX))
        .get_results::<StaleUpload>(&mut connection)
        .await
        .map(|stale| {
            stale
                .into_iter()
                .map(|row| EmailMessageId(row.message_id))
                .collect()
        })
        .map_err(from_diesel)
    }

    async fn forget_uploads(&self, messages: &[EmailMessageId]) -> Result<(), StoreError> {
        let ids: Vec<Uuid> = messages.iter().map(|message| message.0).collect();
        let mut connection = self.database.connection().await?;
        diesel::delete(email_attachment_uploads::table)
            .filter(email_attachment_uploads::message_id.eq_any(ids))
            .execute(&mut connection)
            .await
            .map(drop)
            .map_err(from_diesel)
    }
}

#[derive(QueryableByName)]
struct StaleUpload {
    #[diesel(sql_type = diesel::sql_types::Uuid)]
    message_id: Uuid,
}
