//! The bytes of kept attachments: written in pieces in the transaction that stores their
//! message, and `AttachmentContent`, read back one piece at a time.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{AttachmentId, EmailMessageId, ATTACHMENT_PIECE_BYTES};
use ports::{AttachmentContent, InboundAttachment, StoreError};

use super::PgEmailStore;
use crate::errors::from_diesel;
use crate::schema::email_attachment_pieces;

/// Pieces written by one statement: 64 of 256 KiB is 16 MiB of parameters at most.
const PIECES_PER_STATEMENT: usize = 64;

/// Writes the bytes of every stored attachment of `message` on the caller's transaction.
pub(crate) async fn write_pieces(
    connection: &mut AsyncPgConnection,
    message: EmailMessageId,
    attachments: &[InboundAttachment],
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
