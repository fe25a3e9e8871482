//! The operator audit log (migration 000021): one row per operator action, written by the store
//! that makes the action, inside the action's own transaction, so the two commit together or
//! not at all. The table takes inserts only.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::keys::KeyId;
use domain::{Actor, AuditAction, AuditRecord};
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::schema::operator_audit;

/// One action to record: what it changed, `before` and `after`, never a secret.
pub(crate) struct AuditEntry<'a> {
    pub actor: &'a Actor,
    pub action: AuditAction,
    pub target: Option<String>,
    pub before: Option<Value>,
    pub after: Option<Value>,
    pub reason: Option<&'a str>,
}

/// Records `entry` in the caller's transaction.
pub(crate) async fn record(
    connection: &mut AsyncPgConnection,
    entry: AuditEntry<'_>,
) -> Result<(), diesel::result::Error> {
    diesel::insert_into(operator_audit::table)
        .values((
            operator_audit::id.eq(Uuid::now_v7()),
            operator_audit::operator.eq(entry.actor.operator.to_string()),
            operator_audit::action.eq(entry.action.as_str()),
            operator_audit::target.eq(entry.target),
            operator_audit::before.eq(entry.before),
            operator_audit::after.eq(entry.after),
            operator_audit::reason.eq(entry.reason),
            operator_audit::address.eq(entry.actor.address.as_deref()),
        ))
        .execute(connection)
        .await
        .map(drop)
}

/// Records, in the caller's transaction, `action` on `target` taken by the agent's own key
/// `key`: the log names it `key:<id>` where it names operators.
pub(crate) async fn record_by_key(
    connection: &mut AsyncPgConnection,
    key: KeyId,
    action: AuditAction,
    target: String,
    after: Value,
) -> Result<(), diesel::result::Error> {
    diesel::insert_into(operator_audit::table)
        .values((
            operator_audit::id.eq(Uuid::now_v7()),
            operator_audit::operator.eq(format!("key:{key}")),
            operator_audit::action.eq(action.as_str()),
            operator_audit::target.eq(target),
            operator_audit::after.eq(after),
        ))
        .execute(connection)
        .await
        .map(drop)
}

/// A row of the log as it is read.
#[derive(Queryable, Selectable)]
#[diesel(table_name = operator_audit)]
pub(crate) struct AuditRow {
    id: Uuid,
    at: OffsetDateTime,
    operator: String,
    action: String,
    target: Option<String>,
    before: Option<Value>,
    after: Option<Value>,
    reason: Option<String>,
    address: Option<String>,
}

impl AuditRow {
    pub(crate) fn into_record(self) -> Result<(Uuid, AuditRecord), ports::StoreError> {
        let action = AuditAction::parse(&self.action).map_err(crate::errors::corrupt)?;
        Ok((
            self.id,
            AuditRecord {
                at: self.at,
                operator: self.operator,
                action,
                target: self.target,
                before: self.before.map(|before| before.to_string()),
                after: self.after.map(|after| after.to_string()),
                reason: self.reason,
                address: self.address,
            },
        ))
    }
}
