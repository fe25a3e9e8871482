use std::fs;

use diesel_async::SimpleAsyncConnection;
use test_support::{workspace_root, TestDatabase};

/// Every `down.sql` undoes its `up.sql`: revert all, newest first, then apply again.
#[tokio::test]
async fn every_migration_reverts_and_reapplies() {
    let database = TestDatabase::new().await;
    let mut folders: Vec<_> = fs::read_dir(workspace_root().join("migrations"))
        .expect("migrations folder")
        .map(|entry| entry.expect("entry").path())
        .filter(|path| path.join("up.sql").is_file())
        .collect();
    folders.sort();
    assert!(!folders.is_empty());
    let mut connection = database.connection().await;
    for folder in folders.iter().rev() {
        let down = fs::read_to_string(folder.join("down.sql")).expect("down.sql exists");
        connection
            .batch_execute(&down)
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", folder.display()));
    }
    connection
        .batch_execute("DELETE FROM __diesel_schema_migrations")
        .await
        .expect("forget applied versions");
    let remaining: i64 = diesel_async::RunQueryDsl::get_result(
        diesel::dsl::sql::<diesel::sql_types::BigInt>(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public' AND table_name <> '__diesel_schema_migrations'",
        ),
        &mut connection,
    )
    .await
    .expect("count tables");
    assert_eq!(remaining, 0, "down migrations left tables behind");
    drop(connection);
    let applied = postgres_store::run_migrations(&database.connector())
        .await
        .expect("reapplied");
    assert_eq!(applied.len(), folders.len());
}
