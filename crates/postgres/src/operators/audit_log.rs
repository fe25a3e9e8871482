//! `AuditLog`: the operators' audit log as it is read, a page at a time (written by each action's
//! own store, `crate::audit`).

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use domain::AuditRecord;
use ports::{AuditLog, AuditPage, StoreError};
use uuid::Uuid;

use super::PgOperatorStore;
use crate::audit::AuditRow;
use crate::errors::from_diesel;
use crate::schema::operator_audit;

#[async_trait]
impl AuditLog for PgOperatorStore {
    async fn audit(&self, page: AuditPage) -> Result<Vec<(Uuid, AuditRecord)>, StoreError> {
        let mut connection = self.database.connection().await?;
        // A page an operator asks for: boxing (and re-planning) is fine off the request path.
        let mut query = operator_audit::table
            .select(AuditRow::as_select())
            .order((operator_audit::at.desc(), operator_audit::id.desc()))
            .limit(i64::try_from(page.limit).unwrap_or(i64::MAX))
            .into_boxed();
        if let Some((at, id)) = page.before {
            query = query.filter(
                operator_audit::at
                    .lt(at)
                    .or(operator_audit::at.eq(at).and(operator_audit::id.lt(id))),
            );
        }
        if let Some(target) = page.target {
            query = query.filter(operator_audit::target.eq(target));
        }
        let rows: Vec<AuditRow> = query.load(&mut connection).await.map_err(from_diesel)?;
        rows.into_iter().map(AuditRow::into_record).collect()
    }
}
