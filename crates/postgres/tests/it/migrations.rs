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

/// The migrations from `first` on, oldest first.
fn migrations_from(first: &str) -> Vec<std::path::PathBuf> {
    let mut folders: Vec<_> = fs::read_dir(workspace_root().join("migrations"))
        .expect("migrations folder")
        .map(|entry| entry.expect("entry").path())
        .filter(|path| path.join("up.sql").is_file())
        .collect();
    folders.sort();
    let start = folders
        .iter()
        .position(|folder| folder.to_string_lossy().contains(first))
        .expect("the migration");
    folders.split_off(start)
}

/// Migration 000030 on endpoints made before it: one made after its agent's key last changed
/// keeps that key; one older than a rotation (it may be the old key's) is disabled with its
/// queue, and so is a deactivated agent's; the attempts log keeps fixed words only.
#[tokio::test]
async fn endpoints_made_before_their_key_was_recorded_keep_it_only_when_it_cannot_have_changed() {
    let database = TestDatabase::new().await;
    let later = migrations_from("000030_");
    let mut connection = database.connection().await;
    for folder in later.iter().rev() {
        let down = fs::read_to_string(folder.join("down.sql")).expect("down.sql");
        connection.batch_execute(&down).await.expect("reverted");
    }
    connection
        .batch_execute(
            "INSERT INTO sponsors (id, name) VALUES ('00000000-0000-7000-8000-000000000001', 's');
             INSERT INTO agents (id, sponsor_id, key_hash, is_active, created_at, updated_at) VALUES
               ('00000000-0000-7000-8000-00000000000a', '00000000-0000-7000-8000-000000000001',
                decode(repeat('aa', 32), 'hex'), true, now() - interval '3 days', now() - interval '3 days'),
               ('00000000-0000-7000-8000-00000000000b', '00000000-0000-7000-8000-000000000001',
                decode(repeat('bb', 32), 'hex'), true, now() - interval '3 days', now() - interval '1 day'),
               ('00000000-0000-7000-8000-00000000000c', '00000000-0000-7000-8000-000000000001',
                decode(repeat('cc', 32), 'hex'), false, now() - interval '3 days', now() - interval '1 day');
             INSERT INTO webhook_endpoints (id, agent_id, url, created_at) VALUES
               ('00000000-0000-7000-8000-0000000000a1', '00000000-0000-7000-8000-00000000000a',
                'https://a.example/', now() - interval '2 days'),
               ('00000000-0000-7000-8000-0000000000b1', '00000000-0000-7000-8000-00000000000b',
                'https://b.example/', now() - interval '2 days'),
               ('00000000-0000-7000-8000-0000000000c1', '00000000-0000-7000-8000-00000000000c',
                'https://c.example/', now() - interval '2 days');
             INSERT INTO events (agent_id, seq, id, type, data, created_at) VALUES
               ('00000000-0000-7000-8000-00000000000b', 1, gen_random_uuid(), 'sms.received', '{}', now());
             INSERT INTO webhook_deliveries (id, endpoint_id, agent_id, event_seq, next_attempt_at, created_at) VALUES
               ('00000000-0000-7000-8000-0000000000d1', '00000000-0000-7000-8000-0000000000b1',
                '00000000-0000-7000-8000-00000000000b', 1, now(), now());
             INSERT INTO webhook_attempts (id, delivery_id, endpoint_id, event_id, event_type, attempt,
                 status_code, error, duration_ms, attempted_at) VALUES
               (gen_random_uuid(), '00000000-0000-7000-8000-0000000000d1', '00000000-0000-7000-8000-0000000000b1',
                gen_random_uuid(), 'sms.received', 1, NULL,
                'target refused: b.example resolves to 10.1.2.3, which is not publicly routable', 3, now()),
               (gen_random_uuid(), '00000000-0000-7000-8000-0000000000d1', '00000000-0000-7000-8000-0000000000b1',
                gen_random_uuid(), 'sms.received', 2, 500, 'HTTP 500: Traceback /srv/app.py', 3, now()),
               (gen_random_uuid(), '00000000-0000-7000-8000-0000000000d1', '00000000-0000-7000-8000-0000000000b1',
                gen_random_uuid(), 'sms.received', 3, NULL,
                'error sending request: tcp connect error: Connection refused (os error 111)', 3, now());",
        )
        .await
        .expect("endpoints of before");
    for folder in &later {
        let up = fs::read_to_string(folder.join("up.sql")).expect("up.sql");
        connection.batch_execute(&up).await.expect("applied");
    }

    let endpoints: Vec<(String, bool, Option<String>, bool)> = diesel_async::RunQueryDsl::load(
        diesel::dsl::sql::<(
            diesel::sql_types::Text,
            diesel::sql_types::Bool,
            diesel::sql_types::Nullable<diesel::sql_types::Text>,
            diesel::sql_types::Bool,
        )>(
            "SELECT endpoint.url, endpoint.enabled, endpoint.disabled_reason, \
                 endpoint.agent_key_hash IS NOT DISTINCT FROM (SELECT key.key_hash \
                     FROM agent_keys AS key WHERE key.agent_id = agent.id AND key.is_first) \
             FROM webhook_endpoints AS endpoint JOIN agents AS agent ON agent.id = endpoint.agent_id \
             ORDER BY endpoint.url",
        ),
        &mut connection,
    )
    .await
    .expect("endpoints");
    let reason = "created before endpoints recorded their agent key, and the key may have been \
                  rotated since; enable it again to keep it";
    assert_eq!(
        endpoints,
        [
            ("https://a.example/".to_owned(), true, None, true),
            (
                "https://b.example/".to_owned(),
                false,
                Some(reason.to_owned()),
                false
            ),
            (
                "https://c.example/".to_owned(),
                false,
                Some("the agent was deactivated".to_owned()),
                false
            ),
        ]
    );
    let queued: Vec<String> = diesel_async::RunQueryDsl::load(
        diesel::dsl::sql::<diesel::sql_types::Text>("SELECT status FROM webhook_deliveries"),
        &mut connection,
    )
    .await
    .expect("deliveries");
    assert_eq!(queued, ["failed"]);
    let shown: Vec<String> = diesel_async::RunQueryDsl::load(
        diesel::dsl::sql::<diesel::sql_types::Text>(
            "SELECT error FROM webhook_attempts ORDER BY attempt",
        ),
        &mut connection,
    )
    .await
    .expect("attempts");
    assert_eq!(
        shown,
        [
            "refused: not publicly routable",
            "HTTP 500",
            "connection failed"
        ]
    );
}
