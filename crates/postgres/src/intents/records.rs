//! `IntentRecords`: the agent's keyset pages, the operator's listing, one intent, its
//! transactions and its approvals.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{
    approval_counts, AgentId, CursorPosition, IntentId, IntentStatus, Operator, OperatorAccount,
    OperatorId, OperatorRole, TransferIntentRecord,
};
use ports::{
    AttemptRecord, IntentApproval, IntentFilter, IntentRecords, Listing, ListingVersion, StoreError,
};
use time::OffsetDateTime;
use uuid::Uuid;

use super::submission::AttemptRow;
use super::x402::{attach_payments, with_payment};
use super::PgIntentStore;
use crate::errors::{corrupt, from_diesel, TxError};
use crate::keyset::{before, limited_to};
use crate::listings::listing_version;
use crate::rows::{address_column, TransferIntentRow};
use crate::schema::{transfer_attempts, transfer_intents, wallets};

/// An approval of an intent, with the account its principal names when the registry holds one.
#[derive(QueryableByName)]
struct ApprovalRow {
    #[diesel(sql_type = Text)]
    operator: String,
    #[diesel(sql_type = Timestamptz)]
    approved_at: OffsetDateTime,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    account_id: Option<Uuid>,
    #[diesel(sql_type = Nullable<Text>)]
    account_role: Option<String>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    account_created_at: Option<OffsetDateTime>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    account_disabled_at: Option<OffsetDateTime>,
}

impl ApprovalRow {
    fn into_approval(self) -> Result<IntentApproval, StoreError> {
        let approver = Operator::parse_stored(&self.operator).map_err(corrupt)?;
        let registered = match (&approver, self.account_id, self.account_role) {
            (Operator::Named(name), Some(id), Some(role)) => Some(OperatorAccount {
                id: OperatorId(id),
                name: name.clone(),
                role: OperatorRole::parse(&role).map_err(corrupt)?,
                created_at: self.account_created_at.unwrap_or(self.approved_at),
                disabled_at: self.account_disabled_at,
            }),
            _ => None,
        };
        Ok(IntentApproval {
            counts: approval_counts(&approver, registered.as_ref()),
            approver,
            approved_at: self.approved_at,
        })
    }
}

/// The intent's approvals, oldest first, each with the account its principal names as the
/// registry holds it now: whether it counts is the domain's (`approval_counts`).
pub(super) async fn approvals_of<E: From<StoreError>>(
    connection: &mut AsyncPgConnection,
    id: IntentId,
) -> Result<Vec<IntentApproval>, TxError<E>> {
    let rows: Vec<ApprovalRow> = diesel::sql_query(
        "SELECT a.operator, a.approved_at, o.id AS account_id, o.role AS account_role, \
                o.created_at AS account_created_at, o.disabled_at AS account_disabled_at \
         FROM intent_approvals a \
         LEFT JOIN operators o ON a.operator = 'operator:' || o.name \
         WHERE a.intent_id = $1 \
         ORDER BY a.approved_at, a.operator",
    )
    .bind::<SqlUuid, _>(id.0)
    .load(connection)
    .await?;
    rows.into_iter()
        .map(|row| row.into_approval().map_err(TxError::store))
        .collect()
}

fn records(rows: Vec<TransferIntentRow>) -> Result<Vec<TransferIntentRecord>, StoreError> {
    rows.into_iter()
        .map(TransferIntentRow::into_record)
        .collect()
}

#[async_trait]
impl IntentRecords for PgIntentStore {
    #[tracing::instrument(level = "debug", skip(self))]
    async fn page(
        &self,
        agent: AgentId,
        after: Option<CursorPosition>,
        limit: usize,
    ) -> Result<Vec<TransferIntentRecord>, StoreError> {
        let mut connection = self.database.read_connection().await?;
        let newest_first = (
            transfer_intents::created_at.desc(),
            transfer_intents::id.desc(),
        );
        let rows = match after {
            None => {
                let page = transfer_intents::table
                    .filter(transfer_intents::agent_id.eq(agent.0))
                    .select(TransferIntentRow::as_select())
                    .order(newest_first);
                limited_to(page, limit).load(&mut connection).await
            }
            Some(position) => {
                let after = before(
                    transfer_intents::created_at,
                    transfer_intents::id,
                    &position,
                )?;
                let page = transfer_intents::table
                    .filter(transfer_intents::agent_id.eq(agent.0))
                    .filter(after)
                    .select(TransferIntentRow::as_select())
                    .order(newest_first);
                limited_to(page, limit).load(&mut connection).await
            }
        }
        .map_err(from_diesel)?;
        let mut intents = records(rows)?;
        attach_payments(&mut connection, &mut intents).await?;
        Ok(intents)
    }

    async fn listing_version(&self, agent: AgentId) -> Result<ListingVersion, StoreError> {
        listing_version(&self.database, Listing::Intents(agent)).await
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn find(&self, id: IntentId) -> Result<Option<TransferIntentRecord>, StoreError> {
        let mut connection = self.database.read_connection().await?;
        let row = transfer_intents::table
            .find(id.0)
            .select(TransferIntentRow::as_select())
            .first(&mut connection)
            .await
            .optional()
            .map_err(from_diesel)?;
        match row {
            Some(row) => Ok(Some(
                with_payment(&mut connection, row.into_record()?).await?,
            )),
            None => Ok(None),
        }
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn list(&self, filter: IntentFilter) -> Result<Vec<TransferIntentRecord>, StoreError> {
        let mut connection = self.database.connection().await?;
        // An operator's ad-hoc listing: boxing (and re-planning) is fine off the request path.
        let mut query = transfer_intents::table
            .select(TransferIntentRow::as_select())
            .into_boxed();
        let by_execution = filter.executed_from.is_some() || filter.executed_before.is_some();
        // The bounds on `executed_at` below leave out every intent not executed.
        query = if by_execution && filter.oldest_first {
            query.order((transfer_intents::executed_at, transfer_intents::id))
        } else if by_execution {
            query.order((
                transfer_intents::executed_at.desc(),
                transfer_intents::id.desc(),
            ))
        } else if filter.oldest_first {
            query.order((transfer_intents::created_at, transfer_intents::id))
        } else {
            query.order((
                transfer_intents::created_at.desc(),
                transfer_intents::id.desc(),
            ))
        };
        if let Some(limit) = filter.limit {
            query = query.limit(i64::try_from(limit).unwrap_or(i64::MAX));
        }
        if let Some(agent) = filter.agent {
            query = query.filter(transfer_intents::agent_id.eq(agent.0));
        }
        if let Some(status) = filter.status {
            query = query.filter(transfer_intents::status.eq(status.as_str()));
        }
        if filter.decided {
            query = query
                .filter(transfer_intents::status.ne(IntentStatus::PendingConfirmation.as_str()));
        }
        if let Some(from) = filter.executed_from {
            query = query.filter(transfer_intents::executed_at.ge(from));
        }
        if let Some(before) = filter.executed_before {
            query = query.filter(transfer_intents::executed_at.lt(before));
        }
        if let Some(recipient) = filter.recipient {
            query =
                query.filter(transfer_intents::recipient_address.eq(address_column(&recipient)));
        }
        let mut intents = records(query.load(&mut connection).await.map_err(from_diesel)?)?;
        attach_payments(&mut connection, &mut intents).await?;
        Ok(intents)
    }

    async fn approvals(&self, id: IntentId) -> Result<Vec<IntentApproval>, StoreError> {
        let mut connection = self.database.read_connection().await?;
        approvals_of(&mut connection, id)
            .await
            .map_err(TxError::<StoreError>::into_error)
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn attempts(&self, id: IntentId) -> Result<Vec<AttemptRecord>, StoreError> {
        let mut connection = self.database.read_connection().await?;
        let rows: Vec<(AttemptRow, TransferIntentRow, String)> = transfer_attempts::table
            .inner_join(transfer_intents::table.inner_join(wallets::table))
            .filter(transfer_attempts::intent_id.eq(id.0))
            .select((
                AttemptRow::as_select(),
                TransferIntentRow::as_select(),
                wallets::address,
            ))
            .order(transfer_attempts::created_at.desc())
            .load(&mut connection)
            .await
            .map_err(from_diesel)?;
        rows.into_iter()
            .map(|(attempt, intent, from)| attempt.into_record(&intent.into_record()?, &from))
            .collect()
    }
}
