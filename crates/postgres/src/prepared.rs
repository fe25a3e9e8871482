//! Statements that diesel will not keep prepared, kept prepared anyway.
//!
//! diesel prepares a statement afresh for every run of raw SQL, of an `UPDATE`, of an
//! `ON CONFLICT` clause and of any query holding an SQL literal: one more round trip, and a parse
//! and plan in PostgreSQL, each time (decision 0035). Its caution is for statements whose text
//! changes from run to run. A statement of fixed text wrapped in `Prepared` is cached by that text
//! and its bind types instead, once per connection. Only ever wrap a statement whose SQL is the
//! same on every run: one whose text carries values would fill the cache.

use diesel::pg::Pg;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::QueryResult;

/// A statement of fixed SQL text, prepared once per connection and cached by that text.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Prepared<Q>(pub(crate) Q);

impl<Q: QueryFragment<Pg>> QueryFragment<Pg> for Prepared<Q> {
    fn walk_ast<'b>(&'b self, pass: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        self.0.walk_ast(pass)
    }

    fn is_safe_to_cache_prepared(&self, _: &Pg) -> QueryResult<bool> {
        Ok(true)
    }
}

/// No static id: the cache then keys the statement by its SQL text and bind types.
impl<Q> QueryId for Prepared<Q> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Q: Query> Query for Prepared<Q> {
    type SqlType = Q::SqlType;
}

#[cfg(test)]
mod tests {
    use diesel::prelude::*;
    use diesel::sql_types::{BigInt, Text};
    use diesel_async::{AsyncPgConnection, RunQueryDsl};
    use test_support::TestDatabase;

    use super::*;

    #[derive(QueryableByName)]
    struct Count {
        #[diesel(sql_type = BigInt)]
        statements: i64,
    }

    /// The prepared statements of this connection whose text is `sql`.
    async fn prepared_as(connection: &mut AsyncPgConnection, sql: &str) -> i64 {
        diesel::sql_query(
            "SELECT count(*) AS statements FROM pg_prepared_statements WHERE statement = $1",
        )
        .bind::<Text, _>(sql)
        .get_result::<Count>(connection)
        .await
        .expect("counted")
        .statements
    }

    #[tokio::test]
    async fn a_wrapped_statement_is_prepared_once_and_reused_and_a_bare_one_never_kept() {
        let database = TestDatabase::new().await;
        let mut connection = database.connection().await;
        let wrapped = "SELECT $1::text || 'wrapped' AS greeting";
        let bare = "SELECT $1::text || 'bare' AS greeting";
        for run in 0..3 {
            let greeting: String =
                Prepared(diesel::sql_query(wrapped).bind::<Text, _>(run.to_string()))
                    .get_result::<Greeting>(&mut connection)
                    .await
                    .expect("ran")
                    .greeting;
            assert_eq!(greeting, format!("{run}wrapped"));
            diesel::sql_query(bare)
                .bind::<Text, _>(run.to_string())
                .get_result::<Greeting>(&mut connection)
                .await
                .expect("ran");
        }
        assert_eq!(
            (
                prepared_as(&mut connection, wrapped).await,
                prepared_as(&mut connection, bare).await
            ),
            (1, 0),
            "the wrapped statement is kept, once, and the bare one is not"
        );
    }

    #[derive(QueryableByName)]
    struct Greeting {
        #[diesel(sql_type = Text)]
        greeting: String,
    }
}
