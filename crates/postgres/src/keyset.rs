//! Keyset pages: the condition that selects the rows after a cursor, newest first.

use diesel::expression::{is_aggregate, AppearsOnTable, Expression, ValidGrouping};
use diesel::pg::Pg;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
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

/// A page query with its row count written into its SQL (`LIMIT 21`) rather than bound.
/// PostgreSQL plans a bound limit as a tenth of the rows the filter matches: against a table where
/// one agent owns a million rows, that generic plan looks far dearer than one made for the
/// values, so every run was planned afresh (a third of the statement's time). With the count in
/// the text, the generic plan is priced for the page it reads and kept. The statement cache holds
/// one statement per distinct count, at most the API's largest page plus one.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LimitedTo<Q> {
    query: Q,
    rows: i64,
}

/// `query` (which must end where a `LIMIT` may follow) limited to `rows` rows.
pub(crate) fn limited_to<Q>(query: Q, rows: usize) -> LimitedTo<Q> {
    LimitedTo {
        query,
        rows: i64::try_from(rows).unwrap_or(i64::MAX),
    }
}

impl<Q: QueryFragment<Pg>> QueryFragment<Pg> for LimitedTo<Q> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        self.query.walk_ast(out.reborrow())?;
        out.push_sql(&format!(" LIMIT {}", self.rows));
        Ok(())
    }
}

/// No static id: the cache keys the statement by its SQL text, which holds the count.
impl<Q> QueryId for LimitedTo<Q> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Q: Query> Query for LimitedTo<Q> {
    type SqlType = Q::SqlType;
}

#[cfg(test)]
mod tests {
    use diesel::prelude::*;
    use diesel::sql_types::{BigInt, Text};
    use diesel_async::{AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
    use test_support::TestDatabase;

    use super::*;
    use crate::rows::TransferIntentRow;
    use crate::schema::transfer_intents;

    #[derive(QueryableByName)]
    struct Runs {
        #[diesel(sql_type = BigInt)]
        runs: i64,
    }

    /// How often this connection ran the prepared statement `sql`, with either plan.
    async fn prepared_runs(connection: &mut AsyncPgConnection, sql: &str) -> i64 {
        diesel::sql_query(
            "SELECT generic_plans + custom_plans AS runs FROM pg_prepared_statements \
             WHERE statement = $1",
        )
        .bind::<Text, _>(sql)
        .get_result::<Runs>(connection)
        .await
        .expect("the statement is prepared")
        .runs
    }

    #[tokio::test]
    async fn a_page_is_one_prepared_statement_with_its_row_count_written() {
        let database = TestDatabase::new().await;
        let mut connection = database.connection().await;
        // One agent owns 20,000 rows and ten others five each; agents and wallets that do not
        // exist, as the foreign keys are not what is tested. ANALYZE reads all 20,050 rows (it
        // samples 30,000), so the plans' costs are the same on every run.
        connection
            .batch_execute(
                "SET session_replication_role = replica;
                 INSERT INTO transfer_intents (id, agent_id, wallet_id, status, asset, chain,
                     recipient_address, amount_atomic)
                 SELECT gen_random_uuid(), CASE WHEN n <= 20000 THEN
                     '00000000-0000-0000-0000-000000000001'::uuid
                     ELSE ('00000000-0000-0000-0000-00000000001' || n % 10)::uuid END,
                     gen_random_uuid(), 'rejected', 'USDC', 'base',
                     '0x2222222222222222222222222222222222222222', 1
                 FROM generate_series(1, 20050) AS n;
                 ANALYZE transfer_intents;",
            )
            .await
            .expect("seeded");
        let quiet_agent = Uuid::new_v4();
        let first_page = transfer_intents::table
            .filter(transfer_intents::agent_id.eq(quiet_agent))
            .select(TransferIntentRow::as_select())
            .order((
                transfer_intents::created_at.desc(),
                transfer_intents::id.desc(),
            ));
        let limited = limited_to(first_page, 21);
        for _ in 0..10 {
            let rows: Vec<TransferIntentRow> = limited.load(&mut connection).await.expect("page");
            assert!(rows.is_empty());
        }
        let limited_sql = diesel::debug_query::<Pg, _>(&limited).to_string();
        let limited_sql = limited_sql.split(" -- binds").next().expect("sql");
        assert!(limited_sql.ends_with("LIMIT 21"), "{limited_sql}");
        assert_eq!(
            prepared_runs(&mut connection, limited_sql).await,
            10,
            "every page ran the one statement prepared for its row count"
        );
    }
}
