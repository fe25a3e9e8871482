//! Keyset pages: the condition that selects the rows after a cursor, newest first.

use diesel::expression::{is_aggregate, AppearsOnTable, Expression, ValidGrouping};
use diesel::pg::Pg;
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::sql_types::{Bool, Timestamptz, Uuid as SqlUuid};
use diesel::QueryResult;
use domain::CursorPosition;
use ports::StoreError;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::clock::cursor_time;

/// `(created_at, id) < (cursor's time, cursor's id)`. A row comparison, which PostgreSQL turns into
/// a bound on the page index (the same condition spelt with OR is a filter over every row before
/// the page). Its SQL is the same for every cursor, so the prepared statement is reused, as for
/// the first page.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Before<CreatedAt, Id> {
    created_at_column: CreatedAt,
    id_column: Id,
    created_at: OffsetDateTime,
    id: Uuid,
}

/// The rows of a table (through its `created_at` and `id` columns) before `position`.
pub(crate) fn before<CreatedAt, Id>(
    created_at_column: CreatedAt,
    id_column: Id,
    position: &CursorPosition,
) -> Result<Before<CreatedAt, Id>, StoreError> {
    Ok(Before {
        created_at_column,
        id_column,
        created_at: cursor_time(position)?,
        id: position.id,
    })
}

impl<CreatedAt, Id> Expression for Before<CreatedAt, Id> {
    type SqlType = Bool;
}

impl<CreatedAt, Id, Source> AppearsOnTable<Source> for Before<CreatedAt, Id>
where
    CreatedAt: AppearsOnTable<Source>,
    Id: AppearsOnTable<Source>,
{
}

impl<CreatedAt, Id> ValidGrouping<()> for Before<CreatedAt, Id> {
    type IsAggregate = is_aggregate::Never;
}

impl<CreatedAt, Id> QueryId for Before<CreatedAt, Id> {
    type QueryId = ();
    // Keyed by its SQL text in the statement cache.
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<CreatedAt, Id> QueryFragment<Pg> for Before<CreatedAt, Id>
where
    CreatedAt: QueryFragment<Pg>,
    Id: QueryFragment<Pg>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("(");
        self.created_at_column.walk_ast(out.reborrow())?;
        out.push_sql(", ");
        self.id_column.walk_ast(out.reborrow())?;
        out.push_sql(") < (");
        out.push_bind_param::<Timestamptz, _>(&self.created_at)?;
        out.push_sql(", ");
        out.push_bind_param::<SqlUuid, _>(&self.id)?;
        out.push_sql(")");
        Ok(())
    }
}
