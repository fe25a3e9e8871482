//! The sandbox SMS provider: holds the messages sent to its numbers in its own table, as a real
//! provider would, so the service syncs and reads them the same way.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use domain::PhoneNumber;
use ports::{ProviderError, ProviderSms, SmsFlow, SmsProvider};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::database::Database;
use crate::rows::row_limit;
use crate::schema::sandbox_sms;

pub struct PgSandboxSms {
    database: Database,
}

impl PgSandboxSms {
    pub fn new(database: Database) -> Self {
        Self { database }
    }

    /// A message from `from` arrives at the sandbox provider for `to`; returns it as the
    /// provider would deliver it.
    pub async fn receive(
        &self,
        from: &PhoneNumber,
        to: &PhoneNumber,
        body: &str,
    ) -> Result<ProviderSms, ProviderError> {
        let unavailable = |error: String| ProviderError::Unavailable(error);
        let mut connection = self
            .database
            .connection()
            .await
            .map_err(|error| unavailable(error.to_string()))?;
        let sid = format!("SM{}", Uuid::now_v7().simple());
        let created_at: OffsetDateTime = diesel::insert_into(sandbox_sms::table)
            .values((
                sandbox_sms::sid.eq(&sid),
                sandbox_sms::from_number.eq(from.as_str()),
                sandbox_sms::to_number.eq(to.as_str()),
                sandbox_sms::body.eq(body),
            ))
            .returning(sandbox_sms::created_at)
            .get_result(&mut connection)
            .await
            .map_err(|error| unavailable(error.to_string()))?;
        Ok(ProviderSms {
            provider_message_id: sid,
            flow: SmsFlow::Inbound,
            from: from.as_str().to_owned(),
            to: to.as_str().to_owned(),
            body: body.to_owned(),
            received_at: created_at.format(&Rfc3339).ok(),
        })
    }
}

#[async_trait]
impl SmsProvider for PgSandboxSms {
    fn name(&self) -> &'static str {
        "sandbox"
    }

    async fn recent_messages(
        &self,
        number: &PhoneNumber,
        limit: usize,
    ) -> Result<Vec<ProviderSms>, ProviderError> {
        let unavailable = |error: String| ProviderError::Unavailable(error);
        let mut connection = self
            .database
            .connection()
            .await
            .map_err(|error| unavailable(error.to_string()))?;
        let rows: Vec<(String, String, String, String, OffsetDateTime)> = sandbox_sms::table
            .filter(sandbox_sms::to_number.eq(number.as_str()))
            .order((sandbox_sms::created_at.desc(), sandbox_sms::sid.desc()))
            .limit(row_limit(limit))
            .select((
                sandbox_sms::sid,
                sandbox_sms::from_number,
                sandbox_sms::to_number,
                sandbox_sms::body,
                sandbox_sms::created_at,
            ))
            .load(&mut connection)
            .await
            .map_err(|error| unavailable(error.to_string()))?;
        Ok(rows
            .into_iter()
            .map(|(sid, from, to, body, created_at)| ProviderSms {
                provider_message_id: sid,
                flow: SmsFlow::Inbound,
                from,
                to,
                body,
                received_at: created_at.format(&Rfc3339).ok(),
            })
            .collect())
    }
}
