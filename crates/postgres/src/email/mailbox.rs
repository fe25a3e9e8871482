//! `Mailbox`: keyset pages of an inbox (never OFFSET, so page 10,000 costs what page 1 does) and
//! single messages, both scoped to the inbox so no agent reads another's mail.

use async_trait::async_trait;
use diesel::dsl::sql;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Float, Integer, Nullable, Text};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{RunQueryDsl, SimpleAsyncConnection};
use domain::email::THREAD_PREVIEW_CHARS;
use domain::{
    AttachmentMeta, CursorPosition, Direction, EmailInboxId, EmailMessageId, EmailMessageRecord,
    SearchQuery, SenderPattern, ThreadRead, ThreadSummary, MAX_RANKED_MATCHES,
};
use ports::{Listing, ListingVersion, Mailbox, StoreError};
use time::OffsetDateTime;
use uuid::Uuid;

use super::{attachments_from_column, message_record, MessageRow, MessageWithBodies, PgEmailStore};
use crate::errors::from_diesel;
use crate::keyset::{before, limited_to};
use crate::listings::listing_version;
use crate::schema::{email_domains, email_messages, email_threads};

/// The words of a search as a text query, written as the search column's words are (migration
/// 000026); the words are bound after it, then two parentheses close it.
const TSQUERY_OF_WORDS: &str = "plainto_tsquery('pg_catalog.simple', public.email_search_words(";

/// Whether any address of the text array `addresses` (SQL) matches `pattern`: the address, or
/// any address at the domain, without regard to case.
fn address_matches(
    addresses: &str,
    pattern: &SenderPattern,
) -> Box<dyn BoxableExpression<email_messages::table, Pg, SqlType = Bool>> {
    let (compared, value) = match pattern {
        SenderPattern::Address(address) => ("lower(listed.address) = ", address.clone()),
        SenderPattern::Domain(domain) => (
            "split_part(lower(listed.address), '@', 2) = ",
            domain.clone(),
        ),
    };
    Box::new(
        sql::<Bool>("EXISTS (SELECT 1 FROM unnest(")
            .sql(addresses)
            .sql(") AS listed(address) WHERE ")
            .sql(compared)
            .bind::<Text, _>(value)
            .sql(")"),
    )
}

/// The messages of `inbox` that `query` matches, in `direction` when one is given.
fn matching<'a>(
    inbox: EmailInboxId,
    query: &SearchQuery,
    direction: Option<Direction>,
) -> email_messages::BoxedQuery<'a, Pg> {
    let mut matching = email_messages::table
        .filter(email_messages::inbox_id.eq(inbox.0))
        .into_boxed();
    if let Some(direction) = direction {
        matching = matching.filter(email_messages::direction.eq(direction.as_str()));
    }
    if !query.words.is_empty() {
        matching = matching.filter(
            sql::<Bool>("search_vector @@ ")
                .sql(TSQUERY_OF_WORDS)
                .bind::<Text, _>(query.words.join(" "))
                .sql("))"),
        );
    }
    if let Some(from) = &query.from {
        matching = matching.filter(address_matches("ARRAY[from_address]", from));
    }
    if let Some(to) = &query.to {
        matching = matching.filter(address_matches("to_addresses || cc_addresses", to));
    }
    if query.has_attachment {
        matching = matching.filter(sql::<Bool>("jsonb_array_length(attachments) > 0"));
    }
    if let Some(after) = query.after {
        matching = matching.filter(email_messages::created_at.ge(after.midnight().assume_utc()));
    }
    if let Some(before) = query.before {
        matching = matching.filter(email_messages::created_at.lt(before.midnight().assume_utc()));
    }
    matching
}

/// A thread's row and its newest message's preview, as a page reads them.
type ThreadRow = (
    Uuid,
    Option<String>,
    Vec<String>,
    i64,
    OffsetDateTime,
    Uuid,
    Option<String>,
);

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
        let mut connection = self.database.read_connection().await?;
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
        let mut connection = self.database.read_connection().await?;
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

    #[tracing::instrument(level = "debug", skip(self, query))]
    async fn search(
        &self,
        inbox: EmailInboxId,
        query: &SearchQuery,
        direction: Option<Direction>,
        offset: usize,
        limit: usize,
        preview_chars: usize,
    ) -> Result<Vec<EmailMessageRecord>, StoreError> {
        let preview = i32::try_from(preview_chars).unwrap_or(i32::MAX);
        let timeout_ms = self.search_timeout.as_millis();
        let query = query.clone();
        let rows: Vec<MessageWithBodies> = self
            .database
            .in_transaction::<_, StoreError, _>(|connection| {
                async move {
                    // A search reads one inbox: never the whole table, whatever the planner
                    // guesses from other inboxes' statistics.
                    connection
                        .batch_execute(&format!(
                            "SET LOCAL statement_timeout = {timeout_ms}; \
                             SET LOCAL enable_seqscan = off"
                        ))
                        .await?;
                    let words = query.words.join(" ");
                    // Ranking weighs each match's words: only a bounded set of matches is.
                    let ranked = !words.is_empty()
                        && matching(inbox, &query, direction)
                            .select(email_messages::id)
                            .limit(MAX_RANKED_MATCHES as i64 + 1)
                            .load::<Uuid>(connection)
                            .await?
                            .len()
                            <= MAX_RANKED_MATCHES;
                    let mut page = matching(inbox, &query, direction).select((
                        MessageRow::as_select(),
                        left(email_messages::body_text, preview),
                        left(email_messages::body_html, preview),
                    ));
                    if ranked {
                        page = page.order(
                            sql::<Float>("ts_rank(search_vector, ")
                                .sql(TSQUERY_OF_WORDS)
                                .bind::<Text, _>(words)
                                .sql(")))")
                                .desc(),
                        );
                    }
                    let page = page
                        .then_order_by(email_messages::created_at.desc())
                        .then_order_by(email_messages::id.desc())
                        .offset(i64::try_from(offset).unwrap_or(i64::MAX));
                    Ok(limited_to(page, limit).load(connection).await?)
                }
                .scope_boxed()
            })
            .await?;
        rows.into_iter().map(message_record).collect()
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn threads(
        &self,
        inbox: EmailInboxId,
        after: Option<CursorPosition>,
        limit: usize,
    ) -> Result<Vec<ThreadSummary>, StoreError> {
        let mut connection = self.database.read_connection().await?;
        let preview = i32::try_from(THREAD_PREVIEW_CHARS).unwrap_or(i32::MAX);
        let mut query = email_threads::table
            .left_join(
                email_messages::table.on(email_messages::id.eq(email_threads::last_message_id)),
            )
            .filter(email_threads::inbox_id.eq(inbox.0))
            .select((
                email_threads::thread_id,
                email_threads::subject,
                email_threads::participants,
                email_threads::message_count,
                email_threads::last_message_at,
                email_threads::last_message_id,
                left(email_messages::body_text.nullable(), preview),
            ))
            .order((
                email_threads::last_message_at.desc(),
                email_threads::thread_id.desc(),
            ))
            .into_boxed();
        if let Some(position) = after {
            query = query.filter(before(
                email_threads::last_message_at,
                email_threads::thread_id,
                &position,
            )?);
        }
        let rows: Vec<ThreadRow> = limited_to(query, limit)
            .load(&mut connection)
            .await
            .map_err(from_diesel)?;
        Ok(rows
            .into_iter()
            .map(
                |(thread_id, subject, participants, count, last_at, last_id, preview)| {
                    ThreadSummary {
                        thread_id: EmailMessageId(thread_id),
                        subject,
                        participants,
                        message_count: u64::try_from(count).unwrap_or(0),
                        last_message_at: last_at,
                        last_message_id: EmailMessageId(last_id),
                        last_message_preview: preview,
                    }
                },
            )
            .collect())
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn thread(
        &self,
        inbox: EmailInboxId,
        thread: EmailMessageId,
        limit: usize,
    ) -> Result<Option<ThreadRead>, StoreError> {
        let mut connection = self.database.read_connection().await?;
        let described: Option<(Option<String>, Vec<String>, i64)> = email_threads::table
            .find((inbox.0, thread.0))
            .select((
                email_threads::subject,
                email_threads::participants,
                email_threads::message_count,
            ))
            .first(&mut connection)
            .await
            .optional()
            .map_err(from_diesel)?;
        let Some((subject, participants, count)) = described else {
            return Ok(None);
        };
        let query = email_messages::table
            .filter(email_messages::inbox_id.eq(inbox.0))
            .filter(email_messages::thread_id.eq(thread.0))
            .select((
                MessageRow::as_select(),
                email_messages::body_text,
                email_messages::body_html,
            ))
            .order((email_messages::created_at.desc(), email_messages::id.desc()));
        let mut rows: Vec<MessageWithBodies> = limited_to(query, limit)
            .load(&mut connection)
            .await
            .map_err(from_diesel)?;
        rows.reverse();
        let messages = rows
            .into_iter()
            .map(message_record)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Some(ThreadRead {
            thread_id: thread,
            subject,
            participants,
            message_count: u64::try_from(count).unwrap_or(0),
            messages,
        }))
    }

    async fn attachments(
        &self,
        inbox: EmailInboxId,
        id: EmailMessageId,
    ) -> Result<Option<Vec<AttachmentMeta>>, StoreError> {
        let mut connection = self.database.read_connection().await?;
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
