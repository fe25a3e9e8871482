//! `Mailbox`: keyset pages of an inbox (never OFFSET, so page 10,000 costs what page 1 does) and
//! single messages, both scoped to the inbox so no agent reads another's mail.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{Integer, Nullable, Text};
use diesel_async::RunQueryDsl;
use domain::{
    AttachmentMeta, CursorPosition, Direction, EmailInboxId, EmailMessageId, EmailMessageRecord,
};
use ports::{Listing, ListingVersion, Mailbox, StoreError};

use super::{attachments_from_column, message_record, MessageRow, MessageWithBodies, PgEmailStore};
use crate::errors::from_diesel;
use crate::keyset::{before, limited_to};
use crate::listings::listing_version;
use crate::schema::{email_domains, email_messages};

// The first characters of a body, for previews; a function of diesel's, so the page's statement
// is prepared once and reused.
diesel::define_sql_function!(fn left(text: Nullable<Text>, characters: Integer) -> Nullable<Text>);

#[async_trait]
impl Mailbox for PgEmailStore {
    async fn domain_verified(&self, domain: &str) -> Result<bool, StoreError> {
        let mut connection = self.database.connection().await?;
        let verified = email_domains::table
            .find(domain.to_ascii_lowercase())
            .select(email_domains::verified_at.is_not_null())
            .first::<bool>(&mut connection)
            .await
            .optional()
            .map_err(from_diesel)?;
        Ok(verified.unwrap_or(false))
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn page(
        &self,
        inbox: EmailInboxId,
        direction: Option<Direction>,
        after: Option<CursorPosition>,
        limit: usize,
        preview_chars: usize,
    ) -> Result<Vec<EmailMessageRecord>, StoreError> {
        let mut connection = self.database.connection().await?;
        let preview = i32::try_from(preview_chars).unwrap_or(i32::MAX);
        let mut query = email_messages::table
            .filter(email_messages::inbox_id.eq(inbox.0))
            .select((
                MessageRow::as_select(),
                left(email_messages::body_text, preview),
                left(email_messages::body_html, preview),
            ))
            .order((email_messages::created_at.desc(), email_messages::id.desc()))
            .into_boxed();
        if let Some(direction) = direction {
            query = query.filter(email_messages::direction.eq(direction.as_str()));
        }
        if let Some(position) = after {
            query = query.filter(before(
                email_messages::created_at,
                email_messages::id,
                &position,
            )?);
        }
        let rows: Vec<MessageWithBodies> = limited_to(query, limit)
            .load(&mut connection)
            .await
            .map_err(from_diesel)?;
        rows.into_iter().map(message_record).collect()
    }

    async fn listing_version(&self, inbox: EmailInboxId) -> Result<ListingVersion, StoreError> {
        listing_version(&self.database, Listing::Inbox(inbox)).await
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn message(
        &self,
        inbox: EmailInboxId,
        id: EmailMessageId,
    ) -> Result<Option<EmailMessageRecord>, StoreError> {
        let mut connection = self.database.connection().await?;
        let row = email_messages::table
            .find(id.0)
            .filter(email_messages::inbox_id.eq(inbox.0))
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

    async fn attachments(
        &self,
        inbox: EmailInboxId,
        id: EmailMessageId,
    ) -> Result<Option<Vec<AttachmentMeta>>, StoreError> {
        let mut connection = self.database.connection().await?;
        let column = email_messages::table
            .find(id.0)
            .filter(email_messages::inbox_id.eq(inbox.0))
            .select(email_messages::attachments)
            .first::<serde_json::Value>(&mut connection)
            .await
            .optional()
            .map_err(from_diesel)?;
        column.as_ref().map(attachments_from_column).transpose()
    }
}
