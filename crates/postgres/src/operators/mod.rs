//! The console's side of the store (migrations 000021 and 000031): one `PgOperatorStore` behind
//! four narrow ports, one module per port: the operators, their enrollment links and passkey
//! registrations (`accounts`), passkey sign-ins and sessions (`sessions`), personal tokens
//! (`tokens`) and the audit log (`audit_log`). Every operator action records its audit row in its
//! own transaction.

mod accounts;
mod audit_log;
mod sessions;
mod tokens;

use diesel::dsl::now;
use diesel::prelude::*;
use diesel::sql_types::Timestamptz;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{Actor, AuditTarget, OperatorAccount, OperatorId, OperatorName, OperatorRole};
use ports::StoreError;
use serde_json::{json, Value};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::database::Database;
use crate::errors::corrupt;
use crate::schema::operators;

pub struct PgOperatorStore {
    database: Database,
}

impl PgOperatorStore {
    pub fn new(database: Database) -> Self {
        Self { database }
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = operators)]
struct OperatorRow {
    id: Uuid,
    name: String,
    role: String,
    created_at: OffsetDateTime,
    disabled_at: Option<OffsetDateTime>,
}

impl OperatorRow {
    fn into_account(self) -> Result<OperatorAccount, StoreError> {
        Ok(OperatorAccount {
            id: OperatorId(self.id),
            name: OperatorName::parse(&self.name).map_err(corrupt)?,
            role: OperatorRole::parse(&self.role).map_err(corrupt)?,
            created_at: self.created_at,
            disabled_at: self.disabled_at,
        })
    }
}

/// What the audit log shows of an operator.
fn shown(account: &OperatorAccount) -> Value {
    json!({
        "name": account.name.as_str(),
        "role": account.role.as_str(),
        "disabled": !account.is_active(),
    })
}

fn target(account: &OperatorAccount) -> Option<String> {
    Some(AuditTarget::Operator(&account.principal()).to_string())
}

/// The operator who acts for themselves, from `address`.
fn themselves(account: &OperatorAccount, address: Option<String>) -> Actor {
    Actor {
        operator: account.principal(),
        address,
    }
}

fn state_column(state: &str) -> Result<Value, StoreError> {
    serde_json::from_str(state).map_err(|error| corrupt(format!("ceremony state: {error}")))
}

/// The database's clock, as a time with its zone, to move by an interval.
fn db_now() -> diesel::dsl::AsExprOf<now, Timestamptz> {
    now.into_sql::<Timestamptz>()
}

async fn operator_by_id(
    connection: &mut AsyncPgConnection,
    id: Uuid,
) -> Result<Option<OperatorRow>, diesel::result::Error> {
    operators::table
        .find(id)
        .select(OperatorRow::as_select())
        .first(connection)
        .await
        .optional()
}
