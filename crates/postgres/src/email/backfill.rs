//! Inbound mail kept before intake read its sender's authentication and service name
//! (migration 000034), filled once when the server migrates. What to fill in is the caller's:
//! reading `Authentication-Results` is the email adapter's, recognising a service text mining's.

use anyhow::Context;
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::Bool;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::{Direction, SenderAuthentication};
use serde_json::Value;
use uuid::Uuid;

use super::{authentication_columns, headers_from_column};
use crate::connector::Connector;
use crate::schema::{email_message_facts, email_messages};

/// Rows filled per transaction: few, since each holds up to a megabyte of text.
const ROWS_PER_BATCH: i64 = 16;

/// What an inbound row's authentication and service name are read from.
pub struct InboundMailText<'a> {
    /// Header names and values in the order they came.
    pub headers: &'a [(String, String)],
    pub from: Option<&'a str>,
    pub subject: Option<&'a str>,
    pub text: Option<&'a str>,
}

type UnfilledRow = (Uuid, Value, Option<String>, Option<String>, Option<String>);

/// Fills every inbound row not yet filled with what `read` says of it, a few rows per
/// transaction; rows another instance is filling meanwhile are left to it. Returns how many it
/// filled.
pub async fn fill_inbound_mail_facts(
    connector: &Connector,
    read: impl Fn(InboundMailText<'_>) -> (SenderAuthentication, Option<String>) + Sync,
) -> anyhow::Result<u64> {
    let mut connection = connector
        .open()
        .await
        .context("connecting to the database to fill older inbound mail")?;
    let mut filled = 0_u64;
    loop {
        let batch = fill_batch(&mut connection, &read)
            .await
            .context("filling the sender authentication of older inbound mail")?;
        if batch == 0 {
            return Ok(filled);
        }
        filled += batch;
        tracing::info!(
            filled,
            "filled the sender authentication of older inbound mail"
        );
    }
}

async fn fill_batch(
    connection: &mut AsyncPgConnection,
    read: &(impl Fn(InboundMailText<'_>) -> (SenderAuthentication, Option<String>) + Sync),
) -> anyhow::Result<u64> {
    connection
        .transaction::<u64, anyhow::Error, _>(|connection| {
            async move {
                let rows: Vec<UnfilledRow> = email_messages::table
                    .filter(email_messages::direction.eq(Direction::Inbound.as_str()))
                    // Past `email_messages`' 32 declared columns, as `MessageRow` reads it.
                    .filter(sql::<Bool>("email_messages.sender_authentication IS NULL"))
                    .order(email_messages::id)
                    .limit(ROWS_PER_BATCH)
                    .select((
                        email_messages::id,
                        email_messages::headers,
                        email_messages::from_address,
                        email_messages::subject,
                        email_messages::body_text,
                    ))
                    .for_update()
                    .skip_locked()
                    .load(connection)
                    .await?;
                let count = rows.len() as u64;
                for (id, headers, from, subject, text) in rows {
                    let headers = headers_from_column(&headers)?;
                    let (authentication, service_name) = read(InboundMailText {
                        headers: &headers,
                        from: from.as_deref(),
                        subject: subject.as_deref(),
                        text: text.as_deref(),
                    });
                    let (kind, domain) = authentication_columns(&authentication);
                    diesel::update(email_message_facts::table.find(id))
                        .set((
                            email_message_facts::sender_authentication.eq(kind),
                            email_message_facts::authenticated_domain.eq(domain),
                            email_message_facts::service_name.eq(service_name),
                        ))
                        .execute(connection)
                        .await?;
                }
                Ok(count)
            }
            .scope_boxed()
        })
        .await
}
